// Placeholder until this kernel family lands; registers nothing.
#include "jaxpr/eval/kernels.h"

namespace jax2onnx::jaxpr {

void RegisterSortKernels() {}

}  // namespace jax2onnx::jaxpr
