// The fusion passes (ir/passes/fusions.h) on real conversions: each bundle
// under testdata/fusion/ goes through the IR pipeline as it is today (the
// literal graph), then through the fusion passes; the test pins the graph
// before and after (op counts, and the whole fused graph as text where it is
// small) and runs the fused model in ONNX Runtime against the reference
// interpreter on the bundle's inputs (or seeded random ones). Negative
// bundles pin that an inexact or unsafe match leaves the graph unchanged.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/check.h"
#include "api/convert_internal.h"
#include "api/ort_runner.h"
#include "converter2/convert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/pass.h"
#include "ir/passes/fusions.h"
#include "ir/printer.h"
#include "ir/serde.h"
#include "ir/verifier.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/io/compare.h"
#include "tests/ort_accepts.h"

namespace jax2onnx {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string BundlePath(const std::string& name) {
  return absl::StrCat(JAX2ONNX_SOURCE_DIR, "/testdata/fusion/", name, "/", name,
                      ".jaxpr");
}

// "Op=count" pairs of the main graph, sorted by op.
std::string OpCounts(const ir::Model& model) {
  std::map<std::string, int> counts;
  for (const ir::Node* n : model.graph().nodes()) ++counts[n->op_type()];
  std::vector<std::string> parts;
  for (const auto& [op, n] : counts) parts.push_back(absl::StrCat(op, "=", n));
  return absl::StrJoin(parts, " ");
}

struct Fused {
  std::string literal_counts;
  std::string fused_counts;
  std::string fused_text;  // the main graph, printed
  bool changed = false;
};

class FusionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { api::RegisterAllLowerings(); }

  // Converts with the IR pipeline at `opset`, runs the fusion passes
  // (verifying the IR around each) and checks the fused model's outputs in
  // ONNX Runtime against the interpreter. ORT must accept the literal and
  // the fused model (tests/ort_accepts.h), numbers checked or not.
  // `tolerance` (rtol = atol) replaces the bundle's when positive.
  Fused ConvertFuseAndCheck(const std::string& name, int opset,
                            bool check_numbers = true, double tolerance = 0,
                            ir::FusionOptions fusion_options = {},
                            int optimize = 0) {
    Fused result;
    absl::StatusOr<jaxpr::Bundle> bundle = jaxpr::LoadBundle(BundlePath(name));
    EXPECT_TRUE(bundle.ok()) << bundle.status();
    if (!bundle.ok()) return result;
    converter2::IrConvertOptions options;
    options.opset = opset;
    // The literal graph (or with `optimize` 1 the generic rewrites'
    // output, which the attention fusion needs); the fusions run below.
    options.optimize = optimize;
    absl::StatusOr<ir::Model> model = converter2::ConvertToIr(*bundle, options);
    EXPECT_TRUE(model.ok()) << model.status();
    if (!model.ok()) return result;
    result.literal_counts = OpCounts(*model);
    EXPECT_ORT_ACCEPTS(ir::ToProto(*model));
    ir::PassManagerOptions pm_options;
    pm_options.verify_each_pass = true;
    ir::PassManager manager(std::move(pm_options));
    ir::AddFusionPasses(manager, opset, fusion_options);
    absl::StatusOr<bool> changed = manager.Run(*model);
    EXPECT_TRUE(changed.ok()) << changed.status();
    if (!changed.ok()) return result;
    result.changed = *changed;
    EXPECT_TRUE(ir::Verify(*model).ok());
    result.fused_counts = OpCounts(*model);
    result.fused_text = ir::PrintGraph(model->graph());
    EXPECT_ORT_ACCEPTS(ir::ToProto(*model));
    if (check_numbers) {
      CheckNumbers(*bundle, *model, name, tolerance, result.fused_text);
    }
    return result;
  }

