// numpy .npy parsing/serialization and .npz archives through libzip. The
// header is a Python dict literal; we parse the subset numpy writes (and
// common hand-written variants) with a tiny tokenizer instead of trusting
// any layout, so malformed files give errors rather than crashes.
#include "jaxpr/io/npy.h"

#include <fcntl.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"
#include "jaxpr/io/crc32.h"
#include "jaxpr/io/output_guard.h"
#include "jaxpr/io/zip_map.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx::jaxpr {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// Refuse archive entries beyond this size: protects against zip headers
// that claim absurd sizes (a real conformance input is far smaller).
constexpr uint64_t kMaxEntryBytes = uint64_t{16} << 30;

absl::Status Invalid(absl::string_view what, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", message));
}

// Deflate expands at most 1032:1 (RFC 1951: a 258-byte match per 2 bits at
// best), a stored entry not at all. A declared size beyond that is a lie
// (a corrupt header or a decompression bomb); one beyond the machine's
// physical memory could not be held even if real.
constexpr uint64_t kMaxDeflateRatio = 1032;

absl::Status CheckDeclaredEntrySize(const zip_stat_t& st,
                                    absl::string_view what) {
  if ((st.valid & ZIP_STAT_COMP_SIZE) && (st.valid & ZIP_STAT_COMP_METHOD) &&
      (st.comp_method == ZIP_CM_STORE || st.comp_method == ZIP_CM_DEFLATE)) {
    // + 64: the deflate stream's own framing on tiny entries.
    const uint64_t most = st.comp_method == ZIP_CM_STORE
                              ? st.comp_size
                              : (st.comp_size + 64) * kMaxDeflateRatio;
    if (st.size > most) {
      return Invalid(
          what, absl::StrCat("declares ", st.size, " bytes from ", st.comp_size,
                             " compressed bytes, more than ",
                             st.comp_method == ZIP_CM_STORE
                                 ? "a stored entry holds"
                                 : "deflate can expand to (1032:1)",
                             "; corrupt or a decompression bomb"));
    }
  }
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0 &&
      st.size >
          static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, ": declares ", st.size, " bytes, more than this machine's ",
        static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size),
        " bytes of memory"));
  }
  return absl::OkStatus();
}

bool HostIsLittleEndian() {
  const uint16_t probe = 1;
  uint8_t first;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

// ---- Header dict tokenizer -------------------------------------------------

// A parsed header value: a string, a bool, or a tuple of ints. Anything else
// (lists for structured dtypes, nested dicts) is rejected.
struct HeaderValue {
  enum class Kind { kString, kBool, kIntTuple } kind = Kind::kString;
  std::string str;
  bool boolean = false;
  std::vector<int64_t> ints;
};

class HeaderParser {
 public:
  explicit HeaderParser(absl::string_view text) : text_(text) {}

  absl::Status Parse(std::vector<std::pair<std::string, HeaderValue>>* out) {
    SkipSpace();
    if (!Consume('{')) return Error("header does not start with '{'");
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      std::string key;
      if (auto s = ParseString(&key); !s.ok()) return s;
      SkipSpace();
      if (!Consume(':')) return Error("expected ':' after key");
      SkipSpace();
      HeaderValue value;
      if (auto s = ParseValue(&value); !s.ok()) return s;
      out->emplace_back(std::move(key), std::move(value));
      SkipSpace();
      if (Consume(',')) continue;
      SkipSpace();
      if (Consume('}')) break;
      return Error("expected ',' or '}'");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("trailing characters after '}'");
    return absl::OkStatus();
  }

 private:
  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat("bad header: ", message, " at offset ", pos_, " in '",
                     absl::CEscape(text_.substr(0, 200)), "'"));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(text_[pos_])) ++pos_;
  }
  bool Consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  absl::Status ParseString(std::string* out) {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      return Error("expected a quoted string");
    }
    const char quote = text_[pos_++];
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') return Error("escapes are not supported");
      out->push_back(text_[pos_++]);
    }
    if (!Consume(quote)) return Error("unterminated string");
    return absl::OkStatus();
  }
  absl::Status ParseInt(int64_t* out) {
    const size_t start = pos_;
    while (pos_ < text_.size() && absl::ascii_isdigit(text_[pos_])) ++pos_;
    if (pos_ == start) return Error("expected a non-negative integer");
    if (!absl::SimpleAtoi(text_.substr(start, pos_ - start), out)) {
      return Error("integer out of range");
    }
    Consume('L');  // Python 2 long suffix, still found in old files
    return absl::OkStatus();
  }
  absl::Status ParseValue(HeaderValue* out) {
    if (pos_ >= text_.size()) return Error("expected a value");
    const char c = text_[pos_];
    if (c == '\'' || c == '"') {
      out->kind = HeaderValue::Kind::kString;
      return ParseString(&out->str);
    }
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      out->kind = HeaderValue::Kind::kBool;
      out->boolean = true;
      return absl::OkStatus();
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      out->kind = HeaderValue::Kind::kBool;
      out->boolean = false;
      return absl::OkStatus();
    }
    if (c == '(') {
      ++pos_;
      out->kind = HeaderValue::Kind::kIntTuple;
      while (true) {
        SkipSpace();
        if (Consume(')')) break;
        int64_t v;
        if (auto s = ParseInt(&v); !s.ok()) return s;
        out->ints.push_back(v);
        SkipSpace();
        if (Consume(',')) continue;
        SkipSpace();
        if (Consume(')')) break;
        return Error("expected ',' or ')' in shape");
      }
      return absl::OkStatus();
    }
    if (c == '[') return Error("structured dtypes (lists) are not supported");
    return Error("unsupported value");
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

