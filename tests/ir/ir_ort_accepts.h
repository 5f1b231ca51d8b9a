// The ORT acceptance gate (tests/ort_accepts.h) for hand-built IR models:
// every IR test model that is a valid standalone model, before and after
// the pass under test, must be one ONNX Runtime loads and runs (issue 17
// item 7). Hand-built models usually declare no opset and IR version; they
// are serialized as models of the opset their nodes are written for (the
// default domain at 23 unless the test says otherwise).
#ifndef JAX2ONNX_TESTS_IR_IR_ORT_ACCEPTS_H_
#define JAX2ONNX_TESTS_IR_IR_ORT_ACCEPTS_H_

#include "ir/ir.h"
#include "ir/serde.h"
#include "onnx/onnx_pb.h"
#include "plugin/onnx_types.h"
#include "tests/ort_accepts.h"

namespace jax2onnx::ir {

// `model` as a standalone ModelProto: the default-domain opset `opset` and
// its IR version are stamped where the model declares none.
inline onnx::ModelProto StandaloneProto(const Model& model, int opset = 23) {
  onnx::ModelProto proto = ToProto(model);
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
