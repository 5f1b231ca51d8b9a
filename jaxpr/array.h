// A small n-dimensional array: dtype, shape and row-major (C-order) bytes.
// It is what npz files load into and what the reference interpreter computes
// on. Simplicity beats speed here: every element access goes through
// explicit index math.
#ifndef JAX2ONNX_JAXPR_ARRAY_H_
#define JAX2ONNX_JAXPR_ARRAY_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "jaxpr/dtype.h"

namespace jax2onnx::jaxpr {

// IEEE binary16 and bfloat16 conversions (round to nearest even).
float HalfToFloat(uint16_t bits);
uint16_t FloatToHalf(float value);
float BFloat16ToFloat(uint16_t bits);
uint16_t FloatToBFloat16(float value);

class Array {
 public:
  Array() = default;
  // Zero-filled array.
  Array(DType dtype, std::vector<int64_t> shape);
  // An array over bytes it does not own (e.g. a memory-mapped npz entry):
  // `bytes` must hold exactly the array's elements and stay valid and
  // unchanged while `keep_alive` lives. A write first copies them (copy on
  // write). Bytes not aligned to the element size (about half the entries
  // np.savez writes) are borrowed as they are: bytes() and Share() give
  // them without a copy (what the ONNX writer needs), and the first typed
  // access (data(), typed_data(), GetAs*) makes one aligned copy.
  static Array Borrowed(DType dtype, std::vector<int64_t> shape,
                        absl::Span<const uint8_t> bytes,
                        std::shared_ptr<const void> keep_alive);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t num_elements() const;
  // Row-major strides in elements.
  std::vector<int64_t> Strides() const;

  // Copies of an Array share their bytes until one of them is written
  // (copy on write): the non-const accessors below first make the bytes
  // this array's own, so a pointer they return must not outlive a later
  // copy of the array that is meant to stay unchanged.
  uint8_t* data() { return Mutable().data(); }
  const uint8_t* data() const { return AlignedBytes(); }
  size_t num_bytes() const { return Bytes().size(); }
  std::vector<uint8_t>& bytes() { return Mutable(); }
  absl::Span<const uint8_t> bytes() const { return Bytes(); }
  // The bytes and an owner that keeps them alive and unchanged (null when
  // there are no bytes), for borrowing them without a copy: holding the
  // owner makes this array copy before its next write.
  struct SharedView {
    absl::Span<const uint8_t> bytes;
    std::shared_ptr<const void> keep_alive;
  };
  SharedView Share() const;
  // True when the bytes are borrowed (Borrowed()) rather than owned.
  bool is_borrowed() const { return borrowed_owner_ != nullptr; }

  template <typename T>
  T* typed_data() {
    return reinterpret_cast<T*>(Mutable().data());
  }
  template <typename T>
  const T* typed_data() const {
    return reinterpret_cast<const T*>(AlignedBytes());
  }

  // Element i (flat, row-major) converted to double / int64 (bool -> 0/1,
  // f16/bf16 decoded). Complex dtypes give the real part.
  double GetAsDouble(int64_t i) const;
  int64_t GetAsInt64(int64_t i) const;
  uint64_t GetAsUInt64(int64_t i) const;
  // Stores a value converted to the array's dtype with a C++ static_cast
  // (no saturation; callers needing XLA conversion semantics do it first).
  void SetFromDouble(int64_t i, double v);
  void SetFromInt64(int64_t i, int64_t v);

  // Flat index of a multi-index.
  int64_t FlatIndex(absl::Span<const int64_t> index) const;

  // "f32[2,3]".
  std::string TypeString() const;

  bool operator==(const Array& other) const {
    return dtype_ == other.dtype_ && shape_ == other.shape_ &&
           Bytes() == other.Bytes();
  }

  // Scalar helpers.
  static Array ScalarFromDouble(DType dtype, double v);
  static Array ScalarFromInt64(DType dtype, int64_t v);

 private:
  absl::Span<const uint8_t> Bytes() const {
    if (borrowed_owner_ != nullptr) return borrowed_;
    return data_ ? absl::Span<const uint8_t>(*data_)
                 : absl::Span<const uint8_t>();
  }
  std::vector<uint8_t>& Mutable() {
    if (data_ != nullptr && data_.use_count() == 1) return *data_;
    return Detach();
  }
  // Makes the bytes this array's own (allocating them when there are none).
  std::vector<uint8_t>& Detach();
  // Bytes() at an address aligned to the element size: Bytes() itself, or
  // for misaligned borrowed bytes the aligned copy, made on first use.
  const uint8_t* AlignedBytes() const {
    if (aligned_copy_ == nullptr) return Bytes().data();
    return AlignedCopy();
  }
  const uint8_t* AlignedCopy() const;
  struct AlignedCopyState;

  DType dtype_ = DType::kInvalid;
  std::vector<int64_t> shape_;
  std::shared_ptr<std::vector<uint8_t>> data_;  // null: no owned bytes
  // Borrowed bytes (Borrowed()); in use while the owner is non-null.
  absl::Span<const uint8_t> borrowed_;
  std::shared_ptr<const void> borrowed_owner_;
  // Set for misaligned borrowed bytes only (shared by copies of the array,
  // which borrow the same bytes).
  std::shared_ptr<AlignedCopyState> aligned_copy_;
};

// The complex I/O convention of the converted models: a c64[s] (c128[s])
// array is an f32[s,2] (f64[s,2]) tensor of (real, imaginary) pairs, with the
// same bytes. Non-complex arrays are returned unchanged.
Array ComplexAsPairs(const Array& complex_array);
// The inverse: `pairs` f32[s,2] / f64[s,2] read as c64[s] / c128[s]; an error
// unless the last axis is 2 and the part dtype matches `complex_dtype`.
absl::StatusOr<Array> PairsAsComplex(const Array& pairs, DType complex_dtype);

// Product of the dims; callers pass shapes already known to be valid.
int64_t NumElements(absl::Span<const int64_t> shape);
// Product of the dims for shapes that come from input: an error for a
// negative dim or a count that overflows int64, never undefined behaviour.
absl::StatusOr<int64_t> CheckedNumElements(absl::Span<const int64_t> shape);
// Bytes of an array of `dtype` and `shape`, checked like CheckedNumElements
// and refused above `max_bytes` (the message names the size), so that an
// absurd but well-typed shape is an error rather than std::bad_alloc.
absl::StatusOr<int64_t> CheckedByteSize(DType dtype,
                                        absl::Span<const int64_t> shape,
                                        int64_t max_bytes);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_ARRAY_H_
