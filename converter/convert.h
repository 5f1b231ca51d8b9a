// The legacy pipeline's entry point: a jaxpr bundle to onnx::ModelProto,
// built directly as protobuf (no IR, no optimizer, no functions).
#ifndef JAX2ONNX_CONVERTER_CONVERT_H_
#define JAX2ONNX_CONVERTER_CONVERT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/mesh.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::converter {

struct LegacyConvertOptions {
  int opset = 23;
  std::string model_name = "jax2onnx";
  std::vector<std::string> input_names;   // default in_0, in_1, ...
  std::vector<std::string> output_names;  // default out_0, out_1, ...
  // The counter mode of random_split/random_bits (jaxpr/prng.h: JAX's
  // jax_threefry_partitionable; jaxpr::ThreefryModeOf gives a bundle's).
  bool threefry_partitionable = true;
  // Sizes of mesh axes a printed shard_map mesh does not show (`--mesh`).
  std::vector<jaxpr::MeshAxis> mesh_axis_sizes;
};

// Lowers the bundle's main jaxpr with the registered legacy lowerings and
// finalizes (graph I/O and value_info from shape_env, pruning, deterministic
// names, ir_version paired with the opset).
absl::StatusOr<onnx::ModelProto> ConvertToProto(
    const jaxpr::Bundle& bundle, const LegacyConvertOptions& options);

}  // namespace jax2onnx::converter

#endif  // JAX2ONNX_CONVERTER_CONVERT_H_
