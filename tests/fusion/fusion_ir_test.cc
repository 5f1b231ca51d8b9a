// The fusion passes on small graphs stated as IR text: the forms the
// generic simplifications leave (ReduceX with keepdims=1, explicit Expand,
// ReduceMean, Pow) and near misses that must stay unfused (epsilon outside
// the square root, a divisor that is not the axis size, a wrong GELU
// constant). Each fused graph is pinned as printed text, and the fused and
// unfused models are run in ONNX Runtime on the same seeded inputs and must
// agree to rounding. Constants are named by kind (%i int64, %k f32 scalar,
// %w f32 tensor, %m bool mask, %cn a Constant node; then %k_1, %k_2, ... the
// way Graph::FreshName numbers a taken name), and f32 values are written
// with the nine significant digits that read back as the same float.
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/substitute.h"
#include "api/check.h"
#include "api/ort_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/pass.h"
#include "ir/passes/fusions.h"
#include "ir/printer.h"
#include "ir/serde.h"
#include "ir/verifier.h"
#include "jaxpr/io/compare.h"
#include "tests/ir/parse_ir.h"

namespace jax2onnx::ir {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using pass_test::ParseIr;

std::vector<jaxpr::Array> RandomInputs(const Graph& g) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<jaxpr::Array> out;
  for (const Value* in : g.inputs()) {
    std::vector<int64_t> dims;
    for (const Dim& d : in->shape()->dims()) dims.push_back(d.value());
    jaxpr::Array a(jaxpr::DType::kF32, dims);
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      a.SetFromDouble(i, dist(rng));
    }
    out.push_back(std::move(a));
  }
  return out;
}

// Runs the fusions on `m` and returns the printed graph; checks in ONNX
// Runtime that the fused model computes what the unfused one does.
std::string FuseAndCompare(Model& m, bool expect_change) {
  onnx::ModelProto before = ToProto(m);
  std::vector<jaxpr::Array> inputs = RandomInputs(m.graph());
  PassManagerOptions options;
  options.verify_each_pass = true;
  PassManager manager(std::move(options));
  FusionOptions fusion_options;
  fusion_options.fuse_swish = true;      // off in the pipeline (see fusions.h)
  fusion_options.fuse_attention = true;  // likewise
  AddFusionPasses(manager, *m.OpsetVersion(""), fusion_options);
  absl::StatusOr<bool> changed = manager.Run(m);
  EXPECT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(changed.value_or(!expect_change), expect_change);
  EXPECT_TRUE(Verify(m).ok());
  std::string text = PrintGraph(m.graph());
  std::string reason;
  if (!api::OrtRunner::Shared().IsAvailable(&reason)) {
    ADD_FAILURE() << "ONNX Runtime unavailable: " << reason;
    return text;
  }
  auto want = api::RunModel(before, inputs, api::OrtRunner::Shared());
  auto got = api::RunModel(ToProto(m), inputs, api::OrtRunner::Shared());
  EXPECT_TRUE(want.ok()) << want.status();
  EXPECT_TRUE(got.ok()) << got.status() << "\n" << text;
  if (want.ok() && got.ok()) {
    for (size_t i = 0; i < want->size(); ++i) {
      jaxpr::CompareResult cmp =
          jaxpr::CompareArrays((*want)[i], (*got)[i], 1e-5, 1e-5);
      EXPECT_TRUE(cmp.ok) << cmp.Summary() << "\n" << text;
    }
  }
  return text;
}

