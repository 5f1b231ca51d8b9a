// sort and top_k (lax.py `_sort_abstract_eval`, `_top_k_abstract_eval`).
#include <string>

#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/typecheck/rules.h"

namespace jax2onnx::jaxpr::typecheck {
namespace {

absl::Status SortRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.ArityRange(1, -1));
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  J2O_RETURN_IF_ERROR(ctx.Outputs(ctx.num_in()));
  J2O_ASSIGN_OR_RETURN(int64_t dimension, ctx.Int("dimension"));
  J2O_ASSIGN_OR_RETURN(int64_t num_keys, ctx.Int("num_keys"));
  J2O_RETURN_IF_ERROR(ctx.Bool("is_stable").status());
  for (int i = 0; i < ctx.num_in(); ++i) {
    J2O_RETURN_IF_ERROR(ctx.Variable(i));
    J2O_RETURN_IF_ERROR(ctx.DTypeIn(i, kClassAny));
    if (!ShapeEqual(ctx.in(i).shape, ctx.in(0).shape)) {
      return ctx.Fail("operands must have equal shapes");
    }
  }
  J2O_RETURN_IF_ERROR(ctx.Axis(dimension, ctx.in(0).rank(), "dimension"));
  if (num_keys < 1 || num_keys > ctx.num_in()) {
    return ctx.Fail(
        absl::StrCat("num_keys=", num_keys, " must be in 1..", ctx.num_in()));
  }
  ctx.SetResults(
      std::vector<std::optional<Aval>>(ctx.ins().begin(), ctx.ins().end()));
  return absl::OkStatus();
}

absl::Status TopKRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(2));
  J2O_RETURN_IF_ERROR(ctx.Variable(0));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kClassOrdered));
  J2O_ASSIGN_OR_RETURN(int64_t k, ctx.Int("k"));
  const Aval& x = ctx.in(0);
  if (x.rank() < 1) return ctx.Fail("the operand must have rank >= 1");
  int64_t axis = x.rank() - 1;
  if (const ParamValue* a = ctx.params().Find("axis");
      a != nullptr && !a->is_none()) {
    J2O_ASSIGN_OR_RETURN(axis, a->AsInt("param 'axis'"));
    J2O_RETURN_IF_ERROR(ctx.Axis(axis, x.rank(), "axis"));
  }
  if (k < 0) return ctx.Fail("k must be >= 0");
  if (auto n = DimConst(x.shape[axis]); n.has_value() && *n < k) {
    return ctx.Fail(
        absl::StrCat("k=", k, " exceeds the size ", *n, " along axis ", axis));
  }
  std::vector<DimExpr> shape = x.shape;
  shape[axis] = C(k);
  ctx.SetResults({WithShape(x, shape), MakeAval(DType::kI32, shape)});
  return absl::OkStatus();
}

// approx_top_k (ann.py `_approx_top_k_abstract_eval`): a float operand of
// rank >= 1, 0 < k <= size; with aggregate_to_topk the reduced dim becomes k
// (values, i32 indices). Without it the size is backend-defined
// (approx_top_k_reduction_output_size): the declared results are taken.
absl::Status ApproxTopKRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(2));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kClassFloat));
  J2O_ASSIGN_OR_RETURN(int64_t k, ctx.Int("k"));
  J2O_ASSIGN_OR_RETURN(int64_t dim, ctx.Int("reduction_dimension"));
  J2O_ASSIGN_OR_RETURN(bool aggregate, ctx.Bool("aggregate_to_topk"));
  J2O_RETURN_IF_ERROR(ctx.Bool("is_max_k").status());
  const Aval& x = ctx.in(0);
  if (x.rank() < 1) return ctx.Fail("the operand must have rank >= 1");
  const int64_t axis64 = dim < 0 ? dim + x.rank() : dim;
  J2O_RETURN_IF_ERROR(ctx.Axis(axis64, x.rank(), "reduction_dimension"));
  const int axis = static_cast<int>(axis64);
  if (k <= 0) return ctx.Fail(absl::StrCat("k must be positive, got ", k));
  if (auto n = DimConst(x.shape[axis]); n.has_value() && *n < k) {
    return ctx.Fail(absl::StrCat("k=", k, " exceeds the size ", *n,
                                 " of reduction_dimension ", dim));
  }
  std::vector<DimExpr> shape = x.shape;
  if (aggregate) {
    shape[axis] = C(k);
  } else if (ctx.out(0).is_shaped() && ctx.out(0).rank() == x.rank()) {
    shape[axis] = ctx.out(0).shape[axis];
  }
  ctx.SetResults({WithShape(x, shape), MakeAval(DType::kI32, shape)});
  return absl::OkStatus();
}

}  // namespace

void RegisterMiscRules(RuleTable& table) {
  table["sort"] = {&SortRule};
  table["top_k"] = {&TopKRule};
  table["approx_top_k"] = {&ApproxTopKRule};
}

}  // namespace jax2onnx::jaxpr::typecheck
