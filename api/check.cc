#include "api/check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/convert_internal.h"
#include "api/splitmix64.h"
#include "api/write_model.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/io/compare.h"
#include "jaxpr/io/examples.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/prng.h"
#include "jaxpr/status_macros.h"
#include "onnx/onnx_pb.h"
#include "plugin/float4_e2m1.h"
#include "plugin/onnx_types.h"

namespace jax2onnx::api {
namespace {

jaxpr::Array RandomArray(jaxpr::DType dtype, std::vector<int64_t> shape,
                         SplitMix64& rng) {
  jaxpr::Array a(dtype, std::move(shape));
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    if (dtype == jaxpr::DType::kBool) {
      a.SetFromInt64(i, rng.Int(0, 1));
    } else if (jaxpr::IsSignedInt(dtype)) {
      a.SetFromInt64(i, rng.Int(-5, 5));
    } else if (jaxpr::IsUnsignedInt(dtype)) {
      a.SetFromInt64(i, rng.Int(0, 10));
    } else if (dtype == jaxpr::DType::kC64) {
      a.typed_data<float>()[2 * i] = static_cast<float>(rng.Uniform(-2, 2));
      a.typed_data<float>()[2 * i + 1] = static_cast<float>(rng.Uniform(-2, 2));
    } else if (dtype == jaxpr::DType::kC128) {
      a.typed_data<double>()[2 * i] = rng.Uniform(-2.0, 2.0);
      a.typed_data<double>()[2 * i + 1] = rng.Uniform(-2.0, 2.0);
    } else {
      a.SetFromDouble(i, rng.Uniform(-2.0, 2.0));
    }
  }
  return a;
}

// The smallest positive subnormal of a float dtype.
double DenormMin(jaxpr::DType dtype) {
  switch (dtype) {
    case jaxpr::DType::kF16:
      return std::ldexp(1.0, -24);
    case jaxpr::DType::kBF16:
      return std::ldexp(1.0, -133);
    case jaxpr::DType::kF64:
    case jaxpr::DType::kC128:
      return std::numeric_limits<double>::denorm_min();
    default:
      return std::numeric_limits<float>::denorm_min();
  }
}
// The largest finite value of a float dtype.
double FloatMax(jaxpr::DType dtype) {
  switch (dtype) {
    case jaxpr::DType::kF16:
      return 65504.0;
    case jaxpr::DType::kBF16:
      return std::ldexp(2.0 - std::ldexp(1.0, -7), 127);
    case jaxpr::DType::kF64:
    case jaxpr::DType::kC128:
      return std::numeric_limits<double>::max();
    default:
      return std::numeric_limits<float>::max();
  }
}

// Special values, starting at a seeded offset so that every position of an
// input sees each value across seeds, mixed with ordinary numbers.
jaxpr::Array SpecialArray(jaxpr::DType dtype, std::vector<int64_t> shape,
                          SplitMix64& rng) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double tiny = DenormMin(dtype);
  const double big = FloatMax(dtype);
  const std::vector<double> floats = {nan,  1.0,  inf,   -0.0, -inf, 0.0,
                                      tiny, -1.5, -tiny, big,  -big, 0.5};
  jaxpr::Array a(dtype, std::move(shape));
  const int64_t offset = rng.Int(0, 1 << 20);
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    const uint64_t k = static_cast<uint64_t>(i + offset);
    if (dtype == jaxpr::DType::kBool) {
      a.SetFromInt64(i, rng.Int(0, 1));
    } else if (jaxpr::IsSignedInt(dtype)) {
      const int bits = jaxpr::ItemSize(dtype) * 8;
      const int64_t hi = bits == 64 ? std::numeric_limits<int64_t>::max()
                                    : (int64_t{1} << (bits - 1)) - 1;
      const int64_t values[] = {-hi - 1, 0, hi, -1, 1, rng.Int(-5, 5)};
      a.SetFromInt64(i, values[k % 6]);
    } else if (jaxpr::IsUnsignedInt(dtype)) {
      const int bits = jaxpr::ItemSize(dtype) * 8;
      const uint64_t hi = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      const uint64_t values[] = {0, hi, 1,
                                 static_cast<uint64_t>(rng.Int(0, 10))};
      // int64 bits: SetFromInt64 keeps every bit of a u64.
      a.SetFromInt64(i, static_cast<int64_t>(values[k % 4]));
    } else if (dtype == jaxpr::DType::kC64) {
      a.typed_data<float>()[2 * i] =
          static_cast<float>(floats[k % floats.size()]);
      a.typed_data<float>()[2 * i + 1] =
          static_cast<float>(floats[(k / 3) % floats.size()]);
    } else if (dtype == jaxpr::DType::kC128) {
      a.typed_data<double>()[2 * i] = floats[k % floats.size()];
      a.typed_data<double>()[2 * i + 1] = floats[(k / 3) % floats.size()];
    } else {
      a.SetFromDouble(i, floats[k % floats.size()]);
    }
  }
  return a;
}

