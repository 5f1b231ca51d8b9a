// Uniform quantized types (`!quant.uniform<i8:f32, 0.1:-30>`, per axis
// `!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>`, storage ranges
// `i8<-127:127>`): a quantized value is carried as its storage integers (what
// `bitcast_convert` to the storage type reads), and StableHLO's semantics
// (spec.md "Quantized element types"; the interpreter's legalization,
// stablehlo/transforms/StablehloLegalizeQuantToMath.cpp) become lax
// primitives:
//   dequantize(q) = convert_f32(convert_i32(q) - zp) * scale
//   quantize(x)   = convert_storage(round_nearest_even(
//                     clamp(storage_min, x / scale + zp, storage_max)))
// (scale and zp per element of the quantization axis for per-axis types),
// uniform_quantize of a quantized value = quantize(dequantize(q)), and every
// other op on quantized operands or results = dequantize the operands, the
// op on the expressed (float) type, quantize the results
// (dequantize_op_quantize). Refused: quantized block arguments (regions),
// quantized constants, expressed types other than f32.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

constexpr absl::string_view kPrefix = "!quant.uniform<";

struct QuantType {
  DType storage;
  int64_t storage_min, storage_max;
  int64_t axis = -1;  // -1: per tensor
  std::vector<double> scales;
  std::vector<int64_t> zero_points;
};

bool IsQuant(const MlirType& t) { return absl::StartsWith(t.element, kPrefix); }

absl::StatusOr<QuantType> ParseQuant(absl::string_view e) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("quantized type ", e, ": ", why));
  };
  if (!absl::StartsWith(e, kPrefix) || !absl::EndsWith(e, ">")) {
    return bad("expects !quant.uniform<...>");
  }
  absl::string_view body =
      e.substr(kPrefix.size(), e.size() - kPrefix.size() - 1);
  const size_t comma = body.find(',');
  if (comma == absl::string_view::npos) return bad("missing scales");
  absl::string_view spec = StripSpace(body.substr(0, comma));
  absl::string_view params = StripSpace(body.substr(comma + 1));
  // storage[<min:max>]:expressed[:axis]
  QuantType q;
  absl::string_view storage = spec;
  std::string range;
  if (size_t lt = spec.find('<'); lt != absl::string_view::npos) {
    const size_t gt = spec.find('>', lt);
    if (gt == absl::string_view::npos) return bad("unterminated storage range");
    storage = spec.substr(0, lt);
    range = std::string(spec.substr(lt + 1, gt - lt - 1));
    spec = spec.substr(gt + 1);
  } else {
    const size_t colon = spec.find(':');
    if (colon == absl::string_view::npos) return bad("missing expressed type");
    storage = spec.substr(0, colon);
    spec = spec.substr(colon);
  }
  // spec is now ":expressed[:axis]".
  std::vector<absl::string_view> rest = SplitTopLevel(spec.substr(1), ':');
  if (rest.empty() || rest[0] != "f32") {
    return bad("only f32 expressed types are supported");
  }
  if (rest.size() == 2 && !absl::SimpleAtoi(rest[1], &q.axis)) {
    return bad("bad quantization dimension");
  }
  auto st = ElementDType(storage);
  if (!st.ok() || !jaxpr::IsInteger(*st) || *st == DType::kU64 ||
      *st == DType::kI64) {
    return bad("storage must be an integer type of at most 32 bits");
  }
  q.storage = *st;
  const int bits = static_cast<int>(jaxpr::ItemSize(q.storage)) * 8;
  if (jaxpr::IsSignedInt(q.storage)) {
    q.storage_min = -(int64_t{1} << (bits - 1));
    q.storage_max = (int64_t{1} << (bits - 1)) - 1;
  } else {
    q.storage_min = 0;
    q.storage_max = (int64_t{1} << bits) - 1;
  }
  if (!range.empty()) {
    const size_t colon = range.find(':', 1);
    if (colon == std::string::npos ||
        !absl::SimpleAtoi(range.substr(0, colon), &q.storage_min) ||
        !absl::SimpleAtoi(range.substr(colon + 1), &q.storage_max)) {
      return bad("bad storage range");
    }
  }
  if (absl::StartsWith(params, "{")) {
    if (!absl::EndsWith(params, "}")) return bad("unterminated scales");
    params = params.substr(1, params.size() - 2);
  }
  for (absl::string_view item : SplitTopLevel(params, ',')) {
    const size_t colon = item.find(':');
    double scale;
    int64_t zp = 0;
    if (!absl::SimpleAtod(item.substr(0, colon), &scale) ||
        (colon != absl::string_view::npos &&
         !absl::SimpleAtoi(item.substr(colon + 1), &zp))) {
      return bad(absl::StrCat("bad scale:zero_point `", item, "`"));
    }
    q.scales.push_back(scale);
    q.zero_points.push_back(zp);
  }
  if (q.scales.empty() || (q.axis < 0 && q.scales.size() != 1)) {
    return bad("expects one scale per tensor or per quantized dimension");
  }
  return q;
}

