// jax2onnx::WriteModel: writes an ONNX model, with its tensor data inline or
// in one sidecar file (ONNX external data), without ever leaving a partial or
// empty file at the output path. Each file goes to an exclusively created
// temporary in the target directory, is fsynced and then renamed into place;
// any error removes the temporaries and leaves existing files untouched.
#include "api/write_model.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <optional>
#include <random>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/write_model_stream.h"
#include "glog/logging.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "ir/serde.h"
#include "ir/type.h"
#include "jaxpr/io/output_guard.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx {
namespace api {
namespace {

namespace fs = std::filesystem;

std::string ErrnoText(int error) { return std::strerror(error); }

// 48 random bits per name: a process-wide seed from random_device, the pid
// and the clock, stepped by a counter so threads never reuse a name.
std::string RandomSuffix() {
  static const uint64_t seed = [] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device() ^
           (static_cast<uint64_t>(getpid()) << 16) ^
           static_cast<uint64_t>(
               std::chrono::steady_clock::now().time_since_epoch().count());
  }();
  static std::atomic<uint64_t> counter{0};
  uint64_t x = seed + 0x9e3779b97f4a7c15ull * (counter.fetch_add(1) + 1);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;  // SplitMix64 finalizer
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return absl::StrFormat("%012x", x & 0xffffffffffffull);
}

// Every TensorProto of the model in a fixed order: each graph's initializers,
// then its nodes' tensor attributes and subgraphs (If/Loop/Scan bodies),
// depth first; then the nodes of the model's functions.
void CollectGraphTensors(const onnx::GraphProto& graph,
                         std::vector<const onnx::TensorProto*>* out);
void CollectNodeTensors(const onnx::NodeProto& node,
                        std::vector<const onnx::TensorProto*>* out) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.has_t()) out->push_back(&attribute.t());
    for (const onnx::TensorProto& t : attribute.tensors()) out->push_back(&t);
    if (attribute.has_g()) CollectGraphTensors(attribute.g(), out);
    for (const onnx::GraphProto& g : attribute.graphs()) {
      CollectGraphTensors(g, out);
    }
  }
}
void CollectGraphTensors(const onnx::GraphProto& graph,
                         std::vector<const onnx::TensorProto*>* out) {
  for (const onnx::TensorProto& t : graph.initializer()) out->push_back(&t);
  for (const onnx::NodeProto& node : graph.node())
    CollectNodeTensors(node, out);
}
std::vector<const onnx::TensorProto*> CollectTensors(
    const onnx::ModelProto& model) {
  std::vector<const onnx::TensorProto*> out;
  CollectGraphTensors(model.graph(), &out);
  for (const onnx::FunctionProto& function : model.functions()) {
    for (const onnx::NodeProto& node : function.node()) {
      CollectNodeTensors(node, &out);
    }
  }
  return out;
}

// The bytes a tensor's data takes in the sidecar, or nullopt when it cannot
// go there (strings, unknown types, data already external).
std::optional<uint64_t> ExternalizableBytes(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL ||
      t.external_data_size() > 0 ||
      t.data_type() == onnx::TensorProto::STRING) {
    return std::nullopt;
  }
  if (t.has_raw_data()) return t.raw_data().size();
  const int item = ir::DataTypeSize(t.data_type());
  if (item <= 0) return std::nullopt;
  uint64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  return n * static_cast<uint64_t>(item);
}

// Describes `path` for errors when it cannot be the output: a directory, a
// device, one of the inputs. Empty when it may be replaced (or is absent).
absl::Status CheckReplaceable(const std::string& path, const char* what,
                              const std::vector<std::string>& inputs) {
  return jaxpr::CheckOutputReplaceable(path, what, inputs);
}

std::string TooLargeMessage(const std::string& path, uint64_t bytes,
                            uint64_t limit, bool external) {
  return absl::StrCat(
      "cannot write '", path, "': the model is ", bytes, " bytes",
      external ? " even with every tensor of 1 KiB or more in the sidecar" : "",
      ", over protobuf's 2 GiB limit for one message (", limit, " bytes)",
      external ? ""
               : "; store the weights as ONNX external data with "
                 "--external_data=auto (WriteOptions::external_data)");
}

