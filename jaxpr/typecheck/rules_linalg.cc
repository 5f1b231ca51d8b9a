// dot_general and conv_general_dilated (lax.py `_dot_general_shape_rule`,
// `_dot_general_dtype_rule`; convolution.py `_conv_general_dilated_shape_rule`
// and `conv_shape_tuple`).
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/typecheck/rules.h"

namespace jax2onnx::jaxpr::typecheck {
namespace {

// The result dtype: preferred_element_type when set; otherwise the operand
// dtype when both agree; nullopt for mixed operands (XLA's "higher
// precision" pick is not modelled: partial).
absl::StatusOr<std::optional<DType>> ResultDType(const RuleContext& ctx) {
  if (const ParamValue* p = ctx.params().Find("preferred_element_type");
      p != nullptr && !p->is_none()) {
    J2O_ASSIGN_OR_RETURN(DType d, p->AsDType("param 'preferred_element_type'"));
    return std::optional<DType>(d);
  }
  if (SameDType(ctx.in(0), ctx.in(1)) || ctx.weak(1)) {
    return std::optional<DType>(ctx.in(0).dtype);
  }
  if (ctx.weak(0)) return std::optional<DType>(ctx.in(1).dtype);
  if (ClassOf(ctx.in(0)) == ClassOf(ctx.in(1)) &&
      ItemSize(ctx.in(0).dtype) == ItemSize(ctx.in(1).dtype)) {
    // Same properties but different dtypes (f16 vs bf16): JAX rejects.
    return ctx.Fail("operands have different dtypes of equal precision");
  }
  return std::optional<DType>();
}

absl::Status DotGeneralRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(2));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kClassAny));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(1, kClassAny));
  J2O_ASSIGN_OR_RETURN(const ParamValue* dn,
                       ctx.params().Get("dimension_numbers"));
  // ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))
  if (dn->items().size() != 2 || dn->items()[0].items().size() != 2 ||
      dn->items()[1].items().size() != 2) {
    return ctx.Fail(
        absl::StrCat("malformed dimension_numbers ", dn->ToString()));
  }
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> lc,
                       dn->items()[0].items()[0].AsIntList("lhs contracting"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> rc,
                       dn->items()[0].items()[1].AsIntList("rhs contracting"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> lb,
                       dn->items()[1].items()[0].AsIntList("lhs batch"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> rb,
                       dn->items()[1].items()[1].AsIntList("rhs batch"));
  const Aval& lhs = ctx.in(0);
  const Aval& rhs = ctx.in(1);
  if (lc.size() != rc.size() || lb.size() != rb.size()) {
    return ctx.Fail(
        "lhs and rhs must name as many contracting and batch "
        "dimensions");
  }
  std::vector<int64_t> lhs_used = lc;
  lhs_used.insert(lhs_used.end(), lb.begin(), lb.end());
  std::vector<int64_t> rhs_used = rc;
  rhs_used.insert(rhs_used.end(), rb.begin(), rb.end());
  J2O_RETURN_IF_ERROR(ctx.AxesIn(lhs_used, lhs.rank(), "lhs dimensions"));
  J2O_RETURN_IF_ERROR(ctx.AxesIn(rhs_used, rhs.rank(), "rhs dimensions"));
  for (size_t i = 0; i < lc.size(); ++i) {
    if (!DimEqual(lhs.shape[lc[i]], rhs.shape[rc[i]])) {
      return ctx.Fail("contracting dimensions must have equal sizes");
    }
  }
  std::vector<DimExpr> shape;
  for (size_t i = 0; i < lb.size(); ++i) {
    if (!DimEqual(lhs.shape[lb[i]], rhs.shape[rb[i]])) {
      return ctx.Fail("batch dimensions must have equal sizes");
    }
    shape.push_back(lhs.shape[lb[i]]);
  }
  auto free = [&](const Aval& a, const std::vector<int64_t>& used) {
    for (int d = 0; d < a.rank(); ++d) {
      bool is_used = false;
      for (int64_t u : used) is_used |= u == d;
      if (!is_used) shape.push_back(a.shape[d]);
    }
  };
  free(lhs, lhs_used);
  free(rhs, rhs_used);
  J2O_ASSIGN_OR_RETURN(std::optional<DType> dtype, ResultDType(ctx));
  if (!dtype.has_value()) {
    // Mixed operand dtypes: only the shape is computed.
    if (ctx.out(0).is_shaped()) {
      ctx.SetResult(WithShape(ctx.out(0), std::move(shape)));
    }
    return absl::OkStatus();
  }
  ctx.SetResult(MakeAval(*dtype, std::move(shape)));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> SpecField(const RuleContext& ctx,
                                               const ParamValue& dn,
                                               absl::string_view name,
                                               int index) {
  if (const ParamValue* f = dn.Field(name)) return f->AsIntList(name);
  // Positional form ConvDimensionNumbers((0, 1, 2), ...).
  if (index < static_cast<int>(dn.call_args().size())) {
    return dn.call_args()[index].second.AsIntList(name);
  }
  return ctx.Fail(absl::StrCat("dimension_numbers lacks ", name));
}

absl::Status ConvRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(2));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.Variable(0));
  J2O_RETURN_IF_ERROR(ctx.Variable(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kClassNum | kClassBool));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(1, kClassNum | kClassBool));
  const Aval& lhs = ctx.in(0);
  const Aval& rhs = ctx.in(1);
  const int rank = lhs.rank();
  if (rank < 2 || rhs.rank() != rank) {
    return ctx.Fail("lhs and rhs must have the same rank >= 2");
  }
  const int spatial = rank - 2;
  J2O_ASSIGN_OR_RETURN(const ParamValue* dn,
                       ctx.params().Get("dimension_numbers"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> lhs_spec,
                       SpecField(ctx, *dn, "lhs_spec", 0));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> rhs_spec,
                       SpecField(ctx, *dn, "rhs_spec", 1));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> out_spec,
                       SpecField(ctx, *dn, "out_spec", 2));
  J2O_RETURN_IF_ERROR(ctx.Permutation(lhs_spec, rank, "lhs_spec"));
  J2O_RETURN_IF_ERROR(ctx.Permutation(rhs_spec, rank, "rhs_spec"));
  J2O_RETURN_IF_ERROR(ctx.Permutation(out_spec, rank, "out_spec"));
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> strides,
                       ctx.Dims("window_strides"));
  J2O_ASSIGN_OR_RETURN(const ParamValue* padding, ctx.params().Get("padding"));
  std::vector<DimExpr> lhs_dil(spatial, C(1)), rhs_dil(spatial, C(1));
  if (const ParamValue* p = ctx.params().Find("lhs_dilation");
      p != nullptr && !p->is_none()) {
    J2O_ASSIGN_OR_RETURN(lhs_dil, ctx.DimsOf(*p, "param 'lhs_dilation'"));
  }
  if (const ParamValue* p = ctx.params().Find("rhs_dilation");
      p != nullptr && !p->is_none()) {
    J2O_ASSIGN_OR_RETURN(rhs_dil, ctx.DimsOf(*p, "param 'rhs_dilation'"));
  }
  J2O_ASSIGN_OR_RETURN(int64_t fgc, ctx.Int("feature_group_count"));
  J2O_ASSIGN_OR_RETURN(int64_t bgc, ctx.Int("batch_group_count"));
  if (static_cast<int>(strides.size()) != spatial ||
      static_cast<int>(lhs_dil.size()) != spatial ||
      static_cast<int>(rhs_dil.size()) != spatial) {
    return ctx.Fail(
        absl::StrCat("strides and dilations need ", spatial, " entries"));
  }
  if (fgc < 1 || bgc < 1 || (fgc > 1 && bgc > 1)) {
    return ctx.Fail(
        "feature_group_count and batch_group_count must be >= 1 "
        "and not both > 1");
  }
  const DimExpr& batch = lhs.shape[lhs_spec[0]];
  const DimExpr& in_features = lhs.shape[lhs_spec[1]];
  const DimExpr& out_features = rhs.shape[rhs_spec[0]];
  const DimExpr& rhs_in_features = rhs.shape[rhs_spec[1]];
  if (!DimEqual(in_features, DimMulConst(rhs_in_features, fgc))) {
    return ctx.Fail(absl::StrCat(
        "lhs feature dimension (", in_features.ToString(),
        ") must equal rhs input features (", rhs_in_features.ToString(),
        ") times feature_group_count (", fgc, ")"));
  }
  std::vector<DimExpr> out(rank);
  out[out_spec[0]] = DimFloorDiv(batch, C(bgc));
  out[out_spec[1]] = out_features;
  std::vector<std::pair<DimExpr, DimExpr>> pads;
  if (padding->kind() == ParamValue::Kind::kTuple ||
      padding->kind() == ParamValue::Kind::kList) {
    for (const ParamValue& p : padding->items()) {
      J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> lohi,
                           ctx.DimsOf(p, "param 'padding'"));
      if (lohi.size() != 2) return ctx.Fail("padding entries are (lo, hi)");
      pads.emplace_back(lohi[0], lohi[1]);
    }
  } else {
    return absl::OkStatus();  // a string padding ('SAME'): partial
  }
  if (static_cast<int>(pads.size()) != spatial) {
    return ctx.Fail(absl::StrCat("padding needs ", spatial, " entries"));
  }
  for (int i = 0; i < spatial; ++i) {
    const DimExpr& n = lhs.shape[lhs_spec[2 + i]];
    const DimExpr& k = rhs.shape[rhs_spec[2 + i]];
    DimExpr in = DimConst(n) == 0
                     ? C(0)
                     : DimAdd(DimMul(DimSub(n, C(1)), lhs_dil[i]), C(1));
    DimExpr padded = DimAdd(DimAdd(in, pads[i].first), pads[i].second);
    DimExpr window = DimConst(k) == 0
                         ? C(0)
                         : DimAdd(DimMul(DimSub(k, C(1)), rhs_dil[i]), C(1));
    DimExpr diff = DimSub(padded, window);
    if (auto d = DimConst(diff); d.has_value() && *d < 0) {
      out[out_spec[2 + i]] = C(0);
    } else {
      out[out_spec[2 + i]] = DimAdd(DimFloorDiv(diff, strides[i]), C(1));
    }
  }
  J2O_ASSIGN_OR_RETURN(std::optional<DType> dtype, ResultDType(ctx));
  if (!dtype.has_value()) {
    if (ctx.out(0).is_shaped()) ctx.SetResult(WithShape(ctx.out(0), out));
    return absl::OkStatus();
  }
  ctx.SetResult(MakeAval(*dtype, std::move(out)));
  return absl::OkStatus();
}

}  // namespace

void RegisterDecompositionRules(RuleTable& table);  // rules_decompositions.cc

void RegisterLinalgRules(RuleTable& table) {
  RegisterDecompositionRules(table);
  table["dot_general"] = {&DotGeneralRule};
  table["conv_general_dilated"] = {&ConvRule};
}

}  // namespace jax2onnx::jaxpr::typecheck
