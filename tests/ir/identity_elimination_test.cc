// The identity-elimination pass (ir/passes/identity_elimination.cc) on small
// hand-built graphs: the graph after is compared as printed text written by
// hand (values derived in comments) and each test also pins what the pass
// refuses (tests/ir/pass_test_util.h: verifier around the pass, cleanup after,
// ONNX Runtime accepts the model before and after).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::F32;
using pass_test::Op;
using pass_test::RunPass;

TEST(IdentityEliminationTest, BypassesIdentitiesAndRenamesOutputProducers) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Node* i1 = Op(g, "Identity", {x}, "i1", F32({2}));
  Node* r = Op(g, "Relu", {i1->output(0)}, "r", F32({2}));
  Node* out = Op(g, "Identity", {r->output(0)}, "y", F32({2}));
  g.AddOutput(out->output(0));
  // The output Identity goes by renaming: %r becomes the output %y.
  EXPECT_TRUE(RunPass("identity-elimination", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2]) -> (%y: f32[2]) {\n"
            "  %y: f32[2] = Relu(%x)\n"
            "}\n");
}

TEST(IdentityEliminationTest, KeepsOutputIdentitiesOfInputsAndSharedValues) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Node* r = Op(g, "Relu", {x}, "r", F32({2}));
  // x is a graph input; r is read twice: neither can take an output name.
  g.AddOutput(Op(g, "Identity", {x}, "y", F32({2}))->output(0));
  g.AddOutput(Op(g, "Identity", {r->output(0)}, "z", F32({2}))->output(0));
  g.AddOutput(Op(g, "Neg", {r->output(0)}, "w", F32({2}))->output(0));
  EXPECT_FALSE(RunPass("identity-elimination", m));
}

}  // namespace
}  // namespace jax2onnx::ir
