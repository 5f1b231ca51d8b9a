// Registration of every IR-pipeline lowering family into the shared
// registry. Explicit calls (not static initializers), so nothing can be
// dropped by the linker.
#ifndef JAX2ONNX_PLUGINS2_REGISTER_H_
#define JAX2ONNX_PLUGINS2_REGISTER_H_

namespace jax2onnx::plugins2 {

// Idempotent; cheap after the first call.
void RegisterAll();

}  // namespace jax2onnx::plugins2

#endif  // JAX2ONNX_PLUGINS2_REGISTER_H_
