// The node-naming pass (ir/passes/node_naming.cc) on small hand-built graphs:
// the graph after is compared as printed text written by hand (values derived
// in comments) and each test also pins what the pass refuses
// (tests/ir/pass_test_util.h: verifier around the pass, cleanup after, ONNX
// Runtime accepts the model before and after).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::F32;
using pass_test::Op;
using pass_test::RunPass;

TEST(NodeNamingTest, NamesUnnamedNodesAndMakesNamesUnique) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Node* a = Op(g, "Relu", {x}, "a", F32({2}));
  a->set_name("eqn0/relu/Relu");
  Node* b = Op(g, "Relu", {a->output(0)}, "b", F32({2}));
  b->set_name("eqn0/relu/Relu");
  Node* c = Op(g, "Neg", {b->output(0)}, "c", F32({2}));
  g.AddOutput(c->output(0));
  EXPECT_TRUE(RunPass("node-naming", m, /*input_is_valid=*/false));
  EXPECT_EQ(a->name(), "eqn0/relu/Relu");
  EXPECT_EQ(b->name(), "eqn0/relu/Relu_1");
  EXPECT_EQ(c->name(), "Neg");
  EXPECT_FALSE(RunPass("node-naming", m));
}

}  // namespace
}  // namespace jax2onnx::ir
