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

#include <cstdint>
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
};

// Converts with the routed pipeline. Errors name the primitive, equation
// and source line; nothing is partially produced on failure.
absl::StatusOr<onnx::ModelProto> ToOnnx(const Bundle& bundle,
                                        const ConvertOptions& options = {});

// Serializes deterministically and writes atomically (temp file + rename),
// with the default WriteOptions below.
absl::Status WriteModel(const onnx::ModelProto& model, const std::string& path);

// Where tensor data goes (ONNX external data, docs/output.md).
enum class ExternalData {
  kAuto,    // tensors over the threshold, and more if the model is over 2 GiB
  kAlways,  // every tensor that can be external (numeric, 1 KiB or more)
  kNever,   // all inline; a model over 2 GiB is an error
};

struct WriteOptions {
  ExternalData external_data = ExternalData::kAuto;
  // kAuto: tensors with more data bytes than this go to the sidecar (tensors
  // under 1 KiB always stay inline, for ONNX shape inference).
  uint64_t external_data_threshold = uint64_t{1} << 20;
  // Sidecar file name, next to the model; "" means "<model file name>.data".
  std::string external_data_name;
  // Files the output (or its sidecar) must not replace, e.g. the bundle's
  // .jaxpr and .npz; compared by device and inode.
  std::vector<std::string> protected_inputs;
};

// Writes the model and, when tensors go external, its sidecar: each into a
// uniquely named temporary in the target directory, fsynced and renamed into
// place. On any error nothing is left at `path` (an existing file there is
// kept unchanged). The rvalue overload moves externalized tensor data out of
// `model` instead of copying the model.
absl::Status WriteModel(const onnx::ModelProto& model, const std::string& path,
                        const WriteOptions& options);
absl::Status WriteModel(onnx::ModelProto&& model, const std::string& path,
                        const WriteOptions& options);

}  // namespace jax2onnx

#endif  // JAX2ONNX_JAX2ONNX_H_
