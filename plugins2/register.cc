#include "plugins2/register.h"

#include <mutex>

namespace jax2onnx::plugins2 {

// lax/program.cc (stack, unstack, tile, empty, debug_print, ...).
void RegisterProgram();

void RegisterAll() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterElementwise();
    RegisterShape();
    RegisterReductions();
    RegisterLinalg();
    RegisterCalls();
    RegisterProgram();
    RegisterIndexing();
    RegisterControlFlow();
    RegisterConv();
    RegisterSort();
    RegisterCollectives();
    RegisterKeyWords();
    RegisterComplex();
  });
}

}  // namespace jax2onnx::plugins2
