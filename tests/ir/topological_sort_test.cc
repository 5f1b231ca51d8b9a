// The topological-sort pass (ir/passes/topological_sort.cc): stable order,
// implicit subgraph inputs, cycles, and long chains without deep recursion.
// The unsorted input graphs are stated as IR text (a value may be used
// before the node that defines it); the long chain is built in a loop.
// Expected text is written by hand.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::F32;
using pass_test::ParseIr;
using pass_test::RunPassAlone;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TopologicalSortTest, MovesNodesAfterTheirProducersStably) {
  // Add and Neg come before the Relu they read.
  Model m = ParseIr(R"(
    graph main(%x: f32[2]) -> (%y: f32[2]) {
      %y: f32[2] = Add(%a, %b)
      %z: f32[2] = Sin(%x)
      %b: f32[2] = Neg(%a)
      %a: f32[2] = Relu(%x)
    })");
  // DFS from Add emits Relu, then Neg (its deps), then Add; Z keeps its
  // relative place after them.
  EXPECT_TRUE(RunPassAlone("topological-sort", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%x: f32[2]) -> (%y: f32[2]) {\n"
            "  %a: f32[2] = Relu(%x)\n"
            "  %b: f32[2] = Neg(%a)\n"
            "  %y: f32[2] = Add(%a, %b)\n"
            "  %z: f32[2] = Sin(%x)\n"
            "}\n");
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_FALSE(RunPassAlone("topological-sort", m));  // valid order is kept
}

TEST(TopologicalSortTest, HonoursImplicitInputsOfSubgraphs) {
  // The If comes first, though its then-branch reads %a of the main graph.
  Model m = ParseIr(R"(
    graph main(%x: f32[2], %c: bool[]) -> (%o: f32[2]) {
      %o: f32[2] = If(%c) {then_branch=graph body() -> (%n: f32[2]) {
        %n: f32[2] = Neg(%a)
      }, else_branch=graph else_body() -> (%e: f32[2]) {
        %e: f32[2] = Abs(%x)
      }}
      %a: f32[2] = Relu(%x)
    })");
  EXPECT_TRUE(RunPassAlone("topological-sort", m));
  std::vector<std::string> ops;
  for (Node* n : m.graph().nodes()) ops.push_back(n->op_type());
  EXPECT_THAT(ops, ElementsAre("Relu", "If"));
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
}

TEST(TopologicalSortTest, RefusesACycle) {
  Model m = ParseIr(R"(
    graph (%x: f32[2]) -> () {
      %a: f32[2] = A(%b)  # na
      %b: f32[2] = B(%a)
    })");
  absl::StatusOr<bool> r = CreatePass("topological-sort")->Run(m);
  EXPECT_THAT(r.status().message(),
              HasSubstr("has a dependency cycle through node"));
}

TEST(TopologicalSortTest, ReversedLongChainSortsWithoutDeepRecursion) {
  // 200k nodes in reverse dependency order: the DFS must be iterative and
  // the whole pipeline linear for this to finish quickly.
  constexpr int kNodes = 200000;
  Model m;
  Graph& g = m.graph();
  Value* v = g.AddInput("x", F32({2}));
  std::vector<Node*> chain;
  for (int i = 0; i < kNodes; ++i) {
    chain.push_back(
        g.Append(Node::Create("", "Neg", {v}, {absl::StrCat("v", i)})));
    v = chain.back()->output(0);
  }
  v->SetType(F32({2}));
  g.AddOutput(v);
  std::vector<Node*> reversed(chain.rbegin(), chain.rend());
  g.Reorder(reversed);
  EXPECT_FALSE(Verify(m).ok());
  EXPECT_TRUE(RunPassAlone("topological-sort", m));
  EXPECT_EQ(g.first_node(), chain.front());
  EXPECT_EQ(g.last_node(), chain.back());
  EXPECT_TRUE(Verify(m).ok());
  EXPECT_FALSE(RunPassAlone("dead-node-elimination", m));
  ASSERT_TRUE(g.Erase(g.last_node(), /*force=*/true).ok());
  EXPECT_TRUE(RunPassAlone("dead-node-elimination", m));  // whole chain is dead
  EXPECT_EQ(g.num_nodes(), 0u);
}

}  // namespace
}  // namespace jax2onnx::ir
