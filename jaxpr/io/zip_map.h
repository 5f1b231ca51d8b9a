// Memory-mapped zip archives: where the entries stored without compression
// lie inside the file, so an npz reader can borrow their bytes in place
// instead of copying them (zero-copy weights). Only the structures needed to
// locate stored entries are read (end of central directory, zip64 records,
// central directory, local headers); anything unusual makes the caller fall
// back to libzip, which reports errors precisely.
#ifndef JAX2ONNX_JAXPR_IO_ZIP_MAP_H_
#define JAX2ONNX_JAXPR_IO_ZIP_MAP_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace jax2onnx::jaxpr {

// The n-byte (n <= 8) little-endian unsigned integer at p (zip and npy
// headers).
inline uint64_t ReadLittleEndian(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A whole file mapped read-only and private; unmapped when the last owner
// goes. Arrays borrowing from it hold it through a shared_ptr.
class MappedFile {
 public:
  // An error for a file that cannot be opened, is not a regular file, is
  // empty or cannot be mapped.
  static absl::StatusOr<std::shared_ptr<const MappedFile>> Open(
      const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  absl::Span<const uint8_t> bytes() const { return {data_, size_}; }

  // Drops the pages lying wholly inside [offset, offset + size) from this
  // process's memory (madvise MADV_DONTNEED) once their bytes were copied
  // out: the copy then is the only resident one. Contents are unchanged (a
  // later read faults the file's pages in again); a no-op where unsupported.
  void ReleasePages(uint64_t offset, uint64_t size) const;

 private:
  MappedFile(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  const uint8_t* data_;
  size_t size_;
};

// An entry stored without compression (method 0, not encrypted) whose data
// lies wholly inside the file.
struct StoredZipEntry {
  std::string name;
  uint64_t data_offset = 0;  // from the start of the file
  uint64_t size = 0;
  uint32_t crc32 = 0;  // as the central directory declares it
};

// One element per central-directory entry, in directory order (the order
// libzip indexes them): the stored entry, or nullopt for an entry that is
// compressed, encrypted or not locatable. nullopt overall when the archive's
// directory cannot be walked.
std::optional<std::vector<std::optional<StoredZipEntry>>> ListStoredZipEntries(
    absl::Span<const uint8_t> zip);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_IO_ZIP_MAP_H_
