#include "jaxpr/narrow_dtype.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "glog/logging.h"

namespace jax2onnx::jaxpr {
namespace {

using S = NarrowSpecials;

// The ONNX element types (onnx.proto TensorProto.DataType) and the opsets
// that first accept them: FLOAT8* arrived with ONNX 1.14 (opset 19), INT4/
// UINT4 with 1.16 (opset 21), FLOAT4E2M1 with 1.18 (opset 23), FLOAT8E8M0
// with 1.19 (opset 24), INT2/UINT2 with 1.20 (opset 25). ONNX has no f8_e4m3,
// f8_e3m4, f8_e4m3b11fnuz or f6 type.
constexpr std::array<NarrowFormatInfo, 15> kFormats = {{
    {NarrowFormat::kF8E4M3FN, "f8_e4m3fn", "float8_e4m3fn", 8, true, true, 4,
     3, 7, S::kFiniteAllOnesNan, "FLOAT8E4M3FN", 17, 19},
    {NarrowFormat::kF8E5M2, "f8_e5m2", "float8_e5m2", 8, true, true, 5, 2, 15,
     S::kIeee, "FLOAT8E5M2", 19, 19},
    {NarrowFormat::kF8E4M3FNUZ, "f8_e4m3fnuz", "float8_e4m3fnuz", 8, true,
     true, 4, 3, 8, S::kFiniteNegativeZeroNan, "FLOAT8E4M3FNUZ", 18, 19},
    {NarrowFormat::kF8E5M2FNUZ, "f8_e5m2fnuz", "float8_e5m2fnuz", 8, true,
     true, 5, 2, 16, S::kFiniteNegativeZeroNan, "FLOAT8E5M2FNUZ", 20, 19},
    {NarrowFormat::kF8E8M0FNU, "f8_e8m0fnu", "float8_e8m0fnu", 8, true, false,
     8, 0, 127, S::kUnsignedNoZero, "FLOAT8E8M0", 24, 24},
    {NarrowFormat::kF4E2M1FN, "f4_e2m1fn", "float4_e2m1fn", 4, true, true, 2,
     1, 1, S::kAllFinite, "FLOAT4E2M1", 23, 23},
    {NarrowFormat::kF8E4M3, "f8_e4m3", "float8_e4m3", 8, true, true, 4, 3, 7,
     S::kIeee, "", 0, 0},
    {NarrowFormat::kF8E3M4, "f8_e3m4", "float8_e3m4", 8, true, true, 3, 4, 3,
     S::kIeee, "", 0, 0},
    {NarrowFormat::kF8E4M3B11FNUZ, "f8_e4m3b11fnuz", "float8_e4m3b11fnuz", 8,
     true, true, 4, 3, 11, S::kFiniteNegativeZeroNan, "", 0, 0},
    {NarrowFormat::kF6E2M3FN, "f6_e2m3fn", "float6_e2m3fn", 6, true, true, 2,
     3, 1, S::kAllFinite, "", 0, 0},
    {NarrowFormat::kF6E3M2FN, "f6_e3m2fn", "float6_e3m2fn", 6, true, true, 3,
     2, 3, S::kAllFinite, "", 0, 0},
    {NarrowFormat::kI4, "i4", "int4", 4, false, true, 0, 0, 0, S::kAllFinite,
     "INT4", 22, 21},
    {NarrowFormat::kU4, "u4", "uint4", 4, false, false, 0, 0, 0,
     S::kAllFinite, "UINT4", 21, 21},
    {NarrowFormat::kI2, "i2", "int2", 2, false, true, 0, 0, 0, S::kAllFinite,
     "INT2", 26, 25},
    {NarrowFormat::kU2, "u2", "uint2", 2, false, false, 0, 0, 0,
     S::kAllFinite, "UINT2", 25, 25},
}};

uint8_t LowBits(const NarrowFormatInfo& f, uint8_t code) {
  return f.bits == 8 ? code : static_cast<uint8_t>(code & ((1u << f.bits) - 1));
}

uint8_t SignBit(const NarrowFormatInfo& f) {
  return static_cast<uint8_t>(1u << (f.bits - 1));
}

// The code ml_dtypes' unary minus gives.
uint8_t Negate(const NarrowFormatInfo& f, uint8_t code) {
  switch (f.specials) {
    case S::kUnsignedNoZero:
      return 0xFF;  // no negative numbers: NaN
    case S::kFiniteNegativeZeroNan:
      if ((code & 0x7F) == 0) return code;  // +0 and the NaN stay
      return code ^ 0x80;
    default:
      return code ^ SignBit(f);
  }
}

uint8_t QuietNan(const NarrowFormatInfo& f) {
  switch (f.specials) {
    case S::kIeee:  // exponent all ones, first mantissa bit set
      return static_cast<uint8_t>(((1u << f.exponent_bits) - 1)
                                      << f.mantissa_bits |
                                  (1u << (f.mantissa_bits - 1)));
    case S::kFiniteAllOnesNan:
      return 0x7F;
    case S::kFiniteNegativeZeroNan:
      return 0x80;
    case S::kUnsignedNoZero:
      return 0xFF;
    case S::kAllFinite:
      return SignBit(f);  // ml_dtypes: -0 stands in for NaN
  }
  return 0;
}

// ml_dtypes' infinity(): the NaN where there is no infinity, the largest
// finite value for the all-finite formats.
uint8_t Infinity(const NarrowFormatInfo& f) {
  switch (f.specials) {
    case S::kIeee:
      return static_cast<uint8_t>(((1u << f.exponent_bits) - 1)
                                  << f.mantissa_bits);
    case S::kAllFinite:
      return static_cast<uint8_t>(SignBit(f) - 1);
    default:
      return QuietNan(f);
  }
}

// The largest finite code (positive).
uint8_t MaxFiniteCode(const NarrowFormatInfo& f) {
  switch (f.specials) {
    case S::kIeee:
      return static_cast<uint8_t>(Infinity(f) - 1);
    case S::kFiniteAllOnesNan:
      return 0x7E;
    case S::kFiniteNegativeZeroNan:
      return 0x7F;
    case S::kUnsignedNoZero:
      return 0xFE;
    case S::kAllFinite:
      return static_cast<uint8_t>(SignBit(f) - 1);
  }
  return 0;
}

}  // namespace

absl::Span<const NarrowFormatInfo> AllNarrowFormats() { return kFormats; }

const NarrowFormatInfo& Info(NarrowFormat format) {
  for (const NarrowFormatInfo& f : kFormats) {
    if (f.format == format) return f;
  }
  LOG(FATAL) << "unknown narrow format " << static_cast<int>(format);
}

const NarrowFormatInfo* FindNarrowFormat(absl::string_view name) {
  for (const NarrowFormatInfo& f : kFormats) {
    if (f.short_name == name || f.numpy_name == name) return &f;
  }
  return nullptr;
}

double NarrowFloatToDouble(NarrowFormat format, uint8_t code) {
  const NarrowFormatInfo& f = Info(format);
  CHECK(f.is_float) << f.short_name;
  code = LowBits(f, code);
  const int m = f.mantissa_bits;
  if (f.specials == S::kUnsignedNoZero) {
    if (code == 0xFF) return std::numeric_limits<double>::quiet_NaN();
    return std::ldexp(1.0, code - f.exponent_bias);
  }
  const bool negative = (code & SignBit(f)) != 0;
  const uint8_t magnitude = code & static_cast<uint8_t>(SignBit(f) - 1);
  const int exponent_field = magnitude >> m;
  const int mantissa = magnitude & ((1 << m) - 1);
  const int all_ones = (1 << f.exponent_bits) - 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f.specials) {
    case S::kIeee:
      if (exponent_field == all_ones) {
        if (mantissa != 0) return nan;
        return negative ? -HUGE_VAL : HUGE_VAL;
      }
      break;
    case S::kFiniteAllOnesNan:
      if (magnitude == 0x7F) return nan;
      break;
    case S::kFiniteNegativeZeroNan:
      if (code == 0x80) return nan;
      break;
    default:
      break;
  }
  const double value =
      exponent_field == 0
          ? std::ldexp(mantissa, 1 - f.exponent_bias - m)
          : std::ldexp((1 << m) + mantissa, exponent_field - f.exponent_bias - m);
  return negative ? -value : value;
}

