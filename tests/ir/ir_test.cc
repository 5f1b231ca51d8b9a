// Data-model behaviour: use lists under rewrites, node-list editing
// (including erasure during iteration), ownership and fresh names.
#include "ir/ir.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/verifier.h"

namespace jax2onnx::ir {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

Type F32(Shape shape) {
  return Type::Tensor(onnx::TensorProto::FLOAT, std::move(shape));
}

std::vector<std::string> OpTypes(const Graph& g) {
  std::vector<std::string> out;
  for (const Node* n : g.nodes()) out.push_back(n->op_type());
  return out;
}

// Borrowed bytes at an odd address (a weight np.savez stored unaligned):
// bytes() is the borrowed span itself, data<T>() an aligned copy with the
// same values, made once and shared by copies of the tensor.
TEST(IrTest, MisalignedBorrowedTensorReadsTypedFromAnAlignedCopy) {
  const double values[3] = {1.5, -2.25, 1e300};
  auto buffer = std::make_shared<std::vector<char>>(1 + sizeof values);
  std::memcpy(buffer->data() + 1, values, sizeof values);
  const absl::string_view odd(buffer->data() + 1, sizeof values);
  Tensor t = Tensor::Borrowed(onnx::TensorProto::DOUBLE, {3}, odd, buffer);
  EXPECT_EQ(t.bytes().data(), odd.data());
  absl::Span<const double> typed = t.data<double>();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(typed.data()) % alignof(double), 0u);
  EXPECT_THAT(typed, ElementsAre(1.5, -2.25, 1e300));
  const Tensor copy = t;
  EXPECT_EQ(copy.data<double>().data(), typed.data());
  // One-byte elements need no copy.
  Tensor bytes = Tensor::Borrowed(onnx::TensorProto::UINT8, {24}, odd, buffer);
  EXPECT_EQ(reinterpret_cast<const char*>(bytes.data<uint8_t>().data()),
            odd.data());
}

TEST(IrTest, NodeCreationRecordsProducerAndUses) {
  Graph g("main");
  Value* x = g.AddInput("x", F32({2}));
  Node* add = g.AddNode("Add", {x, x});
  EXPECT_EQ(add->output(0)->producer(), add);
  EXPECT_EQ(add->output(0)->output_index(), 0);
  EXPECT_EQ(add->output(0)->graph(), &g);
  EXPECT_THAT(x->uses(), UnorderedElementsAre(Use{add, 0}, Use{add, 1}));
  EXPECT_THAT(x->Consumers(), ElementsAre(add));
}

TEST(IrTest, ReplaceInputWithMovesExactlyOneUse) {
  Graph g("main");
  Value* x = g.AddInput("x", F32({2}));
  Value* y = g.AddInput("y", F32({2}));
  Node* add = g.AddNode("Add", {x, x});
  ReplaceInputWith(add, 1, y);
  EXPECT_EQ(add->input(1), y);
  EXPECT_THAT(x->uses(), ElementsAre(Use{add, 0}));
  EXPECT_THAT(y->uses(), ElementsAre(Use{add, 1}));
  ReplaceInputWith(add, 0, nullptr);  // absent optional input
  EXPECT_EQ(x->num_uses(), 0u);
  EXPECT_TRUE(Verify(g, {.require_io_types = false}).ok());
}

TEST(IrTest, UseRemovalKeepsOtherUsesConsistent) {
  // Removing a use from the middle of a long use list swaps in the last
  // one; the moved use must still be found when it is removed later.
  Graph g("main");
  Value* x = g.AddInput("x", F32({}));
  Value* y = g.AddInput("y", F32({}));
  std::vector<Node*> users;
  for (int i = 0; i < 10; ++i) users.push_back(g.AddNode("Neg", {x}));
  ReplaceInputWith(users[2], 0, y);
  ReplaceInputWith(users[9], 0, y);  // was swapped into slot 2
  ReplaceInputWith(users[5], 0, y);
  EXPECT_EQ(x->num_uses(), 7u);
  EXPECT_EQ(y->num_uses(), 3u);
  for (const Use& u : x->uses()) EXPECT_EQ(u.node->input(u.input_index), x);
  EXPECT_TRUE(Verify(g).ok()) << Verify(g);
}

