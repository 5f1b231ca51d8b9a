// plugin::BoundSubgraphNesting: control flow nested deeper than ONNX
// Runtime's protobuf parser takes (100 nested messages, about 30 levels of
// If) moves into model-local functions, on both pipelines. The numbers of
// the 40-deep bundle (testdata/primitives/cond/nested_40_deep.jaxpr) are
// checked in ONNX Runtime against the reference interpreter, here and by
// the corpus ctests.
#include "plugin/subgraph_nesting.h"

#include <algorithm>
#include <string>
#include <vector>

#include "api/check.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/io/bundle.h"
#include "tests/ort_accepts.h"

namespace jax2onnx {
namespace {

using ::testing::ElementsAre;

const std::string kNested40 = std::string(JAX2ONNX_SOURCE_DIR) +
                              "/testdata/primitives/cond/nested_40_deep.jaxpr";

// The deepest nesting of protobuf messages under `graph` (the GraphProto
// counts 1), following node attributes' graphs only: what grows with the
// program's control-flow nesting.
int GraphDepth(const onnx::GraphProto& graph) {
  int deepest = 0;
  for (const onnx::NodeProto& n : graph.node()) {
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) deepest = std::max(deepest, 2 + GraphDepth(a.g()));
      for (const onnx::GraphProto& g : a.graphs()) {
        deepest = std::max(deepest, 2 + GraphDepth(g));
      }
    }
  }
  return 1 + deepest;
}

int ModelDepth(const onnx::ModelProto& model) {
  int deepest = GraphDepth(model.graph());
  for (const onnx::FunctionProto& f : model.functions()) {
    onnx::GraphProto body;
    *body.mutable_node() = f.node();
    deepest = std::max(deepest, GraphDepth(body));
  }
  return deepest;
}

// If(cond) { then: If(cond) { then: Neg(x) else: Neg(y) } else: Neg(x) },
// x and y read from the main graph inside the branches.
onnx::ModelProto TwoNestedIfs() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  for (const char* name : {"c", "x", "y"}) g->add_input()->set_name(name);
  auto leaf = [](const std::string& in, const std::string& out) {
    onnx::GraphProto b;
    onnx::NodeProto* n = b.add_node();
    n->set_op_type("Neg");
    n->add_input(in);
    n->add_output(out);
    b.add_output()->set_name(out);
    return b;
  };
  auto if_node = [](onnx::NodeProto* n, const std::string& out,
                    onnx::GraphProto then_branch,
                    onnx::GraphProto else_branch) {
    n->set_op_type("If");
    n->set_name(out + "_node");
    n->add_input("c");
    n->add_output(out);
    onnx::AttributeProto* t = n->add_attribute();
    t->set_name("then_branch");
    t->set_type(onnx::AttributeProto::GRAPH);
    *t->mutable_g() = std::move(then_branch);
    onnx::AttributeProto* e = n->add_attribute();
    e->set_name("else_branch");
    e->set_type(onnx::AttributeProto::GRAPH);
    *e->mutable_g() = std::move(else_branch);
  };
  onnx::GraphProto outer_then;
  if_node(outer_then.add_node(), "inner", leaf("x", "t"), leaf("y", "u"));
  outer_then.add_output()->set_name("inner");
  if_node(g->add_node(), "z", std::move(outer_then), leaf("x", "v"));
  g->add_output()->set_name("z");
  return m;
}

TEST(SubgraphNestingTest, AModelWithinTheBoundIsLeftByteIdentical) {
  onnx::ModelProto m = TwoNestedIfs();
  const std::string before = m.SerializeAsString();
  EXPECT_EQ(plugin::BoundSubgraphNesting(m, /*max_levels=*/2), 0);
  EXPECT_EQ(m.SerializeAsString(), before);
}

TEST(SubgraphNestingTest, TheDeepNodeBecomesACallPassingWhatItCaptures) {
  onnx::ModelProto m = TwoNestedIfs();
  ASSERT_EQ(plugin::BoundSubgraphNesting(m, /*max_levels=*/1), 1);
  ASSERT_EQ(m.functions_size(), 1);
  const onnx::FunctionProto& f = m.functions(0);
  EXPECT_EQ(f.domain(), plugin::kNestingDomain);
  // The inner If reads c (its condition), x and y (its branches).
  EXPECT_THAT(f.input(), ElementsAre("c", "x", "y"));
  EXPECT_THAT(f.output(), ElementsAre("inner"));
  ASSERT_EQ(f.node_size(), 1);
  EXPECT_EQ(f.node(0).op_type(), "If");
  const onnx::NodeProto& call = m.graph().node(0).attribute(0).g().node(0);
  EXPECT_EQ(call.op_type(), f.name());
  EXPECT_EQ(call.domain(), plugin::kNestingDomain);
  EXPECT_EQ(call.name(), "inner_node");
  EXPECT_THAT(call.input(), ElementsAre("c", "x", "y"));
  EXPECT_THAT(call.output(), ElementsAre("inner"));
  bool imported = false;
  for (const auto& o : m.opset_import()) {
    imported |= o.domain() == plugin::kNestingDomain && o.version() == 1;
  }
  EXPECT_TRUE(imported);
  EXPECT_EQ(f.opset_import_size(), m.opset_import_size());
}

TEST(SubgraphNestingTest, FortyNestedCondsLoadAndMatchTheInterpreter) {
  std::string why;
  const bool have_ort = api::OrtRunner::Shared().IsAvailable(&why);
  for (const bool ir : {false, true}) {
    for (const int opset : {23, 17}) {
      SCOPED_TRACE(absl::StrCat(ir ? "IR" : "legacy", " opset ", opset));
      ConvertOptions options;
      options.read_environment = false;
      options.use_onnx_ir = ir;
      options.opset = opset;
      auto bundle = LoadBundle(kNested40);
      ASSERT_TRUE(bundle.ok()) << bundle.status();
      auto model = ToOnnx(*bundle, options);
      ASSERT_TRUE(model.ok()) << model.status();
      // 40 levels inline would be 1 + 3 * 40 messages of graphs alone.
      EXPECT_GT(model->functions_size(), 0);
      EXPECT_LE(ModelDepth(*model), 1 + 3 * plugin::kMaxInlineSubgraphLevels);
      if (!have_ort) continue;
      EXPECT_ORT_ACCEPTS(*model);
      api::CheckOptions check;
      check.convert = options;
      const api::CheckResult r =
          api::CheckBundle(kNested40, check, api::OrtRunner::Shared());
      EXPECT_TRUE(r.passed) << r.stage << ": " << r.reason;
      EXPECT_EQ(r.oracle, "interpreter");
    }
  }
}

}  // namespace
}  // namespace jax2onnx
