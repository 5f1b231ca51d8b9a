// The transpose-folding pass (ir/passes/transpose_folding.cc) on small
// graphs stated as IR text: the graph after is compared as printed text
// written by hand (values derived in comments) and each test also pins what
// the pass refuses (tests/ir/pass_test_util.h: verifier around the pass,
// cleanup after, ONNX Runtime accepts the model before and after).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::ParseIr;
using pass_test::RunPass;

TEST(TransposeFoldingTest, CancelsAndMergesPairs) {
  // t2's perm [2, 0, 1] undoes t1's [1, 2, 0]. t3's [1, 0, 2] after
  // [1, 2, 0]: x axes (inner[1], inner[0], inner[2]) = (2, 1, 0).
  Model m = ParseIr(R"(
    graph main(%x: f32[2,3,4]) -> (%y: f32[2,3,4], %z: f32[4,3,2]) {
      %t1: f32[3,4,2] = Transpose(%x) {perm=[1, 2, 0]}
      %t2: f32[2,3,4] = Transpose(%t1) {perm=[2, 0, 1]}
      %t3: f32[4,3,2] = Transpose(%t1) {perm=[1, 0, 2]}
      %y: f32[2,3,4] = Relu(%t2)
      %z: f32[4,3,2] = Neg(%t3)
    })");
  EXPECT_TRUE(RunPass("transpose-folding", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%x: f32[2,3,4]) -> (%y: f32[2,3,4], %z: f32[4,3,2]) "
            "{\n"
            "  %t3: f32[4,3,2] = Transpose(%x) {perm=[2, 1, 0]}\n"
            "  %y: f32[2,3,4] = Relu(%x)\n"
            "  %z: f32[4,3,2] = Neg(%t3)\n"
            "}\n");
}

TEST(TransposeFoldingTest, MovesThroughUnaryElementwiseToCancel) {
  Model m = ParseIr(R"(
    graph main(%x: f32[2,3]) -> (%y: f64[2,3]) {
      %t1: f32[3,2] = Transpose(%x) {perm=[1, 0]}
      %c: f64[3,2] = Cast(%t1) {to=11}
      %t2: f64[2,3] = Transpose(%c) {perm=[1, 0]}
      %y: f64[2,3] = Neg(%t2)
    })");
  PassManagerOptions options;
  options.verify_each_pass = true;
  PassManager manager(options);
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(CreateTransposeFoldingPass());
  passes.push_back(CreateDeadNodeEliminationPass());
  manager.AddFixpoint("fold", std::move(passes));
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  ASSERT_TRUE(manager.Run(m).ok());
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%x: f32[2,3]) -> (%y: f64[2,3]) {\n"
            "  %c: f64[2,3] = Cast(%x) {to=11}\n"
            "  %y: f64[2,3] = Neg(%c)\n"
            "}\n");
}