// ONNX Runtime's JavaScript API (onnxruntime-node) has no bfloat16, float8,
// float4 or int4 tensor type, so a model with such graph inputs or outputs is
// run as a copy wrapped in Casts: each such input NAME becomes an f32 (i32
// for int4/uint4) input NAME__f32_in Cast to its type under NAME, each such
// output NAME is Cast to an f32 (i32) output NAME__f32_out. These Casts are
// exact both ways for the values fed and read (every value of these types
// is an f32 / i32), so the model under test sees and returns exactly its
// own values. The model given to users is not changed.
// The f32/i32 carrier of a boundary type; 0 for every other type.
int BoundaryCarrier(int elem_type) {
  if (elem_type == onnx::TensorProto::BFLOAT16) return onnx::TensorProto::FLOAT;
  // FLOAT8E4M3FN..FLOAT8E5M2FNUZ (17..20), FLOAT4E2M1 (23), FLOAT8E8M0 (24).
  if ((elem_type >= 17 && elem_type <= 20) || elem_type == 23 ||
      elem_type == 24) {
    return onnx::TensorProto::FLOAT;
  }
  // UINT4, INT4 (21, 22), UINT2, INT2 (25, 26).
  if (elem_type == 21 || elem_type == 22 || elem_type == 25 ||
      elem_type == 26) {
    return onnx::TensorProto::INT32;
  }
  return 0;
}

bool HasBf16Boundary(const onnx::ModelProto& model) {
  for (const auto* list : {&model.graph().input(), &model.graph().output()}) {
    for (const onnx::ValueInfoProto& v : *list) {
      if (BoundaryCarrier(v.type().tensor_type().elem_type()) != 0) {
        return true;
      }
    }
  }
  return false;
}

onnx::NodeProto BoundaryCast(const std::string& from, const std::string& to,
                             int elem_type) {
  onnx::NodeProto cast;
  cast.set_op_type("Cast");
  cast.set_name(absl::StrCat("check_boundary_", to));
  cast.add_input(from);
  cast.add_output(to);
  onnx::AttributeProto* attr = cast.add_attribute();
  attr->set_name("to");
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(elem_type);
  if (elem_type >= 17 && elem_type <= 20) {
    // float8: a fed inf or NaN must arrive as itself, not saturated.
    onnx::AttributeProto* saturate = cast.add_attribute();
    saturate->set_name("saturate");
    saturate->set_type(onnx::AttributeProto::INT);
    saturate->set_i(0);
  }
  return cast;
}