  // Converts with the whole IR pipeline at optimize 2, without and with
  // FusionOptions::fuse_attention (`literal_counts` is the former here),
  // and checks the attention-fused model in ONNX Runtime against the
  // interpreter.
  Fused ConvertWithAttentionAndCheck(const std::string& name,
                                     double tolerance = 0) {
    Fused result;
    absl::StatusOr<jaxpr::Bundle> bundle = jaxpr::LoadBundle(BundlePath(name));
    EXPECT_TRUE(bundle.ok()) << bundle.status();
    if (!bundle.ok()) return result;
    converter2::IrConvertOptions options;
    absl::StatusOr<ir::Model> unfused =
        converter2::ConvertToIr(*bundle, options);
    EXPECT_TRUE(unfused.ok()) << unfused.status();
    if (!unfused.ok()) return result;
    result.literal_counts = OpCounts(*unfused);
    options.fuse_attention = true;
    absl::StatusOr<ir::Model> model = converter2::ConvertToIr(*bundle, options);
    EXPECT_TRUE(model.ok()) << model.status();
    if (!model.ok()) return result;
    result.fused_counts = OpCounts(*model);
    result.fused_text = ir::PrintGraph(model->graph());
    result.changed = result.fused_counts != result.literal_counts;
    EXPECT_ORT_ACCEPTS(ir::ToProto(*model));
    CheckNumbers(*bundle, *model, name, tolerance, result.fused_text);
    return result;
  }

  // `model`'s outputs in ONNX Runtime against the interpreter on the
  // bundle's inputs (or seeded random ones).
  void CheckNumbers(const jaxpr::Bundle& bundle, const ir::Model& model,
                    const std::string& name, double tolerance,
                    const std::string& text) {
    std::string reason;
    if (!api::OrtRunner::Shared().IsAvailable(&reason)) {
      ADD_FAILURE() << "ONNX Runtime unavailable: " << reason;
      return;
    }
    api::CheckOptions check;
    absl::StatusOr<std::vector<jaxpr::Array>> inputs =
        api::InputsFor(bundle, check);
    EXPECT_TRUE(inputs.ok()) << inputs.status();
    if (!inputs.ok()) return;
    std::string oracle;
    absl::StatusOr<std::vector<jaxpr::Array>> expected =
        api::OracleOutputs(bundle, *inputs, &oracle);
    EXPECT_TRUE(expected.ok()) << expected.status();
    if (!expected.ok()) return;
    absl::StatusOr<std::vector<jaxpr::Array>> got =
        api::RunModel(ir::ToProto(model), *inputs, api::OrtRunner::Shared());
    EXPECT_TRUE(got.ok()) << got.status() << "\n" << text;
    if (!got.ok()) return;
    EXPECT_EQ(got->size(), expected->size());
    for (size_t i = 0; i < got->size() && i < expected->size(); ++i) {
      std::optional<double> rtol = bundle.rtol, atol = bundle.atol;
      if (tolerance > 0) rtol = atol = tolerance;
      jaxpr::CompareResult cmp =
          jaxpr::CompareArrays((*expected)[i], (*got)[i], rtol, atol);
      EXPECT_TRUE(cmp.ok) << name << " output " << i << " vs " << oracle << ": "
                          << cmp.Summary();
    }
  }
};

// ---- LayerNormalization ----

TEST_F(FusionTest, TwoPassVarianceLayerNormWithScaleAndBiasBecomesOneOp) {
  Fused f = ConvertFuseAndCheck("layer_norm_var", 23);
  EXPECT_EQ(f.literal_counts,
            "Add=2 Cast=1 Div=4 Mul=3 ReduceSum=3 Sqrt=1 Sub=3 Unsqueeze=5");
  EXPECT_EQ(f.fused_counts, "LayerNormalization=1");
  // The scale and bias feed the op directly (their broadcast Reshapes are
  // skipped), epsilon is the printed 1e-5.
  EXPECT_THAT(f.fused_text,
              HasSubstr("%ba: f32[2,8,16] = LayerNormalization(%a, "
                        "%b, %c) {axis=-1, epsilon=1e-05}"));
}

