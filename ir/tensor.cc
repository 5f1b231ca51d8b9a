// Tensor construction.
#include "ir/tensor.h"

#include <mutex>

namespace jax2onnx::ir {

Tensor::Tensor(int dtype, std::vector<int64_t> dims, std::string bytes)
    : dtype_(dtype), dims_(std::move(dims)), owned_(std::move(bytes)) {
  CHECK_EQ(static_cast<int64_t>(owned_.size()),
           num_elements() * DataTypeSize(dtype_))
      << "tensor bytes do not match dtype " << DataTypeShortName(dtype_)
      << " and dims";
}

Tensor Tensor::Borrowed(int dtype, std::vector<int64_t> dims,
                        absl::string_view bytes,
                        std::shared_ptr<const void> keep_alive) {
  CHECK(keep_alive != nullptr) << "borrowed tensor needs a keep-alive owner";
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  CHECK_EQ(static_cast<int64_t>(bytes.size()),
           t.num_elements() * DataTypeSize(dtype));
  t.borrowed_ = bytes;
  t.keep_alive_ = std::move(keep_alive);
  if (reinterpret_cast<uintptr_t>(bytes.data()) % 8 != 0) {
    t.aligned_copy_ = std::make_shared<AlignedCopyState>();
  }
  return t;
}

struct Tensor::AlignedCopyState {
  std::once_flag once;
  std::string bytes;  // heap or in-object storage, aligned to 8 either way
};

const char* Tensor::AlignedCopy() const {
  CHECK(aligned_copy_ != nullptr) << "only borrowed bytes can be misaligned";
  std::call_once(aligned_copy_->once, [this] {
    const absl::string_view b = bytes();
    aligned_copy_->bytes.assign(b.data(), b.size());
  });
  return aligned_copy_->bytes.data();
}

Tensor Tensor::Strings(std::vector<int64_t> dims,
                       std::vector<std::string> elements) {
  Tensor t;
  t.dtype_ = onnx::TensorProto::STRING;
  t.dims_ = std::move(dims);
  CHECK_EQ(static_cast<int64_t>(elements.size()), t.num_elements());
  t.strings_ = std::move(elements);
  return t;
}

Tensor Tensor::External(
    int dtype, std::vector<int64_t> dims,
    std::vector<std::pair<std::string, std::string>> location) {
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.external_data_ = std::move(location);
  return t;
}

int64_t Tensor::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

}  // namespace jax2onnx::ir