// Scale and zero point as values broadcastable against `shape`: scalars per
// tensor, a 1-D constant broadcast along the axis per axis.
struct QuantParams {
  Val scale, zero_point_f32, zero_point_i32;
};

absl::StatusOr<QuantParams> QuantParamsFor(OpContext& ctx, const QuantType& q,
                                           const Aval& shape_of) {
  QuantParams p;
  if (q.axis < 0) {
    p.scale = ctx.Scalar(DType::kF32, static_cast<float>(q.scales[0]));
    p.zero_point_f32 = ctx.Scalar(DType::kF32, q.zero_points[0]);
    p.zero_point_i32 = ctx.ScalarInt(DType::kI32, q.zero_points[0]);
    return p;
  }
  const std::vector<int64_t> dims = StaticDims(shape_of);
  if (q.axis >= static_cast<int64_t>(dims.size()) ||
      dims[q.axis] != static_cast<int64_t>(q.scales.size())) {
    return ctx.Error("quantization dimension does not match the scales");
  }
  const int64_t n = static_cast<int64_t>(q.scales.size());
  jaxpr::Array scales(DType::kF32, {n}), zf(DType::kF32, {n}),
      zi(DType::kI32, {n});
  for (int64_t i = 0; i < n; ++i) {
    scales.SetFromDouble(i, static_cast<float>(q.scales[i]));
    zf.SetFromDouble(i, static_cast<double>(q.zero_points[i]));
    zi.SetFromInt64(i, q.zero_points[i]);
  }
  auto along = [&](const jaxpr::Array& a) -> absl::StatusOr<Val> {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Constant(a));
    return EmitBroadcastInDim(ctx, v, {q.axis}, ShapedAval(a.dtype(), dims));
  };
  J2O_ASSIGN_OR_RETURN(p.scale, along(scales));
  J2O_ASSIGN_OR_RETURN(p.zero_point_f32, along(zf));
  J2O_ASSIGN_OR_RETURN(p.zero_point_i32, along(zi));
  return p;
}

absl::StatusOr<Val> Dequantize(OpContext& ctx, const Val& q,
                               const QuantType& t) {
  J2O_ASSIGN_OR_RETURN(QuantParams p, QuantParamsFor(ctx, t, q.aval));
  Val wide = ConvertTo(ctx, q, DType::kI32);
  Val centered = ctx.Emit1("sub", {}, {wide, p.zero_point_i32}, wide.aval);
  Val f = ConvertTo(ctx, centered, DType::kF32);
  return ctx.Emit1("mul", {}, {f, p.scale}, f.aval);
}

absl::StatusOr<Val> Quantize(OpContext& ctx, const Val& x, const QuantType& t) {
  if (x.aval.dtype != DType::kF32) {
    return ctx.Unsupported("quantizing a value that is not f32");
  }
  J2O_ASSIGN_OR_RETURN(QuantParams p, QuantParamsFor(ctx, t, x.aval));
  Val scaled = ctx.Emit1("div", {}, {x, p.scale}, x.aval);
  Val shifted = ctx.Emit1("add", {}, {scaled, p.zero_point_f32}, x.aval);
  Val clamped = ctx.Emit1(
      "clamp", {},
      {ctx.Scalar(DType::kF32, static_cast<double>(t.storage_min)), shifted,
       ctx.Scalar(DType::kF32, static_cast<double>(t.storage_max))},
      x.aval);
  Params round;
  round.Set("rounding_method", ParamValue::Int(1));  // to nearest even
  Val rounded = ctx.Emit1("round", std::move(round), {clamped}, x.aval);
  return ConvertTo(ctx, rounded, t.storage);
}

// The declared type of operand i (the generic form's input list, or the
// pretty form's one type).
const MlirType* OperandType(const Operation& op, int i) {
  if (op.has_arrow) {
    return i < static_cast<int>(op.input_types.size()) ? &op.input_types[i]
                                                       : nullptr;
  }
  if (op.plain_types.size() == op.operands.size()) return &op.plain_types[i];
  if (op.plain_types.size() == 1) return &op.plain_types[0];
  return nullptr;
}

const MlirType* ResultTypeOf(const Operation& op, int i) {
  const std::vector<MlirType>& types =
      op.has_arrow ? op.result_types : op.plain_types;
  if (types.size() == op.results.size()) return &types[i];
  if (!types.empty() && op.results.size() == 1) return &types.back();
  return nullptr;
}

}  // namespace

bool MentionsQuantizedType(const Operation& op) {
  for (const auto* types :
       {&op.input_types, &op.result_types, &op.plain_types}) {
    for (const MlirType& t : *types) {
      if (IsQuant(t)) return true;
    }
  }
  return false;
}

