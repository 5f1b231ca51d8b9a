// Elementwise ops: arithmetic, logic, math functions, compare, select,
// clamp, convert, bitcast_convert, reduce_precision, rounding, complex parts.
#include <cstring>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/reduce_precision.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

// stablehlo op -> lax primitive with the same operands and result type.
const std::pair<const char*, const char*> kSameShape[] = {
    {"stablehlo.add", "add"},
    {"stablehlo.subtract", "sub"},
    {"stablehlo.multiply", "mul"},
    {"stablehlo.divide", "div"},
    {"stablehlo.remainder", "rem"},
    {"stablehlo.maximum", "max"},
    {"stablehlo.minimum", "min"},
    {"stablehlo.power", "pow"},
    {"stablehlo.atan2", "atan2"},
    {"stablehlo.and", "and"},
    {"stablehlo.or", "or"},
    {"stablehlo.xor", "xor"},
    {"stablehlo.shift_left", "shift_left"},
    {"stablehlo.shift_right_arithmetic", "shift_right_arithmetic"},
    {"stablehlo.shift_right_logical", "shift_right_logical"},
    {"stablehlo.abs", "abs"},
    {"stablehlo.negate", "neg"},
    {"stablehlo.exponential", "exp"},
    {"stablehlo.exponential_minus_one", "expm1"},
    {"stablehlo.log", "log"},
    {"stablehlo.log_plus_one", "log1p"},
    {"stablehlo.logistic", "logistic"},
    {"stablehlo.sqrt", "sqrt"},
    {"stablehlo.rsqrt", "rsqrt"},
    {"stablehlo.cbrt", "cbrt"},
    {"stablehlo.sine", "sin"},
    {"stablehlo.cosine", "cos"},
    {"stablehlo.tan", "tan"},
    {"stablehlo.tanh", "tanh"},
    {"stablehlo.floor", "floor"},
    {"stablehlo.ceil", "ceil"},
    {"stablehlo.sign", "sign"},
    {"stablehlo.not", "not"},
    {"stablehlo.popcnt", "population_count"},
    {"stablehlo.count_leading_zeros", "clz"},
    {"stablehlo.is_finite", "is_finite"},
    {"stablehlo.real", "real"},
    {"stablehlo.imag", "imag"},
    {"stablehlo.complex", "complex"},
    {"stablehlo.optimization_barrier", ""},
};

// StableHLO defines atan2 and cbrt on complex values too; lax's are
// real-only, so they are built from complex primitives with StableHLO's
// reference formulas:
//   atan2(y, x) = -i * log((x + i*y) / sqrt(x*x + y*y))
//   cbrt(z)     = exp(log(z) / 3)   (the principal cube root)
// Multiplying by +-i and dividing by the real 3 go through the parts
// (real/imag), which is exact.
Val ComplexPart(OpContext& ctx, const char* part, const Val& z) {
  const DType real = z.aval.dtype == DType::kC64 ? DType::kF32 : DType::kF64;
  return ctx.Emit1(part, {}, {z}, WithDType(z.aval, real));
}

Val ComplexAtan2(OpContext& ctx, const Val& y, const Val& x) {
  const Aval& c = x.aval;
  Val y_re = ComplexPart(ctx, "real", y), y_im = ComplexPart(ctx, "imag", y);
  Val neg_y_im = ctx.Emit1("neg", {}, {y_im}, y_im.aval);
  Val iy = ctx.Emit1("complex", {}, {neg_y_im, y_re}, c);
  Val num = ctx.Emit1("add", {}, {x, iy}, c);
  Val xx = ctx.Emit1("mul", {}, {x, x}, c);
  Val yy = ctx.Emit1("mul", {}, {y, y}, c);
  Val den = ctx.Emit1("sqrt", {}, {ctx.Emit1("add", {}, {xx, yy}, c)}, c);
  Val w = ctx.Emit1("log", {}, {ctx.Emit1("div", {}, {num, den}, c)}, c);
  Val w_re = ComplexPart(ctx, "real", w), w_im = ComplexPart(ctx, "imag", w);
  Val neg_w_re = ctx.Emit1("neg", {}, {w_re}, w_re.aval);
  return ctx.Emit1("complex", {}, {w_im, neg_w_re}, c);
}

