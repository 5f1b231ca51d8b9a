// check --bisect (api/bisect.h) on planted bugs: a model converted by the
// IR pipeline and then hand-edited (an op swapped, a constant perturbed) is
// compared equation by equation with the reference interpreter; the first
// diverging equation must be the edited one, the equations before it agree
// and the program's outputs are observed under their graph output names.
#include "api/bisect.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "api/convert_internal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/io/npy.h"

namespace jax2onnx::api {
namespace {

using jaxpr::Array;
using jaxpr::DType;
using ::testing::HasSubstr;

// Line 2 is c, line 3 d, line 4 e, line 5 f (column 5 each).
constexpr char kProgram[] =
    "{ lambda ; a:f32[4] b:f32[4]. let\n"
    "    c:f32[4] = mul a b\n"
    "    d:f32[4] = sin c\n"
    "    e:f32[4] = add d 1.5:f32[]\n"
    "    f:f32[4] = exp e\n"
    "  in (f,) }\n";

Array Vector(const std::vector<double>& values) {
  Array a(DType::kF32, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) a.SetFromDouble(i, values[i]);
  return a;
}

class BisectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!OrtRunner::Shared().IsAvailable(&reason)) GTEST_SKIP() << reason;
    auto bundle =
        jaxpr::BundleFromParts("bisect", kProgram, "bisect.jaxpr", {});
    ASSERT_TRUE(bundle.ok()) << bundle.status();
    bundle_ = *std::move(bundle);
    ConvertOptions options;
    options.read_environment = false;
    options.optimize = 0;
    auto model = ConvertWithPipeline(Pipeline::kIr, bundle_, options);
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
    inputs_ = {Vector({0.5, -1, 2, 0.25}), Vector({1, 2, -0.5, 3})};
  }

  onnx::NodeProto* NodeComputing(const std::string& value) {
    for (onnx::NodeProto& n : *model_.mutable_graph()->mutable_node()) {
      for (const std::string& out : n.output()) {
        if (out == value) return &n;
      }
    }
    return nullptr;
  }

  BisectResult Run() {
    auto result = Bisect(bundle_, model_, inputs_, {}, {}, OrtRunner::Shared());
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *std::move(result) : BisectResult();
  }

  jaxpr::Bundle bundle_;
  onnx::ModelProto model_;
  std::vector<Array> inputs_;
};

TEST_F(BisectTest, UneditedModelAgreesEverywhere) {
  const BisectResult r = Run();
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_EQ(r.first_diverging, -1) << r.Summary();
  EXPECT_EQ(r.observed, 4);
  EXPECT_EQ(r.steps[0].onnx_name, "c/mul");
  EXPECT_EQ(r.steps[3].onnx_name, "f");  // the graph output
  EXPECT_THAT(r.Summary(), HasSubstr("every one of the 4 observable"));
}

TEST_F(BisectTest, SwappedOpIsTheFirstDivergingEquation) {
  onnx::NodeProto* sin = NodeComputing("d/sin");
  ASSERT_NE(sin, nullptr);
  sin->set_op_type("Cos");  // the planted bug
  const BisectResult r = Run();
  ASSERT_EQ(r.first_diverging, 1) << r.Summary();
  const BisectStep& s = r.steps[1];
  EXPECT_EQ(s.var, "d");
  EXPECT_EQ(s.primitive, "sin");
  EXPECT_EQ(s.where, "bisect.jaxpr:3:5");
  EXPECT_GT(s.max_abs_error, 0.1);  // |sin(x) - cos(x)| at x = 0.5: 0.40
  EXPECT_TRUE(r.steps[0].ok);       // c = mul a b is before the bug
  EXPECT_FALSE(r.steps[3].ok);      // and f after it inherits it
  EXPECT_THAT(r.Summary(),
              HasSubstr("bisect.jaxpr:3:5: first diverging equation #1 'sin'"));
}

