// dot_general (and the legacy dot) -> lax dot_general; convolution ->
// lax conv_general_dilated.
#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

// "[0] x [1]" -> ([0], [1]).
absl::Status PairLists(absl::string_view raw, std::vector<int64_t>* a,
                       std::vector<int64_t>* b) {
  size_t close = raw.find(']');
  if (close == absl::string_view::npos) return absl::InvalidArgumentError("expected [..] x [..]");
  J2O_ASSIGN_OR_RETURN(*a, ParseIntList(raw.substr(0, close + 1)));
  size_t open = raw.find('[', close);
  if (open == absl::string_view::npos) return absl::InvalidArgumentError("expected [..] x [..]");
  J2O_ASSIGN_OR_RETURN(*b, ParseIntList(raw.substr(open)));
  return absl::OkStatus();
}

std::vector<int64_t> Field(absl::string_view raw, absl::string_view key) {
  auto f = StructField(raw, key);
  if (!f.has_value()) return {};
  auto v = ParseIntList(*f);
  return v.ok() ? *v : std::vector<int64_t>{};
}

Params DotGeneralParams(const std::vector<int64_t>& lc,
                        const std::vector<int64_t>& rc,
                        const std::vector<int64_t>& lb,
                        const std::vector<int64_t>& rb, DType out) {
  Params p;
  p.Set("dimension_numbers",
        ParamValue::Tuple({ParamValue::Tuple({IntList(lc), IntList(rc)}),
                           ParamValue::Tuple({IntList(lb), IntList(rb)})}));
  p.Set("out_sharding", ParamValue::None());
  p.Set("precision", ParamValue::None());
  p.Set("preferred_element_type", NumpyDType(out));
  return p;
}

absl::Status DotGeneral(OpContext& ctx) {
  const Operation& op = ctx.op();
  J2O_ASSIGN_OR_RETURN(Val lhs, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Val rhs, ctx.Input(1));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  std::vector<int64_t> lb, rb, lc, rc;
  if (op.name == "stablehlo.dot") {
    lc = {lhs.aval.rank() - 1};
    rc = {0};
  } else if (auto dn = op.Attr("dot_dimension_numbers")) {
    lb = Field(*dn, "lhs_batching_dimensions");
    rb = Field(*dn, "rhs_batching_dimensions");
    lc = Field(*dn, "lhs_contracting_dimensions");
    rc = Field(*dn, "rhs_contracting_dimensions");
  } else {
    if (auto b = op.Attr("batching_dims")) {
      absl::Status s = PairLists(*b, &lb, &rb);
      if (!s.ok()) return ctx.Error(s.message());
    }
    if (auto c = op.Attr("contracting_dims")) {
      absl::Status s = PairLists(*c, &lc, &rc);
      if (!s.ok()) return ctx.Error(s.message());
    }
  }
  if (lhs.aval.dtype != rhs.aval.dtype) {
    lhs = ConvertTo(ctx, lhs, out.dtype);
    rhs = ConvertTo(ctx, rhs, out.dtype);
  }
  Params p = DotGeneralParams(lc, rc, lb, rb, out.dtype);
  ctx.Bind(0, ctx.Emit1("dot_general", std::move(p), {lhs, rhs}, out));
  return absl::OkStatus();
}

