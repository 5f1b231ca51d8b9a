// Issue 24's wrong numbers on special inputs (NaN, +-inf, subnormals, the
// largest finite values), each converted by both pipelines and run in ONNX
// Runtime against a value derived by hand in the comment next to it (and,
// where the reference interpreter computes the same thing, against it too).
// The corpus run `corpus_special_values_*` finds such cases; these pin the
// fixed ones with independent expected values.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/check.h"
#include "api/convert_internal.h"
#include "api/ort_runner.h"
#include "api/router.h"
#include "gtest/gtest.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/text/parser.h"

namespace jax2onnx::api {
namespace {

using jaxpr::Array;
using jaxpr::DType;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

Array Values(DType dtype, std::vector<int64_t> shape,
             const std::vector<double>& values) {
  Array a(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) {
    a.SetFromDouble(static_cast<int64_t>(i), values[i]);
  }
  return a;
}

class SpecialValuesTest : public ::testing::TestWithParam<Pipeline> {
 protected:
  // Converts `text` with the pipeline under test and runs it in ONNX
  // Runtime on `inputs`; also evaluates it with the reference interpreter.
  void Run(const std::string& text, const std::vector<Array>& inputs,
           std::vector<Array>* onnx, std::vector<Array>* interpreter) {
    std::string reason;
    if (!OrtRunner::Shared().IsAvailable(&reason)) {
      GTEST_SKIP() << "ONNX Runtime: " << reason;
    }
    auto file = jaxpr::ParseJaxprText(text, "special.jaxpr");
    ASSERT_TRUE(file.ok()) << file.status();
    Bundle bundle;
    bundle.name = "special";
    bundle.file = *std::move(file);
    auto model = ConvertWithPipeline(GetParam(), bundle, ConvertOptions{});
    ASSERT_TRUE(model.ok()) << model.status();
    auto got = RunModel(*model, inputs, OrtRunner::Shared());
    ASSERT_TRUE(got.ok()) << got.status();
    *onnx = *std::move(got);
    auto want = jaxpr::Evaluate(bundle.jaxpr(), {}, inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    *interpreter = *std::move(want);
  }
};

// Element i of `got` is NaN where `want` is, else within `rtol` of it (0:
// equal, including the sign of a zero).
void ExpectNear(const Array& got, const std::vector<double>& want, double rtol,
                const std::string& what) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = got.GetAsDouble(static_cast<int64_t>(i));
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(g)) << what << " element " << i << ": got " << g;
    } else if (rtol == 0 || std::isinf(want[i])) {
      EXPECT_EQ(g, want[i]) << what << " element " << i;
      EXPECT_EQ(std::signbit(g), std::signbit(want[i]))
          << what << " element " << i << ": sign of " << g;
    } else {
      EXPECT_NEAR(g, want[i], rtol * std::abs(want[i]))
          << what << " element " << i;
    }
  }
}

// C99 Annex F / IEEE 754 atan2: a NaN operand gives NaN, also with x = +-0
// (the lowering's zero-x branch gave +-pi/2); atan2(+-y, +-0) = +-pi/2 for
// y != 0, atan2(+0, -0) = pi, atan2(-0, +0) = -0.
TEST_P(SpecialValuesTest, Atan2OfNaNOverZeroIsNaN) {
  const double pi = 3.14159265358979323846;
  const Array y = Values(DType::kF32, {6}, {kNaN, kNaN, 1, -1, 0.0, -0.0});
  const Array x = Values(DType::kF32, {6}, {0.0, -0.0, 0.0, -0.0, -0.0, 0.0});
  std::vector<Array> onnx, interp;
  Run(R"({ lambda ; a:f32[6] b:f32[6]. let
    c:f32[6] = atan2 a b
  in (c,) })",
      {y, x}, &onnx, &interp);
  if (HasFatalFailure() || IsSkipped()) return;
  const std::vector<double> want = {kNaN,   kNaN, static_cast<float>(pi / 2),
                                    static_cast<float>(-pi / 2),
                                    static_cast<float>(pi), -0.0};
  ExpectNear(onnx[0], want, 0, "onnx");
  ExpectNear(interp[0], want, 0, "interpreter");
}

