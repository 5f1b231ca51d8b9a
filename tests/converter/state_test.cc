// Unit tests of converter::State: fresh names, shape_env bookkeeping,
// constant dedup, literal materialization, dtype guard in SetOutput.
#include "converter/state.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/converter/converter_test_util.h"

namespace jax2onnx::converter {
namespace {

using ::testing::HasSubstr;

TEST(StateTest, FreshNamesAreUniqueAndDeterministic) {
  onnx::GraphProto graph;
  State s(&graph, 17, nullptr);
  s.ReserveName("in_0");
  EXPECT_EQ(s.FreshName("in_0"), "in_0_1");
  EXPECT_EQ(s.FreshName("x"), "x");
  EXPECT_EQ(s.FreshName("x"), "x_1");
  EXPECT_EQ(s.FreshName("x"), "x_2");
  // A hint that collides with an earlier suffixed name skips it.
  EXPECT_EQ(s.FreshName("x_1"), "x_1_1");
  EXPECT_EQ(s.FreshName(""), "v");
}

TEST(StateTest, AddNodeRegistersEveryOutputInShapeEnv) {
  onnx::GraphProto graph;
  State s(&graph, 17, nullptr);
  const ValueInfo f32 = ValueInfo::Tensor(onnx::TensorProto::FLOAT, {"B", 3});
  const std::string a = s.AddGraphInput("a", f32);
  const std::string sum = s.AddNode("Add", {a, a}, f32);
  const std::vector<std::string> split = s.AddNodeMulti(
      "Split", {sum},
      {ValueInfo::Tensor(onnx::TensorProto::FLOAT, {"B", 1}),
       ValueInfo::Tensor(onnx::TensorProto::FLOAT, {"B", Dim()})},
      {AttrInt("axis", 1)});

  ASSERT_EQ(graph.node_size(), 2);
  EXPECT_EQ(graph.node(0).output(0), sum);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_NE(split[0], split[1]);
  for (const std::string& name : {sum, split[0], split[1]}) {
    ASSERT_NE(s.Info(name), nullptr) << name;
  }
  EXPECT_EQ(s.Info(sum)->ToString(), "FLOAT[B,3]");
  EXPECT_EQ(s.Info(split[0])->ToString(), "FLOAT[B,1]");
  EXPECT_EQ(s.Info(split[1])->ToString(), "FLOAT[B,?]");
  EXPECT_EQ(graph.node(1).attribute(0).name(), "axis");
  EXPECT_EQ(graph.node(1).attribute(0).i(), 1);
}

TEST(StateTest, ConstantsAreDeduplicatedByContent) {
  onnx::GraphProto graph;
  State s(&graph, 17, nullptr);
  const std::string a = s.ConstI64({1, 2});
  const std::string b = s.ConstI64({1, 2});
  const std::string c = s.ConstI64({2, 1});
  const std::string scalar = s.ConstI64Scalar(1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(scalar, a);
  EXPECT_EQ(graph.initializer_size(), 3);
  EXPECT_EQ(s.Info(a)->ToString(), "INT64[2]");
  EXPECT_EQ(s.Info(scalar)->ToString(), "INT64[]");
  // Same bytes, different dtype: a distinct constant.
  absl::StatusOr<std::string> f = s.ConstScalar(jaxpr::DType::kF64, 0.0);
  absl::StatusOr<std::string> i = s.ConstScalar(jaxpr::DType::kI64, 0.0);
  ASSERT_TRUE(f.ok() && i.ok());
  EXPECT_NE(*f, *i);
}

// ONNX subgraph inference cannot read an outer-scope initializer's value, so
// the small int64 constants a body asks for (axes, shapes) are Constant nodes
// of that body, deduplicated per body and never shared with another graph;
// other constants stay main-graph initializers.
TEST(StateTest, SmallInt64ConstantsOfABodyAreItsOwnConstantNodes) {
  onnx::GraphProto graph;
  State s(&graph, 17, nullptr);
  const std::string outer = s.ConstI64({0});
  std::string in_body, again, other_body;
  std::string f64;
  absl::StatusOr<onnx::GraphProto> body = s.BuildSubgraph(
      "body", [&]() -> absl::StatusOr<std::vector<std::string>> {
        in_body = s.ConstI64({0});
        again = s.ConstI64({0});
        J2O_ASSIGN_OR_RETURN(f64, s.ConstScalar(jaxpr::DType::kF64, 1.0));
        absl::StatusOr<onnx::GraphProto> inner = s.BuildSubgraph(
            "inner", [&]() -> absl::StatusOr<std::vector<std::string>> {
              other_body = s.ConstI64({0});
              return std::vector<std::string>{other_body};
            });
        if (!inner.ok()) return inner.status();
        EXPECT_EQ(inner->node_size(), 1);
        return std::vector<std::string>{in_body};
      });
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_NE(in_body, outer);
  EXPECT_EQ(in_body, again);
  EXPECT_NE(other_body, in_body);
  ASSERT_EQ(body->node_size(), 1);
  EXPECT_EQ(body->node(0).op_type(), "Constant");
  EXPECT_EQ(body->node(0).output(0), in_body);
  EXPECT_EQ(s.Info(in_body)->ToString(), "INT64[1]");
  // The f64 scalar and the main graph's [0] are main-graph initializers.
  EXPECT_EQ(graph.initializer_size(), 2);
  EXPECT_EQ(body->initializer_size(), 0);
  EXPECT_EQ(s.ConstI64({0}), outer);
}

TEST(StateTest, LiteralOperandsBecomeTypedInitializers) {
  jaxpr::Bundle bundle = testing::BundleFromText(
      "{ lambda ; a:f32[3]. let b:f32[3] = add a 2.0:f32[] in (b,) }");
  onnx::GraphProto graph;
  State s(&graph, 17, nullptr);
  const jaxpr::Eqn& eqn = bundle.jaxpr().eqns[0];
  absl::StatusOr<std::string> lit = s.Input(eqn, 1);
  ASSERT_TRUE(lit.ok()) << lit.status();
  ASSERT_EQ(graph.initializer_size(), 1);
  const onnx::TensorProto& t = graph.initializer(0);
  EXPECT_EQ(t.name(), *lit);
  EXPECT_EQ(t.data_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(t.dims_size(), 0);
  float value = 0;
  ASSERT_EQ(t.raw_data().size(), sizeof(value));
  std::memcpy(&value, t.raw_data().data(), sizeof(value));
  EXPECT_EQ(value, 2.0f);
  // The operand var is not bound yet: an error naming it.
  absl::StatusOr<std::string> var = s.Input(eqn, 0);
  EXPECT_THAT(var.status().message(), HasSubstr("'a'"));
}

TEST(StateTest, SetOutputRejectsADTypeChange) {
  jaxpr::Bundle bundle = testing::BundleFromText(
      "{ lambda ; a:f32[3]. let b:f32[3] = test_changes_dtype a in (b,) }");
  absl::StatusOr<onnx::ModelProto> model = testing::Convert(bundle);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(model.status().message(),
              HasSubstr("the lowering of 'test_changes_dtype' bound output 0"));
  EXPECT_THAT(model.status().message(), HasSubstr("INT32"));
  EXPECT_THAT(model.status().message(), HasSubstr("f32[3]"));
}

TEST(StateTest, SetOutputRefinesUnknownDimsFromTheOutvar) {
  jaxpr::Bundle bundle = testing::BundleFromText(
      "{ lambda ; a:f32[B,3]. let b:f32[B,3] = neg a in (b,) }");
  onnx::GraphProto graph;
  State s(&graph, 17, nullptr);
  const jaxpr::Eqn& eqn = bundle.jaxpr().eqns[0];
  const std::string v =
      s.AddNode("Neg", {}, ValueInfo::UnknownShape(onnx::TensorProto::FLOAT));
  ASSERT_TRUE(s.SetOutput(eqn, 0, v).ok());
  EXPECT_EQ(s.Info(v)->ToString(), "FLOAT[B,3]");
  // A contradicting static dim is an error.
  const std::string w = s.AddNode(
      "Neg", {}, ValueInfo::Tensor(onnx::TensorProto::FLOAT, {"B", 4}));
  absl::Status status = s.SetOutput(eqn, 0, w);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("FLOAT[B,4]"));
}

TEST(StateTest, DimValueOfAnUnknownSymbolNamesIt) {
  onnx::GraphProto graph;
  State s(&graph, 17, nullptr);
  absl::StatusOr<std::string> v = s.DimValue(jaxpr::DimExpr::Symbol("N"));
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("symbolic dimension 'N'"));
}

TEST(StateTest, DimValueIsCachedPerExpression) {
  onnx::GraphProto graph;
  State s(&graph, 17, nullptr);
  const std::string in =
      s.AddGraphInput("x", ValueInfo::Tensor(onnx::TensorProto::FLOAT, {"B"}));
  s.AddDimOrigin("B", in, 0);
  const jaxpr::DimExpr twice_b = jaxpr::DimExpr::Product(
      {jaxpr::DimExpr::Constant(2), jaxpr::DimExpr::Symbol("B")});
  absl::StatusOr<std::string> first = s.DimValue(twice_b);
  const int nodes = graph.node_size();
  absl::StatusOr<std::string> second = s.DimValue(twice_b);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(graph.node_size(), nodes);
  EXPECT_EQ(graph.node(0).op_type(), "Shape");
}

}  // namespace
}  // namespace jax2onnx::converter
