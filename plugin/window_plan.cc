#include "plugin/window_plan.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "jaxpr/params.h"
#include "plugin/conv_plan.h"

namespace jax2onnx::plugin {
namespace {

absl::StatusOr<std::vector<int64_t>> IntListOr(const jaxpr::Eqn& eqn,
                                               absl::string_view key, int n,
                                               int64_t fallback) {
  const jaxpr::ParamValue* v = eqn.params.Find(key);
  if (v == nullptr || v->is_none()) return std::vector<int64_t>(n, fallback);
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> list,
                       v->AsIntList(absl::StrCat("param '", key, "'")));
  if (static_cast<int>(list.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "param '", key, "' has ", list.size(), " entries, expected ", n));
  }
  for (int64_t x : list) {
    if (x < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("param '", key, "' entries must be >= 1"));
    }
  }
  return list;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> Padding(
    const jaxpr::Eqn& eqn, int n) {
  const jaxpr::ParamValue* v = eqn.params.Find("padding");
  if (v == nullptr) return std::vector<std::pair<int64_t, int64_t>>(n);
  if (v->items().size() != static_cast<size_t>(n)) {
    return absl::InvalidArgumentError(absl::StrCat("param 'padding' must hold ",
                                                   n, " (lo, hi) pairs, got ",
                                                   v->ToString()));
  }
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const jaxpr::ParamValue& pair : v->items()) {
    J2O_ASSIGN_OR_RETURN(std::vector<int64_t> lohi,
                         pair.AsIntList("param 'padding' entry"));
    if (lohi.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "param 'padding' entries must be (lo, hi), got ", pair.ToString()));
    }
    out.emplace_back(lohi[0], lohi[1]);
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> Spec(const jaxpr::ParamValue* dn,
                                          int index, const char* name,
                                          int rank) {
  const jaxpr::ParamValue* field = dn->Field(name);
  if (field == nullptr && dn->call_args().size() == 3) {
    field = &dn->call_args()[index].second;
  }
  if (field == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "param 'dimension_numbers' has no ", name, ": ", dn->ToString()));
  }
  J2O_ASSIGN_OR_RETURN(
      std::vector<int64_t> spec,
      field->AsIntList(absl::StrCat("dimension_numbers.", name)));
  std::vector<bool> seen(rank, false);
  if (static_cast<int>(spec.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat("dimension_numbers.", name,
                                                   " has ", spec.size(),
                                                   " entries for rank ", rank));
  }
  for (int64_t a : spec) {
    if (a < 0 || a >= rank || seen[a]) {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension_numbers.", name, " is not a permutation of ",
                       rank, " axes"));
    }
    seen[a] = true;
  }
  return spec;
}

}  // namespace

absl::StatusOr<ConvParams> ParseConvParams(const jaxpr::Eqn& eqn) {
  if (eqn.inputs.size() != 2 || eqn.inputs[0].is_literal() ||
      eqn.inputs[1].is_literal()) {
    return absl::InvalidArgumentError(
        "conv_general_dilated takes two array operands");
  }
  const int rank = eqn.inputs[0].var->aval.rank();
  const int spatial = rank - 2;
  ConvParams p;
  const jaxpr::ParamValue* dn = eqn.params.Find("dimension_numbers");
  if (dn == nullptr || dn->is_none()) {
    for (int i = 0; i < rank; ++i) {
      p.lhs_spec.push_back(i);
      p.rhs_spec.push_back(i);
      p.out_spec.push_back(i);
    }
  } else {
    J2O_ASSIGN_OR_RETURN(p.lhs_spec, Spec(dn, 0, "lhs_spec", rank));
    J2O_ASSIGN_OR_RETURN(p.rhs_spec, Spec(dn, 1, "rhs_spec", rank));
    J2O_ASSIGN_OR_RETURN(p.out_spec, Spec(dn, 2, "out_spec", rank));
  }
  J2O_ASSIGN_OR_RETURN(p.strides, IntListOr(eqn, "window_strides", spatial, 1));
  J2O_ASSIGN_OR_RETURN(p.lhs_dilation,
                       IntListOr(eqn, "lhs_dilation", spatial, 1));
  J2O_ASSIGN_OR_RETURN(p.rhs_dilation,
                       IntListOr(eqn, "rhs_dilation", spatial, 1));
  J2O_ASSIGN_OR_RETURN(p.padding, Padding(eqn, spatial));
  if (eqn.params.Has("feature_group_count")) {
    J2O_ASSIGN_OR_RETURN(p.feature_group_count,
                         eqn.params.GetInt("feature_group_count"));
  }
  if (eqn.params.Has("batch_group_count")) {
    J2O_ASSIGN_OR_RETURN(p.batch_group_count,
                         eqn.params.GetInt("batch_group_count"));
  }
  if (p.feature_group_count < 1 || p.batch_group_count < 1) {
    return absl::InvalidArgumentError("group counts must be >= 1");
  }
  return p;
}

