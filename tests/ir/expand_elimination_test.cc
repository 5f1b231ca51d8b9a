// The expand-elimination pass (ir/passes/expand_elimination.cc) on small
// graphs stated as IR text: the graph after is compared as printed text
// written by hand (values derived in comments) and each test also pins what
// the pass refuses (tests/ir/pass_test_util.h: verifier around the pass,
// cleanup after, ONNX Runtime accepts the model before and after).
#include <string>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::ParseIr;
using pass_test::RunPass;

TEST(ExpandEliminationTest, DropsExpandsThatBroadcastingMakesRedundant) {
  // %shape is x's shape, as the converter computes a dynamic broadcast
  // target. [1,1] + Expand([1,1] -> [B,3]) needs the Expand for its shape.
  Model m = ParseIr(R"(
    graph main(%x: f32[B,3], %b: f32[3], %one: f32[1,1])
        -> (%y: f32[B,3], %z: f32[B,3]) {
      %shape: i64[2] = Shape(%x)
      %e: f32[B,3] = Expand(%b, %shape)
      %y: f32[B,3] = Add(%x, %e)
      %e2: f32[B,3] = Expand(%one, %shape)
      %z: f32[B,3] = Mul(%one, %e2)
    })");
  EXPECT_TRUE(RunPass("expand-elimination", m));
  EXPECT_EQ(PrintGraph(m.graph()),
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
