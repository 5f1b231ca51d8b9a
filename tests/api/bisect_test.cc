// check --bisect (api/bisect.h) on planted bugs: a model converted by the
// IR pipeline and then hand-edited (an op swapped, a constant perturbed) is
// compared equation by equation with the reference interpreter; the first
// diverging equation must be the edited one, the equations before it agree
// and the program's outputs are observed under their graph output names.
#include "api/bisect.h"

#include <string>
#include <vector>

#include "api/convert_internal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/bundle.h"

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

}  // namespace
}  // namespace jax2onnx::api
