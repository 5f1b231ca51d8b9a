// The reshape-folding pass (ir/passes/reshape_folding.cc) on small hand-built
// graphs: the graph after is compared as printed text written by hand (values
// derived in comments) and each test also pins what the pass refuses
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

using pass_test::F32;
using pass_test::I64;
using pass_test::Op;
using pass_test::RunPass;

TEST(ReshapeFoldingTest, CollapsesChainsAndDropsNoOps) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2, 3}));
  Node* u = Op(g, "Unsqueeze", {x, I64(g, "ax", {0})}, "u", F32({1, 2, 3}));
  Node* r =
      Op(g, "Reshape", {u->output(0), I64(g, "s", {3, 2})}, "r", F32({3, 2}));
  // Squeeze(Unsqueeze(x)) has x's shape: no op at all.
  Node* s =
      Op(g, "Squeeze", {u->output(0), I64(g, "ax0", {0})}, "sq", F32({2, 3}));
  g.AddOutput(Op(g, "Neg", {r->output(0)}, "y", F32({3, 2}))->output(0));
  g.AddOutput(Op(g, "Relu", {s->output(0)}, "z", F32({2, 3}))->output(0));
  EXPECT_TRUE(RunPass("reshape-folding", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2,3]) -> (%y: f32[3,2], %z: f32[2,3]) {\n"
            "  init %s: i64[2] = i64[2]{3, 2}\n"
            "  %r: f32[3,2] = Reshape(%x, %s)\n"
            "  %y: f32[3,2] = Neg(%r)\n"
            "  %z: f32[2,3] = Relu(%x)\n"
            "}\n");
}

TEST(ReshapeFoldingTest, DropsSymbolicChainsThatEndInTheInputShape) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"B", 6}));
  Node* r1 =
      Op(g, "Reshape", {x, I64(g, "s1", {0, 2, 3})}, "r1", F32({"B", 2, 3}));
  // The 0 entry copies r1's dim 0, so r2 cannot read x directly by its
  // target; but r2's type is x's ([B,6], equal symbol names denote equal
  // sizes), so the chain is a no-op.
  Node* r2 = Op(g, "Reshape", {r1->output(0), I64(g, "s2", {0, 6})}, "r2",
                F32({"B", 6}));
  g.AddOutput(Op(g, "Neg", {r2->output(0)}, "y", F32({"B", 6}))->output(0));
  EXPECT_TRUE(RunPass("reshape-folding", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[B,6]) -> (%y: f32[B,6]) {\n"
            "  %y: f32[B,6] = Neg(%x)\n"
            "}\n");
}

}  // namespace
}  // namespace jax2onnx::ir
