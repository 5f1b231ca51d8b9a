// The expand-elimination pass (ir/passes/expand_elimination.cc) on small
// hand-built graphs: the graph after is compared as printed text written by
// hand (values derived in comments) and each test also pins what the pass
// refuses (tests/ir/pass_test_util.h: verifier around the pass, cleanup after,
// ONNX Runtime accepts the model before and after).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::F32;
using pass_test::Op;
using pass_test::RunPass;
using pass_test::T;
using pass_test::TP;

TEST(ExpandEliminationTest, DropsExpandsThatBroadcastingMakesRedundant) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"B", 3}));
  Value* b = g.AddInput("b", F32({3}));
  Value* one = g.AddInput("one", F32({1, 1}));
  // x's shape, as the converter computes a dynamic broadcast target.
  Value* shape = Op(g, "Shape", {x}, "shape", T(TP::INT64, {2}))->output(0);
  Node* e = Op(g, "Expand", {b, shape}, "e", F32({"B", 3}));
  g.AddOutput(Op(g, "Add", {x, e->output(0)}, "y", F32({"B", 3}))->output(0));
  // [1,1] + Expand([1,1] -> [B,3]) needs the Expand for its shape.
  Node* e2 = Op(g, "Expand", {one, shape}, "e2", F32({"B", 3}));
  g.AddOutput(
      Op(g, "Mul", {one, e2->output(0)}, "z", F32({"B", 3}))->output(0));
  EXPECT_TRUE(RunPass("expand-elimination", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[B,3], %b: f32[3], %one: f32[1,1]) -> (%y: "
            "f32[B,3], %z: f32[B,3]) {\n"
            "  %shape: i64[2] = Shape(%x)\n"
            "  %y: f32[B,3] = Add(%x, %b)\n"
            "  %e2: f32[B,3] = Expand(%one, %shape)\n"
            "  %z: f32[B,3] = Mul(%one, %e2)\n"
            "}\n");
}

}  // namespace
}  // namespace jax2onnx::ir
