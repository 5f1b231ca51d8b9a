#include "plugin/control_flow_plan.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/literal_value.h"
#include "jaxpr/params.h"
#include "jaxpr/scan_params.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx::plugin {
namespace {

// The aval of an operand; untyped literals take the dtype the equation
// context gives them and are scalars.
jaxpr::Aval OperandAval(const jaxpr::Eqn& eqn, size_t i) {
  const jaxpr::Atom& a = eqn.inputs[i];
  if (!a.is_literal()) return a.var->aval;
  if (a.literal->aval) return *a.literal->aval;
  return jaxpr::Aval::Static(jaxpr::LiteralDType(*a.literal, &eqn), {});
}

jaxpr::Aval AtomAval(const jaxpr::Atom& a) {
  if (!a.is_literal()) return a.var->aval;
  if (a.literal->aval) return *a.literal->aval;
  return jaxpr::Aval::Static(jaxpr::LiteralDType(*a.literal, nullptr), {});
}

// `outer` is `inner` with a leading axis of size `length`.
bool Stacked(const jaxpr::Aval& outer, const jaxpr::Aval& inner,
             const jaxpr::DimExpr& length) {
  if (outer.rank() != inner.rank() + 1 || outer.dtype != inner.dtype) {
    return false;
  }
  if (!(outer.shape[0] == length)) return false;
  return std::equal(inner.shape.begin(), inner.shape.end(),
                    outer.shape.begin() + 1);
}

bool SameType(const jaxpr::Aval& a, const jaxpr::Aval& b) {
  return a.dtype == b.dtype && a.shape == b.shape;
}

}  // namespace

absl::StatusOr<CondPlan> PlanCond(const jaxpr::Eqn& eqn) {
  CondPlan plan;
  J2O_ASSIGN_OR_RETURN(plan.branches, eqn.params.GetJaxprs("branches"));
  if (plan.branches.empty()) {
    return absl::InvalidArgumentError("cond has no branches");
  }
  if (eqn.inputs.empty()) {
    return absl::InvalidArgumentError("cond has no index operand");
  }
  const jaxpr::Aval index = OperandAval(eqn, 0);
  if (index.rank() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cond index must be a scalar, got ", index.ToString()));
  }
  plan.bool_index = index.dtype == jaxpr::DType::kBool;
  if (!plan.bool_index && !jaxpr::IsInteger(index.dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cond index must be an integer or bool, got ", index.ToString()));
  }
  for (size_t b = 0; b < plan.branches.size(); ++b) {
    const jaxpr::ClosedJaxpr& branch = *plan.branches[b];
    if (branch.invars.size() + 1 != eqn.inputs.size() ||
        branch.outvars.size() != eqn.outputs.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cond branch ", b, " takes ", branch.invars.size(),
          " operands and returns ", branch.outvars.size(),
          " values, but the equation passes ", eqn.inputs.size() - 1,
          " and binds ", eqn.outputs.size()));
    }
  }
  return plan;
}

absl::StatusOr<WhilePlan> PlanWhile(const jaxpr::Eqn& eqn) {
  WhilePlan plan;
  J2O_ASSIGN_OR_RETURN(plan.cond, eqn.params.GetJaxpr("cond_jaxpr"));
  J2O_ASSIGN_OR_RETURN(plan.body, eqn.params.GetJaxpr("body_jaxpr"));
  J2O_ASSIGN_OR_RETURN(plan.cond_nconsts, eqn.params.GetInt("cond_nconsts"));
  J2O_ASSIGN_OR_RETURN(plan.body_nconsts, eqn.params.GetInt("body_nconsts"));
  const int64_t n_in = static_cast<int64_t>(eqn.inputs.size());
  plan.num_carry = n_in - plan.cond_nconsts - plan.body_nconsts;
  if (plan.num_carry < 0 ||
      plan.num_carry != static_cast<int64_t>(eqn.outputs.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "while has ", n_in, " operands, cond_nconsts=", plan.cond_nconsts,
        ", body_nconsts=", plan.body_nconsts, " but ", eqn.outputs.size(),
        " outputs"));
  }
  if (static_cast<int64_t>(plan.cond->invars.size()) !=
          plan.cond_nconsts + plan.num_carry ||
      plan.cond->outvars.size() != 1 ||
      static_cast<int64_t>(plan.body->invars.size()) !=
          plan.body_nconsts + plan.num_carry ||
      static_cast<int64_t>(plan.body->outvars.size()) != plan.num_carry) {
    return absl::InvalidArgumentError(
        "while: cond_jaxpr/body_jaxpr arities do not match the operands");
  }
  return plan;
}