// ---- descr <-> dtype --------------------------------------------------------

struct Descr {
  DType dtype = DType::kInvalid;
  bool swap = false;  // data is in the other byte order than the host
};

absl::StatusOr<Descr> ParseDescr(absl::string_view descr) {
  if (descr.empty()) return absl::InvalidArgumentError("empty descr");
  char order = '|';
  absl::string_view rest = descr;
  if (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' ||
      descr[0] == '=') {
    order = descr[0];
    rest = descr.substr(1);
  }
  DType dtype = DType::kInvalid;
  if (rest == "b1" || rest == "?") {
    dtype = DType::kBool;
  } else if (rest == "i1" || rest == "b") {
    dtype = DType::kI8;
  } else if (rest == "i2") {
    dtype = DType::kI16;
  } else if (rest == "i4") {
    dtype = DType::kI32;
  } else if (rest == "i8") {
    dtype = DType::kI64;
  } else if (rest == "u1" || rest == "B") {
    dtype = DType::kU8;
  } else if (rest == "u2") {
    dtype = DType::kU16;
  } else if (rest == "u4") {
    dtype = DType::kU32;
  } else if (rest == "u8") {
    dtype = DType::kU64;
  } else if (rest == "f2" || rest == "e") {
    dtype = DType::kF16;
  } else if (rest == "f4") {
    dtype = DType::kF32;
  } else if (rest == "f8") {
    dtype = DType::kF64;
  } else if (rest == "c8") {
    dtype = DType::kC64;
  } else if (rest == "c16") {
    dtype = DType::kC128;
  } else if (rest == "V2") {
    // ml_dtypes.bfloat16 has no numpy typestr; np.save writes it as a
    // 2-byte void, and no other 2-byte void type occurs in JAX programs.
    dtype = DType::kBF16;
  } else if (rest == "V1") {
    // np.save writes every one-byte ml_dtypes type but float8_e5m2 as a
    // one-byte void (docs/dtypes.md): the file cannot tell them apart. They
    // load as f8_e4m3fn, and a bundle retypes them to the narrow dtype of
    // the aval they feed (RetypeOneByteVoid).
    dtype = NarrowDType(NarrowFormat::kF8E4M3FN);
  } else if (rest == "f1") {
    // ml_dtypes gives float8_e5m2 kind 'f': np.save writes `<f1`.
    dtype = NarrowDType(NarrowFormat::kF8E5M2);
  } else if (!rest.empty() && rest[0] == 'O') {
    return absl::InvalidArgumentError(
        absl::StrCat("object arrays (descr '", descr,
                     "') are not supported: they need Python pickles"));
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported descr '", descr, "'"));
  }
  const int item = ItemSize(dtype);
  bool swap = false;
  if (order == '<') {
    swap = !HostIsLittleEndian();
  } else if (order == '>') {
    swap = HostIsLittleEndian();
  } else if (order == '|' && item > 1 && dtype != DType::kBF16) {
    return absl::InvalidArgumentError(absl::StrCat(
        "descr '", descr, "' has no byte order for a multi-byte type"));
  }
  return Descr{dtype, swap && item > 1};
}

std::string DescrOf(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return "|b1";
    case DType::kI8:
      return "|i1";
    case DType::kI16:
      return "<i2";
    case DType::kI32:
      return "<i4";
    case DType::kI64:
      return "<i8";
    case DType::kU8:
      return "|u1";
    case DType::kU16:
      return "<u2";
    case DType::kU32:
      return "<u4";
    case DType::kU64:
      return "<u8";
    case DType::kF16:
      return "<f2";
    case DType::kBF16:
      return "<V2";
    case DType::kF32:
      return "<f4";
    case DType::kF64:
      return "<f8";
    case DType::kC64:
      return "<c8";
    case DType::kC128:
      return "<c16";
    default:
      // As np.save writes ml_dtypes arrays (see ParseDescr).
      if (dtype == NarrowDType(NarrowFormat::kF8E5M2)) return "<f1";
      if (IsNarrow(dtype)) return "<V1";
      return "";
  }
}