// x: f32[2,3,16]; the layer norm with keepdims=1 reductions (the form left
// once Unsqueeze after ReduceSum is folded), scale %w = 0.5f + 0.1f * i and
// bias %w_1 = -0.25f * i (-0 at i = 0) as [16]; %k_2 is epsilon, 1e-5f.
// `eps_inside` false puts epsilon outside the square root (and leaves out
// the %k_3 = 1 of the division); `divisor` is what the sums are divided by.
std::string KeepdimsLayerNormIr(int opset, bool eps_inside, int divisor) {
  return absl::Substitute(
      R"(
    model ir_version=10 opsets={"": $0}
    graph g(%x: f32[2,3,16]) -> (%out: f32[2,3,16]) {
      init %i: i64[1] = i64[1]{-1}
      init %k: f32[] = f32[]{$1}
      init %k_1: f32[] = f32[]{0}
      init %k_2: f32[] = f32[]{9.99999975e-06}
      $2
      init %w: f32[16] = f32[16]{0.5, 0.600000024, 0.699999988, 0.800000012,
          0.899999976, 1, 1.10000002, 1.20000005, 1.29999995, 1.4000001, 1.5,
          1.60000002, 1.70000005, 1.80000007, 1.89999998, 2}
      init %w_1: f32[16] = f32[16]{-0, -0.25, -0.5, -0.75, -1, -1.25, -1.5,
          -1.75, -2, -2.25, -2.5, -2.75, -3, -3.25, -3.5, -3.75}
      %sum: f32[2,3,1] = ReduceSum(%x, %i) {keepdims=1}
      %mean: f32[2,3,1] = Div(%sum, %k)
      %sq: f32[2,3,16] = Mul(%x, %x)
      %sum2: f32[2,3,1] = ReduceSum(%sq, %i) {keepdims=1}
      %mean2: f32[2,3,1] = Div(%sum2, %k)
      %mm: f32[2,3,1] = Mul(%mean, %mean)
      %d: f32[2,3,1] = Sub(%mean2, %mm)
      %var: f32[2,3,1] = Max(%d, %k_1)
      %centered: f32[2,3,16] = Sub(%x, %mean)
      $3
      %y: f32[2,3,16] = Mul(%centered, %inv)
      %ys: f32[2,3,16] = Mul(%w, %y)
      %out: f32[2,3,16] = Add(%ys, %w_1)
    })",
      opset, divisor, eps_inside ? "init %k_3: f32[] = f32[]{1}" : "",
      eps_inside ? "%ve: f32[2,3,1] = Add(%var, %k_2)\n"
                   "      %s: f32[2,3,1] = Sqrt(%ve)\n"
                   "      %inv: f32[2,3,1] = Div(%k_3, %s)"
                 : "%s: f32[2,3,1] = Sqrt(%var)\n"
                   "      %se: f32[2,3,1] = Add(%s, %k_2)\n"
                   "      %inv: f32[2,3,1] = Reciprocal(%se)");
}

TEST(FusionIrTest, KeepdimsLayerNormWithScaleAndBias) {
  Model m = ParseIr(KeepdimsLayerNormIr(23, /*eps_inside=*/true, 16));
  std::string text = FuseAndCompare(m, true);
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "  %out: f32[2,3,16] = LayerNormalization(%x, %w, "
                        "%w_1) {axis=-1, epsilon=1e-05}\n}\n"));
  EXPECT_EQ(m.graph().num_nodes(), 1u);
}

TEST(FusionIrTest, EpsilonOutsideTheSquareRootIsNotALayerNorm) {
  Model m = ParseIr(KeepdimsLayerNormIr(23, /*eps_inside=*/false, 16));
  size_t before = m.graph().num_nodes();
  FuseAndCompare(m, false);
  EXPECT_EQ(m.graph().num_nodes(), before);
}

TEST(FusionIrTest, MeanDividedByAnotherCountIsNotALayerNorm) {
  // jnp.var(ddof=1)-like divisor: 15 for 16 elements.
  Model m = ParseIr(KeepdimsLayerNormIr(23, /*eps_inside=*/true, 15));
  size_t before = m.graph().num_nodes();
  FuseAndCompare(m, false);
  EXPECT_EQ(m.graph().num_nodes(), before);
}

TEST(FusionIrTest, LayerNormBelowOpset17IsLeftAlone) {
  Model m = ParseIr(KeepdimsLayerNormIr(16, /*eps_inside=*/true, 16));
  size_t before = m.graph().num_nodes();
  FuseAndCompare(m, false);
  EXPECT_EQ(m.graph().num_nodes(), before);
}

