// The common-subexpression-elimination pass
// (ir/passes/common_subexpression_elimination.cc) on small graphs stated as IR
// text: the graph after is compared as printed text written by hand (values
// derived in comments) and each test also pins what the pass refuses
// (tests/ir/pass_test_util.h: verifier around the pass, cleanup after, ONNX
// Runtime accepts the model before and after).
#include <string>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::ParseIr;
using pass_test::RunPass;

TEST(CommonSubexpressionEliminationTest, MergesEqualNodesAndConstants) {
  // alpha differs in the last bit (0.100000009 is the float after 0.1f; the
  // printer rounds both to 0.1): not the same op.
  Model m = ParseIr(R"(
    graph main(%x: f32[2]) -> (%y: f32[2]) {
      init %c1: f32[1] = f32[1]{2}
      init %c2: f32[1] = f32[1]{2}
      %a: f32[2] = Mul(%x, %c1)
      %b: f32[2] = Mul(%x, %c2)
      %l1: f32[2] = LeakyRelu(%a) {alpha=0.1}
      %l2: f32[2] = LeakyRelu(%b) {alpha=0.100000009}
      %y: f32[2] = Add(%l1, %l2)
    })");
  EXPECT_TRUE(RunPass("common-subexpression-elimination", m));
  EXPECT_EQ(PrintGraph(m.graph()),
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
  // ONNX Runtime 1.30 has RandomUniformLike kernels up to version 21 only
  // (none for 22, what opset 23 resolves to): a model of opset 21
  // (ir_version=0: none declared, the ORT gate stamps the opset's).
  Model m = ParseIr(R"(
    model ir_version=0 opsets={"": 21}
    graph main(%x: f32[2]) -> (%y: f32[2]) {
      %r1: f32[2] = RandomUniformLike(%x)
      %r2: f32[2] = RandomUniformLike(%x)
      %y: f32[2] = Sub(%r1, %r2)
    })");
  EXPECT_FALSE(RunPass("common-subexpression-elimination", m));
}

}  // namespace
}  // namespace jax2onnx::ir