TEST_F(FusionTest, FastVarianceLayerNormWithoutScaleGetsOnesAndKeepsCasts) {
  Fused f = ConvertFuseAndCheck("layer_norm_fast_bf16", 23);
  EXPECT_EQ(f.fused_counts, "Cast=2 LayerNormalization=1");
  EXPECT_THAT(f.fused_text, HasSubstr("init %fused_norm_ones: f32[32]"));
  EXPECT_THAT(f.fused_text, HasSubstr("{axis=-1, epsilon=1e-06}"));
}

TEST_F(FusionTest, LayerNormOverAFirstAxisIsLeftAlone) {
  Fused f = ConvertFuseAndCheck("layer_norm_axis0", 23);
  EXPECT_FALSE(f.changed);
  EXPECT_EQ(f.fused_counts, f.literal_counts);
  EXPECT_THAT(f.fused_counts, Not(HasSubstr("LayerNormalization")));
}

TEST_F(FusionTest, RmsNormBecomesRmsNormalizationFromOpset23Only) {
  Fused f = ConvertFuseAndCheck("rms_norm_scale", 23);
  EXPECT_EQ(f.fused_counts, "RMSNormalization=1");
  EXPECT_THAT(f.fused_text, HasSubstr("RMSNormalization(%a, %b) {axis=-1, "
                                      "epsilon=1e-06}"));
  Fused old = ConvertFuseAndCheck("rms_norm_scale", 22);
  EXPECT_FALSE(old.changed);
  EXPECT_EQ(old.fused_counts, old.literal_counts);
}

TEST_F(FusionTest, FlaxRmsNormSubtractingZerosBecomesRmsNormalization) {
  Fused f = ConvertFuseAndCheck("rms_norm_flax", 23);
  EXPECT_EQ(f.fused_counts, "RMSNormalization=1");
  EXPECT_THAT(f.fused_text, HasSubstr("%n: f32[2,5,16] = RMSNormalization(%a, "
                                      "%b) {axis=-1, epsilon=1e-06}"));
}

// ---- Softmax / LogSoftmax ----

TEST_F(FusionTest, SoftmaxWithStopGradientOverAMiddleAxis) {
  Fused f = ConvertFuseAndCheck("softmax_stop_gradient", 23);
  EXPECT_EQ(f.fused_counts, "Softmax=1");
  EXPECT_THAT(f.fused_text, HasSubstr("%b: f32[2,6,3] = Softmax(%a) {axis=1}"));
  // Softmax exists since opset 1; the one-axis semantics since 13.
  Fused at17 = ConvertFuseAndCheck("softmax_stop_gradient", 17);
  EXPECT_EQ(at17.fused_counts, "Softmax=1");
}

TEST_F(FusionTest, LogSoftmaxWithInitialMinusInfinity) {
  Fused f = ConvertFuseAndCheck("log_softmax", 23);
  EXPECT_EQ(f.fused_counts, "LogSoftmax=1");
  EXPECT_THAT(f.fused_text,
              HasSubstr("%k: f32[4,10] = LogSoftmax(%a) {axis=1}"));
}

TEST_F(FusionTest, SoftmaxWhoseRowMaxIsAlsoAnOutputIsLeftAlone) {
  Fused f = ConvertFuseAndCheck("softmax_max_reused", 23);
  EXPECT_FALSE(f.changed);
  EXPECT_EQ(f.fused_counts, f.literal_counts);
}

// ---- Gelu / Swish ----

TEST_F(FusionTest, ErfGeluBecomesGeluFromOpset20Only) {
  Fused f = ConvertFuseAndCheck("gelu_erf", 23);
  EXPECT_EQ(f.fused_counts, "Gelu=1");
  EXPECT_THAT(f.fused_text, HasSubstr("= Gelu(%a)  # Gelu/eqn0/mul\n"));
  Fused old = ConvertFuseAndCheck("gelu_erf", 19);
  EXPECT_FALSE(old.changed);
}