TEST(FusionIrTest, SoftmaxWithKeepdimsAndExplicitExpand) {
  Model m = ParseIr(R"(
    model ir_version=10 opsets={"": 23}
    graph g(%x: f32[4,5]) -> (%out: f32[4,5]) {
      init %i: i64[1] = i64[1]{1}
      init %i_1: i64[2] = i64[2]{4, 5}
      %m: f32[4,1] = ReduceMax(%x, %i) {keepdims=1}
      %me: f32[4,5] = Expand(%m, %i_1)
      %s: f32[4,5] = Sub(%x, %me)
      %e: f32[4,5] = Exp(%s)
      %z: f32[4,1] = ReduceSum(%e, %i) {keepdims=1}
      %out: f32[4,5] = Div(%e, %z)
    })");
  std::string text = FuseAndCompare(m, true);
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "  %out: f32[4,5] = Softmax(%x) {axis=1}\n}\n"));
  EXPECT_EQ(m.graph().num_nodes(), 1u);
}

// x * 0.5 * (1 + tanh(c1 * (x + c2 * Pow(x, 3)))) with the 0.5 applied to x
// first, as hand-written models do, and given by a Constant node. c1 is
// sqrt(2 / pi), 0.7978845608028654f = 0.797884583; `c2` is the text of the
// f32 cubic coefficient.
std::string TanhGeluIr(absl::string_view c2) {
  return absl::Substitute(
      R"(
    model ir_version=10 opsets={"": 20}
    graph g(%x: f32[3,8]) -> (%out: f32[3,8]) {
      init %k: f32[] = f32[]{3}
      init %k_1: f32[] = f32[]{$0}
      init %k_2: f32[] = f32[]{0.797884583}
      init %k_3: f32[] = f32[]{1}
      %cube: f32[3,8] = Pow(%x, %k)
      %t: f32[3,8] = Mul(%cube, %k_1)
      %inner: f32[3,8] = Add(%t, %x)
      %arg: f32[3,8] = Mul(%inner, %k_2)
      %th: f32[3,8] = Tanh(%arg)
      %h: f32[3,8] = Add(%th, %k_3)
      %cn: f32[] = Constant() {value_float=0.5}
      %hx: f32[3,8] = Mul(%cn, %x)
      %out: f32[3,8] = Mul(%hx, %h)
    })",
      c2);
}

TEST(FusionIrTest, TanhGeluWithPowAndOtherAssociation) {
  Model m = ParseIr(TanhGeluIr("0.0447149985"));  // 0.044715f
  std::string text = FuseAndCompare(m, true);
  EXPECT_THAT(text, ::testing::HasSubstr("  %out: f32[3,8] = Gelu(%x) "
                                         "{approximate=\"tanh\"}\n}\n"));
  EXPECT_EQ(m.graph().num_nodes(), 1u);
}

TEST(FusionIrTest, TanhGeluWithAnotherCubicCoefficientIsLeftAlone) {
  Model m = ParseIr(TanhGeluIr("0.0447000004"));  // 0.0447f
  size_t before = m.graph().num_nodes();
  FuseAndCompare(m, false);
  EXPECT_EQ(m.graph().num_nodes(), before);
}

TEST(FusionIrTest, AFusedOutputKeepsItsGraphOutputName) {
  Model m = ParseIr(R"(
    model ir_version=10 opsets={"": 23}
    graph g(%x: f32[2,4]) -> (%out: f32[2,4]) {
      %sig: f32[2,4] = Sigmoid(%x)
      %out: f32[2,4] = Mul(%x, %sig)
    })");
  Model m24 = ParseIr(R"(
    model ir_version=10 opsets={"": 24}
    graph g(%x: f32[2,4]) -> (%out: f32[2,4]) {
      %sig: f32[2,4] = Sigmoid(%x)
      %out: f32[2,4] = Mul(%sig, %x)
    })");
  FuseAndCompare(m, false);  // Swish needs opset 24
  std::string text = FuseAndCompare(m24, true);
  EXPECT_EQ(text,
            "graph g(%x: f32[2,4]) -> (%out: f32[2,4]) {\n"
            "  %out: f32[2,4] = Swish(%x) {alpha=1.0}\n"
            "}\n");
}

// ---- Attention (FusionOptions::fuse_attention) ----

