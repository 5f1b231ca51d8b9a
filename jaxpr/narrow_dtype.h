// JAX's narrow element types (ml_dtypes): the 8-, 6- and 4-bit floats and
// the 4- and 2-bit integers. One element is one byte, as in numpy arrays of
// ml_dtypes types: the value sits in the low `bits` bits and the upper bits
// are ignored on reading (ml_dtypes/include/intn.h, mxfloat.h).
//
// This is the codec the rest of the converter builds on: the names JAX
// prints, the ONNX element type (and the opset that introduced it) or its
// absence, and exact conversions to and from double with ml_dtypes'
// semantics, and the DType value of each format (NarrowDType below); see
// docs/dtypes.md.
#ifndef JAX2ONNX_JAXPR_NARROW_DTYPE_H_
#define JAX2ONNX_JAXPR_NARROW_DTYPE_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "jaxpr/dtype.h"

namespace jax2onnx::jaxpr {

enum class NarrowFormat : uint8_t {
  kF8E4M3FN,
  kF8E5M2,
  kF8E4M3FNUZ,
  kF8E5M2FNUZ,
  kF8E8M0FNU,
  kF4E2M1FN,
  kF8E4M3,
  kF8E3M4,
  kF8E4M3B11FNUZ,
  kF6E2M3FN,
  kF6E3M2FN,
  kI4,
  kU4,
  kI2,
  kU2,
};

// How a float format spends its codes on non-finite values.
enum class NarrowSpecials : uint8_t {
  // IEEE 754 style: all-ones exponent is inf (zero mantissa) or NaN
  // (f8_e5m2, f8_e4m3, f8_e3m4).
  kIeee,
  // "fn": no infinity; only S.1111.111 is NaN (f8_e4m3fn).
  kFiniteAllOnesNan,
  // "fnuz": no infinity, no negative zero; 0x80 is the only NaN.
  kFiniteNegativeZeroNan,
  // "fnu" (f8_e8m0fnu): unsigned, no zero, no infinity; 0xFF is NaN.
  kUnsignedNoZero,
  // MX "fn" (f6_*, f4_*): every code is finite; no NaN, no infinity.
  kAllFinite,
};

struct NarrowFormatInfo {
  NarrowFormat format;
  absl::string_view short_name;  // "f8_e4m3fn", as printed in avals
  absl::string_view numpy_name;  // "float8_e4m3fn", as printed in params
  int bits;                      // 8, 6, 4 or 2
  bool is_float;
  bool is_signed;
  // Floats only.
  int exponent_bits;
  int mantissa_bits;
  int exponent_bias;
  NarrowSpecials specials;
  // The ONNX element type (TensorProto.DataType) and the first opset whose
  // operators accept it; onnx_type 0 where ONNX has none.
  absl::string_view onnx_name;
  int onnx_type;
  int onnx_min_opset;
};

absl::Span<const NarrowFormatInfo> AllNarrowFormats();
const NarrowFormatInfo& Info(NarrowFormat format);
// Either spelling ("f8_e4m3fn" or "float8_e4m3fn", "i4" or "int4"); null
// for every other name.
const NarrowFormatInfo* FindNarrowFormat(absl::string_view name);

// The value of a float code (its low `bits` bits): exact, NaN for the NaN
// codes, +-inf for the infinities.
double NarrowFloatToDouble(NarrowFormat format, uint8_t code);
// ml_dtypes' default conversion of a double (what `np.asarray(x, dtype)` and
// `x.astype(dtype)` do): round to nearest, ties to even; a value that rounds
// past the largest finite one becomes +-inf where the format has it, NaN
// where it has a NaN and no inf, and +-max for the all-finite MX formats;
// NaN stays NaN (MX formats: +NaN -> 0b1..0 = -0, -NaN -> +0, ml_dtypes'
// quiet_NaN()); fnuz formats have no -0 (it becomes +0). f8_e8m0fnu: zero,
// negatives and NaN -> NaN; ties round up; below 2^-126 it follows
// ml_dtypes 0.6's packing (x <= 2^-127 -> 2^-127, 2^-127 < x < 2^-126 ->
// 2^-126).
uint8_t NarrowFloatFromDouble(NarrowFormat format, double value);

// The value of an integer code (its low `bits` bits, sign-extended for i4
// and i2).
int64_t NarrowIntValue(NarrowFormat format, uint8_t code);
// The code of an integer, wrapped modulo 2^bits (ml_dtypes' intN(int) and
// XLA's integer narrowing).
uint8_t NarrowIntFromInt64(NarrowFormat format, int64_t value);
// The range of an integer format.
int64_t NarrowIntMin(NarrowFormat format);
int64_t NarrowIntMax(NarrowFormat format);

// The DType of each narrow format. These values lie past DType's
// enumerators (jaxpr/dtype.h), which the whole converter includes: adding
// enumerators there rebuilds every object, so the narrow formats take the
// values kNarrowDTypeBase + NarrowFormat here (an enum with a fixed
// underlying type holds every value of that type). ShortName, NumpyName,
// DTypeFromShortName/NumpyName/AnyName and ItemSize (1) know them; IsFloat,
// IsSignedInt, IsUnsignedInt are false for them (code that computes on
// those classes does not compute on narrow types; it asks IsNarrow*).
inline constexpr int kNarrowDTypeBase = 64;
constexpr DType NarrowDType(NarrowFormat format) {
  return static_cast<DType>(kNarrowDTypeBase + static_cast<int>(format));
}
// The format of a narrow DType; nullopt for every other DType.
std::optional<NarrowFormat> NarrowFormatOf(DType dtype);
inline bool IsNarrow(DType dtype) { return NarrowFormatOf(dtype).has_value(); }
bool IsNarrowFloat(DType dtype);
bool IsNarrowInt(DType dtype);

// Element i of a narrow array's bytes as double (exact; integers too).
double NarrowDecode(DType dtype, uint8_t code);
// The code of `value` in a narrow dtype: floats by NarrowFloatFromDouble
// (ml_dtypes / XLA convert, round to nearest even); integers truncate toward
// zero (a C++ cast, as Array::SetFromDouble does for wider integers) and
// wrap modulo 2^bits (XLA's integer narrowing). NaN/inf to an integer gives
// 0 (XLA's float-to-int convert of NaN; callers wanting its saturation clamp
// before).
uint8_t NarrowEncode(DType dtype, double value);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_NARROW_DTYPE_H_
