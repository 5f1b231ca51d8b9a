// expect_graph: parsing and checking on hand-built ModelProtos.
#include "api/expect_graph.h"

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jax2onnx::api {
namespace {

using ::testing::HasSubstr;

void AddNode(onnx::GraphProto* g, const std::string& op,
             std::vector<std::string> inputs,
             std::vector<std::string> outputs) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
}

// Dims: integers become dim_value, anything else dim_param.
void SetShape(onnx::ValueInfoProto* v, const std::string& name,
              const std::vector<std::string>& dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = t->mutable_shape();
  for (const auto& d : dims) {
    int64_t value;
    if (absl::SimpleAtoi(d, &value)) {
      shape->add_dim()->set_dim_value(value);
    } else {
      shape->add_dim()->set_dim_param(d);
    }
  }
}

// x:[B,28,28,1] -> Transpose -> t:[B,1,28,28] -> Conv(w) -> c:[B,32,28,28]
//   -> Relu -> r:[B,32,28,28] -> Add(r, c) -> out
// plus an unused input `unused` and a dead-end Gather on x.
onnx::ModelProto CnnModel() {
  onnx::ModelProto m;
  onnx::GraphProto* g = m.mutable_graph();
  SetShape(g->add_input(), "x", {"B", "28", "28", "1"});
  SetShape(g->add_input(), "unused", {"3"});
  AddNode(g, "Transpose", {"x"}, {"t"});
  AddNode(g, "Conv", {"t", "w"}, {"c"});
  AddNode(g, "Relu", {"c"}, {"r"});
  AddNode(g, "Add", {"r", "c"}, {"out"});
  AddNode(g, "Gather", {"x", "idx"}, {"gathered"});
  SetShape(g->add_value_info(), "t", {"B", "1", "28", "28"});
  SetShape(g->add_value_info(), "c", {"B", "32", "28", "28"});
  SetShape(g->add_value_info(), "r", {"B", "32", "28", "28"});
  SetShape(g->add_output(), "out", {"B", "32", "28", "28"});
  return m;
}

absl::Status Check(const onnx::ModelProto& m, const std::string& line) {
  return CheckGraphExpectations(m, {line});
}

TEST(ExpectGraphTest, PathThroughDataEdgesMatches) {
  const onnx::ModelProto m = CnnModel();
  EXPECT_TRUE(Check(m, "Transpose -> Conv -> Relu").ok());
  EXPECT_TRUE(Check(m, "Conv -> Add").ok());  // skips Relu via the c edge
  EXPECT_TRUE(Check(m, "Relu").ok());
}

TEST(ExpectGraphTest, PathInWrongOrderOrWithoutEdgeFails) {
  const onnx::ModelProto m = CnnModel();
  absl::Status s = Check(m, "Relu -> Conv");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  // The message shows how far the path got and the op histogram.
  EXPECT_THAT(s.message(),
              HasSubstr("longest matching prefix: Relu:Bx32x28x28"));
  EXPECT_THAT(s.message(), HasSubstr("its consumers: Add"));
  EXPECT_THAT(s.message(),
              HasSubstr("Add=1 Conv=1 Gather=1 Relu=1 Transpose=1"));
  // Gather reads x but Transpose's output does not feed it.
  EXPECT_FALSE(Check(m, "Transpose -> Gather").ok());
}

TEST(ExpectGraphTest, ShapeOfFirstOutputIsChecked) {
  const onnx::ModelProto m = CnnModel();
  EXPECT_TRUE(Check(m, "Transpose -> Conv:Bx32x28x28 -> Relu").ok());
  EXPECT_TRUE(Check(m, "Conv:[B,32,28,28]").ok());
  EXPECT_TRUE(Check(m, "Conv:?x32x?x28").ok());
  absl::Status s = Check(m, "Transpose -> Conv:Bx32x26x26 -> Relu");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("same op, other shape: Conv:Bx32x28x28"));
  // A symbol must match the dim_param by name, and the rank must agree.
  EXPECT_FALSE(Check(m, "Conv:Nx32x28x28").ok());
  EXPECT_FALSE(Check(m, "Conv:Bx32x28").ok());
  // Gather's output has no recorded type: any shape constraint fails.
  EXPECT_FALSE(Check(m, "Gather:?").ok());
  EXPECT_TRUE(Check(m, "Gather").ok());
}

TEST(ExpectGraphTest, ScalarShape) {
  onnx::ModelProto m;
  auto* g = m.mutable_graph();
  AddNode(g, "ReduceSum", {"x"}, {"s"});
  SetShape(g->add_output(), "s", {});
  EXPECT_TRUE(Check(m, "ReduceSum:scalar").ok());
  EXPECT_TRUE(Check(m, "ReduceSum:[]").ok());
  EXPECT_FALSE(Check(m, "ReduceSum:1").ok());
}

