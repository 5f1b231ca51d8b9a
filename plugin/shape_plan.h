// Pipeline-independent lowering recipes for the shape family
// (broadcast_in_dim, reshape, squeeze, expand_dims, transpose, rev, slice,
// concatenate, iota, split, pad), written once against the neutral emitter
// interface of plugin/emit.h and instantiated by plugins/ and plugins2/.
// Every size that may be symbolic is built at run time with
// ShapeValue/DimValue, so symbolic batch dims flow through unchanged.
#ifndef JAX2ONNX_PLUGIN_SHAPE_PLAN_H_
#define JAX2ONNX_PLUGIN_SHAPE_PLAN_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/status_macros.h"
#include "plugin/emit.h"
#include "plugin/lax_plan.h"
#include "plugin/onnx_types.h"

namespace jax2onnx::plugin {

namespace shape_internal {

template <class E>
using V = typename E::Value;
using jaxpr::DimExpr;

// Operand i's aval; a literal's printed aval (rank 0), or an empty one for
// an untyped literal.
inline const jaxpr::Aval& InAval(const jaxpr::Eqn& eqn, int i) {
  const jaxpr::Atom& a = eqn.inputs[i];
  if (!a.is_literal()) return a.var->aval;
  static const jaxpr::Aval* unknown = new jaxpr::Aval();
  return a.literal->aval ? *a.literal->aval : *unknown;
}
inline const jaxpr::Aval& OutAval(const jaxpr::Eqn& eqn, int i) {
  return eqn.outputs[i]->aval;
}
// The dtype of operand i (a literal's from its printed type).
inline jaxpr::DType InDType(const jaxpr::Eqn& eqn, int i) {
  const jaxpr::Atom& a = eqn.inputs[i];
  return a.is_literal() ? jaxpr::LiteralDType(*a.literal, &eqn)
                        : a.var->aval.dtype;
}

template <class E>
absl::StatusOr<V<E>> CastTo(E& e, V<E> v, jaxpr::DType from, jaxpr::DType to) {
  if (from == to) return v;
  J2O_ASSIGN_OR_RETURN(int code, OnnxDType(to));
  return e.Op("Cast", {v}, to, {OpAttr::Int("to", code)});
}

inline bool AnyZeroOrSymbolic(const std::vector<DimExpr>& dims) {
  for (const DimExpr& d : dims) {
    if (!d.is_constant() || d.constant_value() == 0) return true;
  }
  return false;
}

// Reshape to `dims`; allowzero keeps a runtime 0 meaning "size 0" rather
// than ONNX's "copy the input dim".
template <class E>
absl::StatusOr<V<E>> ReshapeTo(E& e, V<E> x, jaxpr::DType dtype,
                               const std::vector<DimExpr>& dims) {
  J2O_ASSIGN_OR_RETURN(V<E> shape, e.ShapeValue(dims));
  std::vector<OpAttr> attrs;
  if (AnyZeroOrSymbolic(dims)) attrs.push_back(OpAttr::Int("allowzero", 1));
  return e.Op("Reshape", {x, shape}, dtype, std::move(attrs));
}

inline absl::StatusOr<std::vector<int64_t>> NormalizedAxes(
    const jaxpr::Eqn& eqn, absl::string_view key, int rank) {
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> axes, eqn.params.GetIntList(key));
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "param '", key, "' names axis ", a, " outside rank ", rank));
    }
    if (a < 0) a += rank;
  }
  return axes;
}

template <class E>
V<E> I64Scalar(E& e, int64_t v) {
  return e.Const(jaxpr::Array::ScalarFromInt64(jaxpr::DType::kI64, v));
}

}  // namespace shape_internal

