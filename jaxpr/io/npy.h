// numpy .npy / .npz reading and writing (npz via libzip, stored and deflated
// entries). Supported dtypes: bool, int8-64, uint8-64, float16/32/64 (and
// bfloat16 / complex64/128 where numpy spells them); C and Fortran order
// (Fortran data is transposed to C order on read); 0-d scalars. Corrupt or
// unsupported files give InvalidArgument errors naming the file and entry.
#ifndef JAX2ONNX_JAXPR_IO_NPY_H_
#define JAX2ONNX_JAXPR_IO_NPY_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/array.h"

namespace jax2onnx::jaxpr {

// `what` names the source in error messages.
absl::StatusOr<Array> ParseNpy(absl::string_view bytes,
                               absl::string_view what = "npy");
std::string SerializeNpy(const Array& array);

absl::StatusOr<Array> ReadNpyFile(const std::string& path);
absl::Status WriteNpyFile(const std::string& path, const Array& array);

// Entries in archive order; names without the `.npy` suffix.
using NamedArrays = std::vector<std::pair<std::string, Array>>;
absl::StatusOr<NamedArrays> ReadNpzFile(const std::string& path);

// What ReadNpzFile may inflate (issue 24's bombs: an unused 4 GiB entry was
// inflated anyway; a header claiming more than the program binds was
// allocated before anything was checked).
struct NpzReadPolicy {
  // Entries (names without `.npy`) for which this is false are skipped
  // without reading a byte of them. Unset: every entry.
  std::function<bool(absl::string_view name)> wanted;
  // Sees each wanted entry's .npy header before any of its data is
  // allocated or inflated; an error refuses the whole file.
  std::function<absl::Status(absl::string_view name, DType dtype,
                             const std::vector<int64_t>& shape)>
      check_header;
};
absl::StatusOr<NamedArrays> ReadNpzFile(const std::string& path,
                                        const NpzReadPolicy& policy);
// Writes atomically (temp file + rename). `compress` uses deflate.
absl::Status WriteNpzFile(const std::string& path, const NamedArrays& arrays,
                          bool compress = false);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_IO_NPY_H_
