// sort and top_k (lax.py `_sort_abstract_eval`, `_top_k_abstract_eval`),
// fft (fft.py `fft_abstract_eval`).
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

// fft: FFT/IFFT keep a complex operand's type; RFFT takes f32/f64 and gives
// the complex type with the last axis n/2+1; IRFFT takes complex and gives
// the real type with the trailing axes fft_lengths (its last operand axis
// must be n/2+1). fft_lengths name 1-3 trailing axes.
absl::Status FftRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.Shaped(0));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> lengths, ctx.Ints("fft_lengths"));
  J2O_RETURN_IF_ERROR(ctx.Has("fft_type"));
  const ParamValue* p = ctx.params().Find("fft_type");
  std::string type = p->kind() == ParamValue::Kind::kInt
                         ? std::string(p->int_value() == 0   ? "FFT"
                                       : p->int_value() == 1 ? "IFFT"
                                       : p->int_value() == 2 ? "RFFT"
                                       : p->int_value() == 3 ? "IRFFT"
                                                             : "?")
                         : p->text();
  if (auto dot = type.rfind('.'); dot != std::string::npos) {
    type = type.substr(dot + 1);
  }
  if (type != "FFT" && type != "IFFT" && type != "RFFT" && type != "IRFFT") {
    return ctx.Fail(absl::StrCat("unknown fft_type ", p->ToString()));
  }
  const Aval& x = ctx.in(0);
  const int k = static_cast<int>(lengths.size());
  if (k < 1 || k > 3 || k > x.rank()) {
    return ctx.Fail(
        absl::StrCat("fft_lengths must name 1 to 3 trailing axes "
                     "of the rank-",
                     x.rank(), " operand"));
  }
  for (int64_t n : lengths) {
    if (n < 1) return ctx.Fail("fft_lengths must be positive");
  }
  const int first = x.rank() - k;
  std::vector<DimExpr> shape = x.shape;
  auto check_axes = [&](int count) -> absl::Status {
    for (int j = 0; j < count; ++j) {
      auto n = DimConst(x.shape[first + j]);
      if (!n.has_value() || *n != lengths[j]) {
        return ctx.Fail(absl::StrCat("fft_lengths ", lengths[j],
                                     " does not match axis ", first + j, " of ",
                                     x.ToString()));
      }
    }
    return absl::OkStatus();
  };
  if (type == "RFFT") {
    J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kClassFloat));
    if (x.dtype != DType::kF32 && x.dtype != DType::kF64) {
      return ctx.Fail("RFFT takes f32 or f64");
    }
    J2O_RETURN_IF_ERROR(check_axes(k));
    shape.back() = C(lengths.back() / 2 + 1);
    ctx.SetResult(
        MakeAval(x.dtype == DType::kF32 ? DType::kC64 : DType::kC128, shape));
    return absl::OkStatus();
  }
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kClassComplex));
  if (type == "IRFFT") {
    J2O_RETURN_IF_ERROR(check_axes(k - 1));
    auto last = DimConst(x.shape.back());
    if (!last.has_value() || *last != lengths.back() / 2 + 1) {
      return ctx.Fail(absl::StrCat(
          "IRFFT of length ", lengths.back(), " needs ", lengths.back() / 2 + 1,
          " elements on the last axis of ", x.ToString()));
    }
    shape.back() = C(lengths.back());
    ctx.SetResult(
        MakeAval(x.dtype == DType::kC64 ? DType::kF32 : DType::kF64, shape));
    return absl::OkStatus();
  }
  J2O_RETURN_IF_ERROR(check_axes(k));
  ctx.SetResult(x);
  return absl::OkStatus();
}

}  // namespace

void RegisterMiscRules(RuleTable& table) {
  table["fft"] = {&FftRule};
  table["sort"] = {&SortRule};
  table["top_k"] = {&TopKRule};
  table["approx_top_k"] = {&ApproxTopKRule};
}

}  // namespace jax2onnx::jaxpr::typecheck
