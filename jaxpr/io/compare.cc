// Tolerance-based array comparison (see compare.h for the rules).
#include "jaxpr/io/compare.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "jaxpr/narrow_dtype.h"

namespace jax2onnx::jaxpr {
namespace {

bool IsExactDType(DType dtype) { return !IsFloat(dtype) && !IsComplex(dtype); }

std::string FormatDouble(double v) { return absl::StrFormat("%.9g", v); }

// Multi-index of a flat row-major index.
std::vector<int64_t> Unflatten(int64_t flat,
                               const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] == 0) return index;
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

// One float component compared under the tolerance. Returns the excess over
// the allowed difference (<= 0 passes; +inf for NaN/inf mismatches).
double FloatExcess(double expected, double got, const Tolerance& tol,
                   double* abs_diff, double* allowed) {
  *allowed = tol.atol + tol.rtol * std::fabs(expected);
  if (std::isnan(expected) || std::isnan(got)) {
    *abs_diff = std::numeric_limits<double>::quiet_NaN();
    return std::isnan(expected) && std::isnan(got)
               ? -1
               : std::numeric_limits<double>::infinity();
  }
  if (std::isinf(expected) || std::isinf(got)) {
    *abs_diff = expected == got ? 0 : std::numeric_limits<double>::infinity();
    return expected == got ? -1 : std::numeric_limits<double>::infinity();
  }
  *abs_diff = std::fabs(got - expected);
  return *abs_diff - *allowed;
}

std::complex<double> GetComplex(const Array& a, int64_t i) {
  if (a.dtype() == DType::kC64) {
    const float* p = a.typed_data<float>() + 2 * i;
    return {p[0], p[1]};
  }
  const double* p = a.typed_data<double>() + 2 * i;
  return {p[0], p[1]};
}

std::string FormatComplex(std::complex<double> c) {
  return absl::StrCat("(", FormatDouble(c.real()), c.imag() < 0 ? "" : "+",
                      FormatDouble(c.imag()), "j)");
}

}  // namespace

Tolerance DefaultTolerance(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kC64:
      return {1e-5, 1e-5};
    case DType::kF64:
    case DType::kC128:
      return {1e-7, 1e-7};
    case DType::kF16:
    case DType::kBF16:
      // One bf16 ulp is 2^-8 (~3.9e-3) relative, one f16 ulp 2^-11: 1e-2
      // admits a last-bit difference carried through a few dependent
      // roundings (an f32 vs f64 accumulation landing on the other side of
      // a tie), while real lowering errors are orders of magnitude larger.
      return {1e-2, 1e-2};
    default:
      return {0, 0};
  }
}

Tolerance ResolveTolerance(DType dtype, std::optional<double> rtol,
                           std::optional<double> atol) {
  Tolerance tol = DefaultTolerance(dtype);
  if (IsExactDType(dtype)) return tol;
  if (rtol.has_value()) tol.rtol = *rtol;
  if (atol.has_value()) tol.atol = *atol;
  return tol;
}

std::string CompareResult::Summary() const {
  if (!structural_error.empty()) return structural_error;
  if (ok) return "ok";
  std::string out = absl::StrCat(num_mismatches, " of ", num_elements,
                                 " elements differ; worst at [",
                                 absl::StrJoin(worst_index, ","), "]: got ",
                                 worst_got, ", expected ", worst_expected);
  if (tolerance.rtol != 0 || tolerance.atol != 0) {
    absl::StrAppend(&out, " (|diff| ", FormatDouble(worst_abs_diff),
                    " > allowed ", FormatDouble(worst_allowed), "; rtol ",
                    FormatDouble(tolerance.rtol), ", atol ",
                    FormatDouble(tolerance.atol), ")");
  }
  return out;
}

