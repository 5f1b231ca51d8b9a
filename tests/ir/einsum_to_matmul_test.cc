// The einsum-to-matmul pass (ir/passes/einsum_to_matmul.cc) on small graphs
// stated as IR text: the graph after is compared as printed text written by
// hand (values derived in comments) and each test also pins what the pass
// refuses (tests/ir/pass_test_util.h: verifier around the pass, cleanup after,
// ONNX Runtime accepts the model before and after).
#include <cstring>
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

TEST(EinsumToMatMulTest, RewritesDenseAndAttentionEquations) {
  // d: dense with a (out, in) kernel, x @ w^T. s: attention scores q k^T
  // with batch a. r: a letter summed out of one operand only, no MatMul
  // form.
  Model m = ParseIr(R"(
    graph main(%x: f32[2,5,8], %w: f32[4,8], %k: f32[2,7,8])
        -> (%d: f32[2,5,4], %s: f32[2,5,7], %r: f32[2,4]) {
      %d: f32[2,5,4] =
          Einsum(%x, %w) {equation="abc,dc->abd"}  # eqn0/dot_general/Einsum
      %s: f32[2,5,7] = Einsum(%x, %k) {equation="abc,adc->abd"}
      %r: f32[2,4] = Einsum(%x, %w) {equation="abc,dc->ad"}
    })");
  EXPECT_TRUE(RunPass("einsum-to-matmul", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%x: f32[2,5,8], %w: f32[4,8], %k: f32[2,7,8]) -> "
            "(%d: f32[2,5,4], %s: f32[2,5,7], %r: f32[2,4]) {\n"
            "  %Transpose: f32[8,4] = Transpose(%w) {perm=[1, 0]}  # "
            "eqn0/dot_general/Transpose\n"
            "  %d: f32[2,5,4] = MatMul(%x, %Transpose)  # "
            "eqn0/dot_general/MatMul\n"
            "  %Transpose_1: f32[2,8,7] = Transpose(%k) {perm=[0, 2, 1]}  # "
            "Transpose\n"
            "  %s: f32[2,5,7] = MatMul(%x, %Transpose_1)  # MatMul\n"
            "  %r: f32[2,4] = Einsum(%x, %w) {equation=\"abc,dc->ad\"}\n"
            "}\n");
}

TEST(EinsumToMatMulTest, MergesDenseGeneralKernelAxesWithReshapes) {
  // Flax DenseGeneral with a 3-D kernel, symbolic batch B: the q/k/v
  // projection `abc,cde->abde` (two rhs-free letters) and the output
  // projection `abcd,cde->abe` (two contracted letters).
  // wq[c, d, e] = 6c + 3d + e (c < 6, d < 2, e < 3); as [6, 6] row c holds
  // the (d, e) pairs in row-major order: exactly wq's bytes. wo counts
  // 0..23 the same way.
  Model m = ParseIr(R"(
    graph main(%x: f32[B,5,6], %h: f32[B,5,2,3])
        -> (%nq: f32[B,5,2,3], %o: f32[B,5,4]) {
      init %wq: f32[6,2,3] = f32[6,2,3]{
          0, 1, 2, 3, 4, 5,
          6, 7, 8, 9, 10, 11,
          12, 13, 14, 15, 16, 17,
          18, 19, 20, 21, 22, 23,
          24, 25, 26, 27, 28, 29,
          30, 31, 32, 33, 34, 35}
      init %wo: f32[2,3,4] = f32[2,3,4]{
          0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
          12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}
      %q: f32[B,5,2,3] =
          Einsum(%x, %wq) {equation="abc,cde->abde"}  # eqn0/dot_general/Einsum
      %o: f32[B,5,4] =
          Einsum(%h, %wo) {equation="abcd,cde->abe"}  # eqn1/dot_general/Einsum
      %nq: f32[B,5,2,3] = Neg(%q)
    })");
  EXPECT_TRUE(RunPass("einsum-to-matmul", m));
  // q: x [B,5,6] @ wq as [6, 2*3] -> [B,5,6], split to [B,5,2,3] (B copied
  // with 0, the static 5 written out). o: h [B,5,2,3] merged to
  // [B,5,2*3] @ wo as [2*3, 4].
  EXPECT_EQ(
      PrintGraph(m.graph()),
      "graph main(%x: f32[B,5,6], %h: f32[B,5,2,3]) -> (%nq: f32[B,5,2,3], "
      "%o: f32[B,5,4]) {\n"
      "  init %shape: i64[2] = i64[2]{6, 6}\n"
      "  init %shape_1: i64[4] = i64[4]{0, 5, 2, 3}\n"
      "  init %shape_2: i64[3] = i64[3]{0, 5, 6}\n"
      "  init %shape_3: i64[2] = i64[2]{6, 4}\n"
      "  init %wo: f32[2,3,4] = f32[2,3,4]{0, 1, 2, 3, 4, 5, 6, 7, ... (24 "
      "elements, fnv1a e3d9403545dbe1aa)}\n"
      "  init %wq: f32[6,2,3] = f32[6,2,3]{0, 1, 2, 3, 4, 5, 6, 7, ... (36 "
      "elements, fnv1a 2b6bcf7024c1056a)}\n"
      "  %Reshape: f32[6,6] = Reshape(%wq, %shape)  # "
      "eqn0/dot_general/Reshape\n"
      "  %MatMul: f32[B,5,6] = MatMul(%x, %Reshape)  # "
      "eqn0/dot_general/MatMul\n"
      "  %q: f32[B,5,2,3] = Reshape(%MatMul, %shape_1)  # "
      "eqn0/dot_general/Reshape\n"
      "  %Reshape_1: f32[B,5,6] = Reshape(%h, %shape_2)  # "
      "eqn1/dot_general/Reshape\n"
      "  %Reshape_2: f32[6,4] = Reshape(%wo, %shape_3)  # "
      "eqn1/dot_general/Reshape\n"
      "  %o: f32[B,5,4] = MatMul(%Reshape_1, %Reshape_2)  # "
      "eqn1/dot_general/MatMul\n"
      "  %nq: f32[B,5,2,3] = Neg(%q)\n"
      "}\n");
  // Constant folding turns the kernel Reshapes into 2-D initializers with
  // the kernels' bytes unchanged (row-major), and the 3-D kernels go.
  EXPECT_TRUE(RunPass("constant-folding", m));
  EXPECT_EQ(
      PrintGraph(m.graph()),
      "graph main(%x: f32[B,5,6], %h: f32[B,5,2,3]) -> (%nq: f32[B,5,2,3], "
      "%o: f32[B,5,4]) {\n"
      "  init %Reshape: f32[6,6] = f32[6,6]{0, 1, 2, 3, 4, 5, 6, 7, ... (36 "
      "elements, fnv1a 2b6bcf7024c1056a)}\n"
      "  init %Reshape_2: f32[6,4] = f32[6,4]{0, 1, 2, 3, 4, 5, 6, 7, ... "
      "(24 elements, fnv1a e3d9403545dbe1aa)}\n"
      "  init %shape_1: i64[4] = i64[4]{0, 5, 2, 3}\n"
      "  init %shape_2: i64[3] = i64[3]{0, 5, 6}\n"
      "  %MatMul: f32[B,5,6] = MatMul(%x, %Reshape)  # "
      "eqn0/dot_general/MatMul\n"
      "  %q: f32[B,5,2,3] = Reshape(%MatMul, %shape_1)  # "
      "eqn0/dot_general/Reshape\n"
      "  %Reshape_1: f32[B,5,6] = Reshape(%h, %shape_2)  # "
      "eqn1/dot_general/Reshape\n"
      "  %o: f32[B,5,4] = MatMul(%Reshape_1, %Reshape_2)  # "
      "eqn1/dot_general/MatMul\n"
      "  %nq: f32[B,5,2,3] = Neg(%q)\n"
      "}\n");
  std::vector<float> wq_values(36);
  for (int i = 0; i < 36; ++i) wq_values[i] = static_cast<float>(i);
  const Value* folded = m.graph().initializer("Reshape");
  ASSERT_NE(folded, nullptr);
  ASSERT_EQ(folded->const_value()->bytes().size(), 36 * sizeof(float));
  EXPECT_EQ(std::memcmp(folded->const_value()->bytes().data(), wq_values.data(),
                        36 * sizeof(float)),
            0);
}

