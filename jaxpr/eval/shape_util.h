// Helpers shared by the shape, reduction and sort kernels of the reference
// interpreter: row-major index iteration, byte-level element copies, axis
// checks, and a dtype visitor that hands kernels a typed element codec.
#ifndef JAX2ONNX_JAXPR_EVAL_SHAPE_UTIL_H_
#define JAX2ONNX_JAXPR_EVAL_SHAPE_UTIL_H_

#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"

namespace jax2onnx::jaxpr::shape_util {

// Calls fn(index) for every multi-index of `shape` in row-major order.
// `index` is a const std::vector<int64_t>&; nothing is visited when the
// shape has a zero dim, and a rank-0 shape is visited once.
template <typename Fn>
void ForEachIndex(absl::Span<const int64_t> shape, Fn&& fn) {
  for (int64_t d : shape) {
    if (d <= 0) return;
  }
  std::vector<int64_t> index(shape.size(), 0);
  while (true) {
    fn(static_cast<const std::vector<int64_t>&>(index));
    int d = static_cast<int>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// Row-major flat offset of `index` in `shape`.
inline int64_t FlatIndexIn(absl::Span<const int64_t> shape,
                           absl::Span<const int64_t> index) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i) flat = flat * shape[i] + index[i];
  return flat;
}

// Copies element `src_i` of `src` into element `dst_i` of `dst` (same
// dtype); data movement never needs to know what the bytes mean.
inline void CopyElement(const Array& src, int64_t src_i, Array& dst,
                        int64_t dst_i) {
  const int size = ItemSize(src.dtype());
  std::memcpy(dst.data() + dst_i * size, src.data() + src_i * size, size);
}

inline std::string ShapeString(absl::Span<const int64_t> shape) {
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

// Checks that every axis in `axes` is in [0, rank) and appears once.
inline absl::Status CheckAxes(absl::Span<const int64_t> axes, int rank,
                              absl::string_view what) {
  std::vector<bool> seen(rank, false);
  for (int64_t a : axes) {
    if (a < 0 || a >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " ", ShapeString(axes), " has axis ", a,
                       " outside an operand of rank ", rank));
    }
    if (seen[a]) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " ", ShapeString(axes), " repeats axis ", a));
    }
    seen[a] = true;
  }
  return absl::OkStatus();
}

// Element codecs: Load gives an element in a type that arithmetic and
// comparisons use directly; Store rounds it back to the storage dtype.
// f16/bf16/f32 compute in double so sums and products round once, at the
// end, like a correctly rounded reference.
template <typename Storage, typename Compute>
struct Codec {
  using StorageType = Storage;
  using ComputeType = Compute;
  static constexpr bool kIsHalf = false;
  static Compute Load(const Array& a, int64_t i) {
    return static_cast<Compute>(a.typed_data<Storage>()[i]);
  }
  static void Store(Array& a, int64_t i, Compute v) {
    a.typed_data<Storage>()[i] = static_cast<Storage>(v);
  }
};

struct BoolCodec {
  using StorageType = uint8_t;
  using ComputeType = bool;
  static constexpr bool kIsHalf = false;
  static bool Load(const Array& a, int64_t i) {
    return a.typed_data<uint8_t>()[i] != 0;
  }
  static void Store(Array& a, int64_t i, bool v) {
    a.typed_data<uint8_t>()[i] = v ? 1 : 0;
  }
};

struct HalfCodec {
  using StorageType = uint16_t;
  using ComputeType = double;
  static constexpr bool kIsHalf = true;
  static double Load(const Array& a, int64_t i) {
    return HalfToFloat(a.typed_data<uint16_t>()[i]);
  }
  static void Store(Array& a, int64_t i, double v) {
    a.typed_data<uint16_t>()[i] = FloatToHalf(static_cast<float>(v));
  }
};

struct BFloat16Codec {
  using StorageType = uint16_t;
  using ComputeType = double;
  static constexpr bool kIsHalf = true;
  static double Load(const Array& a, int64_t i) {
    return BFloat16ToFloat(a.typed_data<uint16_t>()[i]);
  }
  static void Store(Array& a, int64_t i, double v) {
    a.typed_data<uint16_t>()[i] = FloatToBFloat16(static_cast<float>(v));
  }
};

template <typename T>
inline constexpr bool kIsComplex = false;
template <typename T>
inline constexpr bool kIsComplex<std::complex<T>> = true;

// Calls fn(codec) with the codec of `dtype` and returns its status.
// Dtypes without a codec (kOther, kInvalid) are an Unimplemented error
// naming `what`.
template <typename Fn>
absl::Status VisitDType(DType dtype, absl::string_view what, Fn&& fn) {
  switch (dtype) {
    case DType::kBool:
      return fn(BoolCodec{});
    case DType::kI8:
      return fn(Codec<int8_t, int8_t>{});
    case DType::kI16:
      return fn(Codec<int16_t, int16_t>{});
    case DType::kI32:
      return fn(Codec<int32_t, int32_t>{});
    case DType::kI64:
      return fn(Codec<int64_t, int64_t>{});
    case DType::kU8:
      return fn(Codec<uint8_t, uint8_t>{});
    case DType::kU16:
      return fn(Codec<uint16_t, uint16_t>{});
    case DType::kU32:
      return fn(Codec<uint32_t, uint32_t>{});
    case DType::kU64:
      return fn(Codec<uint64_t, uint64_t>{});
    case DType::kF16:
      return fn(HalfCodec{});
    case DType::kBF16:
      return fn(BFloat16Codec{});
    case DType::kF32:
      return fn(Codec<float, double>{});
    case DType::kF64:
      return fn(Codec<double, double>{});
    case DType::kC64:
      return fn(Codec<std::complex<float>, std::complex<double>>{});
    case DType::kC128:
      return fn(Codec<std::complex<double>, std::complex<double>>{});
    default:
      return absl::UnimplementedError(absl::StrCat(
          what, ": unsupported element type '", ShortName(dtype), "'"));
  }
}

// Integer add/multiply with the two's-complement wraparound XLA has (signed
// overflow is undefined in C++, so go through the unsigned type).
template <typename T>
T WrappingAdd(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(
        static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <typename T>
T WrappingMul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    // Promote to at least unsigned int so u16*u16 cannot overflow int.
    using Wide = std::common_type_t<U, unsigned int>;
    return static_cast<T>(
        static_cast<U>(static_cast<Wide>(a) * static_cast<Wide>(b)));
  } else {
    return a * b;
  }
}

}  // namespace jax2onnx::jaxpr::shape_util

#endif  // JAX2ONNX_JAXPR_EVAL_SHAPE_UTIL_H_
