// Legacy lowerings of control flow, structurally the same as
// plugins2/lax/control_flow.cc: cond -> If (nested Ifs for more than two
// branches, index clamped as lax.switch does), while -> Loop with the
// condition re-evaluated at the end of the body, scan -> Loop with an
// explicit iteration index (Gather for xs, Loop scan outputs for ys, a
// reversing Slice for reverse=True). Every body output is reconciled to the
// JAX aval (Cast/Reshape/Expand) and its shape_env entry set to exactly that
// aval, so both If branches and every Loop iteration declare identical
// dtypes and shapes.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "converter/state.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/control_flow_plan.h"
#include "plugin/onnx_types.h"
#include "plugin/registry.h"
#include "plugins/lax/legacy_emitter.h"

namespace jax2onnx::plugins {
namespace {

// The attribute list of a control-flow node, moved in: a braced list copies
// its elements, and a copy of a body copies every cond/while nested in it,
// so a program nested d deep copied its innermost bodies d times.
std::vector<onnx::AttributeProto> MovedAttrs(onnx::AttributeProto a) {
  std::vector<onnx::AttributeProto> attrs;
  attrs.push_back(std::move(a));
  return attrs;
}

std::vector<onnx::AttributeProto> MovedAttrs(onnx::AttributeProto a,
                                             onnx::AttributeProto b) {
  std::vector<onnx::AttributeProto> attrs = MovedAttrs(std::move(a));
  attrs.push_back(std::move(b));
  return attrs;
}

using converter::AttrGraph;
using converter::AttrInt;
using converter::State;
using converter::ValueInfo;

ValueInfo Unknown(int dtype) { return ValueInfo::UnknownShape(dtype); }

// Makes `value` a fresh value of the current body with exactly `aval`'s dtype
// and shape (Cast, Reshape for the same static element count, Expand when
// it broadcasts; an error otherwise).
absl::StatusOr<std::string> Reconcile(State& s, const std::string& value,
                                      const jaxpr::Aval& jax_aval,
                                      absl::string_view what) {
  // Complex values are real tensors with a trailing (re, im) axis.
  const jaxpr::Aval aval = plugin::RealifiedAval(jax_aval);
  J2O_ASSIGN_OR_RETURN(ValueInfo target, ValueInfo::OfAval(aval));
  const ValueInfo* info = s.Info(value);
  std::string v = value;
  bool transformed = false;
  if (info != nullptr && info->dtype != onnx::TensorProto::UNDEFINED &&
      info->dtype != target.dtype) {
    v = s.AddNode("Cast", {v}, Unknown(target.dtype),
                  {AttrInt("to", target.dtype)});
    transformed = true;
  }
  if (info != nullptr && info->has_shape && info->dims != target.dims) {
    const int rank = static_cast<int>(info->dims.size());
    bool broadcasts = rank <= aval.rank();
    bool count_known = true;
    int64_t count = 1;
    for (int i = 0; i < rank; ++i) {
      const converter::Dim& d = info->dims[i];
      if (d.is_static()) {
        count *= d.size();
      } else {
        count_known = false;
      }
      if (!broadcasts) continue;
      const converter::Dim& t = target.dims[aval.rank() - rank + i];
      broadcasts =
          (!d.is_unknown() && d == t) || (d.is_static() && d.size() == 1);
    }
    std::optional<std::vector<int64_t>> static_target = aval.StaticShape();
    int64_t target_count = 1;
    if (static_target) {
      for (int64_t d : *static_target) target_count *= d;
    }
    J2O_ASSIGN_OR_RETURN(std::string shape, s.ShapeValue(aval.shape));
    if (count_known && static_target && count == target_count) {
      v = s.AddNode("Reshape", {v, shape}, Unknown(target.dtype));
    } else if (broadcasts) {
      v = s.AddNode("Expand", {v, shape}, Unknown(target.dtype));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " has shape ", info->ToString(),
          " which cannot be reconciled with the JAX aval ", aval.ToString()));
    }
    transformed = true;
  }
  if (!transformed) v = s.AddNode("Identity", {v}, target);
  s.SetInfo(v, target);
  return v;
}

