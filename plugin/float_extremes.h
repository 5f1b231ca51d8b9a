// Exact float max/min, elementwise and reduced, for the shared recipes.
//
// XLA's `maximum`/`minimum` (and reduce with them as the body) follow
// IEEE 754-2019 maximum/minimum (StableHLO spec, "maximum": "For floats:
// maximum from IEEE-754"; IEEE 754-2019 §9.6: a NaN operand gives a quiet
// NaN, and "+0 compares greater than -0"). ONNX Runtime 1.30 differs:
//   * ReduceMax/ReduceMin skip a NaN that is not the first element of a
//     slice (reduce_max([1, nan, -1, 3]) = 1);
//   * Max/Min/ReduceMax/ReduceMin return whichever of -0 and +0 comes first;
//   * Where turns a -0 selected from its true branch into +0.
// These helpers lower exactly with a NaN mask and a sign-of-zero fix-up, so
// every recipe that orders floats (reduce_max/min, max/min, cummax/cummin,
// reduce_window max/min, pmax/pmin, scatter max/min) shares one correct
// form. Integer dtypes take the plain ONNX op, except i64 (OrderedMaxMin).
//
// The emitter needs only `Op(type, inputs, dtype)` and `Const(Array)`, which
// both the elementwise emitter and the plugin/emit.h one provide.
#ifndef JAX2ONNX_PLUGIN_FLOAT_EXTREMES_H_
#define JAX2ONNX_PLUGIN_FLOAT_EXTREMES_H_

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"