TEST_F(FusionTest, OlderJaxErfGeluDividedByTwoBecomesGelu) {
  Fused f = ConvertFuseAndCheck("gelu_erf_div2", 23);
  EXPECT_EQ(f.fused_counts, "Gelu=1");
}

TEST_F(FusionTest, JaxErfcGeluBecomesGeluFromOpset20Only) {
  // jax.nn.gelu(approximate=False) as current JAX prints it:
  // 0.5 * x * erfc(-x * sqrt(1/2)), erfc lowered as a float64 erfcc chain.
  Fused f = ConvertFuseAndCheck("gelu_erfc", 23);
  EXPECT_THAT(f.literal_counts, HasSubstr("Exp=1"));
  EXPECT_THAT(f.literal_counts, HasSubstr("Where=1"));
  EXPECT_EQ(f.fused_counts, "Gelu=1");
  EXPECT_THAT(f.fused_text,
              HasSubstr("%g: f32[4,24] = Gelu(%a)  # Gelu/eqn0/mul\n"));
  Fused old = ConvertFuseAndCheck("gelu_erfc", 19);
  EXPECT_FALSE(old.changed);
}

TEST_F(FusionTest, ErfcGeluWithAnotherScaleOrSignIsLeftAlone) {
  // 0.5 * x * erfc(x * sqrt(1/2)) (no negation: 0.5 x (1 - erf(x/sqrt 2)),
  // not GELU) and 0.5 * x * erfc(-x * 0.7) stay as they are.
  Fused f = ConvertFuseAndCheck("gelu_erfc_not", 23);
  EXPECT_FALSE(f.changed);
  EXPECT_EQ(f.fused_counts, f.literal_counts);
  EXPECT_THAT(f.fused_counts, Not(HasSubstr("Gelu")));
}

TEST_F(FusionTest, SiluBecomesSwishFromOpset24Only) {
  ir::FusionOptions swish;
  swish.fuse_swish = true;  // off by default: ORT 1.30 has no Swish kernel
  Fused f = ConvertFuseAndCheck("silu", 24, /*check_numbers=*/false, 0, swish);
  EXPECT_EQ(f.fused_counts, "Swish=1");
  EXPECT_THAT(f.fused_text, HasSubstr("Swish(%a) {alpha=1.0}"));
  Fused old = ConvertFuseAndCheck("silu", 23, true, 0, swish);
  EXPECT_FALSE(old.changed);
  Fused by_default = ConvertFuseAndCheck("silu", 24);
  EXPECT_FALSE(by_default.changed);
  EXPECT_EQ(old.fused_counts, "Mul=1 Sigmoid=1");
}

// ---- A whole model ----

TEST_F(FusionTest, TinyVitFusesEveryLayerNormGeluAndSoftmax) {
  // 2 pre-LN blocks + the final norm: 5 LayerNormalization, 2 Gelu,
  // 2 Softmax; nothing of their chains is left.
  Fused f = ConvertFuseAndCheck("vit_tiny", 23);
  EXPECT_THAT(f.fused_counts, HasSubstr("LayerNormalization=5"));
  EXPECT_THAT(f.fused_counts, HasSubstr("Gelu=2"));
  EXPECT_THAT(f.fused_counts, HasSubstr("Softmax=2"));
  for (const char* gone :
       {" Sqrt=", " Exp=", " Tanh=", " ReduceSum=", " ReduceMax="}) {
    EXPECT_THAT(absl::StrCat(" ", f.fused_counts), Not(HasSubstr(gone)));
  }
}

