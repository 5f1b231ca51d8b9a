// Every model a test produces must be one ONNX Runtime loads (and, at opset
// 17, one the ONNX checker accepts with strict shape inference): a model ORT
// refuses is a test failure, never an accepted output (issue 17 item 7).
// Tests that convert and then only look at the graph or the text call
// ExpectOrtAccepts on each model they produce. The model runs once on zero
// inputs (symbolic dims bound to 2): ORT's session creation type-checks
// every node, and a run exercises shape inference end to end.
#ifndef JAX2ONNX_TESTS_ORT_ACCEPTS_H_
#define JAX2ONNX_TESTS_ORT_ACCEPTS_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/check.h"
#include "api/corpus.h"
#include "api/ort_runner.h"
#include "gtest/gtest.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::ort_accepts {

// The jaxpr dtype of an ONNX elem_type the ORT harness can feed.
inline bool DTypeOfOnnx(int elem_type, jaxpr::DType* out) {
  using onnx::TensorProto;
  switch (elem_type) {
    case TensorProto::FLOAT: *out = jaxpr::DType::kF32; return true;
    case TensorProto::DOUBLE: *out = jaxpr::DType::kF64; return true;
    case TensorProto::FLOAT16: *out = jaxpr::DType::kF16; return true;
    case TensorProto::BFLOAT16: *out = jaxpr::DType::kBF16; return true;
    case TensorProto::INT8: *out = jaxpr::DType::kI8; return true;
    case TensorProto::INT16: *out = jaxpr::DType::kI16; return true;
    case TensorProto::INT32: *out = jaxpr::DType::kI32; return true;
    case TensorProto::INT64: *out = jaxpr::DType::kI64; return true;
    case TensorProto::UINT8: *out = jaxpr::DType::kU8; return true;
    case TensorProto::UINT16: *out = jaxpr::DType::kU16; return true;
    case TensorProto::UINT32: *out = jaxpr::DType::kU32; return true;
    case TensorProto::UINT64: *out = jaxpr::DType::kU64; return true;
    case TensorProto::BOOL: *out = jaxpr::DType::kBool; return true;
    default: return false;
  }
}

// OK when ORT loads and runs `model` on `inputs` (one per graph input, in
// order) and, for an opset-17 model, the ONNX checker with strict shape
// inference accepts it. For models whose zero inputs are not meaningful
// (a while loop counting by an input, say): the corpus bundles' own inputs.
inline absl::Status OrtAcceptsOn(const onnx::ModelProto& model,
                                 const std::vector<jaxpr::Array>& inputs) {
  auto outputs = api::RunModel(model, inputs, api::OrtRunner::Shared());
  if (!outputs.ok()) {
    return absl::Status(outputs.status().code(),
                        absl::StrCat("ONNX Runtime refuses the model: ",
                                     outputs.status().message()));
  }
  for (const onnx::OperatorSetIdProto& o : model.opset_import()) {
    if ((o.domain().empty() || o.domain() == "ai.onnx") && o.version() == 17) {
      return api::ValidateWithOnnxChecker(model);
    }
  }
  return absl::OkStatus();
}

// OK when ORT loads and runs `model` on zero inputs and, for an opset-17
// model, the ONNX checker with strict shape inference accepts it.
// Graph inputs that have an initializer of the same name (a default) keep
// it: ONNX Runtime does not list them among the inputs it must be fed, so
// the run is of a copy without them in graph.input (the initializer stays).
inline absl::Status OrtAccepts(const onnx::ModelProto& model) {
  std::set<std::string> defaulted;
  for (const onnx::TensorProto& init : model.graph().initializer()) {
    defaulted.insert(init.name());
  }
  bool has_default = false;
  for (const onnx::ValueInfoProto& in : model.graph().input()) {
    has_default |= defaulted.count(in.name()) > 0;
  }
  onnx::ModelProto without_defaults;
  if (has_default) {
    without_defaults = model;
    without_defaults.mutable_graph()->clear_input();
    for (const onnx::ValueInfoProto& in : model.graph().input()) {
      if (defaulted.count(in.name()) == 0) {
        *without_defaults.mutable_graph()->add_input() = in;
      }
    }
  }
  const onnx::ModelProto& fed = has_default ? without_defaults : model;
  std::vector<jaxpr::Array> inputs;
  for (const onnx::ValueInfoProto& in : fed.graph().input()) {
    const auto& tensor = in.type().tensor_type();
    jaxpr::DType dtype;
    if (!DTypeOfOnnx(tensor.elem_type(), &dtype)) {
      return absl::UnimplementedError(absl::StrCat(
          "input '", in.name(), "': elem_type ", tensor.elem_type(),
          " cannot be fed by the test harness"));
    }
    std::vector<int64_t> shape;
    for (const auto& d : tensor.shape().dim()) {
      shape.push_back(d.has_dim_value() ? d.dim_value() : 2);
    }
    inputs.emplace_back(dtype, shape);  // zero-filled
  }
  return OrtAcceptsOn(fed, inputs);
}

// Test assertion form: fails (not skips) when ORT refuses the model; when
// ORT is not installed it records nothing (the numeric tests skip then).
#define EXPECT_ORT_ACCEPTS(model)                                     \
  do {                                                                \
    std::string ort_reason_;                                          \
    if (::jax2onnx::api::OrtRunner::Shared().IsAvailable(&ort_reason_)) { \
      absl::Status ort_status_ = ::jax2onnx::ort_accepts::OrtAccepts(model); \
      EXPECT_TRUE(ort_status_.ok()) << ort_status_;                   \
    }                                                                 \
  } while (0)

}  // namespace jax2onnx::ort_accepts

#endif  // JAX2ONNX_TESTS_ORT_ACCEPTS_H_
