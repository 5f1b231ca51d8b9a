// TensorProto.DataType codes newer than the onnx.proto this builds with
// (onnx.proto's enum, opsets 19-25), shared by the passes that rewrite the
// narrow types in a finished model (low_precision.cc, narrow_int_carrier.cc).
#ifndef JAX2ONNX_PLUGIN_ONNX_NARROW_CODES_H_
#define JAX2ONNX_PLUGIN_ONNX_NARROW_CODES_H_

namespace jax2onnx::plugin::onnx_codes {

inline constexpr int kFloat8E4M3FN = 17;
inline constexpr int kFloat8E4M3FNUZ = 18;
inline constexpr int kFloat8E5M2 = 19;
inline constexpr int kFloat8E5M2FNUZ = 20;
inline constexpr int kUInt4 = 21;
inline constexpr int kInt4 = 22;
inline constexpr int kFloat4E2M1 = 23;
inline constexpr int kFloat8E8M0 = 24;
inline constexpr int kUInt2 = 25;
inline constexpr int kInt2 = 26;

}  // namespace jax2onnx::plugin::onnx_codes

#endif  // JAX2ONNX_PLUGIN_ONNX_NARROW_CODES_H_
