// Registration of every legacy-pipeline lowering family into the shared
// registry. Explicit calls (not static initializers), so nothing can be
// dropped by the linker.
#ifndef JAX2ONNX_PLUGINS_REGISTER_H_
#define JAX2ONNX_PLUGINS_REGISTER_H_

namespace jax2onnx::plugins {

// Idempotent; cheap after the first call.
void RegisterAll();

}  // namespace jax2onnx::plugins

#endif  // JAX2ONNX_PLUGINS_REGISTER_H_