absl::Status TranslateQuantized(
    OpContext& ctx,
    const std::function<absl::Status(const Operation&)>& translate) {
  const Operation& op = ctx.op();
  auto quant_of =
      [&](const MlirType* t) -> absl::StatusOr<std::optional<QuantType>> {
    if (t == nullptr || !IsQuant(*t)) return std::optional<QuantType>();
    auto q = ParseQuant(t->element);
    if (!q.ok()) return ctx.Unsupported(q.status().message());
    return std::optional<QuantType>(*q);
  };
  for (const Region& r : op.regions) {
    for (const Block& b : r.blocks) {
      for (const auto& [name, t] : b.args) {
        if (IsQuant(t)) {
          return ctx.Unsupported("quantized block arguments (regions)");
        }
      }
    }
  }
  if (op.name == "stablehlo.constant") {
    return ctx.Unsupported("quantized constants");
  }
  if (op.results.size() != 1 && op.name != "stablehlo.tuple") {
    // Every result is quantized alike below; ops with several results
    // (sort, while, …) on quantized values are not.
    for (int i = 0; i < static_cast<int>(op.results.size()); ++i) {
      if (const MlirType* t = ResultTypeOf(op, i); t && IsQuant(*t)) {
        return ctx.Unsupported("several results with quantized types");
      }
    }
  }
  if (op.name == "stablehlo.bitcast_convert") {
    J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
    J2O_ASSIGN_OR_RETURN(std::optional<QuantType> in,
                         quant_of(OperandType(op, 0)));
    J2O_ASSIGN_OR_RETURN(std::optional<QuantType> out,
                         quant_of(ResultTypeOf(op, 0)));
    const MlirType* rt = ResultTypeOf(op, 0);
    DType to = DType::kInvalid;
    if (out.has_value()) {
      to = out->storage;
    } else if (rt != nullptr) {
      auto d = ElementDType(rt->element);
      if (d.ok()) to = *d;
    }
    if (x.aval.dtype != to) {
      return ctx.Unsupported(
          "bitcast_convert of a quantized value to or from a type other than "
          "its storage type");
    }
    (void)in;
    ctx.Bind(0, x);  // a quantized value is its storage integers
    return absl::OkStatus();
  }
  if (op.name == "stablehlo.uniform_quantize" ||
      op.name == "stablehlo.uniform_dequantize") {
    J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
    J2O_ASSIGN_OR_RETURN(std::optional<QuantType> in,
                         quant_of(OperandType(op, 0)));
    J2O_ASSIGN_OR_RETURN(std::optional<QuantType> out,
                         quant_of(ResultTypeOf(op, 0)));
    if (in.has_value()) {
      J2O_ASSIGN_OR_RETURN(x, Dequantize(ctx, x, *in));
    }
    if (op.name == "stablehlo.uniform_quantize") {
      if (!out.has_value()) return ctx.Error("expects a quantized result");
      J2O_ASSIGN_OR_RETURN(x, Quantize(ctx, x, *out));
    } else if (!in.has_value() || out.has_value()) {
      return ctx.Error("expects a quantized operand and a float result");
    }
    ctx.Bind(0, x);
    return absl::OkStatus();
  }
  // dequantize_op_quantize: the op on the expressed values.
  Operation copy = op;
  for (int i = 0; i < static_cast<int>(op.operands.size()); ++i) {
    J2O_ASSIGN_OR_RETURN(std::optional<QuantType> q,
                         quant_of(OperandType(op, i)));
    if (!q.has_value()) continue;
    J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(i));
    J2O_ASSIGN_OR_RETURN(Val f, Dequantize(ctx, x, *q));
    std::string name = absl::StrCat(op.operands[i], "$dequantized");
    ctx.scope()->Bind(name, f);
    copy.operands[i] = name;
  }
  std::vector<std::optional<QuantType>> results;
  for (int i = 0; i < static_cast<int>(op.results.size()); ++i) {
    J2O_ASSIGN_OR_RETURN(std::optional<QuantType> q,
                         quant_of(ResultTypeOf(op, i)));
    results.push_back(q);
  }
  for (auto* types :
       {&copy.input_types, &copy.result_types, &copy.plain_types}) {
    for (MlirType& t : *types) {
      if (IsQuant(t)) t.element = "f32";
    }
  }
  J2O_RETURN_IF_ERROR(translate(copy));
  for (int i = 0; i < static_cast<int>(op.results.size()); ++i) {
    if (!results[i].has_value()) continue;
    J2O_ASSIGN_OR_RETURN(Val v, ctx.scope()->Lookup(op.results[i], op.loc));
    J2O_ASSIGN_OR_RETURN(Val q, Quantize(ctx, v, *results[i]));
    ctx.Bind(i, q);
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx::stablehlo
