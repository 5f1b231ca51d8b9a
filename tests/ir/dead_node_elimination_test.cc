// The dead-node-elimination pass (ir/passes/dead_node_elimination.cc) on small
// graphs stated as IR text, subgraphs included. Expected text is written by
// hand.
#include <string>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::ParseIr;
using pass_test::RunPassAlone;

TEST(DeadNodeEliminationTest, RemovesDeadChainsKeepsPartlyUsedNodes) {
  // %b is dead, and makes %a dead; %s1 is unused (halves of f32[2]).
  Model m = ParseIr(R"(
    graph main(%x: f32[2]) -> (%y: f32[1]) {
      %a: f32[2] = Relu(%x)
      %b: f32[2] = Neg(%a)
      %s0: f32[1], %s1: f32[1] = Split(%x) {num_outputs=2}
      %y: f32[1] = Abs(%s0)
    })");
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_TRUE(RunPassAlone("dead-node-elimination", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%x: f32[2]) -> (%y: f32[1]) {\n"
            "  %s0: f32[1], %s1: f32[1] = Split(%x) {num_outputs=2}\n"
            "  %y: f32[1] = Abs(%s0)\n"
            "}\n");
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_FALSE(RunPassAlone("dead-node-elimination", m));
}

TEST(DeadNodeEliminationTest, CleansSubgraphsAndFreesOuterProducers) {
  // %r is only read by a dead inner node, %dead.
  Model m = ParseIr(R"(
    graph main(%x: f32[2], %c: bool[]) -> (%o: f32[2]) {
      %r: f32[2] = Relu(%x)
      %o: f32[2] = If(%c) {then_branch=graph body() -> (%live: f32[2]) {
        %dead: f32[2] = Neg(%r)
        %live: f32[2] = Abs(%x)
      }, else_branch=graph else_body() -> (%other: f32[2]) {
        %other: f32[2] = Sin(%x)
      }}
    })");
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_TRUE(RunPassAlone("dead-node-elimination", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%x: f32[2], %c: bool[]) -> (%o: f32[2]) {\n"
            "  %o: f32[2] = If(%c) {else_branch=graph else_body() -> "
            "(%other: f32[2]) {\n"
            "    %other: f32[2] = Sin(%x)\n"
            "  }, then_branch=graph body() -> (%live: f32[2]) {\n"
            "    %live: f32[2] = Abs(%x)\n"
            "  }}\n"
            "}\n");
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
}

}  // namespace
}  // namespace jax2onnx::ir