// Serializes straight into the file (no in-memory copy), deterministically.
absl::Status SerializeInto(const onnx::ModelProto& model,
                           ExclusiveTempFile& file,
                           const std::string& final_path) {
  google::protobuf::io::FileOutputStream stream(file.fd(), 1 << 20);
  bool ok;
  {
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    ok = model.SerializeToCodedStream(&coded) && !coded.HadError();
  }
  ok = stream.Flush() && ok;
  if (!ok) {
    const int error = stream.GetErrno();
    return absl::InternalError(absl::StrCat(
        "cannot write '", final_path, "' (temporary '", file.path(), "'): ",
        error != 0 ? ErrnoText(error) : "protobuf serialization failed"));
  }
  return file.SyncAndClose();
}

void SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);  // durability of the renames; best effort
  ::close(fd);
}

// Holds an exclusive flock on the target directory while a model and its
// sidecar are renamed, so concurrent writers of one output never pair one
// writer's model with another's sidecar.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& dir)
      : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ >= 0) {
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
    }
  }
  ~DirectoryLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }

 private:
  int fd_;
};

// Moves the data of `tensor` into `sidecar` at the next aligned offset and
// points the tensor there.
absl::Status Externalize(onnx::TensorProto* tensor, const std::string& location,
                         ExclusiveTempFile& sidecar, uint64_t* offset,
                         const DeferredData& deferred) {
  std::string owned;
  absl::string_view bytes;
  if (auto it = deferred.find(tensor); it != deferred.end()) {
    bytes = it->second;  // written straight from the caller's buffer
  } else if (tensor->has_raw_data()) {
    owned.swap(*tensor->mutable_raw_data());
    bytes = owned;
  } else {
    absl::StatusOr<ir::Tensor> decoded = ir::TensorFromProto(*tensor);
    if (!decoded.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot store tensor '", tensor->name(),
                       "' as external data: ", decoded.status().message()));
    }
    owned = std::string(decoded->bytes());
    bytes = owned;
  }
  const uint64_t aligned = (*offset + kExternalDataAlignment - 1) /
                           kExternalDataAlignment * kExternalDataAlignment;
  static const std::string kZeros(kExternalDataAlignment, '\0');
  J2O_RETURN_IF_ERROR(sidecar.Write(kZeros.data(), aligned - *offset));
  J2O_RETURN_IF_ERROR(sidecar.Write(bytes.data(), bytes.size()));
  *offset = aligned + bytes.size();
  tensor->clear_raw_data();
  tensor->clear_float_data();
  tensor->clear_double_data();
  tensor->clear_int32_data();
  tensor->clear_int64_data();
  tensor->clear_uint64_data();
  tensor->clear_external_data();
  auto add = [&](const char* key, const std::string& value) {
    onnx::StringStringEntryProto* entry = tensor->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", location);
  add("offset", absl::StrCat(aligned));
  add("length", absl::StrCat(bytes.size()));
  tensor->set_data_location(onnx::TensorProto::EXTERNAL);
  return absl::OkStatus();
}

struct Target {
  std::string path;
  std::string dir;
  std::string sidecar_name;
  std::string sidecar_path;
};

absl::StatusOr<Target> ResolveTarget(const std::string& path,
                                     const WriteOptions& options) {
  if (path.empty()) return absl::InvalidArgumentError("no output path given");
  const fs::path p(path);
  Target target;
  target.path = path;
  const std::string base = p.filename().string();
  if (base.empty() || base == "." || base == "..") {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write '", path, "': not a file name"));
  }
  target.dir = p.has_parent_path() ? p.parent_path().string() : ".";
  target.sidecar_name = options.external_data_name.empty()
                            ? base + ".data"
                            : options.external_data_name;
  const std::string& name = target.sidecar_name;
  if (name.find('/') != std::string::npos || name == "." || name == ".." ||
      name == base) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid external data name '", name,
        "': it must be a plain file name, other than the model's, for a file "
        "next to the model"));
  }
  target.sidecar_path = (fs::path(target.dir) / name).string();
  J2O_RETURN_IF_ERROR(
      CheckReplaceable(path, "the model", options.protected_inputs));
  return target;
}

