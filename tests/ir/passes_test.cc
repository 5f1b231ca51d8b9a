// The generic passes on small graphs (results compared as printed text,
// expected text written by hand) and the pass manager's fixpoint, verifier
// and dump behaviour. Every model a pass leaves that is a valid standalone
// model must be one ONNX Runtime accepts (tests/ir/ir_ort_accepts.h); the
// exemptions are listed in docs/testing.md ("ORT acceptance gate").
#include "ir/passes/passes.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/pass.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "tests/ir/ir_ort_accepts.h"

namespace jax2onnx::ir {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Type F32(Shape s) { return Type::Tensor(onnx::TensorProto::FLOAT, s); }

Node* Add(Graph& g, absl::string_view op, std::vector<Value*> ins,
          std::vector<std::string> outs, Type type = F32({2})) {
  Node* n = g.Append(Node::Create("", op, ins, std::move(outs)));
  for (Value* v : n->outputs()) v->SetType(type);
  return n;
}

Tensor Floats(std::vector<float> v) {
  return Tensor::FromVector<float>(onnx::TensorProto::FLOAT,
                                   {static_cast<int64_t>(v.size())}, v);
}

bool RunPass(absl::string_view name, Model& m) {
  std::unique_ptr<Pass> pass = CreatePass(name);
  CHECK(pass != nullptr) << name;
  absl::StatusOr<bool> changed = pass->Run(m);
  CHECK(changed.ok()) << changed.status();
  for (Graph* g : AllGraphs(m)) g->ReleaseErasedNodes();
  return *changed;
}

TEST(PrinterTest, PrintsGraphWithInitializersAttributesAndNodeNames) {
  Graph g("main");
  Value* x = g.AddInput("x", F32({"B", 3}));
  Value* w = *g.AddInitializer("w", Floats({1, 2, 3}));
  Node* relu = Add(g, "Relu", {x}, {"t"}, F32({"B", 3}));
  Node* add = Add(g, "Add", {relu->output(0), w}, {"y"}, F32({"B", 3}));
  add->set_name("add_0");
  add->SetAttr(Attr::Ints("perm", {1, 0}));
  add->SetAttr(Attr::Float("alpha", 0.5f));
  add->SetAttr(Attr::String("mode", "a\"b"));
  g.AddOutput(add->output(0));
  // Attributes come out sorted by name, the string C-escaped.
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[B,3]) -> (%y: f32[B,3]) {\n"
            "  init %w: f32[3] = f32[3]{1, 2, 3}\n"
            "  %t: f32[B,3] = Relu(%x)\n"
            "  %y: f32[B,3] = Add(%t, %w) {alpha=0.5, mode=\"a\\\"b\", "
            "perm=[1, 0]}  # add_0\n"
            "}\n");
  EXPECT_EQ(PrintNode(*relu), "%t: f32[B,3] = Relu(%x)");
}

TEST(PrinterTest, PrintsSubgraphsAbsentValuesAndDomains) {
  Graph g("main");
  Value* c = g.AddInput("c", Type::Tensor(onnx::TensorProto::BOOL, Shape()));
  Value* x = g.AddInput("x", F32({2}));
  auto then_g = std::make_unique<Graph>("then_g");
  Add(*then_g, "Neg", {x}, {"e"});
  then_g->AddOutput(then_g->last_node()->output(0));
  Node* if_node = g.Append(Node::Create("", "If", {c}, {"o"}));
  if_node->SetAttr(Attr::GraphValue("then_branch", std::move(then_g)));
  Node* custom =
      g.Append(Node::Create("my.domain", "Op", {x, nullptr, x}, {"", "p"}));
  (void)custom;
  EXPECT_EQ(PrintGraph(g),
            "graph main(%c: bool[], %x: f32[2]) -> () {\n"
            "  %o = If(%c) {then_branch=graph then_g() -> (%e: f32[2]) {\n"
            "    %e: f32[2] = Neg(%x)\n"
            "  }}\n"
            "  _, %p = my.domain::Op(%x, _, %x)\n"
            "}\n");
}

TEST(PrinterTest, LongTensorsShowHeadCountAndDigest) {
  std::vector<float> v(20, 1.0f);
  std::string text = PrintTensor(Floats(v));
  EXPECT_THAT(text, HasSubstr("f32[20]{1, 1, 1, 1, 1, 1, 1, 1, ... (20 "
                              "elements, fnv1a "));
}

