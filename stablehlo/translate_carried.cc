// f8E4M3 and f8E3M4 (IEEE-style 8-bit floats: inf and NaN at the all-ones
// exponent, subnormals) have no ONNX element type. The translation carries
// their values in f32, which holds each exactly, and rounds every result of
// one of those types back to the format (round to nearest even, subnormals
// kept, overflow past the largest finite value to +-inf, NaN kept): what XLA
// CPU does with f8 arithmetic it has no kernel for (it computes in f32 and
// converts each result back), and for add, sub, mul, div and sqrt the
// correctly rounded result (f32 has more than 2p+2 bits for p <= 5).
//
// Constants and checked reference values are decoded exactly to f32; program
// inputs of these types are f32 tensors rounded to the format on entry,
// results f32 tensors holding values of the format (docs/stablehlo.md).
// bitcast_convert (bit patterns) and conversions from complex values are
// refused. The FN/FNUZ/f6/f4 formats (no infinity, other overflow rules)
// are not carried: ONNX holds some of them natively (docs/dtypes.md).
#include <cmath>
#include <functional>
#include <optional>

#include "absl/strings/str_cat.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

struct CarriedFloat {
  const char* element;
  jaxpr::NarrowFormat format;
  int exponent_bits;
  int mantissa_bits;
};

constexpr CarriedFloat kCarried[] = {
    {"f8E4M3", jaxpr::NarrowFormat::kF8E4M3, 4, 3},
    {"f8E3M4", jaxpr::NarrowFormat::kF8E3M4, 3, 4},
};

const CarriedFloat* FindByElement(absl::string_view element) {
  for (const CarriedFloat& f : kCarried) {
    if (element == f.element) return &f;
  }
  return nullptr;
}

const CarriedFloat* FindByDType(DType d) {
  std::optional<jaxpr::NarrowFormat> format = jaxpr::NarrowFormatOf(d);
  if (!format.has_value()) return nullptr;
  for (const CarriedFloat& f : kCarried) {
    if (f.format == *format) return &f;
  }
  return nullptr;
}

bool Mentions(const MlirType& t) {
  if (FindByElement(t.element) != nullptr) return true;
  for (const MlirType& e : t.tuple) {
    if (Mentions(e)) return true;
  }
  return false;
}

void Rewrite(MlirType& t) {
  if (FindByElement(t.element) != nullptr) t.element = "f32";
  for (MlirType& e : t.tuple) Rewrite(e);
}

// The declared type of result i (as OpContext::ResultAval picks it).
const MlirType* ResultType(const Operation& op, int i) {
  const std::vector<MlirType>& types =
      op.has_arrow ? op.result_types : op.plain_types;
  if (types.size() == op.results.size()) return &types[i];
  if (!types.empty() && op.results.size() == 1) return &types.back();
  return nullptr;
}

// x (f32 or f64) rounded to the format, as f32: reduce_precision rounds
// normal values and overflows to +-inf exactly, but flushes the format's
// subnormals to zero (XLA's semantics), so below 2^emin the value is
// rounded on the subnormal grid 2^(emin - m) instead (the scalings by
// powers of two are exact).
Val RoundTo(OpContext& ctx, const Val& x, const CarriedFloat& f) {
  const Aval& a = x.aval;
  const DType d = a.dtype;
  const int emin = 2 - (1 << (f.exponent_bits - 1));
  Params rp;
  rp.Set("exponent_bits", ParamValue::Int(f.exponent_bits));
  rp.Set("mantissa_bits", ParamValue::Int(f.mantissa_bits));
  Val normal = ctx.Emit1("reduce_precision", std::move(rp), {x}, a);
  Val up =
      ctx.Emit1("mul", {},
                {x, ctx.Scalar(d, std::ldexp(1.0, f.mantissa_bits - emin))}, a);
  Params round;
  round.Set("rounding_method", ParamValue::Int(1));  // to nearest even
  Val grid = ctx.Emit1("round", std::move(round), {up}, a);
  Val sub = ctx.Emit1(
      "mul", {}, {grid, ctx.Scalar(d, std::ldexp(1.0, emin - f.mantissa_bits))},
      a);
  Val mag = ctx.Emit1("abs", {}, {x}, a);
  Val tiny = ctx.Emit1("lt", {}, {mag, ctx.Scalar(d, std::ldexp(1.0, emin))},
                       WithDType(a, DType::kBool));
  Val r = ctx.Emit1("select_n", {}, {tiny, normal, sub}, a);
  return ConvertTo(ctx, r, DType::kF32);
}

}  // namespace