// The model as it will be written, with the deferred data of the tensors
// that stay inline: spliced between serialized pieces of the proto (no copy
// of the data, see write_model_stream.h), or, for a model the splice does
// not handle, copied into the proto.
struct InlineModel {
  std::optional<SplicedModel> spliced;
  uint64_t size = 0;  // the bytes the model file will hold
};
InlineModel PrepareInline(
    onnx::ModelProto* model, const DeferredData& deferred,
    const absl::flat_hash_set<const onnx::TensorProto*>& gone) {
  DeferredData inline_data;
  for (const auto& [tensor, bytes] : deferred) {
    if (!gone.contains(tensor)) inline_data.emplace(tensor, bytes);
  }
  InlineModel out;
  if (!inline_data.empty()) {
    out.spliced = SpliceDeferredData(model, inline_data);
    if (out.spliced) {
      out.size = out.spliced->size;
      return out;
    }
    for (const auto& [tensor, bytes] : inline_data) {
      const_cast<onnx::TensorProto*>(tensor)->set_raw_data(bytes.data(),
                                                           bytes.size());
    }
  }
  out.size = model->ByteSizeLong();
  return out;
}

// Writes the spliced pieces: small ones gathered in a buffer, the deferred
// data straight from where it lies.
absl::Status WriteSpliced(const SplicedModel& model, ExclusiveTempFile& file) {
  constexpr size_t kBufferBytes = 1 << 20;
  constexpr size_t kDirectBytes = 64 << 10;
  std::string buffer;
  buffer.reserve(kBufferBytes);
  auto flush = [&]() -> absl::Status {
    absl::Status status = file.Write(buffer.data(), buffer.size());
    buffer.clear();
    return status;
  };
  for (absl::string_view piece : model.pieces) {
    if (piece.size() >= kDirectBytes) {
      J2O_RETURN_IF_ERROR(flush());
      J2O_RETURN_IF_ERROR(file.Write(piece.data(), piece.size()));
      continue;
    }
    buffer.append(piece.data(), piece.size());
    if (buffer.size() >= kBufferBytes) J2O_RETURN_IF_ERROR(flush());
  }
  J2O_RETURN_IF_ERROR(flush());
  return file.SyncAndClose();
}

absl::Status WriteInline(const InlineModel& prepared,
                         const onnx::ModelProto& model, ExclusiveTempFile& file,
                         const std::string& final_path) {
  if (prepared.spliced) return WriteSpliced(*prepared.spliced, file);
  return SerializeInto(model, file, final_path);
}