template <class E>
absl::Status LowerBroadcastInDim(E& e) {
  namespace si = shape_internal;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval& in = si::InAval(eqn, 0);
  const jaxpr::Aval& out = si::OutAval(eqn, 0);
  // `shape` is absent from params in JAX >= 0.9.1; the outvar's aval is
  // authoritative either way.
  J2O_ASSIGN_OR_RETURN(auto bd,
                       eqn.params.GetOptionalIntList("broadcast_dimensions"));
  const std::vector<int64_t> dims = bd.value_or(std::vector<int64_t>{});
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> inserted,
                       BroadcastInsertedAxes(dims, in.rank(), out.rank()));
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  if (!inserted.empty()) {
    x = e.Op("Unsqueeze", {x, e.ConstI64(inserted)}, out.dtype);
  }
  bool needs_expand = false;
  for (int a = 0, j = 0; a < out.rank(); ++a) {
    const bool from_operand = j < in.rank() && dims[j] == a;
    const si::DimExpr have =
        from_operand ? in.shape[j++] : si::DimExpr::Constant(1);
    needs_expand |= have != out.shape[a];
  }
  if (needs_expand) {
    J2O_ASSIGN_OR_RETURN(auto shape, e.ShapeValue(out.shape));
    x = e.Op("Expand", {x, shape}, out.dtype);
  }
  return e.SetOut(0, x);
}

template <class E>
absl::Status LowerReshape(E& e) {
  namespace si = shape_internal;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval& in = si::InAval(eqn, 0);
  const jaxpr::Aval& out = si::OutAval(eqn, 0);
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  // `dimensions` (None in current JAX) is a transpose applied first.
  J2O_ASSIGN_OR_RETURN(auto perm, eqn.params.GetOptionalIntList("dimensions"));
  if (perm && !perm->empty()) {
    x = e.Op("Transpose", {x}, out.dtype, {OpAttr::Ints("perm", *perm)});
  } else if (in.shape == out.shape) {
    return e.SetOut(0, x);
  }
  J2O_ASSIGN_OR_RETURN(x, si::ReshapeTo(e, x, out.dtype, out.shape));
  return e.SetOut(0, x);
}

// squeeze (axes of the operand) and expand_dims (axes of the result).
template <class E>
absl::Status LowerSqueezeOrExpandDims(E& e, bool squeeze) {
  namespace si = shape_internal;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval& out = si::OutAval(eqn, 0);
  const int rank = squeeze ? si::InAval(eqn, 0).rank() : out.rank();
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                       si::NormalizedAxes(eqn, "dimensions", rank));
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  if (!axes.empty()) {
    x = e.Op(squeeze ? "Squeeze" : "Unsqueeze", {x, e.ConstI64(axes)},
             out.dtype);
  }
  return e.SetOut(0, x);
}

template <class E>
absl::Status LowerSqueeze(E& e) {
  return LowerSqueezeOrExpandDims(e, /*squeeze=*/true);
}
template <class E>
absl::Status LowerExpandDims(E& e) {
  return LowerSqueezeOrExpandDims(e, /*squeeze=*/false);
}

template <class E>
absl::Status LowerTranspose(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> perm,
                       eqn.params.GetIntList("permutation"));
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == int64_t(i);
  if (!identity) {
    x = e.Op("Transpose", {x}, shape_internal::OutAval(eqn, 0).dtype,
             {OpAttr::Ints("perm", perm)});
  }
  return e.SetOut(0, x);
}

template <class E>
absl::Status LowerRev(E& e) {
  namespace si = shape_internal;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval& in = si::InAval(eqn, 0);
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                       si::NormalizedAxes(eqn, "dimensions", in.rank()));
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  if (!axes.empty()) {
    const size_t k = axes.size();
    x = e.Op("Slice",
             {x, e.ConstI64(std::vector<int64_t>(k, -1)),
              e.ConstI64(
                  std::vector<int64_t>(k, std::numeric_limits<int64_t>::min())),
              e.ConstI64(axes), e.ConstI64(std::vector<int64_t>(k, -1))},
             si::OutAval(eqn, 0).dtype);
  }
  return e.SetOut(0, x);
}

template <class E>
absl::Status LowerSlice(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_ASSIGN_OR_RETURN(SlicePlan plan, PlanSlice(eqn));
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  if (!plan.axes.empty()) {
    x = e.Op("Slice",
             {x, e.ConstI64(plan.starts), e.ConstI64(plan.ends),
              e.ConstI64(plan.axes), e.ConstI64(plan.steps)},
             shape_internal::OutAval(eqn, 0).dtype);
  }
  return e.SetOut(0, x);
}