TEST(EinsumToMatMulTest, MergesBatchedContractionsAndRefusesInexactReshapes) {
  // p: batch a, lhs-free b, contracted (c, d), rhs-free e: y goes to
  // [a, c, d, e] (Transpose) then [B, 6, 7] (B copied). r: two contracted
  // letters, one symbolic (S): no static product, refused. t: batch with
  // two lhs-free letters: no MatMul form, refused.
  Model m = ParseIr(R"(
    graph main(%x: f32[B,5,2,3], %y: f32[B,7,2,3], %s: f32[4,S,3],
               %w: f32[S,3,6], %z: f32[B,5,2,3])
        -> (%p: f32[B,5,7], %r: f32[4,6], %t: f32[B,5,2,7]) {
      %p: f32[B,5,7] = Einsum(%x, %y) {equation="abcd,aecd->abe"}
      %r: f32[4,6] = Einsum(%s, %w) {equation="abc,bcd->ad"}
      %t: f32[B,5,2,7] = Einsum(%z, %y) {equation="abcd,aecd->abce"}
    })");
  EXPECT_TRUE(RunPass("einsum-to-matmul", m));
  EXPECT_EQ(
      PrintGraph(m.graph()),
      "graph main(%x: f32[B,5,2,3], %y: f32[B,7,2,3], %s: f32[4,S,3], %w: "
      "f32[S,3,6], %z: f32[B,5,2,3]) -> (%p: f32[B,5,7], %r: f32[4,6], %t: "
      "f32[B,5,2,7]) {\n"
      "  init %shape: i64[3] = i64[3]{0, 5, 6}\n"
      "  init %shape_1: i64[3] = i64[3]{0, 6, 7}\n"
      "  %Reshape: f32[B,5,6] = Reshape(%x, %shape)  # Reshape\n"
      "  %Transpose: f32[B,2,3,7] = Transpose(%y) {perm=[0, 2, 3, 1]}  # "
      "Transpose\n"
      "  %Reshape_1: f32[B,6,7] = Reshape(%Transpose, %shape_1)  # Reshape\n"
      "  %p: f32[B,5,7] = MatMul(%Reshape, %Reshape_1)  # MatMul\n"
      "  %r: f32[4,6] = Einsum(%s, %w) {equation=\"abc,bcd->ad\"}\n"
      "  %t: f32[B,5,2,7] = Einsum(%z, %y) {equation=\"abcd,aecd->abce\"}\n"
      "}\n");
}

}  // namespace
}  // namespace jax2onnx::ir
