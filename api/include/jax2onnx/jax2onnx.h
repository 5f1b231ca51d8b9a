// Public C++ API of jax2onnx: convert a jaxpr bundle to an ONNX model.
//
//   #include "jax2onnx/jax2onnx.h"
//   auto bundle = jax2onnx::LoadBundle("model.jaxpr");   // + model.npz
//   jax2onnx::ConvertOptions options;                    // opset 23
//   auto model = jax2onnx::ToOnnx(*bundle, options);     // onnx::ModelProto
//
// Programs that never touch files pass the jaxpr text and the arrays
// (const_i, literal_i, ...) in memory: jax2onnx::ToOnnxFromText.
//
// This header names only jax2onnx's own types, onnx::ModelProto and absl's
// status types; everything else is internal.
//
// Environment variables (read on every conversion; they OVERRIDE the
// options below unless ConvertOptions::read_environment is false):
//   JAX2ONNX_USE_ONNX_IR=1|0     pipeline: IR (1) or legacy (0); wins over
//                                ConvertOptions::use_onnx_ir.
//   JAX2ONNX_SHADOW_COMPARE=on|strict|off
//                                also convert with the other pipeline and
//                                append a comparison to
//                                JAX2ONNX_SHADOW_REPORT (strict: fail when
//                                the pipelines' outputs differ).
//   JAX2ONNX_DEBUG_IR_DUMP=DIR   write the IR after each pass to DIR.
// An unparsable value is an InvalidArgument error, not a silent default.
#ifndef JAX2ONNX_JAX2ONNX_H_
#define JAX2ONNX_JAX2ONNX_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx {

namespace jaxpr {
struct Bundle;  // internal representation, opaque here
}  // namespace jaxpr
namespace api {
class BundleAccess;  // internal: reaches the representation
}  // namespace api

// A loaded bundle: the parsed jaxpr plus its arrays, validated against each
// other. Copies are cheap and share the (immutable) contents.
class Bundle {
 public:
  Bundle(const Bundle&) = default;
  Bundle& operator=(const Bundle&) = default;
  Bundle(Bundle&&) noexcept = default;
  Bundle& operator=(Bundle&&) noexcept = default;
  ~Bundle();

  const std::string& name() const;  // file stem, or the given name
  // NAME.jaxpr; for BundleFromText, the name its messages use.
  const std::string& jaxpr_path() const;
  int num_inputs() const;   // invars of the main jaxpr
  int num_outputs() const;  // outvars of the main jaxpr

 private:
  friend class api::BundleAccess;
  explicit Bundle(std::shared_ptr<const jaxpr::Bundle> impl);
  std::shared_ptr<const jaxpr::Bundle> impl_;
};

// `path` is NAME.jaxpr (or NAME, or NAME.npz); NAME.npz, when present,
// supplies const_i / literal_i (and input_i / expected_i for testing).
// Parse errors read `FILE:LINE:COL: error: ...`.
absl::StatusOr<Bundle> LoadBundle(const std::string& path);