// Reverses the bytes of each `unit`-byte group.
void SwapBytes(uint8_t* data, size_t num_bytes, int unit) {
  for (size_t i = 0; i + unit <= num_bytes; i += unit) {
    std::reverse(data + i, data + i + unit);
  }
}

// Bytes per scalar component: complex numbers swap per real/imag part.
int SwapUnit(DType dtype) {
  return IsComplex(dtype) ? ItemSize(dtype) / 2 : ItemSize(dtype);
}

// Fortran (column-major) bytes to row-major bytes.
std::vector<uint8_t> FortranToC(const uint8_t* src,
                                const std::vector<int64_t>& shape, int item) {
  const int64_t n = NumElements(shape);
  std::vector<uint8_t> out(static_cast<size_t>(n) * item);
  if (n == 0) return out;
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> f_strides(rank, 1);
  for (int d = 1; d < rank; ++d) f_strides[d] = f_strides[d - 1] * shape[d - 1];
  std::vector<int64_t> index(rank, 0);
  for (int64_t c = 0; c < n; ++c) {
    int64_t f = 0;
    for (int d = 0; d < rank; ++d) f += index[d] * f_strides[d];
    std::memcpy(out.data() + c * item, src + f * item, item);
    // Row-major increment: last dimension fastest.
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// Writes `contents` to `path` through a temporary file in the same folder
// and a rename, so readers never see a half-written file.
// A temporary next to `path`, created with O_EXCL so it never replaces a file
// of the user's or another process's temporary. The fd is open for writing.
absl::StatusOr<std::pair<std::string, int>> CreateTempFor(
    const std::string& path) {
  static std::atomic<int> counter{0};
  for (int attempt = 0;; ++attempt) {
    std::string tmp = absl::StrCat(path, ".tmp-", getpid(), "-", counter++);
    // Registered before it exists (INT/TERM/HUP/QUIT remove it), so no
    // signal finds it created but untracked; forgotten if the name is taken.
    RegisterCleanupPath(tmp);
    const int fd =
        open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return std::make_pair(std::move(tmp), fd);
    const int err = errno;
    ForgetCleanupPath(tmp);
    if (err != EEXIST || attempt >= 100) {
      return absl::InternalError(
          absl::StrCat("cannot create ", tmp, ": ", std::strerror(err)));
    }
  }
}

// Removes a temporary of CreateTempFor and forgets it for signal cleanup.
void RemoveTemp(const std::string& tmp) {
  std::remove(tmp.c_str());
  ForgetCleanupPath(tmp);
}

absl::Status RenameInto(const std::string& tmp, const std::string& path) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    RemoveTemp(tmp);
    return absl::InternalError(absl::StrCat("cannot rename ", tmp, " to ", path,
                                            ": ", std::strerror(err)));
  }
  ForgetCleanupPath(tmp);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents) {
  J2O_ASSIGN_OR_RETURN(auto created, CreateTempFor(path));
  const auto& [tmp, fd] = created;
  const char* data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    const ssize_t n = write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      close(fd);
      RemoveTemp(tmp);
      return absl::InternalError(
          absl::StrCat("cannot write ", tmp, ": ", std::strerror(err)));
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    const int err = errno;
    RemoveTemp(tmp);
    return absl::InternalError(
        absl::StrCat("cannot write ", tmp, ": ", std::strerror(err)));
  }
  return RenameInto(tmp, path);
}

std::string ZipErrorString(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

}  // namespace

