// The slices-to-split pass (ir/passes/slices_to_split.cc) on small graphs
// stated as IR text (the hundred slices of the last test are built in a
// loop): the graph after is compared as printed text written by hand (values
// derived in comments) and each test also pins what the pass refuses
// (tests/ir/pass_test_util.h: verifier around the pass, cleanup after, ONNX
// Runtime accepts the model before and after).
#include <algorithm>
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
using pass_test::ParseIr;
using pass_test::RunPass;

TEST(SlicesToSplitTest, StaticSlicesAlongOneAxisBecomeOneSplit) {
  // Rows [0,2), [2,3) and [-2, end) = [4,6) of the 6: five of six rows in
  // three disjoint ranges, so one Split into [2, 1, 1, 2] whose third
  // output (the gap, row 3) nobody reads. Axis 1 is symbolic and taken
  // whole by `a` (start 0, end INT64_MAX = 9223372036854775807). b is a
  // graph output: it keeps its name. Refused: d, the only slice of its group
  // (columns of x), e, a stride of 2, and f, a repeat of b's range (it keeps
  // its own Slice).
  Model m = ParseIr(R"(
    model ir_version=0 opsets={"": 23}
    graph main(%x: f32[6,B])
        -> (%na: f32[2,B], %b: f32[1,B], %nc: f32[2,B], %nd: f32[6,1],
            %ne: f32[3,B], %nf: f32[1,B]) {
      init %a_starts: i64[2] = i64[2]{0, 0}
      init %a_ends: i64[2] = i64[2]{2, 9223372036854775807}
      init %a_axes: i64[2] = i64[2]{0, 1}
      init %b_starts: i64[1] = i64[1]{2}
      init %b_ends: i64[1] = i64[1]{3}
      init %b_axes: i64[1] = i64[1]{0}
      init %c_starts: i64[1] = i64[1]{-2}
      init %c_ends: i64[1] = i64[1]{9223372036854775807}
      init %c_axes: i64[1] = i64[1]{-2}
      init %d_starts: i64[1] = i64[1]{1}
      init %d_ends: i64[1] = i64[1]{2}
      init %d_axes: i64[1] = i64[1]{1}
      init %e_starts: i64[1] = i64[1]{0}
      init %e_ends: i64[1] = i64[1]{6}
      init %e_axes: i64[1] = i64[1]{0}
      init %e_steps: i64[1] = i64[1]{2}
      init %f_starts: i64[1] = i64[1]{2}
      init %f_ends: i64[1] = i64[1]{3}
      init %f_axes: i64[1] = i64[1]{0}
      %a: f32[2,B] = Slice(%x, %a_starts, %a_ends, %a_axes)
      %b: f32[1,B] = Slice(%x, %b_starts, %b_ends, %b_axes)
      %c: f32[2,B] = Slice(%x, %c_starts, %c_ends, %c_axes)
      %d: f32[6,1] = Slice(%x, %d_starts, %d_ends, %d_axes)
      %e: f32[3,B] = Slice(%x, %e_starts, %e_ends, %e_axes, %e_steps)
      %f: f32[1,B] = Slice(%x, %f_starts, %f_ends, %f_axes)
      %na: f32[2,B] = Neg(%a)
      %nc: f32[2,B] = Neg(%c)
      %nd: f32[6,1] = Neg(%d)
      %ne: f32[3,B] = Neg(%e)
      %nf: f32[1,B] = Neg(%f)
    })");
  EXPECT_TRUE(RunPass("slices-to-split", m));
  EXPECT_EQ(
      PrintGraph(m.graph()),
      "graph main(%x: f32[6,B]) -> (%na: f32[2,B], %b: f32[1,B], %nc: "
      "f32[2,B], %nd: f32[6,1], %ne: f32[3,B], %nf: f32[1,B]) {\n"
      "  init %d_axes: i64[1] = i64[1]{1}\n"
      "  init %d_ends: i64[1] = i64[1]{2}\n"
      "  init %d_starts: i64[1] = i64[1]{1}\n"
      "  init %e_axes: i64[1] = i64[1]{0}\n"
      "  init %e_ends: i64[1] = i64[1]{6}\n"
      "  init %e_starts: i64[1] = i64[1]{0}\n"
      "  init %e_steps: i64[1] = i64[1]{2}\n"
      "  init %f_axes: i64[1] = i64[1]{0}\n"
      "  init %f_ends: i64[1] = i64[1]{3}\n"
      "  init %f_starts: i64[1] = i64[1]{2}\n"
      "  init %split_sizes: i64[4] = i64[4]{2, 1, 1, 2}\n"
      "  %a: f32[2,B], %b: f32[1,B], %split_gap: f32[1,B], %c: f32[2,B] = "
      "Split(%x, %split_sizes) {axis=0}  # Split\n"
      "  %d: f32[6,1] = Slice(%x, %d_starts, %d_ends, %d_axes)\n"
      "  %e: f32[3,B] = Slice(%x, %e_starts, %e_ends, %e_axes, %e_steps)\n"
      "  %f: f32[1,B] = Slice(%x, %f_starts, %f_ends, %f_axes)\n"
      "  %na: f32[2,B] = Neg(%a)\n"
      "  %nc: f32[2,B] = Neg(%c)\n"
      "  %nd: f32[6,1] = Neg(%d)\n"
      "  %ne: f32[3,B] = Neg(%e)\n"
      "  %nf: f32[1,B] = Neg(%f)\n"
      "}\n");
}

