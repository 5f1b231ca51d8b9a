// Models people can read (docs/ir.md, IR pipeline): the graph is named
// after the bundle, graph I/O after the jaxpr's binders (or the names
// given), every value after the equation that computes it (its var and
// primitive), fused nodes after their pattern and first equation with a
// doc string listing the equations they replace, and values a pass
// replaces keep their equation's name. The expected names are read off the
// programs below by the naming rule.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/convert_internal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/bundle.h"

namespace jax2onnx::api {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kProgram[] =
    "{ lambda ; a:f32[4] b:f32[4]. let\n"
    "    c:f32[4] = mul a b\n"
    "    d:f32[4] = pjit[\n"
    "      name=inner\n"
    "      jaxpr={ lambda ; x:f32[4]. let y:f32[4] = sin x in (y,) }\n"
    "    ] c\n"
    "    e:f32[4] = add d c\n"
    "  in (e, 2.0:f32[]) }\n";

onnx::ModelProto Convert(absl::string_view text, int optimize,
                         const std::string& name = "readable",
                         ConvertOptions options = {}) {
  auto bundle = jaxpr::BundleFromParts(name, text, name + ".jaxpr", {});
  EXPECT_TRUE(bundle.ok()) << bundle.status();
  options.read_environment = false;
  options.optimize = optimize;
  auto model = ConvertWithPipeline(Pipeline::kIr, *bundle, options);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *std::move(model) : onnx::ModelProto();
}

std::vector<std::string> NodeOutputs(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  for (const onnx::NodeProto& n : g.node()) {
    for (const std::string& out : n.output()) names.push_back(out);
  }
  return names;
}

std::vector<std::string> Names(
    const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& io) {
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto& v : io) names.push_back(v.name());
  return names;
}

TEST(ReadableNamesTest, GraphAndInterfaceNamedAfterBundleAndBinders) {
  const onnx::ModelProto m = Convert(kProgram, 0);
  EXPECT_EQ(m.graph().name(), "readable");
  EXPECT_THAT(Names(m.graph().input()), ElementsAre("a", "b"));
  // A literal output has no binder: out_1.
  EXPECT_THAT(Names(m.graph().output()), ElementsAre("e", "out_1"));
}

TEST(ReadableNamesTest, GivenNamesWinAndCallerNamesTheGraph) {
  ConvertOptions options;
  options.input_names = {"x0", ""};  // "": not named here
  options.output_names = {"", "two"};
  options.model_name = "mine";
  const onnx::ModelProto m = Convert(kProgram, 0, "readable", options);
  EXPECT_EQ(m.graph().name(), "mine");
  EXPECT_THAT(Names(m.graph().input()), ElementsAre("x0", "b"));
  EXPECT_THAT(Names(m.graph().output()), ElementsAre("e", "two"));
}

TEST(ReadableNamesTest, ValuesNamedAfterTheirEquation) {
  for (int optimize : {0, 1, 2}) {
    SCOPED_TRACE(absl::StrCat("optimize ", optimize));
    const onnx::ModelProto m = Convert(kProgram, optimize);
    const std::vector<std::string> outs = NodeOutputs(m.graph());
    EXPECT_THAT(outs, Contains("c/mul"));
    // The call's result is named after the call, not its inner sin.
    EXPECT_THAT(outs, Contains("d/pjit"));
    EXPECT_THAT(outs, Not(Contains(HasSubstr("Sin"))));
    EXPECT_THAT(outs, Not(Contains(StartsWith("Mul"))));
    for (const onnx::NodeProto& n : m.graph().node()) {
      if (n.op_type() == "Sin") {
        EXPECT_EQ(n.name(), "eqn1/pjit/eqn0/sin/Sin");
        EXPECT_THAT(n.doc_string(), HasSubstr("y:f32[4] = sin x"));
      }
    }
  }
}

