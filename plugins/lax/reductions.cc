// Legacy lowerings of the reduction family:
// reduce_{sum,max,min,prod,and,or,xor} and argmax/argmin with JAX's NaN rule,
// in a dtype ONNX Runtime has kernels for (plugin::ComputeDType) and cast
// back; the cumulative scans' recipes are shared with the IR pipeline
// (plugin/scan_plan.h).
#include <cstdint>
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
#include "plugin/scan_plan.h"
#include "plugins/lax/lax_legacy_ctx.h"
#include "plugins/lax/legacy_emitter.h"
#include "plugins/register.h"

namespace jax2onnx::plugins {
namespace {

using converter::State;
using jaxpr::DType;
using plugin::ArithUse;

absl::StatusOr<std::vector<int64_t>> ReduceAxes(const jaxpr::Eqn& eqn,
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
std::string Reduce(LaxLegacyCtx& ctx, absl::string_view op, std::string x,
                   const std::vector<int64_t>& axes, bool keepdims = false) {
  std::vector<onnx::AttributeProto> attrs;
  attrs.push_back(converter::AttrInt("keepdims", keepdims ? 1 : 0));
  if (op == "ReduceSum" || ctx.opset() >= 18) {
    return ctx.Op(op, {x, ctx.ConstI64(axes)}, std::move(attrs));
  }
  attrs.push_back(converter::AttrInts("axes", axes));
  return ctx.Op(op, {x}, std::move(attrs));
}

struct ReduceKind {
  const char* primitive;
  const char* onnx_op;
  ArithUse use;
  bool bool_only;
};

constexpr ReduceKind kReductions[] = {
    {"reduce_sum", "ReduceSum", ArithUse::kWrapping, false},
    {"reduce_prod", "ReduceProd", ArithUse::kWrapping, false},
    {"reduce_max", "ReduceMax", ArithUse::kOrdering, false},
    {"reduce_min", "ReduceMin", ArithUse::kOrdering, false},
    // On bool, and/or are min/max of 0/1; xor is the parity of the sum.
    {"reduce_and", "ReduceMin", ArithUse::kOrdering, true},
    {"reduce_or", "ReduceMax", ArithUse::kOrdering, true},
    {"reduce_xor", "ReduceSum", ArithUse::kWrapping, true},
};

absl::Status LowerReduce(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  const ReduceKind* kind = nullptr;
  for (const ReduceKind& k : kReductions) {
    if (eqn.primitive == k.primitive) kind = &k;
  }
  if (kind == nullptr) {
    return absl::InternalError(
        absl::StrCat("LowerReduce registered for '", eqn.primitive, "'"));
  }
  const DType dtype = State::OutAval(eqn, 0).dtype;
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
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                       ReduceAxes(eqn, State::InAval(eqn, 0).rank()));
  J2O_ASSIGN_OR_RETURN(std::string x, ctx.Input(eqn, 0));
  if (axes.empty()) return ctx.SetOutput(eqn, 0, x);
  J2O_ASSIGN_OR_RETURN(DType work,
                       plugin::ComputeDType(dtype, kind->use, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(x, CastTo(ctx, x, work));
  x = Reduce(ctx, kind->onnx_op, x, axes);
  if (eqn.primitive == "reduce_xor") {
    J2O_ASSIGN_OR_RETURN(std::string two, ctx.ConstScalar(work, 2));
    x = ctx.Op("Mod", {x, two});
  }
  J2O_ASSIGN_OR_RETURN(x, CastTo(ctx, x, dtype));
  return ctx.SetOutput(eqn, 0, x);
}

// argmax/argmin: ONNX ArgMax/ArgMin pick the first extreme index
// (select_last_index=0) like JAX, but JAX also treats NaN as the extreme and
// returns the first NaN's index; that index comes from ArgMax over the
// IsNaN mask and replaces the ordinary answer wherever the slice has a NaN.
absl::Status LowerArgExtreme(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  const bool is_max = eqn.primitive == "argmax";
  const jaxpr::Aval& in = State::InAval(eqn, 0);
  const DType index_dtype = State::OutAval(eqn, 0).dtype;
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReduceAxes(eqn, in.rank()));
  if (axes.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        eqn.primitive, " needs exactly one axis, got ", axes.size()));
  }
  J2O_ASSIGN_OR_RETURN(
      DType work,
      plugin::ComputeDType(in.dtype, ArithUse::kOrdering, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(std::string x, ctx.Input(eqn, 0));
  J2O_ASSIGN_OR_RETURN(x, CastTo(ctx, x, work));
  auto arg_attrs = [&] {
    std::vector<onnx::AttributeProto> a;
    a.push_back(converter::AttrInt("axis", axes[0]));
    a.push_back(converter::AttrInt("keepdims", 0));
    a.push_back(converter::AttrInt("select_last_index", 0));
    return a;
  };
  std::string index = ctx.Op(is_max ? "ArgMax" : "ArgMin", {x}, arg_attrs());
  if (jaxpr::IsFloat(in.dtype)) {
    J2O_ASSIGN_OR_RETURN(std::string nan,
                         CastTo(ctx, ctx.Op("IsNaN", {x}), DType::kI32));
    std::string first_nan = ctx.Op("ArgMax", {nan}, arg_attrs());
    J2O_ASSIGN_OR_RETURN(
        std::string any_nan,
        CastTo(ctx, Reduce(ctx, "ReduceMax", nan, axes), DType::kBool));
    index = ctx.Op("Where", {any_nan, first_nan, index});
  }
  J2O_ASSIGN_OR_RETURN(index, CastTo(ctx, index, index_dtype));
  return ctx.SetOutput(eqn, 0, index);
}

absl::Status LowerCumsum(converter::State& s, const jaxpr::Eqn& eqn) {
  NeutralLegacyEmitter e(s, eqn);
  return plugin::LowerCumsum(e);
}

absl::Status LowerCumulativeScan(converter::State& s, const jaxpr::Eqn& eqn) {
  NeutralLegacyEmitter e(s, eqn);
  return plugin::LowerCumulativeScan(e);
}

}  // namespace

void RegisterReductions() {
  plugin::Registry& r = plugin::Registry::Global();
  for (const ReduceKind& k : kReductions) {
    r.RegisterLegacy(
        k.primitive, &AdaptLegacy<&LowerReduce>,
        {{k.onnx_op, "Cast"},
         17,
         k.bool_only ? "bool only (bitwise integer forms refused)"
                     : "narrow ints/f16/bf16 computed wider and cast "
                       "back; u64 max/min refused"});
  }
  for (const char* name : {"argmax", "argmin"}) {
    r.RegisterLegacy(
        name, &AdaptLegacy<&LowerArgExtreme>,
        {{"ArgMax", "ArgMin", "IsNaN", "ReduceMax", "Where", "Cast"},
         17,
         "first NaN wins (JAX rule); ties pick the first index"});
  }
  r.RegisterLegacy("cumsum", &LowerCumsum, {{"CumSum", "Cast"}, 17, ""});
  for (const char* name : {"cumprod", "cummax", "cummin", "cumlogsumexp"}) {
    r.RegisterLegacy(
        name, &LowerCumulativeScan,
        {{"Slice", "Concat", "Mul", "Max", "Min", "Cast", "Exp", "Log"},
         17,
         "log-step scan (cumlogsumexp combines with a stable logaddexp); the "
         "scanned axis must be static"});
  }
}

}  // namespace jax2onnx::plugins
