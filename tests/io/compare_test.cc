// Tests of the tolerance rules in CompareArrays: |got - expected| <= atol +
// rtol * |expected| for floats, NaN == NaN, exact infinities, exact ints and
// bools, dtype defaults and header overrides, and the worst-element report.
#include "jaxpr/io/compare.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jax2onnx::jaxpr {
namespace {

using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Array Make(DType dtype, std::vector<int64_t> shape,
           const std::vector<double>& values) {
  Array a(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) a.SetFromDouble(i, values[i]);
  return a;
}

TEST(CompareTest, ToleranceIsAtolPlusRtolTimesExpected) {
  // rtol 0.1, atol 0.5: expected 10 allows |diff| <= 0.5 + 1.0 = 1.5.
  const Tolerance tol{0.1, 0.5};
  EXPECT_TRUE(CompareArrays(Make(DType::kF64, {}, {10}),
                            Make(DType::kF64, {}, {11.5}), tol)
                  .ok);
  EXPECT_TRUE(CompareArrays(Make(DType::kF64, {}, {10}),
                            Make(DType::kF64, {}, {8.5}), tol)
                  .ok);
  EXPECT_FALSE(CompareArrays(Make(DType::kF64, {}, {10}),
                             Make(DType::kF64, {}, {11.51}), tol)
                   .ok);
  // The relative part scales with |expected|, not |got|: expected -10
  // still allows 1.5.
  EXPECT_TRUE(CompareArrays(Make(DType::kF64, {}, {-10}),
                            Make(DType::kF64, {}, {-11.5}), tol)
                  .ok);
  // Expected 0 leaves only atol.
  EXPECT_FALSE(CompareArrays(Make(DType::kF64, {}, {0}),
                             Make(DType::kF64, {}, {0.6}), tol)
                   .ok);
}

TEST(CompareTest, NaNEqualsNaNButNotANumber) {
  const Tolerance tol{1e-5, 1e-5};
  EXPECT_TRUE(CompareArrays(Make(DType::kF32, {2}, {kNaN, 1}),
                            Make(DType::kF32, {2}, {kNaN, 1}), tol)
                  .ok);
  EXPECT_FALSE(CompareArrays(Make(DType::kF32, {1}, {kNaN}),
                             Make(DType::kF32, {1}, {0}), tol)
                   .ok);
  EXPECT_FALSE(CompareArrays(Make(DType::kF32, {1}, {0}),
                             Make(DType::kF32, {1}, {kNaN}), tol)
                   .ok);
}

TEST(CompareTest, InfinitiesMustMatchExactly) {
  // Even a huge tolerance does not let inf match a finite value or -inf.
  const Tolerance huge{1e30, 1e300};
  EXPECT_TRUE(CompareArrays(Make(DType::kF64, {2}, {kInf, -kInf}),
                            Make(DType::kF64, {2}, {kInf, -kInf}), huge)
                  .ok);
  EXPECT_FALSE(CompareArrays(Make(DType::kF64, {1}, {kInf}),
                             Make(DType::kF64, {1}, {1e308}), huge)
                   .ok);
  EXPECT_FALSE(CompareArrays(Make(DType::kF64, {1}, {kInf}),
                             Make(DType::kF64, {1}, {-kInf}), huge)
                   .ok);
  EXPECT_FALSE(CompareArrays(Make(DType::kF64, {1}, {1}),
                             Make(DType::kF64, {1}, {kInf}), huge)
                   .ok);
}

TEST(CompareTest, IntegersAndBoolsAreExactWhateverTheTolerance) {
  const Tolerance loose{0.5, 10};
  EXPECT_FALSE(CompareArrays(Make(DType::kI32, {1}, {100}),
                             Make(DType::kI32, {1}, {101}), loose)
                   .ok);
  EXPECT_FALSE(CompareArrays(Make(DType::kBool, {2}, {1, 0}),
                             Make(DType::kBool, {2}, {1, 1}), loose)
                   .ok);
  // Resolving header values for an int dtype keeps it exact.
  const Tolerance t = ResolveTolerance(DType::kI64, 0.5, 10);
  EXPECT_EQ(t.rtol, 0);
  EXPECT_EQ(t.atol, 0);
  // u64 values above 2^53 differ by 1, which a double could not show.
  Array e(DType::kU64, {1}), g(DType::kU64, {1});
  e.typed_data<uint64_t>()[0] = 18446744073709551615ull;
  g.typed_data<uint64_t>()[0] = 18446744073709551614ull;
  EXPECT_FALSE(CompareArrays(e, g).ok);
  Array e64(DType::kI64, {1}), g64(DType::kI64, {1});
  e64.typed_data<int64_t>()[0] = (int64_t{1} << 62) + 1;
  g64.typed_data<int64_t>()[0] = int64_t{1} << 62;
  EXPECT_FALSE(CompareArrays(e64, g64).ok);
}

TEST(CompareTest, DefaultsByDTypeAndHeaderOverrides) {
  EXPECT_EQ(DefaultTolerance(DType::kF32).rtol, 1e-5);
  EXPECT_EQ(DefaultTolerance(DType::kF32).atol, 1e-5);
  EXPECT_EQ(DefaultTolerance(DType::kF64).rtol, 1e-7);
  EXPECT_EQ(DefaultTolerance(DType::kF16).atol, 1e-2);
  EXPECT_EQ(DefaultTolerance(DType::kBF16).rtol, 1e-2);
  const Tolerance only_rtol = ResolveTolerance(DType::kF32, 1e-3, std::nullopt);
  EXPECT_EQ(only_rtol.rtol, 1e-3);
  EXPECT_EQ(only_rtol.atol, 1e-5);
  // f32 default: expected 1 allows 2e-5; 1.00003 fails, 1.00001 passes.
  EXPECT_FALSE(CompareArrays(Make(DType::kF32, {}, {1}),
                             Make(DType::kF32, {}, {1.00003}))
                   .ok);
  EXPECT_TRUE(CompareArrays(Make(DType::kF32, {}, {1}),
                            Make(DType::kF32, {}, {1.00001}))
                  .ok);
  // A header tolerance loosens it.
  EXPECT_TRUE(CompareArrays(Make(DType::kF32, {}, {1}),
                            Make(DType::kF32, {}, {1.00003}), 1e-4, 1e-4)
                  .ok);
}

TEST(CompareTest, Float16UsesItsDecodedValues) {
  // 1.0 vs 1.0078125 (the next f16 above 1 is 1 + 2^-10; 1 + 2^-7 is
  // exactly representable): |diff| 0.0078 <= 0.01 + 0.01 passes; 1.03 fails.
  EXPECT_TRUE(CompareArrays(Make(DType::kF16, {}, {1.0}),
                            Make(DType::kF16, {}, {1.0078125}))
                  .ok);
  EXPECT_FALSE(CompareArrays(Make(DType::kF16, {}, {1.0}),
                             Make(DType::kF16, {}, {1.03125}))
                   .ok);
}

TEST(CompareTest, ReportsWorstElementWithIndex) {
  // Differences 0.5 at [0,1] and 3 at [1,2] (both beyond atol 0.1): the
  // worst is [1,2].
  const CompareResult r = CompareArrays(
      Make(DType::kF64, {2, 3}, {0, 1, 2, 3, 4, 5}),
      Make(DType::kF64, {2, 3}, {0, 1.5, 2, 3, 4, 8}), Tolerance{0, 0.1});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.num_mismatches, 2);
  EXPECT_EQ(r.worst_index, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(r.worst_got, "8");
  EXPECT_EQ(r.worst_expected, "5");
  EXPECT_THAT(r.Summary(), HasSubstr("2 of 6 elements differ; worst at [1,2]: "
                                     "got 8, expected 5"));
  // A NaN mismatch outranks any finite difference.
  const CompareResult n =
      CompareArrays(Make(DType::kF64, {3}, {0, 1, 2}),
                    Make(DType::kF64, {3}, {100, kNaN, 2}), Tolerance{0, 0.1});
  EXPECT_EQ(n.worst_index, (std::vector<int64_t>{1}));
}

TEST(CompareTest, DTypeAndShapeMismatchesAreStructural) {
  const CompareResult d = CompareArrays(Make(DType::kF32, {2}, {1, 2}),
                                        Make(DType::kF64, {2}, {1, 2}));
  EXPECT_FALSE(d.ok);
  EXPECT_THAT(d.Summary(), HasSubstr("dtype float64 but expected float32"));
  const CompareResult s = CompareArrays(Make(DType::kF32, {2}, {1, 2}),
                                        Make(DType::kF32, {1, 2}, {1, 2}));
  EXPECT_FALSE(s.ok);
  EXPECT_THAT(s.Summary(), HasSubstr("shape"));
}

TEST(CompareTest, ComplexComparesBothParts) {
  Array e(DType::kC64, {1}), g(DType::kC64, {1});
  e.typed_data<float>()[0] = 1;
  e.typed_data<float>()[1] = 2;
  g.typed_data<float>()[0] = 1;
  g.typed_data<float>()[1] = 2.5;  // only the imaginary part differs
  EXPECT_FALSE(CompareArrays(e, g).ok);
  g.typed_data<float>()[1] = 2;
  EXPECT_TRUE(CompareArrays(e, g).ok);
}

TEST(CompareTest, ZeroSizeArraysAreEqual) {
  EXPECT_TRUE(
      CompareArrays(Array(DType::kF32, {0, 3}), Array(DType::kF32, {0, 3})).ok);
}

}  // namespace
}  // namespace jax2onnx::jaxpr
