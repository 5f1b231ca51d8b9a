// check's f32 noise bound (api/output_compare.h): a correct conversion of a
// long f32 reduction that the fixed 1e-5 rule rejects passes, while wrong
// models (a contraction one term short, a result scaled by 1 + 1e-4, swapped
// operands) and exact dtypes still fail, and a bundle's rtol/atol header
// still decides alone. ORT outputs come from models converted by both
// pipelines; the oracle is the reference interpreter.
#include "api/output_compare.h"

#include <cmath>
#include <string>
#include <vector>

#include "api/check.h"
#include "api/convert_internal.h"
#include "api/ort_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/io/compare.h"

namespace jax2onnx::api {
namespace {

using jaxpr::Array;
using ::testing::HasSubstr;

const char kDotBundle[] =
    JAX2ONNX_SOURCE_DIR "/testdata/tolerance/dot_10000_cancelling.jaxpr";

// The same program with the contraction one term short (an off-by-one bug):
// the product a[4999] * b[4999] of the second half is left out.
const char kDotOneShort[] = R"({ lambda ; a:f32[5000] b:f32[5000]. let
    c:f32[10000] = concatenate[dimension=0] a a
    d:f32[5000] = neg b
    e:f32[10000] = concatenate[dimension=0] b d
    g:f32[9999] = slice[limit_indices=(9999,) start_indices=(0,) strides=None] c
    h:f32[9999] = slice[limit_indices=(9999,) start_indices=(0,) strides=None] e
    f:f32[] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=float32
    ] g h
  in (f,) })";

struct Outputs {
  std::vector<Array> inputs, expected, got;
};

class NoiseToleranceTest : public ::testing::TestWithParam<Pipeline> {
 protected:
  void SetUp() override {
    std::string reason;
    if (!OrtRunner::Shared().IsAvailable(&reason)) {
      GTEST_SKIP() << "ONNX Runtime: " << reason;
    }
  }
  // Converts `model_bundle`, runs it in ORT on `oracle_bundle`'s seeded
  // inputs and evaluates `oracle_bundle` with the interpreter.
  Outputs RunBoth(const jaxpr::Bundle& oracle_bundle,
              const jaxpr::Bundle& model_bundle, uint64_t seed) {
    Outputs run;
    CheckOptions options;
    options.seed = seed;
    auto inputs = InputsFor(oracle_bundle, options);
    EXPECT_TRUE(inputs.ok()) << inputs.status();
    std::string oracle;
    auto expected = OracleOutputs(oracle_bundle, *inputs, &oracle);
    EXPECT_TRUE(expected.ok()) << expected.status();
    EXPECT_EQ(oracle, "interpreter");
    auto model = ConvertWithPipeline(GetParam(), model_bundle, ConvertOptions{});
    EXPECT_TRUE(model.ok()) << model.status();
    auto got = RunModel(*model, *inputs, OrtRunner::Shared());
    EXPECT_TRUE(got.ok()) << got.status();
    run.inputs = *inputs;
    run.expected = *expected;
    run.got = *got;
    return run;
  }
};

absl::StatusOr<jaxpr::Bundle> FromText(const std::string& text) {
  return jaxpr::BundleFromParts("t", text, "t.jaxpr", {});
}

TEST_P(NoiseToleranceTest, DotOverTenThousandTermsFailsFixedRulePassesNoise) {
  auto bundle = jaxpr::LoadBundle(kDotBundle);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  int fixed_failures = 0;
  for (uint64_t seed = 0; seed < 6; ++seed) {
    Outputs run = RunBoth(*bundle, *bundle, seed);
    ASSERT_EQ(run.got.size(), 1u);
    // The old rule: a fixed 1e-5 against the interpreter's f32 result.
    if (!jaxpr::CompareArrays(run.expected[0], run.got[0]).ok) {
      ++fixed_failures;
    }
    std::string failure;
    std::vector<OutputCheck> checks = CompareOutputs(
        *bundle, run.inputs, run.expected, run.got, false, &failure);
    EXPECT_EQ(failure, "") << "seed " << seed;
    ASSERT_EQ(checks.size(), 1u);
    if (checks[0].noise_checked) {
      EXPECT_THAT(checks[0].summary, HasSubstr("ok within the f32 noise bound"));
      EXPECT_EQ(checks[0].tolerance_source, "noise-scaled");
      // The error against the oracle over all elements is still reported,
      // and it is what the fixed rule rejected.
      EXPECT_GT(checks[0].max_abs_error, 1e-5);
      EXPECT_GT(checks[0].sequential_f32_error, 0);
      EXPECT_LE(checks[0].f64_error, kNoiseMultiple *
                                         checks[0].sequential_f32_error +
                                         1e-5);
    }
  }
  // The exact value is 0 and f32 rounding leaves ~1e-5..1e-4: the fixed
  // rule rejects most of these correct results.
  EXPECT_GE(fixed_failures, 3);
}

