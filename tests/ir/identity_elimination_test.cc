// The identity-elimination pass (ir/passes/identity_elimination.cc) on small
// graphs stated as IR text: the graph after is compared as printed text written
// by hand (values derived in comments) and each test also pins what the pass
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

using pass_test::ParseIr;
using pass_test::RunPass;

TEST(IdentityEliminationTest, BypassesIdentitiesAndRenamesOutputProducers) {
  Model m = ParseIr(R"(
    graph main(%x: f32[2]) -> (%y: f32[2]) {
      %i1: f32[2] = Identity(%x)
      %r: f32[2] = Relu(%i1)
      %y: f32[2] = Identity(%r)
    })");
  // The output Identity goes by renaming: %r becomes the output %y.
  EXPECT_TRUE(RunPass("identity-elimination", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%x: f32[2]) -> (%y: f32[2]) {\n"
            "  %y: f32[2] = Relu(%x)\n"
            "}\n");
}

TEST(IdentityEliminationTest, KeepsOutputIdentitiesOfInputsAndSharedValues) {
  // x is a graph input; r is read twice: neither can take an output name.
  Model m = ParseIr(R"(
    graph main(%x: f32[2]) -> (%y: f32[2], %z: f32[2], %w: f32[2]) {
      %r: f32[2] = Relu(%x)
      %y: f32[2] = Identity(%x)
      %z: f32[2] = Identity(%r)
      %w: f32[2] = Neg(%r)
    })");
  EXPECT_FALSE(RunPass("identity-elimination", m));
}

}  // namespace
}  // namespace jax2onnx::ir
