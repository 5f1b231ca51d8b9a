// float4_e2m1fn without ONNX's FLOAT4E2M1 (plugin/float4_e2m1.h): both
// pipelines, at opsets 17 and 23,
// - leave no FLOAT4E2M1 value in the model, and give f4 graph inputs and
//   outputs the documented uint8-code form (type, doc_string, metadata);
// - convert f32 -> f4 in ONNX Runtime exactly as ml_dtypes rounds
//   (jaxpr::NarrowFloatFromDouble, itself checked against the Fraction
//   reference in tests/model/narrow_dtype_test.cc) on a dense set of f32
//   values: every multiple of 1/64 in [-10, 10], the f32 neighbours of every
//   midpoint between f4 values, tiny and huge values, +-inf, +NaN;
// - decode every code (high bits of the byte ignored) and round-trip it
//   through f32.
#include "plugin/float4_e2m1.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/check.h"
#include "api/convert_internal.h"
#include "api/ort_runner.h"
#include "gtest/gtest.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/text/parser.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::api {
namespace {

using jaxpr::Array;
using jaxpr::DType;
using jaxpr::NarrowFormat;

const DType kF4 = jaxpr::NarrowDType(NarrowFormat::kF4E2M1FN);

std::vector<float> DenseF32Inputs() {
  std::vector<float> xs;
  for (int i = -640; i <= 640; ++i) xs.push_back(i / 64.0f);
  const float grid[] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, 8};
  for (int k = 0; k + 1 < 9; ++k) {
    const float mid = (grid[k] + grid[k + 1]) / 2;
    for (float m : {mid, -mid}) {
      xs.push_back(std::nextafter(m, 0.0f));
      xs.push_back(std::nextafter(m, m * 2));
    }
  }
  for (float v : {1e-30f, -1e-45f, 6.0001f, 7.0f, 7.5f, 1e30f, -3e38f,
                  std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(), -0.0f}) {
    xs.push_back(v);
  }
  return xs;
}

absl::StatusOr<onnx::ModelProto> Convert(Pipeline pipeline, int opset,
                                         const std::string& text,
                                         Bundle* bundle) {
  auto file = jaxpr::ParseJaxprText(text, "f4.jaxpr");
  if (!file.ok()) return file.status();
  bundle->name = "f4";
  bundle->file = *std::move(file);
  ConvertOptions options;
  options.opset = opset;
  return ConvertWithPipeline(pipeline, *bundle, options);
}

bool HoldsFloat4(const onnx::GraphProto& g) {
  for (const auto* list : {&g.input(), &g.output(), &g.value_info()}) {
    for (const onnx::ValueInfoProto& v : *list) {
      if (v.type().tensor_type().elem_type() == plugin::kOnnxFloat4E2M1) {
        return true;
      }
    }
  }
  for (const onnx::TensorProto& t : g.initializer()) {
    if (t.data_type() == plugin::kOnnxFloat4E2M1) return true;
  }
  for (const onnx::NodeProto& n : g.node()) {
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.name() == "to" && a.i() == plugin::kOnnxFloat4E2M1) return true;
      if (a.has_t() && a.t().data_type() == plugin::kOnnxFloat4E2M1) {
        return true;
      }
      if (a.has_g() && HoldsFloat4(a.g())) return true;
    }
  }
  return false;
}

class Float4Test : public ::testing::TestWithParam<std::tuple<Pipeline, int>> {
};

TEST_P(Float4Test, ModelHoldsNoFloat4AndIoAreUint8Codes) {
  const auto [pipeline, opset] = GetParam();
  Bundle bundle;
  auto model = Convert(pipeline, opset,
                       "{ lambda ; a:f4_e2m1fn[3] b:f32[3]. let\n"
                       "    c:f4_e2m1fn[3] = convert_element_type["
                       "new_dtype=float4_e2m1fn weak_type=False] b\n"
                       "    d:f4_e2m1fn[3] = add a c\n"
                       "  in (d, a) }\n",
                       &bundle);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_FALSE(HoldsFloat4(model->graph()));
  const onnx::GraphProto& g = model->graph();
  ASSERT_EQ(g.input_size(), 2);
  ASSERT_EQ(g.output_size(), 2);
  for (const onnx::ValueInfoProto* v :
       {&g.input(0), &g.output(0), &g.output(1)}) {
    EXPECT_EQ(v->type().tensor_type().elem_type(), onnx::TensorProto::UINT8)
        << v->name();
    EXPECT_EQ(v->doc_string(), plugin::kFloat4CodesDoc) << v->name();
  }
  EXPECT_EQ(g.input(1).type().tensor_type().elem_type(),
            onnx::TensorProto::FLOAT);
  std::string listed;
  for (const auto& e : model->metadata_props()) {
    if (e.key() == plugin::kFloat4CodesMetadataKey) listed = e.value();
  }
  EXPECT_EQ(listed, absl::StrCat(g.input(0).name(), ",", g.output(0).name(),
                                 ",", g.output(1).name()));
}