Val ComplexCbrt(OpContext& ctx, const Val& z) {
  const Aval& c = z.aval;
  Val l = ctx.Emit1("log", {}, {z}, c);
  Val re = ComplexPart(ctx, "real", l), im = ComplexPart(ctx, "imag", l);
  Val three = ctx.Scalar(re.aval.dtype, 3.0);
  Val re3 = ctx.Emit1("div", {}, {re, three}, re.aval);
  Val im3 = ctx.Emit1("div", {}, {im, three}, im.aval);
  return ctx.Emit1("exp", {}, {ctx.Emit1("complex", {}, {re3, im3}, c)}, c);
}

const char* PrimitiveFor(absl::string_view op) {
  for (const auto& [name, prim] : kSameShape) {
    if (op == name) return prim;
  }
  return nullptr;
}

absl::Status Simple(OpContext& ctx) {
  std::string prim = PrimitiveFor(ctx.op().name);
  std::vector<Val> ins;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(i));
    ins.push_back(v);
  }
  if (ins.empty()) return ctx.Error("expects operands");
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  const DType d = ins[0].aval.dtype;
  // Bool arithmetic is logic in StableHLO (i1 is a 1-bit integer, wrapping).
  if (d == DType::kBool) {
    if (prim == "add" || prim == "max") prim = "or";
    else if (prim == "mul" || prim == "min") prim = "and";
    else if (prim == "sub") prim = "xor";
  }
  if ((prim == "real" || prim == "imag") && !jaxpr::IsComplex(d)) {
    // StableHLO allows real/imag of real values: x and zeros.
    if (prim == "real") {
      ctx.Bind(0, ins[0]);
      return absl::OkStatus();
    }
    ctx.Bind(0, EmitBroadcastInDim(ctx, ctx.Scalar(d, 0), {}, out));
    return absl::OkStatus();
  }
  if (prim == "atan2" && jaxpr::IsComplex(d)) {
    ctx.Bind(0, ComplexAtan2(ctx, ins[0], ins[1]));
    return absl::OkStatus();
  }
  if (prim == "cbrt" && jaxpr::IsComplex(d)) {
    ctx.Bind(0, ComplexCbrt(ctx, ins[0]));
    return absl::OkStatus();
  }
  Params params;
  ctx.Bind(0, ctx.Emit1(prim, std::move(params), ins, out));
  return absl::OkStatus();
}

absl::Status Round(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  Params p;
  p.Set("rounding_method",
        ParamValue::Int(ctx.op().name == "stablehlo.round_nearest_afz" ? 0 : 1));
  ctx.Bind(0, ctx.Emit1("round", std::move(p), {x}, x.aval));
  return absl::OkStatus();
}

absl::Status OptimizationBarrier(OpContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(i));
    ctx.Bind(i, v);
  }
  return absl::OkStatus();
}

// Total order of floats as a signed integer key of the same width:
// negative values have their magnitude bits flipped (-NaN < -inf < ... <
// -0 < +0 < ... < inf < NaN), exactly as XLA's TOTALORDER compare.
absl::StatusOr<Val> TotalOrderKey(OpContext& ctx, const Val& x) {
  DType d = x.aval.dtype;
  DType key = d == DType::kF64 ? DType::kI64
              : d == DType::kF32 ? DType::kI32
                                 : DType::kI16;
  int bits = jaxpr::ItemSize(d) * 8;
  Params bp;
  bp.Set("new_dtype", NumpyDType(key));
  Val k = ctx.Emit1("bitcast_convert_type", std::move(bp), {x},
                    WithDType(x.aval, key));
  Val sign = ctx.Emit1("shift_right_arithmetic", {},
                       {k, ctx.ScalarInt(key, bits - 1)}, k.aval);
  int64_t max_mag = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  Val mask = ctx.Emit1("and", {}, {sign, ctx.ScalarInt(key, max_mag)}, k.aval);
  return ctx.Emit1("xor", {}, {k, mask}, k.aval);
}