TEST(ExpectGraphTest, ExactPathRejectsExtraNodes) {
  onnx::ModelProto m;
  auto* g = m.mutable_graph();
  AddNode(g, "Add", {"a", "b"}, {"c"});
  EXPECT_TRUE(Check(m, "exact Add").ok());
  AddNode(g, "Identity", {"c"}, {"d"});
  absl::Status s = Check(m, "exact Add");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("has 2 nodes, not 1"));
  EXPECT_TRUE(Check(m, "exact Add -> Identity").ok());
}

TEST(ExpectGraphTest, CountsCompareExactly) {
  const onnx::ModelProto m = CnnModel();
  EXPECT_TRUE(Check(m, "counts Conv=1 Relu=1 Loop=0").ok());
  absl::Status s = Check(m, "counts Gather=1 ScatterND=1");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("ScatterND=0 (want 1)"));
  EXPECT_THAT(s.message(), HasSubstr("ops: Add=1 Conv=1 Gather=1"));
  EXPECT_FALSE(Check(m, "counts Conv=2").ok());
}

TEST(ExpectGraphTest, MustAbsentSearchesSubgraphsAndFunctions) {
  onnx::ModelProto m = CnnModel();
  EXPECT_TRUE(Check(m, "must_absent Loop If").ok());
  // An If whose then-branch holds a Loop.
  onnx::NodeProto* if_node = m.mutable_graph()->add_node();
  if_node->set_op_type("If");
  onnx::AttributeProto* branch = if_node->add_attribute();
  branch->set_name("then_branch");
  AddNode(branch->mutable_g(), "Loop", {}, {"l"});
  absl::Status s = Check(m, "must_absent Loop");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("Loop=1"));
  // Function bodies count too.
  onnx::ModelProto f;
  AddNode(f.mutable_graph(), "Relu", {"x"}, {"y"});
  f.add_functions()->add_node()->set_op_type("Scan");
  EXPECT_FALSE(Check(f, "must_absent Scan").ok());
}

TEST(ExpectGraphTest, NoUnusedInputs) {
  const onnx::ModelProto m = CnnModel();
  absl::Status s = Check(m, "no_unused_inputs");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("unused graph inputs: unused"));
  onnx::ModelProto used;
  auto* g = used.mutable_graph();
  SetShape(g->add_input(), "a", {"2"});
  SetShape(g->add_input(), "passthrough", {"2"});
  SetShape(g->add_input(), "captured", {"2"});
  AddNode(g, "Neg", {"a"}, {"b"});
  // `captured` is read only inside a subgraph (an outer-scope capture).
  onnx::NodeProto* if_node = g->add_node();
  if_node->set_op_type("If");
  AddNode(if_node->add_attribute()->mutable_g(), "Identity", {"captured"},
          {"z"});
  SetShape(g->add_output(), "b", {"2"});
  SetShape(g->add_output(), "passthrough", {"2"});
  EXPECT_TRUE(Check(used, "no_unused_inputs").ok());
}

TEST(ExpectGraphTest, SeveralLinesStopAtTheFirstFailure) {
  const onnx::ModelProto m = CnnModel();
  EXPECT_TRUE(CheckGraphExpectations(
                  m, {"Transpose -> Conv", "counts Relu=1", "must_absent Loop"})
                  .ok());
  absl::Status s = CheckGraphExpectations(
      m, {"Transpose -> Conv", "must_absent Relu", "counts Relu=5"});
  EXPECT_THAT(s.message(), HasSubstr("must_absent Relu"));
}

TEST(ExpectGraphTest, MalformedLinesAreInvalidArgument) {
  for (const char* bad : {"", "counts", "counts Add", "counts Add=-1",
                          "must_absent", "no_unused_inputs Add", "Add ->",
                          "-> Add", "Conv:Bx", "Conv:[B,3", "exact", "3Conv"}) {
    auto e = ParseGraphExpectation(bad);
    EXPECT_FALSE(e.ok()) << "'" << bad << "' parsed";
    if (!e.ok()) {
      EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    }
  }
}

TEST(ExpectGraphTest, ParsesPathStepsAndShapes) {
  auto e = ParseGraphExpectation(" Transpose -> Conv:Bx32x28x28 -> Relu ");
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->path.size(), 3u);
  EXPECT_EQ(e->path[1].op_type, "Conv");
  EXPECT_TRUE(e->path[1].has_shape);
  EXPECT_THAT(e->path[1].dims, ::testing::ElementsAre("B", "32", "28", "28"));
  EXPECT_FALSE(e->path[2].has_shape);
  auto bracket = ParseGraphExpectation("Reshape:[max_len, 4]");
  ASSERT_TRUE(bracket.ok());
  EXPECT_THAT(bracket->path[0].dims, ::testing::ElementsAre("max_len", "4"));
}

}  // namespace
}  // namespace jax2onnx::api
