// Placeholder until this family lands; registers nothing.
#include "plugins/register.h"

namespace jax2onnx::plugins {

void RegisterIndexing() {}

}  // namespace jax2onnx::plugins
