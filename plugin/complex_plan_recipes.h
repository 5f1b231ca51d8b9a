// The complex recipes (see complex_plan.h): elementwise arithmetic and math
// on the parts, comparisons, conversions, dot_general and
// conv_general_dilated from four real products, and fft through ONNX DFT.
// Included by complex_lowering.h only.
//
// Accuracy against XLA: add/sub/neg/mul/conj/real/imag/complex and the
// conversions are exact (the same real operations XLA's CPU backend emits);
// div is XLA's algorithm (Smith's with its NaN recoveries) op for op; abs is
// a scaled hypot (XLA: the same formula); exp/log/sqrt/sin/cos/tanh use the
// textbook formulas on ONNX Runtime's real kernels, within a few ulp of XLA
// away from overflow, but sin/cos/tanh overflow earlier than XLA for
// |Im z| (sin, cos) or |Re z| (tanh) above ~88 (f32) / ~709 (f64), and
// sinh/cosh lose relative accuracy near 0 (absolute error stays ~1 ulp of 1).
// fft uses ONNX DFT (exact normalisation: IFFT and IRFFT divide by n, as
// numpy/JAX do); its rounding differs from XLA's ducc FFT by O(log n) ulp.
#ifndef JAX2ONNX_PLUGIN_COMPLEX_PLAN_RECIPES_H_
#define JAX2ONNX_PLUGIN_COMPLEX_PLAN_RECIPES_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/status_macros.h"
#include "plugin/complex_plan.h"
#include "plugin/complex_plan_math.h"
#include "plugin/eig_complex_plan.h"
#include "plugin/eig_general_plan.h"
#include "plugin/linalg_complex_plan.h"
#include "plugin/qr_complex_plan.h"
#include "plugin/real_schur_plan.h"
#include "plugin/sort_plan.h"

