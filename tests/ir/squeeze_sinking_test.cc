// The squeeze-sinking pass (ir/passes/squeeze_sinking.cc) on small graphs
// stated as IR text: the graph after is compared as printed text written by
// hand (values derived in comments) and each test also pins what the pass
// refuses (tests/ir/pass_test_util.h: verifier around the pass, cleanup after,
// ONNX Runtime accepts the model before and after).
#include <string>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::ParseIr;
using pass_test::RunPass;

TEST(SqueezeSinkingTest, UnrolledSumKeepsOneSqueezeAtTheEnd) {
  // sum = ((x0 + x1) - x2) * x3 with xi = Squeeze(pi, [0]) and pi: f32[1]
  // (the pieces of a Split): the ops run on the f32[1] pieces in the same
  // order and one Squeeze makes the scalar.
  Model m = ParseIr(R"(
    model ir_version=0 opsets={"": 23}
    graph main(%p0: f32[1], %p1: f32[1], %p2: f32[1], %p3: f32[1])
        -> (%sum: f32[]) {
      init %axes: i64[1] = i64[1]{0}
      %x0: f32[] = Squeeze(%p0, %axes)
      %x1: f32[] = Squeeze(%p1, %axes)
      %x2: f32[] = Squeeze(%p2, %axes)
      %x3: f32[] = Squeeze(%p3, %axes)
      %s1: f32[] = Add(%x0, %x1)
      %s2: f32[] = Sub(%s1, %x2)
      %sum: f32[] = Mul(%s2, %x3)
    })");
  EXPECT_TRUE(RunPass("squeeze-sinking", m));
  EXPECT_EQ(PrintGraph(m.graph()),
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
  // xa is also a graph output: its Squeeze stays, so nothing is gained.
  // [1,3] and [3,1] squeezed to [3]: equal results, unequal operands (an
  // Add of the operands would broadcast to [3,3]).
  Model m = ParseIr(R"(
    model ir_version=0 opsets={"": 23}
    graph main(%a: f32[1], %b: f32[1], %c: f32[1,3], %d: f32[3,1])
        -> (%y: f32[], %xa: f32[], %z: f32[3]) {
      init %axes0: i64[1] = i64[1]{0}
      init %axes1: i64[1] = i64[1]{1}
      %xa: f32[] = Squeeze(%a, %axes0)
      %xb: f32[] = Squeeze(%b, %axes0)
      %y: f32[] = Add(%xa, %xb)
      %xc: f32[3] = Squeeze(%c, %axes0)
      %xd: f32[3] = Squeeze(%d, %axes1)
      %z: f32[3] = Add(%xc, %xd)
    })");
  EXPECT_FALSE(RunPass("squeeze-sinking", m));
}

}  // namespace
}  // namespace jax2onnx::ir