TEST(IrTest, ReplaceAllUsesWithUpdatesNodesSubgraphsAndGraphOutputs) {
  Graph g("main");
  Value* x = g.AddInput("x", F32({2}));
  Value* cond =
      g.AddInput("c", Type::Tensor(onnx::TensorProto::BOOL, Shape({})));
  Node* relu = g.AddNode("Relu", {x});
  Value* old_value = relu->output(0);
  old_value->SetType(F32({2}));
  Node* neg = g.AddNode("Neg", {old_value});
  // A subgraph reading the outer value.
  auto branch = std::make_unique<Graph>("then");
  Node* inner = branch->AddNode("Identity", {old_value});
  inner->output(0)->SetType(F32({2}));
  branch->AddOutput(inner->output(0));
  std::vector<Attr> attrs;
  attrs.push_back(Attr::GraphValue("then_branch", std::move(branch)));
  Node* if_node = g.AddNode("If", {cond}, 1, std::move(attrs));
  g.AddOutput(old_value);
  g.AddOutput(neg->output(0));

  Node* abs = g.AddNode("Abs", {x});
  size_t moved = ReplaceAllUsesWith(old_value, abs->output(0));
  EXPECT_EQ(moved, 2u);  // Neg and the Identity inside the If
  EXPECT_EQ(old_value->num_uses(), 0u);
  EXPECT_FALSE(old_value->is_graph_output());
  EXPECT_EQ(neg->input(0), abs->output(0));
  EXPECT_EQ(inner->input(0), abs->output(0));
  EXPECT_EQ(g.outputs()[0], abs->output(0));
  EXPECT_EQ(g.outputs()[1], neg->output(0));
  EXPECT_TRUE(abs->output(0)->is_graph_output());
  (void)if_node;
}

TEST(IrTest, ErasingTheCurrentNodeWhileIteratingForwardIsSafe) {
  Graph g("main");
  Value* x = g.AddInput("x", F32({2}));
  for (const char* op : {"A", "B", "C", "D", "E"}) g.AddNode(op, {x});
  std::vector<std::string> visited;
  for (Node* n : g.nodes()) {
    visited.push_back(n->op_type());
    if (n->op_type() == "B" || n->op_type() == "C") {
      ASSERT_TRUE(g.Erase(n).ok());
    }
  }
  EXPECT_THAT(visited, ElementsAre("A", "B", "C", "D", "E"));
  EXPECT_THAT(OpTypes(g), ElementsAre("A", "D", "E"));
  EXPECT_EQ(g.num_nodes(), 3u);
  EXPECT_EQ(x->num_uses(), 3u);
  g.ReleaseErasedNodes();
  EXPECT_THAT(OpTypes(g), ElementsAre("A", "D", "E"));
}

TEST(IrTest, ErasingCurrentAndNextNodeWhileIteratingSkipsBoth) {
  Graph g("main");
  Value* x = g.AddInput("x", F32({2}));
  for (const char* op : {"A", "B", "C", "D"}) g.AddNode(op, {x});
  std::vector<std::string> visited;
  for (Node* n : g.nodes()) {
    visited.push_back(n->op_type());
    if (n->op_type() == "B") {
      Node* next = n->next();
      ASSERT_TRUE(g.Erase(n).ok());
      ASSERT_TRUE(g.Erase(next).ok());  // C, not yet visited
    }
  }
  EXPECT_THAT(visited, ElementsAre("A", "B", "D"));
  EXPECT_THAT(OpTypes(g), ElementsAre("A", "D"));
}

TEST(IrTest, ErasingWhileIteratingBackwardIsSafe) {
  Graph g("main");
  Value* x = g.AddInput("x", F32({2}));
  for (const char* op : {"A", "B", "C"}) g.AddNode(op, {x});
  std::vector<std::string> visited;
  for (Node* n : g.nodes_reversed()) {
    visited.push_back(n->op_type());
    ASSERT_TRUE(g.Erase(n).ok());
  }
  EXPECT_THAT(visited, ElementsAre("C", "B", "A"));
  EXPECT_EQ(g.num_nodes(), 0u);
  EXPECT_EQ(g.first_node(), nullptr);
  EXPECT_EQ(x->num_uses(), 0u);
}

TEST(IrTest, EraseRefusesWhileOutputsAreUsedUnlessForced) {
  Graph g("main");
  Value* x = g.AddInput("x", F32({2}));
  Node* relu = g.AddNode("Relu", {x});
  relu->set_name("r");
  Node* neg = g.AddNode("Neg", {relu->output(0)});
  neg->set_name("n");
  absl::Status s = g.Erase(relu);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("cannot erase node 'r' (Relu): output 0 "
                                     "'Relu' is still used by node 'n' (Neg) "
                                     "input 0"));
  EXPECT_EQ(g.num_nodes(), 2u);

  g.AddOutput(neg->output(0));
  s = g.Erase(neg);
  EXPECT_THAT(s.message(), HasSubstr("is an output of graph 'main'"));

  ASSERT_TRUE(g.Erase(relu, /*force=*/true).ok());
  EXPECT_EQ(neg->input(0), nullptr);  // consumer detached
  EXPECT_EQ(x->num_uses(), 0u);
}

