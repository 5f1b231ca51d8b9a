// Shape ops: constant, iota, broadcast_in_dim, reshape, transpose, reverse,
// slice, concatenate, pad, tuples.
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

// The first attribute present among `keys`, as an int list.
absl::StatusOr<std::vector<int64_t>> IntListOf(
    OpContext& ctx, std::initializer_list<absl::string_view> keys) {
  for (absl::string_view k : keys) {
    if (ctx.op().Attr(k).has_value()) return ctx.IntListAttr(k);
  }
  return ctx.Error(absl::StrCat("missing attribute `", *keys.begin(), "`"));
}
absl::StatusOr<int64_t> IntOf(OpContext& ctx,
                              std::initializer_list<absl::string_view> keys) {
  for (absl::string_view k : keys) {
    if (ctx.op().Attr(k).has_value()) return ctx.IntAttr(k);
  }
  return ctx.Error(absl::StrCat("missing attribute `", *keys.begin(), "`"));
}

absl::Status Constant(OpContext& ctx) {
  const Operation& op = ctx.op();
  J2O_ASSIGN_OR_RETURN(absl::string_view raw, ctx.ConstantLiteral());
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  const MlirType* type = op.has_arrow ? &op.result_types.back()
                                      : &op.plain_types.back();
  auto arr = ParseDense(raw, *type);
  if (!arr.ok()) {
    if (arr.status().code() == absl::StatusCode::kUnimplemented) {
      return ctx.Unsupported(arr.status().message());
    }
    return ctx.Error(arr.status().message());
  }
  (void)out;
  J2O_ASSIGN_OR_RETURN(Val v, ctx.Constant(*arr));
  ctx.Bind(0, v);
  return absl::OkStatus();
}

absl::Status Iota(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  J2O_ASSIGN_OR_RETURN(int64_t dim, IntOf(ctx, {"dim", "iota_dimension"}));
  ctx.Bind(0, EmitIota(ctx, out, dim));
  return absl::OkStatus();
}

absl::Status BroadcastInDim(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                       IntListOf(ctx, {"dims", "broadcast_dimensions"}));
  if (dims.size() != static_cast<size_t>(x.aval.rank())) {
    return ctx.Error("broadcast_dimensions do not match the operand rank");
  }
  // An identity broadcast (same shape, dims in order) is the operand itself;
  // passing it through keeps scalar init values literals.
  bool identity = x.aval.shape == out.shape;
  for (size_t i = 0; identity && i < dims.size(); ++i) identity = dims[i] == static_cast<int64_t>(i);
  if (identity) {
    ctx.Bind(0, x);
    return absl::OkStatus();
  }
  ctx.Bind(0, EmitBroadcastInDim(ctx, x, dims, out));
  return absl::OkStatus();
}

// reshape and dynamic_reshape (whose shape operand the result type states).
absl::Status Reshape(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  ctx.Bind(0, EmitReshape(ctx, x, out));
  return absl::OkStatus();
}

absl::Status Transpose(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> perm,
                       IntListOf(ctx, {"dims", "permutation"}));
  Params p;
  p.Set("permutation", IntTuple(perm));
  ctx.Bind(0, ctx.Emit1("transpose", std::move(p), {x}, out));
  return absl::OkStatus();
}

absl::Status Reverse(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                       IntListOf(ctx, {"dims", "dimensions"}));
  Params p;
  p.Set("dimensions", IntTuple(dims));
  ctx.Bind(0, ctx.Emit1("rev", std::move(p), {x}, x.aval));
  return absl::OkStatus();
}

absl::Status Slice(OpContext& ctx) {
  const Operation& op = ctx.op();
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  std::vector<int64_t> start, limit, strides;
  if (!op.positional.empty()) {  // [0:2, 1:3:1]
    absl::string_view s = op.positional[0];
    s = StripSpace(s.substr(1, s.size() - 2));
    for (absl::string_view part : SplitTopLevel(s, ',')) {
      if (part.empty()) continue;
      std::vector<int64_t> nums;
      size_t pos = 0;
      while (true) {
        size_t colon = part.find(':', pos);
        absl::string_view n = StripSpace(part.substr(pos, colon == absl::string_view::npos ? absl::string_view::npos : colon - pos));
        int64_t v;
        if (!absl::SimpleAtoi(n, &v)) return ctx.Error(absl::StrCat("bad slice bound `", n, "`"));
        nums.push_back(v);
        if (colon == absl::string_view::npos) break;
        pos = colon + 1;
      }
      if (nums.size() < 2) return ctx.Error("slice bounds need start:limit");
      start.push_back(nums[0]);
      limit.push_back(nums[1]);
      strides.push_back(nums.size() > 2 ? nums[2] : 1);
    }
  } else {
    J2O_ASSIGN_OR_RETURN(start, ctx.IntListAttr("start_indices"));
    J2O_ASSIGN_OR_RETURN(limit, ctx.IntListAttr("limit_indices"));
    J2O_ASSIGN_OR_RETURN(strides, ctx.IntListAttr("strides"));
  }
  Params p;
  p.Set("limit_indices", IntTuple(limit));
  p.Set("start_indices", IntTuple(start));
  p.Set("strides", IntTuple(strides));
  ctx.Bind(0, ctx.Emit1("slice", std::move(p), {x}, out));
  return absl::OkStatus();
}

absl::Status Concatenate(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  J2O_ASSIGN_OR_RETURN(int64_t dim, IntOf(ctx, {"dim", "dimension"}));
  std::vector<Val> ins;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(i));
    ins.push_back(v);
  }
  Params p;
  p.Set("dimension", ParamValue::Int(dim));
  ctx.Bind(0, ctx.Emit1("concatenate", std::move(p), ins, out));
  return absl::OkStatus();
}

absl::Status Pad(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(1));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> lo, IntListOf(ctx, {"low", "edge_padding_low"}));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> hi, IntListOf(ctx, {"high", "edge_padding_high"}));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> in, IntListOf(ctx, {"interior", "interior_padding"}));
  if (lo.size() != hi.size() || lo.size() != in.size()) {
    return ctx.Error("padding lists differ in length");
  }
  std::vector<ParamValue> cfg;
  for (size_t i = 0; i < lo.size(); ++i) cfg.push_back(IntTuple({lo[i], hi[i], in[i]}));
  Params p;
  p.Set("padding_config", ParamValue::Tuple(std::move(cfg)));
  ctx.Bind(0, ctx.Emit1("pad", std::move(p), {x, v}, out));
  return absl::OkStatus();
}

}  // namespace

void RegisterShapeOps(TranslatorTable& table) {
  table["stablehlo.constant"] = &Constant;
  table["stablehlo.iota"] = &Iota;
  table["stablehlo.broadcast_in_dim"] = &BroadcastInDim;
  table["stablehlo.reshape"] = &Reshape;
  // The dynamic forms with static result types: their shape operands
  // restate the result type.
  table["stablehlo.dynamic_iota"] = &Iota;
  table["stablehlo.dynamic_broadcast_in_dim"] = &BroadcastInDim;
  table["stablehlo.dynamic_reshape"] = &Reshape;
  table["stablehlo.transpose"] = &Transpose;
  table["stablehlo.reverse"] = &Reverse;
  table["stablehlo.slice"] = &Slice;
  table["stablehlo.concatenate"] = &Concatenate;
  table["stablehlo.pad"] = &Pad;
}

}  // namespace jax2onnx::stablehlo
