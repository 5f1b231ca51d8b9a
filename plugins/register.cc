#include "plugins/register.h"

#include <mutex>

namespace jax2onnx::plugins {

void RegisterAll() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterElementwise();
    RegisterShape();
    RegisterReductions();
    RegisterLinalg();
    RegisterCalls();
    RegisterIndexing();
    RegisterControlFlow();
    RegisterConv();
    RegisterSort();
    RegisterCollectives();
    RegisterKeyWords();
    RegisterComplex();
  });
}

}  // namespace jax2onnx::plugins
