// Placeholder until the parser lands.
#include <cstdio>

#include "tools/commands.h"

namespace jax2onnx::cli {

int RunEval(const std::vector<std::string>&) {
  std::fprintf(stderr, "eval: not implemented yet\n");
  return 1;
}

}  // namespace jax2onnx::cli