TEST(IrTest, InsertBeforeAfterAndMove) {
  Graph g("main");
  Value* x = g.AddInput("x", F32({2}));
  Node* a = g.AddNode("A", {x});
  Node* c = g.AddNode("C", {x});
  g.InsertBefore(c, Node::Create("", "B", {x}, {"b"}));
  g.InsertAfter(c, Node::Create("", "D", {x}, {"d"}));
  g.InsertBefore(a, Node::Create("", "Z", {x}, {"z"}));
  EXPECT_THAT(OpTypes(g), ElementsAre("Z", "A", "B", "C", "D"));
  g.MoveAfter(g.first_node(), g.last_node());
  EXPECT_THAT(OpTypes(g), ElementsAre("A", "B", "C", "D", "Z"));
  g.MoveBefore(c, a);
  EXPECT_THAT(OpTypes(g), ElementsAre("C", "A", "B", "D", "Z"));
  EXPECT_EQ(c->prev(), nullptr);
  EXPECT_EQ(c->next(), a);
}

TEST(IrTest, FreshNamesAvoidExistingNamesInSubgraphsToo) {
  Graph g("main");
  Value* x = g.AddInput("t", F32({2}));
  Node* n = g.Append(Node::Create("", "Relu", {x}, {"t_1"}));
  auto body = std::make_unique<Graph>("body");
  body->Append(Node::Create("", "Neg", {x}, {"t_2"}));
  n->SetAttr(Attr::GraphValue("g", std::move(body)));
  EXPECT_EQ(g.FreshName("t"), "t_3");
  EXPECT_EQ(g.FreshName("t"), "t_4");
  EXPECT_EQ(g.FreshName("u"), "u");
  EXPECT_EQ(g.FreshName("u"), "u_1");
  // Names added after the first FreshName call are noted as well.
  g.Append(Node::Create("", "Relu", {x}, {"u_2"}));
  EXPECT_EQ(g.FreshName("u"), "u_3");
  // A subgraph asks its root.
  EXPECT_EQ(n->Subgraphs()[0]->FreshName("t"), "t_5");
}

TEST(IrTest, AddNodeNamesOutputsUniquely) {
  Graph g("main");
  Value* x = g.AddInput("x", F32({2}));
  Node* a = g.AddNode("Relu", {x});
  Node* b = g.AddNode("Relu", {a->output(0)}, 2);
  EXPECT_EQ(a->output(0)->name(), "Relu");
  EXPECT_EQ(b->output(0)->name(), "Relu_1");
  EXPECT_EQ(b->output(1)->name(), "Relu_2");
}

