// A FunctionProto has no initializers: constants the converter and the
// optimizer keep as initializers of a function body are written as Constant
// nodes ahead of the body's nodes (ir::ToProto), so nothing in the function
// refers to a graph initializer.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/serde.h"

namespace jax2onnx::ir {
namespace {

TEST(FunctionConstantsTest, BodyInitializersAreWrittenAsConstantNodes) {
  Model m;
  m.set_ir_version(10);
  m.SetOpsetVersion("", 23);
  m.SetOpsetVersion("local", 1);
  Value* x = m.graph().AddInput(
      "x", Type::Tensor(onnx::TensorProto::FLOAT, Shape({3})));
  auto fn = std::make_unique<Function>("local", "scale");
  fn->opset_imports().push_back(OpsetImport{"", 23});
  Graph& body = fn->body();
  Value* a = body.AddInput("a");
  Value* two = *body.AddInitializer(
      "two", Tensor::FromVector<float>(onnx::TensorProto::FLOAT, {},
                                       std::vector<float>{2.0f}));
  Node* mul = body.Append(Node::Create("", "Mul", {a, two}, {"y"}));
  body.AddOutput(mul->output(0));
  ASSERT_TRUE(m.AddFunction(std::move(fn)).ok());
  Node* call = m.graph().Append(Node::Create("local", "scale", {x}, {"out"}));
  m.graph().AddOutput(call->output(0));

  const onnx::ModelProto proto = ToProto(m);
  ASSERT_EQ(proto.functions_size(), 1);
  const onnx::FunctionProto& f = proto.functions(0);
  ASSERT_EQ(f.node_size(), 2);
  const onnx::NodeProto& constant = f.node(0);
  EXPECT_EQ(constant.op_type(), "Constant");
  ASSERT_EQ(constant.output_size(), 1);
  EXPECT_EQ(constant.output(0), "two");
  ASSERT_EQ(constant.attribute_size(), 1);
  EXPECT_EQ(constant.attribute(0).name(), "value");
  EXPECT_EQ(constant.attribute(0).type(), onnx::AttributeProto::TENSOR);
  const onnx::TensorProto& t = constant.attribute(0).t();
  EXPECT_EQ(t.data_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(t.dims_size(), 0);
  float value = 0;
  if (t.float_data_size() == 1) {
    value = t.float_data(0);
  } else {
    ASSERT_EQ(t.raw_data().size(), sizeof(float));
    std::memcpy(&value, t.raw_data().data(), sizeof(float));
  }
  EXPECT_EQ(value, 2.0f);
  EXPECT_EQ(f.node(1).op_type(), "Mul");
  EXPECT_EQ(f.node(1).input(1), "two");
  // The main graph holds no copy of the function's constant.
  EXPECT_EQ(proto.graph().initializer_size(), 0);
}

}  // namespace
}  // namespace jax2onnx::ir