// chlo.ragged_dot with the ragged dimension a non-contracting dimension of
// lhs (ragged_dot mode 1, what jax.lax.ragged_dot emits): rows
// [start_g, end_g) of lhs's ragged dimension multiply rhs's group g
// (end = cumsum(group_sizes)); rows past the last group are zero. It is
// one dot_general with the group dimension as a free dimension of rhs,
// then each row keeps its own group's product (select, so other groups'
// infinities cannot leak in) and the group axis is summed (adding zeros
// is exact). Ragged contracting or batch dimensions are refused.
absl::Status RaggedDot(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val lhs, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Val rhs, ctx.Input(1));
  J2O_ASSIGN_OR_RETURN(Val sizes, ctx.Input(2));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  J2O_ASSIGN_OR_RETURN(absl::string_view dn,
                       ctx.Attr("ragged_dot_dimension_numbers"));
  const std::vector<int64_t> lb = Field(dn, "lhs_batching_dimensions");
  const std::vector<int64_t> rb = Field(dn, "rhs_batching_dimensions");
  const std::vector<int64_t> lc = Field(dn, "lhs_contracting_dimensions");
  const std::vector<int64_t> rc = Field(dn, "rhs_contracting_dimensions");
  const std::vector<int64_t> lr = Field(dn, "lhs_ragged_dimensions");
  const std::vector<int64_t> rg = Field(dn, "rhs_group_dimensions");
  auto contains = [](const std::vector<int64_t>& v, int64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  if (lr.size() != 1 || rg.size() != 1 || contains(lc, lr[0]) ||
      contains(lb, lr[0])) {
    return ctx.Unsupported(
        "ragged_dot whose ragged dimension is not a non-contracting lhs "
        "dimension with an rhs group dimension");
  }
  if (sizes.aval.rank() != 1) {
    return ctx.Unsupported("ragged_dot with per-batch group_sizes");
  }
  if (lhs.aval.dtype != rhs.aval.dtype) {
    lhs = ConvertTo(ctx, lhs, out.dtype);
    rhs = ConvertTo(ctx, rhs, out.dtype);
  }
  const std::vector<int64_t> ldims = StaticDims(lhs.aval);
  const std::vector<int64_t> rdims = StaticDims(rhs.aval);
  const int64_t groups = rdims[rg[0]];
  const int64_t rows = ldims[lr[0]];
  // dot_general's output: batch, lhs free, rhs free (in operand order).
  std::vector<int64_t> full;
  for (int64_t d : lb) full.push_back(ldims[d]);
  int64_t row_axis = -1, group_axis = -1;
  for (int64_t d = 0; d < static_cast<int64_t>(ldims.size()); ++d) {
    if (contains(lb, d) || contains(lc, d)) continue;
    if (d == lr[0]) row_axis = static_cast<int64_t>(full.size());
    full.push_back(ldims[d]);
  }
  for (int64_t d = 0; d < static_cast<int64_t>(rdims.size()); ++d) {
    if (contains(rb, d) || contains(rc, d)) continue;
    if (d == rg[0]) group_axis = static_cast<int64_t>(full.size());
    full.push_back(rdims[d]);
  }
  const Aval full_aval = ShapedAval(out.dtype, full);
  Params p = DotGeneralParams(lc, rc, lb, rb, out.dtype);
  Val prod = ctx.Emit1("dot_general", std::move(p), {lhs, rhs}, full_aval);
  // mask[row, g] = start_g <= row < end_g.
  const DType it = sizes.aval.dtype;
  Params cp;
  cp.Set("axis", ParamValue::Int(0));
  cp.Set("reverse", ParamValue::Bool(false));
  Val ends = ctx.Emit1("cumsum", std::move(cp), {sizes}, sizes.aval);
  Val starts = ctx.Emit1("sub", {}, {ends, sizes}, sizes.aval);
  const Aval grid = ShapedAval(it, {rows, groups});
  Val row = EmitIota(ctx, grid, 0);
  auto along_groups = [&](const Val& v) {
    return EmitBroadcastInDim(ctx, v, {1}, grid);
  };
  const Aval mask_aval = ShapedAval(DType::kBool, {rows, groups});
  Val mask = ctx.Emit1(
      "and", {},
      {ctx.Emit1("ge", {}, {row, along_groups(starts)}, mask_aval),
       ctx.Emit1("lt", {}, {row, along_groups(ends)}, mask_aval)},
      mask_aval);
  Val wide_mask = EmitBroadcastInDim(ctx, mask, {row_axis, group_axis},
                                     WithDType(full_aval, DType::kBool));
  Val zeros = EmitBroadcastInDim(ctx, ctx.Scalar(out.dtype, 0.0), {}, full_aval);
  Val kept = ctx.Emit1("select_n", {}, {wide_mask, zeros, prod}, full_aval);
  Params sp;
  sp.Set("axes", IntTuple({group_axis}));
  sp.Set("out_sharding", ParamValue::None());
  ctx.Bind(0, ctx.Emit1("reduce_sum", std::move(sp), {kept}, out));
  return absl::OkStatus();
}