namespace jax2onnx::plugin::complex {

template <class E>
Z<E> Log(E& e, Z<E> z, DType d) {
  return {U(e, "Log", Abs(e, z, d), d), Atan2(e, z.im, z.re, d)};
}

// XLA's EmitComplexSqrt: sqrt(|z|) (cos(t/2) + i sin(t/2)), t = atan2(b, a),
// with its infinity and NaN rules.
template <class E>
Z<E> Sqrt(E& e, Z<E> z, DType d) {
  const DType kB = DType::kBool;
  V<E> zero = ScalarConst(e, d, 0.0), inf = ScalarConst(e, d, INFINITY);
  V<E> ninf = ScalarConst(e, d, -INFINITY);
  V<E> r = U(e, "Sqrt", Abs(e, z, d), d);
  V<E> angle = B(e, "Mul", Atan2(e, z.im, z.re, d), ScalarConst(e, d, 0.5), d);
  V<E> c = U(e, "Cos", angle, d), s = U(e, "Sin", angle, d);
  auto eq = [&](V<E> x, V<E> y) { return e.Op("Equal", {x, y}, kB); };
  auto or_ = [&](V<E> x, V<E> y) { return e.Op("Or", {x, y}, kB); };
  V<E> b_inf = eq(U(e, "Abs", z.im, d), inf);
  V<E> a_pinf = eq(z.re, inf), a_ninf = eq(z.re, ninf);
  V<E> re = Where(e, or_(b_inf, a_pinf), inf,
                  Where(e, e.Op("And", {a_ninf, e.Op("Not", {b_inf}, kB)}, kB),
                        zero, B(e, "Mul", r, c, d), d),
                  d);
  V<E> im = Where(e, or_(b_inf, a_ninf), CopySign(e, inf, z.im, d),
                  Where(e, U(e, "IsNaN", r, kB), ScalarConst(e, d, NAN),
                        Where(e, eq(s, zero), s, B(e, "Mul", r, s, d), d), d),
                  d);
  V<E> r_zero = eq(r, zero);
  return {Where(e, r_zero, zero, re, d), Where(e, r_zero, zero, im, d)};
}

// x^n by repeated squaring as JAX lowers integer_pow; 1 / x^-n for n < 0.
template <class E>
Z<E> IntegerPow(E& e, Z<E> x, int64_t n, DType d) {
  Z<E> one{ScalarConst(e, d, 1.0), ScalarConst(e, d, 0.0)};
  uint64_t m = n < 0 ? uint64_t(0) - uint64_t(n) : uint64_t(n);
  bool have = false;
  Z<E> acc = one;
  while (m > 0) {
    if (m & 1) {
      acc = have ? Mul(e, x, acc, d) : x;
      have = true;
    }
    m >>= 1;
    if (m > 0) x = Mul(e, x, x, d);
  }
  if (!have) {
    acc = {B(e, "Add", ZerosLike(e, x.re, d), one.re, d),
           ZerosLike(e, x.re, d)};
  }
  if (n < 0) {
    Z<E> one_full{B(e, "Add", ZerosLike(e, acc.re, d), one.re, d),
                  ZerosLike(e, acc.re, d)};
    acc = Div(e, one_full, acc, d);
  }
  return acc;
}

// x^y with XLA's EmitComplexPower: |x|^c e^(-d arg x) (cos q + i sin q),
// q = c arg x + d ln|x|, for y = c + id, and its special cases (0^y, x^0,
// 1^y, inf^c for real c).
template <class E>
Z<E> Pow(E& e, Z<E> x, Z<E> y, DType d) {
  const DType kB = DType::kBool;
  V<E> zero = ScalarConst(e, d, 0.0), one = ScalarConst(e, d, 1.0);
  V<E> inf = ScalarConst(e, d, INFINITY);
  auto eq = [&](V<E> u, V<E> v) { return e.Op("Equal", {u, v}, kB); };
  auto and_ = [&](V<E> u, V<E> v) { return e.Op("And", {u, v}, kB); };
  V<E> abs = Abs(e, x, d);
  V<E> abs_to_c = B(e, "Pow", abs, y.re, d);
  V<E> arg = Atan2(e, x.im, x.re, d);
  V<E> coeff = B(e, "Mul", abs_to_c,
                 U(e, "Exp", B(e, "Mul", U(e, "Neg", y.im, d), arg, d), d), d);
  V<E> q = B(e, "Add", B(e, "Mul", y.re, arg, d),
             B(e, "Mul", y.im, U(e, "Log", abs, d), d), d);
  Z<E> r{B(e, "Mul", coeff, U(e, "Cos", q, d), d),
         B(e, "Mul", coeff, U(e, "Sin", q, d), d)};
  auto pick = [&](V<E> cond, V<E> re, V<E> im) {
    r = {Where(e, cond, re, r.re, d), Where(e, cond, im, r.im, d)};
  };
  V<E> d_zero = eq(y.im, zero), c_zero = eq(y.re, zero);
  pick(and_(and_(eq(abs, zero), d_zero), e.Op("LessOrEqual", {zero, y.re}, kB)),
       Where(e, c_zero, one, zero, d), zero);
  pick(and_(c_zero, d_zero), one, zero);
  pick(and_(eq(x.re, one), eq(x.im, zero)), one, zero);
  V<E> inf_real = and_(and_(eq(x.re, inf), eq(x.im, zero)), d_zero);
  pick(and_(inf_real, e.Op("Greater", {y.re, zero}, kB)), inf, zero);
  pick(and_(inf_real, e.Op("Less", {y.re, zero}, kB)), zero, zero);
  return r;
}

// reduce_prod of complex values: a chain of complex products along each
// reduced axis (last axis first), each element taken with Gather. Static
// axes only, and at most kMaxProducts products in all.
template <class E>
absl::Status LowerComplexReduceProd(E& e) {
  constexpr int64_t kMaxProducts = 4096;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval in = OperandAval(eqn, 0);
  const DType d = ComplexPartDType(in.dtype);
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                       eqn.params.GetIntList("axes"));
  std::sort(axes.begin(), axes.end());
  int64_t products = 1;
  for (int64_t a : axes) {
    if (a < 0 || a >= in.rank() || !in.shape[a].is_constant()) {
      return absl::UnimplementedError(absl::StrCat(
          "reduce_prod of complex ", in.ToString(),
          " over a symbolic or invalid axis ", a, " is not supported"));
    }
    products *= std::max<int64_t>(in.shape[a].constant_value(), 1);
    if (products > kMaxProducts) {
      return absl::UnimplementedError(absl::StrCat(
          "reduce_prod of complex ", in.ToString(), " needs more than ",
          kMaxProducts, " complex products (unrolled); not supported"));
    }
  }
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  Z<E> acc{Part(e, x, 0, d), Part(e, x, 1, d)};
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    const int64_t axis = *it;
    const int64_t n = in.shape[axis].constant_value();
    auto element = [&](V<E> part, int64_t j) {
      return e.Op(
          "Gather",
          {part, e.Const(jaxpr::Array::ScalarFromInt64(DType::kI64, j))}, d,
          {OpAttr::Int("axis", axis)});
    };
    if (n == 0) {
      // The empty product is 1.
      std::vector<jaxpr::DimExpr> shape;
      for (int a = 0; a < in.rank(); ++a) {
        if (std::find(axes.begin(), axes.end(), a) == axes.end()) {
          shape.push_back(in.shape[a]);
        }
      }
      J2O_ASSIGN_OR_RETURN(V<E> s, e.ShapeValue(shape));
      V<E> ones = e.Op("Expand", {ScalarConst(e, d, 1.0), s}, d);
      V<E> zeros = e.Op("Expand", {ScalarConst(e, d, 0.0), s}, d);
      return e.SetOut(0, Pack(e, ones, zeros, d));
    }
    Z<E> prod{element(acc.re, 0), element(acc.im, 0)};
    for (int64_t j = 1; j < n; ++j) {
      prod = Mul(e, prod, Z<E>{element(acc.re, j), element(acc.im, j)}, d);
    }
    acc = prod;
  }
  return e.SetOut(0, Pack(e, acc.re, acc.im, d));
}