template <class E>
absl::Status LowerConcatenate(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_ASSIGN_OR_RETURN(int64_t axis, eqn.params.GetInt("dimension"));
  std::vector<shape_internal::V<E>> inputs;
  for (size_t i = 0; i < eqn.inputs.size(); ++i) {
    J2O_ASSIGN_OR_RETURN(auto v, e.In(static_cast<int>(i)));
    inputs.push_back(v);
  }
  if (inputs.empty()) {
    return absl::InvalidArgumentError("concatenate has no operands");
  }
  if (inputs.size() == 1) return e.SetOut(0, inputs[0]);
  return e.SetOut(0,
                  e.Op("Concat", inputs, shape_internal::OutAval(eqn, 0).dtype,
                       {OpAttr::Int("axis", axis)}));
}

template <class E>
absl::Status LowerIota(E& e) {
  namespace si = shape_internal;
  using jaxpr::DType;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval& out = si::OutAval(eqn, 0);
  J2O_ASSIGN_OR_RETURN(int64_t dim, eqn.params.GetInt("dimension"));
  if (dim < 0 || dim >= out.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "iota dimension ", dim, " is outside result ", out.ToString()));
  }
  if (jaxpr::IsComplex(out.dtype) || out.dtype == DType::kBool) {
    return absl::UnimplementedError(
        absl::StrCat("iota of ", jaxpr::ShortName(out.dtype)));
  }
  // Range in int64 then one Cast: exact for every integer dtype (wrapping
  // like XLA's convert) and correctly rounded for floats.
  si::V<E> limit;
  if (out.shape[dim].is_constant()) {
    limit = si::I64Scalar(e, out.shape[dim].constant_value());
  } else {
    J2O_ASSIGN_OR_RETURN(auto n, e.DimValue(out.shape[dim]));
    limit = e.Op("Squeeze", {n, e.ConstI64({0})}, DType::kI64);
  }
  si::V<E> x = e.Op("Range", {si::I64Scalar(e, 0), limit, si::I64Scalar(e, 1)},
                    DType::kI64);
  // int4/int2/float8: ONNX Runtime 1.30 has no Unsqueeze/Expand kernel for
  // them, so those are shaped in i64 and Cast last.
  const bool cast_last = jaxpr::IsNarrow(out.dtype);
  const DType shaped = cast_last ? DType::kI64 : out.dtype;
  if (!cast_last) {
    J2O_ASSIGN_OR_RETURN(x, si::CastTo(e, x, DType::kI64, out.dtype));
  }
  if (out.rank() > 1) {
    std::vector<int64_t> others;
    bool needs_expand = false;
    for (int a = 0; a < out.rank(); ++a) {
      if (a == dim) continue;
      others.push_back(a);
      needs_expand |= out.shape[a] != si::DimExpr::Constant(1);
    }
    x = e.Op("Unsqueeze", {x, e.ConstI64(others)}, shaped);
    if (needs_expand) {
      J2O_ASSIGN_OR_RETURN(auto shape, e.ShapeValue(out.shape));
      x = e.Op("Expand", {x, shape}, shaped);
    }
  }
  if (cast_last) {
    J2O_ASSIGN_OR_RETURN(x, si::CastTo(e, x, DType::kI64, out.dtype));
  }
  return e.SetOut(0, x);
}

template <class E>
absl::Status LowerSplit(E& e) {
  namespace si = shape_internal;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval& in = si::InAval(eqn, 0);
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                       eqn.params.GetIntList("sizes"));
  J2O_ASSIGN_OR_RETURN(int64_t axis, eqn.params.GetInt("axis"));
  if (axis < 0) axis += in.rank();
  if (sizes.size() != eqn.outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("split has ", sizes.size(), " sizes but ",
                     eqn.outputs.size(), " outputs"));
  }
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  if (sizes.size() == 1) return e.SetOut(0, x);
  std::vector<si::V<E>> parts =
      e.OpMulti("Split", {x, e.ConstI64(sizes)},
                std::vector<jaxpr::DType>(sizes.size(), si::InDType(eqn, 0)),
                {OpAttr::Int("axis", axis)});
  for (size_t i = 0; i < parts.size(); ++i) {
    if (eqn.outputs[i]->is_drop) continue;
    J2O_RETURN_IF_ERROR(e.SetOut(static_cast<int>(i), parts[i]));
  }
  return absl::OkStatus();
}