namespace jax2onnx::plugin {

// ONNX Runtime 1.30's Where does not return every selected zero with its
// sign: it computes X_sel = cond ? X : +0, Y_sel = cond ? +0 : Y and returns
// X_sel != 0 ? X_sel : Y_sel (where_op.cc), so a -0 taken from X comes out
// as +0 (Where([true], [-0], [5]) = [+0]) while a -0 taken from Y keeps its
// sign; its NotWhereFusion swaps the branches of Where(Not(c), x, y), and
// its NoopElimination deletes x + 0 against a constant 0 (so x + 0 cannot
// be relied on to turn -0 into +0). Hence: zeros are first made +0 by
// Where(r == 0, +0, r) (+0 from X is kept), then multiplied by s =
// want_negative_zero ? -1 : 1 (a Where of two nonzero constants); s is -1
// only where r is a zero, and NaN and inf pass unchanged.
template <class E, class V>
V SelectNegativeZero(E& e, V want_negative_zero, V r, jaxpr::DType d) {
  using jaxpr::DType;
  V zero = e.Const(jaxpr::Array::ScalarFromDouble(d, 0.0));
  V positive_zeros = e.Op(
      "Where", {e.Op("Equal", {r, zero}, DType::kBool), zero, r}, d);
  V sign = e.Op("Where",
                {want_negative_zero,
                 e.Const(jaxpr::Array::ScalarFromDouble(d, -1.0)),
                 e.Const(jaxpr::Array::ScalarFromDouble(d, 1.0))},
                d);
  return e.Op("Mul", {positive_zeros, sign}, d);
}

// x is a zero of sign `negative` (1/x is -inf for -0, +inf for +0).
template <class E, class V>
V IsSignedZero(E& e, V x, jaxpr::DType d, bool negative) {
  using jaxpr::DType;
  V zero = e.Const(jaxpr::Array::ScalarFromDouble(d, 0.0));
  return e.Op("And",
              {e.Op("Equal", {x, zero}, DType::kBool),
               e.Op(negative ? "Less" : "Greater",
                    {e.Op("Reciprocal", {x}, d), zero}, DType::kBool)},
              DType::kBool);
}

// max(a, b) / min(a, b) of two values of dtype `d` (an ONNX-computable dtype:
// f16/bf16 already widened). For floats: NaN if either is NaN (ORT's
// Max/Min propagate it in either position), and max(-0, +0) = +0,
// min(-0, +0) = -0 in either order: a zero result is -0 exactly when (max)
// neither operand is +0 or (min) either operand is -0.
// max(a, b) / min(a, b) as ONNX Max/Min, except on i64: ONNX Runtime 1.30's
// CPU Max/Min on int64 misorder two values whose high 32-bit words agree and
// whose low words differ in bit 31 (Max(6, 4294967295) = 6, docs/dtypes.md),
// while Greater/Less order int64 exactly, so i64 picks with them and Where
// (no zeros' signs or NaNs to care about in an integer).
template <class E, class V>
V OrderedMaxMin(E& e, V a, V b, jaxpr::DType d, bool is_max) {
  if (d == jaxpr::DType::kI64) {
    V keep_a = e.Op(is_max ? "Greater" : "Less", {a, b}, jaxpr::DType::kBool);
    return e.Op("Where", {keep_a, a, b}, d);
  }
  return e.Op(is_max ? "Max" : "Min", {a, b}, d);
}

template <class E, class V>
V ExactMaxMin(E& e, V a, V b, jaxpr::DType d, bool is_max) {
  V m = OrderedMaxMin(e, a, b, d, is_max);
  if (!jaxpr::IsFloat(d)) return m;
  using jaxpr::DType;
  V zero = e.Const(jaxpr::Array::ScalarFromDouble(d, 0.0));
  V either = e.Op("Or",
                  {IsSignedZero(e, a, d, !is_max), IsSignedZero(e, b, d, !is_max)},
                  DType::kBool);
  V want = e.Op("And",
                {e.Op("Equal", {m, zero}, DType::kBool),
                 is_max ? e.Op("Not", {either}, DType::kBool) : either},
                DType::kBool);
  return SelectNegativeZero(e, want, m, d);
}

// Exact float fix-up of an ONNX ReduceMax/ReduceMin result `r` of `x` (dtype
// `d`, a float) over the same axes. `reduce(op, v, dtype)` emits that
// reduction of `v` (the caller's Reduce with its axes, keepdims and opset
// handling). A slice holding a NaN gives NaN; a zero result takes the sign
// IEEE gives: +0 for max when any element is +0, -0 for min when any is -0.
template <class E, class V, class ReduceFn>
V FixFloatReduceMaxMin(E& e, V x, V r, jaxpr::DType d, bool is_max,
                       ReduceFn&& reduce) {
  using jaxpr::DType;
  const double inf = std::numeric_limits<double>::infinity();
  const char* op = is_max ? "ReduceMax" : "ReduceMin";
  V zero = e.Const(jaxpr::Array::ScalarFromDouble(d, 0.0));
  // Sign of a zero result: 1/x is +inf for +0 and -inf for -0; elements that
  // are not zero contribute the identity (-inf for max, +inf for min), so
  // the reduction is -inf exactly when a zero result must be -0.
  V is_zero = e.Op("Equal", {x, zero}, DType::kBool);
  V recip = e.Op("Reciprocal", {x}, d);
  V identity = e.Const(jaxpr::Array::ScalarFromDouble(d, is_max ? -inf : inf));
  V zero_sign = reduce(op, e.Op("Where", {is_zero, recip, identity}, d), d);
  V want = e.Op("And",
                {e.Op("Equal", {r, zero}, DType::kBool),
                 e.Op("Less", {zero_sign, zero}, DType::kBool)},
                DType::kBool);
  V result = SelectNegativeZero(e, want, r, d);
  // Any NaN in the slice: the max of a 1/0 mask (in `d`, so no Cast) is 1;
  // an empty slice gives -inf, hence the comparison with 0. The fixed
  // result sits in the false branch (see SelectNegativeZero).
  V one = e.Const(jaxpr::Array::ScalarFromDouble(d, 1.0));
  V nan_seen = reduce("ReduceMax",
                      e.Op("Where", {e.Op("IsNaN", {x}, DType::kBool), one,
                                     zero},
                           d),
                      d);
  V nan = e.Const(jaxpr::Array::ScalarFromDouble(
      d, std::numeric_limits<double>::quiet_NaN()));
  return e.Op("Where",
              {e.Op("Greater", {nan_seen, zero}, DType::kBool), nan, result},
              d);
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_FLOAT_EXTREMES_H_