// cumprod of complex values along a static axis: the running complex
// product, element by element (Gather), stacked back with Concat; reverse
// runs from the end. At most 4096 elements along the axis.
template <class E>
absl::Status LowerComplexCumprod(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval in = OperandAval(eqn, 0);
  const DType d = ComplexPartDType(in.dtype);
  J2O_ASSIGN_OR_RETURN(int64_t axis, eqn.params.GetInt("axis"));
  bool reverse = false;
  if (eqn.params.Has("reverse")) {
    J2O_ASSIGN_OR_RETURN(reverse, eqn.params.GetBool("reverse"));
  }
  if (axis < 0 || axis >= in.rank() || !in.shape[axis].is_constant() ||
      in.shape[axis].constant_value() > 4096) {
    return absl::UnimplementedError(absl::StrCat(
        "cumprod of complex ", in.ToString(), " along axis ", axis,
        ": only static axes of at most 4096 elements are supported"));
  }
  const int64_t n = in.shape[axis].constant_value();
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  if (n == 0) return e.SetOut(0, x);
  V<E> re = Part(e, x, 0, d), im = Part(e, x, 1, d);
  auto element = [&](V<E> part, int64_t j) {
    return e.Op("Gather",
                {part, e.Const(jaxpr::Array::ScalarFromInt64(DType::kI64, j))},
                d, {OpAttr::Int("axis", axis)});
  };
  std::vector<V<E>> outs(n);
  Z<E> acc;
  for (int64_t step = 0; step < n; ++step) {
    const int64_t j = reverse ? n - 1 - step : step;
    Z<E> xj{element(re, j), element(im, j)};
    acc = step == 0 ? xj : Mul(e, acc, xj, d);
    outs[j] = Pack(e, acc.re, acc.im, d);
  }
  V<E> axes = e.ConstI64({axis});
  for (V<E>& v : outs) v = e.Op("Unsqueeze", {v, axes}, d);
  if (n == 1) return e.SetOut(0, outs[0]);
  return e.SetOut(0, e.Op("Concat", outs, d, {OpAttr::Int("axis", axis)}));
}

// ---- fft ----

enum class FftType { kFft, kIfft, kRfft, kIrfft };

inline absl::StatusOr<FftType> ParseFftType(const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(const jaxpr::ParamValue* p, eqn.params.Get("fft_type"));
  std::string name;
  if (p->kind() == jaxpr::ParamValue::Kind::kInt) {
    static const char* kNames[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
    if (p->int_value() < 0 || p->int_value() > 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("fft: unknown fft_type ", p->int_value()));
    }
    name = kNames[p->int_value()];
  } else {
    name = p->text();
    if (auto dot = name.rfind('.'); dot != std::string::npos) {
      name = name.substr(dot + 1);
    }
  }
  if (name == "FFT") return FftType::kFft;
  if (name == "IFFT") return FftType::kIfft;
  if (name == "RFFT") return FftType::kRfft;
  if (name == "IRFFT") return FftType::kIrfft;
  return absl::InvalidArgumentError(
      absl::StrCat("fft: unknown fft_type '", p->ToString(), "'"));
}

// One ONNX DFT along `axis` of a [..., 2] (or, onesided, [..., 1]) tensor:
// opset 17-19 take the axis as an attribute, opset 20+ as an input.
// ONNX Runtime transforms power-of-two lengths with a radix-2 FFT but others
// with a direct O(n^2) sum, which in f32 strays from XLA's (ducc) f32 FFT
// by several 1e-5 of the spectrum's magnitude: f32 transforms of other
// lengths run in f64 and are rounded back.
template <class E>
V<E> Dft(E& e, V<E> x, int64_t axis, int64_t n, bool inverse, bool onesided,
         DType d) {
  if (d == DType::kF32 && n > 0 && (n & (n - 1)) != 0) {
    V<E> wide = e.Op("Cast", {x}, DType::kF64,
                     {OpAttr::Int("to", *OnnxDType(DType::kF64))});
    V<E> y = Dft(e, wide, axis, n, inverse, onesided, DType::kF64);
    return e.Op("Cast", {y}, DType::kF32,
                {OpAttr::Int("to", *OnnxDType(DType::kF32))});
  }
  V<E> length = e.Const(jaxpr::Array::ScalarFromInt64(DType::kI64, n));
  std::vector<OpAttr> attrs = {OpAttr::Int("inverse", inverse ? 1 : 0),
                               OpAttr::Int("onesided", onesided ? 1 : 0)};
  if (e.opset() >= 20) {
    return e.Op(
        "DFT",
        {x, length, e.Const(jaxpr::Array::ScalarFromInt64(DType::kI64, axis))},
        d, std::move(attrs));
  }
  attrs.push_back(OpAttr::Int("axis", axis));
  return e.Op("DFT", {x, length}, d, std::move(attrs));
}

