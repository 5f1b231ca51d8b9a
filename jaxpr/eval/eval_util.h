// Internal helpers shared by the interpreter's kernel families: compile-time
// dispatch from a DType to its C++ storage and compute types, typed element
// load/store (f16/bf16 are decoded to float and rounded back to nearest
// even), and numpy-style broadcasting of operands.
#ifndef JAX2ONNX_JAXPR_EVAL_EVAL_UTIL_H_
#define JAX2ONNX_JAXPR_EVAL_EVAL_UTIL_H_

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"

namespace jax2onnx::jaxpr::eval {

// 16-bit float storage; values are computed on as float.
struct Float16Bits {
  uint16_t bits;
};
struct BFloat16Bits {
  uint16_t bits;
};

// Storage: the element's bytes as a C++ type. Compute: the type arithmetic
// is done in (bool for bool, the integer itself, float for f16/bf16/f32,
// double for f64, std::complex for complex).
template <DType D>
struct DTypeInfo;

#define JAX2ONNX_DTYPE_INFO(D, S, C) \
  template <>                        \
  struct DTypeInfo<D> {              \
    using Storage = S;               \
    using Compute = C;               \
  }
JAX2ONNX_DTYPE_INFO(DType::kBool, uint8_t, bool);
JAX2ONNX_DTYPE_INFO(DType::kI8, int8_t, int8_t);
JAX2ONNX_DTYPE_INFO(DType::kI16, int16_t, int16_t);
JAX2ONNX_DTYPE_INFO(DType::kI32, int32_t, int32_t);
JAX2ONNX_DTYPE_INFO(DType::kI64, int64_t, int64_t);
JAX2ONNX_DTYPE_INFO(DType::kU8, uint8_t, uint8_t);
JAX2ONNX_DTYPE_INFO(DType::kU16, uint16_t, uint16_t);
JAX2ONNX_DTYPE_INFO(DType::kU32, uint32_t, uint32_t);
JAX2ONNX_DTYPE_INFO(DType::kU64, uint64_t, uint64_t);
JAX2ONNX_DTYPE_INFO(DType::kF16, Float16Bits, float);
JAX2ONNX_DTYPE_INFO(DType::kBF16, BFloat16Bits, float);
JAX2ONNX_DTYPE_INFO(DType::kF32, float, float);
JAX2ONNX_DTYPE_INFO(DType::kF64, double, double);
JAX2ONNX_DTYPE_INFO(DType::kC64, std::complex<float>, std::complex<float>);
JAX2ONNX_DTYPE_INFO(DType::kC128, std::complex<double>, std::complex<double>);
#undef JAX2ONNX_DTYPE_INFO

template <DType D>
using StorageT = typename DTypeInfo<D>::Storage;
template <DType D>
using ComputeT = typename DTypeInfo<D>::Compute;

// A value-level tag carrying a DType for generic lambdas:
// `[&](auto tag) { constexpr DType D = decltype(tag)::value; ... }`.
template <DType D>
using DTypeTag = std::integral_constant<DType, D>;

template <typename T>
struct IsComplexType : std::false_type {};
template <typename T>
struct IsComplexType<std::complex<T>> : std::true_type {};
template <typename T>
inline constexpr bool kIsComplex = IsComplexType<T>::value;
template <typename T>
inline constexpr bool kIsBool = std::is_same_v<T, bool>;
// Integer compute types (not bool).
template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !kIsBool<T>;
template <typename T>
inline constexpr bool kIsFloat = std::is_floating_point_v<T>;

// Calls f(DTypeTag<d>{}) for the runtime dtype `d`. f's return type must be
// constructible from an absl::Status (Status or StatusOr), which is returned
// for dtypes without a C++ type (kInvalid, kOther).
template <typename F>
auto VisitDType(DType d, F&& f) -> decltype(f(DTypeTag<DType::kF32>{})) {
  switch (d) {
    case DType::kBool:
      return f(DTypeTag<DType::kBool>{});
    case DType::kI8:
      return f(DTypeTag<DType::kI8>{});
    case DType::kI16:
      return f(DTypeTag<DType::kI16>{});
    case DType::kI32:
      return f(DTypeTag<DType::kI32>{});
    case DType::kI64:
      return f(DTypeTag<DType::kI64>{});
    case DType::kU8:
      return f(DTypeTag<DType::kU8>{});
    case DType::kU16:
      return f(DTypeTag<DType::kU16>{});
    case DType::kU32:
      return f(DTypeTag<DType::kU32>{});
    case DType::kU64:
      return f(DTypeTag<DType::kU64>{});
    case DType::kF16:
      return f(DTypeTag<DType::kF16>{});
    case DType::kBF16:
      return f(DTypeTag<DType::kBF16>{});
    case DType::kF32:
      return f(DTypeTag<DType::kF32>{});
    case DType::kF64:
      return f(DTypeTag<DType::kF64>{});
    case DType::kC64:
      return f(DTypeTag<DType::kC64>{});
    case DType::kC128:
      return f(DTypeTag<DType::kC128>{});
    case DType::kInvalid:
    case DType::kOther:
      break;
  }
  return absl::UnimplementedError(absl::StrCat(
      "the interpreter has no element type for dtype '", ShortName(d), "'"));
}

// Element i of `a` (whose dtype must be D) in D's compute type.
template <DType D>
ComputeT<D> Load(const Array& a, int64_t i) {
  StorageT<D> s;
  std::memcpy(&s, a.data() + i * sizeof(StorageT<D>), sizeof(s));
  if constexpr (D == DType::kBool) {
    return s != 0;
  } else if constexpr (D == DType::kF16) {
    return HalfToFloat(s.bits);
  } else if constexpr (D == DType::kBF16) {
    return BFloat16ToFloat(s.bits);
  } else {
    return s;
  }
}

// Stores a compute-type value as element i of `a` (dtype D); f16/bf16 round
// to nearest even.
template <DType D>
void Store(Array* a, int64_t i, ComputeT<D> v) {
  StorageT<D> s;
  if constexpr (D == DType::kBool) {
    s = v ? 1 : 0;
  } else if constexpr (D == DType::kF16) {
    s.bits = FloatToHalf(v);
  } else if constexpr (D == DType::kBF16) {
    s.bits = FloatToBFloat16(v);
  } else {
    s = v;
  }
  std::memcpy(a->data() + i * sizeof(StorageT<D>), &s, sizeof(s));
}

// Numpy broadcasting (right-aligned; a dim of 1 stretches). Rank-0 operands
// broadcast to anything. Errors name the incompatible shapes.
inline absl::StatusOr<std::vector<int64_t>> BroadcastShapes(
    absl::Span<const std::vector<int64_t>> shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& s : shapes) {
    const size_t offset = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[offset + i];
      if (s[i] == o || s[i] == 1) continue;
      if (o == 1) {
        o = s[i];
        continue;
      }
      std::vector<std::string> texts;
      for (const auto& t : shapes) {
        texts.push_back(absl::StrCat("[", absl::StrJoin(t, ","), "]"));
      }
      return absl::InvalidArgumentError(
          absl::StrCat("operand shapes ", absl::StrJoin(texts, ", "),
                       " are not broadcast-compatible"));
    }
  }
  return out;
}

