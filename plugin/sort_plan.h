// Pipeline-independent lowering recipes for sort and top_k, written once
// against the emitter interface of plugin/emit.h.
//
// Both are built from full-length ONNX TopK calls used as a *stable* sort:
// ONNX Runtime's TopK breaks ties by the lower index (checked against the
// interpreter by the sort/top_k bundles). A lexicographic order over several
// keys is then an LSD radix of stable passes: the least significant key is
// sorted first and each pass permutes the running permutation
// (GatherElements). Float keys get extra passes so NaN and signed zeros
// order as JAX does:
//   sort:  canonical -0.0 == +0.0, NaN last (keys: isnan, value).
//   top_k: +0.0 above -0.0, NaN first (keys: isnan, value, is +0.0). JAX
//          ranks -NaN lowest; below opset 26 ONNX cannot see a NaN's sign,
//          so every NaN ranks as +NaN (documented deviation); at opset >= 26
//          one pass on the BitCast bits mapped to IEEE total order, as XLA.
// Keys are compared in a dtype ORT's TopK accepts (f16/bf16 -> f32, narrow
// ints -> i32, u32 -> i64, bool -> i32, u64 -> i64 with the sign bit
// flipped).
#ifndef JAX2ONNX_PLUGIN_SORT_PLAN_H_
#define JAX2ONNX_PLUGIN_SORT_PLAN_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/params.h"
#include "jaxpr/status_macros.h"
#include "plugin/elementwise_plan.h"
#include "plugin/emit.h"
#include "plugin/lax_plan.h"
#include "plugin/u64_order.h"

