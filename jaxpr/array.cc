#include "jaxpr/array.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <mutex>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"
#include "jaxpr/narrow_dtype.h"

namespace jax2onnx::jaxpr {

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      mant &= 0x3ffu;
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint16_t FloatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    if (abs > 0x7f800000u) {
      return sign | 0x7e00u | static_cast<uint16_t>((abs >> 13) & 0x3ffu);
    }
    return sign | 0x7c00u;
  }
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {                        // result is subnormal or zero
    // value = abs_float; half subnormal unit is 2^-24.
    float f;
    std::memcpy(&f, &abs, sizeof(f));
    const float scaled = f * 16777216.0f;  // exact: power of two
    // Round half to even.
    float r = std::nearbyint(scaled);
    return sign | static_cast<uint16_t>(r);
  }
  // Normal: rebias exponent and round mantissa to 10 bits, half to even.
  uint32_t mant = abs & 0x7fffffu;
  uint32_t exp = (abs >> 23) - 127 + 15;
  uint32_t half = (exp << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
  return sign | static_cast<uint16_t>(half);
}

float BFloat16ToFloat(uint16_t bits) {
  const uint32_t b = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}

uint16_t FloatToBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) {  // nan: keep quiet nan
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  }
  const uint32_t lsb = (bits >> 16) & 1u;
  bits += 0x7fffu + lsb;
  return static_cast<uint16_t>(bits >> 16);
}

int64_t NumElements(absl::Span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

absl::StatusOr<int64_t> CheckedNumElements(absl::Span<const int64_t> shape) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("negative dimension ", d, " in shape [",
                       absl::StrJoin(shape, ","), "]"));
    }
    if (d == 0) return 0;
    if (n > std::numeric_limits<int64_t>::max() / d) overflow = true;
    if (!overflow) n *= d;
  }
  if (overflow) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape [", absl::StrJoin(shape, ","),
                     "] has more elements than fit in a 64-bit count"));
  }
  return n;
}

absl::StatusOr<int64_t> CheckedByteSize(DType dtype,
                                        absl::Span<const int64_t> shape,
                                        int64_t max_bytes) {
  absl::StatusOr<int64_t> n = CheckedNumElements(shape);
  if (!n.ok()) return n.status();
  const int64_t item = std::max(ItemSize(dtype), 1);
  if (*n > max_bytes / item) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "an array of ", ShortName(dtype), "[", absl::StrJoin(shape, ","),
        "] needs more than ", max_bytes, " bytes"));
  }
  return *n * item;
}

Array::Array(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t d : shape_) CHECK_GE(d, 0) << "negative dimension";
  data_ = std::make_shared<std::vector<uint8_t>>(
      static_cast<size_t>(NumElements(shape_)) * ItemSize(dtype_), 0);
}

Array Array::Borrowed(DType dtype, std::vector<int64_t> shape,
                      absl::Span<const uint8_t> bytes,
                      std::shared_ptr<const void> keep_alive) {
  CHECK(keep_alive != nullptr);
  Array array;
  array.dtype_ = dtype;
  array.shape_ = std::move(shape);
  for (int64_t d : array.shape_) CHECK_GE(d, 0) << "negative dimension";
  CHECK_EQ(bytes.size(),
           static_cast<size_t>(NumElements(array.shape_)) * ItemSize(dtype));
  const int item = std::max(ItemSize(dtype), 1);
  if (reinterpret_cast<uintptr_t>(bytes.data()) %
          static_cast<uintptr_t>(std::min(item, 8)) !=
      0) {
    array.aligned_copy_ = std::make_shared<AlignedCopyState>();
  }
  array.borrowed_ = bytes;
  array.borrowed_owner_ = std::move(keep_alive);
  return array;
}

struct Array::AlignedCopyState {
  std::once_flag once;
  std::vector<uint8_t> bytes;  // operator new's alignment suits every dtype
};

const uint8_t* Array::AlignedCopy() const {
  // Once per borrowed span, whichever copy of the array (or thread) asks.
  std::call_once(aligned_copy_->once, [this] {
    absl::Span<const uint8_t> b = Bytes();
    aligned_copy_->bytes.assign(b.begin(), b.end());
  });
  return aligned_copy_->bytes.data();
}