namespace {

// Where an .npy file's data lies and how to read it.
struct NpyLayout {
  DType dtype;
  std::vector<int64_t> shape;
  bool fortran = false;
  bool swap = false;
  size_t data_offset = 0;   // header end
  uint64_t data_bytes = 0;  // exactly the file's remaining bytes
};

// Parses the header in `bytes`, a prefix of an .npy file of `total_size`
// bytes (the whole file when they are equal), and checks the data size
// against `total_size`.
absl::StatusOr<NpyLayout> ParseNpyLayout(absl::string_view bytes,
                                         uint64_t total_size,
                                         absl::string_view what) {
  if (bytes.size() < kMagicLen + 2 ||
      bytes.substr(0, kMagicLen) != absl::string_view(kMagic, kMagicLen)) {
    return Invalid(what, "not a .npy file (bad magic)");
  }
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  const int major = u[6];
  size_t header_start;
  uint32_t header_len;
  if (major == 1) {
    if (bytes.size() < 10) return Invalid(what, "truncated header length");
    header_len = static_cast<uint32_t>(ReadLittleEndian(u + 8, 2));
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Invalid(what, "truncated header length");
    header_len = static_cast<uint32_t>(ReadLittleEndian(u + 8, 4));
    header_start = 12;
  } else {
    return Invalid(what, absl::StrCat("unsupported .npy format version ", major,
                                      ".", static_cast<int>(u[7])));
  }
  if (bytes.size() - header_start < header_len) {
    return Invalid(
        what, absl::StrCat("truncated header: needs ", header_len,
                           " bytes, file has ", bytes.size() - header_start));
  }
  const absl::string_view header = bytes.substr(header_start, header_len);
  std::vector<std::pair<std::string, HeaderValue>> entries;
  if (auto s = HeaderParser(header).Parse(&entries); !s.ok()) {
    return Invalid(what, s.message());
  }
  const HeaderValue* descr = nullptr;
  const HeaderValue* fortran = nullptr;
  const HeaderValue* shape_value = nullptr;
  for (const auto& [key, value] : entries) {
    if (key == "descr") descr = &value;
    if (key == "fortran_order") fortran = &value;
    if (key == "shape") shape_value = &value;
  }
  if (descr == nullptr || fortran == nullptr || shape_value == nullptr) {
    return Invalid(what,
                   "bad header: needs 'descr', 'fortran_order' and 'shape'");
  }
  if (descr->kind != HeaderValue::Kind::kString) {
    return Invalid(what,
                   "bad header: 'descr' is not a string "
                   "(structured dtypes are not supported)");
  }
  if (fortran->kind != HeaderValue::Kind::kBool) {
    return Invalid(what, "bad header: 'fortran_order' is not True/False");
  }
  if (shape_value->kind != HeaderValue::Kind::kIntTuple) {
    return Invalid(what, "bad header: 'shape' is not a tuple of ints");
  }
  auto parsed_descr = ParseDescr(descr->str);
  if (!parsed_descr.ok()) return Invalid(what, parsed_descr.status().message());
  const DType dtype = parsed_descr->dtype;
  const std::vector<int64_t>& shape = shape_value->ints;
  const uint64_t item = ItemSize(dtype);
  const uint64_t available = total_size - header_start - header_len;
  // Overflow-safe byte count: a shape whose bytes cannot fit the file is
  // reported as truncated, never allocated.
  uint64_t count = 1;
  bool overflow = false;
  bool zero = false;
  for (int64_t d : shape) zero |= d == 0;
  for (int64_t d : shape) {
    overflow |= __builtin_mul_overflow(count, static_cast<uint64_t>(d), &count);
  }
  uint64_t needed = 0;
  if (zero) {
    count = 0;
    overflow = false;
  }
  overflow |= __builtin_mul_overflow(count, item, &needed);
  if (overflow || needed > available) {
    return Invalid(
        what, absl::StrCat("truncated data: shape (", absl::StrJoin(shape, ","),
                           ") of ", descr->str, " needs more than the ",
                           available, " bytes present"));
  }
  if (needed != available) {
    return Invalid(what, absl::StrCat("data size mismatch: shape (",
                                      absl::StrJoin(shape, ","), ") of ",
                                      descr->str, " needs ", needed,
                                      " bytes but ", available, " follow"));
  }
  NpyLayout layout;
  layout.dtype = dtype;
  layout.shape = shape;
  layout.fortran = fortran->boolean && shape.size() > 1;
  layout.swap = parsed_descr->swap;
  layout.data_offset = header_start + header_len;
  layout.data_bytes = needed;
  return layout;
}

// `array` holds the file's data as stored: reorders Fortran data, swaps
// big-endian data and canonicalizes bools.
void FinishNpy(const NpyLayout& layout, Array* array) {
  if (layout.fortran) {
    array->bytes() = FortranToC(array->data(), layout.shape,
                                static_cast<int>(ItemSize(layout.dtype)));
  }
  if (layout.swap) {
    SwapBytes(array->data(), array->num_bytes(), SwapUnit(layout.dtype));
  }
  if (layout.dtype == DType::kBool) {
    // numpy reads any nonzero byte as True; keep the canonical 0/1 form.
    for (uint8_t& b : array->bytes()) b = b != 0;
  }
}

// Reads one npz entry of `declared` bytes straight into its array's buffer
// (stored entries are copied once, deflated ones inflated once), instead of
// collecting the entry in a growing string and copying it again. Returns
// nullopt when the header does not fit the first chunk: the caller then reads
// the whole entry.
// The policy's header check for entry `name` (OK when it has none).
absl::Status CheckHeader(const NpzReadPolicy& policy, absl::string_view name,
                         const NpyLayout& layout) {
  if (!policy.check_header) return absl::OkStatus();
  return policy.check_header(name, layout.dtype, layout.shape);
}

std::optional<absl::StatusOr<Array>> ReadNpzEntryInPlace(
    zip_file_t* file, uint64_t declared, const std::string& what,
    const NpzReadPolicy& policy, absl::string_view name) {
  std::string prefix(std::min<uint64_t>(declared, 1 << 16), '\0');
  uint64_t got = 0;
  while (got < prefix.size()) {
    const zip_int64_t n =
        zip_fread(file, prefix.data() + got, prefix.size() - got);
    if (n <= 0) return std::nullopt;
    got += static_cast<uint64_t>(n);
  }
  absl::StatusOr<NpyLayout> layout = ParseNpyLayout(prefix, declared, what);
  if (!layout.ok() || layout->data_offset > prefix.size()) return std::nullopt;
  // Before the allocation: a header claiming more than its binder holds is
  // refused without inflating anything.
  if (absl::Status s = CheckHeader(policy, name, *layout); !s.ok()) {
    return absl::StatusOr<Array>(s);
  }
  Array array(layout->dtype, layout->shape);
  uint8_t* data = array.data();
  const uint64_t head = prefix.size() - layout->data_offset;
  if (head > 0) std::memcpy(data, prefix.data() + layout->data_offset, head);
  prefix = std::string();
  uint64_t filled = head;
  while (filled < layout->data_bytes) {
    const uint64_t want =
        std::min<uint64_t>(layout->data_bytes - filled, uint64_t{1} << 30);
    const zip_int64_t n = zip_fread(file, data + filled, want);
    if (n < 0) {
      return absl::StatusOr<Array>(absl::InvalidArgumentError(absl::StrCat(
          what,
          ": corrupt data: ", zip_error_strerror(zip_file_get_error(file)))));
    }
    if (n == 0) {
      return absl::StatusOr<Array>(absl::InvalidArgumentError(
          absl::StrCat(what, ": holds ", layout->data_offset + filled,
                       " bytes but declares ", declared)));
    }
    filled += static_cast<uint64_t>(n);
  }
  char probe;
  const zip_int64_t extra = zip_fread(file, &probe, 1);
  if (extra != 0) {
    return absl::StatusOr<Array>(absl::InvalidArgumentError(
        extra < 0 ? absl::StrCat(what, ": corrupt data: ",
                                 zip_error_strerror(zip_file_get_error(file)))
                  : absl::StrCat(what, ": holds more than the ", declared,
                                 " bytes it declares")));
  }
  FinishNpy(*layout, &array);
  return absl::StatusOr<Array>(std::move(array));
}

// Copies a stored npz entry that cannot be borrowed as is (Fortran order,
// byte-swapped or bool data to canonicalize) out of the mapped file: one
// pass of the fast CRC and memcpy over the mapped bytes, instead of
// libzip's read (zlib's CRC and a second copy through its buffers). The
// copied pages of the map are released, so the data stays resident once.
absl::StatusOr<Array> CopyStoredNpzEntry(const MappedFile& map,
                                         const StoredZipEntry& entry,
                                         const NpyLayout& layout,
                                         const std::string& what) {
  const uint8_t* start = map.bytes().data() + entry.data_offset;
  Array array(layout.dtype, layout.shape);
  // The CRC and the copy in one pass: each chunk is copied right after the
  // CRC has read it, while it is still in the cache.
  constexpr uint64_t kChunk = 256 << 10;
  uint32_t crc = Crc32(0, start, layout.data_offset);
  uint8_t* to = array.data();
  for (uint64_t done = 0; done < layout.data_bytes;) {
    const uint64_t n = std::min(kChunk, layout.data_bytes - done);
    const uint8_t* from = start + layout.data_offset + done;
    crc = Crc32(crc, from, n);
    std::memcpy(to + done, from, n);
    done += n;
  }
  const uint64_t tail = entry.size - layout.data_offset - layout.data_bytes;
  crc = Crc32(crc, start + layout.data_offset + layout.data_bytes, tail);
  if (crc != entry.crc32) {
    return Invalid(what,
                   "corrupt data: CRC mismatch (the zip entry's CRC-32 "
                   "does not match its bytes)");
  }
  map.ReleasePages(entry.data_offset, entry.size);
  FinishNpy(layout, &array);
  return array;
}

// Borrows a stored (uncompressed) npz entry in place from the mapped file:
// no copy, the map stays alive while the array does. The entry's CRC is
// checked first (one pass over the bytes, as libzip would). Data not
// aligned to its element size (about half the entries np.savez writes) is
// borrowed too: the ONNX writer reads it as bytes, and typed access copies
// it then (Array::Borrowed). An entry that cannot be used as is (Fortran
// order, byte-swapped, bools to canonicalize) is copied out of the map.
// Returns nullopt for a header the libzip path should report on.
std::optional<absl::StatusOr<Array>> BorrowStoredNpzEntry(
    const std::shared_ptr<const MappedFile>& map, const StoredZipEntry& entry,
    const std::string& what, const NpzReadPolicy& policy,
    absl::string_view name) {
  const uint8_t* start = map->bytes().data() + entry.data_offset;
  absl::StatusOr<NpyLayout> layout = ParseNpyLayout(
      absl::string_view(reinterpret_cast<const char*>(start), entry.size),
      entry.size, what);
  if (!layout.ok()) return std::nullopt;
  if (absl::Status s = CheckHeader(policy, name, *layout); !s.ok()) {
    return absl::StatusOr<Array>(s);
  }
  const uint8_t* data = start + layout->data_offset;
  if (layout->fortran || layout->swap || layout->dtype == DType::kBool) {
    return CopyStoredNpzEntry(*map, entry, *layout, what);
  }
  if (Crc32(0, start, entry.size) != entry.crc32) {
    return absl::StatusOr<Array>(
        Invalid(what,
                "corrupt data: CRC mismatch (the zip entry's CRC-32 "
                "does not match its bytes)"));
  }
  return absl::StatusOr<Array>(Array::Borrowed(
      layout->dtype, layout->shape,
      absl::Span<const uint8_t>(data, layout->data_bytes), map));
}

}  // namespace

