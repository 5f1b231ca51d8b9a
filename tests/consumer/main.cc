// Converts a bundle with the installed jax2onnx library and prints the node
// count: proves the package's headers, libraries and dependencies suffice.
#include <cstdio>

#include "jax2onnx/jax2onnx.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer BUNDLE.jaxpr\n");
    return 2;
  }
  auto bundle = jax2onnx::LoadBundle(argv[1]);
  if (!bundle.ok()) {
    std::fprintf(stderr, "%s\n", bundle.status().ToString().c_str());
    return 1;
  }
  auto model = jax2onnx::ToOnnx(*bundle);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  std::printf("converted %s: %d nodes\n", argv[1], model->graph().node_size());
  return model->graph().node_size() > 0 ? 0 : 1;
}
