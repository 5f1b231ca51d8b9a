// Pipeline-independent lowering recipes for the reduction family, written
// once against the neutral emitter interface of plugin/emit.h and
// instantiated by plugins/ and plugins2/.
//
// reduce_{sum,max,min,prod} are ONNX Reduce* in a dtype ONNX Runtime has a
// kernel for (plugin::ComputeDType: wrapping integers, ordering-preserving
// carriers) and cast back, except where ONNX Runtime 1.30 is wrong: integer
// sums and products wrap by hand (WrappingIntegerReduceSum/Prod) and i64
// max/min reduce i32 halves (ExactI64ReduceExtreme); float reduce_max/min get
// the NaN and signed-zero fix-up of plugin/float_extremes.h, and cummax/cummin
// combine with its ExactMaxMin; reduce_{and,or,xor} on bool are min/max/parity
// of 0/1. argmax/argmin follow JAX's NaN rule (the first NaN wins).
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

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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

// ONNX Reduce* (keepdims=0 unless asked); the axes are an input from opset
// 18 (13 for ReduceSum), an attribute before.
template <class E>
V<E> Reduce(E& e, absl::string_view op, V<E> x, jaxpr::DType dtype,
            const std::vector<int64_t>& axes, bool keepdims = false) {
  const OpAttr keep = OpAttr::Int("keepdims", keepdims ? 1 : 0);
  if (op == "ReduceSum" || e.opset() >= 18) {
    return e.Op(op, {x, e.ConstI64(axes)}, dtype, {keep});
  }
  return e.Op(op, {x}, dtype, {keep, OpAttr::Ints("axes", axes)});
}