TEST(DeadNodeEliminationTest, RemovesDeadChainsKeepsPartlyUsedNodes) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Node* a = Add(g, "Relu", {x}, {"a"});
  Add(g, "Neg", {a->output(0)}, {"b"});  // dead, and makes a dead
  // s1 unused; halves of f32[2].
  Node* split = Add(g, "Split", {x}, {"s0", "s1"}, F32({1}));
  split->SetAttr(Attr::Int("num_outputs", 2));
  Node* y = Add(g, "Abs", {split->output(0)}, {"y"}, F32({1}));
  g.AddOutput(y->output(0));
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_TRUE(RunPass("dead-node-elimination", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2]) -> (%y: f32[1]) {\n"
            "  %s0: f32[1], %s1: f32[1] = Split(%x) {num_outputs=2}\n"
            "  %y: f32[1] = Abs(%s0)\n"
            "}\n");
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_FALSE(RunPass("dead-node-elimination", m));
}

TEST(DeadNodeEliminationTest, CleansSubgraphsAndFreesOuterProducers) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Value* c = g.AddInput("c", Type::Tensor(onnx::TensorProto::BOOL, Shape()));
  Node* outer = Add(g, "Relu", {x}, {"r"});  // only read by a dead inner node
  auto body = std::make_unique<Graph>("body");
  Add(*body, "Neg", {outer->output(0)}, {"dead"});
  Add(*body, "Abs", {x}, {"live"});
  body->AddOutput(body->last_node()->output(0));
  auto else_body = std::make_unique<Graph>("else_body");
  Add(*else_body, "Sin", {x}, {"other"});
  else_body->AddOutput(else_body->last_node()->output(0));
  Node* if_node = Add(g, "If", {c}, {"o"});
  if_node->SetAttr(Attr::GraphValue("then_branch", std::move(body)));
  if_node->SetAttr(Attr::GraphValue("else_branch", std::move(else_body)));
  g.AddOutput(if_node->output(0));
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_TRUE(RunPass("dead-node-elimination", m));
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

TEST(UnusedInitializerPruningTest, RemovesOnlyUnusedNonInputInitializers) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Value* c = g.AddInput("c", Type::Tensor(onnx::TensorProto::BOOL, Shape()));
  Value* w = *g.AddInitializer("w", Floats({1, 2}));
  *g.AddInitializer("unused", Floats({3}));
  Value* d = g.AddInput("d", F32({1}));
  ASSERT_TRUE(g.SetInputDefault(d, std::make_shared<Tensor>(Floats({4}))).ok());
  // inner_only is read only inside the branches; d is an input with a
  // default that nothing reads.
  auto body = std::make_unique<Graph>("body");
  Value* inner_only = *g.AddInitializer("inner_only", Floats({5}));
  Add(*body, "Neg", {inner_only}, {"n"}, F32({1}));
  body->AddOutput(body->last_node()->output(0));
  auto else_body = std::make_unique<Graph>("else_body");
  Add(*else_body, "Abs", {inner_only}, {"a"}, F32({1}));
  else_body->AddOutput(else_body->last_node()->output(0));
  Node* if_node = Add(g, "If", {c}, {"o"}, F32({1}));
  if_node->SetAttr(Attr::GraphValue("then_branch", std::move(body)));
  if_node->SetAttr(Attr::GraphValue("else_branch", std::move(else_body)));
  Node* mul = Add(g, "Mul", {x, w}, {"y"});
  g.AddOutput(mul->output(0));
  g.AddOutput(if_node->output(0));
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_TRUE(RunPass("unused-initializer-pruning", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2], %c: bool[], %d: f32[1]) -> (%y: f32[2], "
            "%o: f32[1]) {\n"
            "  init %d: f32[1] = f32[1]{4}\n"
            "  init %inner_only: f32[1] = f32[1]{5}\n"
            "  init %w: f32[2] = f32[2]{1, 2}\n"
            "  %o: f32[1] = If(%c) {else_branch=graph else_body() -> (%a: "
            "f32[1]) {\n"
            "    %a: f32[1] = Abs(%inner_only)\n"
            "  }, then_branch=graph body() -> (%n: f32[1]) {\n"
            "    %n: f32[1] = Neg(%inner_only)\n"
            "  }}\n"
            "  %y: f32[2] = Mul(%x, %w)\n"
            "}\n");
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_FALSE(RunPass("unused-initializer-pruning", m));
}

