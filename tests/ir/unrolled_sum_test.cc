// The passes that make an unrolled sum over a vector's elements (a Slice,
// Squeeze and Add per element) a model ONNX Runtime loads in linear time:
// slices-to-split (ir/passes/slices_to_split.cc) with its two-level Split
// past 64 pieces, and squeeze-sinking (ir/passes/squeeze_sinking.cc): a
// binary elementwise op of two Squeezes of equal-shaped values becomes the
// op on the unsqueezed values and one Squeeze.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/pass.h"
#include "ir/passes/passes.h"
#include "ir/printer.h"
#include "tests/ir/ir_ort_accepts.h"

namespace jax2onnx::ir {
namespace {

using TP = onnx::TensorProto;

Type F32(Shape s) { return Type::Tensor(TP::FLOAT, s); }

Node* Op(Graph& g, absl::string_view op, std::vector<Value*> ins,
         std::string out, Type type) {
  Node* n = g.Append(Node::Create("", op, ins, {std::move(out)}));
  n->output(0)->SetType(type);
  return n;
}

Value* Axes(Graph& g, const std::string& name, std::vector<int64_t> v) {
  Value* a = *g.AddInitializer(
      name, Tensor::FromVector<int64_t>(TP::INT64,
                                        {static_cast<int64_t>(v.size())}, v));
  a->SetType(Type::Tensor(TP::INT64, Shape({static_cast<int64_t>(v.size())})));
  return a;
}

// Runs `pass` with the verifier, then the cleanup passes; ORT must accept
// the model before and after.
bool RunPass(absl::string_view pass, Model& m) {
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  PassManagerOptions options;
  options.verify_each_pass = true;
  PassManager manager(options);
  CHECK(manager.AddByName(pass).ok()) << pass;
  absl::StatusOr<bool> changed = manager.Run(m);
  CHECK(changed.ok()) << changed.status();
  PassManager cleanup(options);
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(CreateDeadNodeEliminationPass());
  passes.push_back(CreateUnusedInitializerPruningPass());
  cleanup.AddFixpoint("cleanup", std::move(passes));
  CHECK(cleanup.Run(m).ok());
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  return *changed;
}

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
  Value* axes = Axes(g, "axes", {0});
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
  Value* axes0 = Axes(g, "axes0", {0});
  Value* axes1 = Axes(g, "axes1", {1});
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
    Value* slice =
        Op(g, "Slice",
           {x, Axes(g, n + "_starts", {i}), Axes(g, n + "_ends", {i + 1}),
            Axes(g, n + "_axes", {0})},
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