TEST(IrTest, InitializersAreOrderedKeyedAndRemovableWhenUnused) {
  Graph g("main");
  auto w = g.AddInitializer(
      "w", Tensor::FromVector<float>(onnx::TensorProto::FLOAT, {2},
                                     std::vector<float>{1, 2}));
  ASSERT_TRUE(w.ok());
  auto b = g.AddInitializer(
      "b", Tensor::FromVector<float>(onnx::TensorProto::FLOAT, {1},
                                     std::vector<float>{3}));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(g.initializer("w"), *w);
  EXPECT_THAT(g.initializers(), ElementsAre(*w, *b));
  EXPECT_EQ((*w)->dtype(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(*(*w)->shape(), Shape({2}));
  EXPECT_EQ(g.AddInitializer("w", Tensor()).status().code(),
            absl::StatusCode::kAlreadyExists);
  Node* neg = g.AddNode("Neg", {*w});
  EXPECT_THAT(g.RemoveInitializer(*w).message(),
              HasSubstr("cannot remove initializer 'w': it has 1 uses"));
  ASSERT_TRUE(g.RemoveInitializer(*b).ok());
  EXPECT_EQ(g.initializer("b"), nullptr);
  EXPECT_THAT(g.initializers(), ElementsAre(*w));
  (void)neg;
}

TEST(IrTest, RemoveInitializersIfRemovesInOneSweepOrNothing) {
  Graph g;
  std::vector<Value*> inits;
  for (int i = 0; i < 40; ++i) {
    auto v = g.AddInitializer(
        absl::StrCat("w", i),
        Tensor::FromVector<float>(onnx::TensorProto::FLOAT, {1},
                                  std::vector<float>{float(i)}));
    ASSERT_TRUE(v.ok());
    inits.push_back(*v);
  }
  Node* neg = g.AddNode("Neg", {inits[3]});
  // w3 has a use: asking to remove it refuses and removes nothing.
  auto refused =
      g.RemoveInitializersIf([](const Value* v) { return v->name() != "w0"; });
  EXPECT_THAT(refused.status().message(),
              HasSubstr("cannot remove initializer 'w3': it has 1 uses"));
  EXPECT_EQ(g.num_initializers(), 40u);
  // Every odd one goes; the rest keep their order and are found by name.
  auto removed = g.RemoveInitializersIf([](const Value* v) {
    return v->num_uses() == 0 && (v->name().back() - '0') % 2 == 1;
  });
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 19u);  // w1, w5, w7, w9, w11, ... (w3 is used)
  EXPECT_EQ(g.num_initializers(), 21u);
  EXPECT_EQ(g.initializer("w1"), nullptr);
  EXPECT_EQ(g.initializer("w3"), inits[3]);
  EXPECT_EQ(g.initializer("w38"), inits[38]);
  std::vector<Value*> expected;
  for (int i = 0; i < 40; ++i) {
    if (i == 3 || (absl::StrCat(i).back() - '0') % 2 == 0) {
      expected.push_back(inits[i]);
    }
  }
  EXPECT_EQ(g.initializers(), expected);
  ASSERT_TRUE(g.RemoveInitializer(inits[38]).ok());
  EXPECT_EQ(g.initializer("w38"), nullptr);
  EXPECT_EQ(g.initializer("w36"), inits[36]);
  (void)neg;
}

TEST(IrTest, DestroyingAGraphWithSubgraphsReadingOuterValuesIsClean) {
  // Under ASan this proves subgraph nodes release outer uses before the
  // outer values are freed, whatever the node order.
  auto g = std::make_unique<Graph>("main");
  Value* x = g->AddInput("x", F32({2}));
  Node* producer = g->AddNode("Relu", {x});
  auto body = std::make_unique<Graph>("body");
  body->AddNode("Neg", {producer->output(0)});
  Node* owner = g->AddNode("If", {x});
  owner->SetAttr(Attr::GraphValue("then_branch", std::move(body)));
  EXPECT_EQ(producer->output(0)->num_uses(), 1u);
  g.reset();
}

TEST(IrTest, ErasingANodeDropsUsesMadeInsideItsSubgraphs) {
  Graph g("main");
  Value* x = g.AddInput("x", F32({2}));
  auto body = std::make_unique<Graph>("body");
  body->AddNode("Neg", {x});
  Node* owner = g.AddNode("If", {});
  owner->SetAttr(Attr::GraphValue("then_branch", std::move(body)));
  EXPECT_EQ(x->num_uses(), 1u);
  ASSERT_TRUE(g.Erase(owner).ok());
  EXPECT_EQ(x->num_uses(), 0u);
}

TEST(IrTest, ModelFunctionsAreKeyedByDomainAndName) {
  Model m;
  ASSERT_TRUE(m.AddFunction(std::make_unique<Function>("custom", "f")).ok());
  ASSERT_TRUE(m.AddFunction(std::make_unique<Function>("other", "f")).ok());
  EXPECT_EQ(
      m.AddFunction(std::make_unique<Function>("custom", "f")).status().code(),
      absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(m.FindFunction("other", "f")->domain(), "other");
  EXPECT_EQ(m.FindFunction("custom", "g"), nullptr);
  EXPECT_TRUE(m.RemoveFunction("custom", "f"));
  EXPECT_EQ(m.FindFunction("custom", "f"), nullptr);
  EXPECT_EQ(m.FindFunction("other", "f")->name(), "f");
  m.SetOpsetVersion("", 17);
  m.SetOpsetVersion("", 18);
  EXPECT_EQ(m.OpsetVersion(""), 18);
  EXPECT_EQ(m.opset_imports().size(), 1u);
  EXPECT_EQ(m.OpsetVersion("custom"), std::nullopt);
}

TEST(IrTest, TypeToStringCoversAllKinds) {
  EXPECT_EQ(F32({"B", 3, Dim::Unknown()}).ToString(), "f32[B,3,?]");
  EXPECT_EQ(Type::Tensor(onnx::TensorProto::INT64).ToString(), "i64[*]");
  EXPECT_EQ(Type::Tensor(onnx::TensorProto::BOOL, Shape()).ToString(),
            "bool[]");
  EXPECT_EQ(Type::Sequence(F32({3})).ToString(), "seq(f32[3])");
  EXPECT_EQ(Type::Optional(Type::Sequence(F32({}))).ToString(),
            "opt(seq(f32[]))");
  EXPECT_EQ(Type::Map(onnx::TensorProto::INT64, F32({})).ToString(),
            "map(i64,f32[])");
}

}  // namespace
}  // namespace jax2onnx::ir