TEST(SlicesToSplitTest, RefusesOverlapsAndSparseCoverage) {
  // Overlapping ranges [0,3) and [2,4) of x; two single elements of y
  // (2 of 8 elements: a Split would copy four times what they read).
  Model m = ParseIr(R"(
    model ir_version=0 opsets={"": 23}
    graph main(%x: f32[8], %y: f32[8])
        -> (%a: f32[3], %b: f32[2], %c: f32[1], %d: f32[1]) {
      init %a_starts: i64[1] = i64[1]{0}
      init %a_ends: i64[1] = i64[1]{3}
      init %a_axes: i64[1] = i64[1]{0}
      init %b_starts: i64[1] = i64[1]{2}
      init %b_ends: i64[1] = i64[1]{4}
      init %b_axes: i64[1] = i64[1]{0}
      init %c_starts: i64[1] = i64[1]{0}
      init %c_ends: i64[1] = i64[1]{1}
      init %c_axes: i64[1] = i64[1]{0}
      init %d_starts: i64[1] = i64[1]{5}
      init %d_ends: i64[1] = i64[1]{6}
      init %d_axes: i64[1] = i64[1]{0}
      %a: f32[3] = Slice(%x, %a_starts, %a_ends, %a_axes)
      %b: f32[2] = Slice(%x, %b_starts, %b_ends, %b_axes)
      %c: f32[1] = Slice(%y, %c_starts, %c_ends, %c_axes)
      %d: f32[1] = Slice(%y, %d_starts, %d_ends, %d_axes)
    })");
  EXPECT_FALSE(RunPass("slices-to-split", m));
}

// 100 one-element slices of x: f32[100] -> one Split into 10 groups of 10
// (ceil(sqrt(100))), each split into its 10 pieces; piece i is still
// element i (each slice's output keeps its name and now comes from a Split).
TEST(SlicesToSplitTest, HundredPiecesSplitInTwoLevels) {
  Model m;
  m.SetOpsetVersion("", 23);
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({100}));
  for (int i = 0; i < 100; ++i) {
    const std::string n = "s" + std::to_string(i);
    Value* slice = Op(g, "Slice",
                      {x, I64(g, n + "_starts", {i}),
                       I64(g, n + "_ends", {i + 1}), I64(g, n + "_axes", {0})},
                      n, F32({1}))
                       ->output(0);
    g.AddOutput(slice);
  }
  EXPECT_TRUE(RunPass("slices-to-split", m));
  int splits = 0, max_outputs = 0;
  for (Node* n : g.nodes()) {
    EXPECT_EQ(n->op_type(), "Split");
    ++splits;
    max_outputs = std::max(max_outputs, n->num_outputs());
  }
  EXPECT_EQ(splits, 11);
  EXPECT_EQ(max_outputs, 10);
  ASSERT_EQ(g.outputs().size(), 100u);
  for (int i = 0; i < 100; ++i) {
    const Value* out = g.outputs()[i];
    EXPECT_EQ(out->name(), "s" + std::to_string(i));
    // Element i: output i % 10 of the inner Split fed by outer output i / 10.
    ASSERT_NE(out->producer(), nullptr);
    EXPECT_EQ(out->output_index(), i % 10);
    const Value* group = out->producer()->input(0);
    ASSERT_NE(group->producer(), nullptr);
    EXPECT_EQ(group->output_index(), i / 10);
    EXPECT_EQ(group->producer()->input(0), x);
  }
}

}  // namespace
}  // namespace jax2onnx::ir