CompareResult CompareArrays(const Array& expected, const Array& got_in,
                            const Tolerance& tolerance) {
  // A converted model returns complex values as (re, im) pairs.
  Array got_pairs = got_in;
  if (IsComplex(expected.dtype()) && !IsComplex(got_in.dtype())) {
    if (auto c = PairsAsComplex(got_in, expected.dtype()); c.ok()) {
      got_pairs = *std::move(c);
    }
  }
  const Array& got = got_pairs;
  CompareResult result;
  result.tolerance = IsExactDType(expected.dtype()) ? Tolerance{} : tolerance;
  const Tolerance& tol = result.tolerance;
  if (expected.dtype() != got.dtype()) {
    result.ok = false;
    result.structural_error =
        absl::StrCat("dtype ", NumpyName(got.dtype()), " but expected ",
                     NumpyName(expected.dtype()));
    return result;
  }
  if (expected.shape() != got.shape()) {
    result.ok = false;
    result.structural_error = absl::StrCat(
        "shape ", got.TypeString(), " but expected ", expected.TypeString());
    return result;
  }
  const int64_t n = expected.num_elements();
  const int item = ItemSize(expected.dtype());
  for (const Array* a : {&expected, &got}) {
    if (item > 0 && a->num_bytes() != static_cast<size_t>(n) * item) {
      result.ok = false;
      result.structural_error = absl::StrCat(
          a == &got ? "got" : "expected", " ", a->TypeString(), " holds ",
          a->num_bytes(), " bytes instead of ", n * item);
      return result;
    }
  }
  result.num_elements = n;
  if (item <= 0) {
    // Dtypes the model does not size (kOther): only bytewise equality.
    if (expected.bytes() != got.bytes()) {
      result.ok = false;
      result.structural_error =
          absl::StrCat(got.TypeString(), " bytes differ from expected");
    }
    return result;
  }
  double worst_excess = -std::numeric_limits<double>::infinity();
  auto record = [&](int64_t i, double excess, double abs_diff, double allowed,
                    std::string got_text, std::string expected_text) {
    ++result.num_mismatches;
    if (result.worst_flat_index >= 0 && !(excess > worst_excess)) return;
    worst_excess = excess;
    result.worst_flat_index = i;
    result.worst_abs_diff = abs_diff;
    result.worst_allowed = allowed;
    result.worst_got = std::move(got_text);
    result.worst_expected = std::move(expected_text);
  };
  const DType dtype = expected.dtype();
  for (int64_t i = 0; i < n; ++i) {
    if (IsFloat(dtype)) {
      const double e = expected.GetAsDouble(i);
      const double g = got.GetAsDouble(i);
      double abs_diff, allowed;
      const double excess = FloatExcess(e, g, tol, &abs_diff, &allowed);
      if (excess > 0) {
        record(i, excess, abs_diff, allowed, FormatDouble(g), FormatDouble(e));
      }
    } else if (IsComplex(dtype)) {
      const std::complex<double> e = GetComplex(expected, i);
      const std::complex<double> g = GetComplex(got, i);
      double d_re, a_re, d_im, a_im;
      const double x_re = FloatExcess(e.real(), g.real(), tol, &d_re, &a_re);
      const double x_im = FloatExcess(e.imag(), g.imag(), tol, &d_im, &a_im);
      if (x_re > 0 || x_im > 0) {
        const bool re_worse = x_re >= x_im;
        record(i, re_worse ? x_re : x_im, re_worse ? d_re : d_im,
               re_worse ? a_re : a_im, FormatComplex(g), FormatComplex(e));
      }
    } else if (IsUnsignedInt(dtype)) {
      const uint64_t e = expected.GetAsUInt64(i);
      const uint64_t g = got.GetAsUInt64(i);
      if (e != g) {
        const double diff =
            e > g ? static_cast<double>(e - g) : static_cast<double>(g - e);
        record(i, diff, diff, 0, absl::StrCat(g), absl::StrCat(e));
      }
    } else if (IsSignedInt(dtype) || dtype == DType::kBool) {
      const int64_t e = expected.GetAsInt64(i);
      const int64_t g = got.GetAsInt64(i);
      if (e != g) {
        const double diff =
            std::fabs(static_cast<double>(g) - static_cast<double>(e));
        auto text = [&](int64_t v) {
          return dtype == DType::kBool ? std::string(v ? "True" : "False")
                                       : absl::StrCat(v);
        };
        record(i, diff, diff, 0, text(g), text(e));
      }
    } else if (IsNarrow(dtype)) {
      // Narrow types compare exactly by value (the codes' low bits decoded):
      // any NaN matches any NaN, and a zero's sign counts.
      const double e = expected.GetAsDouble(i);
      const double g = got.GetAsDouble(i);
      const bool same = (std::isnan(e) && std::isnan(g)) ||
                        (e == g && std::signbit(e) == std::signbit(g));
      if (!same) {
        const double diff = std::fabs(g - e);
        record(i, std::isnan(diff) ? 1 : diff, diff, 0, FormatDouble(g),
               FormatDouble(e));
      }
    } else {
      if (std::memcmp(expected.data() + i * item, got.data() + i * item,
                      item) != 0) {
        record(i, 1, 0, 0, "<bytes differ>", "<bytes>");
      }
    }
  }
  if (result.num_mismatches > 0) {
    result.ok = false;
    result.worst_index = Unflatten(result.worst_flat_index, expected.shape());
  }
  return result;
}

CompareResult CompareArrays(const Array& expected, const Array& got,
                            std::optional<double> rtol,
                            std::optional<double> atol) {
  return CompareArrays(expected, got,
                       ResolveTolerance(expected.dtype(), rtol, atol));
}

}  // namespace jax2onnx::jaxpr