// `[b, 0, 1, f]` -> (batch-like, feature-like, spatial...) positions.
absl::StatusOr<std::vector<int64_t>> Spec(absl::string_view layout, char first,
                                          char second) {
  layout = StripSpace(layout);
  if (layout.size() < 2 || layout.front() != '[' || layout.back() != ']') {
    return absl::InvalidArgumentError(absl::StrCat("bad layout ", layout));
  }
  std::vector<absl::string_view> parts = SplitTopLevel(layout.substr(1, layout.size() - 2), ',');
  std::vector<int64_t> spatial(parts.size(), -1);
  int64_t a = -1, b = -1;
  for (size_t i = 0; i < parts.size(); ++i) {
    absl::string_view s = parts[i];
    if (s.size() == 1 && s[0] == first) {
      a = i;
    } else if (s.size() == 1 && s[0] == second) {
      b = i;
    } else {
      int64_t k;
      if (!absl::SimpleAtoi(s, &k) || k < 0 || k >= static_cast<int64_t>(parts.size())) {
        return absl::InvalidArgumentError(absl::StrCat("bad layout ", layout));
      }
      spatial[k] = i;
    }
  }
  std::vector<int64_t> out = {a, b};
  for (size_t k = 0; k + 2 < parts.size(); ++k) out.push_back(spatial[k]);
  for (int64_t v : out) {
    if (v < 0) return absl::InvalidArgumentError(absl::StrCat("bad layout ", layout));
  }
  return out;
}