// `a` broadcast (numpy rules) to `shape`, materialized. Returns `a` itself
// when its shape already equals `shape`.
inline absl::StatusOr<Array> BroadcastTo(const Array& a,
                                         const std::vector<int64_t>& shape) {
  if (a.shape() == shape) return a;
  if (a.rank() > static_cast<int>(shape.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot broadcast ", a.TypeString(), " to rank ", shape.size()));
  }
  const size_t offset = shape.size() - a.rank();
  for (int i = 0; i < a.rank(); ++i) {
    if (a.shape()[i] != 1 && a.shape()[i] != shape[offset + i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot broadcast ", a.TypeString(), " to [",
                       absl::StrJoin(shape, ","), "]"));
    }
  }
  Array out(a.dtype(), shape);
  const int64_t n = out.num_elements();
  const size_t item = static_cast<size_t>(ItemSize(a.dtype()));
  if (n == 0 || item == 0) return out;
  // Input strides, 0 along broadcast dims, aligned to the output dims.
  const std::vector<int64_t> in_strides = a.Strides();
  std::vector<int64_t> strides(shape.size(), 0);
  for (int i = 0; i < a.rank(); ++i) {
    strides[offset + i] = a.shape()[i] == 1 ? 0 : in_strides[i];
  }
  // Row by row along the last output dim: a contiguous copy when the input
  // walks it, repeats of one element when it is broadcast.
  const int rank = static_cast<int>(shape.size());
  const int64_t row = rank == 0 ? 1 : shape.back();
  const bool row_is_broadcast = rank == 0 || strides.back() == 0;
  uint8_t* dst = out.data();
  const uint8_t* in = a.data();
  std::vector<int64_t> index(shape.size(), 0);
  int64_t src = 0;
  for (int64_t flat = 0; flat < n; flat += row) {
    uint8_t* d = dst + flat * item;
    if (row_is_broadcast) {
      for (int64_t j = 0; j < row; ++j) {
        std::memcpy(d + j * item, in + src * item, item);
      }
    } else {
      std::memcpy(d, in + src * item, row * item);
    }
    for (int dim = rank - 2; dim >= 0; --dim) {
      ++index[dim];
      src += strides[dim];
      if (index[dim] < shape[dim]) break;
      src -= strides[dim] * index[dim];
      index[dim] = 0;
    }
  }
  return out;
}

// Broadcasts every input to `shape`.
inline absl::StatusOr<std::vector<Array>> BroadcastAll(
    absl::Span<const Array> inputs, const std::vector<int64_t>& shape) {
  std::vector<Array> out;
  out.reserve(inputs.size());
  for (const Array& a : inputs) {
    auto b = BroadcastTo(a, shape);
    if (!b.ok()) return b.status();
    out.push_back(*std::move(b));
  }
  return out;
}

}  // namespace jax2onnx::jaxpr::eval

#endif  // JAX2ONNX_JAXPR_EVAL_EVAL_UTIL_H_