// lax.fft over the trailing len(fft_lengths) axes. FFT/IFFT: one DFT per
// axis. RFFT: a one-sided DFT of the real input along the last axis, then
// full DFTs along the others. IRFFT: inverse DFTs along all but the last
// axis, then the Hermitian-symmetric full spectrum of the last axis
// (X[n-k] = conj(X[k])) and an inverse DFT whose real part is the result;
// this ignores the imaginary parts of X[0] and X[n/2] exactly like a
// complex-to-real transform.
template <class E>
absl::Status LowerFft(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_ASSIGN_OR_RETURN(FftType type, ParseFftType(eqn));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> lengths,
                       eqn.params.GetIntList("fft_lengths"));
  const jaxpr::Aval in = OperandAval(eqn, 0);
  const jaxpr::Aval& out = eqn.outputs[0]->aval;
  const int rank = in.rank();
  const int k = static_cast<int>(lengths.size());
  if (k < 1 || k > 3 || k > rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fft: fft_lengths must name 1 to 3 trailing axes of the rank-", rank,
        " operand, got ", k));
  }
  for (int j = 0; j < k; ++j) {
    const jaxpr::DimExpr& dim =
        (type == FftType::kIrfft ? out : in).shape[rank - k + j];
    if (!dim.is_constant() || dim.constant_value() != lengths[j]) {
      return absl::InvalidArgumentError(
          absl::StrCat("fft: fft_lengths ", lengths[j], " does not match axis ",
                       rank - k + j, " of ",
                       (type == FftType::kIrfft ? out : in).ToString()));
    }
  }
  const DType d =
      ComplexPartDType(type == FftType::kRfft ? out.dtype : in.dtype);
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  const int first = rank - k;
  switch (type) {
    case FftType::kFft:
    case FftType::kIfft:
      for (int j = 0; j < k; ++j) {
        x = Dft(e, x, first + j, lengths[j], type == FftType::kIfft, false, d);
      }
      return e.SetOut(0, x);
    case FftType::kRfft: {
      if (in.dtype != d) {
        J2O_ASSIGN_OR_RETURN(int to, OnnxDType(d));
        x = e.Op("Cast", {x}, d, {OpAttr::Int("to", to)});
      }
      x = e.Op("Unsqueeze", {x, e.ConstI64({-1})}, d);
      x = Dft(e, x, rank - 1, lengths[k - 1], false, true, d);
      for (int j = 0; j + 1 < k; ++j) {
        x = Dft(e, x, first + j, lengths[j], false, false, d);
      }
      return e.SetOut(0, x);
    }
    case FftType::kIrfft: {
      const int64_t n = lengths[k - 1];
      const jaxpr::DimExpr& have = in.shape[rank - 1];
      if (!have.is_constant() || have.constant_value() != n / 2 + 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "fft: IRFFT of length ", n, " needs ", n / 2 + 1,
            " input elements on the last axis, got ", in.ToString()));
      }
      for (int j = 0; j + 1 < k; ++j) {
        x = Dft(e, x, first + j, lengths[j], true, false, d);
      }
      const int64_t m = n / 2 + 1;
      if (n - m > 0) {
        // X[n-m], X[n-m-1], ..., X[1], conjugated.
        V<E> tail = e.Op("Slice",
                         {x, e.ConstI64({n - m}), e.ConstI64({0}),
                          e.ConstI64({rank - 1}), e.ConstI64({-1})},
                         d);
        jaxpr::Array conj(d, {2});
        conj.SetFromDouble(0, 1.0);
        conj.SetFromDouble(1, -1.0);
        tail = B(e, "Mul", tail, e.Const(conj), d);
        x = e.Op("Concat", {x, tail}, d, {OpAttr::Int("axis", rank - 1)});
      }
      x = Dft(e, x, rank - 1, n, true, false, d);
      return e.SetOut(0, Part(e, x, 0, d));
    }
  }
  return absl::InternalError("fft: unhandled fft_type");
}

// A bilinear primitive (dot_general, conv_general_dilated) from four real
// ones on the parts: re = ar*br - ai*bi, im = ar*bi + ai*br, each product
// the real lowering with the same params (a complex preferred_element_type
// becomes its part dtype).
template <class E>
absl::Status LowerComplexBilinear(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  const DType d = ComplexPartDType(eqn.outputs[0]->aval.dtype);
  for (int i = 0; i < 2; ++i) {
    if (!jaxpr::IsComplex(OperandAval(eqn, i).dtype)) {
      return absl::UnimplementedError(
          absl::StrCat(eqn.primitive, " of ", OperandAval(eqn, 0).ToString(),
                       " and ", OperandAval(eqn, 1).ToString(),
                       ": mixed real and complex operands are not supported"));
    }
  }
  J2O_ASSIGN_OR_RETURN(V<E> lhs, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> rhs, e.In(1));
  auto product = [&](int kl, int kr) -> absl::StatusOr<V<E>> {
    RealEqn real = MakeRealEqn(eqn, {kl, kr});
    std::vector<V<E>> parts;
    for (int i : real.replaced) {
      const DType pd = ComplexPartDType(OperandAval(eqn, i).dtype);
      parts.push_back(Part(e, i == 0 ? lhs : rhs, i == 0 ? kl : kr, pd));
    }
    J2O_ASSIGN_OR_RETURN(std::vector<V<E>> outs, e.LowerReal(real, parts));
    return outs[0];
  };
  J2O_ASSIGN_OR_RETURN(V<E> rr, product(0, 0));
  J2O_ASSIGN_OR_RETURN(V<E> ii, product(1, 1));
  J2O_ASSIGN_OR_RETURN(V<E> ri, product(0, 1));
  J2O_ASSIGN_OR_RETURN(V<E> ir, product(1, 0));
  return e.SetOut(0,
                  Pack(e, B(e, "Sub", rr, ii, d), B(e, "Add", ri, ir, d), d));
}

