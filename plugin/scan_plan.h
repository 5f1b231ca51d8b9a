// Pipeline-independent lowering recipes for the cumulative scans (cumsum,
// cumprod, cummax, cummin, cumlogsumexp), written once against the neutral
// emitter interface of plugin/emit.h and instantiated by plugins/ and
// plugins2/.
//
// cumsum is ONNX CumSum in a dtype ORT has a kernel for (wrapping integers
// cast back). The others are a log-step Hillis-Steele scan: after the step
// with offset k, element i combines the 2k elements ending at i; each step is
// Concat(head, op(tail, shifted)) with Slices, so no identity element (and no
// fill value that could differ from JAX's) is involved, and integer scans are
// exact. cumlogsumexp combines with a stable logaddexp in f32 (f16/bf16) or
// f64. The scanned axis of the log-step scans must be static.
#ifndef JAX2ONNX_PLUGIN_SCAN_PLAN_H_
#define JAX2ONNX_PLUGIN_SCAN_PLAN_H_

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/emit.h"
#include "plugin/lax_plan.h"
#include "plugin/onnx_types.h"

namespace jax2onnx::plugin {

namespace scan_internal {

template <class E>
using V = typename E::Value;

// (axis in [0, rank), reverse) of a cumulative primitive.
inline absl::StatusOr<std::pair<int64_t, bool>> CumulativeParams(
    const jaxpr::Eqn& eqn, int rank) {
  J2O_ASSIGN_OR_RETURN(int64_t axis, eqn.params.GetInt("axis"));
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is outside rank ", rank));
  }
  if (axis < 0) axis += rank;
  bool reverse = false;
  if (eqn.params.Has("reverse")) {
    J2O_ASSIGN_OR_RETURN(reverse, eqn.params.GetBool("reverse"));
  }
  return std::make_pair(axis, reverse);
}

template <class E>
absl::StatusOr<V<E>> CastTo(E& e, V<E> v, jaxpr::DType from, jaxpr::DType to) {
  if (from == to) return v;
  J2O_ASSIGN_OR_RETURN(int code, OnnxDType(to));
  return e.Op("Cast", {v}, to, {OpAttr::Int("to", code)});
}

// log(exp(a) + exp(b)) as max(a, b) + log1p(exp(-|a - b|)), with equal
// arguments (including equal infinities, where a - b is NaN) giving
// a + log(2); NaN propagates through Max. log1p(t) for t in [0, 1] is
// log(u) * t / (u - 1) with u = 1 + t, exact where u rounds to 1.
template <class E>
V<E> LogAddExp(E& e, V<E> a, V<E> b, jaxpr::DType d) {
  V<E> zero = e.Const(jaxpr::Array::ScalarFromDouble(d, 0.0));
  V<E> one = e.Const(jaxpr::Array::ScalarFromDouble(d, 1.0));
  auto op = [&](absl::string_view type, std::vector<V<E>> ins) {
    return e.Op(type, std::move(ins), d);
  };
  auto cmp = [&](absl::string_view type, std::vector<V<E>> ins) {
    return e.Op(type, std::move(ins), jaxpr::DType::kBool);
  };
  V<E> m = op("Max", {a, b});
  V<E> diff = op("Where", {cmp("Equal", {a, b}), zero, op("Sub", {a, b})});
  V<E> t = op("Exp", {op("Neg", {op("Abs", {diff})})});
  V<E> u = op("Add", {one, t});
  V<E> um1 = op("Sub", {u, one});
  V<E> exact_one = cmp("Equal", {um1, zero});
  V<E> safe_um1 = op("Where", {exact_one, one, um1});
  V<E> log1p =
      op("Where",
         {exact_one, t, op("Div", {op("Mul", {op("Log", {u}), t}), safe_um1})});
  return op("Add", {m, log1p});
}

}  // namespace scan_internal

template <class E>
absl::Status LowerCumsum(E& e) {
  namespace si = scan_internal;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval& in = eqn.inputs[0].var->aval;
  J2O_ASSIGN_OR_RETURN(auto params, si::CumulativeParams(eqn, in.rank()));
  J2O_ASSIGN_OR_RETURN(
      jaxpr::DType work,
      ComputeDType(in.dtype, ArithUse::kWrapping, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  J2O_ASSIGN_OR_RETURN(x, si::CastTo(e, x, in.dtype, work));
  x = e.Op("CumSum",
           {x, e.Const(jaxpr::Array::ScalarFromInt64(jaxpr::DType::kI64,
                                                     params.first))},
           work, {OpAttr::Int("reverse", params.second ? 1 : 0)});
  J2O_ASSIGN_OR_RETURN(x, si::CastTo(e, x, work, in.dtype));
  return e.SetOut(0, x);
}

template <class E>
absl::Status LowerCumulativeScan(E& e) {
  namespace si = scan_internal;
  using jaxpr::DType;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval& in = eqn.inputs[0].var->aval;
  J2O_ASSIGN_OR_RETURN(auto params, si::CumulativeParams(eqn, in.rank()));
  const auto [axis, reverse] = params;
  const bool is_prod = eqn.primitive == "cumprod";
  const bool is_logsumexp = eqn.primitive == "cumlogsumexp";
  const char* op = is_prod ? "Mul" : eqn.primitive == "cummax" ? "Max" : "Min";
  if (!in.shape[axis].is_constant()) {
    return absl::UnimplementedError(absl::StrCat(
        eqn.primitive, " along symbolic axis ", axis, " of ", in.ToString(),
        ": the log-step scan needs a static length"));
  }
  if (jaxpr::IsComplex(in.dtype) ||
      (is_logsumexp && !jaxpr::IsFloat(in.dtype))) {
    return absl::UnimplementedError(
        absl::StrCat(eqn.primitive, " on ", jaxpr::ShortName(in.dtype)));
  }
  const int64_t n = in.shape[axis].constant_value();
  DType work = in.dtype;
  if (is_logsumexp) {
    // f16/bf16 accumulate in f32 and round once at the end.
    if (work != DType::kF64) work = DType::kF32;
  } else {
    J2O_ASSIGN_OR_RETURN(work,
                         ComputeDType(in.dtype,
                                      is_prod ? ArithUse::kWrapping
                                              : ArithUse::kElementwiseOrdering,
                                      eqn.primitive));
  }
  auto combine = [&](si::V<E> a, si::V<E> b) {
    return is_logsumexp ? si::LogAddExp(e, a, b, work) : e.Op(op, {a, b}, work);
  };
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  J2O_ASSIGN_OR_RETURN(x, si::CastTo(e, x, in.dtype, work));
  auto axes = e.ConstI64({axis});
  auto slice = [&](si::V<E> v, int64_t begin, int64_t end) {
    return e.Op("Slice", {v, e.ConstI64({begin}), e.ConstI64({end}), axes},
                work);
  };
  const OpAttr concat_axis = OpAttr::Int("axis", axis);
  for (int64_t k = 1; k < n; k *= 2) {
    if (!reverse) {
      auto combined = combine(slice(x, k, n), slice(x, 0, n - k));
      x = e.Op("Concat", {slice(x, 0, k), combined}, work, {concat_axis});
    } else {
      auto combined = combine(slice(x, 0, n - k), slice(x, k, n));
      x = e.Op("Concat", {combined, slice(x, n - k, n)}, work, {concat_axis});
    }
  }
  J2O_ASSIGN_OR_RETURN(x, si::CastTo(e, x, work, in.dtype));
  return e.SetOut(0, x);
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_SCAN_PLAN_H_