// `pad_in`: the padding of a dynamic_conv whose padding operand is
// constant; `symbolic_pad`: one computed from dimension values (low, high
// per spatial dim), applied by a pad of lhs (with lhs_dilation as its
// interior, as the spec pads the dilated input) before a convolution without
// padding or lhs dilation.
absl::Status ConvolutionWith(
    OpContext& ctx, const std::vector<int64_t>* pad_in,
    const std::vector<jaxpr::DimExpr>* symbolic_pad = nullptr) {
  const Operation& op = ctx.op();
  J2O_ASSIGN_OR_RETURN(Val lhs, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Val rhs, ctx.Input(1));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  const int nsp = lhs.aval.rank() - 2;
  std::vector<int64_t> lhs_spec, rhs_spec, out_spec;
  absl::string_view dn;
  if (auto d = op.Attr("dim_numbers")) {
    dn = *d;
  } else if (auto d2 = op.Attr("dimension_numbers")) {
    dn = *d2;
    if (absl::StartsWith(dn, "#stablehlo.conv<")) {
      dn = dn.substr(16, dn.size() - 17);
      if (absl::StartsWith(dn, "raw ")) dn = dn.substr(4);
    }
  } else {
    return ctx.Error("missing dimension numbers");
  }
  if (absl::StrContains(dn, "input_batch_dimension")) {
    std::string wrapped = absl::StrCat("<", dn, ">");
    auto one = [&](absl::string_view k) -> int64_t {
      auto f = StructField(wrapped, k);
      if (!f) return -1;
      auto v = ParseIntScalar(*f);
      return v.ok() ? *v : -1;
    };
    lhs_spec = {one("input_batch_dimension"), one("input_feature_dimension")};
    for (int64_t v : Field(wrapped, "input_spatial_dimensions")) lhs_spec.push_back(v);
    rhs_spec = {one("kernel_output_feature_dimension"), one("kernel_input_feature_dimension")};
    for (int64_t v : Field(wrapped, "kernel_spatial_dimensions")) rhs_spec.push_back(v);
    out_spec = {one("output_batch_dimension"), one("output_feature_dimension")};
    for (int64_t v : Field(wrapped, "output_spatial_dimensions")) out_spec.push_back(v);
  } else {
    size_t x = dn.find("]x[");
    size_t arrow = dn.find("->");
    if (x == absl::string_view::npos || arrow == absl::string_view::npos) {
      x = dn.find("] x [");
      if (x == absl::string_view::npos || arrow == absl::string_view::npos) {
        return ctx.Error(absl::StrCat("bad dimension numbers ", dn));
      }
      ++x;
    } else {
      ++x;
    }
    auto l = Spec(dn.substr(0, x), 'b', 'f');
    absl::string_view rest = StripSpace(dn.substr(x));
    if (!rest.empty() && rest[0] == 'x') rest = StripSpace(rest.substr(1));
    size_t arrow2 = rest.find("->");
    auto r = Spec(rest.substr(0, arrow2), 'o', 'i');
    auto o = Spec(rest.substr(arrow2 + 2), 'b', 'f');
    if (!l.ok() || !r.ok() || !o.ok()) return ctx.Error(absl::StrCat("bad dimension numbers ", dn));
    lhs_spec = *l;
    rhs_spec = *r;
    out_spec = *o;
  }
  std::vector<int64_t> strides(nsp, 1), lhs_dil(nsp, 1), rhs_dil(nsp, 1), pad(2 * nsp, 0);
  std::vector<int64_t> reversal;
  if (auto w = op.Attr("window")) {  // {stride = [..], pad = [[..]], ...}
    std::string wrapped = absl::StrCat("<", w->substr(1, w->size() - 2), ">");
    if (auto f = StructField(wrapped, "stride")) { J2O_ASSIGN_OR_RETURN(strides, ParseIntList(*f)); }
    if (auto f = StructField(wrapped, "pad")) { J2O_ASSIGN_OR_RETURN(pad, ParseIntList(*f)); }
    if (auto f = StructField(wrapped, "lhs_dilate")) { J2O_ASSIGN_OR_RETURN(lhs_dil, ParseIntList(*f)); }
    if (auto f = StructField(wrapped, "rhs_dilate")) { J2O_ASSIGN_OR_RETURN(rhs_dil, ParseIntList(*f)); }
    if (auto f = StructField(wrapped, "reverse")) { J2O_ASSIGN_OR_RETURN(reversal, ParseIntList(*f)); }
  } else {
    if (op.Attr("window_strides")) { J2O_ASSIGN_OR_RETURN(strides, ctx.IntListAttr("window_strides")); }
    if (op.Attr("padding")) { J2O_ASSIGN_OR_RETURN(pad, ctx.IntListAttr("padding")); }
    if (op.Attr("lhs_dilation")) { J2O_ASSIGN_OR_RETURN(lhs_dil, ctx.IntListAttr("lhs_dilation")); }
    if (op.Attr("rhs_dilation")) { J2O_ASSIGN_OR_RETURN(rhs_dil, ctx.IntListAttr("rhs_dilation")); }
    if (op.Attr("window_reversal")) { J2O_ASSIGN_OR_RETURN(reversal, ctx.IntListAttr("window_reversal")); }
  }
  if (pad_in != nullptr) pad = *pad_in;
  for (int64_t r : reversal) {
    if (r != 0) return ctx.Unsupported("window_reversal");
  }
  if (symbolic_pad != nullptr) {
    if (symbolic_pad->size() != static_cast<size_t>(2 * nsp)) {
      return ctx.Error("padding needs (low, high) per spatial dim");
    }
    std::vector<ParamValue> cfg;
    Aval padded_aval = lhs.aval;
    for (int d = 0; d < lhs.aval.rank(); ++d) {
      int spatial = -1;
      for (int i = 0; i < nsp; ++i) {
        if (lhs_spec.size() == static_cast<size_t>(nsp + 2) &&
            lhs_spec[2 + i] == d) {
          spatial = i;
        }
      }
      if (spatial < 0) {
        cfg.push_back(IntTuple({0, 0, 0}));
        continue;
      }
      cfg.push_back(DimsParam(
          {(*symbolic_pad)[2 * spatial], (*symbolic_pad)[2 * spatial + 1],
           jaxpr::DimExpr::Constant(lhs_dil[spatial] - 1)}));
      padded_aval.shape[d] = jaxpr::DimExpr::Symbol(kUnknownDim);
    }
    Params pp;
    pp.Set("padding_config", ParamValue::Tuple(std::move(cfg)));
    lhs = ctx.Emit1("pad", std::move(pp), {lhs, ctx.Scalar(lhs.aval.dtype, 0)},
                    padded_aval);
    std::fill(lhs_dil.begin(), lhs_dil.end(), 1);
    std::fill(pad.begin(), pad.end(), 0);
  }
  if (pad.size() != static_cast<size_t>(2 * nsp)) return ctx.Error("padding needs (low, high) per spatial dim");
  std::vector<std::pair<int64_t, int64_t>> padding;
  for (int i = 0; i < nsp; ++i) padding.emplace_back(pad[2 * i], pad[2 * i + 1]);
  int64_t fgc = 1, bgc = 1;
  if (op.Attr("feature_group_count")) { J2O_ASSIGN_OR_RETURN(fgc, ctx.IntAttr("feature_group_count")); }
  if (op.Attr("batch_group_count")) { J2O_ASSIGN_OR_RETURN(bgc, ctx.IntAttr("batch_group_count")); }
  if (lhs.aval.dtype != rhs.aval.dtype) {
    lhs = ConvertTo(ctx, lhs, out.dtype);
    rhs = ConvertTo(ctx, rhs, out.dtype);
  }
  Params p;
  p.Set("batch_group_count", ParamValue::Int(bgc));
  p.Set("dimension_numbers",
        ParamValue::Call("ConvDimensionNumbers", {{"lhs_spec", IntTuple(lhs_spec)},
                                                  {"rhs_spec", IntTuple(rhs_spec)},
                                                  {"out_spec", IntTuple(out_spec)}}));
  p.Set("feature_group_count", ParamValue::Int(fgc));
  p.Set("lhs_dilation", IntTuple(lhs_dil));
  p.Set("out_sharding", ParamValue::None());
  p.Set("padding", PairTuple(padding));
  p.Set("precision", ParamValue::None());
  p.Set("preferred_element_type",
        out.dtype == lhs.aval.dtype ? ParamValue::None() : NumpyDType(out.dtype));
  p.Set("rhs_dilation", IntTuple(rhs_dil));
  p.Set("window_strides", IntTuple(strides));
  ctx.Bind(0, ctx.Emit1("conv_general_dilated", std::move(p), {lhs, rhs}, out));
  return absl::OkStatus();
}

