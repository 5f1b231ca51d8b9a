// Registration of every legacy-pipeline lowering family into the shared
// registry. Explicit calls (not static initializers), so nothing can be
// dropped by the linker.
#ifndef JAX2ONNX_PLUGINS_REGISTER_H_
#define JAX2ONNX_PLUGINS_REGISTER_H_

namespace jax2onnx::plugins {

// Idempotent; cheap after the first call.
void RegisterAll();

// One per family file (plugins/lax/<family>.cc).
void RegisterElementwise();
void RegisterCalls();
void RegisterControlFlow();
void RegisterCollectives();  // lax/collectives.cc
void RegisterKeyWords();  // lax/key_words.cc: structural ops on PRNG keys

}  // namespace jax2onnx::plugins

#endif  // JAX2ONNX_PLUGINS_REGISTER_H_