namespace jax2onnx::plugin {
namespace sort_internal {

template <class E>
using V = typename E::Value;

// One stable TopK pass over `key` permuted by `perm` (nullopt: identity).
template <class E>
V<E> StablePass(E& e, V<E> key, jaxpr::DType key_dtype,
                const std::optional<V<E>>& perm, V<E> length, int axis,
                bool largest) {
  if (perm) {
    key = e.Op("GatherElements", {key, *perm}, key_dtype,
               {OpAttr::Int("axis", axis)});
  }
  std::vector<V<E>> vi = e.OpMulti(
      "TopK", {key, length}, {key_dtype, jaxpr::DType::kI64},
      {OpAttr::Int("axis", axis), OpAttr::Int("largest", largest ? 1 : 0),
       OpAttr::Int("sorted", 1)});
  if (!perm) return vi[1];
  return e.Op("GatherElements", {*perm, vi[1]}, jaxpr::DType::kI64,
              {OpAttr::Int("axis", axis)});
}

// Applies the passes that order one key (least significant first) to the
// running permutation. `for_top_k` selects top_k's float conventions.
template <class E>
absl::StatusOr<std::optional<V<E>>> OrderByKey(E& e, V<E> x, jaxpr::DType dtype,
                                               std::optional<V<E>> perm,
                                               V<E> length, int axis,
                                               bool largest, bool for_top_k,
                                               absl::string_view what) {
  using jaxpr::DType;
  if (jaxpr::IsComplex(dtype)) {
    return absl::UnimplementedError(
        absl::StrCat(what, " on complex keys is not supported"));
  }
  if (dtype == DType::kU64) {
    // No ORT TopK orders u64 (plugin/u64_order.h).
    V<E> key = U64ToOrderedI64(e, x);
    return std::optional<V<E>>(
        StablePass(e, key, DType::kI64, perm, length, axis, largest));
  }
  J2O_ASSIGN_OR_RETURN(DType compute,
                       ComputeDType(dtype, ArithUse::kOrdering, what));
  const int to = elementwise::OnnxType(compute);
  V<E> key = x;
  if (compute != dtype) {
    key = e.Op("Cast", {x}, compute, {OpAttr::Int("to", to)});
  }
  if (!jaxpr::IsFloat(compute)) {
    return std::optional<V<E>>(
        StablePass(e, key, compute, perm, length, axis, largest));
  }
  if (for_top_k && e.opset() >= 26) {
    // XLA's TopK compares in IEEE total order (-NaN < -inf < ... < -0 < +0
    // < ... < +inf < +NaN, NaNs by payload). BitCast (opset 26) gives the
    // bits as a signed integer; flipping the 31 (63) magnitude bits of the
    // negative ones makes integer order equal total order: one pass.
    // f16/bf16 keys are widened to f32 first, which keeps that order.
    const DType bits_dtype = compute == DType::kF64 ? DType::kI64 : DType::kI32;
    const int64_t magnitude_mask = compute == DType::kF64
                                       ? std::numeric_limits<int64_t>::max()
                                       : std::numeric_limits<int32_t>::max();
    V<E> bits = e.Op("BitCast", {key}, bits_dtype,
                     {OpAttr::Int("to", elementwise::OnnxType(bits_dtype))});
    V<E> negative = e.Op(
        "Less", {bits, e.Const(jaxpr::Array::ScalarFromInt64(bits_dtype, 0))},
        DType::kBool);
    V<E> flipped = e.Op("BitwiseXor",
                        {bits, e.Const(jaxpr::Array::ScalarFromInt64(
                                   bits_dtype, magnitude_mask))},
                        bits_dtype);
    V<E> total_order = e.Op("Where", {negative, flipped, bits}, bits_dtype);
    return std::optional<V<E>>(
        StablePass(e, total_order, bits_dtype, perm, length, axis, largest));
  }
  V<E> zero = e.Const(jaxpr::Array::ScalarFromDouble(compute, 0));
  V<E> is_nan = e.Op("IsNaN", {key}, DType::kBool);
  V<E> finite_key = e.Op("Where", {is_nan, zero, key}, compute);
  if (for_top_k) {
    // +0.0 above -0.0: 1/x is +inf only for +0.0.
    V<E> is_zero = e.Op("Equal", {key, zero}, DType::kBool);
    V<E> positive = e.Op("Greater", {e.Op("Reciprocal", {key}, compute), zero},
                         DType::kBool);
    V<E> pos_zero = e.Op(
        "Cast", {e.Op("And", {is_zero, positive}, DType::kBool)}, DType::kI32,
        {OpAttr::Int("to", elementwise::OnnxType(DType::kI32))});
    perm = StablePass(e, pos_zero, DType::kI32, perm, length, axis, largest);
  }
  perm = StablePass(e, finite_key, compute, perm, length, axis, largest);
  V<E> nan_key = e.Op("Cast", {is_nan}, DType::kI32,
                      {OpAttr::Int("to", elementwise::OnnxType(DType::kI32))});
  // sort puts NaN last (ascending on isnan); top_k first (descending).
  perm = StablePass(e, nan_key, DType::kI32, perm, length, axis, largest);
  return perm;
}

// sort's axis (dimension, made non-negative) and num_keys, checked against
// the equation's operands and results.
struct SortParams {
  int axis = 0;
  int64_t num_keys = 1;
};

inline absl::StatusOr<SortParams> ParseSortParams(const jaxpr::Eqn& eqn) {
  const int n = static_cast<int>(eqn.inputs.size());
  if (n == 0 || static_cast<int>(eqn.outputs.size()) != n) {
    return absl::InvalidArgumentError("sort: operand/output count mismatch");
  }
  J2O_ASSIGN_OR_RETURN(int64_t dimension, eqn.params.GetInt("dimension"));
  SortParams params;
  if (eqn.params.Has("num_keys")) {
    J2O_ASSIGN_OR_RETURN(params.num_keys, eqn.params.GetInt("num_keys"));
  }
  if (params.num_keys < 1 || params.num_keys > n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sort: num_keys=", params.num_keys, " with ", n, " operands"));
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const int rank = aval.rank();
  if (dimension < 0) dimension += rank;
  if (dimension < 0 || dimension >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sort: dimension ", dimension, " out of range for ", aval.ToString()));
  }
  params.axis = static_cast<int>(dimension);
  return params;
}

}  // namespace sort_internal

template <class E>
absl::Status LowerSort(E& e) {
  namespace si = sort_internal;
  const jaxpr::Eqn& eqn = e.eqn();
  const int n = static_cast<int>(eqn.inputs.size());
  J2O_ASSIGN_OR_RETURN(si::SortParams params, si::ParseSortParams(eqn));
  const int axis = params.axis;
  const int64_t num_keys = params.num_keys;
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  std::vector<typename E::Value> operands;
  for (int i = 0; i < n; ++i) {
    J2O_ASSIGN_OR_RETURN(auto v, e.In(i));
    operands.push_back(v);
  }
  J2O_ASSIGN_OR_RETURN(auto length, e.DimValue(aval.shape[axis]));
  std::optional<typename E::Value> perm;
  for (int64_t k = num_keys - 1; k >= 0; --k) {
    J2O_ASSIGN_OR_RETURN(
        perm, si::OrderByKey(e, operands[k], eqn.outputs[k]->aval.dtype, perm,
                             length, axis, /*largest=*/false,
                             /*for_top_k=*/false, "sort"));
  }
  for (int i = 0; i < n; ++i) {
    auto out = e.Op("GatherElements", {operands[i], *perm},
                    eqn.outputs[i]->aval.dtype, {OpAttr::Int("axis", axis)});
    J2O_RETURN_IF_ERROR(e.SetOut(i, out));
  }
  return absl::OkStatus();
}

template <class E>
absl::Status LowerTopK(E& e) {
  namespace si = sort_internal;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 1 || eqn.outputs.size() != 2) {
    return absl::InvalidArgumentError("top_k takes one operand, two results");
  }
  const jaxpr::Aval& in = eqn.inputs[0].is_literal() ? eqn.outputs[0]->aval
                                                     : eqn.inputs[0].var->aval;
  const int rank = in.rank();
  if (rank == 0) return absl::InvalidArgumentError("top_k of a scalar");
  J2O_ASSIGN_OR_RETURN(int64_t k, eqn.params.GetInt("k"));
  int64_t axis = rank - 1;
  if (eqn.params.Has("axis")) {
    J2O_ASSIGN_OR_RETURN(axis, eqn.params.GetInt("axis"));
    if (axis < 0) axis += rank;
  }
  if (axis < 0 || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("top_k: axis ", axis, " out of range"));
  }
  const int ax = static_cast<int>(axis);
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  J2O_ASSIGN_OR_RETURN(auto length, e.DimValue(in.shape[ax]));
  J2O_ASSIGN_OR_RETURN(
      std::optional<typename E::Value> perm,
      si::OrderByKey<E>(e, x, in.dtype, std::nullopt, length, ax,
                        /*largest=*/true, /*for_top_k=*/true, "top_k"));
  auto top = e.Op("Slice",
                  {*perm, e.ConstI64({0}), e.ConstI64({k}), e.ConstI64({axis})},
                  jaxpr::DType::kI64);
  auto values =
      e.Op("GatherElements", {x, top}, in.dtype, {OpAttr::Int("axis", axis)});
  const jaxpr::DType index_dtype = eqn.outputs[1]->aval.dtype;
  auto indices = e.Op("Cast", {top}, index_dtype,
                      {OpAttr::Int("to", elementwise::OnnxType(index_dtype))});
  J2O_RETURN_IF_ERROR(e.SetOut(0, values));
  return e.SetOut(1, indices);
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_SORT_PLAN_H_