TEST_F(FusionTest, CausalGptBlockFusesBothNormsTheMaskedSoftmaxAndGelu) {
  // The jnp.where mask sits before the softmax, outside its chain.
  Fused f = ConvertFuseAndCheck("gpt_block_tiny", 23);
  EXPECT_THAT(f.fused_counts, HasSubstr("LayerNormalization=2"));
  EXPECT_THAT(f.fused_counts, HasSubstr("Gelu=1"));
  EXPECT_THAT(f.fused_counts, HasSubstr("Softmax=1"));
  EXPECT_THAT(f.fused_counts, HasSubstr("Where=1"));
  EXPECT_THAT(absl::StrCat(" ", f.fused_counts), Not(HasSubstr(" Exp=")));
}

TEST_F(FusionTest, TinyBf16VitChainsComputedOpByOpStayUnlessAllowed) {
  // This ViT computes its norms, softmaxes and GELUs op by op in bf16 (no
  // float32 upcast around them): fusing would drop JAX's per-op roundings.
  Fused f = ConvertFuseAndCheck("vit_tiny_bf16", 23);
  EXPECT_FALSE(f.changed);
  EXPECT_EQ(f.fused_counts, f.literal_counts);
}

TEST_F(FusionTest, TinyBf16VitFusesThroughTheFloat32RoundTripsWhenAllowed) {
  // bf16 ops are computed in float32 and rounded after each op; the fused
  // ops run the whole chain in float32 between the boundary Casts, so they
  // skip ~10 bf16 roundings (2^-9 relative each) per norm and ~8 per GELU
  // or softmax that the interpreter, like JAX, applies. Through two blocks
  // the logits then differ by a few bf16 steps of the largest activations:
  // checked at 6e-2 rather than the bf16 default 1e-2 (the unfused model
  // passes at 1e-2 in the corpus).
  ir::FusionOptions options;
  options.fuse_low_precision_chains = true;
  Fused f = ConvertFuseAndCheck("vit_tiny_bf16", 23, true, 6e-2, options);
  EXPECT_THAT(f.fused_counts, HasSubstr("LayerNormalization=5"));
  EXPECT_THAT(f.fused_counts, HasSubstr("Gelu=2"));
  EXPECT_THAT(f.fused_counts, HasSubstr("Softmax=2"));
  for (const char* gone :
       {" Sqrt=", " Exp=", " Tanh=", " ReduceSum=", " ReduceMax="}) {
    EXPECT_THAT(absl::StrCat(" ", f.fused_counts), Not(HasSubstr(gone)));
  }
}

TEST_F(FusionTest, TinyVitAtOpset17KeepsGeluUnfused) {
  // Gelu is opset 20: at 17 only the norms and softmaxes fuse.
  Fused f = ConvertFuseAndCheck("vit_tiny", 17);
  EXPECT_THAT(f.fused_counts, HasSubstr("LayerNormalization=5"));
  EXPECT_THAT(f.fused_counts, HasSubstr("Softmax=2"));
  EXPECT_THAT(f.fused_counts, HasSubstr("Tanh=2"));
  EXPECT_THAT(f.fused_counts, Not(HasSubstr("Gelu")));
}

// ---- Attention (FusionOptions::fuse_attention, whole pipeline) ----

TEST_F(FusionTest, FlaxCausalAttentionBecomesOneAttentionWithTheIotaMask) {
  // q / sqrt(8), einsum, jnp.where(causal, ., finfo.min), softmax, einsum:
  // one Attention reading the [8,8] GreaterOrEqual of the two iotas as its
  // boolean mask; the Transposes around it are einsum's layout changes.
  // Two Expands and an Unsqueeze of the mask's broadcast go at level 2
  // (expand-elimination once type-propagation types Range and Unsqueeze).
  Fused f = ConvertWithAttentionAndCheck("flax_attention_causal");
  EXPECT_EQ(f.literal_counts,
            "Cast=1 Div=1 Expand=2 GreaterOrEqual=1 MatMul=2 Range=1 "
            "Softmax=1 Transpose=4 Unsqueeze=2 Where=1");
  EXPECT_EQ(f.fused_counts,
            "Attention=1 Cast=1 GreaterOrEqual=1 Range=1 Transpose=4 "
            "Unsqueeze=1");
  EXPECT_THAT(f.fused_text, HasSubstr("= Attention(%Transpose_3, %Transpose_4, "
                                      "%Transpose_2, %k/ge) {scale=0.353553}"));
}