absl::Status Compare(OpContext& ctx) {
  const Operation& op = ctx.op();
  std::string dir;
  std::string type;
  for (absl::string_view w : op.words) {
    if (w == "EQ" || w == "NE" || w == "LT" || w == "LE" || w == "GT" ||
        w == "GE") {
      dir = std::string(w);
    } else if (w == "FLOAT" || w == "TOTALORDER" || w == "SIGNED" ||
               w == "UNSIGNED" || w == "NOTYPE") {
      type = std::string(w);
    }
  }
  if (auto a = op.Attr("comparison_direction")) {
    for (const char* d : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      if (absl::StrContains(*a, absl::StrCat(" ", d, ">"))) dir = d;
    }
  }
  if (auto a = op.Attr("compare_type")) {
    for (const char* t : {"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED", "NOTYPE"}) {
      if (absl::StrContains(*a, absl::StrCat(" ", t, ">"))) type = t;
    }
  }
  if (dir.empty()) return ctx.Error("missing comparison direction");
  J2O_ASSIGN_OR_RETURN(Val a, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Val b, ctx.Input(1));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  DType d = a.aval.dtype;
  if (jaxpr::IsComplex(d) && dir != "EQ" && dir != "NE") {
    return ctx.Unsupported("ordered comparison of complex values");
  }
  if (type == "TOTALORDER" && jaxpr::IsFloat(d)) {
    J2O_ASSIGN_OR_RETURN(a, TotalOrderKey(ctx, a));
    J2O_ASSIGN_OR_RETURN(b, TotalOrderKey(ctx, b));
  }
  std::string prim = dir == "EQ" ? "eq" : dir == "NE" ? "ne" : dir == "LT" ? "lt"
                   : dir == "LE" ? "le" : dir == "GT" ? "gt" : "ge";
  ctx.Bind(0, ctx.Emit1(prim, {}, {a, b}, out));
  return absl::OkStatus();
}

absl::Status Select(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val p, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Val t, ctx.Input(1));
  J2O_ASSIGN_OR_RETURN(Val f, ctx.Input(2));
  if (p.aval.rank() == 0 && t.aval.rank() > 0) {
    p = EmitBroadcastInDim(ctx, p, {}, WithDType(t.aval, DType::kBool));
  }
  ctx.Bind(0, ctx.Emit1("select_n", {}, {p, f, t}, t.aval));
  return absl::OkStatus();
}

absl::Status Clamp(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val lo, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(1));
  J2O_ASSIGN_OR_RETURN(Val hi, ctx.Input(2));
  ctx.Bind(0, ctx.Emit1("clamp", {}, {lo, x, hi}, x.aval));
  return absl::OkStatus();
}

absl::Status Convert(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  if (jaxpr::IsComplex(x.aval.dtype) && !jaxpr::IsComplex(out.dtype)) {
    // StableHLO keeps the real part.
    x = ctx.Emit1("real", {}, {x},
                  WithDType(x.aval, x.aval.dtype == DType::kC64 ? DType::kF32
                                                                : DType::kF64));
  }
  if (x.aval.dtype == out.dtype) {
    ctx.Bind(0, x);
    return absl::OkStatus();
  }
  Params p;
  p.Set("new_dtype", NumpyDType(out.dtype));
  p.Set("sharding", ParamValue::None());
  p.Set("weak_type", ParamValue::Bool(false));
  ctx.Bind(0, ctx.Emit1("convert_element_type", std::move(p), {x}, out));
  return absl::OkStatus();
}

