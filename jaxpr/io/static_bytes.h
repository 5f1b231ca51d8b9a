// The byte size an npz entry feeding a program binder may hold, shared by
// the bundle loader and the example-set reader: both refuse an entry whose
// .npy header declares more than its binder before inflating it.
#ifndef JAX2ONNX_JAXPR_IO_STATIC_BYTES_H_
#define JAX2ONNX_JAXPR_IO_STATIC_BYTES_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "jaxpr/array.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/prng.h"

namespace jax2onnx::jaxpr {

// Bytes of `aval` when every dim is static (key types by their physical
// u32 data), else nullopt.
inline std::optional<int64_t> StaticBytes(const Aval& aval) {
  absl::StatusOr<Aval> physical = PhysicalAval(aval);
  if (!physical.ok() || !physical->is_shaped()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const DimExpr& d : physical->shape) {
    if (!d.is_constant()) return std::nullopt;
    dims.push_back(d.constant_value());
  }
  absl::StatusOr<int64_t> bytes = CheckedByteSize(
      physical->dtype, dims, std::numeric_limits<int64_t>::max());
  if (!bytes.ok()) return std::nullopt;
  return *bytes;
}

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_IO_STATIC_BYTES_H_