// nextafter(+-inf, y) for y != +-inf steps to the largest finite magnitude
// of the dtype (C99 7.12.11.3; XLA's NextAfter): f32 (2 - 2^-23) 2^127 =
// 3.4028234663852886e38, f16 (2 - 2^-10) 2^15 = 65504. Toward the same
// infinity it stays inf; nextafter(max, inf) = inf. Equal operands give y:
// nextafter(+0, -0) = -0, nextafter(-0, +0) = +0.
TEST_P(SpecialValuesTest, NextafterFromInfinityIsTheLargestFinite) {
  const double f32_max = std::ldexp(2.0 - std::ldexp(1.0, -23), 127);
  const double f16_max = 65504;
  for (const auto& [t, max] : {std::pair{"f32", f32_max},
                               std::pair{"f16", f16_max}}) {
    const DType d = std::string(t) == "f32" ? DType::kF32 : DType::kF16;
    const Array x = Values(d, {7}, {kInf, -kInf, kInf, -kInf, max, 0.0, -0.0});
    const Array y = Values(d, {7}, {0.0, 1.0, kInf, kInf, kInf, -0.0, 0.0});
    std::vector<Array> onnx, interp;
    Run(absl::StrCat("{ lambda ; a:", t, "[7] b:", t, "[7]. let\n    c:", t,
                     "[7] = nextafter a b\n  in (c,) }"),
        {x, y}, &onnx, &interp);
    if (HasFatalFailure() || IsSkipped()) return;
    const std::vector<double> want = {max, -max, kInf, -max, kInf, -0.0, 0.0};
    ExpectNear(onnx[0], want, 0, absl::StrCat(t, " onnx"));
    ExpectNear(interp[0], want, 0, absl::StrCat(t, " interpreter"));
  }
}

// cbrt and log1p at the largest finite values, where the lowerings' Newton
// step (y^3) and Kahan product (log(1+x) * x) overflowed to inf:
// cbrt(+-(2 - 2^-23) 2^127) = +-2^(128/3) (1 - 2^-24)^(1/3) =
// +-6.981463658e12; log1p((2 - 2^-23) 2^127) = 128 ln 2 + ln(1 - 2^-24) =
// 88.72283905; log1p(DBL_MAX) = 1024 ln 2 + ln(1 - 2^-53) = 709.782712893384.
TEST_P(SpecialValuesTest, CbrtAndLog1pAtTheLargestFiniteValue) {
  const double f32_max = std::ldexp(2.0 - std::ldexp(1.0, -23), 127);
  const double cbrt_max = std::pow(2.0, 128.0 / 3) *
                          std::cbrt(1 - std::ldexp(1.0, -24));
  const Array x = Values(DType::kF32, {2}, {f32_max, -f32_max});
  const Array z =
      Values(DType::kF64, {1}, {std::numeric_limits<double>::max()});
  std::vector<Array> onnx, interp;
  Run(R"({ lambda ; a:f32[2] b:f64[1]. let
    c:f32[2] = cbrt a
    d:f32[2] = log1p a
    e:f64[1] = log1p b
  in (c, d, e) })",
      {x, z}, &onnx, &interp);
  if (HasFatalFailure() || IsSkipped()) return;
  const double log1p_max = 128 * std::log(2.0) + std::log1p(-std::ldexp(1, -24));
  ExpectNear(onnx[0], {cbrt_max, -cbrt_max}, 1e-6, "cbrt");
  ExpectNear(onnx[1], {log1p_max, kNaN}, 1e-6, "log1p f32");
  ExpectNear(onnx[2], {1024 * std::log(2.0) + std::log1p(-std::ldexp(1, -53))},
             1e-14, "log1p f64");
  ExpectNear(interp[0], {cbrt_max, -cbrt_max}, 1e-6, "interpreter cbrt");
}

// lgamma at a subnormal f64: for tiny x, Gamma(x) ~ 1/x, so
// lgamma(+-10 * 2^-1074) = 1074 ln 2 - ln 10 = 742.1374868283872 (to 1e-300
// relative); pi x rounded to a subnormal (31 * 2^-1074) gave 742.1508.
TEST_P(SpecialValuesTest, LgammaAtASubnormalF64) {
  const double tiny = 10 * std::ldexp(1.0, -1074);
  const Array x = Values(DType::kF64, {2}, {tiny, -tiny});
  std::vector<Array> onnx, interp;
  Run(R"({ lambda ; a:f64[2]. let
    b:f64[2] = lgamma a
  in (b,) })",
      {x}, &onnx, &interp);
  if (HasFatalFailure() || IsSkipped()) return;
  const double want = 1074 * std::log(2.0) - std::log(10.0);
  ExpectNear(onnx[0], {want, want}, 1e-13, "onnx");
  ExpectNear(interp[0], {want, want}, 1e-13, "interpreter");
}