absl::StatusOr<std::vector<std::string>> Operands(State& s,
                                                  const jaxpr::Eqn& eqn,
                                                  int begin, int end) {
  std::vector<std::string> out;
  for (int i = begin; i < end; ++i) {
    J2O_ASSIGN_OR_RETURN(std::string v, s.Input(eqn, i));
    out.push_back(std::move(v));
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> EmitBranches(
    State& s, const jaxpr::Eqn& eqn, const plugin::CondPlan& plan,
    const std::string& index, const std::vector<std::string>& operands,
    size_t b) {
  auto lower_branch =
      [&](size_t k) -> absl::StatusOr<std::vector<std::string>> {
    J2O_ASSIGN_OR_RETURN(std::vector<std::string> outs,
                         s.Inline(*plan.branches[k], operands));
    for (size_t o = 0; o < outs.size(); ++o) {
      J2O_ASSIGN_OR_RETURN(
          outs[o], Reconcile(s, outs[o], eqn.outputs[o]->aval,
                             absl::StrCat("cond branch ", k, " output ", o)));
    }
    return outs;
  };
  if (b + 1 == plan.branches.size()) return lower_branch(b);
  const std::string pred = s.AddNode(
      "LessOrEqual", {index, s.ConstI64Scalar(static_cast<int64_t>(b))},
      ValueInfo::Tensor(onnx::TensorProto::BOOL, {}));
  J2O_ASSIGN_OR_RETURN(onnx::GraphProto then_graph,
                       s.BuildSubgraph(absl::StrCat("cond_branch_", b),
                                       [&] { return lower_branch(b); }));
  J2O_ASSIGN_OR_RETURN(
      onnx::GraphProto else_graph,
      s.BuildSubgraph(absl::StrCat("cond_branches_from_", b + 1), [&] {
        return EmitBranches(s, eqn, plan, index, operands, b + 1);
      }));
  std::vector<ValueInfo> infos;
  for (const jaxpr::Var* out : eqn.outputs) {
    J2O_ASSIGN_OR_RETURN(ValueInfo info, ValueInfo::OfAval(out->aval));
    infos.push_back(std::move(info));
  }
  return s.AddNodeMulti(
      "If", {pred}, std::move(infos),
      MovedAttrs(AttrGraph("then_branch", std::move(then_graph)),
                 AttrGraph("else_branch", std::move(else_graph))));
}

absl::Status LowerCond(State& s, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(plugin::CondPlan plan, plugin::PlanCond(eqn));
  J2O_ASSIGN_OR_RETURN(std::string index, s.Input(eqn, 0));
  // Compare in int64: ORT's LessOrEqual has no kernels for narrow ints/bool.
  index = s.AddNode("Cast", {index},
                    ValueInfo::Tensor(onnx::TensorProto::INT64, {}),
                    {AttrInt("to", onnx::TensorProto::INT64)});
  J2O_ASSIGN_OR_RETURN(
      std::vector<std::string> operands,
      Operands(s, eqn, 1, static_cast<int>(eqn.inputs.size())));
  J2O_ASSIGN_OR_RETURN(std::vector<std::string> outs,
                       EmitBranches(s, eqn, plan, index, operands, 0));
  for (size_t o = 0; o < outs.size(); ++o) {
    J2O_RETURN_IF_ERROR(s.SetOutput(eqn, static_cast<int>(o), outs[o]));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> MatchDType(State& s, const std::string& v,
                                       const jaxpr::Aval& aval) {
  J2O_ASSIGN_OR_RETURN(ValueInfo target, ValueInfo::OfAval(aval));
  const ValueInfo* info = s.Info(v);
  if (info != nullptr && info->dtype != onnx::TensorProto::UNDEFINED &&
      info->dtype != target.dtype) {
    return s.AddNode("Cast", {v}, target, {AttrInt("to", target.dtype)});
  }
  return v;
}

absl::Status LowerWhile(State& s, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(plugin::WhilePlan plan, plugin::PlanWhile(eqn));
  const int cn = static_cast<int>(plan.cond_nconsts);
  const int bn = static_cast<int>(plan.body_nconsts);
  const int n_in = static_cast<int>(eqn.inputs.size());
  J2O_ASSIGN_OR_RETURN(std::vector<std::string> cond_consts,
                       Operands(s, eqn, 0, cn));
  J2O_ASSIGN_OR_RETURN(std::vector<std::string> body_consts,
                       Operands(s, eqn, cn, cn + bn));
  J2O_ASSIGN_OR_RETURN(std::vector<std::string> carry,
                       Operands(s, eqn, cn + bn, n_in));
  for (size_t k = 0; k < carry.size(); ++k) {
    J2O_ASSIGN_OR_RETURN(
        carry[k], MatchDType(s, carry[k], plan.body->invars[bn + k]->aval));
  }
  auto eval_cond = [&](const std::vector<std::string>& state)
      -> absl::StatusOr<std::string> {
    std::vector<std::string> args = cond_consts;
    args.insert(args.end(), state.begin(), state.end());
    J2O_ASSIGN_OR_RETURN(std::vector<std::string> pred,
                         s.Inline(*plan.cond, args));
    return pred[0];
  };
  J2O_ASSIGN_OR_RETURN(std::string first_pred, eval_cond(carry));
  const jaxpr::Aval bool_scalar = jaxpr::Aval::Static(jaxpr::DType::kBool, {});
  J2O_ASSIGN_OR_RETURN(
      onnx::GraphProto body,
      s.BuildSubgraph(
          "while_body", [&]() -> absl::StatusOr<std::vector<std::string>> {
            s.AddGraphInput("while_iter",
                            ValueInfo::Tensor(onnx::TensorProto::INT64, {}));
            s.AddGraphInput("while_cond_in",
                            ValueInfo::Tensor(onnx::TensorProto::BOOL, {}));
            std::vector<std::string> args = body_consts;
            for (int64_t k = 0; k < plan.num_carry; ++k) {
              J2O_ASSIGN_OR_RETURN(
                  ValueInfo info,
                  ValueInfo::OfAval(plan.body->invars[bn + k]->aval));
              args.push_back(s.AddGraphInput("while_carry", std::move(info)));
            }
            J2O_ASSIGN_OR_RETURN(std::vector<std::string> next,
                                 s.Inline(*plan.body, args));
            for (size_t k = 0; k < next.size(); ++k) {
              J2O_ASSIGN_OR_RETURN(
                  next[k],
                  Reconcile(s, next[k], plan.body->invars[bn + k]->aval,
                            absl::StrCat("while body output ", k)));
            }
            J2O_ASSIGN_OR_RETURN(std::string pred, eval_cond(next));
            J2O_ASSIGN_OR_RETURN(pred, Reconcile(s, pred, bool_scalar,
                                                 "while cond_jaxpr output"));
            std::vector<std::string> outs = {pred};
            outs.insert(outs.end(), next.begin(), next.end());
            return outs;
          }));
  std::vector<std::string> loop_in = {"", first_pred};
  loop_in.insert(loop_in.end(), carry.begin(), carry.end());
  std::vector<ValueInfo> infos;
  for (int64_t k = 0; k < plan.num_carry; ++k) {
    J2O_ASSIGN_OR_RETURN(ValueInfo info,
                         ValueInfo::OfAval(eqn.outputs[k]->aval));
    infos.push_back(std::move(info));
  }
  std::vector<std::string> outs =
      s.AddNodeMulti("Loop", std::move(loop_in), std::move(infos),
                     MovedAttrs(AttrGraph("body", std::move(body))));
  for (size_t k = 0; k < outs.size(); ++k) {
    J2O_RETURN_IF_ERROR(s.SetOutput(eqn, static_cast<int>(k), outs[k]));
  }
  return absl::OkStatus();
}

absl::Status LowerScan(State& s, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(plugin::ScanPlan plan, plugin::PlanScan(eqn));
  const int nc = static_cast<int>(plan.num_consts);
  const int nk = static_cast<int>(plan.num_carry);
  const int n_in = static_cast<int>(eqn.inputs.size());
  const int n_out = static_cast<int>(eqn.outputs.size());
  J2O_ASSIGN_OR_RETURN(std::vector<std::string> consts,
                       Operands(s, eqn, 0, nc));
  J2O_ASSIGN_OR_RETURN(std::vector<std::string> carry,
                       Operands(s, eqn, nc, nc + nk));
  J2O_ASSIGN_OR_RETURN(std::vector<std::string> xs,
                       Operands(s, eqn, nc + nk, n_in));
  for (int k = 0; k < nk; ++k) {
    J2O_ASSIGN_OR_RETURN(
        carry[k], MatchDType(s, carry[k], plan.body->invars[nc + k]->aval));
  }
  const ValueInfo i64_scalar = ValueInfo::Tensor(onnx::TensorProto::INT64, {});
  const ValueInfo bool_scalar = ValueInfo::Tensor(onnx::TensorProto::BOOL, {});
  J2O_ASSIGN_OR_RETURN(std::string length_1d, s.DimValue(plan.length));
  const std::string trip_count =
      s.AddNode("Reshape", {length_1d, s.ConstI64({})}, i64_scalar);
  J2O_ASSIGN_OR_RETURN(
      std::string always,
      s.ConstArray(jaxpr::Array::ScalarFromDouble(jaxpr::DType::kBool, 1)));
  J2O_ASSIGN_OR_RETURN(
      onnx::GraphProto body,
      s.BuildSubgraph(
          "scan_body", [&]() -> absl::StatusOr<std::vector<std::string>> {
            const std::string iter = s.AddGraphInput("scan_iter", i64_scalar);
            const std::string cond_in =
                s.AddGraphInput("scan_cond_in", bool_scalar);
            std::vector<std::string> args = consts;
            for (int k = 0; k < nk; ++k) {
              J2O_ASSIGN_OR_RETURN(
                  ValueInfo info,
                  ValueInfo::OfAval(plan.body->invars[nc + k]->aval));
              args.push_back(s.AddGraphInput("scan_carry", std::move(info)));
            }
            // Reverse scans visit rows length-1, ..., 0.
            std::string row = iter;
            if (plan.reverse) {
              row =
                  s.AddNode("Sub",
                            {s.AddNode("Sub", {trip_count, s.ConstI64Scalar(1)},
                                       i64_scalar),
                             iter},
                            i64_scalar);
            }
            for (size_t x = 0; x < xs.size(); ++x) {
              const jaxpr::Aval& aval = plan.body->invars[nc + nk + x]->aval;
              J2O_ASSIGN_OR_RETURN(ValueInfo info, ValueInfo::OfAval(aval));
              args.push_back(s.AddNode("Gather", {xs[x], row}, std::move(info),
                                       {AttrInt("axis", 0)}));
            }
            J2O_ASSIGN_OR_RETURN(std::vector<std::string> outs,
                                 s.Inline(*plan.body, args));
            for (int o = 0; o < n_out; ++o) {
              const jaxpr::Aval target =
                  o < nk ? plan.body->invars[nc + o]->aval
                         : jaxpr::Aval::Shaped(
                               eqn.outputs[o]->aval.dtype,
                               std::vector<jaxpr::DimExpr>(
                                   eqn.outputs[o]->aval.shape.begin() + 1,
                                   eqn.outputs[o]->aval.shape.end()));
              J2O_ASSIGN_OR_RETURN(
                  outs[o], Reconcile(s, outs[o], target,
                                     absl::StrCat("scan body output ", o)));
            }
            outs.insert(outs.begin(),
                        s.AddNode("Identity", {cond_in}, bool_scalar));
            return outs;
          }));
  std::vector<std::string> loop_in = {trip_count, always};
  loop_in.insert(loop_in.end(), carry.begin(), carry.end());
  std::vector<ValueInfo> infos;
  for (int o = 0; o < n_out; ++o) {
    J2O_ASSIGN_OR_RETURN(ValueInfo info,
                         ValueInfo::OfAval(eqn.outputs[o]->aval));
    infos.push_back(std::move(info));
  }
  std::vector<std::string> outs =
      s.AddNodeMulti("Loop", std::move(loop_in), infos,
                     MovedAttrs(AttrGraph("body", std::move(body))));
  for (int o = 0; o < n_out; ++o) {
    std::string v = outs[o];
    if (o >= nk && plan.reverse) {
      // Row t of the stacked outputs came from row length-1-t.
      v = s.AddNode("Slice",
                    {v, s.ConstI64({-1}),
                     s.ConstI64({std::numeric_limits<int64_t>::min()}),
                     s.ConstI64({0}), s.ConstI64({-1})},
                    infos[o]);
    }
    J2O_RETURN_IF_ERROR(s.SetOutput(eqn, o, v));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterControlFlow() {
  plugin::Registry& registry = plugin::Registry::Global();
  registry.RegisterLegacy(
      "cond", &LowerCond,
      {{"If", "LessOrEqual", "Cast"},
       plugin::kMinOpset,
       "n branches as a chain of n-1 Ifs on index <= b (index clamped like "
       "lax.switch); branch outputs reconciled to the JAX avals (Cast, "
       "Reshape, Expand) and typed identically on both sides"});
  registry.RegisterLegacy(
      "while", &LowerWhile,
      {{"Loop"},
       plugin::kMinOpset,
       "cond_jaxpr evaluated once before the Loop and again at the end of "
       "each iteration; carried values typed from body_jaxpr's invars"});
  registry.RegisterLegacy(
      "scan", &LowerScan,
      {{"Loop", "Gather", "Slice"},
       plugin::kMinOpset,
       "Loop with trip count `length`; xs read with Gather at the iteration "
       "index (length-1-i for reverse), ys as Loop scan outputs (reversed "
       "with a Slice for reverse=True); num_consts/num_carry or, for JAX "
       "0.11 ft_in/ft_out, the split inferred from the avals"});
}

}  // namespace jax2onnx::plugins