absl::Status Convolution(OpContext& ctx) { return ConvolutionWith(ctx, nullptr); }

// dynamic_conv is convolution: with a constant padding operand directly;
// with padding computed from symbolic dims (jax.export of a strided 'SAME'
// convolution over symbolic spatial dims: floordiv/mod of dimension values,
// translate_symbolic.cc) as a pad of lhs before it.
absl::Status DynamicConv(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val pv, ctx.Input(2));
  auto a = ctx.ConstValue(pv);
  if (!a.has_value()) {
    J2O_ASSIGN_OR_RETURN(std::vector<jaxpr::DimExpr> pad,
                         DimOperand(ctx, 2, "padding"));
    return ConvolutionWith(ctx, nullptr, &pad);
  }
  std::vector<int64_t> pad;
  for (int64_t i = 0; i < a->num_elements(); ++i) pad.push_back(a->GetAsInt64(i));
  return ConvolutionWith(ctx, &pad);
}

}  // namespace

void RegisterDotConvOps(TranslatorTable& table) {
  table["stablehlo.dot_general"] = &DotGeneral;
  table["chlo.ragged_dot"] = &RaggedDot;
  table["stablehlo.dot"] = &DotGeneral;
  table["stablehlo.convolution"] = &Convolution;
  table["stablehlo.dynamic_conv"] = &DynamicConv;
}

}  // namespace jax2onnx::stablehlo