// svd of a batch member holding a NaN is NaN in s, u and vt (LAPACK's
// ?gesdd returns INFO = -4 when max |a_ij| is NaN, and JAX's CPU lowering
// replaces every output of a member with info != 0 by NaN); the other
// member is untouched: diag(3, 2) has s = (3, 2).
TEST_P(SpecialValuesTest, SvdOfANaNMatrixIsNaN) {
  const Array a = Values(DType::kF32, {2, 2, 2}, {kNaN, 1, 2, 3,  //
                                                  3, 0, 0, 2});
  std::vector<Array> onnx, interp;
  Run(R"({ lambda ; a:f32[2,2,2]. let
    b:f32[2,2] c:f32[2,2,2] d:f32[2,2,2] = svd[
      algorithm=None
      compute_uv=True
      full_matrices=False
      subset_by_index=None
    ] a
  in (b, c, d) })",
      {a}, &onnx, &interp);
  if (HasFatalFailure() || IsSkipped()) return;
  for (const auto& [out, what] : {std::pair{&onnx, "onnx"},
                                  std::pair{&interp, "interpreter"}}) {
    ExpectNear((*out)[0], {kNaN, kNaN, 3, 2}, 1e-6, what);
    for (int k = 1; k <= 2; ++k) {
      for (int64_t i = 0; i < 4; ++i) {
        EXPECT_TRUE(std::isnan((*out)[k].GetAsDouble(i)))
            << what << " output " << k << " element " << i;
        EXPECT_FALSE(std::isnan((*out)[k].GetAsDouble(4 + i)))
            << what << " output " << k << " element " << 4 + i;
      }
    }
  }
}

// Integer reduce_sum wraps (XLA: two's-complement add, in any order);
// ONNX Runtime's integer ReduceSum saturates instead. Sums by hand:
// INT_MIN + 0 + INT_MAX - 1 + 1 + 1 + INT_MAX - 1 = INT_MAX - 1 =
// 2147483646 (row sums -2 and INT_MAX + 1, which saturated); INT_MAX + 1
// wraps to INT_MIN; INT64_MAX + 1 + (2^53 + 1) = INT64_MIN + 2^53 + 1 =
// -9214364837600034815 (2^53 + 1 also has no double).
TEST_P(SpecialValuesTest, IntegerReduceSumWraps) {
  const int64_t i32_max = std::numeric_limits<int32_t>::max();
  const int64_t i64_max = std::numeric_limits<int64_t>::max();
  Array a(DType::kI32, {2, 4}), b(DType::kI32, {2}), c(DType::kI64, {3});
  const int64_t av[] = {-i32_max - 1, 0, i32_max, -1, 1, 1, i32_max, -1};
  for (int i = 0; i < 8; ++i) a.SetFromInt64(i, av[i]);
  b.SetFromInt64(0, i32_max);
  b.SetFromInt64(1, 1);
  const int64_t cv[] = {i64_max, 1, (int64_t{1} << 53) + 1};
  for (int i = 0; i < 3; ++i) c.SetFromInt64(i, cv[i]);
  std::vector<Array> onnx, interp;
  Run(R"({ lambda ; a:i32[2,4] b:i32[2] c:i64[3]. let
    d:i32[] = reduce_sum[axes=(0, 1) out_sharding=None] a
    e:i32[] = reduce_sum[axes=(0,) out_sharding=None] b
    f:i64[] = reduce_sum[axes=(0,) out_sharding=None] c
    g:i32[2] = reduce_sum[axes=(1,) out_sharding=None] a
  in (d, e, f, g) })",
      {a, b, c}, &onnx, &interp);
  if (HasFatalFailure() || IsSkipped()) return;
  for (const auto& [out, what] : {std::pair{&onnx, "onnx"},
                                  std::pair{&interp, "interpreter"}}) {
    EXPECT_EQ((*out)[0].GetAsInt64(0), 2147483646) << what;
    EXPECT_EQ((*out)[1].GetAsInt64(0), -i32_max - 1) << what;
    EXPECT_EQ((*out)[2].GetAsInt64(0), -9214364837600034815) << what;
    // Row sums: INT_MIN + INT_MAX - 1 = -2; 1 + 1 + INT_MAX - 1 = INT_MAX
    // + 1, which wraps to INT_MIN.
    EXPECT_EQ((*out)[3].GetAsInt64(0), -2) << what;
    EXPECT_EQ((*out)[3].GetAsInt64(1), -i32_max - 1) << what;
  }
}