onnx::ModelProto WrapBf16Boundary(const onnx::ModelProto& model) {
  onnx::ModelProto wrapped = model;
  onnx::GraphProto* g = wrapped.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (onnx::ValueInfoProto& in : *g->mutable_input()) {
    auto* tensor = in.mutable_type()->mutable_tensor_type();
    const int type = tensor->elem_type();
    if (BoundaryCarrier(type) == 0) continue;
    const std::string name = in.name();
    in.set_name(absl::StrCat(name, "__f32_in"));
    tensor->set_elem_type(BoundaryCarrier(type));
    *nodes.Add() = BoundaryCast(in.name(), name, type);
  }
  for (onnx::NodeProto& n : *g->mutable_node()) *nodes.Add() = std::move(n);
  for (onnx::ValueInfoProto& out : *g->mutable_output()) {
    auto* tensor = out.mutable_type()->mutable_tensor_type();
    const int type = tensor->elem_type();
    if (BoundaryCarrier(type) == 0) continue;
    const std::string name = out.name();
    out.set_name(absl::StrCat(name, "__f32_out"));
    tensor->set_elem_type(BoundaryCarrier(type));
    *nodes.Add() = BoundaryCast(name, out.name(), BoundaryCarrier(type));
  }
  g->mutable_node()->Swap(&nodes);
  return wrapped;
}

// `a` with every element converted to `to` (exact for bf16 <-> f32 here).
jaxpr::Array Converted(const jaxpr::Array& a, jaxpr::DType to) {
  jaxpr::Array out(to, a.shape());
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    out.SetFromDouble(i, a.GetAsDouble(i));
  }
  return out;
}

std::string FirstLine(absl::string_view text) {
  const size_t nl = text.find('\n');
  return std::string(nl == absl::string_view::npos ? text : text.substr(0, nl));
}

}  // namespace

CheckResult MarkCheckFailed(CheckResult& result, absl::string_view stage,
                            const absl::Status& status) {
  result.passed = false;
  result.stage = std::string(stage);
  result.reason = FirstLine(status.message());
  return result;
}

void RecordComparison(const Bundle& bundle,
                      const std::vector<jaxpr::Array>& inputs,
                      const std::vector<jaxpr::Array>& expected,
                      const std::vector<jaxpr::Array>& got,
                      const CheckOptions& options, CheckResult* result) {
  std::string failure;
  result->outputs = CompareOutputs(bundle, inputs, expected, got,
                                   result->oracle == "expected", &failure,
                                   options.tolerance, options.convert);
  result->passed = failure.empty();
  if (!result->passed) {
    result->stage = "compare";
    result->reason = std::move(failure);
  }
}

absl::StatusOr<Bundle> LoadBundleForCheck(const std::string& bundle_path,
                                          const CheckOptions& options,
                                          std::string* inputs_source) {
  J2O_ASSIGN_OR_RETURN(Bundle bundle, api::LoadBundle(bundle_path));
  if (options.inputs_npz.has_value()) {
    J2O_RETURN_IF_ERROR(jaxpr::SetBundleInputs(&bundle, *options.inputs_npz,
                                               options.inputs_npz_path));
    *inputs_source = options.inputs_npz_path;
  } else if (options.random_inputs) {
    bundle.inputs.clear();
    bundle.expected.clear();
  }
  if (bundle.jaxpr().invars.empty()) {
    *inputs_source = "none";
  } else if (bundle.inputs.empty()) {
    *inputs_source = absl::StrCat("random (seed ", options.seed, ")");
  } else if (!options.inputs_npz.has_value()) {
    *inputs_source = "bundle";
  }
  return bundle;
}

