// The IR pipeline's entry point: a jaxpr bundle to an ir::Model.
#ifndef JAX2ONNX_CONVERTER2_CONVERT_H_
#define JAX2ONNX_CONVERTER2_CONVERT_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "ir/passes/fusions.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/mesh.h"

namespace jax2onnx::converter2 {

struct IrConvertOptions {
  int opset = 23;
  std::string model_name = "jax2onnx";
  std::vector<std::string> input_names;   // default in_0, in_1, ...
  std::vector<std::string> output_names;  // default out_0, out_1, ...
  // 0 = literal lowering, 1 = + generic passes, 2 = + fusions (Finalize).
  int optimize = 2;
  // Graph inputs/outputs (by index) exposed channels-first: the graph
  // declares them NCHW (dims [0, r-1, 1, ..., r-2] of the jaxpr's
  // channels-last aval) and a Transpose at the boundary converts; the
  // transpose passes fold it into a Conv's own layout Transposes.
  std::vector<int> inputs_as_nchw;
  std::vector<int> outputs_as_nchw;
  // Globs (fnmatch) on the `name` param of call equations: a match becomes
  // a model-local ONNX function (converter2/functions.h).
  std::vector<std::string> functions;
  // At optimize 2: also fuse scaled dot-product attention into Attention
  // (opset >= 23; ir/passes/fuse_attention.cc). Off by default.
  bool fuse_attention = false;
  // The counter mode of random_split/random_bits (jaxpr/prng.h: JAX's
  // jax_threefry_partitionable; jaxpr::ThreefryModeOf gives a bundle's).
  bool threefry_partitionable = true;
  // Sizes of mesh axes a printed shard_map mesh does not show (`--mesh`).
  std::vector<jaxpr::MeshAxis> mesh_axis_sizes;
  // Copied into the model's metadata_props in order (key, value).
  std::vector<std::pair<std::string, std::string>> metadata_props;
  // Called with (step name, model) after lowering and after each pass
  // (JAX2ONNX_DEBUG_IR_DUMP uses it).
  std::function<void(const std::string&, const ir::Model&)> dump;
  // Where the fusion passes record what they applied and their near misses
  // (`convert --report`); null: not recorded.
  ir::FusionLog* fusion_log = nullptr;
};

// Lowers the bundle's main jaxpr with the registered IR lowerings, then
// finalizes: graph I/O typed (symbolic dims as dim_param), outputs named,
// dead nodes and unused initializers pruned, nodes topologically sorted,
// ir_version paired with the opset.
absl::StatusOr<ir::Model> ConvertToIr(const jaxpr::Bundle& bundle,
                                      const IrConvertOptions& options);

}  // namespace jax2onnx::converter2

#endif  // JAX2ONNX_CONVERTER2_CONVERT_H_