DType UnsignedOfBits(int bits) {
  switch (bits) {
    case 8: return DType::kU8;
    case 16: return DType::kU16;
    case 32: return DType::kU32;
    default: return DType::kU64;
  }
}

Val EmitBitcast(OpContext& ctx, const Val& x, DType to) {
  if (x.aval.dtype == to) return x;
  Params p;
  p.Set("new_dtype", NumpyDType(to));
  return ctx.Emit1("bitcast_convert_type", std::move(p), {x},
                   WithDType(x.aval, to));
}

// Bit i of the element along the last axis, i = 0 the least significant.
Val BitPositions(OpContext& ctx, DType u, const std::vector<int64_t>& dims) {
  return EmitIota(ctx, ShapedAval(u, dims),
                  static_cast<int64_t>(dims.size()) - 1);
}

// bitcast_convert between i1 tensors and wider types: StableHLO packs a
// trailing axis of W booleans into one W-bit element, element 0 the least
// significant bit. lax's bitcast_convert_type has no 1-bit type, so the
// bits are shifted into (out of) an unsigned integer of W bits.
absl::StatusOr<Val> BitcastFromBool(OpContext& ctx, const Val& x,
                                    const Aval& out) {
  std::vector<int64_t> dims = StaticDims(x.aval);
  const int bits = dims.empty() ? 0 : static_cast<int>(dims.back());
  if (bits != 8 * jaxpr::ItemSize(out.dtype) || bits < 8) {
    return ctx.Error("i1 bitcast needs a trailing axis of the result's bit width");
  }
  const DType u = UnsignedOfBits(bits);
  Val wide = ConvertTo(ctx, x, u);
  Val shifted = ctx.Emit1("shift_left", {}, {wide, BitPositions(ctx, u, dims)},
                          wide.aval);
  // Or the halves of the last axis together until one element is left
  // (exact on every integer type, unlike a u64 sum in the runtime).
  const int64_t last = static_cast<int64_t>(dims.size()) - 1;
  Val packed = shifted;
  for (int64_t width = bits; width > 1; width /= 2) {
    std::vector<Val> halves;
    std::vector<int64_t> half_dims = dims;
    half_dims[last] = width / 2;
    for (int64_t h = 0; h < 2; ++h) {
      std::vector<int64_t> start(dims.size(), 0), limit = half_dims;
      start[last] = h * width / 2;
      limit[last] = (h + 1) * width / 2;
      Params sp;
      sp.Set("limit_indices", IntTuple(limit));
      sp.Set("start_indices", IntTuple(start));
      sp.Set("strides", ParamValue::None());
      halves.push_back(ctx.Emit1("slice", std::move(sp), {packed},
                                 ShapedAval(u, half_dims)));
    }
    packed = ctx.Emit1("or", {}, {halves[0], halves[1]}, halves[0].aval);
  }
  return EmitBitcast(ctx, EmitReshape(ctx, packed, WithDType(out, u)),
                     out.dtype);
}

absl::StatusOr<Val> BitcastToBool(OpContext& ctx, const Val& x,
                                  const Aval& out) {
  std::vector<int64_t> dims = StaticDims(out);
  const int bits = dims.empty() ? 0 : static_cast<int>(dims.back());
  if (bits != 8 * jaxpr::ItemSize(x.aval.dtype) || bits < 8) {
    return ctx.Error("i1 bitcast needs a trailing axis of the operand's bit width");
  }
  const DType u = UnsignedOfBits(bits);
  Val word = EmitBitcast(ctx, x, u);
  std::vector<int64_t> lead(dims.begin(), dims.end() - 1);
  std::vector<int64_t> bdims;
  for (size_t i = 0; i < lead.size(); ++i) bdims.push_back(static_cast<int64_t>(i));
  const Aval wide = ShapedAval(u, dims);
  Val b = EmitBroadcastInDim(ctx, word, bdims, wide);
  Val shifted = ctx.Emit1("shift_right_logical", {},
                          {b, BitPositions(ctx, u, dims)}, wide);
  Val bit = ctx.Emit1("and", {}, {shifted, ctx.ScalarInt(u, 1)}, wide);
  return ctx.Emit1("ne", {}, {bit, ctx.ScalarInt(u, 0)}, out);
}