// Pivot choice on NaN as (reference BLAS) idamax, which LAPACK's getrf
// and geqp3 (dlaqp2) use: scanning from the current row/column, a later
// entry is taken only when strictly larger, so a NaN first stays the pivot
// and a NaN later is never taken. lu of [[NaN, 1], [2, 3]]: row 0's NaN
// stays, pivots (0, 1); lu of [[1, 0], [NaN, 3]]: 1 stays, pivots (0, 1).
// qr(pivoting=True) of [[NaN, 1], [0, 2]] (column norms NaN, sqrt 5):
// column 0 stays, p = (0, 1); of [[1, NaN], [0, 0]] (norms 1, NaN): column
// 0 stays, p = (0, 1).
TEST_P(SpecialValuesTest, NaNPivotsFollowIdamax) {
  const Array a = Values(DType::kF32, {2, 2, 2}, {kNaN, 1, 2, 3,  //
                                                  1, 0, kNaN, 3});
  const Array q = Values(DType::kF32, {2, 2, 2}, {kNaN, 1, 0, 2,  //
                                                  1, kNaN, 0, 0});
  std::vector<Array> onnx, interp;
  Run(R"({ lambda ; a:f32[2,2,2] q:f32[2,2,2]. let
    b:f32[2,2,2] c:i32[2,2] d:i32[2,2] = lu a
    e:f32[2,2,2] f:f32[2,2,2] g:i32[2,2] = qr[full_matrices=False pivoting=True use_magma=None] q
  in (c, g) })",
      {a, q}, &onnx, &interp);
  if (HasFatalFailure() || IsSkipped()) return;
  for (const auto& [out, what] : {std::pair{&onnx, "onnx"},
                                  std::pair{&interp, "interpreter"}}) {
    for (int k = 0; k < 2; ++k) {
      for (int64_t i = 0; i < 4; ++i) {
        EXPECT_EQ((*out)[k].GetAsInt64(i), i % 2)
            << what << " output " << k << " element " << i;
      }
    }
  }
}

// Convolution multiplies the zeros of padding and of lhs dilation like any
// element (StableHLO spec: padded_lhs = pad(lhs, 0, low, high,
// lhs_dilation - 1), then a dot product per window), so an infinite kernel
// entry over them gives inf * 0 = NaN. Input [1, 2], kernel [inf]:
// padding (0, 1) gives windows [1], [2], [0] -> [inf, inf, NaN];
// lhs_dilation 2 gives [1, 0, 2] -> [inf, NaN, inf].
TEST_P(SpecialValuesTest, ConvMultipliesPaddingAndHoles) {
  const Array x = Values(DType::kF32, {1, 1, 2}, {1, 2});
  const Array k = Values(DType::kF32, {1, 1, 1}, {kInf});
  std::vector<Array> onnx, interp;
  Run(R"({ lambda ; a:f32[1,1,2] b:f32[1,1,1]. let
    c:f32[1,1,3] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2), rhs_spec=(0, 1, 2), out_spec=(0, 1, 2))
      feature_group_count=1
      lhs_dilation=(1,)
      out_sharding=None
      padding=((0, 1),)
      precision=None
      preferred_element_type=None
      rhs_dilation=(1,)
      window_strides=(1,)
    ] a b
    d:f32[1,1,3] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2), rhs_spec=(0, 1, 2), out_spec=(0, 1, 2))
      feature_group_count=1
      lhs_dilation=(2,)
      out_sharding=None
      padding=((0, 0),)
      precision=None
      preferred_element_type=None
      rhs_dilation=(1,)
      window_strides=(1,)
    ] a b
  in (c, d) })",
      {x, k}, &onnx, &interp);
  if (HasFatalFailure() || IsSkipped()) return;
  for (const auto& [out, what] : {std::pair{&onnx, "onnx"},
                                  std::pair{&interp, "interpreter"}}) {
    ExpectNear((*out)[0], {kInf, kInf, kNaN}, 0, what);
    ExpectNear((*out)[1], {kInf, kNaN, kInf}, 0, what);
  }
}

// LAPACK's dlarfg: XNORM = 0 gives TAU = 0 (H = I) whatever ALPHA is, so
// geqrf of the column (NaN, 0) keeps it and has tau = 0 (the interpreter
// gave NaN, testing alpha == Re(alpha) where zlarfg tests Im(alpha) = 0).
TEST_P(SpecialValuesTest, GeqrfOfANaNOverZerosHasTauZero) {
  const Array a = Values(DType::kF32, {2, 1}, {kNaN, 0});
  std::vector<Array> onnx, interp;
  Run(R"({ lambda ; a:f32[2,1]. let
    b:f32[2,1] c:f32[1] = geqrf a
  in (b, c) })",
      {a}, &onnx, &interp);
  if (HasFatalFailure() || IsSkipped()) return;
  for (const auto& [out, what] : {std::pair{&onnx, "onnx"},
                                  std::pair{&interp, "interpreter"}}) {
    ExpectNear((*out)[0], {kNaN, 0}, 0, what);
    ExpectNear((*out)[1], {0}, 0, what);
  }
}

INSTANTIATE_TEST_SUITE_P(BothPipelines, SpecialValuesTest,
                         ::testing::Values(Pipeline::kLegacy, Pipeline::kIr),
                         [](const auto& info) {
                           return info.param == Pipeline::kIr ? "Ir"
                                                              : "Legacy";
                         });

}  // namespace
}  // namespace jax2onnx::api