// `deferred` (only with `owned`, the rvalue model) lists tensors of the
// model whose data is held by the caller instead of the proto.
absl::Status WriteModelImpl(const onnx::ModelProto& model,
                            onnx::ModelProto* owned, const std::string& path,
                            const WriteOptions& options, uint64_t limit,
                            const DeferredData& deferred = {}) {
  CHECK(deferred.empty() || owned == &model);
  J2O_ASSIGN_OR_RETURN(Target target, ResolveTarget(path, options));
  const std::vector<const onnx::TensorProto*> tensors = CollectTensors(model);
  std::vector<size_t> candidates;  // indices into `tensors`
  std::vector<uint64_t> candidate_bytes;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (std::optional<uint64_t> bytes = ExternalizableBytes(*tensors[i])) {
      candidates.push_back(i);
      candidate_bytes.push_back(*bytes);
    }
  }
  uint64_t model_bytes = model.ByteSizeLong();
  for (const auto& [tensor, bytes] : deferred) {
    // raw_data's tag, length varint and bytes.
    model_bytes += 1 + 10 + bytes.size();
  }
  const std::vector<bool> chosen =
      ChooseExternalTensors(candidate_bytes, model_bytes, options.external_data,
                            options.external_data_threshold, limit);
  const bool external =
      std::find(chosen.begin(), chosen.end(), true) != chosen.end();

  if (!external) {
    if (model_bytes > limit) {
      return absl::InvalidArgumentError(
          TooLargeMessage(path, model_bytes, limit,
                          options.external_data != ExternalData::kNever &&
                              !candidates.empty()));
    }
    J2O_ASSIGN_OR_RETURN(ExclusiveTempFile file,
                         ExclusiveTempFile::Create(target.dir));
    if (deferred.empty()) {
      J2O_RETURN_IF_ERROR(SerializeInto(model, file, path));
    } else {
      const InlineModel prepared = PrepareInline(owned, deferred, {});
      J2O_RETURN_IF_ERROR(WriteInline(prepared, *owned, file, path));
    }
    J2O_RETURN_IF_ERROR(file.Commit(path));
    SyncDirectory(target.dir);
    return absl::OkStatus();
  }

  J2O_RETURN_IF_ERROR(CheckReplaceable(target.sidecar_path, "the sidecar",
                                       options.protected_inputs));
  // The sidecar's temporary first: if it cannot be created, even the rvalue
  // overload's model is still intact. (Past this point the rvalue overload
  // may leave its model with some tensors external.)
  J2O_ASSIGN_OR_RETURN(ExclusiveTempFile sidecar,
                       ExclusiveTempFile::Create(target.dir));
  onnx::ModelProto copy;
  if (owned == nullptr) {
    copy = model;
    owned = &copy;
  }
  // Same traversal on the model we own: same order, mutable pointers.
  std::vector<const onnx::TensorProto*> mutable_tensors =
      owned == &model ? tensors : CollectTensors(*owned);
  uint64_t offset = 0;
  absl::flat_hash_set<const onnx::TensorProto*> externalized;
  for (size_t k = 0; k < candidates.size(); ++k) {
    if (!chosen[k]) continue;
    auto* tensor =
        const_cast<onnx::TensorProto*>(mutable_tensors[candidates[k]]);
    J2O_RETURN_IF_ERROR(
        Externalize(tensor, target.sidecar_name, sidecar, &offset, deferred));
    externalized.insert(tensor);
  }
  const InlineModel prepared = PrepareInline(owned, deferred, externalized);
  J2O_RETURN_IF_ERROR(sidecar.SyncAndClose());
  if (prepared.size > limit) {
    return absl::InvalidArgumentError(
        TooLargeMessage(path, prepared.size, limit, /*external=*/true));
  }
  J2O_ASSIGN_OR_RETURN(ExclusiveTempFile file,
                       ExclusiveTempFile::Create(target.dir));
  J2O_RETURN_IF_ERROR(WriteInline(prepared, *owned, file, path));
  DirectoryLock lock(target.dir);
  absl::Status model_renamed;
  {
    // Until the model follows, a signal takes the new sidecar back out too;
    // the handled signals wait until the sidecar is registered (no window
    // where it is committed but a signal would leave it without its model).
    jaxpr::DeferCleanupSignals defer;
    J2O_RETURN_IF_ERROR(sidecar.Commit(target.sidecar_path));
    jaxpr::RegisterCleanupPath(target.sidecar_path);
    model_renamed = file.Commit(path);
    // The model cannot follow its sidecar: take the sidecar back out.
    if (!model_renamed.ok()) ::unlink(target.sidecar_path.c_str());
    jaxpr::ForgetCleanupPath(target.sidecar_path);
  }
  if (!model_renamed.ok()) {
    return model_renamed;
  }
  SyncDirectory(target.dir);
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteModelWithDeferredData(onnx::ModelProto&& model,
                                        const DeferredData& deferred,
                                        const std::string& path,
                                        const WriteOptions& options,
                                        uint64_t limit) {
  return WriteModelImpl(model, &model, path, options, limit, deferred);
}

absl::Status WriteModelWithLimit(const onnx::ModelProto& model,
                                 const std::string& path,
                                 const WriteOptions& options, uint64_t limit) {
  return WriteModelImpl(model, nullptr, path, options, limit);
}

std::vector<bool> ChooseExternalTensors(absl::Span<const uint64_t> tensor_bytes,
                                        uint64_t model_bytes, ExternalData mode,
                                        uint64_t threshold, uint64_t limit) {
  std::vector<bool> chosen(tensor_bytes.size(), false);
  if (mode == ExternalData::kNever) return chosen;
  uint64_t inline_bytes = model_bytes;
  auto take = [&](size_t i) {
    chosen[i] = true;
    const uint64_t saved = tensor_bytes[i] > kExternalEntryBytes
                               ? tensor_bytes[i] - kExternalEntryBytes
                               : 0;
    inline_bytes = inline_bytes > saved ? inline_bytes - saved : 0;
  };
  for (size_t i = 0; i < tensor_bytes.size(); ++i) {
    if (tensor_bytes[i] < kMinExternalBytes) continue;
    if (mode == ExternalData::kAlways || tensor_bytes[i] > threshold) take(i);
  }
  if (inline_bytes <= limit) return chosen;
  std::vector<size_t> order(tensor_bytes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return tensor_bytes[a] > tensor_bytes[b];
  });
  for (size_t i : order) {
    if (inline_bytes <= limit) break;
    if (!chosen[i] && tensor_bytes[i] >= kMinExternalBytes) take(i);
  }
  return chosen;
}