TEST(TopologicalSortTest, MovesNodesAfterTheirProducersStably) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Node* z = Add(g, "Sin", {x}, {"z"});
  Node* relu = Add(g, "Relu", {x}, {"a"});
  Node* neg = Add(g, "Neg", {relu->output(0)}, {"b"});
  Node* sum = Add(g, "Add", {relu->output(0), neg->output(0)}, {"y"});
  g.AddOutput(sum->output(0));
  g.MoveBefore(sum, z);    // Add, Z, Relu, Neg
  g.MoveAfter(relu, neg);  // Add, Z, Neg, Relu
  // DFS from Add emits Relu, then Neg (its deps), then Add; Z keeps its
  // relative place after them.
  EXPECT_TRUE(RunPass("topological-sort", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2]) -> (%y: f32[2]) {\n"
            "  %a: f32[2] = Relu(%x)\n"
            "  %b: f32[2] = Neg(%a)\n"
            "  %y: f32[2] = Add(%a, %b)\n"
            "  %z: f32[2] = Sin(%x)\n"
            "}\n");
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_FALSE(RunPass("topological-sort", m));  // valid order is kept
}

TEST(TopologicalSortTest, HonoursImplicitInputsOfSubgraphs) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Value* c = g.AddInput("c", Type::Tensor(onnx::TensorProto::BOOL, Shape()));
  Node* relu = Add(g, "Relu", {x}, {"a"});
  auto body = std::make_unique<Graph>("body");
  body->AddOutput(Add(*body, "Neg", {relu->output(0)}, {"n"})->output(0));
  auto else_body = std::make_unique<Graph>("else_body");
  else_body->AddOutput(Add(*else_body, "Abs", {x}, {"e"})->output(0));
  Node* if_node = Add(g, "If", {c}, {"o"});
  if_node->SetAttr(Attr::GraphValue("then_branch", std::move(body)));
  if_node->SetAttr(Attr::GraphValue("else_branch", std::move(else_body)));
  g.AddOutput(if_node->output(0));
  g.MoveBefore(if_node, relu);
  EXPECT_TRUE(RunPass("topological-sort", m));
  std::vector<std::string> ops;
  for (Node* n : g.nodes()) ops.push_back(n->op_type());
  EXPECT_THAT(ops, ElementsAre("Relu", "If"));
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
}

TEST(TopologicalSortTest, RefusesACycle) {
  Model m;
  Graph& g = m.graph();
  Value* x = g.AddInput("x", F32({2}));
  Node* a = Add(g, "A", {x}, {"a"});
  a->set_name("na");
  Node* b = Add(g, "B", {a->output(0)}, {"b"});
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
  EXPECT_TRUE(RunPass("topological-sort", m));
  EXPECT_EQ(g.first_node(), chain.front());
  EXPECT_EQ(g.last_node(), chain.back());
  EXPECT_TRUE(Verify(m).ok());
  EXPECT_FALSE(RunPass("dead-node-elimination", m));
  ASSERT_TRUE(g.Erase(g.last_node(), /*force=*/true).ok());
  EXPECT_TRUE(RunPass("dead-node-elimination", m));  // whole chain is dead
  EXPECT_EQ(g.num_nodes(), 0u);
}

// Reports a change `changes` times, then no change.
class CountdownPass : public Pass {
 public:
  CountdownPass(int changes, int* runs) : left_(changes), runs_(runs) {}
  absl::string_view name() const override { return "countdown"; }
  absl::StatusOr<bool> Run(Model&) override {
    ++*runs_;
    return left_-- > 0;
  }

 private:
  int left_;
  int* runs_;
};

// Puts a node that reads a later value at the front of the main graph.
class CorruptingPass : public Pass {
 public:
  absl::string_view name() const override { return "corrupt"; }
  absl::StatusOr<bool> Run(Model& m) override {
    Graph& g = m.graph();
    g.InsertBefore(g.first_node(),
                   Node::Create("", "Neg", {g.last_node()->output(0)}, {"bad"},
                                {}, "bad_node"));
    return true;
  }
};