absl::StatusOr<std::vector<jaxpr::Array>> InputsFor(
    const Bundle& bundle, const CheckOptions& options) {
  if (!bundle.inputs.empty()) return bundle.inputs;
  const jaxpr::ClosedJaxpr& main = bundle.jaxpr();
  std::vector<std::string> symbols;
  for (const jaxpr::Var* v : main.invars) {
    for (const jaxpr::DimExpr& d : v->aval.shape) d.CollectSymbols(&symbols);
  }
  jaxpr::DimBindings bindings;
  for (size_t k = 0; k < symbols.size(); ++k) {
    bindings[symbols[k]] = options.first_symbol_size + static_cast<int64_t>(k);
  }
  SplitMix64 rng(options.seed * 0x100000001b3ull + 12345);
  std::vector<jaxpr::Array> inputs;
  for (size_t i = 0; i < main.invars.size(); ++i) {
    // A PRNG key input is fed as its key data (random u32[..., W] words).
    J2O_ASSIGN_OR_RETURN(const jaxpr::Aval aval,
                         jaxpr::PhysicalAval(main.invars[i]->aval));
    if (!aval.is_shaped() || jaxpr::ItemSize(aval.dtype) == 0) {
      return absl::UnimplementedError(absl::StrCat(
          "cannot generate input ", i, " of type ", aval.ToString()));
    }
    J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                         aval.ConcreteShape(bindings));
    // A huge (well-typed) shape is an error here, not std::bad_alloc.
    constexpr int64_t kMaxInputBytes = int64_t{1} << 32;
    if (auto bytes = jaxpr::CheckedByteSize(aval.dtype, shape, kMaxInputBytes);
        !bytes.ok()) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "cannot generate input ", i, ": ", bytes.status().message()));
    }
    inputs.push_back(options.special_values
                         ? SpecialArray(aval.dtype, std::move(shape), rng)
                         : RandomArray(aval.dtype, std::move(shape), rng));
  }
  return inputs;
}

absl::StatusOr<std::vector<jaxpr::Array>> OracleOutputs(
    const Bundle& bundle, const std::vector<jaxpr::Array>& inputs,
    std::string* oracle_name, const ConvertOptions& options) {
  if (!bundle.inputs.empty() && bundle.has_expected()) {
    *oracle_name = "expected";
    return bundle.expected;
  }
  *oracle_name = "interpreter";
  J2O_ASSIGN_OR_RETURN(const jaxpr::EvalOptions eval_options,
                       InterpreterOptions(bundle, options));
  return jaxpr::Evaluate(bundle.jaxpr(), bundle.consts, inputs, eval_options);
}

namespace {

// `a`'s bytes as an array of `to` (both one byte per element).
jaxpr::Array Reinterpreted(const jaxpr::Array& a, jaxpr::DType to) {
  jaxpr::Array out(to, a.shape());
  std::copy(a.data(), a.data() + a.num_elements(), out.data());
  return out;
}

absl::StatusOr<std::vector<jaxpr::Array>> RunModelAsIs(
    const onnx::ModelProto& model, const std::vector<jaxpr::Array>& inputs,
    OrtRunner& runner);

}  // namespace

// float4_e2m1fn graph inputs and outputs are uint8 codes in the model
// (plugin/float4_e2m1.h; the metadata entry names them): an f4 array is fed
// as its bytes, and a listed output comes back as an f4 array.
absl::StatusOr<std::vector<jaxpr::Array>> RunModel(
    const onnx::ModelProto& model, const std::vector<jaxpr::Array>& inputs,
    OrtRunner& runner) {
  absl::flat_hash_set<std::string> coded;
  for (const onnx::StringStringEntryProto& e : model.metadata_props()) {
    if (e.key() != plugin::kFloat4CodesMetadataKey) continue;
    for (absl::string_view name : absl::StrSplit(e.value(), ',')) {
      coded.insert(std::string(name));
    }
  }
  if (coded.empty()) return RunModelAsIs(model, inputs, runner);
  const jaxpr::DType f4 = jaxpr::NarrowDType(jaxpr::NarrowFormat::kF4E2M1FN);
  std::vector<jaxpr::Array> fed = inputs;
  for (size_t i = 0; i < fed.size(); ++i) {
    if (fed[i].dtype() == f4) {
      fed[i] = Reinterpreted(fed[i], jaxpr::DType::kU8);
    }
  }
  J2O_ASSIGN_OR_RETURN(std::vector<jaxpr::Array> outputs,
                       RunModelAsIs(model, fed, runner));
  for (int i = 0;
       i < model.graph().output_size() && i < static_cast<int>(outputs.size());
       ++i) {
    if (coded.contains(model.graph().output(i).name()) &&
        outputs[i].dtype() == jaxpr::DType::kU8) {
      outputs[i] = Reinterpreted(outputs[i], f4);
    }
  }
  return outputs;
}

