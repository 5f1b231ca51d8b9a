// The reduce-keepdims pass (ir/passes/reduce_keepdims.cc) on small hand-built
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

using pass_test::A;
using pass_test::F32;
using pass_test::I64;
using pass_test::Op;
using pass_test::RunPass;

TEST(ReduceKeepdimsTest, KeepsReducedAxesInsteadOfUnsqueeze) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2, 3, 4}));
  Node* r = Op(g, "ReduceSum", {x, I64(g, "axes", {2})}, "r", F32({2, 3}),
               A(Attr::Int("keepdims", 0)));
  Node* u = Op(g, "Unsqueeze", {r->output(0), I64(g, "u_axes", {-1})}, "u",
               F32({2, 3, 1}));
  // Another axis re-inserted: not the reduced one, kept.
  Node* r2 = Op(g, "ReduceMax", {x, I64(g, "axes1", {1})}, "r2", F32({2, 4}),
                A(Attr::Int("keepdims", 0)));
  Node* u2 = Op(g, "Unsqueeze", {r2->output(0), I64(g, "u2_axes", {2})}, "u2",
                F32({2, 4, 1}));
  g.AddOutput(Op(g, "Sub", {x, u->output(0)}, "y", F32({2, 3, 4}))->output(0));
  g.AddOutput(Op(g, "Neg", {u2->output(0)}, "z", F32({2, 4, 1}))->output(0));
  EXPECT_TRUE(RunPass("reduce-keepdims", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2,3,4]) -> (%y: f32[2,3,4], %z: f32[2,4,1]) "
            "{\n"
            "  init %axes: i64[1] = i64[1]{2}\n"
            "  init %axes1: i64[1] = i64[1]{1}\n"
            "  init %u2_axes: i64[1] = i64[1]{2}\n"
            "  %r: f32[2,3,1] = ReduceSum(%x, %axes) {keepdims=1}\n"
            "  %r2: f32[2,4] = ReduceMax(%x, %axes1) {keepdims=0}\n"
            "  %u2: f32[2,4,1] = Unsqueeze(%r2, %u2_axes)\n"
            "  %y: f32[2,3,4] = Sub(%x, %r)\n"
            "  %z: f32[2,4,1] = Neg(%u2)\n"
            "}\n");
}

}  // namespace
}  // namespace jax2onnx::ir
