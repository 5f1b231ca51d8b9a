// The type-propagation pass (ir/passes/type_propagation.cc) on small hand-built
// graphs: the graph after is compared as printed text written by hand (values
// derived in comments) and each test also pins what the pass refuses
// (tests/ir/pass_test_util.h: verifier around the pass, cleanup after, ONNX
// Runtime accepts the model before and after).
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

}  // namespace
}  // namespace jax2onnx::ir
