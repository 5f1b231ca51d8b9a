// The squeeze-sinking pass (ir/passes/squeeze_sinking.cc) on small hand-built
// graphs: the graph after is compared as printed text written by hand (values
// derived in comments) and each test also pins what the pass refuses
// (tests/ir/pass_test_util.h: verifier around the pass, cleanup after, ONNX
// Runtime accepts the model before and after).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::F32;
using pass_test::I64;
using pass_test::Op;
using pass_test::RunPass;

TEST(SqueezeSinkingTest, UnrolledSumKeepsOneSqueezeAtTheEnd) {
  Model m;
  m.SetOpsetVersion("", 23);
  Graph& g = m.graph();
  g.set_name("main");
  // sum = ((x0 + x1) - x2) * x3 with xi = Squeeze(pi, [0]) and pi: f32[1]
  // (the pieces of a Split): the ops run on the f32[1] pieces in the same
  // order and one Squeeze makes the scalar.
  std::vector<Value*> pieces;
  for (int i = 0; i < 4; ++i) {
    pieces.push_back(g.AddInput("p" + std::to_string(i), F32({1})));
  }
  Value* axes = I64(g, "axes", {0});
  std::vector<Value*> scalars;
  for (int i = 0; i < 4; ++i) {
    scalars.push_back(
        Op(g, "Squeeze", {pieces[i], axes}, "x" + std::to_string(i), F32({}))
            ->output(0));
  }
  Value* s = Op(g, "Add", {scalars[0], scalars[1]}, "s1", F32({}))->output(0);
  s = Op(g, "Sub", {s, scalars[2]}, "s2", F32({}))->output(0);
  s = Op(g, "Mul", {s, scalars[3]}, "sum", F32({}))->output(0);
  g.AddOutput(s);
  EXPECT_TRUE(RunPass("squeeze-sinking", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%p0: f32[1], %p1: f32[1], %p2: f32[1], %p3: f32[1]) "
            "-> (%sum: f32[]) {\n"
            "  init %axes: i64[1] = i64[1]{0}\n"
            "  %Add: f32[1] = Add(%p0, %p1)  # Add\n"
            "  %Sub: f32[1] = Sub(%Add, %p2)  # Sub\n"
            "  %Mul: f32[1] = Mul(%Sub, %p3)  # Mul\n"
            "  %sum: f32[] = Squeeze(%Mul, %axes)  # Squeeze\n"
            "}\n");
  EXPECT_FALSE(RunPass("squeeze-sinking", m));
}

TEST(SqueezeSinkingTest, RefusesSharedSqueezesAndUnequalShapes) {
  Model m;
  m.SetOpsetVersion("", 23);
  Graph& g = m.graph();
  g.set_name("main");
  Value* a = g.AddInput("a", F32({1}));
  Value* b = g.AddInput("b", F32({1}));
  Value* c = g.AddInput("c", F32({1, 3}));
  Value* d = g.AddInput("d", F32({3, 1}));
  Value* axes0 = I64(g, "axes0", {0});
  Value* axes1 = I64(g, "axes1", {1});
  // xa is also a graph output: its Squeeze stays, so nothing is gained.
  Value* xa = Op(g, "Squeeze", {a, axes0}, "xa", F32({}))->output(0);
  Value* xb = Op(g, "Squeeze", {b, axes0}, "xb", F32({}))->output(0);
  g.AddOutput(Op(g, "Add", {xa, xb}, "y", F32({}))->output(0));
  g.AddOutput(xa);
  // [1,3] and [3,1] squeezed to [3]: equal results, unequal operands (an
  // Add of the operands would broadcast to [3,3]).
  Value* xc = Op(g, "Squeeze", {c, axes0}, "xc", F32({3}))->output(0);
  Value* xd = Op(g, "Squeeze", {d, axes1}, "xd", F32({3}))->output(0);
  g.AddOutput(Op(g, "Add", {xc, xd}, "z", F32({3}))->output(0));
  EXPECT_FALSE(RunPass("squeeze-sinking", m));
}

}  // namespace
}  // namespace jax2onnx::ir
