// Placeholder until this kernel family lands; registers nothing.
#include "jaxpr/eval/kernels.h"

namespace jax2onnx::jaxpr {

void RegisterIndexingKernels() {}

}  // namespace jax2onnx::jaxpr
