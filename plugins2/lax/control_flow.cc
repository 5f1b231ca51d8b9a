// IR lowerings of control flow: cond -> If (nested Ifs for more than two
// branches, the index clamped as lax.switch does), while -> Loop with the
// condition re-evaluated at the end of the body, scan -> Loop with an
// explicit iteration index (Gather for xs, Loop scan outputs for ys, a
// reversing Slice for reverse=True). Every body output is reconciled to the
// JAX aval (Cast/Reshape/Expand) and typed explicitly so both If branches,
// and every Loop iteration, agree on dtype and shape (the branch guardrail of
// DESIGN.md).
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "converter2/lowering_context.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/prng.h"
#include "jaxpr/status_macros.h"
#include "plugin/control_flow_plan.h"
#include "plugin/onnx_types.h"
#include "plugin/registry.h"
#include "plugins2/lax/ir_emitter.h"

namespace jax2onnx::plugins2 {
namespace {

using converter2::Attrs;
using converter2::LoweringContext;

absl::StatusOr<ir::Type> IrTypeOf(const jaxpr::Aval& jax_aval) {
  // PRNG keys are their key data (u32[..., W]); complex values are real
  // tensors with a trailing (re, im) axis.
  J2O_ASSIGN_OR_RETURN(const jaxpr::Aval physical,
                       jaxpr::PhysicalAval(jax_aval));
  const jaxpr::Aval aval = plugin::RealifiedAval(physical);
  J2O_ASSIGN_OR_RETURN(int dtype, plugin::OnnxDType(aval.dtype));
  std::vector<ir::Dim> dims;
  for (const jaxpr::DimExpr& d : aval.shape) {
    if (d.is_constant()) {
      dims.emplace_back(d.constant_value());
    } else {
      dims.emplace_back(d.ToString());
    }
  }
  return ir::Type::Tensor(dtype, ir::Shape(std::move(dims)));
}

bool SameDims(const ir::Shape& shape, const std::vector<jaxpr::DimExpr>& dims) {
  if (shape.rank() != dims.size()) return false;
  for (size_t i = 0; i < shape.rank(); ++i) {
    const ir::Dim& d = shape[i];
    if (dims[i].is_constant()) {
      if (!d.is_value() || d.value() != dims[i].constant_value()) return false;
    } else if (!d.is_param() || d.param() != dims[i].ToString()) {
      return false;
    }
  }
  return true;
}

// Makes `value` a value of the current body with exactly `aval`'s dtype and
// shape: Cast on a dtype difference, Reshape when only the layout differs
// (same static element count), Expand when it broadcasts to the target; an
// error otherwise. The result is always produced in the current graph and
// carries an explicit type.
absl::StatusOr<ir::Value*> Reconcile(LoweringContext& ctx, ir::Value* value,
                                     const jaxpr::Aval& jax_aval,
                                     absl::string_view what) {
  J2O_ASSIGN_OR_RETURN(const jaxpr::Aval physical,
                       jaxpr::PhysicalAval(jax_aval));
  const jaxpr::Aval aval = plugin::RealifiedAval(physical);
  J2O_ASSIGN_OR_RETURN(ir::Type type, IrTypeOf(aval));
  J2O_ASSIGN_OR_RETURN(int dtype, plugin::OnnxDType(aval.dtype));
  ir::Value* v = value;
  if (v->dtype() != onnx::TensorProto::UNDEFINED && v->dtype() != dtype) {
    v = ctx.Op("Cast", {v}, Attrs(ir::Attr::Int("to", dtype)));
  }
  const ir::Shape* shape = value->shape();
  if (shape != nullptr && !SameDims(*shape, aval.shape)) {
    // Broadcast-compatible: right-aligned, each dim 1 or equal.
    const int rank = static_cast<int>(shape->rank());
    bool broadcasts = rank <= aval.rank();
    bool count_known = true;
    int64_t count = 1;
    for (int i = 0; i < rank; ++i) {
      const ir::Dim& d = (*shape)[i];
      if (d.is_value()) {
        count *= d.value();
      } else {
        count_known = false;
      }
      if (!broadcasts) continue;
      const jaxpr::DimExpr& t = aval.shape[aval.rank() - rank + i];
      const bool equal =
          d.is_value() ? (t.is_constant() && t.constant_value() == d.value())
                       : (d.is_param() && d.param() == t.ToString());
      broadcasts = equal || (d.is_value() && d.value() == 1);
    }
    std::optional<std::vector<int64_t>> target = aval.StaticShape();
    int64_t target_count = 1;
    if (target) {
      for (int64_t d : *target) target_count *= d;
    }
    J2O_ASSIGN_OR_RETURN(ir::Value * target_shape, ctx.ShapeValue(aval.shape));
    if (count_known && target && count == target_count) {
      v = ctx.Op("Reshape", {v, target_shape});
    } else if (broadcasts) {
      v = ctx.Op("Expand", {v, target_shape});
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " has shape ", shape->ToString(),
          " which cannot be reconciled with the JAX aval ", aval.ToString()));
    }
  }
  if (v->graph() != &ctx.graph() || v->producer() == nullptr ||
      v->is_graph_output()) {
    v = ctx.Op("Identity", {v});
  }
  v->SetType(std::move(type));
  return v;
}

