// Every intermediate value of a converted model carries its dtype and full
// shape in value_info (type-propagation, ir/passes/type_propagation.cc): the
// models of bench/vit_jaxpr.py (a small ViT, testdata/fusion/vit_tiny, and
// the small CNN, tests/fusion/cnn_small.jaxpr, whose Conv outputs the
// lowering leaves with a dtype only) and the DenseGeneral einsum bundle, at
// the default --optimize=2. Checked on the serialized ModelProto, which is
// what ONNX tools and Netron read.
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/convert_internal.h"
#include "converter2/convert.h"
#include "gtest/gtest.h"
#include "ir/serde.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/text/parser.h"

namespace jax2onnx {
namespace {

std::string SourcePath(const std::string& relative) {
  return absl::StrCat(JAX2ONNX_SOURCE_DIR, "/", relative);
}

// A bundle whose consts are zeros of their printed shapes (only shapes
// matter for types).
absl::StatusOr<jaxpr::Bundle> WithZeroConsts(const std::string& path) {
  absl::StatusOr<jaxpr::JaxprFile> file = jaxpr::ParseJaxprFile(path);
  if (!file.ok()) return file.status();
  jaxpr::NamedArrays arrays;
  for (size_t i = 0; i < file->main->constvars.size(); ++i) {
    const jaxpr::Aval& aval = file->main->constvars[i]->aval;
    std::vector<int64_t> dims;
    for (const jaxpr::DimExpr& d : aval.shape) {
      if (!d.is_constant()) {
        return absl::InvalidArgumentError("symbolic const shape");
      }
      dims.push_back(d.constant_value());
    }
    arrays.emplace_back(absl::StrCat("const_", i),
                        jaxpr::Array(aval.dtype, std::move(dims)));
  }
  std::string text;
  {
    std::ifstream in(path);
    text.assign(std::istreambuf_iterator<char>(in),
                std::istreambuf_iterator<char>());
  }
  return jaxpr::BundleFromParts("bundle", text, path, arrays);
}

// The node outputs of `graph` (recursively into subgraphs) whose type in
// the proto is missing, not a tensor, without dtype, without shape, or with
// a dim that has neither a value nor a symbol; each as "name (op): why".
void CollectIncomplete(const onnx::GraphProto& graph,
                       std::vector<std::string>* out) {
  std::map<std::string, const onnx::TypeProto*> types;
  for (const auto& v : graph.value_info()) types[v.name()] = &v.type();
  for (const auto& v : graph.output()) types[v.name()] = &v.type();
  for (const auto& node : graph.node()) {
    for (const std::string& name : node.output()) {
      if (name.empty()) continue;
      auto it = types.find(name);
      std::string why;
      if (it == types.end()) {
        why = "no value_info";
      } else if (!it->second->has_tensor_type()) {
        why = "not a tensor type";
      } else if (it->second->tensor_type().elem_type() == 0) {
        why = "no dtype";
      } else if (!it->second->tensor_type().has_shape()) {
        why = "no shape";
      } else {
        for (const auto& d : it->second->tensor_type().shape().dim()) {
          if (!d.has_dim_value() && !d.has_dim_param()) why = "unknown dim";
        }
      }
      if (!why.empty()) {
        out->push_back(absl::StrCat(name, " (", node.op_type(), "): ", why));
      }
    }
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) CollectIncomplete(attr.g(), out);
      for (const auto& g : attr.graphs()) CollectIncomplete(g, out);
    }
  }
}

class ValueInfoTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { api::RegisterAllLowerings(); }

  // The intermediates without a full shape after converting at --optimize=2
  // (with `options`), and the node count.
  std::vector<std::string> Incomplete(const jaxpr::Bundle& bundle,
                                      converter2::IrConvertOptions options,
                                      int* nodes = nullptr) {
    absl::StatusOr<ir::Model> model = converter2::ConvertToIr(bundle, options);
    EXPECT_TRUE(model.ok()) << model.status();
    if (!model.ok()) return {"conversion failed"};
    onnx::ModelProto proto = ir::ToProto(*model);
    if (nodes != nullptr) *nodes = proto.graph().node_size();
    std::vector<std::string> incomplete;
    CollectIncomplete(proto.graph(), &incomplete);
    return incomplete;
  }
};

TEST_F(ValueInfoTest, EveryIntermediateOfTheSmallCnnHasAFullShape) {
  // Conv outputs (and the layout Transposes around them) came out of the
  // lowering with a dtype only: f32[*].
  absl::StatusOr<jaxpr::Bundle> bundle =
      WithZeroConsts(SourcePath("tests/fusion/cnn_small.jaxpr"));
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  int nodes = 0;
  std::vector<std::string> incomplete = Incomplete(*bundle, {}, &nodes);
  EXPECT_GT(nodes, 10);
  EXPECT_TRUE(incomplete.empty()) << absl::StrJoin(incomplete, "\n");
}

TEST_F(ValueInfoTest, EveryIntermediateOfTheSmallCnnHasAFullShapeInNchw) {
  // With the NCHW adapters (the input Transpose folded into the Conv
  // layout) and at the literal level 0 as well.
  absl::StatusOr<jaxpr::Bundle> bundle =
      WithZeroConsts(SourcePath("tests/fusion/cnn_small.jaxpr"));
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  converter2::IrConvertOptions nchw;
  nchw.inputs_as_nchw = {0};
  std::vector<std::string> incomplete = Incomplete(*bundle, nchw);
  EXPECT_TRUE(incomplete.empty()) << absl::StrJoin(incomplete, "\n");
  converter2::IrConvertOptions literal;
  literal.optimize = 0;
  incomplete = Incomplete(*bundle, literal);
  EXPECT_TRUE(incomplete.empty()) << absl::StrJoin(incomplete, "\n");
}

TEST_F(ValueInfoTest, EveryIntermediateOfTheTinyVitHasAFullShape) {
  absl::StatusOr<jaxpr::Bundle> bundle =
      jaxpr::LoadBundle(SourcePath("testdata/fusion/vit_tiny/vit_tiny.jaxpr"));
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  std::vector<std::string> incomplete = Incomplete(*bundle, {});
  EXPECT_TRUE(incomplete.empty()) << absl::StrJoin(incomplete, "\n");
}

TEST_F(ValueInfoTest, DenseGeneralMatMulsAndReshapesKeepTheSymbolicBatch) {
  // einsum-to-matmul's Reshapes and MatMuls under a symbolic batch B.
  absl::StatusOr<jaxpr::Bundle> bundle = jaxpr::LoadBundle(
      SourcePath("testdata/examples/dense_general_3d/dense_general_3d.jaxpr"));
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  std::vector<std::string> incomplete = Incomplete(*bundle, {});
  EXPECT_TRUE(incomplete.empty()) << absl::StrJoin(incomplete, "\n");
}

}  // namespace
}  // namespace jax2onnx
