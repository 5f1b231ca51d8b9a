// Reductions (lax.py `_reduce_op_shape_rule`, `_reduce_number_dtype_rule`,
// `_reduce_logical_shape_rule`, `_argminmax_*`, `_reduce_shape_rule`),
// cumulative ops (control_flow/loops.py `cumred` primitives: the operand's
// type), and windowed reductions (windowed_reductions.py
// `_common_reduce_window_shape_rule`, select_and_scatter(_add),
// select_and_gather_add).
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/typecheck/rules.h"

namespace jax2onnx::jaxpr::typecheck {
namespace {

std::vector<DimExpr> DeleteAxes(const std::vector<DimExpr>& shape,
                                const std::vector<int64_t>& axes) {
  std::vector<DimExpr> out;
  for (int i = 0; i < static_cast<int>(shape.size()); ++i) {
    bool drop = false;
    for (int64_t a : axes) drop |= a == i;
    if (!drop) out.push_back(shape[i]);
  }
  return out;
}

unsigned ReduceClasses(absl::string_view prim) {
  if (prim == "reduce_sum" || prim == "reduce_prod") return kClassNum;
  if (prim == "reduce_and" || prim == "reduce_or" || prim == "reduce_xor") {
    return kClassBoolOrInt;
  }
  return kClassAny;  // reduce_max, reduce_min
}

absl::Status ReduceOpRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, ReduceClasses(ctx.eqn().primitive)));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ctx.Ints("axes"));
  J2O_RETURN_IF_ERROR(ctx.AxesIn(axes, ctx.in(0).rank(), "axes"));
  ctx.SetResult(WithShape(ctx.in(0), DeleteAxes(ctx.in(0).shape, axes)));
  return absl::OkStatus();
}

absl::Status ArgMinMaxRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.Variable(0));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kClassOrdered | kClassComplex));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ctx.Ints("axes"));
  J2O_ASSIGN_OR_RETURN(DType index_dtype, ctx.DTypeParam("index_dtype"));
  if (axes.size() != 1) return ctx.Fail("axes must hold exactly one axis");
  J2O_RETURN_IF_ERROR(ctx.Axis(axes[0], ctx.in(0).rank(), "axes"));
  if (DimConst(ctx.in(0).shape[axes[0]]) == 0) {
    return ctx.Fail("the reduced dimension must be non-empty");
  }
  if (!IsInteger(index_dtype)) {
    return ctx.Fail("index_dtype must be an integer type");
  }
  ctx.SetResult(MakeAval(index_dtype, DeleteAxes(ctx.in(0).shape, axes)));
  return absl::OkStatus();
}

absl::Status CumulativeRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.Variable(0));
  const absl::string_view prim = ctx.eqn().primitive;
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, prim == "cumlogsumexp" ? kClassFloat
                                     : (prim == "cumsum" || prim == "cumprod")
                                         ? kClassNum
                                         : kClassAny));
  J2O_ASSIGN_OR_RETURN(int64_t axis, ctx.Int("axis"));
  J2O_RETURN_IF_ERROR(ctx.Bool("reverse").status());
  J2O_RETURN_IF_ERROR(ctx.Axis(axis, ctx.in(0).rank(), "axis"));
  ctx.SetResult(ctx.in(0));
  return absl::OkStatus();
}

// Generic `reduce`: operands then as many scalar init values; the reducer
// jaxpr maps (accumulators..., values...) of scalars to accumulators.
absl::Status ReduceRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  if (ctx.num_in() == 0 || ctx.num_in() % 2 != 0) {
    return ctx.Fail("takes operands and as many init values");
  }
  const int n = ctx.num_in() / 2;
  J2O_RETURN_IF_ERROR(ctx.Outputs(n));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ctx.Ints("dimensions"));
  J2O_ASSIGN_OR_RETURN(const ClosedJaxpr* body, ctx.Jaxpr("jaxpr"));
  std::vector<std::optional<Aval>> results;
  std::vector<Aval> scalars;
  for (int i = 0; i < n; ++i) {
    const Aval& x = ctx.in(i);
    const Aval& init = ctx.in(n + i);
    if (!init.shape.empty()) return ctx.Fail("init values must be scalars");
    if (!ctx.weak(n + i) && !SameDType(x, init)) {
      return ctx.Fail("operand and init value dtypes differ");
    }
    if (x.rank() != ctx.in(0).rank() || !ShapeEqual(x.shape, ctx.in(0).shape)) {
      return ctx.Fail("operands must have the same shape");
    }
    J2O_RETURN_IF_ERROR(ctx.AxesIn(dims, x.rank(), "dimensions"));
    results.push_back(WithShape(x, DeleteAxes(x.shape, dims)));
    scalars.push_back(WithShape(x, {}));
  }
  std::vector<Aval> body_in = scalars;
  body_in.insert(body_in.end(), scalars.begin(), scalars.end());
  J2O_RETURN_IF_ERROR(
      MatchTypes(ctx, "reducer inputs", InvarAvals(*body), body_in));
  J2O_RETURN_IF_ERROR(
      MatchTypes(ctx, "reducer outputs", OutvarAvals(*body), scalars));
  ctx.SetResults(std::move(results));
  return absl::OkStatus();
}