absl::StatusOr<ExclusiveTempFile> ExclusiveTempFile::Create(
    const std::string& dir) {
  int last_error = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string path =
        (fs::path(dir) / absl::StrCat(".j2o-", RandomSuffix(), ".tmp"))
            .string();
    // Registered before it exists, so no signal finds the file created but
    // not yet registered (INT/TERM/HUP/QUIT remove it); forgotten again if
    // the name is taken (O_EXCL: then it is another process's file).
    jaxpr::RegisterCleanupPath(path);
    const int fd =
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return ExclusiveTempFile(fd, std::move(path));
    last_error = errno;
    jaxpr::ForgetCleanupPath(path);
    if (last_error != EEXIST && last_error != EINTR) break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "cannot create temporary in '", dir, "': ", ErrnoText(last_error)));
}

ExclusiveTempFile::ExclusiveTempFile(ExclusiveTempFile&& other) noexcept
    : fd_(other.fd_),
      path_(std::move(other.path_)),
      committed_(other.committed_),
      written_(other.written_),
      flushed_(other.flushed_) {
  other.fd_ = -1;
  other.path_.clear();
  other.committed_ = true;
}

ExclusiveTempFile::~ExclusiveTempFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !path_.empty()) {
    ::unlink(path_.c_str());
    jaxpr::ForgetCleanupPath(path_);
  }
}

absl::Status ExclusiveTempFile::Write(const char* data, size_t size) {
  while (size > 0) {
    // Linux writes at most ~2 GiB per call.
    const ssize_t n = ::write(fd_, data, std::min<size_t>(size, 1u << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("cannot write temporary '", path_,
                                              "': ", ErrnoText(errno)));
    }
    data += n;
    size -= static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
  }
#if defined(__linux__)
  // Start the writeback of every full 16 MiB behind us now, without waiting
  // for it, so that the disk works while later weights are still being
  // copied and the final fsync has little left to do (a ViT-B sidecar's
  // fsync otherwise waited for all 330 MiB at the end). Advisory only: a
  // failure here is reported by fsync.
  constexpr uint64_t kWritebackChunk = 16u << 20;
  if (written_ - flushed_ >= kWritebackChunk) {
    const uint64_t end = written_ / kWritebackChunk * kWritebackChunk;
    ::sync_file_range(fd_, static_cast<off_t>(flushed_),
                      static_cast<off_t>(end - flushed_),
                      SYNC_FILE_RANGE_WRITE);
    flushed_ = end;
  }
#endif
  return absl::OkStatus();
}

absl::Status ExclusiveTempFile::SyncAndClose() {
  if (fd_ < 0) return absl::OkStatus();
  const int fd = fd_;
  fd_ = -1;
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    return absl::InternalError(absl::StrCat("cannot sync temporary '", path_,
                                            "': ", ErrnoText(error)));
  }
  if (::close(fd) != 0) {
    return absl::InternalError(absl::StrCat("cannot close temporary '", path_,
                                            "': ", ErrnoText(errno)));
  }
  return absl::OkStatus();
}

absl::Status ExclusiveTempFile::Commit(const std::string& final_path) {
  J2O_RETURN_IF_ERROR(SyncAndClose());
  if (::rename(path_.c_str(), final_path.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot rename '", path_, "' to '",
                                            final_path,
                                            "': ", ErrnoText(errno)));
  }
  committed_ = true;
  jaxpr::ForgetCleanupPath(path_);
  return absl::OkStatus();
}

absl::StatusOr<ScopedTempDir> ScopedTempDir::Create(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(
      (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp", "/", prefix, "XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot create a temporary directory '", pattern,
                     "': ", ErrnoText(errno)));
  }
  return ScopedTempDir(std::move(pattern));
}

ScopedTempDir::~ScopedTempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace api

absl::Status WriteModel(const onnx::ModelProto& model, const std::string& path,
                        const WriteOptions& options) {
  return api::WriteModelImpl(model, nullptr, path, options,
                             api::kProtobufSizeLimit);
}

absl::Status WriteModel(onnx::ModelProto&& model, const std::string& path,
                        const WriteOptions& options) {
  return api::WriteModelImpl(model, &model, path, options,
                             api::kProtobufSizeLimit);
}

absl::Status WriteModel(const onnx::ModelProto& model,
                        const std::string& path) {
  return WriteModel(model, path, WriteOptions());
}

}  // namespace jax2onnx
