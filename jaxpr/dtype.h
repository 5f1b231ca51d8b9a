// Element types of JAX values, with the two spellings JAX prints: the short
// form used in avals (`f32`) and numpy's name used in params (`float32`).
#ifndef JAX2ONNX_JAXPR_DTYPE_H_
#define JAX2ONNX_JAXPR_DTYPE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace jax2onnx::jaxpr {

// kOther covers dtypes the converter only passes through (f8_*, i4, key<fry>,
// float0, ...); their printed name is kept next to the enum where needed.
enum class DType : uint8_t {
  kInvalid = 0,
  kBool,
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kC64,
  kC128,
  kOther,
};

// "f32", "i64", "bool", "bf16", "c64"; "?" for kInvalid/kOther.
absl::string_view ShortName(DType dtype);
// "float32", "int64", "bool", "bfloat16", "complex64".
absl::string_view NumpyName(DType dtype);
// Accepts the short name ("f32"); nullopt for names outside the enum.
std::optional<DType> DTypeFromShortName(absl::string_view name);
// Accepts numpy's name ("float32"); nullopt for names outside the enum.
std::optional<DType> DTypeFromNumpyName(absl::string_view name);
// Accepts either spelling.
std::optional<DType> DTypeFromAnyName(absl::string_view name);

// True for every dtype JAX can print in an aval: the enum's short names and
// the pass-through ones (i4, f8_e4m3fn, float0, key<fry>, bint{...}, ...;
// shared/JAXPR_FORMAT.md §3). Names such as `f33` or `i31` are false.
bool IsKnownDTypeName(absl::string_view name);

// Bytes per element (bool is 1); 0 for kInvalid/kOther.
int ItemSize(DType dtype);

bool IsFloat(DType dtype);  // f16 bf16 f32 f64
bool IsSignedInt(DType dtype);
bool IsUnsignedInt(DType dtype);
inline bool IsInteger(DType d) { return IsSignedInt(d) || IsUnsignedInt(d); }
bool IsComplex(DType dtype);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_DTYPE_H_