absl::StatusOr<WindowParams> ParseWindowParams(const jaxpr::Eqn& eqn) {
  WindowParams p;
  const std::string& prim = eqn.primitive;
  if (prim == "reduce_window_sum") {
    p.op = WindowOp::kAdd;
  } else if (prim == "reduce_window_max") {
    p.op = WindowOp::kMax;
  } else if (prim == "reduce_window_min") {
    p.op = WindowOp::kMin;
  } else {
    // Generic reduce_window: operands, as many init values, and a scalar
    // combiner. A single add/max/min of its two arguments takes the
    // identity-filled path; any other elementwise combiner, and several
    // operands, the masked one (LowerGenericReduceWindow).
    p.init_operand = true;
    if (eqn.inputs.empty() || eqn.inputs.size() % 2 != 0 ||
        eqn.outputs.size() != eqn.inputs.size() / 2) {
      return absl::InvalidArgumentError(
          "reduce_window takes operands, as many init values, and as many "
          "results");
    }
    p.num_operands = static_cast<int>(eqn.inputs.size() / 2);
    J2O_ASSIGN_OR_RETURN(const jaxpr::ClosedJaxpr* body,
                         eqn.params.GetJaxpr("jaxpr"));
    p.combiner = body;
    const std::string combiner =
        body->eqns.size() == 1 ? body->eqns[0].primitive : "";
    bool plain = p.num_operands == 1 && body->eqns.size() == 1 &&
                 body->invars.size() == 2 && body->outvars.size() == 1 &&
                 body->eqns[0].inputs.size() == 2 &&
                 !body->outvars[0].is_literal() &&
                 body->outvars[0].var == body->eqns[0].outputs[0];
    for (const jaxpr::Atom& a : body->eqns.empty() ? std::vector<jaxpr::Atom>{}
                                                   : body->eqns[0].inputs) {
      plain = plain && !a.is_literal();
    }
    if (plain && (combiner == "add" || combiner == "add_any")) {
      p.op = WindowOp::kAdd;
    } else if (plain && combiner == "max") {
      p.op = WindowOp::kMax;
    } else if (plain && combiner == "min") {
      p.op = WindowOp::kMin;
    } else {
      p.op = WindowOp::kGeneric;
    }
  }
  if (eqn.inputs.empty() || eqn.inputs[0].is_literal()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", prim, "' needs an array operand"));
  }
  const int rank = eqn.inputs[0].var->aval.rank();
  J2O_ASSIGN_OR_RETURN(p.window, IntListOr(eqn, "window_dimensions", rank, 1));
  J2O_ASSIGN_OR_RETURN(p.strides, IntListOr(eqn, "window_strides", rank, 1));
  J2O_ASSIGN_OR_RETURN(p.base_dilation,
                       IntListOr(eqn, "base_dilation", rank, 1));
  J2O_ASSIGN_OR_RETURN(p.window_dilation,
                       IntListOr(eqn, "window_dilation", rank, 1));
  J2O_ASSIGN_OR_RETURN(p.padding, Padding(eqn, rank));
  return p;
}

jaxpr::Array WindowIdentity(WindowOp op, jaxpr::DType dtype) {
  using jaxpr::DType;
  if (op == WindowOp::kAdd) return jaxpr::Array::ScalarFromDouble(dtype, 0);
  const bool hi = op == WindowOp::kMin;  // min's identity is the top value
  if (jaxpr::IsFloat(dtype)) {
    const double inf = std::numeric_limits<double>::infinity();
    return jaxpr::Array::ScalarFromDouble(dtype, hi ? inf : -inf);
  }
  switch (dtype) {
    case DType::kBool:
      return jaxpr::Array::ScalarFromInt64(dtype, hi ? 1 : 0);
    case DType::kI8:
      return jaxpr::Array::ScalarFromInt64(dtype, hi ? 127 : -128);
    case DType::kI16:
      return jaxpr::Array::ScalarFromInt64(dtype, hi ? 32767 : -32768);
    case DType::kI32:
      return jaxpr::Array::ScalarFromInt64(
          dtype, hi ? std::numeric_limits<int32_t>::max()
                    : std::numeric_limits<int32_t>::min());
    case DType::kI64:
      return jaxpr::Array::ScalarFromInt64(
          dtype, hi ? std::numeric_limits<int64_t>::max()
                    : std::numeric_limits<int64_t>::min());
    case DType::kU8:
      return jaxpr::Array::ScalarFromInt64(dtype, hi ? 255 : 0);
    case DType::kU16:
      return jaxpr::Array::ScalarFromInt64(dtype, hi ? 65535 : 0);
    case DType::kU32:
      return jaxpr::Array::ScalarFromInt64(dtype, hi ? 4294967295LL : 0);
    default:  // u64: ScalarFromInt64 keeps the two's-complement bits
      return jaxpr::Array::ScalarFromInt64(dtype, hi ? -1 : 0);
  }
}

}  // namespace jax2onnx::plugin
