// The reshape-folding pass (ir/passes/reshape_folding.cc) on small graphs
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

TEST(ReshapeFoldingTest, CollapsesChainsAndDropsNoOps) {
  // %sq = Squeeze(Unsqueeze(x)) has x's shape: no op at all.
  Model m = ParseIr(R"(
    graph main(%x: f32[2,3]) -> (%y: f32[3,2], %z: f32[2,3]) {
      init %ax: i64[1] = i64[1]{0}
      init %s: i64[2] = i64[2]{3, 2}
      init %ax0: i64[1] = i64[1]{0}
      %u: f32[1,2,3] = Unsqueeze(%x, %ax)
      %r: f32[3,2] = Reshape(%u, %s)
      %sq: f32[2,3] = Squeeze(%u, %ax0)
      %y: f32[3,2] = Neg(%r)
      %z: f32[2,3] = Relu(%sq)
    })");
  EXPECT_TRUE(RunPass("reshape-folding", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%x: f32[2,3]) -> (%y: f32[3,2], %z: f32[2,3]) {\n"
            "  init %s: i64[2] = i64[2]{3, 2}\n"
            "  %r: f32[3,2] = Reshape(%x, %s)\n"
            "  %y: f32[3,2] = Neg(%r)\n"
            "  %z: f32[2,3] = Relu(%x)\n"
            "}\n");
}

TEST(ReshapeFoldingTest, DropsSymbolicChainsThatEndInTheInputShape) {
  // The 0 entry of %s2 copies r1's dim 0, so r2 cannot read x directly by
  // its target; but r2's type is x's ([B,6], equal symbol names denote
  // equal sizes), so the chain is a no-op.
  Model m = ParseIr(R"(
    graph main(%x: f32[B,6]) -> (%y: f32[B,6]) {
      init %s1: i64[3] = i64[3]{0, 2, 3}
      init %s2: i64[2] = i64[2]{0, 6}
      %r1: f32[B,2,3] = Reshape(%x, %s1)
      %r2: f32[B,6] = Reshape(%r1, %s2)
      %y: f32[B,6] = Neg(%r2)
    })");
  EXPECT_TRUE(RunPass("reshape-folding", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%x: f32[B,6]) -> (%y: f32[B,6]) {\n"
            "  %y: f32[B,6] = Neg(%x)\n"
            "}\n");
}

}  // namespace
}  // namespace jax2onnx::ir