struct Window {
  std::vector<DimExpr> dims, strides, base_dilation, window_dilation;
  std::vector<std::pair<DimExpr, DimExpr>> padding;
};

absl::StatusOr<Window> ReadWindow(const RuleContext& ctx, int rank,
                                  bool dilations) {
  Window w;
  J2O_ASSIGN_OR_RETURN(w.dims, ctx.Dims("window_dimensions"));
  J2O_ASSIGN_OR_RETURN(w.strides, ctx.Dims("window_strides"));
  J2O_ASSIGN_OR_RETURN(const ParamValue* pad, ctx.params().Get("padding"));
  for (const ParamValue& p : pad->items()) {
    J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> lohi,
                         ctx.DimsOf(p, "param 'padding'"));
    if (lohi.size() != 2) return ctx.Fail("padding entries are (lo, hi)");
    w.padding.emplace_back(lohi[0], lohi[1]);
  }
  w.base_dilation.assign(rank, C(1));
  w.window_dilation.assign(rank, C(1));
  if (dilations) {
    J2O_ASSIGN_OR_RETURN(w.base_dilation, ctx.Dims("base_dilation"));
    J2O_ASSIGN_OR_RETURN(w.window_dilation, ctx.Dims("window_dilation"));
  }
  if (static_cast<int>(w.dims.size()) != rank ||
      static_cast<int>(w.strides.size()) != rank ||
      static_cast<int>(w.padding.size()) != rank ||
      static_cast<int>(w.base_dilation.size()) != rank ||
      static_cast<int>(w.window_dilation.size()) != rank) {
    return ctx.Fail(absl::StrCat(
        "window params must each have one entry per operand dim (", rank, ")"));
  }
  for (int i = 0; i < rank; ++i) {
    for (const DimExpr* d : {&w.dims[i], &w.strides[i], &w.base_dilation[i],
                             &w.window_dilation[i]}) {
      if (DimConst(*d).value_or(1) < 1) {
        return ctx.Fail(
            "window dimensions, strides and dilations must be >= 1");
      }
    }
  }
  return w;
}

// XLA's reduce-window output size per dim.
absl::StatusOr<std::vector<DimExpr>> WindowShape(const RuleContext& ctx,
                                                 const std::vector<DimExpr>& in,
                                                 const Window& w) {
  std::vector<DimExpr> out;
  for (size_t i = 0; i < in.size(); ++i) {
    const auto n = DimConst(in[i]);
    DimExpr dilated_in =
        n == 0 ? C(0)
               : DimAdd(in[i], DimMul(DimSub(in[i], C(1)),
                                      DimSub(w.base_dilation[i], C(1))));
    DimExpr padded =
        DimAdd(DimAdd(dilated_in, w.padding[i].first), w.padding[i].second);
    DimExpr window =
        DimAdd(DimMul(DimSub(w.dims[i], C(1)), w.window_dilation[i]), C(1));
    DimExpr diff = DimSub(padded, window);
    if (auto d = DimConst(diff); d.has_value() && *d < 0) {
      out.push_back(C(0));
      continue;
    }
    if (DimConst(padded).value_or(0) < 0) {
      return ctx.Fail("padding makes a dimension negative");
    }
    out.push_back(DimAdd(DimFloorDiv(diff, w.strides[i]), C(1)));
  }
  return out;
}

absl::Status ReduceWindowOpRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.Variable(0));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(
      0, ctx.eqn().primitive == "reduce_window_sum" ? kClassNum : kClassAny));
  J2O_ASSIGN_OR_RETURN(Window w, ReadWindow(ctx, ctx.in(0).rank(), true));
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> shape,
                       WindowShape(ctx, ctx.in(0).shape, w));
  ctx.SetResult(WithShape(ctx.in(0), std::move(shape)));
  return absl::OkStatus();
}