// One array handed over in memory. `dtype` is the jaxpr spelling ("f32",
// "bf16", "i64", "bool", ...), `bytes` the row-major little-endian contents
// (bool: one byte per element), exactly ItemSize * prod(shape) bytes.
struct NamedArray {
  std::string name;  // "const_0", "literal_0", "input_0", "expected_0"
  std::string dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

// A bundle from jaxpr text and arrays named like the entries of NAME.npz,
// validated like LoadBundle. `name` appears in messages (as the file name of
// parse errors, `name.jaxpr`) and is the model's default graph name.
absl::StatusOr<Bundle> BundleFromText(std::string_view jaxpr_text,
                                      const std::vector<NamedArray>& arrays,
                                      const std::string& name = "bundle");

struct ConvertOptions {
  int opset = 23;  // 17..26
  // The pipeline: unset = the built-in default (IR); false = legacy.
  // JAX2ONNX_USE_ONNX_IR overrides it unless read_environment is false.
  std::optional<bool> use_onnx_ir;
  // false: ignore every JAX2ONNX_* environment variable listed above, so
  // the result depends only on these options.
  bool read_environment = true;
  std::string model_name = "jax2onnx";
  std::vector<std::string> input_names;   // default in_0, in_1, ...
  std::vector<std::string> output_names;  // default out_0, out_1, ...
  // Mesh axis sizes for shard_map meshes printed without them:
  // "data=4,model=2" (the CLI's --mesh).
  std::string mesh_axis_sizes;
  // IR pipeline optimization level (the CLI's --optimize): 0 = the literal
  // lowering, 1 = + generic exact rewrites (constant folding of weights,
  // CSE, transpose/reshape/cast folding, Einsum -> MatMul, ...), 2 = + op
  // fusions (the default). The legacy pipeline is always literal.
  int optimize = 2;
  // IR pipeline: graph inputs/outputs (by index) exposed channels-first
  // (NCHW) although the jaxpr is channels-last (NHWC): a Transpose at the
  // boundary, which the optimizer folds into a Conv's layout Transposes
  // (the CLI's --inputs_as_nchw=0,2 / --outputs_as_nchw=0). Rank >= 3.
  std::vector<int> inputs_as_nchw;
  std::vector<int> outputs_as_nchw;
  // How random_bits/random_split derive threefry counters; JAX's
  // jax_threefry_partitionable, on by default since JAX 0.5.0. A printed
  // jaxpr does not record it: set false for programs traced with it off
  // (the CLI's --threefry_partitionable). check's interpreter honours it.
  bool threefry_partitionable = true;
  // IR pipeline: fnmatch-style globs on the `name` param of call equations
  // (pjit, jit; custom_jvp_call/custom_vjp_call where printed with a name).
  // A matching call becomes a node calling a model-local ONNX function
  // (domain "jax2onnx.functions") instead of being inlined; equal calls
  // (name, operand avals, params) share one function (the CLI's
  // --functions=gelu,_attention*; docs/functions.md). The legacy pipeline
  // refuses a non-empty list.
  std::vector<std::string> functions;
  // IR pipeline, optimize 2: also fuse scaled dot-product attention
  // (softmax(scale * q k^T + mask) v, as Flax and jax.nn print it) into
  // ONNX Attention, opset >= 23 (the CLI's --fuse_attention;
  // docs/fusions.md). Off by default: ONNX Runtime 1.30's CPU kernel is
  // no faster than the unfused chain at 128-197 tokens (faster at 512;
  // docs/performance.md). An error with optimize < 2;
  // no effect below opset 23 or on the legacy pipeline (always literal).
  bool fuse_attention = false;
};

// Converts with the routed pipeline. Errors name the primitive, equation
// and source line; nothing is partially produced on failure.
absl::StatusOr<onnx::ModelProto> ToOnnx(const Bundle& bundle,
                                        const ConvertOptions& options = {});

// BundleFromText + ToOnnx: jaxpr text and arrays in, model out.
absl::StatusOr<onnx::ModelProto> ToOnnxFromText(
    std::string_view jaxpr_text, const std::vector<NamedArray>& arrays,
    const ConvertOptions& options = {});

// The library's version, "MAJOR.MINOR.PATCH".
const char* Version();

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

// ToOnnx + WriteModel in one step, without holding a second copy of the
// weights: on the IR pipeline they go from the bundle (a memory-mapped npz
// where its entries are stored uncompressed) straight to the output file or
// its external-data sidecar. Conversion errors and write errors as from the
// two calls.
absl::Status ConvertToFile(const Bundle& bundle, const std::string& path,
                           const ConvertOptions& options,
                           const WriteOptions& write_options);

}  // namespace jax2onnx

#endif  // JAX2ONNX_JAX2ONNX_H_