Val ReshapeTo(OpContext& ctx, const Val& x, const std::vector<int64_t>& dims) {
  if (StaticDims(x.aval) == dims) return x;
  return EmitReshape(ctx, x, ShapedAval(x.aval.dtype, dims));
}

// bitcast_convert from or to complex values (lax's bitcast_convert_type
// takes real types only): a complex tensor is laid out as its (re, im)
// parts along a trailing axis, so the bytes are moved as those real parts
// through unsigned integers of the part widths (little-endian pieces along
// the last axis, as XLA), then regrouped into the result's shape.
absl::StatusOr<Val> BitcastComplex(OpContext& ctx, const Val& x,
                                   const Aval& out) {
  const bool from_complex = jaxpr::IsComplex(x.aval.dtype);
  const bool to_complex = jaxpr::IsComplex(out.dtype);
  auto part_dtype = [](DType d) {
    return d == DType::kC64 ? DType::kF32
           : d == DType::kC128 ? DType::kF64 : d;
  };
  const DType src = part_dtype(x.aval.dtype), dst = part_dtype(out.dtype);
  // The source as a flat run of its real parts.
  std::vector<int64_t> src_dims = StaticDims(x.aval);
  int64_t n = 1;
  for (int64_t d : src_dims) n *= d;
  Val flat;
  if (from_complex) {
    std::vector<int64_t> one = src_dims;
    one.push_back(1);
    std::vector<int64_t> bdims;
    for (size_t i = 0; i < src_dims.size(); ++i) bdims.push_back(static_cast<int64_t>(i));
    std::vector<Val> parts;
    for (const char* part : {"real", "imag"}) {
      parts.push_back(EmitBroadcastInDim(ctx, ComplexPart(ctx, part, x), bdims,
                                         ShapedAval(src, one)));
    }
    std::vector<int64_t> two = src_dims;
    two.push_back(2);
    Params cp;
    cp.Set("dimension", ParamValue::Int(static_cast<int64_t>(src_dims.size())));
    Val both = ctx.Emit1("concatenate", std::move(cp), parts, ShapedAval(src, two));
    n *= 2;
    flat = ReshapeTo(ctx, both, {n});
  } else {
    flat = ReshapeTo(ctx, x, {n});
  }
  const int src_bits = 8 * jaxpr::ItemSize(src);
  const int dst_bits = 8 * jaxpr::ItemSize(dst);
  Val bits = EmitBitcast(ctx, flat, UnsignedOfBits(src_bits));
  const DType du = UnsignedOfBits(dst_bits);
  if (src_bits > dst_bits) {
    const int64_t r = src_bits / dst_bits;
    Params p;
    p.Set("new_dtype", NumpyDType(du));
    bits = ctx.Emit1("bitcast_convert_type", std::move(p), {bits},
                     ShapedAval(du, {n, r}));
    n *= r;
    bits = ReshapeTo(ctx, bits, {n});
  } else if (src_bits < dst_bits) {
    const int64_t r = dst_bits / src_bits;
    if (n % r != 0) return ctx.Error("bitcast changes the number of bytes");
    n /= r;
    bits = ReshapeTo(ctx, bits, {n, r});
    Params p;
    p.Set("new_dtype", NumpyDType(du));
    bits = ctx.Emit1("bitcast_convert_type", std::move(p), {bits},
                     ShapedAval(du, {n}));
  }
  std::vector<int64_t> dst_dims = StaticDims(out);
  if (to_complex) dst_dims.push_back(2);
  int64_t m = 1;
  for (int64_t d : dst_dims) m *= d;
  if (m != n) return ctx.Error("bitcast changes the number of bytes");
  Val y = EmitBitcast(ctx, ReshapeTo(ctx, bits, dst_dims), dst);
  if (!to_complex) return y;
  const int64_t rank = static_cast<int64_t>(dst_dims.size());
  std::vector<int64_t> part_dims(dst_dims.begin(), dst_dims.end() - 1);
  std::vector<Val> parts;
  for (int64_t k = 0; k < 2; ++k) {
    std::vector<int64_t> start(rank, 0), limit = dst_dims, strides(rank, 1);
    start.back() = k;
    limit.back() = k + 1;
    std::vector<int64_t> sliced = dst_dims;
    sliced.back() = 1;
    Params sp;
    sp.Set("limit_indices", IntTuple(limit));
    sp.Set("start_indices", IntTuple(start));
    sp.Set("strides", IntTuple(strides));
    Val s1 = ctx.Emit1("slice", std::move(sp), {y}, ShapedAval(dst, sliced));
    parts.push_back(ReshapeTo(ctx, s1, part_dims));
  }
  return ctx.Emit1("complex", {}, {parts[0], parts[1]}, out);
}

