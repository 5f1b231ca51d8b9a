// Converts a bundle with the installed jax2onnx library, from its files and
// from jaxpr text in memory, and prints the node counts: proves the
// package's public headers, libraries and dependencies suffice.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

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

  // y = x * w with the weight handed over in memory.
  const float w[3] = {1.5f, -2.0f, 0.25f};
  jax2onnx::NamedArray weight{"const_0", "f32", {3}, std::string(12, '\0')};
  std::memcpy(weight.bytes.data(), w, sizeof(w));
  auto in_memory = jax2onnx::ToOnnxFromText(
      "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = mul b a in (c,) }",
      {weight});
  if (!in_memory.ok()) {
    std::fprintf(stderr, "%s\n", in_memory.status().ToString().c_str());
    return 1;
  }
  std::printf("in memory: %d nodes\n", in_memory->graph().node_size());
  return model->graph().node_size() > 0 && in_memory->graph().node_size() > 0
             ? 0
             : 1;
}
