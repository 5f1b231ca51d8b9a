// Pipeline-independent lowering recipes for the reduction family, written
// once against the neutral emitter interface of plugin/emit.h and
// instantiated by plugins/ and plugins2/.
//
// reduce_{sum,max,min,prod} are ONNX Reduce* in a dtype ONNX Runtime has a
// kernel for (plugin::ComputeDType: wrapping integers, ordering-preserving
// carriers) and cast back; float reduce_max/min get the NaN and signed-zero
// fix-up of plugin/float_extremes.h, and cummax/cummin combine with its
// ExactMaxMin; reduce_{and,or,xor} on bool are min/max/parity of 0/1. argmax/argmin follow JAX's NaN rule (the first NaN wins).
//
// cumsum is ONNX CumSum in such a dtype. cumprod/cummax/cummin/cumlogsumexp
// are a log-step Hillis-Steele scan: after the step with offset k, element i
// combines the 2k elements ending at i; each step is Concat(head, op(tail,
// shifted)) with Slices, so no identity element (and no fill value that
// could differ from JAX's) is involved, and integer scans are exact.
// cumlogsumexp combines with a stable logaddexp in f32 (f16/bf16) or f64.
// The scanned axis of the log-step scans must be static.
#ifndef JAX2ONNX_PLUGIN_REDUCTION_PLAN_H_
#define JAX2ONNX_PLUGIN_REDUCTION_PLAN_H_

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
#include "plugin/float_extremes.h"
#include "plugin/lax_plan.h"
#include "plugin/onnx_types.h"
#include "plugin/u64_order.h"

namespace jax2onnx::plugin {

namespace reduction_internal {

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

// Axes in [0, rank) of the `axes` param.
inline absl::StatusOr<std::vector<int64_t>> ReduceAxes(const jaxpr::Eqn& eqn,
                                                       int rank) {
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                       eqn.params.GetIntList("axes"));
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("axis ", a, " is outside rank ", rank));
    }
    if (a < 0) a += rank;
  }
  return axes;
}

// ONNX Reduce* with keepdims=0; the axes are an input from opset 18 (13 for
// ReduceSum), an attribute before.
template <class E>
V<E> Reduce(E& e, absl::string_view op, V<E> x, jaxpr::DType dtype,
            const std::vector<int64_t>& axes) {
  if (op == "ReduceSum" || e.opset() >= 18) {
    return e.Op(op, {x, e.ConstI64(axes)}, dtype, {OpAttr::Int("keepdims", 0)});
  }
  return e.Op(op, {x}, dtype,
              {OpAttr::Int("keepdims", 0), OpAttr::Ints("axes", axes)});
}

// reduce_sum of integers with XLA's two's-complement wraparound. ONNX
// Runtime 1.30's integer ReduceSum accumulates in double and saturates at
// the dtype's range (reduction_ops.h), so it neither wraps nor stays exact
// past 2^53 (i32 [INT_MIN, 0, INT_MAX, -1, 1, 1, INT_MAX, -1] summed to
// INT_MIN instead of INT_MAX - 1). The operand (`w` = i32 or i64) is split
// into 16-bit limbs, x = sum_k l_k 2^(16 k) with l_k = x mod 2^16 in
// [0, 2^16) (Mod with a positive divisor) and the top limb signed; each
// limb is summed in i64 (|sum| <= n 2^16: exact in double below 2^37
// elements) and the sums are recombined with i64 Mul/Add, which wrap. The
// i64 result's low bits are the wrapped sum (a Cast to i32 keeps them).
template <class E>
absl::StatusOr<V<E>> WrappingIntegerReduceSum(
    E& e, V<E> x, jaxpr::DType w, const std::vector<int64_t>& axes) {
  using jaxpr::DType;
  auto i64 = [&](int64_t v) {
    return e.Const(jaxpr::Array::ScalarFromInt64(DType::kI64, v));
  };
  J2O_ASSIGN_OR_RETURN(V<E> rest, CastTo(e, x, w, DType::kI64));
  const int limbs = w == DType::kI64 ? 4 : 2;
  V<E> total = rest;
  for (int k = 0; k < limbs; ++k) {
    V<E> limb = rest;
    if (k + 1 < limbs) {
      limb = e.Op("Mod", {rest, i64(65536)}, DType::kI64,
                  {OpAttr::Int("fmod", 0)});
      rest = e.Op("Div", {e.Op("Sub", {rest, limb}, DType::kI64), i64(65536)},
                  DType::kI64);
    }
    V<E> sum = Reduce(e, "ReduceSum", limb, DType::kI64, axes);
    if (k == 0) {
      total = sum;
    } else {
      total = e.Op("Add",
                   {total, e.Op("Mul", {sum, i64(int64_t{1} << (16 * k))},
                                DType::kI64)},
                   DType::kI64);
    }
  }
  return CastTo(e, total, DType::kI64, w);
}

