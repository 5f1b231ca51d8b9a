#include "jaxpr/io/zip_map.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace jax2onnx::jaxpr {
namespace {

// Signatures and fixed sizes from the ZIP application note (APPNOTE.TXT
// 6.3.x, sections 4.3.7, 4.3.12, 4.3.14-4.3.16).
constexpr uint32_t kLocalHeaderSig = 0x04034b50;
constexpr uint32_t kCentralHeaderSig = 0x02014b50;
constexpr uint32_t kEndOfCentralDirSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint64_t kLocalHeaderSize = 30;
constexpr uint64_t kCentralHeaderSize = 46;
constexpr uint64_t kEndOfCentralDirSize = 22;
constexpr uint64_t kZip64LocatorSize = 20;
constexpr uint64_t kZip64EndSize = 56;
constexpr uint16_t kZip64ExtraId = 0x0001;

// `zip[offset, offset + n)` lies inside the file.
bool Inside(absl::Span<const uint8_t> zip, uint64_t offset, uint64_t n) {
  return offset <= zip.size() && n <= zip.size() - offset;
}

struct Directory {
  uint64_t offset = 0;
  uint64_t entries = 0;
};

std::optional<Directory> FindDirectory(absl::Span<const uint8_t> zip) {
  if (zip.size() < kEndOfCentralDirSize) return std::nullopt;
  // The end record sits at the very end unless a comment (<= 64 KiB)
  // follows it; scan backwards for its signature.
  const uint64_t last = zip.size() - kEndOfCentralDirSize;
  const uint64_t first = last > 0xFFFF ? last - 0xFFFF : 0;
  for (uint64_t pos = last + 1; pos-- > first;) {
    const uint8_t* p = zip.data() + pos;
    if (ReadLittleEndian(p, 4) != kEndOfCentralDirSig) continue;
    if (pos + kEndOfCentralDirSize + ReadLittleEndian(p + 20, 2) != zip.size())
      continue;
    Directory dir{ReadLittleEndian(p + 16, 4), ReadLittleEndian(p + 10, 2)};
    if (dir.offset != 0xFFFFFFFF && dir.entries != 0xFFFF) return dir;
    // zip64: the locator precedes the end record and points at the zip64
    // end record, which has the 64-bit count and offset.
    if (pos < kZip64LocatorSize) return std::nullopt;
    const uint8_t* loc = p - kZip64LocatorSize;
    if (ReadLittleEndian(loc, 4) != kZip64LocatorSig) return std::nullopt;
    const uint64_t end64 = ReadLittleEndian(loc + 8, 8);
    if (!Inside(zip, end64, kZip64EndSize) ||
        ReadLittleEndian(zip.data() + end64, 4) != kZip64EndSig) {
      return std::nullopt;
    }
    return Directory{ReadLittleEndian(zip.data() + end64 + 48, 8),
                     ReadLittleEndian(zip.data() + end64 + 32, 8)};
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const MappedFile>> MappedFile::Open(
    const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    ::close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": not a non-empty regular file"));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);  // the mapping keeps the file open
  if (data == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot map ", path, ": ", std::strerror(map_errno)));
  }
  // Weights are mostly read front to back (written out or converted once).
  ::madvise(data, size, MADV_SEQUENTIAL);
  return std::shared_ptr<const MappedFile>(
      new MappedFile(static_cast<const uint8_t*>(data), size));
}

MappedFile::~MappedFile() { ::munmap(const_cast<uint8_t*>(data_), size_); }

void MappedFile::ReleasePages(uint64_t offset, uint64_t size) const {
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (page_size <= 0 || offset > size_ || size > size_ - offset) return;
  const uint64_t page = static_cast<uint64_t>(page_size);
  // data_ is page-aligned (mmap), so offsets round like addresses.
  const uint64_t begin = (offset + page - 1) / page * page;
  const uint64_t end = (offset + size) / page * page;
  if (end <= begin) return;
  ::madvise(const_cast<uint8_t*>(data_) + begin, end - begin, MADV_DONTNEED);
}

std::optional<std::vector<std::optional<StoredZipEntry>>> ListStoredZipEntries(
    absl::Span<const uint8_t> zip) {
  std::optional<Directory> dir = FindDirectory(zip);
  if (!dir.has_value()) return std::nullopt;
  std::vector<std::optional<StoredZipEntry>> out;
  uint64_t pos = dir->offset;
  for (uint64_t i = 0; i < dir->entries; ++i) {
    if (!Inside(zip, pos, kCentralHeaderSize)) return std::nullopt;
    const uint8_t* p = zip.data() + pos;
    if (ReadLittleEndian(p, 4) != kCentralHeaderSig) return std::nullopt;
    const uint64_t flags = ReadLittleEndian(p + 8, 2);
    const uint64_t method = ReadLittleEndian(p + 10, 2);
    const uint32_t crc = static_cast<uint32_t>(ReadLittleEndian(p + 16, 4));
    uint64_t compressed = ReadLittleEndian(p + 20, 4);
    uint64_t size = ReadLittleEndian(p + 24, 4);
    const uint64_t name_len = ReadLittleEndian(p + 28, 2);
    const uint64_t extra_len = ReadLittleEndian(p + 30, 2);
    const uint64_t comment_len = ReadLittleEndian(p + 32, 2);
    uint64_t local = ReadLittleEndian(p + 42, 4);
    const uint64_t record =
        kCentralHeaderSize + name_len + extra_len + comment_len;
    if (!Inside(zip, pos, record)) return std::nullopt;
    std::string name(reinterpret_cast<const char*>(p + kCentralHeaderSize),
                     name_len);
    // zip64 extra field: the 64-bit values of the fields saturated at
    // 0xFFFFFFFF, in the order uncompressed, compressed, local offset.
    const uint8_t* extra = p + kCentralHeaderSize + name_len;
    for (uint64_t e = 0; e + 4 <= extra_len;) {
      const uint64_t id = ReadLittleEndian(extra + e, 2);
      const uint64_t len = ReadLittleEndian(extra + e + 2, 2);
      if (e + 4 + len > extra_len) return std::nullopt;
      if (id == kZip64ExtraId) {
        const uint8_t* q = extra + e + 4;
        uint64_t left = len;
        auto take = [&](uint64_t* field) {
          if (*field != 0xFFFFFFFF) return true;
          if (left < 8) return false;
          *field = ReadLittleEndian(q, 8);
          q += 8;
          left -= 8;
          return true;
        };
        if (!take(&size) || !take(&compressed) || !take(&local)) {
          return std::nullopt;
        }
      }
      e += 4 + len;
    }
    pos += record;
    std::optional<StoredZipEntry>& slot = out.emplace_back();
    const bool encrypted = (flags & 1) != 0;
    if (method != 0 || encrypted || compressed != size) continue;
    if (!Inside(zip, local, kLocalHeaderSize)) continue;
    const uint8_t* lh = zip.data() + local;
    if (ReadLittleEndian(lh, 4) != kLocalHeaderSig) continue;
    const uint64_t data_offset = local + kLocalHeaderSize +
                                 ReadLittleEndian(lh + 26, 2) +
                                 ReadLittleEndian(lh + 28, 2);
    if (!Inside(zip, data_offset, size)) continue;
    slot = StoredZipEntry{std::move(name), data_offset, size, crc};
  }
  return out;
}

}  // namespace jax2onnx::jaxpr