absl::StatusOr<Array> ParseNpy(absl::string_view bytes,
                               absl::string_view what) {
  J2O_ASSIGN_OR_RETURN(NpyLayout layout,
                       ParseNpyLayout(bytes, bytes.size(), what));
  Array array(layout.dtype, layout.shape);
  if (layout.data_bytes > 0) {
    std::memcpy(array.data(), bytes.data() + layout.data_offset,
                layout.data_bytes);
  }
  FinishNpy(layout, &array);
  return array;
}

std::string SerializeNpy(const Array& array) {
  std::string descr = DescrOf(array.dtype());
  CHECK(!descr.empty()) << "SerializeNpy: dtype " << ShortName(array.dtype())
                        << " has no numpy spelling";
  std::string shape = "(";
  for (size_t i = 0; i < array.shape().size(); ++i) {
    absl::StrAppend(&shape, i > 0 ? ", " : "", array.shape()[i]);
  }
  if (array.shape().size() == 1) shape += ",";
  shape += ")";
  std::string header =
      absl::StrCat("{'descr': '", descr,
                   "', 'fortran_order': False, 'shape': ", shape, ", }");
  // numpy pads so the data starts on a 64-byte boundary, ending in '\n'.
  size_t prefix = kMagicLen + 2 + 2;
  int major = 1;
  if (header.size() + 1 + prefix > 65535 + prefix) {
    major = 2;
    prefix = kMagicLen + 2 + 4;
  }
  const size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string out(kMagic, kMagicLen);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  const uint32_t len = static_cast<uint32_t>(header.size());
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>((len >> 8) & 0xff));
  if (major == 2) {
    out.push_back(static_cast<char>((len >> 16) & 0xff));
    out.push_back(static_cast<char>((len >> 24) & 0xff));
  }
  out += header;
  const size_t data_start = out.size();
  out.append(reinterpret_cast<const char*>(array.data()), array.num_bytes());
  if (!HostIsLittleEndian() && ItemSize(array.dtype()) > 1) {
    SwapBytes(reinterpret_cast<uint8_t*>(out.data() + data_start),
              array.num_bytes(), SwapUnit(array.dtype()));
  }
  return out;
}

