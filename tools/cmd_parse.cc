// Placeholder until the parser lands.
#include <cstdio>

#include "tools/commands.h"

namespace jax2onnx::cli {

int RunParse(const std::vector<std::string>&) {
  std::fprintf(stderr, "parse: not implemented yet\n");
  return 1;
}
int RunPrint(const std::vector<std::string>&) {
  std::fprintf(stderr, "print: not implemented yet\n");
  return 1;
}

}  // namespace jax2onnx::cli