uint8_t NarrowFloatFromDouble(NarrowFormat format, double value) {
  const NarrowFormatInfo& f = Info(format);
  CHECK(f.is_float) << f.short_name;
  const bool negative = std::signbit(value);
  auto with_sign = [&](uint8_t code) {
    return negative ? Negate(f, code) : code;
  };
  if (std::isnan(value)) return with_sign(QuietNan(f));
  if (std::isinf(value)) return with_sign(Infinity(f));
  const double a = std::fabs(value);
  const int m = f.mantissa_bits;
  if (f.specials == S::kUnsignedNoZero) {
    // No zero and no sign: zero and negatives are NaN. ml_dtypes packs the
    // exponent with the implicit bit as the rounding digit, so halfway
    // values round up, and values below 2^-126 (the binade under code 1)
    // land on code 1 when above 2^-127 and on code 0 otherwise.
    if (a == 0.0 || negative) return 0xFF;
    int e2 = 0;
    const double fraction = std::frexp(a, &e2);  // a = fraction * 2^e2
    const int e = e2 - 1;                        // a in [2^e, 2^(e+1))
    if (e < 1 - f.exponent_bias) {  // a < 2^-126
      return a > std::ldexp(1.0, -f.exponent_bias) ? 1 : 0;
    }
    const int code = e + f.exponent_bias + (fraction >= 0.75 ? 1 : 0);
    return code > MaxFiniteCode(f) ? 0xFF : static_cast<uint8_t>(code);
  }
  if (a == 0.0) return with_sign(0);
  // Round |value| to the format's grid: the quantum is 2^(e - m) in the
  // binade [2^e, 2^(e+1)), and 2^(emin - m) for the subnormals.
  const int emin = 1 - f.exponent_bias;
  int e2 = 0;
  std::frexp(a, &e2);
  const int e = std::max(e2 - 1, emin);
  // Scaling by a power of two is exact; nearbyint rounds half to even in
  // the default rounding mode.
  const double steps = std::nearbyint(std::ldexp(a, m - e));
  const double rounded = std::ldexp(steps, e - m);
  const double max_finite = NarrowFloatToDouble(format, MaxFiniteCode(f));
  if (rounded > max_finite) return with_sign(Infinity(f));
  uint8_t magnitude;
  if (rounded < std::ldexp(1.0, emin)) {
    magnitude = static_cast<uint8_t>(steps);  // subnormal (or zero)
  } else {
    int r2 = 0;
    std::frexp(rounded, &r2);
    const int re = r2 - 1;
    const int mantissa =
        static_cast<int>(std::ldexp(rounded, m - re)) - (1 << m);
    magnitude = static_cast<uint8_t>((re + f.exponent_bias) << m | mantissa);
  }
  return with_sign(magnitude);
}

