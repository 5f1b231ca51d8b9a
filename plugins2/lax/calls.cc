// Placeholder until this family lands; registers nothing.
#include "plugins2/register.h"

namespace jax2onnx::plugins2 {

void RegisterCalls() {}

}  // namespace jax2onnx::plugins2
