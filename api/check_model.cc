// `check MODEL.onnx BUNDLE`: the model file a user ships, run as it lies on
// disk (external data, renamed inputs, NCHW adapters, model-local functions,
// any opset), against the bundle's oracle. Nothing is re-converted.
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/check.h"
#include "converter2/nchw.h"
#include "jaxpr/status_macros.h"
#include "onnx/onnx_pb.h"
#include "plugin/float4_e2m1.h"

namespace jax2onnx::api {

absl::StatusOr<onnx::ModelProto> ReadModelFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&in)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not an ONNX model (protobuf parse failed)"));
  }
  return model;
}

namespace {

// Names given by the caller, else recorded in the bundle's header.
std::vector<std::string> KnownNames(const std::vector<std::string>& given,
                                    const Bundle& bundle, const char* key) {
  if (!given.empty()) return given;
  std::vector<std::string> names;
  if (std::optional<std::string> recorded = bundle.file.Header(key)) {
    for (absl::string_view name : absl::StrSplit(*recorded, ',')) {
      names.emplace_back(absl::StripAsciiWhitespace(name));
    }
  }
  return names;
}

// For each of `count` jaxpr positions, the index of the model's I/O it
// corresponds to: by name where `names` has one, else by position.
absl::StatusOr<std::vector<int>> MatchPositions(
    const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& model_io,
    const std::vector<std::string>& names, size_t count,
    absl::string_view what) {
  std::vector<std::string> model_names;
  for (const onnx::ValueInfoProto& v : model_io)
    model_names.push_back(v.name());
  if (model_names.size() != count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the model has ", model_names.size(), " ", what, "s (",
        absl::StrJoin(model_names, ", "), "), the program ", count));
  }
  std::vector<int> out;
  std::set<int> taken;
  for (size_t i = 0; i < count; ++i) {
    int at = static_cast<int>(i);
    if (i < names.size() && !names[i].empty()) {
      at = -1;
      for (size_t k = 0; k < model_names.size(); ++k) {
        if (model_names[k] == names[i]) at = static_cast<int>(k);
      }
      if (at < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the model has no ", what, " named '", names[i], "' (", what, " ",
            i, "); its ", what, "s: ", absl::StrJoin(model_names, ", ")));
      }
    }
    if (!taken.insert(at).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model ", what, " '", model_names[at], "' is matched twice"));
    }
    out.push_back(at);
  }
  return out;
}

std::optional<std::string> Metadata(const onnx::ModelProto& model,
                                    absl::string_view key) {
  for (const onnx::StringStringEntryProto& e : model.metadata_props()) {
    if (e.key() == key) return e.value();
  }
  return std::nullopt;
}

