// Helpers for the legacy-pipeline tests: bundles from jaxpr text,
// deterministic serialization, and test-only lowerings registered under
// `test_*` names (kept out of the real plugin set).
#ifndef JAX2ONNX_TESTS_CONVERTER_CONVERTER_TEST_UTIL_H_
#define JAX2ONNX_TESTS_CONVERTER_CONVERTER_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "converter/convert.h"
#include "converter/state.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "gtest/gtest.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/parser.h"
#include "onnx/onnx_pb.h"
#include "plugin/registry.h"
#include "plugins/register.h"
#include "tests/ort_accepts.h"

namespace jax2onnx::converter::testing {

inline jaxpr::Bundle BundleFromText(const std::string& text,
                                    std::vector<jaxpr::Array> consts = {}) {
  absl::StatusOr<jaxpr::JaxprFile> file = jaxpr::ParseJaxprText(text);
  EXPECT_TRUE(file.ok()) << file.status();
  jaxpr::Bundle bundle;
  bundle.name = "test";
  if (file.ok()) bundle.file = *std::move(file);
  bundle.consts = std::move(consts);
  return bundle;
}

inline std::string SerializeDeterministic(const onnx::ModelProto& model) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream raw(&bytes);
    google::protobuf::io::CodedOutputStream out(&raw);
    out.SetSerializationDeterministic(true);
    model.SerializeToCodedStream(&out);
  }
  return bytes;
}

// The dims `test_shape_value` turns into a runtime shape tensor.
inline std::vector<jaxpr::DimExpr>& TestShapeDims() {
  static auto* dims = new std::vector<jaxpr::DimExpr>();
  return *dims;
}

// Returns without binding its output (the guardrail must catch it).
inline absl::Status LowerBindsNothing(State&, const jaxpr::Eqn&) {
  return absl::OkStatus();
}

// Appends a node straight to the GraphProto, bypassing shape_env, and feeds
// it into a registered Identity that becomes the output.
inline absl::Status LowerUnregisteredNode(State& s, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(std::string x, s.Input(eqn, 0));
  onnx::NodeProto* raw = s.graph().add_node();
  raw->set_name("raw_neg_node");
  raw->set_op_type("Neg");
  raw->add_input(x);
  raw->add_output("raw_neg");
  J2O_ASSIGN_OR_RETURN(ValueInfo out, State::OutInfo(eqn, 0));
  return s.SetOutput(eqn, 0, s.AddNode("Identity", {"raw_neg"}, out));
}

// Binds a float outvar to an int32 value.
inline absl::Status LowerChangesDType(State& s, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(std::string x, s.Input(eqn, 0));
  J2O_ASSIGN_OR_RETURN(ValueInfo out, State::OutInfo(eqn, 0));
  out.dtype = onnx::TensorProto::INT32;
  return s.SetOutput(
      eqn, 0,
      s.AddNode("Cast", {x}, out, {AttrInt("to", onnx::TensorProto::INT32)}));
}

// Output 0 (i64[n]) = runtime value of TestShapeDims().
inline absl::Status LowerShapeValue(State& s, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(std::string shape, s.ShapeValue(TestShapeDims()));
  return s.SetOutput(eqn, 0, shape);
}

// Inlines params `jaxpr` (a stand-in for pjit).
inline absl::Status LowerCall(State& s, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(const jaxpr::ClosedJaxpr* body,
                       eqn.params.GetJaxpr("jaxpr"));
  std::vector<std::string> args;
  for (int i = 0; i < static_cast<int>(eqn.inputs.size()); ++i) {
    J2O_ASSIGN_OR_RETURN(std::string a, s.Input(eqn, i));
    args.push_back(std::move(a));
  }
  J2O_ASSIGN_OR_RETURN(std::vector<std::string> results, s.Inline(*body, args));
  for (size_t i = 0; i < results.size(); ++i) {
    J2O_RETURN_IF_ERROR(s.SetOutput(eqn, static_cast<int>(i), results[i]));
  }
  return absl::OkStatus();
}

// Adds an initializer nothing reads and a node nothing reads, and passes
// its operand through an Identity.
inline absl::Status LowerWithDeadParts(State& s, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(std::string x, s.Input(eqn, 0));
  J2O_ASSIGN_OR_RETURN(ValueInfo out, State::OutInfo(eqn, 0));
  s.AddInitializer("unused_weight",
                   *TensorOf(jaxpr::Array(jaxpr::DType::kF32, {4})));
  s.AddNode("Neg", {x}, out);
  return s.SetOutput(eqn, 0, s.AddNode("Identity", {x}, out));
}

// out = If(pred, then: Neg(exp(x)), else: x), with exp(x) computed in the
// outer graph and read only inside the then-branch, and the else-branch
// returning an outer value directly.
inline absl::Status LowerIfNegExp(State& s, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(std::string pred, s.Input(eqn, 0));
  J2O_ASSIGN_OR_RETURN(std::string x, s.Input(eqn, 1));
  J2O_ASSIGN_OR_RETURN(ValueInfo out, State::OutInfo(eqn, 0));
  const std::string e = s.AddNode("Exp", {x}, out);
  J2O_ASSIGN_OR_RETURN(
      onnx::GraphProto then_branch,
      s.BuildSubgraph(
          "then", [&]() -> absl::StatusOr<std::vector<std::string>> {
            return std::vector<std::string>{s.AddNode("Neg", {e}, out)};
          }));
  J2O_ASSIGN_OR_RETURN(
      onnx::GraphProto else_branch,
      s.BuildSubgraph("else",
                      [&]() -> absl::StatusOr<std::vector<std::string>> {
                        return std::vector<std::string>{x};
                      }));
  return s.SetOutput(
      eqn, 0,
      s.AddNode("If", {pred}, out,
                {AttrGraph("then_branch", std::move(then_branch)),
                 AttrGraph("else_branch", std::move(else_branch))}));
}

// Registers the test-only lowerings (idempotent).
inline void RegisterTestLowerings() {
  plugin::Registry& r = plugin::Registry::Global();
  r.RegisterLegacy("test_binds_nothing", &LowerBindsNothing);
  r.RegisterLegacy("test_unregistered_node", &LowerUnregisteredNode);
  r.RegisterLegacy("test_changes_dtype", &LowerChangesDType);
  r.RegisterLegacy("test_shape_value", &LowerShapeValue);
  r.RegisterLegacy("test_call", &LowerCall);
  r.RegisterLegacy("test_with_dead_parts", &LowerWithDeadParts);
  r.RegisterLegacy("test_if_neg_exp", &LowerIfNegExp);
  r.RegisterLegacy("test_needs_opset_23", &LowerBindsNothing, {{}, 23, ""});
}

inline absl::StatusOr<onnx::ModelProto> Convert(const jaxpr::Bundle& bundle,
                                                int opset = 17) {
  plugins::RegisterAll();
  RegisterTestLowerings();
  LegacyConvertOptions options;
  options.opset = opset;
  absl::StatusOr<onnx::ModelProto> model = ConvertToProto(bundle, options);
  // Every model these tests produce must load in ORT (tests/ort_accepts.h),
  // whatever else the test looks at.
  if (model.ok()) EXPECT_ORT_ACCEPTS(*model);
  return model;
}

}  // namespace jax2onnx::converter::testing

#endif  // JAX2ONNX_TESTS_CONVERTER_CONVERTER_TEST_UTIL_H_
