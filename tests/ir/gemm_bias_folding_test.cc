// The gemm-bias-folding pass (ir/passes/gemm_bias_folding.cc) on small
// graphs stated as IR text: the graph after is compared as printed text
// written by hand (values derived in comments) and each test also pins what
// the pass refuses (tests/ir/pass_test_util.h: verifier around the pass,
// cleanup after, ONNX Runtime accepts the model before and after).
#include <string>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::ParseIr;
using pass_test::RunPass;

TEST(GemmBiasFoldingTest, DenseLayerBiasAddBecomesGemmC) {
  // %dense adds the bias first: either operand order. %dense3 has rank-3
  // activations: no Gemm. In %wide the "bias" broadcasts the product to a
  // larger shape: no Gemm.
  Model m = ParseIr(R"(
    graph main(%x: f32[B,4], %w: f32[4,8], %b: f32[8], %x3: f32[2,B,4],
               %big: f32[3,B,8])
        -> (%dense: f32[B,8], %dense3: f32[2,B,8], %wide: f32[3,B,8]) {
      %mm: f32[B,8] = MatMul(%x, %w)
      %dense: f32[B,8] = Add(%b, %mm)
      %mm3: f32[2,B,8] = MatMul(%x3, %w)
      %dense3: f32[2,B,8] = Add(%mm3, %b)
      %mm2: f32[B,8] = MatMul(%x, %w)
      %wide: f32[3,B,8] = Add(%mm2, %big)
    })");
  EXPECT_TRUE(RunPass("gemm-bias-folding", m));
  EXPECT_EQ(PrintGraph(m.graph()),
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