namespace {

absl::StatusOr<std::vector<jaxpr::Array>> RunModelAsIs(
    const onnx::ModelProto& model, const std::vector<jaxpr::Array>& inputs,
    OrtRunner& runner) {
  if (static_cast<int>(inputs.size()) != model.graph().input_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model has ", model.graph().input_size(),
                     " inputs, got ", inputs.size(), " values"));
  }
  if (HasBf16Boundary(model)) {
    std::vector<jaxpr::Array> f32_inputs;
    for (const jaxpr::Array& a : inputs) {
      f32_inputs.push_back(
          a.dtype() == jaxpr::DType::kBF16 || jaxpr::IsNarrowFloat(a.dtype())
              ? Converted(a, jaxpr::DType::kF32)
          : jaxpr::IsNarrowInt(a.dtype()) ? Converted(a, jaxpr::DType::kI32)
                                          : a);
    }
    J2O_ASSIGN_OR_RETURN(
        std::vector<jaxpr::Array> outputs,
        RunModelAsIs(WrapBf16Boundary(model), f32_inputs, runner));
    for (int i = 0; i < model.graph().output_size() &&
                    i < static_cast<int>(outputs.size());
         ++i) {
      const int type = model.graph().output(i).type().tensor_type().elem_type();
      if (BoundaryCarrier(type) != 0) {
        outputs[i] = Converted(outputs[i], *plugin::JaxDType(type));
      }
    }
    return outputs;
  }
  // A private directory (mkdtemp) per model: no name another process can
  // take, and room for an external-data sidecar next to the model.
  J2O_ASSIGN_OR_RETURN(ScopedTempDir dir,
                       ScopedTempDir::Create("jax2onnx_check_"));
  const std::string model_path = absl::StrCat(dir.path(), "/model.onnx");
  J2O_RETURN_IF_ERROR(WriteModel(model, model_path));
  NamedArrays named;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const onnx::ValueInfoProto& in = model.graph().input(static_cast<int>(i));
    const int type = in.type().tensor_type().elem_type();
    if (jaxpr::IsNarrowInt(inputs[i].dtype()) &&
        (type == onnx::TensorProto::INT8 || type == onnx::TensorProto::UINT8)) {
      // int4/int2 below their first opset: the INT8/UINT8 carrier holds the
      // value itself (plugin/narrow_int_carrier.h).
      named.emplace_back(in.name(),
                         Converted(inputs[i], type == onnx::TensorProto::INT8
                                                  ? jaxpr::DType::kI8
                                                  : jaxpr::DType::kU8));
      continue;
    }
    // Complex inputs cross into ONNX as (re, im) pairs (DESIGN.md §6).
    named.emplace_back(in.name(), jaxpr::ComplexAsPairs(inputs[i]));
  }
  return runner.Run(model_path, named);
}

// Inputs, oracle, run and compare of one example set on a converted model;
// `result` already names the bundle, pipeline and conversion time.
void CheckOneExample(const Bundle& bundle, const onnx::ModelProto& model,
                     const CheckOptions& options, OrtRunner& runner,
                     CheckResult& result) {
  auto fail = [&](absl::string_view stage, const absl::Status& status) {
    MarkCheckFailed(result, stage, status);
  };
  auto inputs = InputsFor(bundle, options);
  if (!inputs.ok()) return fail("inputs", inputs.status());
  auto expected =
      OracleOutputs(bundle, *inputs, &result.oracle, options.convert);
  if (!expected.ok()) return fail("oracle", expected.status());
  auto got = RunModel(model, *inputs, runner);
  if (!got.ok()) return fail("run", got.status());
  if (got->size() != expected->size()) {
    return fail("compare", absl::InternalError(absl::StrCat(
                               "the model returned ", got->size(),
                               " outputs, expected ", expected->size())));
  }
  RecordComparison(bundle, *inputs, *expected, *got, options, &result);
}