TEST_F(FusionTest, TinyVitAndGptBlockFuseEveryAttention) {
  Fused vit = ConvertWithAttentionAndCheck("vit_tiny");
  EXPECT_THAT(vit.fused_counts, HasSubstr("Attention=2"));
  EXPECT_THAT(vit.literal_counts, HasSubstr("Softmax=2"));
  EXPECT_THAT(vit.fused_counts, Not(HasSubstr("Softmax")));
  Fused gpt = ConvertWithAttentionAndCheck("gpt_block_tiny");
  EXPECT_THAT(gpt.fused_counts, HasSubstr("Attention=1"));
  EXPECT_THAT(gpt.fused_counts, Not(HasSubstr("Softmax")));
  EXPECT_THAT(gpt.fused_counts, Not(HasSubstr("Where")));
}

TEST_F(FusionTest, AttentionFusionIsOffByDefaultAndNeedsOpset23) {
  absl::StatusOr<jaxpr::Bundle> bundle =
      jaxpr::LoadBundle(BundlePath("flax_attention_causal"));
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  converter2::IrConvertOptions options;
  absl::StatusOr<ir::Model> by_default =
      converter2::ConvertToIr(*bundle, options);
  ASSERT_TRUE(by_default.ok()) << by_default.status();
  EXPECT_THAT(OpCounts(*by_default), Not(HasSubstr("Attention")));
  options.fuse_attention = true;
  options.opset = 22;
  absl::StatusOr<ir::Model> at22 = converter2::ConvertToIr(*bundle, options);
  ASSERT_TRUE(at22.ok()) << at22.status();
  EXPECT_THAT(OpCounts(*at22), Not(HasSubstr("Attention")));
  EXPECT_EQ(OpCounts(*at22), OpCounts(*by_default));
}

TEST_F(FusionTest, JaxNnDotProductAttentionKeepsItsFiveDimEinsums) {
  // jax.nn.dot_product_attention vmaps over key/value head groups: the unit
  // group axis makes both products 5-D Einsums with two lhs-free letters,
  // which einsum-to-matmul does not rewrite, so there is no chain to fuse.
  Fused f = ConvertWithAttentionAndCheck("dot_product_attention");
  EXPECT_FALSE(f.changed);
  EXPECT_THAT(f.fused_counts, HasSubstr("Einsum=2"));
  EXPECT_THAT(f.fused_counts, HasSubstr("Softmax=1"));
}

TEST_F(FusionTest, Bf16VitAttentionFusesOnlyWithLowPrecisionChains) {
  // Over the generic rewrites' output (Einsum -> MatMul). The bf16 ViT
  // computes its softmax op by op in bf16: only with
  // fuse_low_precision_chains does the softmax fuse, and then the attention
  // through the bf16 round trips (checked at 6e-2 as above).
  ir::FusionOptions strict;
  strict.fuse_attention = true;
  Fused kept = ConvertFuseAndCheck("vit_tiny_bf16", 23, true, 0, strict,
                                   /*optimize=*/1);
  EXPECT_THAT(kept.fused_counts, Not(HasSubstr("Attention")));
  ir::FusionOptions allowed = strict;
  allowed.fuse_low_precision_chains = true;
  Fused fused = ConvertFuseAndCheck("vit_tiny_bf16", 23, true, 6e-2, allowed,
                                    /*optimize=*/1);
  EXPECT_THAT(fused.fused_counts, HasSubstr("Attention=2"));
  EXPECT_THAT(fused.fused_counts, Not(HasSubstr("Exp")));
}

}  // namespace
}  // namespace jax2onnx
