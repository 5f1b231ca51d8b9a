#include "api/untyped_values.h"

#include <exception>
#include <string>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace jax2onnx::api {
namespace {

bool IsTyped(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      return type.tensor_type().elem_type() != onnx::TensorProto::UNDEFINED &&
             type.tensor_type().has_shape();
    case onnx::TypeProto::kSequenceType:
      return type.sequence_type().has_elem_type() &&
             IsTyped(type.sequence_type().elem_type());
    case onnx::TypeProto::kOptionalType:
      return type.optional_type().has_elem_type() &&
             IsTyped(type.optional_type().elem_type());
    default:
      return false;
  }
}

void CollectUntyped(const onnx::GraphProto& graph,
                    std::vector<UntypedValue>& untyped) {
  std::unordered_set<std::string> typed;
  std::unordered_set<std::string> elem_typed;  // element type, no rank
  auto note = [&](const onnx::ValueInfoProto& v) {
    if (!v.has_type()) return;
    if (IsTyped(v.type())) {
      typed.insert(v.name());
    } else if (v.type().has_tensor_type() &&
               v.type().tensor_type().elem_type() !=
                   onnx::TensorProto::UNDEFINED) {
      elem_typed.insert(v.name());
    }
  };
  for (const auto& v : graph.input()) note(v);
  for (const auto& v : graph.output()) note(v);
  for (const auto& v : graph.value_info()) note(v);
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& out : node.output()) {
      if (out.empty() || typed.count(out)) continue;
      untyped.push_back({out, elem_typed.count(out) > 0});
    }
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) CollectUntyped(attr.g(), untyped);
      for (const onnx::GraphProto& g : attr.graphs()) {
        CollectUntyped(g, untyped);
      }
    }
  }
}

}  // namespace

absl::StatusOr<std::vector<UntypedValue>> UntypedValues(
    const onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  copy.set_ir_version(8);
  try {
    onnx::shape_inference::InferShapes(
        copy, onnx::OpSchemaRegistry::Instance(),
        onnx::ShapeInferenceOptions(/*check_type_val=*/true,
                                    /*strict_mode_val=*/1,
                                    /*data_prop_val=*/true));
  } catch (const std::exception& e) {
    return absl::FailedPreconditionError(
        absl::StrCat("strict shape inference: ", e.what()));
  }
  std::vector<UntypedValue> untyped;
  CollectUntyped(copy.graph(), untyped);
  return untyped;
}

std::string UntypedNames(const std::vector<UntypedValue>& values,
                         size_t shown) {
  std::string out;
  for (size_t i = 0; i < values.size() && i < shown; ++i) {
    absl::StrAppend(&out, i == 0 ? "" : ", ", values[i].name);
  }
  if (values.size() > shown) absl::StrAppend(&out, ", ...");
  return out;
}

}  // namespace jax2onnx::api