TEST_P(Float4Test, F32ToF4RoundsAsMlDtypes) {
  const auto [pipeline, opset] = GetParam();
  OrtRunner& runner = OrtRunner::Shared();
  std::string reason;
  if (!runner.IsAvailable(&reason)) GTEST_SKIP() << "ONNX Runtime: " << reason;
  const std::vector<float> xs = DenseF32Inputs();
  const std::string n = absl::StrCat(xs.size());
  Bundle bundle;
  auto model = Convert(pipeline, opset,
                       absl::StrCat("{ lambda ; a:f32[", n,
                                    "]. let\n"
                                    "    b:f4_e2m1fn[",
                                    n,
                                    "] = convert_element_type["
                                    "new_dtype=float4_e2m1fn weak_type=False]"
                                    " a\n  in (b,) }\n"),
                       &bundle);
  ASSERT_TRUE(model.ok()) << model.status();
  Array a(DType::kF32, {static_cast<int64_t>(xs.size())});
  for (size_t i = 0; i < xs.size(); ++i) a.typed_data<float>()[i] = xs[i];
  auto got = RunModel(*model, {a}, runner);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ((*got)[0].dtype(), kF4);
  int mismatches = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const uint8_t want =
        jaxpr::NarrowFloatFromDouble(NarrowFormat::kF4E2M1FN, xs[i]);
    const uint8_t have = (*got)[0].data()[i];
    if (want != have && ++mismatches <= 5) {
      ADD_FAILURE() << "f32 " << xs[i] << ": got code " << int{have}
                    << ", ml_dtypes " << int{want};
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST_P(Float4Test, EveryCodeDecodesAndRoundTrips) {
  const auto [pipeline, opset] = GetParam();
  OrtRunner& runner = OrtRunner::Shared();
  std::string reason;
  if (!runner.IsAvailable(&reason)) GTEST_SKIP() << "ONNX Runtime: " << reason;
  Bundle bundle;
  auto model = Convert(pipeline, opset,
                       "{ lambda ; a:f4_e2m1fn[32]. let\n"
                       "    b:f32[32] = convert_element_type["
                       "new_dtype=float32 weak_type=False] a\n"
                       "    d:f4_e2m1fn[32] = convert_element_type["
                       "new_dtype=float4_e2m1fn weak_type=False] b\n"
                       "  in (b, d) }\n",
                       &bundle);
  ASSERT_TRUE(model.ok()) << model.status();
  Array a(kF4, {32});
  // Codes 0..15, then the same with a high bit set (ignored on input).
  for (int i = 0; i < 32; ++i) {
    a.data()[i] = static_cast<uint8_t>(i % 16 | (i / 16) << 6);
  }
  auto got = RunModel(*model, {a}, runner);
  ASSERT_TRUE(got.ok()) << got.status();
  for (int i = 0; i < 32; ++i) {
    const double want =
        jaxpr::NarrowFloatToDouble(NarrowFormat::kF4E2M1FN, i % 16);
    const double have = (*got)[0].GetAsDouble(i);
    EXPECT_EQ(have, want) << "code " << i;
    EXPECT_EQ(std::signbit(have), std::signbit(want)) << "code " << i;
    EXPECT_EQ(int{(*got)[1].data()[i]}, i % 16) << "code " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    BothPipelines, Float4Test,
    ::testing::Combine(::testing::Values(Pipeline::kLegacy, Pipeline::kIr),
                       ::testing::Values(17, 23)),
    [](const auto& info) {
      return absl::StrCat(
          std::get<0>(info.param) == Pipeline::kIr ? "Ir" : "Legacy", "Opset",
          std::get<1>(info.param));
    });

}  // namespace
}  // namespace jax2onnx::api