absl::StatusOr<Array> ReadNpyFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseNpy(buffer.str(), path);
}

absl::Status WriteNpyFile(const std::string& path, const Array& array) {
  if (DescrOf(array.dtype()).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": dtype ", ShortName(array.dtype()),
                     " cannot be written to .npy"));
  }
  return WriteFileAtomically(path, SerializeNpy(array));
}

absl::StatusOr<NamedArrays> ReadNpzFile(const std::string& path) {
  return ReadNpzFile(path, NpzReadPolicy{});
}

absl::StatusOr<NamedArrays> ReadNpzFile(const std::string& path,
                                        const NpzReadPolicy& policy) {
  int error_code = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY, &error_code);
  if (archive == nullptr) {
    if (error_code == ZIP_ER_NOENT || error_code == ZIP_ER_OPEN) {
      return absl::NotFoundError(
          absl::StrCat("cannot open ", path, ": ", ZipErrorString(error_code)));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": not a valid .npz (zip) archive: ", ZipErrorString(error_code)));
  }
  struct Closer {
    zip_t* z;
    ~Closer() { zip_discard(z); }
  } closer{archive};

  // Stored entries are borrowed from a read-only map of the file instead of
  // copied (zero-copy weights); the rest goes through libzip.
  std::shared_ptr<const MappedFile> map;
  std::vector<std::optional<StoredZipEntry>> stored;
  if (auto mapped = MappedFile::Open(path); mapped.ok()) {
    if (auto list = ListStoredZipEntries((*mapped)->bytes())) {
      map = *std::move(mapped);
      stored = *std::move(list);
    }
  }

  NamedArrays out;
  absl::flat_hash_set<std::string> seen;
  const zip_int64_t num_entries = zip_get_num_entries(archive, 0);
  for (zip_int64_t i = 0; i < num_entries; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(archive, i, 0, &st) != 0 ||
        !(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": cannot read entry #", i, ": ", zip_strerror(archive)));
    }
    std::string name = st.name;
    if (!name.empty() && name.back() == '/') continue;  // a directory
    const std::string stem = absl::EndsWith(name, ".npy")
                                 ? name.substr(0, name.size() - 4)
                                 : name;
    if (policy.wanted && !policy.wanted(stem)) continue;  // never inflated
    const std::string what = absl::StrCat(path, ": entry '", name, "'");
    if (st.size > kMaxEntryBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": claims ", st.size, " bytes (limit ", kMaxEntryBytes, ")"));
    }
    // Refused before allocating: a size the data cannot expand to, and one
    // this machine cannot hold.
    J2O_RETURN_IF_ERROR(CheckDeclaredEntrySize(st, what));
    std::optional<absl::StatusOr<Array>> in_place;
    const size_t index = static_cast<size_t>(i);
    if (index < stored.size() && stored[index].has_value() &&
        stored[index]->name == st.name && stored[index]->size == st.size &&
        (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE) {
      in_place = BorrowStoredNpzEntry(map, *stored[index], what, policy, stem);
    }
    if (!in_place.has_value()) {
      zip_file_t* file = zip_fopen_index(archive, i, 0);
      if (file == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": cannot open: ", zip_strerror(archive)));
      }
      in_place = ReadNpzEntryInPlace(file, st.size, what, policy, stem);
      zip_fclose(file);
    }
    if (in_place.has_value()) {
      if (!in_place->ok()) return in_place->status();
      if (absl::EndsWith(name, ".npy")) name.resize(name.size() - 4);
      if (!seen.insert(name).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": duplicate entry '", name, "'"));
      }
      out.emplace_back(std::move(name), **std::move(in_place));
      continue;
    }
    // The header did not parse from the first chunk: read the whole entry
    // again and let ParseNpy report what is wrong.
    zip_file_t* file = zip_fopen_index(archive, i, 0);
    if (file == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": cannot open: ", zip_strerror(archive)));
    }
    // Read in chunks instead of trusting the declared size up front, and
    // never more than kFallbackBytes: an entry whose header does not parse
    // or disagrees with its size (the 4 GiB of zeros behind an f32[3,4]
    // header) is reported from its first bytes, not inflated whole.
    constexpr uint64_t kFallbackBytes = uint64_t{1} << 20;
    std::string bytes;
    char chunk[1 << 16];
    bool failed = false;
    std::string read_error;
    while (true) {
      const zip_int64_t n = zip_fread(file, chunk, sizeof(chunk));
      if (n < 0) {
        failed = true;
        read_error = zip_error_strerror(zip_file_get_error(file));
        break;
      }
      if (n == 0) break;
      bytes.append(chunk, static_cast<size_t>(n));
      if (bytes.size() > st.size || bytes.size() >= kFallbackBytes) break;
    }
    zip_fclose(file);
    if (failed) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": corrupt data: ", read_error));
    }
    if (st.size > bytes.size() && bytes.size() >= kFallbackBytes) {
      absl::StatusOr<NpyLayout> layout = ParseNpyLayout(bytes, st.size, what);
      return layout.ok() ? absl::InvalidArgumentError(absl::StrCat(
                               what, ": unreadable .npy of ", st.size,
                               " bytes"))
                         : layout.status();
    }
    if (bytes.size() != st.size) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": holds ", bytes.size(), " bytes but declares ", st.size));
    }
    if (absl::EndsWith(name, ".npy")) name.resize(name.size() - 4);
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": duplicate entry '", name, "'"));
    }
    auto array = ParseNpy(bytes, what);
    if (!array.ok()) return array.status();
    out.emplace_back(std::move(name), *std::move(array));
  }
  return out;
}

