// The shape-folding pass (ir/passes/shape_folding.cc) on small hand-built
// graphs: the graph after is compared as printed text written by hand (the
// folded values are the dims of the input types, read off the test) and
// each test also pins what the pass refuses (tests/ir/pass_test_util.h:
// verifier around the pass, cleanup after, ONNX Runtime accepts the model
// before and after).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
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

// Reshape(y, Shape(x)) with x: f32[2,3]: the Shape becomes the constant
// [2, 3] under the Shape output's name; Shape(x, start=-1) selects [3].
// (The printer lists initializers by name.)
TEST(ShapeFoldingTest, ShapeOfAStaticValueBecomesAConstant) {
  Model m;
  m.SetOpsetVersion("", 23);
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2, 3}));
  Value* y = g.AddInput("y", F32({6}));
  Value* z = g.AddInput("z", F32({1}));
  Value* s = Op(g, "Shape", {x}, "s", T(TP::INT64, Shape({2})))->output(0);
  Value* r = Op(g, "Reshape", {y, s}, "r", F32({2, 3}))->output(0);
  Value* last = Op(g, "Shape", {x}, "last", T(TP::INT64, Shape({1})),
                   A(Attr::Int("start", -1)))
                    ->output(0);
  Value* e = Op(g, "Expand", {z, last}, "e", F32({3}))->output(0);
  g.AddOutput(r);
  g.AddOutput(e);
  EXPECT_TRUE(RunPass("shape-folding", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2,3], %y: f32[6], %z: f32[1]) -> (%r: "
            "f32[2,3], %e: f32[3]) {\n"
            "  init %last: i64[1] = i64[1]{3}\n"
            "  init %s: i64[2] = i64[2]{2, 3}\n"
            "  %r: f32[2,3] = Reshape(%y, %s)\n"
            "  %e: f32[3] = Expand(%z, %last)\n"
            "}\n");
  EXPECT_FALSE(RunPass("shape-folding", m));
}

// Concat(Shape(x, end=0), [4]) along 0: the empty shape piece is dropped and
// the Concat of the one remaining operand of the same type is replaced by
// it.
TEST(ShapeFoldingTest, EmptyConcatOperandsAreDropped) {
  Model m;
  m.SetOpsetVersion("", 23);
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2, 3}));
  Value* y = g.AddInput("y", F32({4}));
  Value* batch = Op(g, "Shape", {x}, "batch", T(TP::INT64, Shape({0})),
                    A(Attr::Int("end", 0)))
                     ->output(0);
  Value* four = I64(g, "four", {4});
  Value* shape = Op(g, "Concat", {batch, four}, "shape",
                    T(TP::INT64, Shape({1})), A(Attr::Int("axis", 0)))
                     ->output(0);
  g.AddOutput(Op(g, "Reshape", {y, shape}, "r", F32({4}))->output(0));
  EXPECT_TRUE(RunPass("shape-folding", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2,3], %y: f32[4]) -> (%r: f32[4]) {\n"
            "  init %four: i64[1] = i64[1]{4}\n"
            "  %r: f32[4] = Reshape(%y, %four)\n"
            "}\n");
}

// Not folded: a symbolic dim in the selected range, a Shape that is a graph
// output (the interface), and a Concat whose operands are all empty.
TEST(ShapeFoldingTest, RefusesSymbolicDimsGraphOutputsAndAllEmptyConcats) {
  Model m;
  m.SetOpsetVersion("", 23);
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"B", 3}));
  Value* y = g.AddInput("y", F32({6}));
  Value* s = Op(g, "Shape", {x}, "s", T(TP::INT64, Shape({2})))->output(0);
  Value* out_shape =
      Op(g, "Shape", {y}, "out_shape", T(TP::INT64, Shape({1})))->output(0);
  Value* e0 = Op(g, "Shape", {x}, "e0", T(TP::INT64, Shape({0})),
                 A(Attr::Int("end", 0)))
                  ->output(0);
  Value* e1 = Op(g, "Shape", {y}, "e1", T(TP::INT64, Shape({0})),
                 A(Attr::Int("end", 0)))
                  ->output(0);
  Value* empty = Op(g, "Concat", {e0, e1}, "empty", T(TP::INT64, Shape({0})),
                    A(Attr::Int("axis", 0)))
                     ->output(0);
  g.AddOutput(s);
  g.AddOutput(out_shape);
  g.AddOutput(empty);
  // e0 and e1 fold to empty constants; the Concat of two empty operands
  // keeps both (nothing would be left).
  EXPECT_TRUE(RunPass("shape-folding", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[B,3], %y: f32[6]) -> (%s: i64[2], "
            "%out_shape: i64[1], %empty: i64[0]) {\n"
            "  init %e0: i64[0] = i64[0]{}\n"
            "  init %e1: i64[0] = i64[0]{}\n"
            "  %s: i64[2] = Shape(%x)\n"
            "  %out_shape: i64[1] = Shape(%y)\n"
            "  %empty: i64[0] = Concat(%e0, %e1) {axis=0}\n"
            "}\n");
  EXPECT_FALSE(RunPass("shape-folding", m));
}

}  // namespace
}  // namespace jax2onnx::ir
