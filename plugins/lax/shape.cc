// Legacy lowerings of the shape family: broadcast_in_dim, reshape, squeeze,
// expand_dims, transpose, rev, slice, concatenate, iota, split, pad. Every
// size that may be symbolic is built at runtime with ShapeValue/DimValue, so
// symbolic batch dims flow through unchanged.
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "converter/state.h"
#include "jaxpr/status_macros.h"
#include "plugin/lax_plan.h"
#include "plugin/onnx_types.h"
#include "plugin/registry.h"
#include "plugins/lax/lax_legacy_ctx.h"
#include "plugins/register.h"

namespace jax2onnx::plugins {
namespace {

using converter::State;
using jaxpr::DimExpr;
using jaxpr::DType;

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

bool AnyZeroOrSymbolic(const std::vector<DimExpr>& dims) {
  for (const DimExpr& d : dims) {
    if (!d.is_constant() || d.constant_value() == 0) return true;
  }
  return false;
}

// Reshape to `dims`; allowzero keeps a runtime 0 meaning "size 0" rather
// than ONNX's "copy the input dim".
absl::StatusOr<std::string> ReshapeTo(LaxLegacyCtx& ctx, std::string x,
                                      const std::vector<DimExpr>& dims) {
  J2O_ASSIGN_OR_RETURN(std::string shape, ctx.ShapeValue(dims));
  std::vector<onnx::AttributeProto> attrs;
  if (AnyZeroOrSymbolic(dims))
    attrs.push_back(converter::AttrInt("allowzero", 1));
  return ctx.Op("Reshape", {x, shape}, std::move(attrs));
}

absl::StatusOr<std::vector<int64_t>> NormalizedAxes(const jaxpr::Eqn& eqn,
                                                    absl::string_view key,
                                                    int rank) {
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

absl::Status LowerBroadcastInDim(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  const jaxpr::Aval& in = State::InAval(eqn, 0);
  const jaxpr::Aval& out = State::OutAval(eqn, 0);
  // `shape` is absent from params in JAX >= 0.9.1; the outvar's aval is
  // authoritative either way.
  J2O_ASSIGN_OR_RETURN(auto bd,
                       eqn.params.GetOptionalIntList("broadcast_dimensions"));
  const std::vector<int64_t> dims = bd.value_or(std::vector<int64_t>{});
  J2O_ASSIGN_OR_RETURN(
      std::vector<int64_t> inserted,
      plugin::BroadcastInsertedAxes(dims, in.rank(), out.rank()));
  J2O_ASSIGN_OR_RETURN(std::string x, ctx.Input(eqn, 0));
  if (!inserted.empty()) x = ctx.Op("Unsqueeze", {x, ctx.ConstI64(inserted)});
  bool needs_expand = false;
  for (int a = 0, j = 0; a < out.rank(); ++a) {
    const bool from_operand = j < in.rank() && dims[j] == a;
    const DimExpr have = from_operand ? in.shape[j++] : DimExpr::Constant(1);
    needs_expand |= have != out.shape[a];
  }
  if (needs_expand) {
    J2O_ASSIGN_OR_RETURN(std::string shape, ctx.ShapeValue(out.shape));
    x = ctx.Op("Expand", {x, shape});
  }
  return ctx.SetOutput(eqn, 0, x);
}

absl::Status LowerReshape(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  const jaxpr::Aval& in = State::InAval(eqn, 0);
  const jaxpr::Aval& out = State::OutAval(eqn, 0);
  J2O_ASSIGN_OR_RETURN(std::string x, ctx.Input(eqn, 0));
  // `dimensions` (None in current JAX) is a transpose applied first.
  J2O_ASSIGN_OR_RETURN(auto perm, eqn.params.GetOptionalIntList("dimensions"));
  if (perm && !perm->empty()) {
    x = ctx.Op("Transpose", {x}, Attrs(converter::AttrInts("perm", *perm)));
  } else if (in.shape == out.shape) {
    return ctx.SetOutput(eqn, 0, x);
  }
  J2O_ASSIGN_OR_RETURN(x, ReshapeTo(ctx, x, out.shape));
  return ctx.SetOutput(eqn, 0, x);
}

absl::Status LowerSqueeze(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  const int rank = State::InAval(eqn, 0).rank();
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                       NormalizedAxes(eqn, "dimensions", rank));
  J2O_ASSIGN_OR_RETURN(std::string x, ctx.Input(eqn, 0));
  if (!axes.empty()) x = ctx.Op("Squeeze", {x, ctx.ConstI64(axes)});
  return ctx.SetOutput(eqn, 0, x);
}

absl::Status LowerExpandDims(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  const int rank = State::OutAval(eqn, 0).rank();
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                       NormalizedAxes(eqn, "dimensions", rank));
  J2O_ASSIGN_OR_RETURN(std::string x, ctx.Input(eqn, 0));
  if (!axes.empty()) x = ctx.Op("Unsqueeze", {x, ctx.ConstI64(axes)});
  return ctx.SetOutput(eqn, 0, x);
}

absl::Status LowerTranspose(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> perm,
                       eqn.params.GetIntList("permutation"));
  J2O_ASSIGN_OR_RETURN(std::string x, ctx.Input(eqn, 0));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == int64_t(i);
  if (!identity)
    x = ctx.Op("Transpose", {x}, Attrs(converter::AttrInts("perm", perm)));
  return ctx.SetOutput(eqn, 0, x);
}