absl::Status WriteNpzFile(const std::string& path, const NamedArrays& arrays,
                          bool compress) {
  // Never through a directory, FIFO or device (callers add their inputs).
  J2O_RETURN_IF_ERROR(CheckOutputReplaceable(path, "output", {}));
  absl::flat_hash_set<std::string> names;
  for (const auto& [name, array] : arrays) {
    if (name.empty() || !names.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": entry name '", name, "' is empty or repeated"));
    }
    if (DescrOf(array.dtype()).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": entry '", name, "': dtype ",
                       ShortName(array.dtype()), " cannot be written to .npy"));
    }
  }
  if (arrays.empty()) {
    // libzip deletes archives without entries; numpy writes a bare
    // end-of-central-directory record, so do the same.
    std::string eocd("PK\x05\x06", 4);
    eocd.append(18, '\0');
    return WriteFileAtomically(path, eocd);
  }
  // Claimed exclusively, then rewritten by libzip (ZIP_TRUNCATE).
  J2O_ASSIGN_OR_RETURN(auto created, CreateTempFor(path));
  const std::string tmp = created.first;
  close(created.second);
  int error_code = 0;
  zip_t* archive =
      zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error_code);
  if (archive == nullptr) {
    RemoveTemp(tmp);
    return absl::InternalError(
        absl::StrCat("cannot create ", tmp, ": ", ZipErrorString(error_code)));
  }
  // libzip reads the buffers at zip_close, so they must outlive the loop.
  std::vector<std::string> buffers;
  buffers.reserve(arrays.size());
  auto fail = [&](absl::string_view step) {
    const std::string message =
        absl::StrCat(path, ": ", step, ": ", zip_strerror(archive));
    zip_discard(archive);
    RemoveTemp(tmp);
    return absl::InternalError(message);
  };
  // Stored entries are laid out so that each array's data starts on a
  // 64-byte boundary of the file (numpy pads .npy headers to 64 bytes; the
  // local header gets a padding extra field, as Android's zipalign does), so
  // readers can borrow them from a memory map. The offsets are predicted
  // from libzip's layout (local header, name, extra field, data); a wrong
  // prediction only costs a copy on read.
  constexpr uint64_t kAlign = 64;
  constexpr uint16_t kAlignmentExtraId = 0xD935;  // zipalign's field
  uint64_t offset = 0;
  for (const auto& [name, array] : arrays) {
    buffers.push_back(SerializeNpy(array));
    const std::string& buffer = buffers.back();
    const std::string entry_name = absl::StrCat(name, ".npy");
    zip_source_t* source =
        zip_source_buffer(archive, buffer.data(), buffer.size(), 0);
    if (source == nullptr) return fail("cannot create a zip source");
    const zip_int64_t index =
        zip_file_add(archive, entry_name.c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(source);
      return fail(absl::StrCat("cannot add entry '", name, "'"));
    }
    if (zip_set_file_compression(
            archive, index, compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) != 0) {
      return fail(absl::StrCat("cannot set compression of '", name, "'"));
    }
    if (!compress) {
      // 30-byte local header, the name, the extra field (4-byte header,
      // 2-byte alignment, zeros).
      const uint64_t before = offset + 30 + entry_name.size() + 6;
      const uint64_t zeros = (kAlign - before % kAlign) % kAlign;
      std::string field(2 + zeros, '\0');
      field[0] = static_cast<char>(kAlign & 0xFF);
      field[1] = static_cast<char>(kAlign >> 8);
      if (zip_file_extra_field_set(
              archive, index, kAlignmentExtraId, ZIP_EXTRA_FIELD_NEW,
              reinterpret_cast<const zip_uint8_t*>(field.data()),
              static_cast<zip_uint16_t>(field.size()), ZIP_FL_LOCAL) != 0) {
        return fail(absl::StrCat("cannot align entry '", name, "'"));
      }
      offset = before + zeros + buffer.size();
    }
    // A fixed timestamp (1980-01-01, as numpy writes) keeps output
    // byte-identical across runs.
    struct tm epoch = {};
    epoch.tm_year = 80;
    epoch.tm_mday = 1;
    zip_file_set_mtime(archive, index, mktime(&epoch), 0);
  }
  if (zip_close(archive) != 0) return fail("cannot write the archive");
  return RenameInto(tmp, path);
}

}  // namespace jax2onnx::jaxpr