// softmax(scale q k^T + mask) v over q [2,3,4,8], k [2,3,5,8], v [2,3,5,6]
// (B=2 H=3 T=4 S=5 D=8 Dv=6, all different so a layout slip shows), k
// transposed by a Transpose as einsum-to-matmul leaves it.
struct AttentionSpec {
  enum class Scale {
    kMulScores,  // (q k^T) * 1/sqrt(8)
    kDivQuery,   // (q / sqrt(8)) k^T, Flax's form
    kNegative,   // (q k^T) * -1/sqrt(8): Attention's scale must be > 0
    kPerHead,    // (q k^T) * c[1,3,1,1]: not one number
    kInput,      // (q k^T) * c with c a graph input: not a constant
  };
  enum class Mask {
    kNone,
    kBias,              // + bias[1,1,4,5], a constant
    kInputBias,         // + bias[1,1,4,5], a graph input: any value
    kFullyMaskedBias,   // + a constant bias with a row of finfo.min
    kCausalWhere,       // Where(causal[1,1,4,5], ., finfo(f32).min)
    kMultiplied,        // * m[1,1,4,5] of 0/1: not an additive mask
    kFullyMaskedWhere,  // Where with a row of False (JAX: the mean of v)
    kSmallFillWhere,    // Where(causal, ., -1e9)
  };
  Scale scale = Scale::kMulScores;
  Mask mask = Mask::kNone;
  int softmax_axis = -1;
};

// finfo(f32).min, -FLT_MAX.
constexpr char kFinfoMin[] = "-3.40282347e+38";
// Causal over T=4 queries and S=5 keys (query i sees keys 0..i+1), a row
// per query; as a bool mask, as 0/1 floats, and with query 2 seeing nothing.
constexpr char kCausal[] =
    "true, true, false, false, false, "
    "true, true, true, false, false, "
    "true, true, true, true, false, "
    "true, true, true, true, true";
constexpr char kCausalFloats[] =
    "1, 1, 0, 0, 0, "
    "1, 1, 1, 0, 0, "
    "1, 1, 1, 1, 0, "
    "1, 1, 1, 1, 1";
constexpr char kCausalRow2Masked[] =
    "true, true, false, false, false, "
    "true, true, true, false, false, "
    "false, false, false, false, false, "
    "true, true, true, true, true";
// The bias 0.1f * (i % 7) - 0.3f for i < 20, a row per query; and with
// query 1's row all finfo.min.
constexpr char kBias[] =
    "-0.300000012, -0.200000018, -0.100000009, 0, 0.099999994, "
    "0.199999988, 0.300000012, -0.300000012, -0.200000018, -0.100000009, "
    "0, 0.099999994, 0.199999988, 0.300000012, -0.300000012, "
    "-0.200000018, -0.100000009, 0, 0.099999994, 0.199999988";
constexpr char kBiasRow1Masked[] =
    "-0.300000012, -0.200000018, -0.100000009, 0, 0.099999994, "
    "-3.40282347e+38, -3.40282347e+38, -3.40282347e+38, -3.40282347e+38, "
    "-3.40282347e+38, "
    "0, 0.099999994, 0.199999988, 0.300000012, -0.300000012, "
    "-0.200000018, -0.100000009, 0, 0.099999994, 0.199999988";