// sort with complex operands. JAX's comparator (_operands_to_keys) makes a
// complex key two float keys, real then imaginary part, each canonicalized
// like a float key (-0.0 ties +0.0, NaN last): a lexicographic order, so the
// imaginary part is ordered first (least significant) and the real part
// after it, by the same stable passes as real keys. Complex operands are
// gathered part by part with the permutation and packed again.
template <class E>
absl::Status LowerComplexSort(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  const int n = static_cast<int>(eqn.inputs.size());
  J2O_ASSIGN_OR_RETURN(sort_internal::SortParams params,
                       sort_internal::ParseSortParams(eqn));
  const int axis = params.axis;
  const int64_t num_keys = params.num_keys;
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  // Each operand as its parts (one for a real operand).
  std::vector<std::vector<V<E>>> parts(n);
  std::vector<DType> part_dtype(n);
  for (int i = 0; i < n; ++i) {
    const DType dt = eqn.outputs[i]->aval.dtype;
    J2O_ASSIGN_OR_RETURN(V<E> v, e.In(i));
    if (jaxpr::IsComplex(dt)) {
      part_dtype[i] = ComplexPartDType(dt);
      parts[i] = {Part(e, v, 0, part_dtype[i]), Part(e, v, 1, part_dtype[i])};
    } else {
      part_dtype[i] = dt;
      parts[i] = {v};
    }
  }
  J2O_ASSIGN_OR_RETURN(V<E> length, e.DimValue(aval.shape[axis]));
  std::optional<V<E>> perm;
  for (int64_t k = num_keys - 1; k >= 0; --k) {
    for (int p = static_cast<int>(parts[k].size()) - 1; p >= 0; --p) {
      J2O_ASSIGN_OR_RETURN(
          perm, sort_internal::OrderByKey(e, parts[k][p], part_dtype[k], perm,
                                          length, axis, /*largest=*/false,
                                          /*for_top_k=*/false, "sort"));
    }
  }
  for (int i = 0; i < n; ++i) {
    std::vector<V<E>> sorted;
    for (const V<E>& part : parts[i]) {
      sorted.push_back(e.Op("GatherElements", {part, *perm}, part_dtype[i],
                            {OpAttr::Int("axis", axis)}));
    }
    J2O_RETURN_IF_ERROR(e.SetOut(
        i, sorted.size() == 2 ? Pack(e, sorted[0], sorted[1], part_dtype[i])
                              : sorted[0]));
  }
  return absl::OkStatus();
}

template <class E>
absl::Status LowerConvert(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  const DType from = OperandAval(eqn, 0).dtype;
  const DType to = eqn.outputs[0]->aval.dtype;
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  const DType to_part = ComplexPartDType(to);
  auto cast = [&](V<E> v, DType dt) -> absl::StatusOr<V<E>> {
    J2O_ASSIGN_OR_RETURN(int code, OnnxDType(dt));
    return e.Op("Cast", {v}, dt, {OpAttr::Int("to", code)});
  };
  if (jaxpr::IsComplex(from) && jaxpr::IsComplex(to)) {
    if (from == to) return e.SetOut(0, x);
    J2O_ASSIGN_OR_RETURN(V<E> y, cast(x, to_part));
    return e.SetOut(0, y);
  }
  if (jaxpr::IsComplex(to)) {
    // Real -> complex: (x, 0). bool and integers convert exactly like Cast;
    // int4/int2 and float8 go through i32 / f32 first (exact, and the Casts
    // ONNX Runtime has for them).
    if (!(jaxpr::IsFloat(from) || jaxpr::IsInteger(from) ||
          from == DType::kBool || jaxpr::IsNarrowInt(from) ||
          jaxpr::IsNarrowFloat(from))) {
      return RefuseComplex(eqn);
    }
    if (jaxpr::IsNarrowInt(from) || jaxpr::IsNarrowFloat(from)) {
      J2O_ASSIGN_OR_RETURN(
          x, cast(x, jaxpr::IsNarrowInt(from) ? DType::kI32 : DType::kF32));
    }
    J2O_ASSIGN_OR_RETURN(V<E> re, cast(x, to_part));
    return e.SetOut(0, Pack(e, re, ZerosLike(e, re, to_part), to_part));
  }
  // Complex -> real float keeps the real part (numpy's ComplexWarning case).
  if (!jaxpr::IsFloat(to) || to == DType::kBF16 || to == DType::kF16) {
    return absl::UnimplementedError(absl::StrCat(
        "convert_element_type from ", jaxpr::ShortName(from), " to ",
        jaxpr::ShortName(to), " is not supported (only f32/f64 targets)"));
  }
  const DType from_part = ComplexPartDType(from);
  V<E> re = Part(e, x, 0, from_part);
  if (to != from_part) {
    J2O_ASSIGN_OR_RETURN(re, cast(re, to));
  }
  return e.SetOut(0, re);
}

// max/min of complex values: JAX's max_hlo/min_hlo, a lexicographic select
// of whole values: x where (Re x == Re y ? Im x cmp Im y : Re x cmp Re y),
// else y (a NaN part therefore picks y). Exact.
template <class E>
Z<E> LexicographicPick(E& e, Z<E> x, Z<E> y, bool is_max, DType d) {
  const DType kB = DType::kBool;
  const char* cmp = is_max ? "Greater" : "Less";
  V<E> re_eq = e.Op("Equal", {x.re, y.re}, kB);
  V<E> pick_x =
      e.Op("Or",
           {e.Op("And", {re_eq, e.Op(cmp, {x.im, y.im}, kB)}, kB),
            e.Op("And", {e.Op("Not", {re_eq}, kB), e.Op(cmp, {x.re, y.re}, kB)},
                 kB)},
           kB);
  return {Where(e, pick_x, x.re, y.re, d), Where(e, pick_x, x.im, y.im, d)};
}

