// The type-propagation pass (ir/passes/type_propagation.cc) on small hand-built
// graphs: the graph after is compared as printed text written by hand (values
// derived in comments) and each test also pins what the pass refuses
// (tests/ir/pass_test_util.h: verifier around the pass, cleanup after, ONNX
// Runtime accepts the model before and after).
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::A;
using pass_test::F32;
using pass_test::I64;
using pass_test::Init;
using pass_test::Op;
using pass_test::RunPass;
using pass_test::T;
using pass_test::TP;

TEST(TypePropagationTest, TypesUntypedOutputsFromTheInputTypes) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"B", 3}));
  Value* y = g.AddInput("y", F32({3}));
  Value* z = g.AddInput("z", F32({"C", 3}));
  auto untyped = [&](absl::string_view op, std::vector<Value*> ins,
                     std::string out, std::vector<Attr> attrs = {}) {
    return g.Append(
        Node::Create("", op, ins, {std::move(out)}, std::move(attrs)));
  };
  Node* add = untyped("Add", {x, y}, "add");
  Node* less = untyped("Less", {add->output(0), y}, "less");
  Node* cast =
      untyped("Cast", {add->output(0)}, "cast", A(Attr::Int("to", TP::DOUBLE)));
  Node* t = untyped("Transpose", {cast->output(0)}, "t",
                    A(Attr::Ints("perm", {1, 0})));
  Node* shape = untyped("Shape", {t->output(0)}, "shape");
  // B and C are different symbols: their broadcast is not decidable.
  Node* mixed = untyped("Add", {x, z}, "mixed");
  // Graph outputs must be typed: typed Identities read the values.
  g.AddOutput(Op(g, "Identity", {less->output(0)}, "o1", T(TP::BOOL, {"B", 3}))
                  ->output(0));
  g.AddOutput(Op(g, "Identity", {shape->output(0)}, "o2", T(TP::INT64, {2}))
                  ->output(0));
  g.AddOutput(
      Op(g, "Identity", {mixed->output(0)}, "o3", F32({Dim::Unknown(), 3}))
          ->output(0));
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(add->output(0)->type()->ToString(), "f32[B,3]");
  EXPECT_EQ(less->output(0)->type()->ToString(), "bool[B,3]");
  EXPECT_EQ(cast->output(0)->type()->ToString(), "f64[B,3]");
  EXPECT_EQ(t->output(0)->type()->ToString(), "f64[3,B]");
  EXPECT_EQ(shape->output(0)->type()->ToString(), "i64[2]");
  EXPECT_EQ(mixed->output(0)->type(), nullptr);
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, CompletesConvMatMulAndReshapeShapes) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"N", 3, 32, 31}));
  Value* w = g.AddInput("w", F32({8, 3, 3, 3}));
  Value* v = g.AddInput("v", F32({4}));
  Value* a = g.AddInput("a", F32({"N", 5, 6}));
  Value* b = g.AddInput("b", F32({6, 4}));
  Value* target = I64(g, "target", {0, -1, 2});
  // Conv with a dtype-only type (what the conv lowering leaves): spatial
  // sizes floor((32 + 0 + 1 - 2*(3-1) - 1) / 2) + 1 = 15 and
  // floor((31 + 1 + 1 - 2*(3-1) - 1) / 2) + 1 = 15; channels = w's 8.
  std::vector<Attr> conv_attrs;
  conv_attrs.push_back(Attr::Ints("pads", {0, 1, 1, 1}));
  conv_attrs.push_back(Attr::Ints("strides", {2, 2}));
  conv_attrs.push_back(Attr::Ints("dilations", {2, 2}));
  Node* conv = Op(g, "Conv", {x, w}, "conv", Type::Tensor(TP::FLOAT),
                  std::move(conv_attrs));
  // VALID and an unknown-size axis: 32 - 3 + 1 = 30 and ?.
  Node* valid = g.Append(Node::Create(
      "", "Conv", {conv->output(0), g.AddInput("w2", F32({4, 8, 3, 3}))},
      {"valid"}, A(Attr::String("auto_pad", "VALID"))));
  // MatMul: [N,5,6] @ [6,4] -> [N,5,4]; [6,4] @ [4] (1-D rhs: its axis is
  // dropped) -> [6].
  Node* mm = g.Append(Node::Create("", "MatMul", {a, b}, {"mm"}));
  Node* vec = g.Append(Node::Create("", "MatMul", {b, v}, {"vec"}));
  // Reshape [N,5,4] by {0, -1, 2}: N copied, -1 not computable under a
  // symbol -> no type; of the static [6,4] by {0, -1, 2}: [6, 2, 2].
  Node* r_sym =
      g.Append(Node::Create("", "Reshape", {mm->output(0), target}, {"rs"}));
  Node* r_static = g.Append(Node::Create("", "Reshape", {b, target}, {"rt"}));
  // A type that disagrees with the rule (dim 2 says 9): left as it is.
  Node* wrong =
      Op(g, "Relu", {mm->output(0)}, "wrong", F32({"N", Dim::Unknown(), 9}));
  for (Node* n : {conv, valid, vec, r_sym, r_static, wrong}) {
    g.AddOutput(Op(g, "Identity", {n->output(0)}, n->output(0)->name() + "_out",
                   Type::Tensor(TP::FLOAT))
                    ->output(0));
  }
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(conv->output(0)->type()->ToString(), "f32[N,8,15,15]");
  EXPECT_EQ(valid->output(0)->type()->ToString(), "f32[N,4,13,13]");
  EXPECT_EQ(mm->output(0)->type()->ToString(), "f32[N,5,4]");
  EXPECT_EQ(vec->output(0)->type()->ToString(), "f32[6]");
  EXPECT_EQ(r_sym->output(0)->type(), nullptr);
  EXPECT_EQ(r_static->output(0)->type()->ToString(), "f32[6,2,2]");
  EXPECT_EQ(wrong->output(0)->type()->ToString(), "f32[N,?,9]");
  EXPECT_FALSE(RunPass("type-propagation", m));
}

