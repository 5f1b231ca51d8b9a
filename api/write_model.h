// Pieces of jax2onnx::WriteModel (api/write_model.cc), exposed for tests:
// the external-data decision, which needs no model, and the exclusive
// temporary files the writer and `check` create.
#ifndef JAX2ONNX_API_WRITE_MODEL_H_
#define JAX2ONNX_API_WRITE_MODEL_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "jax2onnx/jax2onnx.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::api {

// protobuf refuses to serialize or parse a message of 2 GiB or more.
inline constexpr uint64_t kProtobufSizeLimit =
    static_cast<uint64_t>(std::numeric_limits<int32_t>::max());
// Offset alignment of each tensor in the sidecar (a page, so a reader can
// memory-map tensors in place).
inline constexpr uint64_t kExternalDataAlignment = 4096;
// Tensors under this size always stay inline: ONNX shape inference, which
// ONNX Runtime runs when it loads a model, cannot read shape-like inputs
// (Reshape's shape, Unsqueeze's axes, ...) from external data, and such
// tiny tensors never decide the 2 GiB limit. 1 KiB is also the default of
// onnx.external_data_helper.convert_model_to_external_data.
inline constexpr uint64_t kMinExternalBytes = 1024;
// What an external tensor still costs inline (the location, offset and length
// entries), an over-estimate used only to plan.
inline constexpr uint64_t kExternalEntryBytes = 96;

// Decides which tensors go to the sidecar. `tensor_bytes[i]` is the data
// size of candidate i, `model_bytes` the size of the whole model serialized
// inline, `limit` the largest model protobuf can write. kAuto takes the
// tensors over `threshold`, then, while the model would still exceed `limit`,
// the largest remaining ones (ties: the earlier one). kAlways takes every
// tensor, kNever none. Tensors under kMinExternalBytes are never taken.
std::vector<bool> ChooseExternalTensors(absl::Span<const uint64_t> tensor_bytes,
                                        uint64_t model_bytes, ExternalData mode,
                                        uint64_t threshold,
                                        uint64_t limit = kProtobufSizeLimit);

// Tensors of a model whose data the proto does not hold (see
// ir::DeferInitializerData), with the bytes that stand for it; the bytes
// must outlive the write.
using DeferredData =
    absl::flat_hash_map<const onnx::TensorProto*, absl::string_view>;

// WriteModel of a model some of whose tensor data is held outside the proto
// (`deferred`): tensors that go to the sidecar are written straight from
// those bytes, the others are copied into the proto just before it is
// serialized. The decision is the same as for a proto holding all its data.
absl::Status WriteModelWithDeferredData(onnx::ModelProto&& model,
                                        const DeferredData& deferred,
                                        const std::string& path,
                                        const WriteOptions& options,
                                        uint64_t limit = kProtobufSizeLimit);

// WriteModel with `limit` in place of protobuf's 2 GiB, so tests can reach
// the over-the-limit paths with small models.
absl::Status WriteModelWithLimit(const onnx::ModelProto& model,
                                 const std::string& path,
                                 const WriteOptions& options, uint64_t limit);

// A file created with O_EXCL under a short random name (".j2o-XXXXXXXX.tmp",
// so it works next to a 255-character output name) in `dir`; removed on
// destruction unless renamed into place by Commit().
class ExclusiveTempFile {
 public:
  static absl::StatusOr<ExclusiveTempFile> Create(const std::string& dir);
  ExclusiveTempFile(ExclusiveTempFile&& other) noexcept;
  ExclusiveTempFile& operator=(ExclusiveTempFile&&) = delete;
  ExclusiveTempFile(const ExclusiveTempFile&) = delete;
  ~ExclusiveTempFile();

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // Writes all of `bytes` (retrying short writes and EINTR).
  absl::Status Write(const char* data, size_t size);
  // fsync and close; errors name the file and the OS reason.
  absl::Status SyncAndClose();
  // Renames onto `final_path`; afterwards the destructor leaves it alone.
  absl::Status Commit(const std::string& final_path);

 private:
  ExclusiveTempFile(int fd, std::string path)
      : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
  bool committed_ = false;
  // Bytes written so far, and the end of the range whose writeback was last
  // started (see Write).
  uint64_t written_ = 0;
  uint64_t flushed_ = 0;
};

// A private directory (mkdtemp) under $TMPDIR or /tmp, removed with its
// contents on destruction; `check` writes its temporary models there.
class ScopedTempDir {
 public:
  static absl::StatusOr<ScopedTempDir> Create(const std::string& prefix);
  ScopedTempDir(ScopedTempDir&& other) noexcept
      : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ~ScopedTempDir();
  const std::string& path() const { return path_; }

 private:
  explicit ScopedTempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_WRITE_MODEL_H_