// reduce_max/min of i64 (also the i64 carriers of u32 and of u64's ordered
// keys) without ONNX Runtime's i64 ReduceMax/ReduceMin: in 1.30 on x86-64
// their fast paths over a trailing or whole-tensor axis misorder values that
// share their high 32 bits when the low 32 bits differ in bit 31 (a row
// [1, 2, 3, 4, 5, 3000000000] gave max 5 and [373684873, 3753148654,
// 4236361778, 846149957, 991589548, 1771061856] gave max 1771061856 and min
// 3753148654: the low words compared as signed), while i32 ReduceMax/Min
// are right. So x = hi 2^32 + lo with hi = floor(x / 2^32) in [-2^31, 2^31)
// and lo = x mod 2^32 in [0, 2^32) (Mod with a positive divisor; x - lo is a
// multiple of 2^32, so the Div is exact), both taken to i32 (lo biased by
// -2^31 to keep its order); the extreme hi is reduced in i32, then the
// extreme lo among the elements holding it (the others masked with the
// identity INT32_MIN/MAX), and hi 2^32 + lo + 2^31 is the answer. An empty
// reduction gives INT64_MIN (max) / INT64_MAX (min), JAX's identities.
template <class E>
V<E> ExactI64ReduceExtreme(E& e, V<E> x, bool is_max,
                           const std::vector<int64_t>& axes) {
  using jaxpr::DType;
  auto i64 = [&](int64_t v) {
    return e.Const(jaxpr::Array::ScalarFromInt64(DType::kI64, v));
  };
  auto to = [&](V<E> v, DType d) {
    return e.Op("Cast", {v}, d, {OpAttr::Int("to", elementwise::OnnxType(d))});
  };
  const int64_t kWord = int64_t{1} << 32;
  const int64_t kHalf = int64_t{1} << 31;
  V<E> lo = e.Op("Mod", {x, i64(kWord)}, DType::kI64, {OpAttr::Int("fmod", 0)});
  V<E> hi = to(
      e.Op("Div", {e.Op("Sub", {x, lo}, DType::kI64), i64(kWord)}, DType::kI64),
      DType::kI32);
  V<E> lo_biased = to(e.Op("Sub", {lo, i64(kHalf)}, DType::kI64), DType::kI32);
  const char* op = is_max ? "ReduceMax" : "ReduceMin";
  V<E> top_hi = Reduce(e, op, hi, DType::kI32, axes, /*keepdims=*/true);
  V<E> identity = e.Const(jaxpr::Array::ScalarFromInt64(
      DType::kI32, is_max ? std::numeric_limits<int32_t>::min()
                          : std::numeric_limits<int32_t>::max()));
  V<E> candidates = e.Op(
      "Where", {e.Op("Equal", {hi, top_hi}, DType::kBool), lo_biased, identity},
      DType::kI32);
  V<E> top_lo = Reduce(e, op, candidates, DType::kI32, axes);
  V<E> top_hi_flat = e.Op("Squeeze", {top_hi, e.ConstI64(axes)}, DType::kI32);
  return e.Op(
      "Add",
      {e.Op("Mul", {to(top_hi_flat, DType::kI64), i64(kWord)}, DType::kI64),
       e.Op("Add", {to(top_lo, DType::kI64), i64(kHalf)}, DType::kI64)},
      DType::kI64);
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

// reduce_prod of integers with XLA's two's-complement wraparound. ONNX
// Runtime 1.30's integer ReduceProd accumulates in double and saturates
// like its ReduceSum (i32 products past 2^31 gave INT32_MAX, i64 ones
// INT64_MIN), while its Mul wraps. So the product is taken with Mul alone:
// the reduced axes go first and are flattened to one axis of R elements
// ([R, kept...]); with every dim static, R halves log2(R) times (the first
// half times the second, an odd last row carried along), else one Loop
// multiplies the rows into ones. Multiplication mod 2^n is commutative and
// associative, so the order does not change the wrapped product.
template <class E>
absl::StatusOr<V<E>> WrappingIntegerReduceProd(
    E& e, V<E> x, jaxpr::DType w, const std::vector<jaxpr::DimExpr>& shape,
    const std::vector<int64_t>& axes) {
  using jaxpr::DType;
  const int rank = static_cast<int>(shape.size());
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) reduced[a] = true;
  std::vector<int64_t> perm(axes.begin(), axes.end());
  std::sort(perm.begin(), perm.end());
  const int k = static_cast<int>(perm.size());
  bool all_static = true;
  int64_t rows = 1;
  std::vector<int64_t> kept_static;
  for (int d = 0; d < rank; ++d) {
    all_static &= shape[d].is_constant();
    if (!reduced[d]) perm.push_back(d);
  }
  bool identity = true;
  for (int d = 0; d < rank; ++d) identity &= perm[d] == d;
  if (!identity) x = e.Op("Transpose", {x}, w, {OpAttr::Ints("perm", perm)});
  V<E> one = e.Const(jaxpr::Array::ScalarFromInt64(w, 1));
  if (all_static) {
    for (int d = 0; d < rank; ++d) {
      const int64_t size = shape[perm[d]].constant_value();
      if (d < k) {
        rows *= size;
      } else {
        kept_static.push_back(size);
      }
    }
    V<E> kept_shape = e.ConstI64(kept_static);
    if (rows == 0) return e.Op("Expand", {one, kept_shape}, w);
    std::vector<int64_t> flat_shape = {rows};
    flat_shape.insert(flat_shape.end(), kept_static.begin(), kept_static.end());
    V<E> y = e.Op("Reshape", {x, e.ConstI64(flat_shape)}, w);
    auto rows_of = [&](V<E> v, int64_t begin, int64_t end) {
      return e.Op("Slice",
                  {v, e.ConstI64({begin}), e.ConstI64({end}), e.ConstI64({0})},
                  w);
    };
    for (int64_t n = rows; n > 1; n = n / 2 + n % 2) {
      const int64_t h = n / 2;
      V<E> product = e.Op("Mul", {rows_of(y, 0, h), rows_of(y, h, 2 * h)}, w);
      if (n % 2 == 1) {
        product = e.Op("Concat", {product, rows_of(y, 2 * h, n)}, w,
                       {OpAttr::Int("axis", 0)});
      }
      y = product;
    }
    return e.Op("Squeeze", {y, e.ConstI64({0})}, w);
  }
  V<E> kept_shape = e.Op("Shape", {x}, DType::kI64, {OpAttr::Int("start", k)});
  V<E> flat = e.Op("Reshape",
                   {x, e.Op("Concat", {e.ConstI64({-1}), kept_shape},
                            DType::kI64, {OpAttr::Int("axis", 0)})},
                   w);
  V<E> trip = e.Op("Gather",
                   {e.Op("Shape", {flat}, DType::kI64),
                    e.Const(jaxpr::Array::ScalarFromInt64(DType::kI64, 0))},
                   DType::kI64, {OpAttr::Int("axis", 0)});
  std::vector<jaxpr::DimExpr> kept_dims;
  for (int d = k; d < rank; ++d) kept_dims.push_back(shape[perm[d]]);
  J2O_ASSIGN_OR_RETURN(std::vector<V<E>> product,
                       e.Loop(trip, {e.Op("Expand", {one, kept_shape}, w)},
                              {CarriedType(w, kept_dims)},
                              [&](V<E> r, const std::vector<V<E>>& acc)
                                  -> absl::StatusOr<std::vector<V<E>>> {
                                return std::vector<V<E>>{e.Op(
                                    "Mul",
                                    {acc[0], e.Op("Gather", {flat, r}, w,
                                                  {OpAttr::Int("axis", 0)})},
                                    w)};
                              }));
  return product[0];
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
    auto key = ri::ExactI64ReduceExtreme(e, U64ToOrderedI64(e, x),
                                         eqn.primitive == "reduce_max", axes);
    return e.SetOut(0, OrderedI64ToU64(e, key));
  }
  J2O_ASSIGN_OR_RETURN(DType work,
                       ComputeDType(dtype, kind->use, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(x, ri::CastTo(e, x, dtype, work));
  const bool integer_sum = absl::string_view(kind->onnx_op) == "ReduceSum" &&
                           (work == DType::kI32 || work == DType::kI64);
  const bool integer_prod = absl::string_view(kind->onnx_op) == "ReduceProd" &&
                            (work == DType::kI32 || work == DType::kI64);
  const bool i64_extreme =
      work == DType::kI64 && kind->use == ArithUse::kOrdering;
  J2O_ASSIGN_OR_RETURN(
      auto reduced,
      integer_sum    ? ri::WrappingIntegerReduceSum(e, x, work, axes)
      : integer_prod ? ri::WrappingIntegerReduceProd(
                           e, x, work, eqn.inputs[0].var->aval.shape, axes)
      : i64_extreme
          ? absl::StatusOr<ri::V<E>>(ri::ExactI64ReduceExtreme(
                e, x, absl::string_view(kind->onnx_op) == "ReduceMax", axes))
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