// cummax / cummin of complex values: JAX lowers them by an associative scan
// of max_hlo / min_hlo; here the same log-step (Hillis-Steele) scan as the
// real cummax, each step a LexicographicPick of the part pairs. Exact for
// inputs without NaN parts (with one, the result depends on the scan order
// in XLA too). Static length along the axis.
template <class E>
absl::Status LowerComplexCumMaxMin(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval in = OperandAval(eqn, 0);
  const DType d = ComplexPartDType(in.dtype);
  const bool is_max = eqn.primitive == "cummax";
  J2O_ASSIGN_OR_RETURN(int64_t axis, eqn.params.GetInt("axis"));
  bool reverse = false;
  if (eqn.params.Has("reverse")) {
    J2O_ASSIGN_OR_RETURN(reverse, eqn.params.GetBool("reverse"));
  }
  if (axis < 0 || axis >= in.rank() || !in.shape[axis].is_constant()) {
    return absl::UnimplementedError(absl::StrCat(
        eqn.primitive, " of complex ", in.ToString(), " along axis ", axis,
        ": the log-step scan needs a static length"));
  }
  const int64_t n = in.shape[axis].constant_value();
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  Z<E> z{Part(e, x, 0, d), Part(e, x, 1, d)};
  V<E> axes = e.ConstI64({axis});
  auto slice = [&](V<E> v, int64_t begin, int64_t end) {
    return e.Op("Slice", {v, e.ConstI64({begin}), e.ConstI64({end}), axes}, d);
  };
  auto concat = [&](V<E> a, V<E> b) {
    return e.Op("Concat", {a, b}, d, {OpAttr::Int("axis", axis)});
  };
  for (int64_t k = 1; k < n; k *= 2) {
    // Forward: element i combines with i - k (the earlier one first, as
    // the scan's combine(carry, x)); reverse: with i + k.
    const int64_t lo = reverse ? 0 : k, hi = reverse ? n - k : n;
    const int64_t plo = reverse ? k : 0, phi = reverse ? n : n - k;
    Z<E> earlier{slice(z.re, plo, phi), slice(z.im, plo, phi)};
    Z<E> here{slice(z.re, lo, hi), slice(z.im, lo, hi)};
    Z<E> c = LexicographicPick(e, earlier, here, is_max, d);
    if (!reverse) {
      z = {concat(slice(z.re, 0, k), c.re), concat(slice(z.im, 0, k), c.im)};
    } else {
      z = {concat(c.re, slice(z.re, n - k, n)),
           concat(c.im, slice(z.im, n - k, n))};
    }
  }
  return e.SetOut(0, Pack(e, z.re, z.im, d));
}

// reduce_max / reduce_min of complex values, JAX's reduction with max_hlo /
// min_hlo from the identity -inf / +inf + 0i: the lexicographic extreme of
// the elements and the identity, computed as the extreme real part, then
// the extreme imaginary part among the elements with that real part (the
// identity joins when that real part is the infinite one, or the reduction
// is empty). Exact for inputs without NaN parts; with one, XLA's result
// depends on its (unspecified) reduction order, and so does not this.
template <class E>
absl::Status LowerComplexReduceMaxMin(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval in = OperandAval(eqn, 0);
  const DType d = ComplexPartDType(in.dtype);
  const DType kB = DType::kBool;
  const bool is_max = eqn.primitive == "reduce_max";
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                       eqn.params.GetIntList("axes"));
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  if (axes.empty()) return e.SetOut(0, x);
  const std::vector<jaxpr::DimExpr>& out_shape = eqn.outputs[0]->aval.shape;
  const double extreme = is_max ? -INFINITY : INFINITY;
  bool empty = false, maybe_empty = false;
  for (int64_t a : axes) {
    if (a < 0 || a >= in.rank()) {
      return absl::InvalidArgumentError(
          absl::StrCat(eqn.primitive, ": axis ", a, " out of range"));
    }
    if (in.shape[a].is_constant()) {
      empty |= in.shape[a].constant_value() == 0;
    } else {
      maybe_empty = true;
    }
  }
  if (empty) {
    J2O_ASSIGN_OR_RETURN(V<E> shape, e.ShapeValue(out_shape));
    return e.SetOut(
        0, Pack(e, e.Op("Expand", {ScalarConst(e, d, extreme), shape}, d),
                e.Op("Expand", {ScalarConst(e, d, 0.0), shape}, d), d));
  }
  const char* op = is_max ? "ReduceMax" : "ReduceMin";
  auto reduce = [&](V<E> v, bool keepdims) {
    const int64_t keep = keepdims ? 1 : 0;
    return e.opset() >= 18 ? e.Op(op, {v, e.ConstI64(axes)}, d,
                                  {OpAttr::Int("keepdims", keep)})
                           : e.Op(op, {v}, d,
                                  {OpAttr::Ints("axes", axes),
                                   OpAttr::Int("keepdims", keep)});
  };
  V<E> re = Part(e, x, 0, d), im = Part(e, x, 1, d);
  V<E> ext = ScalarConst(e, d, extreme), zero = ScalarConst(e, d, 0.0);
  V<E> top_re = reduce(re, true);
  V<E> on_top = e.Op("Equal", {re, top_re}, kB);
  V<E> out_re = reduce(re, false);
  V<E> out_im = reduce(Where(e, on_top, im, ext, d), false);
  // The identity (extreme, 0) takes part where the real part is extreme.
  V<E> at_identity = e.Op("Equal", {out_re, ext}, kB);
  out_im = Where(e, at_identity,
                 e.Op(is_max ? "Max" : "Min", {out_im, zero}, d), out_im, d);
  if (maybe_empty) {
    // A symbolic reduced dim that is 0 at run time: the identity.
    std::optional<V<E>> count;
    for (int64_t a : axes) {
      J2O_ASSIGN_OR_RETURN(V<E> n, e.DimValue(in.shape[a]));
      count = count ? e.Op("Mul", {*count, n}, DType::kI64) : n;
    }
    V<E> none = e.Op(
        "Equal",
        {*count, e.Const(jaxpr::Array::ScalarFromInt64(DType::kI64, 0))}, kB);
    out_re = Where(e, none, ext, out_re, d);
    out_im = Where(e, none, zero, out_im, d);
  }
  return e.SetOut(0, Pack(e, out_re, out_im, d));
}

