// Pipeline-independent facts about ONNX that both plugin sets and both
// converter cores use: dtype mapping, the IR version paired with an opset,
// the supported opset range.
#ifndef JAX2ONNX_PLUGIN_ONNX_TYPES_H_
#define JAX2ONNX_PLUGIN_ONNX_TYPES_H_

#include <optional>

#include "absl/status/statusor.h"
#include "jaxpr/dtype.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::plugin {

inline constexpr int kMinOpset = 17;
inline constexpr int kMaxOpset = 26;
inline constexpr int kDefaultOpset = 23;

// onnx::TensorProto::DataType value for a JAX dtype; error for dtypes ONNX
// cannot hold (kOther such as f8 variants, key types).
absl::StatusOr<int> OnnxDType(jaxpr::DType dtype);
// The JAX dtype of an ONNX element type, if it has one.
std::optional<jaxpr::DType> JaxDType(int onnx_dtype);

// The ir_version ONNX released together with `opset`.
int IrVersionForOpset(int opset);

// Error unless 17 <= opset <= 26.
absl::Status CheckOpset(int opset);

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_ONNX_TYPES_H_
