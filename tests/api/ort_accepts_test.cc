// tests/ort_accepts.h, the gate every test-produced model goes through:
// it accepts a valid model and refuses one ONNX Runtime cannot load (an op
// that does not exist) and an opset-17 model the ONNX checker rejects.
#include "tests/ort_accepts.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::ort_accepts {
namespace {

using ::testing::HasSubstr;

onnx::ModelProto OneNodeModel(const std::string& op, int opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  for (const char* name : {"x", "y"}) {
    onnx::ValueInfoProto* v =
        std::string(name) == "x" ? g->add_input() : g->add_output();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_param("n");
  }
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->add_input("x");
  n->add_output("y");
  return m;
}

TEST(OrtAcceptsTest, ValidModelPassesAndUnknownOpFails) {
  std::string reason;
  if (!api::OrtRunner::Shared().IsAvailable(&reason)) {
    GTEST_SKIP() << "ONNX Runtime: " << reason;
  }
  EXPECT_TRUE(OrtAccepts(OneNodeModel("Neg", 23)).ok());
  EXPECT_TRUE(OrtAccepts(OneNodeModel("Neg", 17)).ok());
  absl::Status bad = OrtAccepts(OneNodeModel("NoSuchOp", 23));
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(bad.message(), HasSubstr("ONNX Runtime refuses the model"));
}

TEST(OrtAcceptsTest, MistypedOpset17ModelFails) {
  std::string reason;
  if (!api::OrtRunner::Shared().IsAvailable(&reason)) {
    GTEST_SKIP() << "ONNX Runtime: " << reason;
  }
  // Neg of f32 declared as i64: ORT's type check or strict shape
  // inference refuses it, whichever comes first.
  onnx::ModelProto m = OneNodeModel("Neg", 17);
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::INT64);
  EXPECT_FALSE(OrtAccepts(m).ok());
}

TEST(OrtAcceptsTest, InputWithAnInitializerDefaultKeepsItsDefault) {
  std::string reason;
  if (!api::OrtRunner::Shared().IsAvailable(&reason)) {
    GTEST_SKIP() << "ONNX Runtime: " << reason;
  }
  // y = x + d with d a graph input defaulted by an initializer: ORT lists
  // only x among the inputs to feed, so the gate must not feed d.
  onnx::ModelProto m = OneNodeModel("Add", 23);
  onnx::GraphProto* g = m.mutable_graph();
  g->mutable_node(0)->add_input("d");
  onnx::ValueInfoProto* d = g->add_input();
  d->set_name("d");
  d->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  d->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->add_dim()
      ->set_dim_value(1);
  onnx::TensorProto* init = g->add_initializer();
  init->set_name("d");
  init->set_data_type(onnx::TensorProto::FLOAT);
  init->add_dims(1);
  init->add_float_data(4.0f);
  EXPECT_TRUE(OrtAccepts(m).ok()) << OrtAccepts(m);
}

}  // namespace
}  // namespace jax2onnx::ort_accepts