// The graph `spec` describes, as IR text. Its constants are named in the
// order they come: the scale's (%k_1, as %k is the key input; or %w), then
// the mask's (%w or %w_1; the bool %m, then the Where's fill %k_2 or %k_1).
// 1/sqrt(8.0f) is 0.353553385 in f32 and sqrt(8.0f) 2.82842708.
std::string AttentionIr(const AttentionSpec& spec, int opset) {
  using Scale = AttentionSpec::Scale;
  using Mask = AttentionSpec::Mask;
  std::string inputs = "%q: f32[2,3,4,8], %k: f32[2,3,5,8], %v: f32[2,3,5,6]";
  if (spec.mask == Mask::kInputBias) {
    absl::StrAppend(&inputs, ", %bias: f32[1,1,4,5]");
  }
  if (spec.scale == Scale::kInput) absl::StrAppend(&inputs, ", %c: f32[]");
  std::string inits;
  std::string nodes =
      "  %kt: f32[2,3,8,5] = Transpose(%k) {perm=[0, 1, 3, 2]}\n";
  std::string query = "%q";
  std::string factor;  // what the scores are multiplied by, if anything
  switch (spec.scale) {
    case Scale::kMulScores:
      inits += "  init %k_1: f32[] = f32[]{0.353553385}\n";
      factor = "%k_1";
      break;
    case Scale::kDivQuery:
      inits += "  init %k_1: f32[] = f32[]{2.82842708}\n";
      nodes += "  %qs: f32[2,3,4,8] = Div(%q, %k_1)\n";
      query = "%qs";
      break;
    case Scale::kNegative:
      inits += "  init %k_1: f32[] = f32[]{-0.353553385}\n";
      factor = "%k_1";
      break;
    case Scale::kPerHead:
      inits += "  init %w: f32[1,3,1,1] = f32[1,3,1,1]{0.25, 0.5, 1}\n";
      factor = "%w";
      break;
    case Scale::kInput:
      factor = "%c";
      break;
  }
  absl::StrAppend(&nodes, "  %scores: f32[2,3,4,5] = MatMul(", query,
                  ", %kt)\n");
  std::string logits = "%scores";
  if (!factor.empty()) {
    absl::StrAppend(&nodes, "  %scaled: f32[2,3,4,5] = Mul(%scores, ", factor,
                    ")\n");
    logits = "%scaled";
  }
  const bool scalar_scale = spec.scale == Scale::kMulScores ||
                            spec.scale == Scale::kDivQuery ||
                            spec.scale == Scale::kNegative;
  const std::string fill = scalar_scale ? "k_2" : "k_1";
  const std::string weights = spec.scale == Scale::kPerHead ? "w_1" : "w";
  switch (spec.mask) {
    case Mask::kNone:
      break;
    case Mask::kBias:
    case Mask::kFullyMaskedBias:
      absl::StrAppend(
          &inits, "  init %", weights, ": f32[1,1,4,5] = f32[1,1,4,5]{",
          spec.mask == Mask::kBias ? kBias : kBiasRow1Masked, "}\n");
      absl::StrAppend(&nodes, "  %biased: f32[2,3,4,5] = Add(", logits, ", %",
                      weights, ")\n");
      logits = "%biased";
      break;
    case Mask::kInputBias:
      absl::StrAppend(&nodes, "  %biased: f32[2,3,4,5] = Add(", logits,
                      ", %bias)\n");
      logits = "%biased";
      break;
    case Mask::kMultiplied:
      absl::StrAppend(&inits, "  init %", weights,
                      ": f32[1,1,4,5] = f32[1,1,4,5]{", kCausalFloats, "}\n");
      absl::StrAppend(&nodes, "  %masked: f32[2,3,4,5] = Mul(", logits, ", %",
                      weights, ")\n");
      logits = "%masked";
      break;
    case Mask::kCausalWhere:
    case Mask::kFullyMaskedWhere:
    case Mask::kSmallFillWhere:
      absl::StrAppend(
          &inits, "  init %m: bool[1,1,4,5] = bool[1,1,4,5]{",
          spec.mask == Mask::kFullyMaskedWhere ? kCausalRow2Masked : kCausal,
          "}\n", "  init %", fill, ": f32[] = f32[]{",
          spec.mask == Mask::kSmallFillWhere ? "-1e+09" : kFinfoMin, "}\n");
      absl::StrAppend(&nodes, "  %masked: f32[2,3,4,5] = Where(%m, ", logits,
                      ", %", fill, ")\n");
      logits = "%masked";
      break;
  }
  return absl::StrCat("model ir_version=10 opsets={\"\": ", opset, "}\n",
                      "graph g(", inputs, ") -> (%out: f32[2,3,4,6]) {\n",
                      inits, nodes, "  %probs: f32[2,3,4,5] = Softmax(", logits,
                      ") {axis=", spec.softmax_axis, "}\n",
                      "  %out: f32[2,3,4,6] = MatMul(%probs, %v)\n"
                      "}\n");
}

std::string FusedAttentionText(const AttentionSpec& spec) {
  Model m = ParseIr(AttentionIr(spec, /*opset=*/23));
  return FuseAndCompare(m, true);
}

