// Pipeline-independent facts about ONNX that both plugin sets and both
// converter cores use: dtype mapping, the IR version paired with an opset,
// the supported opset range.
#ifndef JAX2ONNX_PLUGIN_ONNX_TYPES_H_
#define JAX2ONNX_PLUGIN_ONNX_TYPES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "jaxpr/dtype.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::plugin {

inline constexpr int kMinOpset = 17;
inline constexpr int kMaxOpset = 26;
inline constexpr int kDefaultOpset = 23;

// onnx::TensorProto::DataType value for a JAX dtype; error for dtypes ONNX
// cannot hold (kOther such as f8 variants, key types). Complex values follow
// the I/O convention (see RealifiedAval): c64 -> FLOAT, c128 -> DOUBLE.
absl::StatusOr<int> OnnxDType(jaxpr::DType dtype);

// The complex convention: a c64/c128 value is, in ONNX, a real f32/f64 tensor
// with one trailing dimension of size 2 holding (real, imaginary). ONNX has
// complex element types, but ONNX Runtime has almost no kernels for them.
// The real dtype of a complex one's parts (c64 -> f32, c128 -> f64); other
// dtypes unchanged.
jaxpr::DType ComplexPartDType(jaxpr::DType dtype);
// The aval of the ONNX value that holds a JAX value of `aval`: c64[3,B] ->
// f32[3,B,2]; non-complex avals unchanged.
jaxpr::Aval RealifiedAval(const jaxpr::Aval& aval);
// The ONNX dims of an array of `dtype` and `shape` (a trailing 2 for complex).
std::vector<int64_t> OnnxDims(jaxpr::DType dtype,
                              const std::vector<int64_t>& shape);
// The JAX dtype of an ONNX element type, if it has one.
std::optional<jaxpr::DType> JaxDType(int onnx_dtype);

// The ir_version ONNX released together with `opset`.
int IrVersionForOpset(int opset);

// Error unless 17 <= opset <= 26.
absl::Status CheckOpset(int opset);

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_ONNX_TYPES_H_
