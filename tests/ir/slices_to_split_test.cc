// The slices-to-split pass (ir/passes/slices_to_split.cc) on small hand-built
// graphs: the graph after is compared as printed text written by hand (values
// derived in comments) and each test also pins what the pass refuses
// (tests/ir/pass_test_util.h: verifier around the pass, cleanup after, ONNX
// Runtime accepts the model before and after).
#include <algorithm>
#include <limits>
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

Value* Slice(Graph& g, Value* x, const std::string& name,
             std::vector<int64_t> starts, std::vector<int64_t> ends,
             std::vector<int64_t> axes, Shape shape,
             std::vector<int64_t> steps = {}) {
  std::vector<Value*> ins = {x, I64(g, name + "_starts", starts),
                             I64(g, name + "_ends", ends),
                             I64(g, name + "_axes", axes)};
  if (!steps.empty()) ins.push_back(I64(g, name + "_steps", steps));
  return Op(g, "Slice", ins, name, F32(shape))->output(0);
}

TEST(SlicesToSplitTest, StaticSlicesAlongOneAxisBecomeOneSplit) {
  Model m;
  m.SetOpsetVersion("", 23);
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({6, "B"}));
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // Rows [0,2), [2,3) and [-2, end) = [4,6) of the 6: five of six rows in
  // three disjoint ranges, so one Split into [2, 1, 1, 2] whose third
  // output (the gap, row 3) nobody reads. Axis 1 is symbolic and taken
  // whole by `a` (start 0, end INT64_MAX).
  Value* a = Slice(g, x, "a", {0, 0}, {2, kMax}, {0, 1}, {2, "B"});
  Value* b = Slice(g, x, "b", {2}, {3}, {0}, {1, "B"});
  Value* c = Slice(g, x, "c", {-2}, {kMax}, {-2}, {2, "B"});
  // Refused: the only slice of its group (columns of x), a stride of 2,
  // and a repeat of b's range (it keeps its own Slice).
  Value* d = Slice(g, x, "d", {1}, {2}, {1}, {6, 1});
  Value* e = Slice(g, x, "e", {0}, {6}, {0}, {3, "B"}, {2});
  Value* f = Slice(g, x, "f", {2}, {3}, {0}, {1, "B"});
  g.AddOutput(Op(g, "Neg", {a}, "na", F32({2, "B"}))->output(0));
  g.AddOutput(b);  // a graph output keeps its name
  g.AddOutput(Op(g, "Neg", {c}, "nc", F32({2, "B"}))->output(0));
  g.AddOutput(Op(g, "Neg", {d}, "nd", F32({6, 1}))->output(0));
  g.AddOutput(Op(g, "Neg", {e}, "ne", F32({3, "B"}))->output(0));
  g.AddOutput(Op(g, "Neg", {f}, "nf", F32({1, "B"}))->output(0));
  EXPECT_TRUE(RunPass("slices-to-split", m));
  EXPECT_EQ(
      PrintGraph(g),
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
  Model m;
  m.SetOpsetVersion("", 23);
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({8}));
  Value* y = g.AddInput("y", F32({8}));
  // Overlapping ranges [0,3) and [2,4) of x; two single elements of y
  // (2 of 8 elements: a Split would copy four times what they read).
  Value* a = Slice(g, x, "a", {0}, {3}, {0}, {3});
  Value* b = Slice(g, x, "b", {2}, {4}, {0}, {2});
  Value* c = Slice(g, y, "c", {0}, {1}, {0}, {1});
  Value* d = Slice(g, y, "d", {5}, {6}, {0}, {1});
  for (Value* v : {a, b, c, d}) g.AddOutput(v);
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