template <class E>
absl::Status LowerComplexRecipe(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  const std::string& p = eqn.primitive;
  const DType out = eqn.outputs[0]->aval.dtype;
  if (p == "fft") return LowerFft(e);
  if (p == "sort") return LowerComplexSort(e);
  if (p == "cholesky") return LowerComplexCholesky(e);
  if (p == "triangular_solve") return LowerComplexTriangularSolve(e);
  if (p == "lu") return LowerComplexLu(e);
  if (p == "qr") return LowerComplexQr(e);
  if (p == "geqrf") return LowerComplexGeqrf(e);
  if (p == "householder_product") return LowerComplexHouseholderProduct(e);
  if (p == "eigh") return LowerComplexEigh(e);
  if (p == "eig") return LowerComplexEig(e);
  if (p == "schur") return LowerComplexSchur(e);
  if (p == "svd") return LowerComplexSvd(e);
  if (p == "tridiagonal_solve") return LowerComplexTridiagonalSolve(e);
  if (p == "hessenberg") return LowerComplexHessenberg(e);
  if (p == "dot_general" || p == "conv_general_dilated") {
    return LowerComplexBilinear(e);
  }
  if (p == "convert_element_type") return LowerConvert(e);
  if (p == "reduce_prod") return LowerComplexReduceProd(e);
  if (p == "reduce_max" || p == "reduce_min") {
    return LowerComplexReduceMaxMin(e);
  }
  if (p == "cumprod") return LowerComplexCumprod(e);
  if (p == "cummax" || p == "cummin") return LowerComplexCumMaxMin(e);
  if (p == "iota") {
    // (iota, 0): the real lowering of the same iota in the part dtype.
    RealEqn real = MakeRealEqn(eqn, {});
    J2O_ASSIGN_OR_RETURN(std::vector<V<E>> re, e.LowerReal(real, {}));
    const DType d = ComplexPartDType(out);
    return e.SetOut(0, Pack(e, re[0], ZerosLike(e, re[0], d), d));
  }
  if (p == "complex") {
    const DType d = ComplexPartDType(out);
    J2O_ASSIGN_OR_RETURN(V<E> re, RealOperand(e, 0, d));
    J2O_ASSIGN_OR_RETURN(V<E> im, RealOperand(e, 1, d));
    return e.SetOut(0, Pack(e, re, im, d));
  }
  const DType in0 = OperandAval(eqn, 0).dtype;
  const DType d = ComplexPartDType(in0);
  if (p == "conj" && !jaxpr::IsComplex(in0)) {
    const DType od = ComplexPartDType(out);
    J2O_ASSIGN_OR_RETURN(V<E> re, RealOperand(e, 0, od));
    return e.SetOut(0, Pack(e, re, ZerosLike(e, re, od), od));
  }
  if (p == "real" || p == "imag") {
    J2O_ASSIGN_OR_RETURN(V<E> z, e.In(0));
    return e.SetOut(0, Part(e, z, p == "real" ? 0 : 1, d));
  }
  if (p == "neg" || p == "add" || p == "sub" || p == "add_any") {
    // Componentwise on the packed [..., 2] tensors; ONNX broadcasting lines
    // a scalar literal's [2] up with the trailing axis.
    J2O_ASSIGN_OR_RETURN(V<E> a, e.In(0));
    if (p == "neg") return e.SetOut(0, U(e, "Neg", a, d));
    J2O_ASSIGN_OR_RETURN(V<E> b, e.In(1));
    V<E> r = B(e, p == "sub" ? "Sub" : "Add", a, b, d);
    if (OperandAval(eqn, 0).shape != eqn.outputs[0]->aval.shape &&
        OperandAval(eqn, 1).shape != eqn.outputs[0]->aval.shape) {
      return RefuseComplex(eqn);  // two scalar literals: not a JAX program
    }
    return e.SetOut(0, r);
  }
  J2O_ASSIGN_OR_RETURN(Z<E> a, ComplexOperand(e, 0, d));
  if (p == "conj") return e.SetOut(0, Pack(e, a.re, U(e, "Neg", a.im, d), d));
  if (p == "abs") return e.SetOut(0, Abs(e, a, d));
  if (p == "exp") {
    Z<E> r = Exp(e, a, d);
    return e.SetOut(0, Pack(e, r.re, r.im, d));
  }
  if (p == "log") {
    Z<E> r = Log(e, a, d);
    return e.SetOut(0, Pack(e, r.re, r.im, d));
  }
  if (p == "sqrt") {
    Z<E> r = Sqrt(e, a, d);
    return e.SetOut(0, Pack(e, r.re, r.im, d));
  }
  if (p == "rsqrt" || p == "exp2" || p == "tan" || p == "expm1" ||
      p == "log1p" || p == "sinh" || p == "cosh" || p == "logistic" ||
      p == "asin" || p == "acos" || p == "asinh" || p == "acosh" ||
      p == "atan" || p == "atanh") {
    Z<E> r = p == "rsqrt"      ? Rsqrt(e, a, d)
             : p == "exp2"     ? Exp2(e, a, d)
             : p == "tan"      ? Tan(e, a, d)
             : p == "expm1"    ? Expm1(e, a, d)
             : p == "sinh"     ? Sinh(e, a, d)
             : p == "cosh"     ? Cosh(e, a, d)
             : p == "logistic" ? Logistic(e, a, d)
             : p == "asin"     ? ComplexAsinAcos(e, a, d).asin
             : p == "acos"     ? ComplexAsinAcos(e, a, d).acos
             : p == "asinh"    ? Asinh(e, a, d)
             : p == "acosh"    ? Acosh(e, a, d)
             : p == "atan"     ? Atan(e, a, d)
             : p == "atanh"    ? Atanh(e, a, d)
                               : Log1p(e, a, d);
    return e.SetOut(0, Pack(e, r.re, r.im, d));
  }
  if (p == "sin" || p == "cos") {
    auto [sh, ch] = SinhCosh(e, a.im, d);
    V<E> s = U(e, "Sin", a.re, d), c = U(e, "Cos", a.re, d);
    if (p == "sin") {
      return e.SetOut(0,
                      Pack(e, B(e, "Mul", s, ch, d), B(e, "Mul", c, sh, d), d));
    }
    return e.SetOut(0, Pack(e, B(e, "Mul", c, ch, d),
                            U(e, "Neg", B(e, "Mul", s, sh, d), d), d));
  }
  if (p == "tanh") {
    // tanh(a + ib) = (sinh 2a + i sin 2b) / (cosh 2a + cos 2b).
    V<E> two = ScalarConst(e, d, 2.0);
    V<E> a2 = B(e, "Mul", a.re, two, d), b2 = B(e, "Mul", a.im, two, d);
    auto [sh, ch] = SinhCosh(e, a2, d);
    V<E> den = B(e, "Add", ch, U(e, "Cos", b2, d), d);
    return e.SetOut(0, Pack(e, B(e, "Div", sh, den, d),
                            B(e, "Div", U(e, "Sin", b2, d), den, d), d));
  }
  if (p == "sign") {
    V<E> r = Abs(e, a, d);
    V<E> zero = ScalarConst(e, d, 0.0);
    V<E> is_zero = e.Op("Equal", {r, zero}, DType::kBool);
    return e.SetOut(
        0, Pack(e, Where(e, is_zero, zero, B(e, "Div", a.re, r, d), d),
                Where(e, is_zero, zero, B(e, "Div", a.im, r, d), d), d));
  }
  if (p == "square") {
    Z<E> r = Mul(e, a, a, d);
    return e.SetOut(0, Pack(e, r.re, r.im, d));
  }
  if (p == "integer_pow") {
    J2O_ASSIGN_OR_RETURN(int64_t y, eqn.params.GetInt("y"));
    Z<E> r = IntegerPow(e, a, y, d);
    return e.SetOut(0, Pack(e, r.re, r.im, d));
  }
  if (p == "pow" && !jaxpr::IsComplex(OperandAval(eqn, 1).dtype)) {
    if (!jaxpr::IsFloat(OperandAval(eqn, 1).dtype)) return RefuseComplex(eqn);
    J2O_ASSIGN_OR_RETURN(V<E> c, RealOperand(e, 1, d));
    Z<E> r = Pow(e, a, Z<E>{c, ZerosLike(e, c, d)}, d);
    return e.SetOut(0, Pack(e, r.re, r.im, d));
  }
  J2O_ASSIGN_OR_RETURN(Z<E> b, ComplexOperand(e, 1, d));
  if (p == "mul") {
    Z<E> r = Mul(e, a, b, d);
    return e.SetOut(0, Pack(e, r.re, r.im, d));
  }
  if (p == "div") {
    Z<E> r = Div(e, a, b, d);
    return e.SetOut(0, Pack(e, r.re, r.im, d));
  }
  if (p == "pow") {
    Z<E> r = Pow(e, a, b, d);
    return e.SetOut(0, Pack(e, r.re, r.im, d));
  }
  if (p == "max" || p == "min") {
    Z<E> r = LexicographicPick(e, a, b, p == "max", d);
    return e.SetOut(0, Pack(e, r.re, r.im, d));
  }
  if (p == "clamp") {
    // clamp(lo, x, hi) = minimum(maximum(lo, x), hi), lexicographic on
    // complex values (StableHLO's clamp, which JAX lowers to).
    // a = lo, b = x, the interpreter's MinValue(hi, MaxValue(lo, x)).
    J2O_ASSIGN_OR_RETURN(Z<E> hi, ComplexOperand(e, 2, d));
    Z<E> r =
        LexicographicPick(e, hi, LexicographicPick(e, a, b, true, d), false, d);
    return e.SetOut(0, Pack(e, r.re, r.im, d));
  }
  if (p == "eq" || p == "ne") {
    // XLA: eq is ordered equality of both parts, ne its negation (so NaN
    // parts are unequal).
    V<E> both = e.Op("And",
                     {e.Op("Equal", {a.re, b.re}, DType::kBool),
                      e.Op("Equal", {a.im, b.im}, DType::kBool)},
                     DType::kBool);
    return e.SetOut(0, p == "eq" ? both : e.Op("Not", {both}, DType::kBool));
  }
  return RefuseComplex(eqn);
}

}  // namespace jax2onnx::plugin::complex

#endif  // JAX2ONNX_PLUGIN_COMPLEX_PLAN_RECIPES_H_