TEST_F(BisectTest, PerturbedConstantIsTheFirstDivergingEquation) {
  // The literal 1.5 of `e = add d 1.5` is the only f32 initializer.
  bool planted = false;
  for (onnx::TensorProto& t : *model_.mutable_graph()->mutable_initializer()) {
    if (t.data_type() != onnx::TensorProto::FLOAT) continue;
    std::string& bytes = *t.mutable_raw_data();
    ASSERT_EQ(bytes.size(), 4u);
    const float perturbed = 1.5f + 1e-3f;
    bytes.assign(reinterpret_cast<const char*>(&perturbed), 4);
    planted = true;
  }
  ASSERT_TRUE(planted);
  const BisectResult r = Run();
  ASSERT_EQ(r.first_diverging, 2) << r.Summary();
  EXPECT_EQ(r.steps[2].var, "e");
  EXPECT_EQ(r.steps[2].primitive, "add");
  // 1e-3 in f32 around 1.5 plus rounding of d + 1.5: within 2e-7 of 1e-3.
  EXPECT_NEAR(r.steps[2].max_abs_error, 1e-3, 1e-6);
  EXPECT_TRUE(r.steps[1].ok);
}

// `check MODEL.onnx BUNDLE --bisect`: the model file as shipped, its one
// f32 initializer in external data, with the planted Cos: the file is read
// (external data inlined into the harness) and the planted equation named.
TEST_F(BisectTest, ShippedModelFileWithExternalDataIsBisected) {
  onnx::NodeProto* sin = NodeComputing("d/sin");
  ASSERT_NE(sin, nullptr);
  sin->set_op_type("Cos");
  const std::string dir = ::testing::TempDir() + "/bisect_model_file";
  std::filesystem::create_directories(dir);
  bool moved = false;
  for (onnx::TensorProto& t : *model_.mutable_graph()->mutable_initializer()) {
    if (t.data_type() != onnx::TensorProto::FLOAT) continue;
    std::ofstream(dir + "/model.onnx.data", std::ios::binary)
        << "pad!" << t.raw_data();  // offset 4
    t.clear_raw_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [key, value] : std::vector<std::pair<const char*, const char*>>{
             {"location", "model.onnx.data"},
             {"offset", "4"},
             {"length", "4"}}) {
      onnx::StringStringEntryProto* e = t.add_external_data();
      e->set_key(key);
      e->set_value(value);
    }
    moved = true;
  }
  ASSERT_TRUE(moved);
  std::ofstream(dir + "/model.onnx", std::ios::binary)
      << model_.SerializeAsString();
  std::ofstream(dir + "/b.jaxpr") << kProgram;
  jaxpr::NamedArrays npz = {{"input_0", inputs_[0]}, {"input_1", inputs_[1]}};
  ASSERT_TRUE(jaxpr::WriteNpzFile(dir + "/b.npz", npz).ok());
  CheckOptions options;
  options.convert.read_environment = false;
  auto r = BisectModelFile(dir + "/model.onnx", dir + "/b.jaxpr", options,
                           OrtRunner::Shared());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->first_diverging, 1) << r->Summary();
  EXPECT_EQ(r->steps[1].primitive, "sin");
  EXPECT_THAT(r->Summary(), HasSubstr("b.jaxpr:3:5"));
  EXPECT_TRUE(r->steps[0].ok);

  // A model with NCHW adapters is refused, naming the reason.
  onnx::StringStringEntryProto* nchw = model_.add_metadata_props();
  nchw->set_key("jax2onnx_inputs_as_nchw");
  nchw->set_value("0");
  std::ofstream(dir + "/nchw.onnx", std::ios::binary)
      << model_.SerializeAsString();
  auto refused = BisectModelFile(dir + "/nchw.onnx", dir + "/b.jaxpr", options,
                                 OrtRunner::Shared());
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("NCHW adapters"));
}

// A program whose work happens inside a pjit (inlined by the IR pipeline,
// so its equations' values are graph values named "c/pjit/g/sin") and a
// cond on input s (an If whose branch values the harness cannot expose). Line 4
// is the inner sin (column 9), line 2 the pjit, line 7 the cond.
constexpr char kNestedProgram[] =
    "{ lambda ; a:f32[4] b:f32[4] s:i32[]. let\n"
    "    c:f32[4] = pjit[name=inner jaxpr={ lambda ; d:f32[4] e:f32[4]. let\n"
    "        f:f32[4] = mul d e\n"
    "        g:f32[4] = sin f\n"
    "        h:f32[4] = add g 1.5:f32[]\n"
    "      in (h,) }] a b\n"
    "    i:f32[4] = cond[branches=(\n"
    "        { lambda ; j:f32[4]. let k:f32[4] = neg j in (k,) }\n"
    "        { lambda ; l:f32[4]. let m:f32[4] = tanh l in (m,) }\n"
    "      )] s c\n"
    "    n:f32[4] = exp i\n"
    "  in (n,) }\n";

