// Public C++ API of jax2onnx: convert a jaxpr bundle to an ONNX model.
//
//   #include "jax2onnx/jax2onnx.h"
//   auto bundle = jax2onnx::LoadBundle("model.jaxpr");   // + model.npz
//   jax2onnx::ConvertOptions options;                    // opset 23
//   auto model = jax2onnx::ToOnnx(*bundle, options);     // onnx::ModelProto
//
// The pipeline (legacy proto builder or the IR pipeline) is chosen by, in
// order: env JAX2ONNX_USE_ONNX_IR, ConvertOptions::use_onnx_ir, the CLI flag
// (cli_use_onnx_ir), the built-in default.
#ifndef JAX2ONNX_JAX2ONNX_H_
#define JAX2ONNX_JAX2ONNX_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jaxpr/io/bundle.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx {

using jaxpr::Bundle;
using jaxpr::LoadBundle;

struct ConvertOptions {
  int opset = 23;                      // 17..26
  std::optional<bool> use_onnx_ir;     // the call's choice of pipeline
  std::optional<bool> cli_use_onnx_ir; // set by the CLI's --use_onnx_ir
  std::string model_name = "jax2onnx";
  std::vector<std::string> input_names;   // default in_0, in_1, ...
  std::vector<std::string> output_names;  // default out_0, out_1, ...
  // Mesh axis sizes for shard_map meshes printed without them:
  // "data=4,model=2" (the CLI's --mesh).
  std::string mesh_axis_sizes;
};

// Converts with the routed pipeline. Errors name the primitive, equation
// and source line; nothing is partially produced on failure.
absl::StatusOr<onnx::ModelProto> ToOnnx(const Bundle& bundle,
                                        const ConvertOptions& options = {});

// Serializes deterministically and writes atomically (temp file + rename).
absl::Status WriteModel(const onnx::ModelProto& model, const std::string& path);

}  // namespace jax2onnx

#endif  // JAX2ONNX_JAX2ONNX_H_