std::vector<int64_t> DeclaredStaticShape(const onnx::ValueInfoProto& v,
                                         bool* all_static) {
  std::vector<int64_t> shape;
  *all_static = v.type().tensor_type().has_shape();
  for (const auto& d : v.type().tensor_type().shape().dim()) {
    if (!d.has_dim_value()) *all_static = false;
    shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return shape;
}

std::vector<int64_t> PermutedShape(const std::vector<int64_t>& shape,
                                   const std::vector<int64_t>& perm) {
  std::vector<int64_t> out;
  for (int64_t p : perm) out.push_back(shape[p]);
  return out;
}

// out[i_0..i_r] = a[j] with j[perm[k]] = i_k; axes past perm's rank (the
// (re, im) pair axis of a complex value) stay in place.
jaxpr::Array Permute(const jaxpr::Array& a, std::vector<int64_t> perm) {
  for (int k = static_cast<int>(perm.size()); k < a.rank(); ++k) {
    perm.push_back(k);
  }
  const std::vector<int64_t> shape = PermutedShape(a.shape(), perm);
  jaxpr::Array out(a.dtype(), shape);
  const int64_t n = a.num_elements();
  if (n == 0) return out;
  const size_t item = a.num_bytes() / static_cast<size_t>(n);
  const std::vector<int64_t> strides = a.Strides();
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t source = 0;
    for (size_t k = 0; k < perm.size(); ++k) {
      source += index[k] * strides[perm[k]];
    }
    std::memcpy(out.data() + flat * item, a.data() + source * item, item);
    for (int k = static_cast<int>(shape.size()) - 1; k >= 0; --k) {
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

// Which of the program's inputs (or outputs) the model takes channels-first:
// the caller's list, else the model's metadata, else by declared shape.
absl::StatusOr<std::set<int>> NchwPositions(
    const std::vector<int>& given, const onnx::ModelProto& model,
    const char* metadata_key,
    const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& model_io,
    const std::vector<int>& positions,
    const std::vector<std::vector<int64_t>>& program_shapes) {
  std::set<int> out(given.begin(), given.end());
  if (!given.empty()) return out;
  if (std::optional<std::string> recorded = Metadata(model, metadata_key)) {
    for (absl::string_view part : absl::StrSplit(*recorded, ',')) {
      int i = 0;
      if (!absl::SimpleAtoi(part, &i)) {
        return absl::InvalidArgumentError(
            absl::StrCat("the model's metadata ", metadata_key, "='", *recorded,
                         "' is not a list of indices"));
      }
      out.insert(i);
    }
    return out;
  }
  for (size_t i = 0; i < positions.size(); ++i) {
    const std::vector<int64_t>& shape = program_shapes[i];
    const int r = static_cast<int>(shape.size());
    if (r < 3) continue;
    bool all_static = false;
    const std::vector<int64_t> declared =
        DeclaredStaticShape(model_io.Get(positions[i]), &all_static);
    if (all_static && declared != shape &&
        declared == PermutedShape(shape, converter2::ToChannelsFirst(r))) {
      out.insert(static_cast<int>(i));
    }
  }
  return out;
}

}  // namespace

CheckResult CheckModelFile(const std::string& model_path,
                           const std::string& bundle_path,
                           const CheckOptions& options, OrtRunner& runner) {
  CheckResult result;
  result.bundle = bundle_path;
  result.model = model_path;
  result.pipeline = Pipeline::kIr;  // not used: nothing is converted
  auto fail = [&](absl::string_view stage, const absl::Status& status) {
    return MarkCheckFailed(result, stage, status);
  };
  auto bundle = LoadBundleForCheck(bundle_path, options, &result.inputs);
  if (!bundle.ok()) return fail("load", bundle.status());
  auto model = ReadModelFile(model_path);
  if (!model.ok()) return fail("load", model.status());
  auto inputs = InputsFor(*bundle, options);
  if (!inputs.ok()) return fail("inputs", inputs.status());
  auto expected =
      OracleOutputs(*bundle, *inputs, &result.oracle, options.convert);
  if (!expected.ok()) return fail("oracle", expected.status());

  const onnx::GraphProto& graph = model->graph();
  auto in_at = MatchPositions(
      graph.input(),
      KnownNames(options.convert.input_names, *bundle, "input_names"),
      inputs->size(), "input");
  if (!in_at.ok()) return fail("inputs", in_at.status());
  auto out_at = MatchPositions(
      graph.output(),
      KnownNames(options.convert.output_names, *bundle, "output_names"),
      expected->size(), "output");
  if (!out_at.ok()) return fail("compare", out_at.status());
  std::vector<std::vector<int64_t>> in_shapes, out_shapes;
  for (const jaxpr::Array& a : *inputs) in_shapes.push_back(a.shape());
  for (const jaxpr::Array& a : *expected) out_shapes.push_back(a.shape());
  auto nchw_in = NchwPositions(options.convert.inputs_as_nchw, *model,
                               "jax2onnx_inputs_as_nchw", graph.input(), *in_at,
                               in_shapes);
  if (!nchw_in.ok()) return fail("inputs", nchw_in.status());
  auto nchw_out = NchwPositions(options.convert.outputs_as_nchw, *model,
                                "jax2onnx_outputs_as_nchw", graph.output(),
                                *out_at, out_shapes);
  if (!nchw_out.ok()) return fail("compare", nchw_out.status());

  // Inputs in the model's order, channels-first where it takes them so.
  std::vector<jaxpr::Array> fed(inputs->size());
  for (size_t i = 0; i < inputs->size(); ++i) {
    const jaxpr::Array& a = (*inputs)[i];
    if (nchw_in->count(static_cast<int>(i)) && a.rank() < 3) {
      return fail("inputs", absl::InvalidArgumentError(absl::StrCat(
                                "input ", i, " has rank ", a.rank(),
                                "; an NCHW adapter needs rank 3 or more")));
    }
    fed[(*in_at)[i]] = nchw_in->count(static_cast<int>(i))
                           ? Permute(a, converter2::ToChannelsFirst(a.rank()))
                           : a;
  }
  absl::StatusOr<std::vector<jaxpr::Array>> ran;
  bool has_bf16 = false;
  for (const auto* list : {&graph.input(), &graph.output()}) {
    for (const onnx::ValueInfoProto& v : *list) {
      has_bf16 |=
          v.type().tensor_type().elem_type() == onnx::TensorProto::BFLOAT16;
    }
  }
  // float4_e2m1fn I/O as uint8 codes (plugin/float4_e2m1.h): RunModel
  // feeds and reads them as f4 arrays.
  for (const onnx::StringStringEntryProto& e : model->metadata_props()) {
    has_bf16 |= e.key() == plugin::kFloat4CodesMetadataKey;
  }
  if (has_bf16) {
    // RunModel wraps bf16 graph I/O in Casts (onnxruntime-node has no bf16
    // tensors) and writes that copy elsewhere, where a sidecar is not found.
    for (const onnx::TensorProto& t : graph.initializer()) {
      if (t.data_location() == onnx::TensorProto::EXTERNAL) {
        return fail("run", absl::UnimplementedError(
                               "a model with bf16 graph inputs or outputs and "
                               "external data cannot be run as it lies "
                               "(onnxruntime-node has no bf16 tensors)"));
      }
    }
    ran = RunModel(*model, fed, runner);
  } else {
    NamedArrays named;
    for (size_t k = 0; k < fed.size(); ++k) {
      named.emplace_back(graph.input(static_cast<int>(k)).name(),
                         jaxpr::ComplexAsPairs(fed[k]));
    }
    ran = runner.Run(model_path, named);
  }
  if (!ran.ok()) return fail("run", ran.status());
  if (ran->size() != expected->size()) {
    return fail("compare", absl::InternalError(absl::StrCat(
                               "the model returned ", ran->size(),
                               " outputs, expected ", expected->size())));
  }
  std::vector<jaxpr::Array> got;
  for (size_t i = 0; i < expected->size(); ++i) {
    jaxpr::Array a = (*ran)[(*out_at)[i]];
    if (nchw_out->count(static_cast<int>(i))) {
      const int r = static_cast<int>((*expected)[i].rank());
      if (r < 3 || a.rank() < r) {
        return fail("compare", absl::InvalidArgumentError(absl::StrCat(
                                   "output ", i, " has rank ", r,
                                   "; an NCHW adapter needs rank 3 or more")));
      }
      a = Permute(a, converter2::ToChannelsLast(r));
    }
    got.push_back(std::move(a));
  }
  RecordComparison(*bundle, *inputs, *expected, got, options, &result);
  return result;
}

}  // namespace jax2onnx::api