void ExpectNoAttentionFusion(const AttentionSpec& spec, int opset = 23) {
  Model m = ParseIr(AttentionIr(spec, opset));
  const size_t before = m.graph().num_nodes();
  std::string text = FuseAndCompare(m, false);
  EXPECT_EQ(m.graph().num_nodes(), before) << text;
  EXPECT_THAT(text, Not(HasSubstr("Attention")));
}

TEST(FusionIrTest, ScaledScoresWithAdditiveBiasBecomeAttention) {
  AttentionSpec spec;
  spec.mask = AttentionSpec::Mask::kBias;
  EXPECT_EQ(FusedAttentionText(spec),
            "graph g(%q: f32[2,3,4,8], %k: f32[2,3,5,8], %v: f32[2,3,5,6]) "
            "-> (%out: f32[2,3,4,6]) {\n"
            // The scale's constant, orphaned; the pipeline prunes it.
            "  init %k_1: f32[] = f32[]{0.353553}\n"
            "  init %w: f32[1,1,4,5] = f32[1,1,4,5]{-0.3, -0.2, -0.1, 0, 0.1, "
            "0.2, 0.3, -0.3, ... (20 elements, fnv1a 0487dfcbf4a731e1)}\n"
            "  %kt: f32[2,3,8,5] = Transpose(%k) {perm=[0, 1, 3, 2]}\n"
            "  %Transpose: f32[2,3,5,8] = Transpose(%kt) {perm=[0, 1, 3, 2]}\n"
            "  %out: f32[2,3,4,6] = Attention(%q, %Transpose, %v, %w) "
            "{scale=0.353553}\n"
            "}\n");
}

TEST(FusionIrTest, QueryDividedBySqrtDWithCausalWhereBecomesAttention) {
  // Flax: q / sqrt(d) before the product, jnp.where(mask, s, finfo.min).
  AttentionSpec spec;
  spec.scale = AttentionSpec::Scale::kDivQuery;
  spec.mask = AttentionSpec::Mask::kCausalWhere;
  std::string text = FusedAttentionText(spec);
  EXPECT_THAT(text, HasSubstr("= Attention(%q, %Transpose, %v, %m) "
                              "{scale=0.353553}"));
  EXPECT_THAT(text, Not(HasSubstr("Softmax")));
  EXPECT_THAT(text, Not(HasSubstr("Where")));
  EXPECT_THAT(text, Not(HasSubstr("Div")));
}

TEST(FusionIrTest, UnmaskedAttentionOverTheLastAxisNumberedThree) {
  AttentionSpec spec;
  spec.softmax_axis = 3;
  EXPECT_THAT(FusedAttentionText(spec),
              HasSubstr("= Attention(%q, %Transpose, %v) {scale=0.353553}"));
}

TEST(FusionIrTest, AttentionNearMissesStayUnfused) {
  using Scale = AttentionSpec::Scale;
  using Mask = AttentionSpec::Mask;
  const std::vector<AttentionSpec> near_misses = {
      {Scale::kNegative, Mask::kNone, -1},
      {Scale::kPerHead, Mask::kNone, -1},
      {Scale::kInput, Mask::kNone, -1},
      {Scale::kMulScores, Mask::kNone, 2},  // softmax over the queries
      {Scale::kMulScores, Mask::kMultiplied, -1},
      // A query with every key masked averages v in JAX (softmax of equal
      // logits) and is zeros in ONNX Runtime's Attention.
      {Scale::kMulScores, Mask::kFullyMaskedWhere, -1},
      {Scale::kMulScores, Mask::kFullyMaskedBias, -1},
      // A bias computed at run time could mask a whole row.
      {Scale::kMulScores, Mask::kInputBias, -1},
      {Scale::kMulScores, Mask::kSmallFillWhere, -1},
  };
  for (size_t i = 0; i < near_misses.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("near miss ", i));
    ExpectNoAttentionFusion(near_misses[i]);
  }
  ExpectNoAttentionFusion(AttentionSpec(), /*opset=*/22);
}

}  // namespace
}  // namespace jax2onnx::ir