absl::Status LowerRev(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  const int rank = State::InAval(eqn, 0).rank();
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                       NormalizedAxes(eqn, "dimensions", rank));
  J2O_ASSIGN_OR_RETURN(std::string x, ctx.Input(eqn, 0));
  if (!axes.empty()) {
    const size_t k = axes.size();
    x = ctx.Op("Slice",
               {x, ctx.ConstI64(std::vector<int64_t>(k, -1)),
                ctx.ConstI64(std::vector<int64_t>(k, kI64Min)),
                ctx.ConstI64(axes), ctx.ConstI64(std::vector<int64_t>(k, -1))});
  }
  return ctx.SetOutput(eqn, 0, x);
}

absl::Status LowerSlice(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(plugin::SlicePlan plan, plugin::PlanSlice(eqn));
  J2O_ASSIGN_OR_RETURN(std::string x, ctx.Input(eqn, 0));
  if (!plan.axes.empty()) {
    x = ctx.Op("Slice", {x, ctx.ConstI64(plan.starts), ctx.ConstI64(plan.ends),
                         ctx.ConstI64(plan.axes), ctx.ConstI64(plan.steps)});
  }
  return ctx.SetOutput(eqn, 0, x);
}

absl::Status LowerConcatenate(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(int64_t axis, eqn.params.GetInt("dimension"));
  std::vector<std::string> inputs;
  for (size_t i = 0; i < eqn.inputs.size(); ++i) {
    J2O_ASSIGN_OR_RETURN(std::string v, ctx.Input(eqn, static_cast<int>(i)));
    inputs.push_back(v);
  }
  if (inputs.empty()) {
    return absl::InvalidArgumentError("concatenate has no operands");
  }
  std::string out =
      inputs.size() == 1
          ? inputs[0]
          : ctx.Op("Concat", inputs, Attrs(converter::AttrInt("axis", axis)));
  return ctx.SetOutput(eqn, 0, out);
}