absl::StatusOr<std::vector<ir::Value*>> Operands(LoweringContext& ctx,
                                                 const jaxpr::Eqn& eqn,
                                                 int begin, int end) {
  std::vector<ir::Value*> out;
  for (int i = begin; i < end; ++i) {
    J2O_ASSIGN_OR_RETURN(ir::Value * v, ctx.Input(eqn, i));
    out.push_back(v);
  }
  return out;
}

// Lowers branches [b, n) of a cond as a chain of Ifs in the current graph:
// branch b when index <= b, else the rest (so indices below 0 pick branch 0
// and indices above n-1 the last one, as lax.switch clamps).
absl::StatusOr<std::vector<ir::Value*>> EmitBranches(
    LoweringContext& ctx, const jaxpr::Eqn& eqn, const plugin::CondPlan& plan,
    ir::Value* index, const std::vector<ir::Value*>& operands, size_t b) {
  auto lower_branch = [&](size_t k) -> absl::StatusOr<std::vector<ir::Value*>> {
    J2O_ASSIGN_OR_RETURN(std::vector<ir::Value*> outs,
                         ctx.Inline(*plan.branches[k], operands));
    for (size_t o = 0; o < outs.size(); ++o) {
      J2O_ASSIGN_OR_RETURN(
          outs[o], Reconcile(ctx, outs[o], eqn.outputs[o]->aval,
                             absl::StrCat("cond branch ", k, " output ", o)));
    }
    return outs;
  };
  if (b + 1 == plan.branches.size()) return lower_branch(b);
  ir::Value* pred = ctx.Op(
      "LessOrEqual", {index, ctx.ConstI64Scalar(static_cast<int64_t>(b))});
  J2O_ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> then_graph,
                       ctx.BuildSubgraph(absl::StrCat("cond_branch_", b),
                                         [&] { return lower_branch(b); }));
  J2O_ASSIGN_OR_RETURN(
      std::unique_ptr<ir::Graph> else_graph,
      ctx.BuildSubgraph(absl::StrCat("cond_branches_from_", b + 1), [&] {
        return EmitBranches(ctx, eqn, plan, index, operands, b + 1);
      }));
  std::vector<ir::Value*> outs = ctx.OpMulti(
      "If", {pred}, static_cast<int>(eqn.outputs.size()),
      Attrs(ir::Attr::GraphValue("then_branch", std::move(then_graph)),
            ir::Attr::GraphValue("else_branch", std::move(else_graph))));
  for (size_t o = 0; o < outs.size(); ++o) {
    J2O_ASSIGN_OR_RETURN(ir::Type type, IrTypeOf(eqn.outputs[o]->aval));
    outs[o]->SetType(std::move(type));
  }
  return outs;
}