// pad: interior padding first (per axis: Unsqueeze, Pad the new unit axis
// with `interior` fill values, Reshape it away, Slice off the trailing
// fill), then the positive lo/hi as one Pad, then the negative lo/hi as one
// Slice. ORT's Pad lacks f16/bf16/i16/u16 kernels, so those move as a wider
// type (exactly) and are cast back.
template <class E>
absl::Status LowerPad(E& e) {
  namespace si = shape_internal;
  using jaxpr::DType;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval& in = si::InAval(eqn, 0);
  const DType dtype = si::OutAval(eqn, 0).dtype;
  J2O_ASSIGN_OR_RETURN(std::vector<PadDim> config,
                       ParsePaddingConfig(eqn, in.rank()));
  J2O_ASSIGN_OR_RETURN(DType work,
                       ComputeDType(dtype, ArithUse::kMoving, "pad"));
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  J2O_ASSIGN_OR_RETURN(auto fill, e.In(1));
  J2O_ASSIGN_OR_RETURN(x, si::CastTo(e, x, si::InDType(eqn, 0), work));
  J2O_ASSIGN_OR_RETURN(fill, si::CastTo(e, fill, si::InDType(eqn, 1), work));
  const int rank = in.rank();
  std::vector<si::DimExpr> cur = in.shape;
  for (int a = 0; a < rank; ++a) {
    const int64_t interior = config[a].interior;
    if (interior == 0) continue;
    if (cur[a].is_constant() && cur[a].constant_value() <= 1) continue;
    std::vector<int64_t> pads(2 * (rank + 1), 0);
    pads[(rank + 1) + (a + 1)] = interior;
    x = e.Op("Unsqueeze", {x, e.ConstI64({a + 1})}, work);
    x = e.Op("Pad", {x, e.ConstI64(pads), fill}, work);
    cur[a] =
        si::DimExpr::Product({si::DimExpr::Constant(1 + interior), cur[a]});
    J2O_ASSIGN_OR_RETURN(x, si::ReshapeTo(e, x, work, cur));
    x = e.Op("Slice",
             {x, e.ConstI64({0}), e.ConstI64({-interior}), e.ConstI64({a})},
             work);
    cur[a] = si::DimExpr::Sum({cur[a], si::DimExpr::Constant(-interior)});
  }
  if (std::any_of(config.begin(), config.end(),
                  [](const PadDim& d) { return d.symbolic(); })) {
    // Symbolic lo/hi (their sign unknown until run time): one Pad with the
    // pads computed from the input shapes; ONNX Pad removes elements where
    // a pad is negative.
    std::vector<si::DimExpr> pads;
    for (int a = 0; a < rank; ++a) pads.push_back(config[a].lo_dim);
    for (int a = 0; a < rank; ++a) pads.push_back(config[a].hi_dim);
    J2O_ASSIGN_OR_RETURN(auto pads_value, e.ShapeValue(pads));
    x = e.Op("Pad", {x, pads_value, fill}, work);
    J2O_ASSIGN_OR_RETURN(x, si::CastTo(e, x, work, dtype));
    return e.SetOut(0, x);
  }
  std::vector<int64_t> pads(2 * rank, 0);
  bool any_positive = false;
  SlicePlan crop;
  for (int a = 0; a < rank; ++a) {
    pads[a] = std::max<int64_t>(config[a].lo, 0);
    pads[rank + a] = std::max<int64_t>(config[a].hi, 0);
    any_positive |= pads[a] > 0 || pads[rank + a] > 0;
    if (config[a].lo < 0 || config[a].hi < 0) {
      crop.axes.push_back(a);
      crop.starts.push_back(std::max<int64_t>(-config[a].lo, 0));
      crop.ends.push_back(config[a].hi < 0
                              ? config[a].hi
                              : std::numeric_limits<int64_t>::max());
    }
  }
  if (any_positive) x = e.Op("Pad", {x, e.ConstI64(pads), fill}, work);
  if (!crop.axes.empty()) {
    x = e.Op("Slice",
             {x, e.ConstI64(crop.starts), e.ConstI64(crop.ends),
              e.ConstI64(crop.axes)},
             work);
  }
  J2O_ASSIGN_OR_RETURN(x, si::CastTo(e, x, work, dtype));
  return e.SetOut(0, x);
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_SHAPE_PLAN_H_
