// The cast-elimination pass (ir/passes/cast_elimination.cc) on small graphs
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

TEST(CastEliminationTest, RemovesWideningRoundTripsOnly) {
  // f32 -> f64 -> f32 (%up, %back) is the identity: every f32 is an f64.
  // f64 -> f32 -> f64 (%down, %again) rounds: kept. %same casts to the
  // type the value already has. (to: 1 is FLOAT, 11 DOUBLE.)
  Model m = ParseIr(R"(
    graph main(%f: f32[2], %d: f64[2]) -> (%y: f32[2], %z: f64[2]) {
      %up: f64[2] = Cast(%f) {to=11}
      %back: f32[2] = Cast(%up) {to=1}
      %down: f32[2] = Cast(%d) {to=1}
      %again: f64[2] = Cast(%down) {to=11}
      %same: f32[2] = Cast(%f) {to=1}
      %y: f32[2] = Add(%back, %same)
      %z: f64[2] = Neg(%again)
    })");
  EXPECT_TRUE(RunPass("cast-elimination", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%f: f32[2], %d: f64[2]) -> (%y: f32[2], %z: f64[2]) {\n"
            "  %down: f32[2] = Cast(%d) {to=1}\n"
            "  %again: f64[2] = Cast(%down) {to=11}\n"
            "  %y: f32[2] = Add(%f, %f)\n"
            "  %z: f64[2] = Neg(%again)\n"
            "}\n");
}

TEST(CastEliminationTest, KeepsIntToFloatToIntRoundTrip) {
  // i32 -> f32 -> i32 loses integers above 2^24 (to: 1 is FLOAT, 6 INT32).
  Model m = ParseIr(R"(
    graph main(%i: i32[2]) -> (%y: i32[2]) {
      %f: f32[2] = Cast(%i) {to=1}
      %b: i32[2] = Cast(%f) {to=6}
      %y: i32[2] = Neg(%b)
    })");
  EXPECT_FALSE(RunPass("cast-elimination", m));
}

}  // namespace
}  // namespace jax2onnx::ir
