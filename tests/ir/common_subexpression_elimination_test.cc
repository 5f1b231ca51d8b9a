// The common-subexpression-elimination pass
// (ir/passes/common_subexpression_elimination.cc) on small hand-built graphs:
// the graph after is compared as printed text written by hand (values derived
// in comments) and each test also pins what the pass refuses
// (tests/ir/pass_test_util.h: verifier around the pass, cleanup after, ONNX
// Runtime accepts the model before and after).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::A;
using pass_test::F32;
using pass_test::Init;
using pass_test::Op;
using pass_test::RunPass;
using pass_test::TP;

TEST(CommonSubexpressionEliminationTest, MergesEqualNodesAndConstants) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Value* c1 = Init(g, "c1", Tensor::FromVector<float>(TP::FLOAT, {1}, {2.f}));
  Value* c2 = Init(g, "c2", Tensor::FromVector<float>(TP::FLOAT, {1}, {2.f}));
  Node* a = Op(g, "Mul", {x, c1}, "a", F32({2}));
  Node* b = Op(g, "Mul", {x, c2}, "b", F32({2}));
  // alpha differs in the last bit (the printer rounds both to 0.1): not
  // the same op.
  Node* l1 = Op(g, "LeakyRelu", {a->output(0)}, "l1", F32({2}),
                A(Attr::Float("alpha", 0.1f)));
  Node* l2 = Op(g, "LeakyRelu", {b->output(0)}, "l2", F32({2}),
                A(Attr::Float("alpha", std::nextafter(0.1f, 1.f))));
  Node* y = Op(g, "Add", {l1->output(0), l2->output(0)}, "y", F32({2}));
  g.AddOutput(y->output(0));
  EXPECT_TRUE(RunPass("common-subexpression-elimination", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2]) -> (%y: f32[2]) {\n"
            "  init %c1: f32[1] = f32[1]{2}\n"
            "  %a: f32[2] = Mul(%x, %c1)\n"
            "  %l1: f32[2] = LeakyRelu(%a) {alpha=0.1}\n"
            "  %l2: f32[2] = LeakyRelu(%a) {alpha=0.1}\n"
            "  %y: f32[2] = Add(%l1, %l2)\n"
            "}\n");
  EXPECT_FALSE(RunPass("common-subexpression-elimination", m));
}

TEST(CommonSubexpressionEliminationTest, KeepsRandomOps) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  // ONNX Runtime 1.30 has RandomUniformLike kernels up to version 21 only
  // (none for 22, what opset 23 resolves to): a model of opset 21.
  m.SetOpsetVersion("", 21);
  Node* r1 = Op(g, "RandomUniformLike", {x}, "r1", F32({2}));
  Node* r2 = Op(g, "RandomUniformLike", {x}, "r2", F32({2}));
  g.AddOutput(
      Op(g, "Sub", {r1->output(0), r2->output(0)}, "y", F32({2}))->output(0));
  EXPECT_FALSE(RunPass("common-subexpression-elimination", m));
}

}  // namespace
}  // namespace jax2onnx::ir
