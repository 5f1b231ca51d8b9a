// The unused-initializer-pruning pass
// (ir/passes/unused_initializer_pruning.cc): initializers no node, subgraph or
// input default reads are removed. Expected text is written by hand.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::AddNode;
using pass_test::F32;
using pass_test::Floats;
using pass_test::RunPassAlone;

TEST(UnusedInitializerPruningTest, RemovesOnlyUnusedNonInputInitializers) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Value* c = g.AddInput("c", Type::Tensor(onnx::TensorProto::BOOL, Shape()));
  Value* w = *g.AddInitializer("w", Floats({1, 2}));
  *g.AddInitializer("unused", Floats({3}));
  Value* d = g.AddInput("d", F32({1}));
  ASSERT_TRUE(g.SetInputDefault(d, std::make_shared<Tensor>(Floats({4}))).ok());
  // inner_only is read only inside the branches; d is an input with a
  // default that nothing reads.
  auto body = std::make_unique<Graph>("body");
  Value* inner_only = *g.AddInitializer("inner_only", Floats({5}));
  AddNode(*body, "Neg", {inner_only}, {"n"}, F32({1}));
  body->AddOutput(body->last_node()->output(0));
  auto else_body = std::make_unique<Graph>("else_body");
  AddNode(*else_body, "Abs", {inner_only}, {"a"}, F32({1}));
  else_body->AddOutput(else_body->last_node()->output(0));
  Node* if_node = AddNode(g, "If", {c}, {"o"}, F32({1}));
  if_node->SetAttr(Attr::GraphValue("then_branch", std::move(body)));
  if_node->SetAttr(Attr::GraphValue("else_branch", std::move(else_body)));
  Node* mul = AddNode(g, "Mul", {x, w}, {"y"});
  g.AddOutput(mul->output(0));
  g.AddOutput(if_node->output(0));
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_TRUE(RunPassAlone("unused-initializer-pruning", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2], %c: bool[], %d: f32[1]) -> (%y: f32[2], "
            "%o: f32[1]) {\n"
            "  init %d: f32[1] = f32[1]{4}\n"
            "  init %inner_only: f32[1] = f32[1]{5}\n"
            "  init %w: f32[2] = f32[2]{1, 2}\n"
            "  %o: f32[1] = If(%c) {else_branch=graph else_body() -> (%a: "
            "f32[1]) {\n"
            "    %a: f32[1] = Abs(%inner_only)\n"
            "  }, then_branch=graph body() -> (%n: f32[1]) {\n"
            "    %n: f32[1] = Neg(%inner_only)\n"
            "  }}\n"
            "  %y: f32[2] = Mul(%x, %w)\n"
            "}\n");
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_FALSE(RunPassAlone("unused-initializer-pruning", m));
}

}  // namespace
}  // namespace jax2onnx::ir
