// The gemm-bias-folding pass (ir/passes/gemm_bias_folding.cc) on small
// hand-built graphs: the graph after is compared as printed text written by
// hand (values derived in comments) and each test also pins what the pass
// refuses (tests/ir/pass_test_util.h: verifier around the pass, cleanup after,
// ONNX Runtime accepts the model before and after).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::F32;
using pass_test::Op;
using pass_test::RunPass;

TEST(GemmBiasFoldingTest, DenseLayerBiasAddBecomesGemmC) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"B", 4}));
  Value* w = g.AddInput("w", F32({4, 8}));
  Value* b = g.AddInput("b", F32({8}));
  Value* x3 = g.AddInput("x3", F32({2, "B", 4}));
  Value* big = g.AddInput("big", F32({3, "B", 8}));
  Node* mm = Op(g, "MatMul", {x, w}, "mm", F32({"B", 8}));
  // Bias first: either operand order.
  Node* dense = Op(g, "Add", {b, mm->output(0)}, "dense", F32({"B", 8}));
  // Rank-3 activations: no Gemm.
  Node* mm3 = Op(g, "MatMul", {x3, w}, "mm3", F32({2, "B", 8}));
  Node* dense3 = Op(g, "Add", {mm3->output(0), b}, "dense3", F32({2, "B", 8}));
  // The "bias" broadcasts the product to a larger shape: no Gemm.
  Node* mm2 = Op(g, "MatMul", {x, w}, "mm2", F32({"B", 8}));
  Node* wide = Op(g, "Add", {mm2->output(0), big}, "wide", F32({3, "B", 8}));
  g.AddOutput(dense->output(0));
  g.AddOutput(dense3->output(0));
  g.AddOutput(wide->output(0));
  EXPECT_TRUE(RunPass("gemm-bias-folding", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[B,4], %w: f32[4,8], %b: f32[8], %x3: "
            "f32[2,B,4], %big: f32[3,B,8]) -> (%dense: f32[B,8], %dense3: "
            "f32[2,B,8], %wide: f32[3,B,8]) {\n"
            "  %dense: f32[B,8] = Gemm(%x, %w, %b)  # Gemm\n"
            "  %mm3: f32[2,B,8] = MatMul(%x3, %w)\n"
            "  %dense3: f32[2,B,8] = Add(%mm3, %b)\n"
            "  %mm2: f32[B,8] = MatMul(%x, %w)\n"
            "  %wide: f32[3,B,8] = Add(%mm2, %big)\n"
            "}\n");
}

}  // namespace
}  // namespace jax2onnx::ir