std::vector<CheckResult> CheckExamples(const std::string& bundle_path,
                                       const CheckOptions& options,
                                       OrtRunner& runner, bool all_examples) {
  CheckResult result;
  result.bundle = bundle_path;
  auto fail = [&](absl::string_view stage, const absl::Status& status) {
    return std::vector<CheckResult>{MarkCheckFailed(result, stage, status)};
  };
  auto pipeline = RoutePipeline(options.convert);
  if (!pipeline.ok()) return fail("route", pipeline.status());
  result.pipeline = *pipeline;
  auto bundle = LoadBundleForCheck(bundle_path, options, &result.inputs);
  if (!bundle.ok()) return fail("load", bundle.status());
  // Further examples only where the bundle's own inputs are used.
  std::vector<jaxpr::NamedArrays> more;
  if (all_examples && result.inputs == "bundle") {
    auto read = jaxpr::ReadMoreExamples(*bundle);
    if (!read.ok()) return fail("load", read.status());
    more = *std::move(read);
  }
  const auto start = std::chrono::steady_clock::now();
  auto model = ConvertWithPipeline(*pipeline, *bundle, options.convert);
  result.convert_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!model.ok()) return fail("convert", model.status());
  std::vector<CheckResult> results;
  results.push_back(result);
  CheckOneExample(*bundle, *model, options, runner, results.back());
  for (size_t k = 1; k <= more.size(); ++k) {
    results.push_back(result);
    CheckResult& r = results.back();
    r.example = static_cast<int>(k);
    r.inputs = absl::StrCat("bundle example ", k);
    const absl::Status set = jaxpr::SetBundleInputs(
        &*bundle, more[k - 1], absl::StrCat(bundle->npz_path, " example ", k));
    if (!set.ok()) {
      r.passed = false;
      r.stage = "load";
      r.reason = FirstLine(set.message());
      continue;
    }
    CheckOneExample(*bundle, *model, options, runner, r);
  }
  return results;
}

}  // namespace

CheckResult CheckBundle(const std::string& bundle_path,
                        const CheckOptions& options, OrtRunner& runner) {
  return CheckExamples(bundle_path, options, runner, /*all_examples=*/false)
      .front();
}

std::vector<CheckResult> CheckBundleExamples(const std::string& bundle_path,
                                             const CheckOptions& options,
                                             OrtRunner& runner) {
  return CheckExamples(bundle_path, options, runner, /*all_examples=*/true);
}

std::vector<CheckResult> CheckModelFileExamples(const std::string& model_path,
                                                const std::string& bundle_path,
                                                const CheckOptions& options,
                                                OrtRunner& runner) {
  std::vector<CheckResult> results = {
      CheckModelFile(model_path, bundle_path, options, runner)};
  if (results.front().inputs != "bundle") return results;
  auto bundle = api::LoadBundle(bundle_path);
  if (!bundle.ok()) return results;  // reported by the first result
  auto more = jaxpr::ReadMoreExamples(*bundle);
  if (!more.ok()) {
    results.front().passed = false;
    results.front().stage = "load";
    results.front().reason = FirstLine(more.status().message());
    return results;
  }
  // Each further set goes in as an --inputs npz would: its expected_i,
  // when present, are the oracle.
  for (size_t k = 1; k <= more->size(); ++k) {
    CheckOptions with_example = options;
    with_example.inputs_npz = std::move((*more)[k - 1]);
    with_example.inputs_npz_path =
        absl::StrCat(bundle->npz_path, " example ", k);
    results.push_back(
        CheckModelFile(model_path, bundle_path, with_example, runner));
    results.back().example = static_cast<int>(k);
    results.back().inputs = absl::StrCat("bundle example ", k);
  }
  return results;
}

}  // namespace jax2onnx::api