absl::Status LowerIota(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  const jaxpr::Aval& out = State::OutAval(eqn, 0);
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
  std::string limit;
  if (out.shape[dim].is_constant()) {
    limit = ctx.ConstI64Scalar(out.shape[dim].constant_value());
  } else {
    J2O_ASSIGN_OR_RETURN(std::string n, ctx.DimValue(out.shape[dim]));
    limit = ctx.Op("Squeeze", {n, ctx.ConstI64({0})});
  }
  std::string x =
      ctx.Op("Range", {ctx.ConstI64Scalar(0), limit, ctx.ConstI64Scalar(1)});
  J2O_ASSIGN_OR_RETURN(x, CastTo(ctx, x, out.dtype));
  if (out.rank() > 1) {
    std::vector<int64_t> others;
    bool needs_expand = false;
    for (int a = 0; a < out.rank(); ++a) {
      if (a == dim) continue;
      others.push_back(a);
      needs_expand |= out.shape[a] != DimExpr::Constant(1);
    }
    x = ctx.Op("Unsqueeze", {x, ctx.ConstI64(others)});
    if (needs_expand) {
      J2O_ASSIGN_OR_RETURN(std::string shape, ctx.ShapeValue(out.shape));
      x = ctx.Op("Expand", {x, shape});
    }
  }
  return ctx.SetOutput(eqn, 0, x);
}

absl::Status LowerSplit(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  const int rank = State::InAval(eqn, 0).rank();
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                       eqn.params.GetIntList("sizes"));
  J2O_ASSIGN_OR_RETURN(int64_t axis, eqn.params.GetInt("axis"));
  if (axis < 0) axis += rank;
  if (sizes.size() != eqn.outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("split has ", sizes.size(), " sizes but ",
                     eqn.outputs.size(), " outputs"));
  }
  J2O_ASSIGN_OR_RETURN(std::string x, ctx.Input(eqn, 0));
  if (sizes.size() == 1) return ctx.SetOutput(eqn, 0, x);
  std::vector<std::string> parts = ctx.OpMulti(
      "Split", {x, ctx.ConstI64(sizes)}, static_cast<int>(sizes.size()),
      Attrs(converter::AttrInt("axis", axis)));
  for (size_t i = 0; i < parts.size(); ++i) {
    if (eqn.outputs[i]->is_drop) continue;
    J2O_RETURN_IF_ERROR(ctx.SetOutput(eqn, static_cast<int>(i), parts[i]));
  }
  return absl::OkStatus();
}

// pad: interior padding first (per axis: Unsqueeze, Pad the new unit axis
// with `interior` fill values, Reshape it away, Slice off the trailing
// fill), then the positive lo/hi as one Pad, then the negative lo/hi as one
// Slice. ORT's Pad lacks f16/bf16/i16/u16 kernels, so those move as a wider
// type (exactly) and are cast back.
absl::Status LowerPad(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  const jaxpr::Aval& in = State::InAval(eqn, 0);
  const DType dtype = State::OutAval(eqn, 0).dtype;
  J2O_ASSIGN_OR_RETURN(std::vector<plugin::PadDim> config,
                       plugin::ParsePaddingConfig(eqn, in.rank()));
  J2O_ASSIGN_OR_RETURN(
      DType work,
      plugin::ComputeDType(dtype, plugin::ArithUse::kMoving, "pad"));
  J2O_ASSIGN_OR_RETURN(std::string x, ctx.Input(eqn, 0));
  J2O_ASSIGN_OR_RETURN(std::string fill, ctx.Input(eqn, 1));
  J2O_ASSIGN_OR_RETURN(x, CastTo(ctx, x, work));
  J2O_ASSIGN_OR_RETURN(fill, CastTo(ctx, fill, work));
  const int rank = in.rank();
  std::vector<DimExpr> cur = in.shape;
  for (int a = 0; a < rank; ++a) {
    const int64_t interior = config[a].interior;
    if (interior == 0) continue;
    if (cur[a].is_constant() && cur[a].constant_value() <= 1) continue;
    std::vector<int64_t> pads(2 * (rank + 1), 0);
    pads[(rank + 1) + (a + 1)] = interior;
    x = ctx.Op("Unsqueeze", {x, ctx.ConstI64({a + 1})});
    x = ctx.Op("Pad", {x, ctx.ConstI64(pads), fill});
    cur[a] = DimExpr::Product({DimExpr::Constant(1 + interior), cur[a]});
    J2O_ASSIGN_OR_RETURN(x, ReshapeTo(ctx, x, cur));
    x = ctx.Op("Slice", {x, ctx.ConstI64({0}), ctx.ConstI64({-interior}),
                         ctx.ConstI64({a})});
    cur[a] = DimExpr::Sum({cur[a], DimExpr::Constant(-interior)});
  }
  std::vector<int64_t> pads(2 * rank, 0);
  bool any_positive = false;
  plugin::SlicePlan crop;
  for (int a = 0; a < rank; ++a) {
    pads[a] = std::max<int64_t>(config[a].lo, 0);
    pads[rank + a] = std::max<int64_t>(config[a].hi, 0);
    any_positive |= pads[a] > 0 || pads[rank + a] > 0;
    if (config[a].lo < 0 || config[a].hi < 0) {
      crop.axes.push_back(a);
      crop.starts.push_back(std::max<int64_t>(-config[a].lo, 0));
      crop.ends.push_back(config[a].hi < 0 ? config[a].hi : kI64Max);
    }
  }
  if (any_positive) x = ctx.Op("Pad", {x, ctx.ConstI64(pads), fill});
  if (!crop.axes.empty()) {
    x = ctx.Op("Slice", {x, ctx.ConstI64(crop.starts), ctx.ConstI64(crop.ends),
                         ctx.ConstI64(crop.axes)});
  }
  J2O_ASSIGN_OR_RETURN(x, CastTo(ctx, x, dtype));
  return ctx.SetOutput(eqn, 0, x);
}

}  // namespace