TEST(TransposeFoldingTest, KeepsTheGraphOutputValueOfACancelledPair) {
  Model m = ParseIr(R"(
    graph main(%x: f32[2,3]) -> (%y: f32[2,3]) {
      %r: f32[2,3] = Relu(%x)
      %t1: f32[3,2] = Transpose(%r) {perm=[1, 0]}
      %y: f32[2,3] = Transpose(%t1) {perm=[1, 0]}
    })");
  EXPECT_TRUE(RunPass("transpose-folding", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%x: f32[2,3]) -> (%y: f32[2,3]) {\n"
            "  %r: f32[2,3] = Relu(%x)\n"
            "  %y: f32[2,3] = Identity(%r)  # Identity\n"
            "}\n");
  EXPECT_TRUE(RunPass("identity-elimination", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%x: f32[2,3]) -> (%y: f32[2,3]) {\n"
            "  %y: f32[2,3] = Relu(%x)\n"
            "}\n");
}

TEST(TransposeFoldingTest, FoldsRank2TransposeIntoGemmOnlyForF32) {
  Model m = ParseIr(R"(
    graph main(%a: f32[2,3], %b: f32[4,3], %da: f64[2,3], %db: f64[4,3])
        -> (%y: f32[2,4], %z: f64[2,4]) {
      %bt: f32[3,4] = Transpose(%b) {perm=[1, 0]}
      %y: f32[2,4] = MatMul(%a, %bt)  # eqn0/dot_general/MatMul
      %dbt: f64[3,4] = Transpose(%db) {perm=[1, 0]}
      %z: f64[2,4] = MatMul(%da, %dbt)
    })");
  EXPECT_TRUE(RunPass("transpose-folding", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%a: f32[2,3], %b: f32[4,3], %da: f64[2,3], %db: "
            "f64[4,3]) -> (%y: f32[2,4], %z: f64[2,4]) {\n"
            "  %y: f32[2,4] = Gemm(%a, %b) {transB=1}  # "
            "eqn0/dot_general/Gemm\n"
            "  %dbt: f64[3,4] = Transpose(%db) {perm=[1, 0]}\n"
            "  %z: f64[2,4] = MatMul(%da, %dbt)\n"
            "}\n");
}

TEST(TransposeFoldingTest, MovesThroughBiasAndReluChainsToCancel) {
  // Conv output (NCHW) -> NHWC -> + bias [8] -> max 0 -> NCHW, as a
  // channels-last Conv's bias and relu sit between layout Transposes. The
  // same chain from x2 with an intermediate used twice (uadd) stays.
  Model m = ParseIr(R"(
    graph main(%x: f32[2,8,4,4], %x2: f32[2,8,4,4])
        -> (%y: f32[2,8,4,4], %z: f32[2,8,4,4], %uadd: f32[2,4,4,8]) {
      init %bias: f32[8] = f32[8]{1, 2, 3, 4, 5, 6, 7, 8}
      init %zero: f32[] = f32[]{0}
      %t1: f32[2,4,4,8] = Transpose(%x) {perm=[0, 2, 3, 1]}
      %add: f32[2,4,4,8] = Add(%t1, %bias)
      %relu: f32[2,4,4,8] = Max(%add, %zero)
      %t2: f32[2,8,4,4] = Transpose(%relu) {perm=[0, 3, 1, 2]}
      %y: f32[2,8,4,4] = Neg(%t2)
      %u1: f32[2,4,4,8] = Transpose(%x2) {perm=[0, 2, 3, 1]}
      %uadd: f32[2,4,4,8] = Add(%u1, %bias)
      %u2: f32[2,8,4,4] = Transpose(%uadd) {perm=[0, 3, 1, 2]}
      %z: f32[2,8,4,4] = Neg(%u2)
    })");
  EXPECT_TRUE(RunPass("transpose-folding", m));
  // The bias goes to rank 4 as [1,1,1,8] and is permuted to [1,8,1,1]; the
  // scalar zero needs nothing; the merged perm [0,2,3,1] o [0,3,1,2] is the
  // identity (removed by the next run).
  EXPECT_EQ(
      PrintGraph(m.graph()),
      "graph main(%x: f32[2,8,4,4], %x2: f32[2,8,4,4]) -> (%y: f32[2,8,4,4], "
      "%z: f32[2,8,4,4], %uadd: f32[2,4,4,8]) {\n"
      "  init %bias: f32[8] = f32[8]{1, 2, 3, 4, 5, 6, 7, 8}\n"
      "  init %shape: i64[4] = i64[4]{1, 1, 1, 8}\n"
      "  init %zero: f32[] = f32[]{0}\n"
      "  %t1: f32[2,8,4,4] = Transpose(%x) {perm=[0, 1, 2, 3]}\n"
      "  %Reshape: f32[1,1,1,8] = Reshape(%bias, %shape)  # Reshape\n"
      "  %Transpose: f32[1,8,1,1] = Transpose(%Reshape) {perm=[0, 3, 1, 2]}  "
      "# Transpose\n"
      "  %add: f32[2,8,4,4] = Add(%t1, %Transpose)\n"
      "  %relu: f32[2,8,4,4] = Max(%add, %zero)\n"
      "  %y: f32[2,8,4,4] = Neg(%relu)\n"
      "  %u1: f32[2,4,4,8] = Transpose(%x2) {perm=[0, 2, 3, 1]}\n"
      "  %uadd: f32[2,4,4,8] = Add(%u1, %bias)\n"
      "  %u2: f32[2,8,4,4] = Transpose(%uadd) {perm=[0, 3, 1, 2]}\n"
      "  %z: f32[2,8,4,4] = Neg(%u2)\n"
      "}\n");
}

TEST(TransposeFoldingTest, AGraphOutputTransposeMovesAsAnIdentity) {
  // An NCHW output adapter after a channels-last bias Add: out =
  // T(Add(T(x), b)); the chain moves and `out` keeps its name.
  Model m = ParseIr(R"(
    graph main(%x: f32[2,3,4,4]) -> (%out: f32[2,3,4,4]) {
      init %bias: f32[3] = f32[3]{1, 2, 3}
      %t1: f32[2,4,4,3] = Transpose(%x) {perm=[0, 2, 3, 1]}
      %add: f32[2,4,4,3] = Add(%t1, %bias)
      %out: f32[2,3,4,4] = Transpose(%add) {perm=[0, 3, 1, 2]}
    })");
  EXPECT_TRUE(RunPass("transpose-folding", m));
  EXPECT_TRUE(RunPass("transpose-folding", m));  // the identity perm
  EXPECT_TRUE(RunPass("identity-elimination", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%x: f32[2,3,4,4]) -> (%out: f32[2,3,4,4]) {\n"
            "  init %bias: f32[3] = f32[3]{1, 2, 3}\n"
            "  init %shape: i64[4] = i64[4]{1, 1, 1, 3}\n"
            "  %Reshape: f32[1,1,1,3] = Reshape(%bias, %shape)  # Reshape\n"
            "  %Transpose: f32[1,3,1,1] = Transpose(%Reshape) {perm=[0, 3, 1, "
            "2]}  # Transpose\n"
            "  %out: f32[2,3,4,4] = Add(%x, %Transpose)\n"
            "}\n");
}

}  // namespace
}  // namespace jax2onnx::ir