TEST_P(NoiseToleranceTest, ContractionOneTermShortStillFails) {
  auto bundle = jaxpr::LoadBundle(kDotBundle);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  auto wrong = FromText(kDotOneShort);
  ASSERT_TRUE(wrong.ok()) << wrong.status();
  int checked = 0;
  for (uint64_t seed = 0; seed < 6; ++seed) {
    Outputs run = RunBoth(*bundle, *wrong, seed);
    // The dropped term is the model's error (exact result 0); the test is
    // meaningful only if it exceeds the noise scale of this sum (~0.05).
    const double dropped = std::fabs(run.inputs[0].GetAsDouble(4999) *
                                     run.inputs[1].GetAsDouble(4999));
    if (dropped < 0.5) continue;
    ++checked;
    std::string failure;
    std::vector<OutputCheck> checks = CompareOutputs(
        *bundle, run.inputs, run.expected, run.got, false, &failure);
    EXPECT_THAT(failure, HasSubstr("beyond the f32 noise bound too"))
        << "seed " << seed;
    EXPECT_TRUE(checks[0].noise_checked);
    EXPECT_FALSE(checks[0].ok);
  }
  EXPECT_GE(checked, 2) << "too few seeds with a dropped term above 0.5";
}

TEST_P(NoiseToleranceTest, ScaledResultAndSwappedOperandsStillFail) {
  // Elementwise f32: no sums, so the noise scale is the final rounding.
  const char kSub[] = R"({ lambda ; a:f32[64] b:f32[64]. let
    c:f32[64] = sub a b
  in (c,) })";
  const char kSubSwapped[] = R"({ lambda ; a:f32[64] b:f32[64]. let
    c:f32[64] = sub b a
  in (c,) })";
  auto bundle = FromText(kSub);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  auto swapped = FromText(kSubSwapped);
  ASSERT_TRUE(swapped.ok()) << swapped.status();
  Outputs run = RunBoth(*bundle, *swapped, 1);
  std::string failure;
  CompareOutputs(*bundle, run.inputs, run.expected, run.got, false, &failure);
  EXPECT_THAT(failure, HasSubstr("beyond the f32 noise bound too"));

  Outputs right = RunBoth(*bundle, *bundle, 1);
  CompareOutputs(*bundle, right.inputs, right.expected, right.got, false,
                 &failure);
  EXPECT_EQ(failure, "");
  // A bug that scales results by 1 + 1e-4 (~840 ulps).
  Array scaled = right.got[0];
  for (int64_t i = 0; i < scaled.num_elements(); ++i) {
    scaled.SetFromDouble(i, scaled.GetAsDouble(i) * (1 + 1e-4));
  }
  CompareOutputs(*bundle, right.inputs, right.expected, {scaled}, false,
                 &failure);
  EXPECT_THAT(failure, HasSubstr("beyond the f32 noise bound too"));
}

TEST_P(NoiseToleranceTest, IntegersAndBoolsStayExact) {
  const char kInts[] = R"({ lambda ; a:i32[10000] b:i32[10000]. let
    c:i32[] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=int32
    ] a b
    d:bool[10000] = lt a b
  in (c, d) })";
  auto bundle = FromText(kInts);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  Outputs run = RunBoth(*bundle, *bundle, 2);
  std::string failure;
  CompareOutputs(*bundle, run.inputs, run.expected, run.got, false, &failure);
  EXPECT_EQ(failure, "");
  std::vector<Array> off = run.got;
  off[0].SetFromInt64(0, off[0].GetAsInt64(0) + 1);
  off[1].SetFromInt64(7, 1 - off[1].GetAsInt64(7));
  std::vector<OutputCheck> checks =
      CompareOutputs(*bundle, run.inputs, run.expected, off, false, &failure);
  EXPECT_THAT(failure, HasSubstr("output 0"));
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_FALSE(checks[0].ok);
  EXPECT_FALSE(checks[1].ok);
  EXPECT_FALSE(checks[0].noise_checked);
  EXPECT_FALSE(checks[1].noise_checked);
}

TEST_P(NoiseToleranceTest, HeaderToleranceDecidesAlone) {
  auto bundle = jaxpr::LoadBundle(kDotBundle);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  for (uint64_t seed = 0; seed < 6; ++seed) {
    Outputs run = RunBoth(*bundle, *bundle, seed);
    if (jaxpr::CompareArrays(run.expected[0], run.got[0]).ok) continue;
    // The same bundle with an explicit header at the old default.
    jaxpr::Bundle strict = *bundle;
    strict.rtol = 1e-5;
    strict.atol = 1e-5;
    std::string failure;
    std::vector<OutputCheck> checks = CompareOutputs(
        strict, run.inputs, run.expected, run.got, false, &failure);
    EXPECT_THAT(failure, HasSubstr("output 0"));
    EXPECT_FALSE(checks[0].noise_checked);
    return;
  }
  GTEST_SKIP() << "ORT met the fixed rule on every seed";
}

INSTANTIATE_TEST_SUITE_P(BothPipelines, NoiseToleranceTest,
                         ::testing::Values(Pipeline::kLegacy, Pipeline::kIr),
                         [](const auto& info) {
                           return std::string(PipelineName(info.param));
                         });

}  // namespace
}  // namespace jax2onnx::api
