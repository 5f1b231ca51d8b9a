// Each kind of IR corruption makes Verify fail with a message naming the
// offending graph, node and value. Corruptions the public API cannot create
// (stale use lists, foreign nodes) are made through IrTestPeer.
#include "ir/verifier.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/ir.h"

namespace jax2onnx::ir {

class IrTestPeer {
 public:
  static void AddBogusUse(Value* v, Node* n, int i) {
    v->uses_.push_back(Use{n, i});
  }
  static void ClearUses(Value* v) { v->uses_.clear(); }
  static void SetOwnerGraph(Node* n, Graph* g) { n->graph_ = g; }
};

namespace {

using ::testing::HasSubstr;

Type F32() { return Type::Tensor(onnx::TensorProto::FLOAT, Shape({2})); }

// x -> Relu(r) -> y, with typed I/O; valid.
struct Fixture {
  Graph g{"main"};
  Value* x;
  Node* relu;
  Fixture() {
    x = g.AddInput("x", F32());
    relu = g.Append(Node::Create("", "Relu", {x}, {"y"}, {}, "r"));
    relu->output(0)->SetType(F32());
    g.AddOutput(relu->output(0));
  }
};

TEST(VerifierTest, AcceptsAValidGraph) {
  Fixture f;
  EXPECT_TRUE(Verify(f.g).ok()) << Verify(f.g);
}

TEST(VerifierTest, RejectsUseBeforeDefinition) {
  Fixture f;
  // A node placed before the producer of its input.
  f.g.InsertBefore(
      f.relu, Node::Create("", "Neg", {f.relu->output(0)}, {"z"}, {}, "n"));
  absl::Status s = Verify(f.g);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(),
              HasSubstr("graph 'main': node 'n' (Neg) input 0 'y' is not "
                        "defined before this point"));
}

TEST(VerifierTest, RejectsACycle) {
  Fixture f;
  Node* a = f.g.Append(Node::Create("", "A", {f.x}, {"a"}, {}, "na"));
  Node* b = f.g.Append(Node::Create("", "B", {a->output(0)}, {"b"}, {}, "nb"));
  ReplaceInputWith(a, 0, b->output(0));
  EXPECT_THAT(Verify(f.g).message(),
              HasSubstr("node 'na' (A) input 0 'b' is not defined before"));
}

TEST(VerifierTest, RejectsAValueFromADetachedNode) {
  Fixture f;
  std::unique_ptr<Node> detached = Node::Create("", "Foo", {}, {"ghost"});
  f.g.Append(Node::Create("", "Neg", {detached->output(0)}, {"z"}, {}, "n"));
  EXPECT_THAT(Verify(f.g).message(),
              HasSubstr("node 'n' (Neg) input 0 'ghost' is not defined"));
}

TEST(VerifierTest, RejectsDuplicateValueNames) {
  Fixture f;
  f.g.Append(Node::Create("", "Neg", {f.x}, {"y"}, {}, "n"));
  EXPECT_THAT(Verify(f.g).message(),
              HasSubstr("value name 'y' is defined twice"));
}

TEST(VerifierTest, RejectsSubgraphRedefiningAnOuterName) {
  Fixture f;
  auto body = std::make_unique<Graph>("body");
  Node* inner = body->Append(Node::Create("", "Neg", {f.x}, {"x"}, {}, "in"));
  inner->output(0)->SetType(F32());
  body->AddOutput(inner->output(0));
  f.g.Append(Node::Create(
      "", "If", {}, {"o"},
      [&] {
        std::vector<Attr> a;
        a.push_back(Attr::GraphValue("then_branch", std::move(body)));
        return a;
      }(),
      "if"));
  absl::Status s = Verify(f.g);
  EXPECT_THAT(s.message(), HasSubstr("in subgraph of node 'if' (If)"));
  EXPECT_THAT(s.message(), HasSubstr("value name 'x' is defined twice"));
}

TEST(VerifierTest, AcceptsSubgraphReadingOuterValueDefinedEarlier) {
  Fixture f;
  auto body = std::make_unique<Graph>("body");
  Node* inner =
      body->Append(Node::Create("", "Neg", {f.relu->output(0)}, {"in_y"}));
  inner->output(0)->SetType(F32());
  body->AddOutput(inner->output(0));
  std::vector<Attr> attrs;
  attrs.push_back(Attr::GraphValue("then_branch", std::move(body)));
  f.g.Append(Node::Create("", "If", {}, {"o"}, std::move(attrs)));
  EXPECT_TRUE(Verify(f.g).ok()) << Verify(f.g);
}

TEST(VerifierTest, RejectsSubgraphReadingOuterValueDefinedLater) {
  Fixture f;
  auto body = std::make_unique<Graph>("body");
  Node* inner =
      body->Append(Node::Create("", "Neg", {f.relu->output(0)}, {"in_y"}));
  inner->output(0)->SetType(F32());
  body->AddOutput(inner->output(0));
  std::vector<Attr> attrs;
  attrs.push_back(Attr::GraphValue("then_branch", std::move(body)));
  f.g.InsertBefore(f.relu,
                   Node::Create("", "If", {}, {"o"}, std::move(attrs), "if"));
  EXPECT_THAT(Verify(f.g).message(),
              HasSubstr("graph 'body': node '' (Neg) input 0 'y' is not "
                        "defined before this point"));
}

TEST(VerifierTest, RejectsUntypedGraphInputUnlessAllowed) {
  Fixture f;
  f.g.AddInput("u");
  EXPECT_THAT(Verify(f.g).message(),
              HasSubstr("graph 'main': input 'u' has no type"));
  EXPECT_TRUE(Verify(f.g, {.require_io_types = false}).ok());
}

TEST(VerifierTest, RejectsUntypedGraphOutput) {
  Fixture f;
  Node* n = f.g.Append(Node::Create("", "Neg", {f.x}, {"z"}));
  f.g.AddOutput(n->output(0));
  EXPECT_THAT(Verify(f.g).message(),
              HasSubstr("graph 'main': output 'z' has no type"));
}

TEST(VerifierTest, RejectsGraphOutputNotDefinedInScope) {
  Fixture f;
  std::unique_ptr<Node> detached = Node::Create("", "Foo", {}, {"ghost"});
  detached->output(0)->SetType(F32());
  f.g.AddOutput(detached->output(0));
  EXPECT_THAT(Verify(f.g).message(),
              HasSubstr("graph output 1 'ghost' is not defined"));
  f.g.ClearOutputs();
}

TEST(VerifierTest, RejectsStaleUseListEntry) {
  Fixture f;
  IrTestPeer::AddBogusUse(f.x, f.relu, 0);  // duplicate of the real use
  EXPECT_THAT(Verify(f.g).message(),
              HasSubstr("use list of value 'x' names node 'r' (Relu) input 0 "
                        "twice"));
  IrTestPeer::ClearUses(f.x);
  IrTestPeer::AddBogusUse(f.x, f.relu, 5);
  EXPECT_THAT(Verify(f.g).message(),
              HasSubstr("use list of value 'x' names node 'r' (Relu) input 5, "
                        "which does not use it"));
  IrTestPeer::ClearUses(f.x);
  IrTestPeer::AddBogusUse(f.x, f.relu, 0);  // restore for clean teardown
}

TEST(VerifierTest, RejectsMissingUseListEntry) {
  Fixture f;
  IrTestPeer::ClearUses(f.x);
  EXPECT_THAT(Verify(f.g).message(),
              HasSubstr("value 'x' is an input of 1 node slots but its use "
                        "list has 0 entries"));
  IrTestPeer::AddBogusUse(f.x, f.relu, 0);  // restore for clean teardown
}

TEST(VerifierTest, RejectsNodeOwnedByAnotherGraph) {
  Fixture f;
  Graph other("other");
  IrTestPeer::SetOwnerGraph(f.relu, &other);
  EXPECT_THAT(Verify(f.g).message(),
              HasSubstr("graph 'main': node 'r' (Relu) is listed by this "
                        "graph but owned by another"));
  IrTestPeer::SetOwnerGraph(f.relu, &f.g);
}

TEST(VerifierTest, ModelVerificationCoversFunctionBodiesWithoutTypes) {
  Model m;
  m.graph().set_name("main");
  auto fn = std::make_unique<Function>("custom", "F");
  Value* a = fn->body().AddInput("a");  // function parameters are untyped
  Node* n = fn->body().Append(Node::Create("", "Neg", {a}, {"b"}));
  fn->body().AddOutput(n->output(0));
  Function* added = *m.AddFunction(std::move(fn));
  EXPECT_TRUE(Verify(m).ok()) << Verify(m);
  added->body().Append(Node::Create("", "Neg", {a}, {"b"}, {}, "dup"));
  EXPECT_THAT(Verify(m).message(),
              HasSubstr("in function 'custom::F': graph 'F': value name 'b' "
                        "is defined twice"));
}

}  // namespace
}  // namespace jax2onnx::ir