bool IsCarriedType(const MlirType& type) {
  return FindByElement(type.element) != nullptr;
}

bool MentionsCarriedFloat(const Operation& op) {
  for (const auto* types :
       {&op.input_types, &op.result_types, &op.plain_types}) {
    for (const MlirType& t : *types) {
      if (Mentions(t)) return true;
    }
  }
  for (const Region& r : op.regions) {
    for (const Block& b : r.blocks) {
      for (const auto& [name, t] : b.args) {
        if (Mentions(t)) return true;
      }
    }
  }
  return false;
}

absl::StatusOr<jaxpr::Array> DecodeCarried(const jaxpr::Array& a) {
  if (FindByDType(a.dtype()) == nullptr) return a;
  jaxpr::Array out(DType::kF32, a.shape());
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    out.SetFromDouble(i, jaxpr::NarrowDecode(a.dtype(), a.data()[i]));
  }
  return out;
}

std::optional<Val> RoundIfCarried(OpContext& ctx, const Val& x,
                                  const MlirType& type) {
  const CarriedFloat* f = FindByElement(type.element);
  if (f == nullptr || !x.aval.is_shaped()) return std::nullopt;
  return RoundTo(ctx, x, *f);
}

absl::Status TranslateCarried(
    OpContext& original,
    const std::function<absl::Status(const Operation&)>& translate) {
  const Operation& op = original.op();
  if (op.name == "stablehlo.bitcast_convert") {
    return original.Unsupported(
        "f8E4M3/f8E3M4 values are carried in f32 (ONNX has no such type), "
        "not as their bit patterns");
  }
  if (op.name == "stablehlo.constant") {
    J2O_ASSIGN_OR_RETURN(absl::string_view raw, original.ConstantLiteral());
    const MlirType* type = ResultType(op, 0);
    if (type == nullptr) return original.Error("cannot tell the result type");
    auto arr = ParseDense(raw, *type);
    if (!arr.ok()) return original.Error(arr.status().message());
    J2O_ASSIGN_OR_RETURN(jaxpr::Array f32, DecodeCarried(*arr));
    J2O_ASSIGN_OR_RETURN(Val v, original.Constant(f32));
    original.Bind(0, v);
    return absl::OkStatus();
  }
  if (op.name == "stablehlo.convert" && op.results.size() == 1) {
    const MlirType* type = ResultType(op, 0);
    if (type != nullptr && FindByElement(type->element) != nullptr) {
      J2O_ASSIGN_OR_RETURN(Val x, original.Input(0));
      if (jaxpr::IsComplex(x.aval.dtype)) {
        return original.Unsupported(
            "convert from a complex value to f8E4M3/f8E3M4 (carried in f32)");
      }
      // An f64 value is rounded to the format in f64 (exact), not through
      // f32 (a double rounding); integers and narrower floats convert to
      // f32 first, exactly for every value the format can reach.
      Val src =
          x.aval.dtype == DType::kF64 ? x : ConvertTo(original, x, DType::kF32);
      original.Bind(0, RoundTo(original, src, *FindByElement(type->element)));
      return absl::OkStatus();
    }
  }
  Operation copy = op;
  for (auto* types :
       {&copy.input_types, &copy.result_types, &copy.plain_types}) {
    for (MlirType& t : *types) Rewrite(t);
  }
  for (Region& r : copy.regions) {
    for (Block& b : r.blocks) {
      for (auto& [name, t] : b.args) Rewrite(t);
    }
  }
  J2O_RETURN_IF_ERROR(translate(copy));
  for (int i = 0; i < static_cast<int>(op.results.size()); ++i) {
    const MlirType* type = ResultType(op, i);
    if (type == nullptr || FindByElement(type->element) == nullptr) continue;
    J2O_ASSIGN_OR_RETURN(Val v,
                         original.scope()->Lookup(op.results[i], op.loc));
    original.Bind(i, RoundTo(original, v, *FindByElement(type->element)));
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx::stablehlo
