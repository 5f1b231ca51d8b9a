// jax2onnx_cpp._core: the converter in-process for Python (pybind11).
//
// The JAX-free core of the Python package (python/jax2onnx_cpp): jaxpr text
// plus numpy arrays named like the npz entries in, serialized ONNX model out
// — the same bytes `jax2onnx convert` writes for the same bundle (inline
// tensors, deterministic serialization). Arrays are borrowed, not copied:
// each jaxpr::Array points into the numpy buffer and holds a reference to
// it until the conversion has finished.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "api/bundle_access.h"
#include "api/convert_internal.h"
#include "api/ort_runner.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "jaxpr/io/bundle.h"
#include "plugin/conversion_checks.h"

namespace py = pybind11;

namespace jax2onnx::python {
namespace {

// Raised for every conversion, validation and write error; the message is
// the CLI's (`NAME.jaxpr:LINE:COL: error: ...` plus the source line).
PyObject* g_conversion_error = PyExc_ValueError;  // set by the module init

// A conversion error located in the in-memory text, as
// api::FormatConversionError does for files.
std::string FormatError(const absl::Status& status,
                        const std::string& jaxpr_path, absl::string_view text) {
  const std::string message(status.message());
  const std::optional<jaxpr::SourceLoc> loc = plugin::EqnLocation(status);
  if (!loc.has_value()) {
    if (message.rfind(jaxpr_path + ":", 0) == 0) return message;
    return absl::StrCat(jaxpr_path, ": error: ", message);
  }
  std::string out = absl::StrCat(jaxpr_path, ":", loc->line, ":", loc->column,
                                 ": error: ", message);
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (loc->line >= 1 && loc->line <= static_cast<int>(lines.size())) {
    const absl::string_view line = lines[loc->line - 1];
    std::string caret;
    for (int c = 1; c < loc->column && c <= static_cast<int>(line.size());
         ++c) {
      caret.push_back(line[c - 1] == '\t' ? '\t' : ' ');
    }
    absl::StrAppend(&out, "\n", line, "\n", caret, "^");
  }
  return out;
}

// A Python reference released with the GIL held (the owner may be dropped
// while the GIL is released, e.g. by a conversion thread).
std::shared_ptr<const void> KeepAlive(py::object object) {
  auto* held = new py::object(std::move(object));
  return std::shared_ptr<const void>(held, [](const void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<const py::object*>(p);
  });
}

// (name, dtype short name, shape, buffer) -> a borrowed jaxpr::Array.
// The Python side (jax2onnx_cpp._arrays) has made the buffer C-contiguous
// and named its dtype; here the sizes are checked again.
jaxpr::NamedArrays BorrowArrays(const py::list& entries) {
  jaxpr::NamedArrays named;
  for (const py::handle& entry : entries) {
    auto tuple = entry.cast<py::tuple>();
    if (tuple.size() != 4) {
      throw py::value_error("array entries are (name, dtype, shape, buffer)");
    }
    const auto name = tuple[0].cast<std::string>();
    const auto dtype_name = tuple[1].cast<std::string>();
    const auto shape = tuple[2].cast<std::vector<int64_t>>();
    py::object owner = py::reinterpret_borrow<py::object>(tuple[3]);
    const std::optional<jaxpr::DType> dtype =
        jaxpr::DTypeFromShortName(dtype_name);
    if (!dtype.has_value() || jaxpr::ItemSize(*dtype) == 0) {
      throw py::value_error(
          absl::StrCat("array '", name, "': unknown dtype '", dtype_name, "'"));
    }
    int64_t elements = 1;
    for (int64_t d : shape) {
      if (d < 0) {
        throw py::value_error(
            absl::StrCat("array '", name, "': negative dimension ", d));
      }
      elements *= d;
    }
    const size_t want = static_cast<size_t>(elements) * jaxpr::ItemSize(*dtype);
    py::buffer buffer = owner.cast<py::buffer>();
    py::buffer_info info = buffer.request();
    const size_t have = static_cast<size_t>(info.size) * info.itemsize;
    if (have != want) {
      throw py::value_error(absl::StrCat(
          "array '", name, "': ", dtype_name, " with ", elements,
          " elements needs ", want, " bytes, the buffer has ", have));
    }
    bool contiguous = true;
    int64_t stride = info.itemsize;
    for (int i = static_cast<int>(info.ndim) - 1; i >= 0; --i) {
      if (info.shape[i] != 1 && info.strides[i] != stride) contiguous = false;
      stride *= info.shape[i];
    }
    if (!contiguous) {
      throw py::value_error(
          absl::StrCat("array '", name, "': the buffer is not C-contiguous"));
    }
    const auto* data = static_cast<const uint8_t*>(info.ptr);
    if (want > 0) {
      // Borrowed at any address: a misaligned buffer is copied only if
      // something reads it typed (jaxpr::Array::Borrowed).
      named.emplace_back(
          name, jaxpr::Array::Borrowed(*dtype, shape,
                                       absl::Span<const uint8_t>(data, want),
                                       KeepAlive(std::move(owner))));
    } else {
      named.emplace_back(name, jaxpr::Array(*dtype, shape));
    }
  }
  return named;
}

struct PyOptions {
  int opset = 23;
  int optimize = 2;
  std::optional<bool> use_onnx_ir;
  bool read_environment = true;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  std::string mesh;
  std::vector<std::string> functions;
  bool fuse_attention = false;
  std::vector<int> inputs_as_nchw;
  std::vector<int> outputs_as_nchw;
  bool threefry_partitionable = true;
};

ConvertOptions ToConvertOptions(const PyOptions& o) {
  ConvertOptions options;
  options.opset = o.opset;
  options.optimize = o.optimize;
  options.use_onnx_ir = o.use_onnx_ir;
  options.read_environment = o.read_environment;
  options.input_names = o.input_names;
  options.output_names = o.output_names;
  options.mesh_axis_sizes = o.mesh;
  options.functions = o.functions;
  options.fuse_attention = o.fuse_attention;
  options.inputs_as_nchw = o.inputs_as_nchw;
  options.outputs_as_nchw = o.outputs_as_nchw;
  options.threefry_partitionable = o.threefry_partitionable;
  return options;
}

[[noreturn]] void ThrowConversionError(const std::string& message) {
  PyErr_SetString(g_conversion_error, message.c_str());
  throw py::error_already_set();
}

absl::StatusOr<WriteOptions> ToWriteOptions(const std::string& external_data,
                                            uint64_t threshold,
                                            const std::string& sidecar_name) {
  WriteOptions options;
  if (external_data == "auto") {
    options.external_data = ExternalData::kAuto;
  } else if (external_data == "always") {
    options.external_data = ExternalData::kAlways;
  } else if (external_data == "never") {
    options.external_data = ExternalData::kNever;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("external_data must be 'auto', 'always' or 'never', got '",
                     external_data, "'"));
  }
  options.external_data_threshold = threshold;
  options.external_data_name = sidecar_name;
  return options;
}

// As WriteModel serializes (deterministic), so the bytes equal the CLI's
// file when every tensor is inline.
absl::Status SerializeDeterministic(const onnx::ModelProto& model,
                                    std::string* serialized) {
  google::protobuf::io::StringOutputStream stream(serialized);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  if (!model.SerializeToCodedStream(&coded) || coded.HadError()) {
    return absl::InternalError(
        "the model cannot be serialized (over protobuf's 2 GiB?); use "
        "convert_text_to_file, which writes external data");
  }
  return absl::OkStatus();
}

// Parses and validates the bundle; conversion runs without the GIL.
Bundle MakeBundle(const std::string& text, const py::list& arrays,
                  const std::string& name) {
  jaxpr::NamedArrays named = BorrowArrays(arrays);
  absl::StatusOr<jaxpr::Bundle> bundle =
      jaxpr::BundleFromParts(name, text, absl::StrCat(name, ".jaxpr"), named);
  if (!bundle.ok()) {
    ThrowConversionError(
        FormatError(bundle.status(), absl::StrCat(name, ".jaxpr"), text));
  }
  return api::BundleAccess::Wrap(*std::move(bundle));
}

py::bytes ConvertText(const std::string& text, const py::list& arrays,
                      const std::string& name, const PyOptions& py_options) {
  std::string serialized;
  {
    Bundle bundle = MakeBundle(text, arrays, name);
    const ConvertOptions options = ToConvertOptions(py_options);
    absl::Status status;
    {
      py::gil_scoped_release release;
      absl::StatusOr<onnx::ModelProto> model = ToOnnx(bundle, options);
      status = model.ok() ? SerializeDeterministic(*model, &serialized)
                          : model.status();
    }
    if (!status.ok()) {
      ThrowConversionError(
          FormatError(status, absl::StrCat(name, ".jaxpr"), text));
    }
  }  // the borrowed arrays are released here, with the GIL held
  return py::bytes(serialized);
}

// StableHLO text (what jax.export's mlir_module() prints) -> serialized
// model: the bytes `jax2onnx convert NAME.mlir --external_data=never`
// writes. `arrays` may hold only input_i / expected_i (the text carries its
// constants).
py::bytes ConvertStablehlo(const std::string& text, const py::list& arrays,
                           const std::string& name,
                           const PyOptions& py_options) {
  const std::string path = absl::StrCat(name, ".mlir");
  std::string serialized;
  {
    absl::StatusOr<jaxpr::Bundle> parsed =
        api::StablehloBundleFromText(text, name, BorrowArrays(arrays));
    if (!parsed.ok())
      ThrowConversionError(FormatError(parsed.status(), path, text));
    Bundle bundle = api::BundleAccess::Wrap(*std::move(parsed));
    const ConvertOptions options = ToConvertOptions(py_options);
    absl::Status status;
    {
      py::gil_scoped_release release;
      absl::StatusOr<onnx::ModelProto> model = ToOnnx(bundle, options);
      status = model.ok() ? SerializeDeterministic(*model, &serialized)
                          : model.status();
    }
    if (!status.ok()) ThrowConversionError(FormatError(status, path, text));
  }  // the borrowed arrays are released here, with the GIL held
  return py::bytes(serialized);
}

void ConvertTextToFile(const std::string& text, const py::list& arrays,
                       const std::string& path, const std::string& name,
                       const PyOptions& py_options,
                       const std::string& external_data, uint64_t threshold,
                       const std::string& sidecar_name) {
  absl::StatusOr<WriteOptions> write_options =
      ToWriteOptions(external_data, threshold, sidecar_name);
  if (!write_options.ok()) {
    throw py::value_error(std::string(write_options.status().message()));
  }
  Bundle bundle = MakeBundle(text, arrays, name);
  const ConvertOptions options = ToConvertOptions(py_options);
  absl::Status status;
  {
    py::gil_scoped_release release;
    status = ConvertToFile(bundle, path, options, *write_options);
  }
  if (!status.ok()) {
    ThrowConversionError(
        FormatError(status, absl::StrCat(name, ".jaxpr"), text));
  }
}

void WriteModelBytes(const std::string& model_bytes, const std::string& path,
                     const std::string& external_data, uint64_t threshold,
                     const std::string& sidecar_name) {
  absl::StatusOr<WriteOptions> write_options =
      ToWriteOptions(external_data, threshold, sidecar_name);
  if (!write_options.ok()) {
    throw py::value_error(std::string(write_options.status().message()));
  }
  onnx::ModelProto model;
  if (!model.ParseFromString(model_bytes)) {
    throw py::value_error("the bytes are not a serialized ONNX ModelProto");
  }
  absl::Status status;
  {
    py::gil_scoped_release release;
    status = WriteModel(std::move(model), path, *write_options);
  }
  if (!status.ok()) ThrowConversionError(std::string(status.message()));
}

// Runs a model file with the project's ONNX Runtime runner (Node +
// onnxruntime-node); inputs and outputs as (name, dtype, shape, bytes).
py::list RunModel(const std::string& model_path, const py::list& inputs,
                  const std::string& runner_dir) {
  jaxpr::NamedArrays named = BorrowArrays(inputs);
  api::NamedArrays run_inputs(named.begin(), named.end());
  static std::map<std::string, std::unique_ptr<api::OrtRunner>>* runners =
      new std::map<std::string, std::unique_ptr<api::OrtRunner>>();
  std::unique_ptr<api::OrtRunner>& runner = (*runners)[runner_dir];
  if (runner == nullptr) {
    api::OrtRunnerOptions options;
    options.runner_dir = runner_dir;
    runner = std::make_unique<api::OrtRunner>(options);
  }
  absl::StatusOr<api::NamedArrays> outputs;
  {
    py::gil_scoped_release release;
    outputs = runner->RunNamed(model_path, run_inputs);
  }
  run_inputs.clear();
  named.clear();
  if (!outputs.ok()) {
    throw std::runtime_error(std::string(outputs.status().message()));
  }
  py::list result;
  for (const auto& [name, array] : *outputs) {
    const auto bytes = array.bytes();
    result.append(py::make_tuple(
        name, std::string(jaxpr::ShortName(array.dtype())), array.shape(),
        py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
  }
  return result;
}

// The graph's input names (initializers excluded) and output names.
py::tuple ModelIoNames(const std::string& model_bytes) {
  onnx::ModelProto model;
  if (!model.ParseFromString(model_bytes)) {
    throw py::value_error("the bytes are not a serialized ONNX ModelProto");
  }
  std::set<std::string> initializers;
  for (const auto& tensor : model.graph().initializer()) {
    initializers.insert(tensor.name());
  }
  std::vector<std::string> inputs, outputs;
  for (const auto& input : model.graph().input()) {
    if (!initializers.count(input.name())) inputs.push_back(input.name());
  }
  for (const auto& output : model.graph().output()) {
    outputs.push_back(output.name());
  }
  return py::make_tuple(inputs, outputs);
}

}  // namespace
}  // namespace jax2onnx::python

PYBIND11_MODULE(_core, m) {
  using namespace jax2onnx::python;
  m.doc() = "jax2onnx C++ converter (use the jax2onnx_cpp package)";
  static py::exception<std::runtime_error> conversion_error(
      m, "ConversionError", PyExc_ValueError);
  g_conversion_error = conversion_error.ptr();

  py::class_<PyOptions>(m, "Options")
      .def(py::init<>())
      .def_readwrite("opset", &PyOptions::opset)
      .def_readwrite("optimize", &PyOptions::optimize)
      .def_readwrite("use_onnx_ir", &PyOptions::use_onnx_ir)
      .def_readwrite("read_environment", &PyOptions::read_environment)
      .def_readwrite("input_names", &PyOptions::input_names)
      .def_readwrite("output_names", &PyOptions::output_names)
      .def_readwrite("mesh", &PyOptions::mesh)
      .def_readwrite("functions", &PyOptions::functions)
      .def_readwrite("fuse_attention", &PyOptions::fuse_attention)
      .def_readwrite("inputs_as_nchw", &PyOptions::inputs_as_nchw)
      .def_readwrite("outputs_as_nchw", &PyOptions::outputs_as_nchw)
      .def_readwrite("threefry_partitionable",
                     &PyOptions::threefry_partitionable);
  m.def("convert_text", &ConvertText, py::arg("text"), py::arg("arrays"),
        py::arg("name"), py::arg("options"));
  m.def("convert_stablehlo", &ConvertStablehlo, py::arg("text"),
        py::arg("arrays"), py::arg("name"), py::arg("options"));
  m.def("convert_text_to_file", &ConvertTextToFile, py::arg("text"),
        py::arg("arrays"), py::arg("path"), py::arg("name"), py::arg("options"),
        py::arg("external_data"), py::arg("threshold"),
        py::arg("sidecar_name"));
  m.def("write_model", &WriteModelBytes, py::arg("model_bytes"),
        py::arg("path"), py::arg("external_data"), py::arg("threshold"),
        py::arg("sidecar_name"));
  m.def("run_model", &RunModel, py::arg("model_path"), py::arg("inputs"),
        py::arg("runner_dir"));
  m.def("model_io_names", &ModelIoNames, py::arg("model_bytes"));
  m.def("version", []() { return std::string(jax2onnx::Version()); });
}