// Generic reduce_window: operands, then as many scalar init values, and a
// reducer jaxpr like `reduce`'s.
absl::Status ReduceWindowRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  if (ctx.num_in() == 0 || ctx.num_in() % 2 != 0) {
    return ctx.Fail("takes operands and as many init values");
  }
  const int n = ctx.num_in() / 2;
  J2O_RETURN_IF_ERROR(ctx.Outputs(n));
  J2O_RETURN_IF_ERROR(ctx.Variable(0));
  J2O_ASSIGN_OR_RETURN(const ClosedJaxpr* body, ctx.Jaxpr("jaxpr"));
  J2O_ASSIGN_OR_RETURN(Window w, ReadWindow(ctx, ctx.in(0).rank(), true));
  std::vector<std::optional<Aval>> results;
  std::vector<Aval> scalars;
  for (int i = 0; i < n; ++i) {
    if (!ShapeEqual(ctx.in(i).shape, ctx.in(0).shape)) {
      return ctx.Fail("operands must have the same shape");
    }
    if (!ctx.in(n + i).shape.empty()) {
      return ctx.Fail("init values must be scalars");
    }
    if (!ctx.weak(n + i) && !SameDType(ctx.in(i), ctx.in(n + i))) {
      return ctx.Fail("operand and init value dtypes differ");
    }
    J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> shape,
                         WindowShape(ctx, ctx.in(i).shape, w));
    results.push_back(WithShape(ctx.in(i), std::move(shape)));
    scalars.push_back(WithShape(ctx.in(i), {}));
  }
  std::vector<Aval> body_in = scalars;
  body_in.insert(body_in.end(), scalars.begin(), scalars.end());
  // The reducer may carry consts as leading invars.
  std::vector<Aval> invars = InvarAvals(*body);
  if (invars.size() > body_in.size()) {
    invars.erase(invars.begin(), invars.end() - body_in.size());
  }
  J2O_RETURN_IF_ERROR(MatchTypes(ctx, "reducer inputs", invars, body_in));
  J2O_RETURN_IF_ERROR(
      MatchTypes(ctx, "reducer outputs", OutvarAvals(*body), scalars));
  ctx.SetResults(std::move(results));
  return absl::OkStatus();
}

// select_and_scatter_add(source, operand): the operand's type; source has
// the window-reduced shape of the operand.
absl::Status SelectAndScatterAddRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(2));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.Has("select_prim"));
  J2O_RETURN_IF_ERROR(ctx.SameDTypes());
  const Aval& source = ctx.in(0);
  const Aval& operand = ctx.in(1);
  J2O_ASSIGN_OR_RETURN(Window w, ReadWindow(ctx, operand.rank(), false));
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> reduced,
                       WindowShape(ctx, operand.shape, w));
  if (!ShapeEqual(reduced, source.shape)) {
    return ctx.Fail(absl::StrCat("source must have the windowed shape ",
                                 ShapeString(reduced)));
  }
  ctx.SetResult(operand);
  return absl::OkStatus();
}

// select_and_scatter(operand, source, init_value) with select/scatter
// jaxprs; partial: the jaxprs are checked, not their signatures.
absl::Status SelectAndScatterRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.ArityRange(3, -1));
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.Jaxpr("select_jaxpr").status());
  J2O_RETURN_IF_ERROR(ctx.Jaxpr("scatter_jaxpr").status());
  J2O_ASSIGN_OR_RETURN(Window w, ReadWindow(ctx, ctx.in(0).rank(), false));
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> reduced,
                       WindowShape(ctx, ctx.in(0).shape, w));
  if (!ShapeEqual(reduced, ctx.in(1).shape)) {
    return ctx.Fail(absl::StrCat("source must have the windowed shape ",
                                 ShapeString(reduced)));
  }
  ctx.SetResult(ctx.in(0));
  return absl::OkStatus();
}

// select_and_gather_add(tangents, operand): the window-reduced shape.
absl::Status SelectAndGatherAddRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(2));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.Has("select_prim"));
  if (!ShapeEqual(ctx.in(0).shape, ctx.in(1).shape)) {
    return ctx.Fail("tangents and operand must have the same shape");
  }
  J2O_ASSIGN_OR_RETURN(Window w, ReadWindow(ctx, ctx.in(1).rank(), true));
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> shape,
                       WindowShape(ctx, ctx.in(1).shape, w));
  ctx.SetResult(WithShape(ctx.in(0), std::move(shape)));
  return absl::OkStatus();
}

}  // namespace

void RegisterReductionRules(RuleTable& table) {
  for (const char* name :
       {"reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
        "reduce_or", "reduce_xor"}) {
    table[name] = {&ReduceOpRule};
  }
  table["argmin"] = {&ArgMinMaxRule};
  table["argmax"] = {&ArgMinMaxRule};
  for (const char* name :
       {"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"}) {
    table[name] = {&CumulativeRule};
  }
  table["reduce"] = {&ReduceRule};
  for (const char* name :
       {"reduce_window_sum", "reduce_window_max", "reduce_window_min"}) {
    table[name] = {&ReduceWindowOpRule};
  }
  table["reduce_window"] = {&ReduceWindowRule};
  table["select_and_scatter_add"] = {&SelectAndScatterAddRule};
  // Partial: the select/scatter jaxprs are checked, not their signatures.
  table["select_and_scatter"] = {&SelectAndScatterRule, true};
  table["select_and_gather_add"] = {&SelectAndGatherAddRule};
}

}  // namespace jax2onnx::jaxpr::typecheck