class NestedBisectTest : public BisectTest {
 protected:
  void SetUp() override {
    std::string reason;
    if (!OrtRunner::Shared().IsAvailable(&reason)) GTEST_SKIP() << reason;
    auto bundle =
        jaxpr::BundleFromParts("nested", kNestedProgram, "nested.jaxpr", {});
    ASSERT_TRUE(bundle.ok()) << bundle.status();
    bundle_ = *std::move(bundle);
    ConvertOptions options;
    options.read_environment = false;
    options.optimize = 0;
    auto model = ConvertWithPipeline(Pipeline::kIr, bundle_, options);
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
    Array branch(DType::kI32, {});
    branch.SetFromDouble(0, 1);  // the tanh branch
    inputs_ = {Vector({0.5, -1, 2, 0.25}), Vector({1, 2, -0.5, 3}), branch};
  }

  int StepOf(const BisectResult& r, const std::string& var) {
    for (size_t i = 0; i < r.steps.size(); ++i) {
      if (r.steps[i].var == var) return static_cast<int>(i);
    }
    return -1;
  }
};

TEST_F(NestedBisectTest, InnerEquationsAreObservedInProgramOrder) {
  const BisectResult r = Run();
  EXPECT_EQ(r.first_diverging, -1) << r.Summary();
  // f g h inside the pjit, then c, i, n at the top level.
  ASSERT_EQ(r.steps.size(), 6u);
  EXPECT_EQ(r.steps[0].var, "f");
  EXPECT_EQ(r.steps[1].var, "g");
  EXPECT_EQ(r.steps[1].onnx_name, "c/pjit/g/sin");
  EXPECT_TRUE(r.steps[1].observed);
  EXPECT_EQ(r.steps[1].depth, 1);
  EXPECT_EQ(r.steps[1].within, "#0 'pjit' at nested.jaxpr:2:5 > ");
  EXPECT_EQ(r.steps[3].var, "c");
  EXPECT_EQ(r.steps[3].depth, 0);
}

TEST_F(NestedBisectTest, PlantedBugInsidePjitIsNamedWithItsPath) {
  onnx::NodeProto* sin = NodeComputing("c/pjit/g/sin");
  ASSERT_NE(sin, nullptr);
  sin->set_op_type("Cos");  // the planted bug
  const BisectResult r = Run();
  ASSERT_EQ(r.first_diverging, StepOf(r, "g")) << r.Summary();
  const BisectStep& s = r.steps[r.first_diverging];
  EXPECT_EQ(s.primitive, "sin");
  EXPECT_EQ(s.where, "nested.jaxpr:4:9");
  EXPECT_GT(s.max_abs_error, 0.1);  // |sin(x) - cos(x)| at x = 0.5: 0.40
  EXPECT_TRUE(r.steps[StepOf(r, "f")].ok);
  EXPECT_THAT(r.Summary(),
              HasSubstr("nested.jaxpr:4:9: first diverging equation #1 'sin' "
                        "inside #0 'pjit' at nested.jaxpr:2:5"));
}

TEST_F(NestedBisectTest, PlantedBugInsideCondBranchNamesTheCond) {
  // Branch 1 computes tanh; make it Sigmoid inside the If's else_branch.
  bool planted = false;
  for (onnx::NodeProto& n : *model_.mutable_graph()->mutable_node()) {
    for (onnx::AttributeProto& a : *n.mutable_attribute()) {
      if (!a.has_g()) continue;
      for (onnx::NodeProto& inner : *a.mutable_g()->mutable_node()) {
        if (inner.op_type() == "Tanh") {
          inner.set_op_type("Sigmoid");
          planted = true;
        }
      }
    }
  }
  ASSERT_TRUE(planted);
  const BisectResult r = Run();
  ASSERT_EQ(r.first_diverging, StepOf(r, "i")) << r.Summary();
  EXPECT_EQ(r.steps[r.first_diverging].primitive, "cond");
  EXPECT_TRUE(r.steps[StepOf(r, "c")].ok);
  EXPECT_THAT(r.Summary(),
              HasSubstr("the equations of its body are not observable"));
}

}  // namespace
}  // namespace jax2onnx::api
