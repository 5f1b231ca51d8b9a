// The node-naming pass (ir/passes/node_naming.cc) on small graphs stated as
// IR text: the names after are compared with names written by hand and each
// test also pins what the pass refuses (tests/ir/pass_test_util.h: verifier
// around the pass, cleanup after, ONNX Runtime accepts the model before and
// after).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::ParseIr;
using pass_test::RunPass;

TEST(NodeNamingTest, NamesUnnamedNodesAndMakesNamesUnique) {
  // Two nodes named alike and one unnamed.
  Model m = ParseIr(R"(
    graph main(%x: f32[2]) -> (%c: f32[2]) {
      %a: f32[2] = Relu(%x)  # eqn0/relu/Relu
      %b: f32[2] = Relu(%a)  # eqn0/relu/Relu
      %c: f32[2] = Neg(%b)
    })");
  Node* c = m.graph().outputs()[0]->producer();
  Node* b = c->input(0)->producer();
  Node* a = b->input(0)->producer();
  EXPECT_TRUE(RunPass("node-naming", m, /*input_is_valid=*/false));
  EXPECT_EQ(a->name(), "eqn0/relu/Relu");
  EXPECT_EQ(b->name(), "eqn0/relu/Relu_1");
  EXPECT_EQ(c->name(), "Neg");
  EXPECT_FALSE(RunPass("node-naming", m));
}

}  // namespace
}  // namespace jax2onnx::ir