void RegisterShape() {
  plugin::Registry& r = plugin::Registry::Global();
  r.RegisterLegacy(
      "broadcast_in_dim", &AdaptLegacy<&LowerBroadcastInDim>,
      {{"Unsqueeze", "Expand"},
       17,
       "output aval gives the shape (param absent in JAX >= 0.9.1)"});
  r.RegisterLegacy("reshape", &AdaptLegacy<&LowerReshape>,
                   {{"Transpose", "Reshape"},
                    17,
                    "allowzero=1 whenever a target dim is 0 or symbolic"});
  r.RegisterLegacy("squeeze", &AdaptLegacy<&LowerSqueeze>,
                   {{"Squeeze"}, 17, ""});
  r.RegisterLegacy("expand_dims", &AdaptLegacy<&LowerExpandDims>,
                   {{"Unsqueeze"}, 17, ""});
  r.RegisterLegacy("transpose", &AdaptLegacy<&LowerTranspose>,
                   {{"Transpose"}, 17, ""});
  r.RegisterLegacy("rev", &AdaptLegacy<&LowerRev>,
                   {{"Slice"}, 17, "Slice with step -1"});
  r.RegisterLegacy("slice", &AdaptLegacy<&LowerSlice>, {{"Slice"}, 17, ""});
  r.RegisterLegacy("concatenate", &AdaptLegacy<&LowerConcatenate>,
                   {{"Concat"}, 17, ""});
  r.RegisterLegacy("iota", &AdaptLegacy<&LowerIota>,
                   {{"Range", "Cast", "Unsqueeze", "Expand"},
                    17,
                    "int64 Range cast to the result dtype"});
  r.RegisterLegacy("split", &AdaptLegacy<&LowerSplit>, {{"Split"}, 17, ""});
  r.RegisterLegacy("pad", &AdaptLegacy<&LowerPad>,
                   {{"Pad", "Unsqueeze", "Reshape", "Slice", "Cast"},
                    17,
                    "interior via unit-axis Pad + Reshape; negative via Slice; "
                    "f16/bf16/i16/u16 moved as f32/i32"});
}

}  // namespace jax2onnx::plugins