int64_t NarrowIntValue(NarrowFormat format, uint8_t code) {
  const NarrowFormatInfo& f = Info(format);
  CHECK(!f.is_float) << f.short_name;
  const int64_t low = LowBits(f, code);
  if (f.is_signed && (low & SignBit(f)) != 0) return low - (int64_t{1} << f.bits);
  return low;
}

uint8_t NarrowIntFromInt64(NarrowFormat format, int64_t value) {
  const NarrowFormatInfo& f = Info(format);
  CHECK(!f.is_float) << f.short_name;
  return static_cast<uint8_t>(static_cast<uint64_t>(value) &
                              ((uint64_t{1} << f.bits) - 1));
}

int64_t NarrowIntMin(NarrowFormat format) {
  const NarrowFormatInfo& f = Info(format);
  return f.is_signed ? -(int64_t{1} << (f.bits - 1)) : 0;
}

int64_t NarrowIntMax(NarrowFormat format) {
  const NarrowFormatInfo& f = Info(format);
  return f.is_signed ? (int64_t{1} << (f.bits - 1)) - 1
                     : (int64_t{1} << f.bits) - 1;
}

std::optional<NarrowFormat> NarrowFormatOf(DType dtype) {
  const int index = static_cast<int>(dtype) - kNarrowDTypeBase;
  if (index < 0 || index >= static_cast<int>(kFormats.size())) {
    return std::nullopt;
  }
  return static_cast<NarrowFormat>(index);
}

bool IsNarrowFloat(DType dtype) {
  const std::optional<NarrowFormat> format = NarrowFormatOf(dtype);
  return format.has_value() && Info(*format).is_float;
}

bool IsNarrowInt(DType dtype) {
  const std::optional<NarrowFormat> format = NarrowFormatOf(dtype);
  return format.has_value() && !Info(*format).is_float;
}

double NarrowDecode(DType dtype, uint8_t code) {
  const NarrowFormat format = *NarrowFormatOf(dtype);
  if (Info(format).is_float) return NarrowFloatToDouble(format, code);
  return static_cast<double>(NarrowIntValue(format, code));
}

uint8_t NarrowEncode(DType dtype, double value) {
  const NarrowFormat format = *NarrowFormatOf(dtype);
  if (Info(format).is_float) return NarrowFloatFromDouble(format, value);
  if (!std::isfinite(value)) return 0;
  // Past +-2^62 only the low bits matter and they are zero.
  if (std::fabs(value) >= 0x1p62) return 0;
  return NarrowIntFromInt64(format, static_cast<int64_t>(value));
}

}  // namespace jax2onnx::jaxpr