Array::SharedView Array::Share() const {
  if (borrowed_owner_ != nullptr) return {borrowed_, borrowed_owner_};
  if (data_ == nullptr) return {};
  return {absl::Span<const uint8_t>(*data_), data_};
}

std::vector<uint8_t>& Array::Detach() {
  absl::Span<const uint8_t> current = Bytes();
  data_ =
      std::make_shared<std::vector<uint8_t>>(current.begin(), current.end());
  borrowed_ = {};
  borrowed_owner_ = nullptr;
  aligned_copy_ = nullptr;
  return *data_;
}

int64_t Array::num_elements() const { return NumElements(shape_); }

std::vector<int64_t> Array::Strides() const {
  std::vector<int64_t> strides(shape_.size(), 1);
  for (int i = static_cast<int>(shape_.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * shape_[i + 1];
  }
  return strides;
}

int64_t Array::FlatIndex(absl::Span<const int64_t> index) const {
  CHECK_EQ(index.size(), shape_.size());
  int64_t flat = 0;
  for (size_t i = 0; i < shape_.size(); ++i) flat = flat * shape_[i] + index[i];
  return flat;
}

double Array::GetAsDouble(int64_t i) const {
  const uint8_t* p = AlignedBytes();
  switch (dtype_) {
    case DType::kBool:
      return p[i] ? 1.0 : 0.0;
    case DType::kI8:
      return reinterpret_cast<const int8_t*>(p)[i];
    case DType::kI16:
      return reinterpret_cast<const int16_t*>(p)[i];
    case DType::kI32:
      return reinterpret_cast<const int32_t*>(p)[i];
    case DType::kI64:
      return static_cast<double>(reinterpret_cast<const int64_t*>(p)[i]);
    case DType::kU8:
      return p[i];
    case DType::kU16:
      return reinterpret_cast<const uint16_t*>(p)[i];
    case DType::kU32:
      return reinterpret_cast<const uint32_t*>(p)[i];
    case DType::kU64:
      return static_cast<double>(reinterpret_cast<const uint64_t*>(p)[i]);
    case DType::kF16:
      return HalfToFloat(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::kBF16:
      return BFloat16ToFloat(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::kF32:
      return reinterpret_cast<const float*>(p)[i];
    case DType::kF64:
      return reinterpret_cast<const double*>(p)[i];
    case DType::kC64:
      return reinterpret_cast<const float*>(p)[2 * i];
    case DType::kC128:
      return reinterpret_cast<const double*>(p)[2 * i];
    default:
      if (IsNarrow(dtype_)) return NarrowDecode(dtype_, p[i]);
      LOG(FATAL) << "GetAsDouble on unsupported dtype";
  }
}

int64_t Array::GetAsInt64(int64_t i) const {
  const uint8_t* p = AlignedBytes();
  switch (dtype_) {
    case DType::kBool:
      return p[i] ? 1 : 0;
    case DType::kI8:
      return reinterpret_cast<const int8_t*>(p)[i];
    case DType::kI16:
      return reinterpret_cast<const int16_t*>(p)[i];
    case DType::kI32:
      return reinterpret_cast<const int32_t*>(p)[i];
    case DType::kI64:
      return reinterpret_cast<const int64_t*>(p)[i];
    case DType::kU8:
      return p[i];
    case DType::kU16:
      return reinterpret_cast<const uint16_t*>(p)[i];
    case DType::kU32:
      return reinterpret_cast<const uint32_t*>(p)[i];
    case DType::kU64:
      return static_cast<int64_t>(reinterpret_cast<const uint64_t*>(p)[i]);
    default:
      return static_cast<int64_t>(GetAsDouble(i));
  }
}

uint64_t Array::GetAsUInt64(int64_t i) const {
  if (dtype_ == DType::kU64) {
    return reinterpret_cast<const uint64_t*>(AlignedBytes())[i];
  }
  return static_cast<uint64_t>(GetAsInt64(i));
}

void Array::SetFromDouble(int64_t i, double v) {
  uint8_t* p = Mutable().data();
  switch (dtype_) {
    case DType::kBool:
      p[i] = v != 0.0;
      return;
    case DType::kI8:
      reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(v);
      return;
    case DType::kI16:
      reinterpret_cast<int16_t*>(p)[i] = static_cast<int16_t>(v);
      return;
    case DType::kI32:
      reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(v);
      return;
    case DType::kI64:
      reinterpret_cast<int64_t*>(p)[i] = static_cast<int64_t>(v);
      return;
    case DType::kU8:
      p[i] = static_cast<uint8_t>(v);
      return;
    case DType::kU16:
      reinterpret_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v);
      return;
    case DType::kU32:
      reinterpret_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v);
      return;
    case DType::kU64:
      reinterpret_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v);
      return;
    case DType::kF16:
      reinterpret_cast<uint16_t*>(p)[i] = FloatToHalf(static_cast<float>(v));
      return;
    case DType::kBF16:
      reinterpret_cast<uint16_t*>(p)[i] =
          FloatToBFloat16(static_cast<float>(v));
      return;
    case DType::kF32:
      reinterpret_cast<float*>(p)[i] = static_cast<float>(v);
      return;
    case DType::kF64:
      reinterpret_cast<double*>(p)[i] = v;
      return;
    case DType::kC64:
      reinterpret_cast<float*>(p)[2 * i] = static_cast<float>(v);
      reinterpret_cast<float*>(p)[2 * i + 1] = 0;
      return;
    case DType::kC128:
      reinterpret_cast<double*>(p)[2 * i] = v;
      reinterpret_cast<double*>(p)[2 * i + 1] = 0;
      return;
    default:
      if (IsNarrow(dtype_)) {
        p[i] = NarrowEncode(dtype_, v);
        return;
      }
      LOG(FATAL) << "SetFromDouble on unsupported dtype";
  }
}