absl::Status BitcastConvert(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  if ((x.aval.dtype == DType::kBool) != (out.dtype == DType::kBool)) {
    J2O_ASSIGN_OR_RETURN(Val r, x.aval.dtype == DType::kBool
                                    ? BitcastFromBool(ctx, x, out)
                                    : BitcastToBool(ctx, x, out));
    ctx.Bind(0, r);
    return absl::OkStatus();
  }
  if (jaxpr::IsComplex(x.aval.dtype) || jaxpr::IsComplex(out.dtype)) {
    J2O_ASSIGN_OR_RETURN(Val r, BitcastComplex(ctx, x, out));
    ctx.Bind(0, r);
    return absl::OkStatus();
  }
  Params p;
  p.Set("new_dtype", NumpyDType(out.dtype));
  ctx.Bind(0, ctx.Emit1("bitcast_convert_type", std::move(p), {x}, out));
  return absl::OkStatus();
}

absl::Status ReducePrecision(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  int64_t e = -1, m = -1;
  if (auto f = ctx.op().Attr("format")) {  // e5m10
    absl::string_view s = *f;
    size_t mpos = s.find('m');
    if (s.size() > 1 && s[0] == 'e' && mpos != absl::string_view::npos) {
      if (!absl::SimpleAtoi(s.substr(1, mpos - 1), &e) ||
          !absl::SimpleAtoi(s.substr(mpos + 1), &m)) {
        e = m = -1;
      }
    }
  } else {
    J2O_ASSIGN_OR_RETURN(e, ctx.IntAttr("exponent_bits"));
    J2O_ASSIGN_OR_RETURN(m, ctx.IntAttr("mantissa_bits"));
  }
  if (e < 1 || m < 0) return ctx.Error("bad reduce_precision format");
  // To 0 mantissa bits XLA turns a NaN into an infinity of the NaN's sign,
  // which ONNX below opset 26 cannot read at run time (no BitCast); a
  // constant's sign is known here, so it is folded.
  if (m == 0) {
    if (std::optional<jaxpr::Array> c = ctx.ConstValue(x)) {
      if (std::optional<jaxpr::Array> folded =
              jaxpr::ReducePrecisionArray(*c, e, m)) {
        J2O_ASSIGN_OR_RETURN(Val r, ctx.Constant(*folded));
        ctx.Bind(0, r);
        return absl::OkStatus();
      }
    }
  }
  Params p;
  p.Set("exponent_bits", ParamValue::Int(e));
  p.Set("mantissa_bits", ParamValue::Int(m));
  ctx.Bind(0, ctx.Emit1("reduce_precision", std::move(p), {x}, x.aval));
  return absl::OkStatus();
}