Model SmallModel() {
  Model m;
  m.graph().set_name("main");
  Value* x = m.graph().AddInput("x", F32({2}));
  Node* n = Add(m.graph(), "Relu", {x}, {"y"});
  m.graph().AddOutput(n->output(0));
  return m;
}

TEST(PassManagerTest, FixpointGroupRunsUntilNothingChanges) {
  Model m = SmallModel();
  int runs = 0;
  PassManager pm;
  std::vector<std::unique_ptr<Pass>> group;
  group.push_back(std::make_unique<CountdownPass>(3, &runs));
  pm.AddFixpoint("cleanup", std::move(group));
  absl::StatusOr<bool> changed = pm.Run(m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(runs, 4);  // three changing rounds and one quiet round
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
}

TEST(PassManagerTest, FixpointGroupThatDoesNotConvergeIsAnError) {
  Model m = SmallModel();
  int runs = 0;
  PassManager pm(PassManagerOptions{.max_fixpoint_iterations = 3});
  std::vector<std::unique_ptr<Pass>> group;
  group.push_back(std::make_unique<CountdownPass>(100, &runs));
  pm.AddFixpoint("cleanup", std::move(group));
  absl::StatusOr<bool> changed = pm.Run(m);
  EXPECT_EQ(changed.status().message(),
            "pass group 'cleanup' did not converge within 3 rounds; still "
            "changing in the last round: countdown");
  EXPECT_EQ(runs, 3);
}

// Counts its runs; anchored on Neg.
class NegAnchoredPass : public Pass {
 public:
  explicit NegAnchoredPass(int* runs) : runs_(runs) {}
  absl::string_view name() const override { return "neg-anchored"; }
  std::vector<absl::string_view> AnchorOps() const override { return {"Neg"}; }
  absl::StatusOr<bool> Run(Model&) override {
    ++*runs_;
    return false;
  }

 private:
  int* runs_;
};

// Turns the Relu into a Neg once (a change that brings the anchor in).
class ReluToNegPass : public Pass {
 public:
  absl::string_view name() const override { return "relu-to-neg"; }
  absl::StatusOr<bool> Run(Model& m) override {
    Node* n = m.graph().first_node();
    if (n->op_type() != "Relu") return false;
    n->set_op_type("Neg");
    return true;
  }
};

TEST(PassManagerTest, PassIsSkippedUntilItsAnchorOpAppears) {
  Model m = SmallModel();  // one Relu, no Neg
  int runs = 0;
  PassManager pm;
  pm.Add(std::make_unique<NegAnchoredPass>(&runs));
  pm.Add(std::make_unique<ReluToNegPass>());
  pm.Add(std::make_unique<NegAnchoredPass>(&runs));
  absl::StatusOr<bool> changed = pm.Run(m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  // Skipped before the rewrite (no Neg anywhere), run after it (the census
  // is retaken after a changing pass).
  EXPECT_EQ(runs, 1);
}

// Counts its runs and never changes anything.
class QuietPass : public Pass {
 public:
  explicit QuietPass(int* runs) : runs_(runs) {}
  absl::string_view name() const override { return "quiet"; }
  absl::StatusOr<bool> Run(Model&) override {
    ++*runs_;
    return false;
  }

 private:
  int* runs_;
};

TEST(PassManagerTest, PassThatChangedNothingIsNotRerunUntilTheModelChanges) {
  Model m = SmallModel();
  int runs = 0;
  PassManager pm;
  pm.Add(std::make_unique<QuietPass>(&runs));
  pm.Add(std::make_unique<QuietPass>(&runs));  // same model: skipped
  pm.Add(std::make_unique<ReluToNegPass>());   // changes the model
  pm.Add(std::make_unique<QuietPass>(&runs));  // runs again
  pm.Add(std::make_unique<ReluToNegPass>());   // no Relu left: no change
  pm.Add(std::make_unique<QuietPass>(&runs));  // skipped
  absl::StatusOr<bool> changed = pm.Run(m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(runs, 2);
  // A second Run() may see a model changed in between: it starts afresh.
  ASSERT_TRUE(pm.Run(m).ok());
  EXPECT_EQ(runs, 3);
}

TEST(PassManagerTest, FixpointGroupAfterAQuietStepIsSkipped) {
  Model m = SmallModel();
  int runs = 0;
  PassManager pm;
  std::vector<std::unique_ptr<Pass>> first;
  first.push_back(std::make_unique<QuietPass>(&runs));
  pm.AddFixpoint("first", std::move(first));
  pm.Add(std::make_unique<NegAnchoredPass>(&runs));  // no Neg: skipped
  std::vector<std::unique_ptr<Pass>> again;
  again.push_back(std::make_unique<QuietPass>(&runs));
  pm.AddFixpoint("again", std::move(again));
  ASSERT_TRUE(pm.Run(m).ok());
  EXPECT_EQ(runs, 1);
}

TEST(PassManagerTest, VerifierAfterPassCatchesCorruption) {
  Model m = SmallModel();
  PassManager pm(PassManagerOptions{.verify_each_pass = true});
  pm.Add(std::make_unique<CorruptingPass>());
  absl::StatusOr<bool> r = pm.Run(m);
  EXPECT_THAT(r.status().message(),
              HasSubstr("IR verification failed after pass 'corrupt': graph "
                        "'main': node 'bad_node' (Neg) input 0 'y' is not "
                        "defined"));
}

TEST(PassManagerTest, VerifierBeforePassCatchesBrokenInput) {
  Model m = SmallModel();
  CorruptingPass().Run(m).IgnoreError();
  PassManager pm(PassManagerOptions{.verify_each_pass = true});
  ASSERT_TRUE(pm.AddByName("dead-node-elimination").ok());
  EXPECT_THAT(pm.Run(m).status().message(),
              HasSubstr("IR verification failed before pass "
                        "'dead-node-elimination'"));
}

TEST(PassManagerTest, VerificationCanBeTurnedOff) {
  Model m = SmallModel();
  PassManager pm(PassManagerOptions{.verify_each_pass = false});
  pm.Add(std::make_unique<CorruptingPass>());
  EXPECT_TRUE(pm.Run(m).ok());
}

TEST(PassManagerTest, DumpCallbackSeesEveryPassRunInOrder) {
  Model m = SmallModel();
  std::vector<std::string> seen;
  PassManagerOptions options;
  options.verify_each_pass = true;
  options.dump = [&](int step, absl::string_view name, const Model& model) {
    seen.push_back(
        absl::StrCat(step, ":", name, ":", model.graph().num_nodes()));
  };
  PassManager pm(options);
  ASSERT_TRUE(pm.AddByName("topological-sort").ok());
  ASSERT_TRUE(pm.AddByName("dead-node-elimination").ok());
  ASSERT_TRUE(pm.AddByName("unused-initializer-pruning").ok());
  absl::StatusOr<bool> changed = pm.Run(m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_THAT(seen,
              ElementsAre("0:topological-sort:1", "1:dead-node-elimination:1",
                          "2:unused-initializer-pruning:1"));
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
}

TEST(PassManagerTest, UnknownPassNameListsKnownNames) {
  PassManager pm;
  absl::Status s = pm.AddByName("cse");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(
      s.message(),
      "unknown IR pass 'cse'; known passes: cast-elimination, "
      "common-subexpression-elimination, constant-folding, "
      "dead-node-elimination, einsum-to-matmul, expand-elimination, "
      "gemm-bias-folding, identity-elimination, node-naming, reduce-keepdims, "
      "reshape-folding, slices-to-split, squeeze-sinking, topological-sort, "
      "transpose-folding, "
      "type-propagation, unused-initializer-pruning, fuse-layer-norm, "
      "fuse-rms-norm, fuse-softmax, fuse-gelu, fuse-swish, fuse-attention");
}

// One registry: every name the manager lists, fusions included, creates the
// pass of that name.
TEST(PassManagerTest, EveryRegisteredNameCreatesItsPass) {
  std::vector<std::string> names = RegisteredPassNames();
  EXPECT_THAT(names, testing::Contains("fuse-gelu"));
  for (const std::string& name : names) {
    std::unique_ptr<Pass> pass = CreatePass(name);
    ASSERT_NE(pass, nullptr) << name;
    EXPECT_EQ(pass->name(), name);
  }
}

}  // namespace
}  // namespace jax2onnx::ir