struct ReduceKind {
  const char* primitive;
  const char* onnx_op;
  ArithUse use;
  bool bool_only;
};

inline constexpr ReduceKind kReductions[] = {
    {"reduce_sum", "ReduceSum", ArithUse::kWrapping, false},
    {"reduce_prod", "ReduceProd", ArithUse::kWrapping, false},
    {"reduce_max", "ReduceMax", ArithUse::kOrdering, false},
    {"reduce_min", "ReduceMin", ArithUse::kOrdering, false},
    // On bool, and/or are min/max of 0/1; xor is the parity of the sum.
    {"reduce_and", "ReduceMin", ArithUse::kOrdering, true},
    {"reduce_or", "ReduceMax", ArithUse::kOrdering, true},
    {"reduce_xor", "ReduceSum", ArithUse::kWrapping, true},
};

}  // namespace reduction_internal

// The primitives LowerReduce handles, in registration order.
inline std::vector<const char*> ReducePrimitives() {
  std::vector<const char*> names;
  for (const reduction_internal::ReduceKind& k :
       reduction_internal::kReductions) {
    names.push_back(k.primitive);
  }
  return names;
}
// The ONNX op reduce primitive `primitive` uses ("" when it is none of them).
inline const char* ReduceOnnxOp(absl::string_view primitive) {
  for (const reduction_internal::ReduceKind& k :
       reduction_internal::kReductions) {
    if (primitive == k.primitive) return k.onnx_op;
  }
  return "";
}
// True for reduce_{and,or,xor}, which only take bool.
inline bool ReduceIsBoolOnly(absl::string_view primitive) {
  for (const reduction_internal::ReduceKind& k :
       reduction_internal::kReductions) {
    if (primitive == k.primitive) return k.bool_only;
  }
  return false;
}

template <class E>
absl::Status LowerReduce(E& e) {
  namespace ri = reduction_internal;
  using jaxpr::DType;
  const jaxpr::Eqn& eqn = e.eqn();
  const ri::ReduceKind* kind = nullptr;
  for (const ri::ReduceKind& k : ri::kReductions) {
    if (eqn.primitive == k.primitive) kind = &k;
  }
  if (kind == nullptr) {
    return absl::InternalError(
        absl::StrCat("LowerReduce registered for '", eqn.primitive, "'"));
  }
  const DType dtype = eqn.outputs[0]->aval.dtype;
  if (kind->bool_only && dtype != DType::kBool) {
    return absl::UnimplementedError(absl::StrCat(
        eqn.primitive, " on ", jaxpr::ShortName(dtype),
        ": only the bool (logical) form is supported, not bitwise integers"));
  }
  if (jaxpr::IsComplex(dtype)) {
    return absl::UnimplementedError(
        absl::StrCat(eqn.primitive, " on ", jaxpr::ShortName(dtype),
                     ": ONNX has no complex arithmetic"));
  }
  // The operand has the result's dtype; a literal operand is a scalar.
  const int rank =
      eqn.inputs[0].is_literal() ? 0 : eqn.inputs[0].var->aval.rank();
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ri::ReduceAxes(eqn, rank));
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  if (axes.empty()) return e.SetOut(0, x);
  if (dtype == DType::kU64 && kind->use == ArithUse::kOrdering) {
    // reduce_max/min on u64: no ORT kernel orders u64 (plugin/u64_order.h).
    auto key =
        ri::Reduce(e, kind->onnx_op, U64ToOrderedI64(e, x), DType::kI64, axes);
    return e.SetOut(0, OrderedI64ToU64(e, key));
  }
  J2O_ASSIGN_OR_RETURN(DType work,
                       ComputeDType(dtype, kind->use, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(x, ri::CastTo(e, x, dtype, work));
  const bool integer_sum = absl::string_view(kind->onnx_op) == "ReduceSum" &&
                           (work == DType::kI32 || work == DType::kI64);
  J2O_ASSIGN_OR_RETURN(
      auto reduced,
      integer_sum ? ri::WrappingIntegerReduceSum(e, x, work, axes)
                  : absl::StatusOr<ri::V<E>>(
                        ri::Reduce(e, kind->onnx_op, x, work, axes)));
  if (jaxpr::IsFloat(work) && kind->use == ArithUse::kOrdering) {
    // ORT's ReduceMax/Min skip a NaN that is not first and order -0/+0 by
    // position; XLA propagates NaN and has -0 < +0 (plugin/float_extremes.h).
    reduced = FixFloatReduceMaxMin(
        e, x, reduced, work, eqn.primitive == "reduce_max",
        [&](absl::string_view op, ri::V<E> v, DType d) {
          return ri::Reduce(e, op, v, d, axes);
        });
  }
  x = reduced;
  if (eqn.primitive == "reduce_xor") {
    x = e.Op("Mod", {x, e.Const(jaxpr::Array::ScalarFromDouble(work, 2))},
             work);
  }
  J2O_ASSIGN_OR_RETURN(x, ri::CastTo(e, x, work, dtype));
  return e.SetOut(0, x);
}

// argmax/argmin: ONNX ArgMax/ArgMin pick the first extreme index
// (select_last_index=0) like JAX, but JAX also treats NaN as the extreme and
// returns the first NaN's index; that index comes from ArgMax over the
// IsNaN mask and replaces the ordinary answer wherever the slice has a NaN.
template <class E>
absl::Status LowerArgExtreme(E& e) {
  namespace ri = reduction_internal;
  using jaxpr::DType;
  const jaxpr::Eqn& eqn = e.eqn();
  const bool is_max = eqn.primitive == "argmax";
  const jaxpr::Aval& in = eqn.inputs[0].var->aval;
  const DType index_dtype = eqn.outputs[0]->aval.dtype;
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                       ri::ReduceAxes(eqn, in.rank()));
  if (axes.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        eqn.primitive, " needs exactly one axis, got ", axes.size()));
  }
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  if (in.dtype == DType::kU64) {
    // No ORT ArgMax/ArgMin on u64: the order-preserving i64 key has the same
    // first extreme index (plugin/u64_order.h).
    x = U64ToOrderedI64(e, x);
  } else {
    J2O_ASSIGN_OR_RETURN(
        DType work, ComputeDType(in.dtype, ArithUse::kOrdering, eqn.primitive));
    J2O_ASSIGN_OR_RETURN(x, ri::CastTo(e, x, in.dtype, work));
  }
  const std::vector<OpAttr> arg_attrs = {OpAttr::Int("axis", axes[0]),
                                         OpAttr::Int("keepdims", 0),
                                         OpAttr::Int("select_last_index", 0)};
  auto index = e.Op(is_max ? "ArgMax" : "ArgMin", {x}, DType::kI64, arg_attrs);
  if (jaxpr::IsFloat(in.dtype)) {
    J2O_ASSIGN_OR_RETURN(
        auto nan, ri::CastTo(e, e.Op("IsNaN", {x}, DType::kBool), DType::kBool,
                             DType::kI32));
    auto first_nan = e.Op("ArgMax", {nan}, DType::kI64, arg_attrs);
    J2O_ASSIGN_OR_RETURN(
        auto any_nan,
        ri::CastTo(e, ri::Reduce(e, "ReduceMax", nan, DType::kI32, axes),
                   DType::kI32, DType::kBool));
    index = e.Op("Where", {any_nan, first_nan, index}, DType::kI64);
  }
  J2O_ASSIGN_OR_RETURN(index, ri::CastTo(e, index, DType::kI64, index_dtype));
  return e.SetOut(0, index);
}

