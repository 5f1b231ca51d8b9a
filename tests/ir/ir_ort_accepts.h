// The ORT acceptance gate (tests/ort_accepts.h) for hand-built IR models:
// every IR test model that is a valid standalone model, before and after
// the pass under test, must be one ONNX Runtime loads and runs (issue 17
// item 7). Hand-built models usually declare no opset and IR version; they
// are serialized as models of the opset their nodes are written for (the
// default domain at 23 unless the test says otherwise).
#ifndef JAX2ONNX_TESTS_IR_IR_ORT_ACCEPTS_H_
#define JAX2ONNX_TESTS_IR_IR_ORT_ACCEPTS_H_

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/ir.h"
#include "ir/serde.h"
#include "onnx/onnx_pb.h"
#include "plugin/onnx_types.h"
#include "tests/ort_accepts.h"

namespace jax2onnx::ir {

// Node names made unique within each graph (a `_dupN` suffix on repeats).
// A single pass may leave two nodes it derived from one equation with the
// same name (two Reshapes of eqn0/dot_general); node-naming, which always
// ends the pipeline, makes them unique, and ORT refuses duplicates. Names
// never change what a model computes, so the gate checks the renamed copy.
inline void UniquifyNodeNames(onnx::GraphProto* graph) {
  absl::flat_hash_set<std::string> taken;
  int next = 0;
  for (onnx::NodeProto& node : *graph->mutable_node()) {
    if (!node.name().empty() && !taken.insert(node.name()).second) {
      std::string name;
      do {
        name = absl::StrCat(node.name(), "_dup", ++next);
      } while (!taken.insert(name).second);
      node.set_name(name);
    }
    for (onnx::AttributeProto& a : *node.mutable_attribute()) {
      if (a.has_g()) UniquifyNodeNames(a.mutable_g());
      for (onnx::GraphProto& sub : *a.mutable_graphs()) UniquifyNodeNames(&sub);
    }
  }
}

// `model` as a standalone ModelProto: the default-domain opset `opset` and
// its IR version are stamped where the model declares none.
inline onnx::ModelProto StandaloneProto(const Model& model, int opset = 23) {
  onnx::ModelProto proto = ToProto(model);
  UniquifyNodeNames(proto.mutable_graph());
  bool has_default_domain = false;
  for (const onnx::OperatorSetIdProto& o : proto.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") {
      has_default_domain = true;
      opset = static_cast<int>(o.version());
    }
  }
  if (!has_default_domain) proto.add_opset_import()->set_version(opset);
  if (proto.ir_version() == 0) {
    proto.set_ir_version(plugin::IrVersionForOpset(opset));
  }
  return proto;
}

}  // namespace jax2onnx::ir

// Fails the test when ORT refuses the hand-built IR model (serialized by
// StandaloneProto at `opset`).
#define EXPECT_IR_MODEL_ORT_ACCEPTS(model, ...) \
  EXPECT_ORT_ACCEPTS(::jax2onnx::ir::StandaloneProto(model, ##__VA_ARGS__))

#endif  // JAX2ONNX_TESTS_IR_IR_ORT_ACCEPTS_H_