absl::Status LowerCond(LoweringContext& ctx, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(plugin::CondPlan plan, plugin::PlanCond(eqn));
  J2O_ASSIGN_OR_RETURN(ir::Value * index, ctx.Input(eqn, 0));
  // Compare in int64: ORT's LessOrEqual has no kernels for narrow ints/bool.
  index = ctx.Op("Cast", {index},
                 Attrs(ir::Attr::Int("to", onnx::TensorProto::INT64)));
  J2O_ASSIGN_OR_RETURN(
      std::vector<ir::Value*> operands,
      Operands(ctx, eqn, 1, static_cast<int>(eqn.inputs.size())));
  J2O_ASSIGN_OR_RETURN(std::vector<ir::Value*> outs,
                       EmitBranches(ctx, eqn, plan, index, operands, 0));
  for (size_t o = 0; o < outs.size(); ++o) {
    J2O_RETURN_IF_ERROR(ctx.SetOutput(eqn, static_cast<int>(o), outs[o]));
  }
  return absl::OkStatus();
}

// Casts loop-carried initial values whose ONNX dtype differs from the body's
// (an untyped literal materialized with its own default dtype).
absl::StatusOr<ir::Value*> MatchDType(LoweringContext& ctx, ir::Value* v,
                                      const jaxpr::Aval& declared) {
  // A PRNG key is its key data.
  J2O_ASSIGN_OR_RETURN(const jaxpr::Aval aval, jaxpr::PhysicalAval(declared));
  J2O_ASSIGN_OR_RETURN(int dtype, plugin::OnnxDType(aval.dtype));
  if (v->dtype() != onnx::TensorProto::UNDEFINED && v->dtype() != dtype) {
    v = ctx.Op("Cast", {v}, Attrs(ir::Attr::Int("to", dtype)));
    ctx.SetType(v, aval.dtype, aval.shape);
  }
  return v;
}

absl::StatusOr<ir::Value*> ScalarPredicate(LoweringContext& ctx,
                                           ir::Value* pred) {
  const jaxpr::Aval aval = jaxpr::Aval::Static(jaxpr::DType::kBool, {});
  // cond_jaxpr returns bool[]; a shape [1] would break Loop's contract.
  return Reconcile(ctx, pred, aval, "while cond_jaxpr output");
}

absl::Status LowerWhile(LoweringContext& ctx, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(plugin::WhilePlan plan, plugin::PlanWhile(eqn));
  const int cn = static_cast<int>(plan.cond_nconsts);
  const int bn = static_cast<int>(plan.body_nconsts);
  const int n_in = static_cast<int>(eqn.inputs.size());
  J2O_ASSIGN_OR_RETURN(std::vector<ir::Value*> cond_consts,
                       Operands(ctx, eqn, 0, cn));
  J2O_ASSIGN_OR_RETURN(std::vector<ir::Value*> body_consts,
                       Operands(ctx, eqn, cn, cn + bn));
  J2O_ASSIGN_OR_RETURN(std::vector<ir::Value*> carry,
                       Operands(ctx, eqn, cn + bn, n_in));
  for (size_t k = 0; k < carry.size(); ++k) {
    J2O_ASSIGN_OR_RETURN(
        carry[k], MatchDType(ctx, carry[k], plan.body->invars[bn + k]->aval));
  }
  auto eval_cond =
      [&](const std::vector<ir::Value*>& state) -> absl::StatusOr<ir::Value*> {
    std::vector<ir::Value*> args = cond_consts;
    args.insert(args.end(), state.begin(), state.end());
    J2O_ASSIGN_OR_RETURN(std::vector<ir::Value*> pred,
                         ctx.Inline(*plan.cond, args));
    return pred[0];
  };
  J2O_ASSIGN_OR_RETURN(ir::Value * first_pred, eval_cond(carry));
  J2O_ASSIGN_OR_RETURN(
      std::unique_ptr<ir::Graph> body,
      ctx.BuildSubgraph(
          "while_body", [&]() -> absl::StatusOr<std::vector<ir::Value*>> {
            J2O_ASSIGN_OR_RETURN(ir::Type i64, IrTypeOf(jaxpr::Aval::Static(
                                                   jaxpr::DType::kI64, {})));
            J2O_ASSIGN_OR_RETURN(ir::Type b1, IrTypeOf(jaxpr::Aval::Static(
                                                  jaxpr::DType::kBool, {})));
            ctx.AddGraphInput("while_iter", std::move(i64));
            ctx.AddGraphInput("while_cond_in", std::move(b1));
            std::vector<ir::Value*> args = body_consts;
            for (int64_t k = 0; k < plan.num_carry; ++k) {
              const jaxpr::Aval& aval = plan.body->invars[bn + k]->aval;
              J2O_ASSIGN_OR_RETURN(ir::Type t, IrTypeOf(aval));
              args.push_back(ctx.AddGraphInput("while_carry", std::move(t)));
            }
            J2O_ASSIGN_OR_RETURN(std::vector<ir::Value*> next,
                                 ctx.Inline(*plan.body, args));
            for (size_t k = 0; k < next.size(); ++k) {
              J2O_ASSIGN_OR_RETURN(
                  next[k],
                  Reconcile(ctx, next[k], plan.body->invars[bn + k]->aval,
                            absl::StrCat("while body output ", k)));
            }
            J2O_ASSIGN_OR_RETURN(ir::Value * pred, eval_cond(next));
            J2O_ASSIGN_OR_RETURN(pred, ScalarPredicate(ctx, pred));
            std::vector<ir::Value*> outs = {pred};
            outs.insert(outs.end(), next.begin(), next.end());
            return outs;
          }));
  std::vector<ir::Value*> loop_in = {nullptr, first_pred};
  loop_in.insert(loop_in.end(), carry.begin(), carry.end());
  std::vector<ir::Value*> outs =
      ctx.OpMulti("Loop", std::move(loop_in), static_cast<int>(plan.num_carry),
                  Attrs(ir::Attr::GraphValue("body", std::move(body))));
  for (size_t k = 0; k < outs.size(); ++k) {
    J2O_RETURN_IF_ERROR(ctx.SetOutput(eqn, static_cast<int>(k), outs[k]));
  }
  return absl::OkStatus();
}

