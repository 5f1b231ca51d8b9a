// The generic select_and_scatter (plugin/select_and_scatter_plan.h) on both
// pipelines: bodies other than a ge/gt/le/lt select and an add/mul/max/min
// scatter are refused naming the body's primitive, and a window with a tie,
// a NaN and a -0 product gives the hand-derived values in ONNX Runtime.
// (testdata/primitives/select_and_scatter holds the corpus bundles checked
// against the interpreter.)
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "api/check.h"
#include "api/convert_internal.h"
#include "api/ort_runner.h"
#include "api/router.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/text/parser.h"

namespace jax2onnx::api {
namespace {

using jaxpr::Array;
using jaxpr::DType;
using ::testing::HasSubstr;

std::string Program(const std::string& select_body,
                    const std::string& scatter_body) {
  return "{ lambda ; a:f32[5] b:f32[4]. let\n"
         "    c:f32[5] = select_and_scatter[\n"
         "      padding=((0, 0),)\n"
         "      scatter_consts=()\n"
         "      scatter_jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = " +
         scatter_body +
         " in (f,) }\n"
         "      select_consts=()\n"
         "      select_jaxpr={ lambda ; g:f32[] h:f32[]. let i:bool[] = " +
         select_body +
         " in (i,) }\n"
         "      window_dimensions=(2,)\n"
         "      window_strides=(1,)\n"
         "    ] a b 1.0:f32[]\n"
         "  in (c,) }";
}

class SelectAndScatterTest : public ::testing::TestWithParam<Pipeline> {
 protected:
  absl::StatusOr<onnx::ModelProto> ConvertText(const std::string& text,
                                               Bundle* bundle) {
    auto file = jaxpr::ParseJaxprText(text, "sas.jaxpr");
    if (!file.ok()) return file.status();
    bundle->name = "sas";
    bundle->file = *std::move(file);
    return ConvertWithPipeline(GetParam(), *bundle, ConvertOptions{});
  }
};

TEST_P(SelectAndScatterTest, ScatterBodyOtherThanAddMulMaxMinIsRefusedByName) {
  Bundle bundle;
  auto model = ConvertText(Program("ge g h", "sub d e"), &bundle);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(),
              HasSubstr("select_and_scatter: scatter_jaxpr body 'sub' is not "
                        "lowered (add, mul, max or min"));
}

TEST_P(SelectAndScatterTest, SelectBodyOtherThanAnOrderingIsRefusedByName) {
  Bundle bundle;
  auto model = ConvertText(Program("eq g h", "add d e"), &bundle);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(),
              HasSubstr("select_and_scatter: select_jaxpr body 'eq' is not "
                        "lowered (ge, gt, le or lt"));
}

TEST_P(SelectAndScatterTest, TiesNaNAndNegativeZeroProductsAreExact) {
  std::string reason;
  if (!OrtRunner::Shared().IsAvailable(&reason)) {
    GTEST_SKIP() << "ONNX Runtime: " << reason;
  }
  Bundle bundle;
  auto model = ConvertText(Program("ge g h", "mul d e"), &bundle);
  ASSERT_TRUE(model.ok()) << model.status();
  // operand [1, 3, 3, NaN, 2], windows of 2, stride 1, select ge (the
  // running choice is replaced where ge(choice, candidate) is false):
  //   window 0 (1, 3): ge(1, 3) false -> index 1
  //   window 1 (3, 3): ge(3, 3) true  -> index 1 (the first of a tie)
  //   window 2 (3, NaN): ge(3, NaN) false -> index 3
  //   window 3 (NaN, 2): ge(NaN, 2) false -> index 4
  // source [-0, 2, 3, 5], init 1, scatter mul (source * current):
  //   out[1] = 2 * (-0 * 1) = -0; out[3] = 3; out[4] = 5; others 1.
  Array operand(DType::kF32, {5});
  const double nan = std::nan("");
  const std::vector<double> op = {1, 3, 3, nan, 2};
  for (int i = 0; i < 5; ++i) operand.SetFromDouble(i, op[i]);
  Array source(DType::kF32, {4});
  const std::vector<double> src = {-0.0, 2, 3, 5};
  for (int i = 0; i < 4; ++i) source.SetFromDouble(i, src[i]);
  auto got = RunModel(*model, {operand, source}, OrtRunner::Shared());
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  const std::vector<double> want = {1, -0.0, 1, 3, 5};
  for (int i = 0; i < 5; ++i) {
    const double g = (*got)[0].GetAsDouble(i);
    EXPECT_EQ(g, want[i]) << "element " << i;
    EXPECT_EQ(std::signbit(g), std::signbit(want[i])) << "sign of element "
                                                      << i;
  }
  // The interpreter agrees.
  auto oracle = jaxpr::Evaluate(bundle.jaxpr(), {}, {operand, source});
  ASSERT_TRUE(oracle.ok()) << oracle.status();
  for (int i = 0; i < 5; ++i) {
    const double o = (*oracle)[0].GetAsDouble(i);
    EXPECT_EQ(o, want[i]) << "interpreter element " << i;
    EXPECT_EQ(std::signbit(o), std::signbit(want[i]));
  }
}

INSTANTIATE_TEST_SUITE_P(BothPipelines, SelectAndScatterTest,
                         ::testing::Values(Pipeline::kLegacy, Pipeline::kIr),
                         [](const auto& info) {
                           return info.param == Pipeline::kLegacy
                                      ? std::string("legacy")
                                      : std::string("ir");
                         });

}  // namespace
}  // namespace jax2onnx::api
