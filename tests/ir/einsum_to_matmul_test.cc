// The einsum-to-matmul pass (ir/passes/einsum_to_matmul.cc) on small hand-built
// graphs: the graph after is compared as printed text written by hand (values
// derived in comments) and each test also pins what the pass refuses
// (tests/ir/pass_test_util.h: verifier around the pass, cleanup after, ONNX
// Runtime accepts the model before and after).
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
using pass_test::Init;
using pass_test::Op;
using pass_test::RunPass;
using pass_test::TP;

TEST(EinsumToMatMulTest, RewritesDenseAndAttentionEquations) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2, 5, 8}));
  Value* w = g.AddInput("w", F32({4, 8}));
  Value* k = g.AddInput("k", F32({2, 7, 8}));
  // Dense with a (out, in) kernel: x @ w^T.
  Node* d = Op(g, "Einsum", {x, w}, "d", F32({2, 5, 4}),
               A(Attr::String("equation", "abc,dc->abd")));
  d->set_name("eqn0/dot_general/Einsum");
  // Attention scores q k^T with batch a.
  Node* s = Op(g, "Einsum", {x, k}, "s", F32({2, 5, 7}),
               A(Attr::String("equation", "abc,adc->abd")));
  // Summed out of one operand only: no MatMul form.
  Node* r = Op(g, "Einsum", {x, w}, "r", F32({2, 4}),
               A(Attr::String("equation", "abc,dc->ad")));
  g.AddOutput(d->output(0));
  g.AddOutput(s->output(0));
  g.AddOutput(r->output(0));
  EXPECT_TRUE(RunPass("einsum-to-matmul", m));
  EXPECT_EQ(PrintGraph(g),
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
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"B", 5, 6}));
  Value* h = g.AddInput("h", F32({"B", 5, 2, 3}));
  // wq[c, d, e] = 6c + 3d + e (c < 6, d < 2, e < 3); as [6, 6] row c holds
  // the (d, e) pairs in row-major order: exactly wq's bytes.
  std::vector<float> wq_values(36), wo_values(24);
  for (int i = 0; i < 36; ++i) wq_values[i] = static_cast<float>(i);
  for (int i = 0; i < 24; ++i) wo_values[i] = static_cast<float>(i);
  Value* wq =
      Init(g, "wq", Tensor::FromVector<float>(TP::FLOAT, {6, 2, 3}, wq_values));
  Value* wo =
      Init(g, "wo", Tensor::FromVector<float>(TP::FLOAT, {2, 3, 4}, wo_values));
  Node* q = Op(g, "Einsum", {x, wq}, "q", F32({"B", 5, 2, 3}),
               A(Attr::String("equation", "abc,cde->abde")));
  q->set_name("eqn0/dot_general/Einsum");
  Node* o = Op(g, "Einsum", {h, wo}, "o", F32({"B", 5, 4}),
               A(Attr::String("equation", "abcd,cde->abe")));
  o->set_name("eqn1/dot_general/Einsum");
  g.AddOutput(
      Op(g, "Neg", {q->output(0)}, "nq", F32({"B", 5, 2, 3}))->output(0));
  g.AddOutput(o->output(0));
  EXPECT_TRUE(RunPass("einsum-to-matmul", m));
  // q: x [B,5,6] @ wq as [6, 2*3] -> [B,5,6], split to [B,5,2,3] (B copied
  // with 0, the static 5 written out). o: h [B,5,2,3] merged to
  // [B,5,2*3] @ wo as [2*3, 4].
  EXPECT_EQ(
      PrintGraph(g),
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
      PrintGraph(g),
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
  const Value* folded = g.initializer("Reshape");
  ASSERT_NE(folded, nullptr);
  ASSERT_EQ(folded->const_value()->bytes().size(), 36 * sizeof(float));
  EXPECT_EQ(std::memcmp(folded->const_value()->bytes().data(), wq_values.data(),
                        36 * sizeof(float)),
            0);
}

TEST(EinsumToMatMulTest, MergesBatchedContractionsAndRefusesInexactReshapes) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"B", 5, 2, 3}));
  Value* y = g.AddInput("y", F32({"B", 7, 2, 3}));
  Value* s = g.AddInput("s", F32({4, "S", 3}));
  Value* w = g.AddInput("w", F32({"S", 3, 6}));
  Value* z = g.AddInput("z", F32({"B", 5, 2, 3}));
  // Batch a, lhs-free b, contracted (c, d), rhs-free e: y goes to
  // [a, c, d, e] (Transpose) then [B, 6, 7] (B copied).
  Node* batched = Op(g, "Einsum", {x, y}, "p", F32({"B", 5, 7}),
                     A(Attr::String("equation", "abcd,aecd->abe")));
  // Two contracted letters, one symbolic (S): no static product, refused.
  Node* symbolic = Op(g, "Einsum", {s, w}, "r", F32({4, 6}),
                      A(Attr::String("equation", "abc,bcd->ad")));
  // Batch with two lhs-free letters: no MatMul form, refused.
  Node* two_free = Op(g, "Einsum", {z, y}, "t", F32({"B", 5, 2, 7}),
                      A(Attr::String("equation", "abcd,aecd->abce")));
  (void)two_free;
  g.AddOutput(batched->output(0));
  g.AddOutput(symbolic->output(0));
  g.AddOutput(two_free->output(0));
  EXPECT_TRUE(RunPass("einsum-to-matmul", m));
  EXPECT_EQ(
      PrintGraph(g),
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
