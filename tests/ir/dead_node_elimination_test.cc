// The dead-node-elimination pass (ir/passes/dead_node_elimination.cc) on small
// hand-built graphs, subgraphs included. Expected text is written by hand.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::AddNode;
using pass_test::F32;
using pass_test::RunPassAlone;

TEST(DeadNodeEliminationTest, RemovesDeadChainsKeepsPartlyUsedNodes) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Node* a = AddNode(g, "Relu", {x}, {"a"});
  AddNode(g, "Neg", {a->output(0)}, {"b"});  // dead, and makes a dead
  // s1 unused; halves of f32[2].
  Node* split = AddNode(g, "Split", {x}, {"s0", "s1"}, F32({1}));
  split->SetAttr(Attr::Int("num_outputs", 2));
  Node* y = AddNode(g, "Abs", {split->output(0)}, {"y"}, F32({1}));
  g.AddOutput(y->output(0));
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_TRUE(RunPassAlone("dead-node-elimination", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2]) -> (%y: f32[1]) {\n"
            "  %s0: f32[1], %s1: f32[1] = Split(%x) {num_outputs=2}\n"
            "  %y: f32[1] = Abs(%s0)\n"
            "}\n");
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_FALSE(RunPassAlone("dead-node-elimination", m));
}

TEST(DeadNodeEliminationTest, CleansSubgraphsAndFreesOuterProducers) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Value* c = g.AddInput("c", Type::Tensor(onnx::TensorProto::BOOL, Shape()));
  Node* outer =
      AddNode(g, "Relu", {x}, {"r"});  // only read by a dead inner node
  auto body = std::make_unique<Graph>("body");
  AddNode(*body, "Neg", {outer->output(0)}, {"dead"});
  AddNode(*body, "Abs", {x}, {"live"});
  body->AddOutput(body->last_node()->output(0));
  auto else_body = std::make_unique<Graph>("else_body");
  AddNode(*else_body, "Sin", {x}, {"other"});
  else_body->AddOutput(else_body->last_node()->output(0));
  Node* if_node = AddNode(g, "If", {c}, {"o"});
  if_node->SetAttr(Attr::GraphValue("then_branch", std::move(body)));
  if_node->SetAttr(Attr::GraphValue("else_branch", std::move(else_body)));
  g.AddOutput(if_node->output(0));
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_TRUE(RunPassAlone("dead-node-elimination", m));
  EXPECT_EQ(PrintGraph(g),
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