absl::StatusOr<ScanPlan> PlanScan(const jaxpr::Eqn& eqn) {
  ScanPlan plan;
  J2O_ASSIGN_OR_RETURN(plan.body, eqn.params.GetJaxpr("jaxpr"));
  if (eqn.params.Has("reverse")) {
    J2O_ASSIGN_OR_RETURN(plan.reverse, eqn.params.GetBool("reverse"));
  }
  const int64_t n_in = static_cast<int64_t>(eqn.inputs.size());
  const int64_t n_out = static_cast<int64_t>(eqn.outputs.size());
  if (static_cast<int64_t>(plan.body->invars.size()) != n_in ||
      static_cast<int64_t>(plan.body->outvars.size()) != n_out) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scan body takes ", plan.body->invars.size(), " and returns ",
        plan.body->outvars.size(), " values, but the equation has ", n_in,
        " operands and ", n_out, " outputs"));
  }
  // length: an int, or (shape polymorphism) the text of a leading dim.
  J2O_ASSIGN_OR_RETURN(const jaxpr::ParamValue* length_param,
                       eqn.params.Get("length"));
  if (auto l = length_param->AsInt("param 'length'"); l.ok()) {
    plan.length = jaxpr::DimExpr::Constant(*l);
  } else {
    const std::string text = length_param->ToString();
    bool found = false;
    auto try_aval = [&](const jaxpr::Aval& a) {
      if (!found && a.rank() > 0 && a.shape[0].ToString() == text) {
        plan.length = a.shape[0];
        found = true;
      }
    };
    for (int64_t i = 0; i < n_in; ++i) try_aval(OperandAval(eqn, i));
    for (const jaxpr::Var* o : eqn.outputs) try_aval(o->aval);
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "scan length '", text, "' is neither an int nor a leading dim"));
    }
  }
  // num_consts/num_carry, or the leaf counts of 0.11's ft_in/ft_out
  // (jaxpr/scan_params.h).
  J2O_ASSIGN_OR_RETURN(auto counts,
                       jaxpr::ScanCountsFromParams(eqn.params, n_in, n_out));
  if (counts.has_value()) {
    plan.num_consts = counts->first;
    plan.num_carry = counts->second;
    return plan;
  }
  // Neither form printed (a hand-written program): infer the unique split.
  std::vector<std::pair<int64_t, int64_t>> candidates;
  for (int64_t k = 0; k <= n_out; ++k) {
    for (int64_t consts = 0; consts + k <= n_in; ++consts) {
      bool ok = true;
      for (int64_t i = 0; i < k && ok; ++i) {
        const jaxpr::Aval& inner = plan.body->invars[consts + i]->aval;
        ok = SameType(OperandAval(eqn, consts + i), inner) &&
             SameType(eqn.outputs[i]->aval, inner);
      }
      for (int64_t i = consts + k; i < n_in && ok; ++i) {
        ok = Stacked(OperandAval(eqn, i), plan.body->invars[i]->aval,
                     plan.length);
      }
      for (int64_t i = k; i < n_out && ok; ++i) {
        ok = Stacked(eqn.outputs[i]->aval, AtomAval(plan.body->outvars[i]),
                     plan.length);
      }
      if (ok) candidates.emplace_back(consts, k);
    }
  }
  if (candidates.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scan without num_consts/num_carry: cannot infer the consts/carry "
        "split from the avals (",
        candidates.size(), " consistent splits)"));
  }
  plan.num_consts = candidates[0].first;
  plan.num_carry = candidates[0].second;
  return plan;
}

}  // namespace jax2onnx::plugin
