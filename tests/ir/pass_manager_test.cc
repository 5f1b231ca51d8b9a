// The pass manager (ir/pass_manager.cc): fixpoint groups, anchor-op skipping,
// the verifier around passes, the dump callback and the pass registry.
// Expected text is written by hand.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/pass.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::AddNode;
using pass_test::F32;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

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
  Node* n = AddNode(m.graph(), "Relu", {x}, {"y"});
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

// A node `op` holding one named subgraph per entry of `branches`.
Node* AddNodeWithSubgraphs(Graph& g, absl::string_view op,
                           std::vector<std::string> branches) {
  std::vector<Attr> attrs;
  for (std::string& b : branches) {
    attrs.push_back(Attr::GraphValue(b, std::make_unique<Graph>(b)));
  }
  return g.Append(Node::Create("", op, {}, {""}, std::move(attrs)));
}

std::vector<std::string> GraphNames(const std::vector<Graph*>& graphs) {
  std::vector<std::string> names;
  for (const Graph* g : graphs) names.push_back(g->name());
  return names;
}

// AllGraphs is cached until the subgraph structure changes: after each kind
// of change it must list what a fresh walk lists.
TEST(PassManagerTest, AllGraphsFollowsEverySubgraphChange) {
  Model m = SmallModel();
  EXPECT_THAT(GraphNames(AllGraphs(m)), ElementsAre("main"));
  Node* a = AddNodeWithSubgraphs(m.graph(), "If", {"a_then", "a_else"});
  EXPECT_THAT(GraphNames(AllGraphs(m)),
              ElementsAre("main", "a_then", "a_else"));
  a->SetAttr(Attr::GraphValue("a_then", std::make_unique<Graph>("a_new")));
  EXPECT_THAT(GraphNames(AllGraphs(m)),
              ElementsAre("main", "a_new", "a_else"));
  a->RemoveAttr("a_else");
  EXPECT_THAT(GraphNames(AllGraphs(m)), ElementsAre("main", "a_new"));
  Node* b = AddNodeWithSubgraphs(m.graph(), "Loop", {"b_body"});
  EXPECT_THAT(GraphNames(AllGraphs(m)), ElementsAre("main", "a_new", "b_body"));
  std::vector<Node*> order;
  for (Node* n : m.graph().nodes()) order.push_back(n);
  std::reverse(order.begin(), order.end());
  m.graph().Reorder(order);
  EXPECT_THAT(GraphNames(AllGraphs(m)), ElementsAre("main", "b_body", "a_new"));
  m.graph().MoveBefore(a, b);
  EXPECT_THAT(GraphNames(AllGraphs(m)), ElementsAre("main", "a_new", "b_body"));
  AddNodeWithSubgraphs(*a->attr("a_then")->g(), "If", {"c_then"});
  EXPECT_THAT(GraphNames(AllGraphs(m)),
              ElementsAre("main", "a_new", "b_body", "c_then"));
  ASSERT_TRUE(m.graph().Erase(a).ok());
  EXPECT_THAT(GraphNames(AllGraphs(m)), ElementsAre("main", "b_body"));
  auto f = std::make_unique<Function>("local", "f");
  AddNodeWithSubgraphs(f->body(), "If", {"f_then"});
  ASSERT_TRUE(m.AddFunction(std::move(f)).ok());
  EXPECT_THAT(GraphNames(AllGraphs(m)),
              ElementsAre("main", "b_body", "f", "f_then"));
  ASSERT_TRUE(m.RemoveFunction("local", "f"));
  EXPECT_THAT(GraphNames(AllGraphs(m)), ElementsAre("main", "b_body"));
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
      "reshape-folding, shape-folding, slices-to-split, squeeze-sinking, "
      "topological-sort, "
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
