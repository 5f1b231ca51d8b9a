// The shape-folding pass (ir/passes/shape_folding.cc) on small graphs stated
// as IR text: the graph after is compared as printed text written by hand
// (the folded values are the dims of the input types, read off the test) and
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

using pass_test::ParseIr;
using pass_test::RunPass;

// Reshape(y, Shape(x)) with x: f32[2,3]: the Shape becomes the constant
// [2, 3] under the Shape output's name; Shape(x, start=-1) selects [3].
// (The printer lists initializers by name.)
TEST(ShapeFoldingTest, ShapeOfAStaticValueBecomesAConstant) {
  Model m = ParseIr(R"(
    model ir_version=0 opsets={"": 23}
    graph main(%x: f32[2,3], %y: f32[6], %z: f32[1])
        -> (%r: f32[2,3], %e: f32[3]) {
      %s: i64[2] = Shape(%x)
      %r: f32[2,3] = Reshape(%y, %s)
      %last: i64[1] = Shape(%x) {start=-1}
      %e: f32[3] = Expand(%z, %last)
    })");
  EXPECT_TRUE(RunPass("shape-folding", m));
  EXPECT_EQ(PrintGraph(m.graph()),
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
  Model m = ParseIr(R"(
    model ir_version=0 opsets={"": 23}
    graph main(%x: f32[2,3], %y: f32[4]) -> (%r: f32[4]) {
      init %four: i64[1] = i64[1]{4}
      %batch: i64[0] = Shape(%x) {end=0}
      %shape: i64[1] = Concat(%batch, %four) {axis=0}
      %r: f32[4] = Reshape(%y, %shape)
    })");
  EXPECT_TRUE(RunPass("shape-folding", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%x: f32[2,3], %y: f32[4]) -> (%r: f32[4]) {\n"
            "  init %four: i64[1] = i64[1]{4}\n"
            "  %r: f32[4] = Reshape(%y, %four)\n"
            "}\n");
}

// Not folded: a symbolic dim in the selected range, a Shape that is a graph
// output (the interface), and a Concat whose operands are all empty.
TEST(ShapeFoldingTest, RefusesSymbolicDimsGraphOutputsAndAllEmptyConcats) {
  Model m = ParseIr(R"(
    model ir_version=0 opsets={"": 23}
    graph main(%x: f32[B,3], %y: f32[6])
        -> (%s: i64[2], %out_shape: i64[1], %empty: i64[0]) {
      %s: i64[2] = Shape(%x)
      %out_shape: i64[1] = Shape(%y)
      %e0: i64[0] = Shape(%x) {end=0}
      %e1: i64[0] = Shape(%y) {end=0}
      %empty: i64[0] = Concat(%e0, %e1) {axis=0}
    })");
  // e0 and e1 fold to empty constants; the Concat of two empty operands
  // keeps both (nothing would be left).
  EXPECT_TRUE(RunPass("shape-folding", m));
  EXPECT_EQ(PrintGraph(m.graph()),
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