TEST(ReadableNamesTest, FusedNodeNamedAfterPatternAndFirstEquation) {
  auto bundle =
      jaxpr::LoadBundle(absl::StrCat(JAX2ONNX_SOURCE_DIR,
                                     "/testdata/fusion/softmax_stop_gradient/"
                                     "softmax_stop_gradient.jaxpr"));
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  ConvertOptions options;
  options.read_environment = false;
  options.optimize = 2;
  auto model = ConvertWithPipeline(Pipeline::kIr, *bundle, options);
  ASSERT_TRUE(model.ok()) << model.status();
  const onnx::NodeProto* softmax = nullptr;
  for (const onnx::NodeProto& n : model->graph().node()) {
    if (n.op_type() == "Softmax") softmax = &n;
  }
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(softmax->name(), "Softmax/eqn0/custom_jvp_call/eqn0/reduce_max");
  // Every equation of the softmax body, in program order.
  EXPECT_THAT(softmax->doc_string(),
              AllOf(StartsWith("Softmax fused from:\n"),
                    HasSubstr("d:f32[2,3] = reduce_max c\n"),
                    HasSubstr("h:f32[2,6,3] = exp g\n"),
                    HasSubstr("k:f32[2,6,3] = div h j")));
  EXPECT_LT(softmax->doc_string().find("reduce_max"),
            softmax->doc_string().find("= exp"));
  // The fused value is the graph output, named after the program's binder.
  EXPECT_EQ(softmax->output(0), "b");
  EXPECT_EQ(model->graph().name(), "softmax_stop_gradient");
}

// Counts the Shape nodes of `g` and its subgraphs that select no dim
// (`end` 0, the batch dims of a rank-2 matrix).
int EmptyShapes(const onnx::GraphProto& g) {
  int count = 0;
  for (const onnx::NodeProto& n : g.node()) {
    if (n.op_type() == "Shape") {
      for (const onnx::AttributeProto& a : n.attribute()) {
        if (a.name() == "end" && a.i() == 0) ++count;
      }
    }
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) count += EmptyShapes(a.g());
    }
  }
  return count;
}

// lu of one matrix has an empty batch shape: the lowering leaves the
// Shape(a, end=0) out (linalg_plan::Builder::BatchShapeThen), so no empty
// Shape node at any level, the literal one (0) included.
TEST(ReadableNamesTest, EmptyShapeComputationsAreFolded) {
  constexpr char kLu[] =
      "{ lambda ; a:f32[3,5]. let b:f32[3,5] c:i32[3] d:i32[3] = lu a in "
      "(b, c, d) }\n";
  EXPECT_EQ(EmptyShapes(Convert(kLu, 0).graph()), 0);
  EXPECT_EQ(EmptyShapes(Convert(kLu, 1).graph()), 0);
}

// pjit nested 60 deep, a sin at each level and a cos innermost: names keep
// only the innermost levels past 128 characters of scope, so no name grows
// with the depth (the full path of 60 levels is ~600 characters).
TEST(ReadableNamesTest, DeeplyNestedCallsKeepTheInnermostLevels) {
  constexpr int kDepth = 60;
  auto var = [](int i, char role) {
    std::string name(1, role);
    for (; i > 0; i /= 26) name.push_back(static_cast<char>('a' + i % 26));
    return name;
  };
  std::string body = "{ lambda ; x:f32[4]. let y:f32[4] = cos x in (y,) }";
  for (int level = kDepth - 1; level >= 0; --level) {
    body = absl::StrCat("{ lambda ; ", var(level, 'p'), ":f32[4]. let\n",
                        var(level, 'q'), ":f32[4] = sin ", var(level, 'p'),
                        "\n", var(level, 'r'), ":f32[4] = pjit[name=f jaxpr=",
                        body, "] ", var(level, 'q'), "\n in (",
                        var(level, 'r'), ",) }");
  }
  const std::string program = absl::StrCat(
      "{ lambda ; a:f32[4]. let\n    b:f32[4] = pjit[name=f jaxpr=", body,
      "] a\n  in (b,) }\n");
  const onnx::ModelProto m = Convert(program, 0);
  int cos_nodes = 0;
  for (const onnx::NodeProto& n : m.graph().node()) {
    EXPECT_LE(n.name().size(), 128u + 16) << n.name();
    for (const std::string& out : n.output()) {
      EXPECT_LE(out.size(), 128u + 16) << out;
    }
    if (n.op_type() != "Cos") continue;
    ++cos_nodes;
    EXPECT_THAT(n.name(), StartsWith(".../"));
    EXPECT_THAT(n.name(), HasSubstr("/eqn1/pjit/eqn0/cos/Cos"));
    EXPECT_THAT(n.doc_string(), HasSubstr("y:f32[4] = cos x"));
  }
  EXPECT_EQ(cos_nodes, 1);
}

}  // namespace
}  // namespace jax2onnx::api
