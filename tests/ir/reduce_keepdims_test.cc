// The reduce-keepdims pass (ir/passes/reduce_keepdims.cc) on small graphs
// stated as IR text: the graph after is compared as printed text written by
// hand (values derived in comments) and each test also pins what the pass
// refuses (tests/ir/pass_test_util.h: verifier around the pass, cleanup after,
// ONNX Runtime accepts the model before and after).
#include <string>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::ParseIr;
using pass_test::RunPass;

TEST(ReduceKeepdimsTest, KeepsReducedAxesInsteadOfUnsqueeze) {
  // %u2 re-inserts another axis, not the reduced one: kept.
  Model m = ParseIr(R"(
    graph main(%x: f32[2,3,4]) -> (%y: f32[2,3,4], %z: f32[2,4,1]) {
      init %axes: i64[1] = i64[1]{2}
      init %u_axes: i64[1] = i64[1]{-1}
      init %axes1: i64[1] = i64[1]{1}
      init %u2_axes: i64[1] = i64[1]{2}
      %r: f32[2,3] = ReduceSum(%x, %axes) {keepdims=0}
      %u: f32[2,3,1] = Unsqueeze(%r, %u_axes)
      %r2: f32[2,4] = ReduceMax(%x, %axes1) {keepdims=0}
      %u2: f32[2,4,1] = Unsqueeze(%r2, %u2_axes)
      %y: f32[2,3,4] = Sub(%x, %u)
      %z: f32[2,4,1] = Neg(%u2)
    })");
  EXPECT_TRUE(RunPass("reduce-keepdims", m));
  EXPECT_EQ(PrintGraph(m.graph()),
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
