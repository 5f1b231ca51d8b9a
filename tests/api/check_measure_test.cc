// check's per-output measurement (api/output_compare.h): the max absolute
// and relative errors cover every element, passing or not, and each output
// names the tolerance it was held to and where that came from (override,
// bundle header, dtype default, exact). The planted differences are powers
// of two, so every expected number below is derived by hand in a comment.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "api/output_compare.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/bundle.h"

namespace jax2onnx::api {
namespace {

using jaxpr::Array;
using jaxpr::DType;
using ::testing::HasSubstr;

Array Vector(DType dtype, const std::vector<double>& values) {
  Array a(dtype, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) a.SetFromDouble(i, values[i]);
  return a;
}

jaxpr::Bundle AddBundle(const std::string& header, const std::string& type) {
  const std::string text = header + "{ lambda ; a:" + type + " b:" + type +
                           ". let\n    c:" + type + " = add a b\n  in (c,) }\n";
  auto bundle = jaxpr::BundleFromParts("add", text, "add.jaxpr", {});
  EXPECT_TRUE(bundle.ok()) << bundle.status();
  return *std::move(bundle);
}

// got = [4, 2, 0.5]; the oracle differs by 2^-14 at [0] and by 2^-16 at [2]:
//   max_abs = 2^-14 = 6.103515625e-05 (at [0])
//   max_rel = 2^-16 / (0.5 + 2^-16) = 3.0516e-05 (at [2], larger than
//             2^-14 / (4 + 2^-14) = 1.5258e-05 at [0])
// All within rtol 1e-5, atol 1e-4 (allowed at [0]: 1e-4 + 4e-5).
const double kAbs = std::ldexp(1.0, -14);
const double kRel = std::ldexp(1.0, -16) / (0.5 + std::ldexp(1.0, -16));

std::vector<Array> Planted(DType dtype) {
  return {Vector(dtype, {4 + kAbs, 2, 0.5 + std::ldexp(1.0, -16)})};
}
std::vector<Array> Got(DType dtype) { return {Vector(dtype, {4, 2, 0.5})}; }

TEST(CheckMeasureTest, PassingOutputReportsErrorsOverAllElementsAndHeader) {
  const jaxpr::Bundle bundle =
      AddBundle("# rtol: 1e-05\n# atol: 0.0001\n", "f32[3]");
  std::string failure;
  const std::vector<OutputCheck> checks =
      CompareOutputs(bundle, {}, Planted(DType::kF32), Got(DType::kF32),
                     /*oracle_is_expected=*/true, &failure);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_TRUE(checks[0].ok) << checks[0].summary;
  EXPECT_EQ(failure, "");
  EXPECT_DOUBLE_EQ(checks[0].max_abs_error, kAbs);
  EXPECT_DOUBLE_EQ(checks[0].max_rel_error, kRel);
  EXPECT_EQ(checks[0].rtol, 1e-5);
  EXPECT_EQ(checks[0].atol, 1e-4);
  EXPECT_EQ(checks[0].tolerance_source, "header");
  EXPECT_EQ(MeasuredErrors(checks[0]),
            "max_abs=6.1e-05 max_rel=3.05e-05 (rtol=1e-05 atol=0.0001 from "
            "header)");
}

TEST(CheckMeasureTest, OverrideBeatsTheHeaderPerComponent) {
  const jaxpr::Bundle bundle =
      AddBundle("# rtol: 1e-05\n# atol: 0.0001\n", "f32[3]");
  std::string failure;
  // atol 1e-5 from the override, rtol 1e-5 from the header: [0] allows
  // 1e-5 + 4e-5 = 5e-5 < 2^-14, so the output now fails.
  ToleranceOverride atol_only;
  atol_only.atol = 1e-5;
  std::vector<OutputCheck> checks =
      CompareOutputs(bundle, {}, Planted(DType::kF32), Got(DType::kF32), true,
                     &failure, atol_only);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_FALSE(checks[0].ok);
  EXPECT_DOUBLE_EQ(checks[0].max_abs_error, kAbs);
  EXPECT_EQ(checks[0].atol, 1e-5);
  EXPECT_EQ(checks[0].rtol, 1e-5);
  EXPECT_EQ(checks[0].tolerance_source, "rtol header, atol flag");
  EXPECT_THAT(failure, HasSubstr("output 0"));

  ToleranceOverride both;
  both.rtol = 0;
  both.atol = 1e-3;
  checks = CompareOutputs(bundle, {}, Planted(DType::kF32), Got(DType::kF32),
                          true, &failure, both);
  EXPECT_TRUE(checks[0].ok) << checks[0].summary;
  EXPECT_EQ(checks[0].tolerance_source, "flag");
  EXPECT_EQ(checks[0].rtol, 0);
  EXPECT_EQ(checks[0].atol, 1e-3);
}

TEST(CheckMeasureTest, DefaultToleranceIsNamed) {
  const jaxpr::Bundle bundle = AddBundle("", "f64[3]");
  std::string failure;
  // f64 default 1e-7: 2^-14 fails; the errors are reported all the same.
  const std::vector<OutputCheck> checks = CompareOutputs(
      bundle, {}, Planted(DType::kF64), Got(DType::kF64), true, &failure);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_FALSE(checks[0].ok);
  EXPECT_DOUBLE_EQ(checks[0].max_abs_error, kAbs);
  EXPECT_DOUBLE_EQ(checks[0].max_rel_error, kRel);
  EXPECT_EQ(checks[0].rtol, 1e-7);
  EXPECT_EQ(checks[0].tolerance_source, "default");
}

TEST(CheckMeasureTest, NanInfinityAndZeroOracleFollowTheComparisonRules) {
  const jaxpr::Bundle bundle = AddBundle("", "f64[4]");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::string failure;
  // NaN against NaN and inf against inf are equal: errors 0.
  std::vector<OutputCheck> checks =
      CompareOutputs(bundle, {}, {Vector(DType::kF64, {nan, inf, -inf, 0})},
                     {Vector(DType::kF64, {nan, inf, -inf, 0})}, true,
                     &failure);
  EXPECT_TRUE(checks[0].ok);
  EXPECT_EQ(checks[0].max_abs_error, 0);
  EXPECT_EQ(checks[0].max_rel_error, 0);
  // A nonzero result where the oracle is 0: |diff| 1e-9 (within atol 1e-7),
  // relative error inf (numpy's convention).
  checks = CompareOutputs(bundle, {}, {Vector(DType::kF64, {1, 1, 1, 0})},
                          {Vector(DType::kF64, {1, 1, 1, 1e-9})}, true,
                          &failure);
  EXPECT_TRUE(checks[0].ok);
  EXPECT_DOUBLE_EQ(checks[0].max_abs_error, 1e-9);
  EXPECT_TRUE(std::isinf(checks[0].max_rel_error));
  // NaN where the oracle is finite: inf both ways, and a failure.
  checks = CompareOutputs(bundle, {}, {Vector(DType::kF64, {1, 1, 1, 1})},
                          {Vector(DType::kF64, {1, nan, 1, 1})}, true,
                          &failure);
  EXPECT_FALSE(checks[0].ok);
  EXPECT_TRUE(std::isinf(checks[0].max_abs_error));
}

TEST(CheckMeasureTest, IntegersAreExactAndMeasured) {
  const jaxpr::Bundle bundle =
      AddBundle("# rtol: 0.5\n# atol: 3\n", "i32[3]");
  std::string failure;
  // |7 - 5| = 2 at [1] fails even with a header (integers are exact);
  // relative 2 / 5 = 0.4.
  const std::vector<OutputCheck> checks = CompareOutputs(
      bundle, {}, {Vector(DType::kI32, {1, 5, 0})},
      {Vector(DType::kI32, {1, 7, 0})}, true, &failure);
  EXPECT_FALSE(checks[0].ok);
  EXPECT_EQ(checks[0].max_abs_error, 2);
  EXPECT_DOUBLE_EQ(checks[0].max_rel_error, 0.4);
  EXPECT_EQ(checks[0].tolerance_source, "exact");
  EXPECT_EQ(checks[0].rtol, 0);
  EXPECT_EQ(checks[0].atol, 0);
}

}  // namespace
}  // namespace jax2onnx::api