template <class E>
absl::Status LowerCumsum(E& e) {
  namespace ri = reduction_internal;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval& in = eqn.inputs[0].var->aval;
  J2O_ASSIGN_OR_RETURN(auto params, ri::CumulativeParams(eqn, in.rank()));
  J2O_ASSIGN_OR_RETURN(
      jaxpr::DType work,
      ComputeDType(in.dtype, ArithUse::kWrapping, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  J2O_ASSIGN_OR_RETURN(x, ri::CastTo(e, x, in.dtype, work));
  x = e.Op("CumSum",
           {x, e.Const(jaxpr::Array::ScalarFromInt64(jaxpr::DType::kI64,
                                                     params.first))},
           work, {OpAttr::Int("reverse", params.second ? 1 : 0)});
  J2O_ASSIGN_OR_RETURN(x, ri::CastTo(e, x, work, in.dtype));
  return e.SetOut(0, x);
}

template <class E>
absl::Status LowerCumulativeScan(E& e) {
  namespace ri = reduction_internal;
  using jaxpr::DType;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval& in = eqn.inputs[0].var->aval;
  J2O_ASSIGN_OR_RETURN(auto params, ri::CumulativeParams(eqn, in.rank()));
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
  auto combine = [&](ri::V<E> a, ri::V<E> b) {
    if (is_logsumexp) return ri::LogAddExp(e, a, b, work);
    if (is_prod) return e.Op(op, {a, b}, work);
    // Exact for NaN and signed zeros, and for i64 (whose ONNX Runtime Max/Min
    // misorder some values): plugin/float_extremes.h.
    return ExactMaxMin(e, a, b, work, eqn.primitive == "cummax");
  };
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  J2O_ASSIGN_OR_RETURN(x, ri::CastTo(e, x, in.dtype, work));
  auto axes = e.ConstI64({axis});
  auto slice = [&](ri::V<E> v, int64_t begin, int64_t end) {
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
  J2O_ASSIGN_OR_RETURN(x, ri::CastTo(e, x, work, in.dtype));
  return e.SetOut(0, x);
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_REDUCTION_PLAN_H_