absl::Status LowerScan(LoweringContext& ctx, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(plugin::ScanPlan plan, plugin::PlanScan(eqn));
  const int nc = static_cast<int>(plan.num_consts);
  const int nk = static_cast<int>(plan.num_carry);
  const int n_in = static_cast<int>(eqn.inputs.size());
  const int n_out = static_cast<int>(eqn.outputs.size());
  J2O_ASSIGN_OR_RETURN(std::vector<ir::Value*> consts,
                       Operands(ctx, eqn, 0, nc));
  J2O_ASSIGN_OR_RETURN(std::vector<ir::Value*> carry,
                       Operands(ctx, eqn, nc, nc + nk));
  J2O_ASSIGN_OR_RETURN(std::vector<ir::Value*> xs,
                       Operands(ctx, eqn, nc + nk, n_in));
  for (int k = 0; k < nk; ++k) {
    J2O_ASSIGN_OR_RETURN(
        carry[k], MatchDType(ctx, carry[k], plan.body->invars[nc + k]->aval));
  }
  J2O_ASSIGN_OR_RETURN(ir::Value * length_1d, ctx.DimValue(plan.length));
  ir::Value* trip_count = ctx.Op("Reshape", {length_1d, ctx.ConstI64({})});
  ctx.SetType(trip_count, jaxpr::DType::kI64, {});
  ir::Value* always =
      ctx.ConstArray(jaxpr::Array::ScalarFromDouble(jaxpr::DType::kBool, 1));
  J2O_ASSIGN_OR_RETURN(
      std::unique_ptr<ir::Graph> body,
      ctx.BuildSubgraph(
          "scan_body", [&]() -> absl::StatusOr<std::vector<ir::Value*>> {
            J2O_ASSIGN_OR_RETURN(ir::Type i64, IrTypeOf(jaxpr::Aval::Static(
                                                   jaxpr::DType::kI64, {})));
            J2O_ASSIGN_OR_RETURN(ir::Type b1, IrTypeOf(jaxpr::Aval::Static(
                                                  jaxpr::DType::kBool, {})));
            ir::Value* iter = ctx.AddGraphInput("scan_iter", std::move(i64));
            ir::Value* cond_in =
                ctx.AddGraphInput("scan_cond_in", std::move(b1));
            std::vector<ir::Value*> args = consts;
            for (int k = 0; k < nk; ++k) {
              J2O_ASSIGN_OR_RETURN(ir::Type t,
                                   IrTypeOf(plan.body->invars[nc + k]->aval));
              args.push_back(ctx.AddGraphInput("scan_carry", std::move(t)));
            }
            // Reverse scans visit rows length-1, ..., 0.
            ir::Value* row = iter;
            if (plan.reverse) {
              row = ctx.Op(
                  "Sub",
                  {ctx.Op("Sub", {trip_count, ctx.ConstI64Scalar(1)}), iter});
            }
            for (size_t x = 0; x < xs.size(); ++x) {
              ir::Value* slice = ctx.Op("Gather", {xs[x], row},
                                        Attrs(ir::Attr::Int("axis", 0)));
              const jaxpr::Aval& aval = plan.body->invars[nc + nk + x]->aval;
              ctx.SetType(slice, aval.dtype, aval.shape);
              args.push_back(slice);
            }
            J2O_ASSIGN_OR_RETURN(std::vector<ir::Value*> outs,
                                 ctx.Inline(*plan.body, args));
            for (int o = 0; o < n_out; ++o) {
              const jaxpr::Aval target =
                  o < nk ? plan.body->invars[nc + o]->aval
                         : jaxpr::Aval::Shaped(
                               eqn.outputs[o]->aval.dtype,
                               std::vector<jaxpr::DimExpr>(
                                   eqn.outputs[o]->aval.shape.begin() + 1,
                                   eqn.outputs[o]->aval.shape.end()));
              J2O_ASSIGN_OR_RETURN(
                  outs[o], Reconcile(ctx, outs[o], target,
                                     absl::StrCat("scan body output ", o)));
            }
            ir::Value* cond_out = ctx.Op("Identity", {cond_in});
            ctx.SetType(cond_out, jaxpr::DType::kBool, {});
            outs.insert(outs.begin(), cond_out);
            return outs;
          }));
  std::vector<ir::Value*> loop_in = {trip_count, always};
  loop_in.insert(loop_in.end(), carry.begin(), carry.end());
  std::vector<ir::Value*> outs =
      ctx.OpMulti("Loop", std::move(loop_in), n_out,
                  Attrs(ir::Attr::GraphValue("body", std::move(body))));
  for (int o = 0; o < n_out; ++o) {
    ir::Value* v = outs[o];
    if (o >= nk && plan.reverse) {
      // Row t of the stacked outputs came from row length-1-t.
      v = ctx.Op("Slice", {v, ctx.ConstI64({-1}),
                           ctx.ConstI64({std::numeric_limits<int64_t>::min()}),
                           ctx.ConstI64({0}), ctx.ConstI64({-1})});
    }
    J2O_RETURN_IF_ERROR(ctx.SetOutput(eqn, o, v));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterControlFlow() {
  plugin::Registry& registry = plugin::Registry::Global();
  registry.RegisterIr(
      "cond", &LowerCond,
      {{"If", "LessOrEqual", "Cast"},
       plugin::kMinOpset,
       "n branches as a chain of n-1 Ifs on index <= b (index clamped like "
       "lax.switch); branch outputs reconciled to the JAX avals (Cast, "
       "Reshape, Expand) and typed identically on both sides"});
  registry.RegisterIr(
      "while", &LowerWhile,
      {{"Loop"},
       plugin::kMinOpset,
       "cond_jaxpr evaluated once before the Loop and again at the end of "
       "each iteration; carried values typed from body_jaxpr's invars"});
  registry.RegisterIr(
      "scan", &LowerScan,
      {{"Loop", "Gather", "Slice"},
       plugin::kMinOpset,
       "Loop with trip count `length`; xs read with Gather at the iteration "
       "index (length-1-i for reverse), ys as Loop scan outputs (reversed "
       "with a Slice for reverse=True); num_consts/num_carry or, for JAX "
       "0.11 ft_in/ft_out, the split inferred from the avals"});
}

}  // namespace jax2onnx::plugins2
