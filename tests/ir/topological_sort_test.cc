// The topological-sort pass (ir/passes/topological_sort.cc): stable order,
// implicit subgraph inputs, cycles, and long chains without deep recursion.
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

using pass_test::AddNode;
using pass_test::F32;
using pass_test::RunPassAlone;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TopologicalSortTest, MovesNodesAfterTheirProducersStably) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Node* z = AddNode(g, "Sin", {x}, {"z"});
  Node* relu = AddNode(g, "Relu", {x}, {"a"});
  Node* neg = AddNode(g, "Neg", {relu->output(0)}, {"b"});
  Node* sum = AddNode(g, "Add", {relu->output(0), neg->output(0)}, {"y"});
  g.AddOutput(sum->output(0));
  g.MoveBefore(sum, z);    // Add, Z, Relu, Neg
  g.MoveAfter(relu, neg);  // Add, Z, Neg, Relu
  // DFS from Add emits Relu, then Neg (its deps), then Add; Z keeps its
  // relative place after them.
  EXPECT_TRUE(RunPassAlone("topological-sort", m));
  EXPECT_EQ(PrintGraph(g),
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
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Value* c = g.AddInput("c", Type::Tensor(onnx::TensorProto::BOOL, Shape()));
  Node* relu = AddNode(g, "Relu", {x}, {"a"});
  auto body = std::make_unique<Graph>("body");
  body->AddOutput(AddNode(*body, "Neg", {relu->output(0)}, {"n"})->output(0));
  auto else_body = std::make_unique<Graph>("else_body");
  else_body->AddOutput(AddNode(*else_body, "Abs", {x}, {"e"})->output(0));
  Node* if_node = AddNode(g, "If", {c}, {"o"});
  if_node->SetAttr(Attr::GraphValue("then_branch", std::move(body)));
  if_node->SetAttr(Attr::GraphValue("else_branch", std::move(else_body)));
  g.AddOutput(if_node->output(0));
  g.MoveBefore(if_node, relu);
  EXPECT_TRUE(RunPassAlone("topological-sort", m));
  std::vector<std::string> ops;
  for (Node* n : g.nodes()) ops.push_back(n->op_type());
  EXPECT_THAT(ops, ElementsAre("Relu", "If"));
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
}

TEST(TopologicalSortTest, RefusesACycle) {
  Model m;
  Graph& g = m.graph();
  Value* x = g.AddInput("x", F32({2}));
  Node* a = AddNode(g, "A", {x}, {"a"});
  a->set_name("na");
  Node* b = AddNode(g, "B", {a->output(0)}, {"b"});
  ReplaceInputWith(a, 0, b->output(0));
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
