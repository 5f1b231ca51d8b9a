#include "jaxpr/dtype.h"

#include <array>

#include "jaxpr/narrow_dtype.h"

namespace jax2onnx::jaxpr {
namespace {

struct DTypeInfo {
  DType dtype;
  absl::string_view short_name;
  absl::string_view numpy_name;
  int item_size;
};

constexpr std::array<DTypeInfo, 15> kInfos = {{
    {DType::kBool, "bool", "bool", 1},
    {DType::kI8, "i8", "int8", 1},
    {DType::kI16, "i16", "int16", 2},
    {DType::kI32, "i32", "int32", 4},
    {DType::kI64, "i64", "int64", 8},
    {DType::kU8, "u8", "uint8", 1},
    {DType::kU16, "u16", "uint16", 2},
    {DType::kU32, "u32", "uint32", 4},
    {DType::kU64, "u64", "uint64", 8},
    {DType::kF16, "f16", "float16", 2},
    {DType::kBF16, "bf16", "bfloat16", 2},
    {DType::kF32, "f32", "float32", 4},
    {DType::kF64, "f64", "float64", 8},
    {DType::kC64, "c64", "complex64", 8},
    {DType::kC128, "c128", "complex128", 16},
}};

const DTypeInfo* Find(DType dtype) {
  for (const auto& info : kInfos) {
    if (info.dtype == dtype) return &info;
  }
  return nullptr;
}

}  // namespace

absl::string_view ShortName(DType dtype) {
  if (auto format = NarrowFormatOf(dtype)) return Info(*format).short_name;
  const DTypeInfo* info = Find(dtype);
  return info ? info->short_name : "?";
}

absl::string_view NumpyName(DType dtype) {
  if (auto format = NarrowFormatOf(dtype)) return Info(*format).numpy_name;
  const DTypeInfo* info = Find(dtype);
  return info ? info->numpy_name : "?";
}

std::optional<DType> DTypeFromShortName(absl::string_view name) {
  for (const auto& info : kInfos) {
    if (info.short_name == name) return info.dtype;
  }
  for (const NarrowFormatInfo& f : AllNarrowFormats()) {
    if (f.short_name == name) return NarrowDType(f.format);
  }
  return std::nullopt;
}

std::optional<DType> DTypeFromNumpyName(absl::string_view name) {
  for (const auto& info : kInfos) {
    if (info.numpy_name == name) return info.dtype;
  }
  for (const NarrowFormatInfo& f : AllNarrowFormats()) {
    if (f.numpy_name == name) return NarrowDType(f.format);
  }
  return std::nullopt;
}

std::optional<DType> DTypeFromAnyName(absl::string_view name) {
  if (auto d = DTypeFromShortName(name)) return d;
  return DTypeFromNumpyName(name);
}

bool IsKnownDTypeName(absl::string_view name) {
  if (DTypeFromShortName(name).has_value()) return true;
  static constexpr absl::string_view kPassThrough[] = {
      "i1",          "i2",          "i4",          "u1",
      "u2",          "u4",          "f8_e4m3fn",   "f8_e5m2",
      "f8_e4m3fnuz", "f8_e5m2fnuz", "f8_e4m3b11fnuz", "f8_e3m4",
      "f8_e4m3",     "f8_e8m0fnu",  "f4_e2m1fn",   "f6_e2m3fn",
      "f6_e3m2fn",   "float0",
  };
  for (absl::string_view known : kPassThrough) {
    if (name == known) return true;
  }
  // Extended dtypes: PRNG keys `key<impl>` and dynamic-shape `bint{...}`.
  return (name.size() > 5 && name.substr(0, 4) == "key<" &&
          name.back() == '>') ||
         (name.size() > 5 && name.substr(0, 5) == "bint{" &&
          name.back() == '}');
}

int ItemSize(DType dtype) {
  // ml_dtypes stores one narrow element per byte (in the low bits).
  if (IsNarrow(dtype)) return 1;
  const DTypeInfo* info = Find(dtype);
  return info ? info->item_size : 0;
}

bool IsFloat(DType d) {
  return d == DType::kF16 || d == DType::kBF16 || d == DType::kF32 ||
         d == DType::kF64;
}

bool IsSignedInt(DType d) {
  return d == DType::kI8 || d == DType::kI16 || d == DType::kI32 ||
         d == DType::kI64;
}

bool IsUnsignedInt(DType d) {
  return d == DType::kU8 || d == DType::kU16 || d == DType::kU32 ||
         d == DType::kU64;
}

bool IsComplex(DType d) { return d == DType::kC64 || d == DType::kC128; }

}  // namespace jax2onnx::jaxpr