void Array::SetFromInt64(int64_t i, int64_t v) {
  uint8_t* p = Mutable().data();
  switch (dtype_) {
    case DType::kBool:
      p[i] = v != 0;
      return;
    case DType::kI8:
      reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(v);
      return;
    case DType::kI16:
      reinterpret_cast<int16_t*>(p)[i] = static_cast<int16_t>(v);
      return;
    case DType::kI32:
      reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(v);
      return;
    case DType::kI64:
      reinterpret_cast<int64_t*>(p)[i] = v;
      return;
    case DType::kU8:
      p[i] = static_cast<uint8_t>(v);
      return;
    case DType::kU16:
      reinterpret_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v);
      return;
    case DType::kU32:
      reinterpret_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v);
      return;
    case DType::kU64:
      reinterpret_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v);
      return;
    default:
      if (IsNarrowInt(dtype_)) {
        p[i] = NarrowIntFromInt64(*NarrowFormatOf(dtype_), v);
        return;
      }
      SetFromDouble(i, static_cast<double>(v));
  }
}

std::string Array::TypeString() const {
  return absl::StrCat(ShortName(dtype_), "[", absl::StrJoin(shape_, ","), "]");
}

Array Array::ScalarFromDouble(DType dtype, double v) {
  Array a(dtype, {});
  a.SetFromDouble(0, v);
  return a;
}

Array Array::ScalarFromInt64(DType dtype, int64_t v) {
  Array a(dtype, {});
  a.SetFromInt64(0, v);
  return a;
}

Array ComplexAsPairs(const Array& complex_array) {
  if (!IsComplex(complex_array.dtype())) return complex_array;
  std::vector<int64_t> shape = complex_array.shape();
  shape.push_back(2);
  Array pairs(complex_array.dtype() == DType::kC64 ? DType::kF32 : DType::kF64,
              std::move(shape));
  if (pairs.num_bytes() > 0) {
    std::memcpy(pairs.data(), complex_array.data(), pairs.num_bytes());
  }
  return pairs;
}

absl::StatusOr<Array> PairsAsComplex(const Array& pairs, DType complex_dtype) {
  const DType part = complex_dtype == DType::kC64 ? DType::kF32 : DType::kF64;
  if (!IsComplex(complex_dtype) || pairs.dtype() != part ||
      pairs.shape().empty() || pairs.shape().back() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        pairs.TypeString(), " does not hold ", ShortName(complex_dtype),
        " values as (real, imaginary) pairs on a last axis of size 2"));
  }
  std::vector<int64_t> shape = pairs.shape();
  shape.pop_back();
  Array out(complex_dtype, std::move(shape));
  if (out.num_bytes() > 0) {
    std::memcpy(out.data(), pairs.data(), out.num_bytes());
  }
  return out;
}

}  // namespace jax2onnx::jaxpr
