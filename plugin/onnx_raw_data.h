// How a jaxpr::Array's bytes become ONNX TensorProto.raw_data.
#ifndef JAX2ONNX_PLUGIN_ONNX_RAW_DATA_H_
#define JAX2ONNX_PLUGIN_ONNX_RAW_DATA_H_

#include <string>

#include "jaxpr/array.h"

namespace jax2onnx::plugin {

// The host bytes of `array`, except that ONNX packs the 4-bit types (INT4,
// UINT4, FLOAT4E2M1) two to a byte and the 2-bit ones four to a byte, the
// first element in the lowest bits, where a jaxpr::Array (like ml_dtypes)
// holds one element per byte.
std::string OnnxRawData(const jaxpr::Array& array);

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_ONNX_RAW_DATA_H_