// map over all dimensions with a body of elementwise ops on scalars: the
// body's equations applied to the whole tensors.
absl::Status Map(OpContext& ctx) {
  static const absl::flat_hash_set<std::string>* kElementwise =
      new absl::flat_hash_set<std::string>{
          "add", "sub", "mul", "div", "rem", "max", "min", "pow", "atan2",
          "and", "or", "xor", "not", "neg", "abs", "exp", "expm1", "log",
          "log1p", "logistic", "sqrt", "rsqrt", "cbrt", "sin", "cos", "tan",
          "tanh", "floor", "ceil", "sign", "round", "is_finite", "eq", "ne",
          "lt", "le", "gt", "ge", "select_n", "clamp", "convert_element_type",
          "population_count", "clz", "shift_left", "shift_right_arithmetic",
          "shift_right_logical", "real", "imag", "complex", "nextafter",
          "erf", "erfc", "erf_inv", "lgamma", "digamma", "sinh", "cosh",
          "asin", "acos", "atan", "asinh", "acosh", "atanh"};
  std::vector<Val> ins;
  std::vector<Aval> scalars;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(i));
    ins.push_back(v);
    scalars.push_back(ShapedAval(v.aval.dtype, {}));
  }
  if (ins.empty()) return ctx.Error("expects operands");
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ctx.IntListAttr("dimensions"));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != static_cast<int64_t>(i) || dims.size() != static_cast<size_t>(ins[0].aval.rank())) {
      return ctx.Unsupported("map over a subset of dimensions");
    }
  }
  J2O_ASSIGN_OR_RETURN(RegionJaxpr body, ctx.RegionWithArgs(0, {}, scalars));
  if (!body.captured.empty()) return ctx.Unsupported("map body that uses values from outside it");
  absl::flat_hash_map<const jaxpr::Var*, Val> env;
  for (size_t i = 0; i < ins.size(); ++i) env[body.jaxpr->invars[i]] = ins[i];
  auto value = [&](const Atom& a) -> Val {
    if (a.is_literal()) return Val{a, a.literal->aval.value_or(Aval())};
    return env.at(a.var);
  };
  const std::vector<jaxpr::DimExpr>& shape = ins[0].aval.shape;
  for (const jaxpr::Eqn& e : body.jaxpr->eqns) {
    if (!kElementwise->contains(e.primitive)) {
      return ctx.Unsupported(absl::StrCat("map body with `", e.primitive, "`"));
    }
    std::vector<Val> args;
    for (const Atom& a : e.inputs) args.push_back(value(a));
    std::vector<Aval> outs;
    for (const jaxpr::Var* o : e.outputs) {
      Aval a = o->aval;
      a.shape = shape;
      outs.push_back(a);
    }
    std::vector<Val> rs = ctx.Emit(e.primitive, e.params, args, outs);
    for (size_t k = 0; k < rs.size(); ++k) env[e.outputs[k]] = rs[k];
  }
  if (body.jaxpr->outvars.size() != 1) return ctx.Error("map body must return one value");
  Val r = value(body.jaxpr->outvars[0]);
  if (r.atom.is_literal() || r.aval.rank() != static_cast<int>(shape.size())) {
    return ctx.Unsupported("map body returning a constant or an operand-independent value");
  }
  ctx.Bind(0, r);
  return absl::OkStatus();
}

}  // namespace

void RegisterElementwiseOps(TranslatorTable& table) {
  for (const auto& [name, prim] : kSameShape) {
    if (*prim != '\0') table[name] = &Simple;
  }
  table["stablehlo.optimization_barrier"] = &OptimizationBarrier;
  table["stablehlo.round_nearest_afz"] = &Round;
  table["stablehlo.round_nearest_even"] = &Round;
  table["stablehlo.compare"] = &Compare;
  table["stablehlo.select"] = &Select;
  table["stablehlo.clamp"] = &Clamp;
  table["stablehlo.convert"] = &Convert;
  table["stablehlo.bitcast_convert"] = &BitcastConvert;
  table["stablehlo.reduce_precision"] = &ReducePrecision;
  table["stablehlo.map"] = &Map;
}

}  // namespace jax2onnx::stablehlo