// The rules below follow the ONNX operators' shape inference; each expected
// type is derived by hand in the comment above its node.
Node* Untyped(Graph& g, absl::string_view op, std::vector<Value*> ins,
              std::string out, std::vector<Attr> attrs = {}) {
  return g.Append(
      Node::Create("", op, ins, {std::move(out)}, std::move(attrs)));
}

// Graph outputs must be typed: a dtype-only Identity reads each value.
void ReadByOutputs(Graph& g, const std::vector<Node*>& nodes, int dtype) {
  for (Node* n : nodes) {
    g.AddOutput(Op(g, "Identity", {n->output(0)}, n->output(0)->name() + "_out",
                   Type::Tensor(dtype))
                    ->output(0));
  }
}

TEST(TypePropagationTest, GatherInsertsTheIndicesShapeAtItsAxis) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* data = g.AddInput("data", F32({"B", 5, 7}));
  Value* idx = g.AddInput("idx", T(TP::INT64, {2, 3}));
  Value* one = g.AddInput("one", T(TP::INT64, Shape()));
  Value* y = g.AddInput("y", F32({"C", 5, 7}));
  // axis 1: [B] + [2,3] + [7].
  Node* mid = Untyped(g, "Gather", {data, idx}, "mid", A(Attr::Int("axis", 1)));
  // axis -1 (2) with scalar indices: [B,5] + [] + [].
  Node* last =
      Untyped(g, "Gather", {data, one}, "last", A(Attr::Int("axis", -1)));
  // Default axis 0: [2,3] + [5,7].
  Node* first = Untyped(g, "Gather", {data, idx}, "first");
  // Data of unknown type (B vs C does not broadcast statically): refused.
  Node* mixed = Untyped(g, "Add", {data, y}, "mixed");
  Node* blind = Untyped(g, "Gather", {mixed->output(0), idx}, "blind");
  ReadByOutputs(g, {mid, last, first, blind}, TP::FLOAT);
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(mid->output(0)->type()->ToString(), "f32[B,2,3,7]");
  EXPECT_EQ(last->output(0)->type()->ToString(), "f32[B,5]");
  EXPECT_EQ(first->output(0)->type()->ToString(), "f32[2,3,5,7]");
  EXPECT_EQ(blind->output(0)->type(), nullptr);
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, UnsqueezeInsertsOnesAtTheOutputAxes) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"B", 3}));
  Value* run_time_axes = g.AddInput("axes", T(TP::INT64, {1}));
  // Output rank 2 + 2 = 4; axes {0, -1} are {0, 3}: [1, B, 3, 1].
  Node* both = Untyped(g, "Unsqueeze", {x, I64(g, "ends", {0, -1})}, "both");
  // Output rank 3; axis 1: [B, 1, 3].
  Node* inner = Untyped(g, "Unsqueeze", {x, I64(g, "one", {1})}, "inner");
  // Axes known only at run time: refused.
  Node* blind = Untyped(g, "Unsqueeze", {x, run_time_axes}, "blind");
  ReadByOutputs(g, {both, inner, blind}, TP::FLOAT);
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(both->output(0)->type()->ToString(), "f32[1,B,3,1]");
  EXPECT_EQ(inner->output(0)->type()->ToString(), "f32[B,1,3]");
  EXPECT_EQ(blind->output(0)->type(), nullptr);
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, ConcatSumsTheAxisAndMergesTheOtherDims) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* a = g.AddInput("a", F32({2, "B"}));
  Value* b = g.AddInput("b", F32({3, "B"}));
  Value* e = g.AddInput("e", F32({0, "B"}));
  Value* c = g.AddInput("c", F32({2, 4}));
  Value* s = g.AddInput("s", F32({"S", 4}));
  // axis 0: 2 + 3 + 0 = 5; dim 1 is B in all.
  Node* rows = Untyped(g, "Concat", {a, b, e}, "rows", A(Attr::Int("axis", 0)));
  // axis -1 (1): B + 4 is not static, so unknown; dim 0 is 2.
  Node* cols = Untyped(g, "Concat", {a, c}, "cols", A(Attr::Int("axis", -1)));
  // axis 1: 4 + 4 = 8; dim 0 merges S and 2: the static 2 (ONNX's merge;
  // the operands must agree at run time).
  Node* merged =
      Untyped(g, "Concat", {s, c}, "merged", A(Attr::Int("axis", 1)));
  // An operand of unknown type: refused.
  Node* mixed = Untyped(g, "Add", {a, g.AddInput("z", F32({2, "C"}))}, "mixed");
  Node* blind = Untyped(g, "Concat", {a, mixed->output(0)}, "blind",
                        A(Attr::Int("axis", 0)));
  ReadByOutputs(g, {rows, cols, merged, blind}, TP::FLOAT);
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(rows->output(0)->type()->ToString(), "f32[5,B]");
  EXPECT_EQ(cols->output(0)->type()->ToString(), "f32[2,?]");
  EXPECT_EQ(merged->output(0)->type()->ToString(), "f32[2,8]");
  EXPECT_EQ(blind->output(0)->type(), nullptr);
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, RangeLengthFromConstantIntOperands) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  auto i64 = [&](const std::string& name, int64_t v) {
    return Init(g, name, Tensor::FromVector<int64_t>(TP::INT64, {}, {v}));
  };
  auto i32 = [&](const std::string& name, int32_t v) {
    return Init(g, name, Tensor::FromVector<int32_t>(TP::INT32, {}, {v}));
  };
  // 2, 5, 8: ceil((11 - 2) / 3) = 3.
  Node* up =
      Untyped(g, "Range", {i64("s1", 2), i64("l1", 11), i64("d1", 3)}, "up");
  // 10, 6, 2: ceil((1 - 10) / -4) = ceil(2.25) = 3.
  Node* down =
      Untyped(g, "Range", {i64("s2", 10), i64("l2", 1), i64("d2", -4)}, "down");
  // Limit below start with a positive delta: max(ceil(-4 / 2), 0) = 0.
  Node* empty =
      Untyped(g, "Range", {i64("s3", 5), i64("l3", 1), i64("d3", 2)}, "empty");
  // int32: 0, 2, 4, 6: ceil(7 / 2) = 4, of start's dtype.
  Node* narrow =
      Untyped(g, "Range", {i32("s4", 0), i32("l4", 7), i32("d4", 2)}, "narrow");
  // Float operands: 1-D f32 whose length is left unknown (the rule computes
  // it from int operands only).
  auto f32 = [&](const std::string& name, float v) {
    return Init(g, name, Tensor::FromVector<float>(TP::FLOAT, {}, {v}));
  };
  Node* floats = Untyped(
      g, "Range", {f32("fs", 0), f32("fl", 1), f32("fd", 0.25f)}, "floats");
  ReadByOutputs(g, {up, down, empty}, TP::INT64);
  ReadByOutputs(g, {narrow}, TP::INT32);
  ReadByOutputs(g, {floats}, TP::FLOAT);
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(up->output(0)->type()->ToString(), "i64[3]");
  EXPECT_EQ(down->output(0)->type()->ToString(), "i64[3]");
  EXPECT_EQ(empty->output(0)->type()->ToString(), "i64[0]");
  EXPECT_EQ(narrow->output(0)->type()->ToString(), "i32[4]");
  EXPECT_EQ(floats->output(0)->type()->ToString(), "f32[?]");
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, SliceClampsStartsAndEndsPerAxis) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({10, "B", 6}));
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  // axis 0, [1, -1) = [1, 9): 8.
  Node* inner = Untyped(
      g, "Slice", {x, I64(g, "s1", {1}), I64(g, "e1", {-1}), I64(g, "a1", {0})},
      "inner");
  // axis 2 backwards by 2: start -1 -> 5, end INT64_MIN -> clamped to -1;
  // ceil((-1 - 5) / -2) = 3 (elements 5, 3, 1).
  Node* back = Untyped(g, "Slice",
                       {x, I64(g, "s2", {-1}), I64(g, "e2", {kMin}),
                        I64(g, "a2", {2}), I64(g, "st2", {-2})},
                       "back");
  // No axes: starts/ends cover axes 0, 1. Axis 0: start 20 and end 30
  // clamp to 10: 0. Axis 1 is symbolic: unknown.
  Node* clamped = Untyped(
      g, "Slice", {x, I64(g, "s3", {20, 0}), I64(g, "e3", {30, 2})}, "clamped");
  // axis -1 (2) by 3 from 0 to INT64_MAX (clamped to 6): ceil(6 / 3) = 2.
  Node* strided = Untyped(g, "Slice",
                          {x, I64(g, "s4", {0}), I64(g, "e4", {kMax}),
                           I64(g, "a4", {-1}), I64(g, "st4", {3})},
                          "strided");
  // Starts known only at run time: refused.
  Node* blind = Untyped(g, "Slice",
                        {x, g.AddInput("rs", T(TP::INT64, {1})),
                         I64(g, "e5", {2}), I64(g, "a5", {0})},
                        "blind");
  ReadByOutputs(g, {inner, back, clamped, strided, blind}, TP::FLOAT);
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(inner->output(0)->type()->ToString(), "f32[8,B,6]");
  EXPECT_EQ(back->output(0)->type()->ToString(), "f32[10,B,3]");
  EXPECT_EQ(clamped->output(0)->type()->ToString(), "f32[0,?,6]");
  EXPECT_EQ(strided->output(0)->type()->ToString(), "f32[10,B,2]");
  EXPECT_EQ(blind->output(0)->type(), nullptr);
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, BitShiftBroadcastsLikeTheOtherBinaryOps) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", T(TP::UINT32, {"B", 4}));
  Value* k = g.AddInput("k", T(TP::UINT32, {4}));
  // [B,4] and [4] broadcast to [B,4]; the dtype is x's.
  Node* shl = Untyped(g, "BitShift", {x, k}, "shl",
                      A(Attr::String("direction", "LEFT")));
  ReadByOutputs(g, {shl}, TP::UINT32);
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(shl->output(0)->type()->ToString(), "u32[B,4]");
  EXPECT_FALSE(RunPass("type-propagation", m));
}

}  // namespace
}  // namespace jax2onnx::ir
