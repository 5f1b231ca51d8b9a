// Constant tensors of the IR: element type, dims and row-major little-endian
// bytes that are either owned or borrowed from a buffer kept alive by a
// shared owner (so weights can be referenced without a copy). String tensors
// hold their elements as strings instead of bytes.
#ifndef JAX2ONNX_IR_TENSOR_H_
#define JAX2ONNX_IR_TENSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "glog/logging.h"
#include "ir/type.h"

namespace jax2onnx::ir {

class Tensor {
 public:
  // How serialization writes the data: raw_data, or the typed repeated field
  // of TensorProto (float_data, int32_data, ...). Only a hint, remembered
  // from deserialization so a model round-trips byte for byte; the in-memory
  // form is always bytes.
  enum class Encoding : uint8_t { kRaw, kTyped };

  Tensor() = default;
  // Owned bytes; `bytes.size()` must be num_elements * DataTypeSize(dtype).
  Tensor(int dtype, std::vector<int64_t> dims, std::string bytes);
  // Borrowed bytes: `bytes` stays valid while `keep_alive` lives.
  static Tensor Borrowed(int dtype, std::vector<int64_t> dims,
                         absl::string_view bytes,
                         std::shared_ptr<const void> keep_alive);
  static Tensor Strings(std::vector<int64_t> dims,
                        std::vector<std::string> elements);
  // A tensor whose data lives outside the model (ONNX external data); it has
  // no bytes in memory, only the location entries.
  static Tensor External(
      int dtype, std::vector<int64_t> dims,
      std::vector<std::pair<std::string, std::string>> location);
  // Typed helper: Tensor::FromVector<float>(FLOAT, {2}, {1.f, 2.f}).
  template <typename T>
  static Tensor FromVector(int dtype, std::vector<int64_t> dims,
                           absl::Span<const T> values) {
    CHECK_EQ(static_cast<int>(sizeof(T)), DataTypeSize(dtype));
    return Tensor(dtype, std::move(dims),
                  std::string(reinterpret_cast<const char*>(values.data()),
                              values.size() * sizeof(T)));
  }

  int dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t num_elements() const;
  bool is_string() const { return dtype_ == onnx::TensorProto::STRING; }
  bool is_external() const { return !external_data_.empty(); }
  bool is_borrowed() const { return keep_alive_ != nullptr; }

  // Row-major little-endian element bytes (empty for string tensors).
  absl::string_view bytes() const {
    return keep_alive_ ? borrowed_ : absl::string_view(owned_);
  }
  // Elements reinterpreted as T; T's size must match the dtype. Borrowed
  // bytes not aligned for T (a weight np.savez stored unaligned) are read
  // from an aligned copy, made on the first call.
  template <typename T>
  absl::Span<const T> data() const {
    CHECK_EQ(static_cast<int>(sizeof(T)), DataTypeSize(dtype_));
    absl::string_view b = bytes();
    const char* p = b.data();
    if (reinterpret_cast<uintptr_t>(p) % alignof(T) != 0) p = AlignedCopy();
    return absl::Span<const T>(reinterpret_cast<const T*>(p),
                               b.size() / sizeof(T));
  }
  const std::vector<std::string>& strings() const { return strings_; }

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // Serialization hint: write the name field even when it is empty.
  bool write_empty_name() const { return write_empty_name_; }
  void set_write_empty_name(bool b) { write_empty_name_ = b; }
  const std::string& doc_string() const { return doc_string_; }
  void set_doc_string(std::string d) { doc_string_ = std::move(d); }
  Encoding encoding() const { return encoding_; }
  void set_encoding(Encoding e) { encoding_ = e; }
  const std::vector<std::pair<std::string, std::string>>& external_data()
      const {
    return external_data_;
  }
  // TensorProto.data_location as written in the source model (-1: absent).
  int data_location() const { return data_location_; }
  void set_data_location(int loc) { data_location_ = loc; }

 private:
  struct AlignedCopyState;
  const char* AlignedCopy() const;

  int dtype_ = onnx::TensorProto::UNDEFINED;
  std::vector<int64_t> dims_;
  std::string owned_;
  absl::string_view borrowed_;
  std::shared_ptr<const void> keep_alive_;
  // For borrowed bytes not aligned to 8 (shared by copies of the tensor,
  // which borrow the same bytes).
  std::shared_ptr<AlignedCopyState> aligned_copy_;
  std::vector<std::string> strings_;
  std::string name_;
  std::string doc_string_;
  Encoding encoding_ = Encoding::kRaw;
  bool write_empty_name_ = false;
  std::vector<std::pair<std::string, std::string>> external_data_;
  int data_location_ = -1;
};

// ONNX sparse tensor: values and indices are ordinary tensors.
struct SparseTensor {
  Tensor values;
  Tensor indices;
  std::vector<int64_t> dims;
};

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_TENSOR_H_
