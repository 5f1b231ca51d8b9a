// The NCHW boundary adapters (--inputs_as_nchw / --outputs_as_nchw,
// converter2 IrConvertOptions) on a channels-last conv stack
// (testdata/examples/conv_stack_nhwc): the model exposes NCHW input and
// output, ONNX Runtime's numbers on the NCHW-transposed input equal the
// reference interpreter's NHWC output transposed to NCHW, and the input
// adapter's Transpose is folded into the first Conv (which then reads the
// graph input directly), the output adapter into the last Conv's layout
// Transpose.
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/check.h"
#include "api/convert_internal.h"
#include "api/ort_runner.h"
#include "converter2/convert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "ir/serde.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/io/compare.h"

namespace jax2onnx {
namespace {

// NHWC -> NCHW (perm [0, 3, 1, 2]) of a rank-4 f32 array.
jaxpr::Array NhwcToNchw(const jaxpr::Array& a) {
  const std::vector<int64_t>& s = a.shape();
  const int64_t n = s[0], h = s[1], w = s[2], c = s[3];
  jaxpr::Array out(a.dtype(), {n, c, h, w});
  const float* src = reinterpret_cast<const float*>(a.data());
  float* dst = reinterpret_cast<float*>(out.data());
  for (int64_t in = 0; in < n; ++in) {
    for (int64_t ih = 0; ih < h; ++ih) {
      for (int64_t iw = 0; iw < w; ++iw) {
        for (int64_t ic = 0; ic < c; ++ic) {
          dst[((in * c + ic) * h + ih) * w + iw] =
              src[((in * h + ih) * w + iw) * c + ic];
        }
      }
    }
  }
  return out;
}

std::map<std::string, int> OpCounts(const ir::Model& model) {
  std::map<std::string, int> counts;
  for (const ir::Node* n : model.graph().nodes()) ++counts[n->op_type()];
  return counts;
}

TEST(NchwAdapterOrtTest, ConvStackGivesTheInterpretersNumbersInNchw) {
  api::RegisterAllLowerings();
  absl::StatusOr<jaxpr::Bundle> bundle = jaxpr::LoadBundle(
      absl::StrCat(JAX2ONNX_SOURCE_DIR,
                   "/testdata/examples/conv_stack_nhwc/conv_stack_nhwc.jaxpr"));
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  converter2::IrConvertOptions options;
  options.inputs_as_nchw = {0};
  options.outputs_as_nchw = {0};
  absl::StatusOr<ir::Model> model = converter2::ConvertToIr(*bundle, options);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::string text = ir::PrintGraph(model->graph());

  // The boundary types: NHWC [2,16,16,3] in, [2,8,8,4] out, exposed NCHW.
  ASSERT_EQ(model->graph().inputs().size(), 1u);
  EXPECT_EQ(model->graph().inputs()[0]->type()->ToString(), "f32[2,3,16,16]");
  EXPECT_EQ(model->graph().outputs()[0]->type()->ToString(), "f32[2,4,8,8]");
  // The input adapter (NCHW -> NHWC) and the Conv's own layout Transpose
  // (NHWC -> NCHW) cancel: the first Conv reads the graph input.
  const ir::Node* first = model->graph().inputs()[0]->uses().empty()
                              ? nullptr
                              : model->graph().inputs()[0]->uses()[0].node;
  ASSERT_NE(first, nullptr) << text;
  EXPECT_EQ(first->op_type(), "Conv") << text;
  EXPECT_EQ(model->graph().inputs()[0]->num_uses(), 1u) << text;
  // Between the Convs the layout Transposes move through the bias Add and
  // the relu Max and Abs (the bias permuted to [1,8,1,1]) and cancel, and so do
  // the last Conv's NCHW -> NHWC Transpose and the output adapter around the
  // last bias Add: the stack runs in NCHW without any Transpose (the
  // kernels' layout Transposes are folded into the weights).
  EXPECT_THAT(
      text, ::testing::HasSubstr(
                "%h/add: f32[2,8,16,16] = Add(%f/conv_general_dilated/Conv, "));
  EXPECT_THAT(
      text, ::testing::HasSubstr(
                "%j/conv_general_dilated/Conv: f32[2,4,8,8] = Conv(%i/max, "));
  EXPECT_THAT(text,
              ::testing::HasSubstr(
                  "%l: f32[2,4,8,8] = Add(%j/conv_general_dilated/Conv, "));
  std::map<std::string, int> counts = OpCounts(*model);
  EXPECT_EQ(counts["Conv"], 2) << text;
  EXPECT_EQ(counts["Transpose"], 0) << text;
  int nodes = 0;
  for (const auto& [op, n] : counts) nodes += n;
  // Conv, Add, relu's Max and Abs (plugin/elementwise_plan.h), Conv, Add.
  EXPECT_EQ(nodes, 6) << text;

  std::string reason;
  ASSERT_TRUE(api::OrtRunner::Shared().IsAvailable(&reason)) << reason;
  api::CheckOptions check;
  absl::StatusOr<std::vector<jaxpr::Array>> inputs =
      api::InputsFor(*bundle, check);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  std::string oracle;
  absl::StatusOr<std::vector<jaxpr::Array>> expected =
      api::OracleOutputs(*bundle, *inputs, &oracle);
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_EQ(expected->size(), 1u);
  EXPECT_EQ((*expected)[0].shape(), (std::vector<int64_t>{2, 8, 8, 4}));
  absl::StatusOr<std::vector<jaxpr::Array>> got =
      api::RunModel(ir::ToProto(*model), {NhwcToNchw((*inputs)[0])},
                    api::OrtRunner::Shared());
  ASSERT_TRUE(got.ok()) << got.status() << "\n" << text;
  ASSERT_EQ(got->size(), 1u);
  jaxpr::CompareResult cmp = jaxpr::CompareArrays(
      NhwcToNchw((*expected)[0]), (*got)[0], bundle->rtol, bundle->atol);
  EXPECT_TRUE(cmp.ok) << "vs " << oracle << ": " << cmp.Summary();
  // The layout matters: the NHWC result's bytes read as NCHW are not it.
  jaxpr::Array nhwc_bytes((*expected)[0].dtype(), {2, 4, 8, 8});
  std::memcpy(nhwc_bytes.data(), (*expected)[0].data(),
              (*expected)[0].num_bytes());
  EXPECT_FALSE(
      jaxpr::CompareArrays(nhwc_bytes, (*got)[0], bundle->rtol, bundle->atol)
          .ok);
}

}  // namespace
}  // namespace jax2onnx
