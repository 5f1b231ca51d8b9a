// ConvertOptions::optimize (the CLI's --optimize) and what the IR pipeline
// writes for people (Netron): equation-derived node names, doc strings with
// the jaxpr source line, metadata_props, full static shapes in value_info.
// The numeric side of the optimizer is checked in ONNX Runtime by the
// corpus (testdata/examples/vit_block_optimized and every other bundle at
// the default level 2).
#include <map>
#include <regex>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/serde.h"
#include "jax2onnx/jax2onnx.h"
#include "tests/ort_accepts.h"

namespace jax2onnx {
namespace {

using ::testing::HasSubstr;

// A dense layer with an (out, in) kernel constvar (an Einsum in the
// literal lowering; a MatMul with the kernel transposed at build time when
// optimized) and a sum over the last axis kept as a unit axis (reduce_sum +
// broadcast_in_dim: ReduceSum + Unsqueeze literally).
constexpr char kProgram[] =
    "# source: written by hand for tests/api/optimize_test.cc\n"
    "{ lambda b:f32[4,8]; a:f32[2,5,8]. let\n"
    "    c:f32[2,5,4] = dot_general[\n"
    "      dimension_numbers=(([2], [1]), ([], []))\n"
    "      preferred_element_type=float32\n"
    "    ] a b\n"
    "    d:f32[2,5] = reduce_sum[axes=(2,) out_sharding=None] c\n"
    "    e:f32[2,5,1] = broadcast_in_dim[broadcast_dimensions=(0, 1)] d\n"
    "    f:f32[2,5,4] = sub c e\n"
    "  in (f,) }\n";

onnx::ModelProto Convert(int optimize, bool ir = true) {
  ConvertOptions options;
  options.read_environment = false;
  options.use_onnx_ir = ir;
  options.optimize = optimize;
  NamedArray kernel{"const_0", "f32", {4, 8}, ""};
  kernel.bytes.assign(4 * 8 * sizeof(float), '\0');
  auto model = ToOnnxFromText(kProgram, {kernel}, options);
  CHECK(model.ok()) << model.status();
  EXPECT_ORT_ACCEPTS(*model);  // every level's model (tests/ort_accepts.h)
  return *model;
}

std::map<std::string, int> OpCounts(const onnx::ModelProto& m) {
  std::map<std::string, int> counts;
  for (const auto& n : m.graph().node()) ++counts[n.op_type()];
  return counts;
}

TEST(OptimizeTest, LevelZeroIsLiteralAndLevelTwoRewrites) {
  const onnx::ModelProto literal = Convert(0);
  const onnx::ModelProto optimized = Convert(2);
  EXPECT_EQ(OpCounts(literal)["Einsum"], 1);
  EXPECT_EQ(OpCounts(literal)["Unsqueeze"], 1);
  EXPECT_EQ(OpCounts(optimized)["Einsum"], 0);
  EXPECT_EQ(OpCounts(optimized)["Unsqueeze"], 0);
  EXPECT_EQ(OpCounts(optimized)["MatMul"], 1);
  // The kernel's Transpose is folded into the initializer.
  EXPECT_EQ(OpCounts(optimized)["Transpose"], 0);
  EXPECT_LT(optimized.graph().node_size(), literal.graph().node_size());
  // Level 2 is level 1 until the fusion passes land.
  EXPECT_EQ(ir::SerializeDeterministic(Convert(1)).size(),
            ir::SerializeDeterministic(optimized).size());
}

TEST(OptimizeTest, LegacyPipelineIgnoresTheLevel) {
  EXPECT_EQ(ir::SerializeDeterministic(Convert(0, /*ir=*/false)),
            ir::SerializeDeterministic(Convert(2, /*ir=*/false)));
}

TEST(OptimizeTest, RejectsUnknownLevels) {
  ConvertOptions options;
  options.read_environment = false;
  options.optimize = 3;
  NamedArray kernel{"const_0", "f32", {4, 8}, ""};
  kernel.bytes.assign(4 * 8 * sizeof(float), '\0');
  auto model = ToOnnxFromText(kProgram, {kernel}, options);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(),
              HasSubstr("optimization level must be 0, 1 or 2, got 3"));
}

TEST(OptimizeTest, NodesAreNamedAfterTheirEquationWithTheSourceLine) {
  for (int level : {0, 2}) {
    const onnx::ModelProto m = Convert(level);
    std::set<std::string> names;
    const std::regex pattern("eqn[0-9]+/[a-z_]+/[A-Za-z]+(_[0-9]+)?");
    for (const auto& n : m.graph().node()) {
      EXPECT_TRUE(names.insert(n.name()).second) << "duplicate " << n.name();
      EXPECT_TRUE(std::regex_match(n.name(), pattern)) << n.name();
      EXPECT_THAT(n.doc_string(), HasSubstr("line ")) << n.name();
    }
    // The dot_general is equation 0, printed on line 3 (after the header
    // and the lambda line), its outvar at column 5.
    const std::string op = level == 0 ? "Einsum" : "MatMul";
    bool found = false;
    for (const auto& n : m.graph().node()) {
      if (n.op_type() != op) continue;
      found = true;
      EXPECT_EQ(n.name(), "eqn0/dot_general/" + op);
      EXPECT_EQ(n.doc_string(), "line 3:5: c:f32[2,5,4] = dot_general a b");
    }
    EXPECT_TRUE(found) << op;
  }
}

TEST(OptimizeTest, MetadataNamesConverterLevelAndSource) {
  const onnx::ModelProto m = Convert(2);
  std::map<std::string, std::string> meta;
  for (const auto& p : m.metadata_props()) meta[p.key()] = p.value();
  EXPECT_EQ(meta["jax2onnx_version"], Version());
  EXPECT_EQ(meta["jax2onnx_optimize"], "2");
  EXPECT_EQ(meta["source"], "written by hand for tests/api/optimize_test.cc");
}

// ConvertOptions::fuse_attention (the CLI's --fuse_attention): off by
// default, an optimize-2 fusion, IR only (numbers: tests/fusion/).
TEST(OptimizeTest, FuseAttentionIsAnOptInLevelTwoFusion) {
  auto bundle = LoadBundle(std::string(JAX2ONNX_SOURCE_DIR) +
                           "/testdata/fusion/flax_attention_causal/"
                           "flax_attention_causal.jaxpr");
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  ConvertOptions options;
  options.read_environment = false;
  auto plain = ToOnnx(*bundle, options);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(OpCounts(*plain).count("Attention"), 0u);
  for (const auto& p : plain->metadata_props()) {
    EXPECT_NE(p.key(), "jax2onnx_fuse_attention");
  }
  options.fuse_attention = true;
  auto fused = ToOnnx(*bundle, options);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_ORT_ACCEPTS(*fused);
  EXPECT_EQ(OpCounts(*fused)["Attention"], 1);
  EXPECT_EQ(OpCounts(*fused).count("Softmax"), 0u);
  std::map<std::string, std::string> meta;
  for (const auto& p : fused->metadata_props()) meta[p.key()] = p.value();
  EXPECT_EQ(meta["jax2onnx_fuse_attention"], "1");

  options.optimize = 1;
  auto level1 = ToOnnx(*bundle, options);
  ASSERT_FALSE(level1.ok());
  EXPECT_EQ(level1.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(level1.status().message(),
              HasSubstr("fusion of optimization level 2"));

  // The legacy pipeline is literal: the option changes nothing there.
  options.optimize = 2;
  options.use_onnx_ir = false;
  auto legacy = ToOnnx(*bundle, options);
  ASSERT_TRUE(legacy.ok()) << legacy.status();
  options.fuse_attention = false;
  auto legacy_plain = ToOnnx(*bundle, options);
  ASSERT_TRUE(legacy_plain.ok()) << legacy_plain.status();
  EXPECT_EQ(ir::SerializeDeterministic(*legacy),
            ir::SerializeDeterministic(*legacy_plain));
}

TEST(OptimizeTest, EveryIntermediateValueHasItsStaticShape) {
  for (int level : {0, 2}) {
    const onnx::ModelProto m = Convert(level);
    std::map<std::string, const onnx::ValueInfoProto*> info;
    for (const auto& v : m.graph().value_info()) info[v.name()] = &v;
    std::set<std::string> outputs;
    for (const auto& o : m.graph().output()) outputs.insert(o.name());
    for (const auto& n : m.graph().node()) {
      for (const std::string& out : n.output()) {
        if (outputs.count(out)) continue;
        ASSERT_TRUE(info.count(out))
            << "no value_info for " << out << " (" << n.op_type() << ", level "
            << level << ")";
        const auto& shape = info[out]->type().tensor_type().shape();
        ASSERT_TRUE(info[out]->type().tensor_type().has_shape()) << out;
        for (const auto& d : shape.dim()) {
          EXPECT_TRUE(d.has_dim_value()) << out;
        }
      }
    }
  }
}

}  // namespace
}  // namespace jax2onnx

namespace jax2onnx {
namespace {

// A channels-last (NHWC) convolution as JAX prints it.
constexpr char kConvProgram[] =
    "{ lambda ; a:f32[2,8,8,3] b:f32[3,3,3,4]. let\n"
    "    c:f32[2,4,4,4] = conv_general_dilated[\n"
    "      batch_group_count=1\n"
    "      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), "
    "rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))\n"
    "      feature_group_count=1\n"
    "      lhs_dilation=(1, 1)\n"
    "      out_sharding=None\n"
    "      padding=((1, 1), (1, 1))\n"
    "      precision=None\n"
    "      preferred_element_type=None\n"
    "      rhs_dilation=(1, 1)\n"
    "      window_strides=(2, 2)\n"
    "    ] a b\n"
    "  in (c,) }\n";

std::string Dims(const onnx::ValueInfoProto& v) {
  std::string out;
  for (const auto& d : v.type().tensor_type().shape().dim()) {
    out += std::to_string(d.dim_value()) + ",";
  }
  return out;
}

TEST(NchwAdapterTest, BoundaryTransposesFoldIntoTheConvLayoutTransposes) {
  ConvertOptions options;
  options.read_environment = false;
  options.use_onnx_ir = true;
  auto plain = ToOnnxFromText(kConvProgram, {}, options);
  ASSERT_TRUE(plain.ok()) << plain.status();
  options.inputs_as_nchw = {0};
  options.outputs_as_nchw = {0};
  auto adapted = ToOnnxFromText(kConvProgram, {}, options);
  ASSERT_TRUE(adapted.ok()) << adapted.status();
  // NHWC [2,8,8,3] is exposed as NCHW [2,3,8,8]; the output [2,4,4,4]
  // (NHWC, C=4) as NCHW [2,4,4,4]; the kernel input stays as it is.
  EXPECT_EQ(Dims(adapted->graph().input(0)), "2,3,8,8,");
  EXPECT_EQ(Dims(adapted->graph().input(1)), "3,3,3,4,");
  EXPECT_EQ(Dims(adapted->graph().output(0)), "2,4,4,4,");
  // Literally: a Transpose into NCHW for the Conv, one for the kernel, one
  // back to NHWC. The adapters cancel the data ones: only the kernel's
  // layout Transpose remains.
  EXPECT_EQ(OpCounts(*plain)["Transpose"], 3);
  EXPECT_EQ(OpCounts(*adapted)["Transpose"], 1);
  EXPECT_EQ(OpCounts(*adapted)["Conv"], 1);
}

TEST(NchwAdapterTest, RefusesBadIndicesRanksAndTheLegacyPipeline) {
  ConvertOptions options;
  options.read_environment = false;
  options.use_onnx_ir = true;
  options.inputs_as_nchw = {2};
  auto out_of_range = ToOnnxFromText(kConvProgram, {}, options);
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_THAT(out_of_range.status().message(),
              HasSubstr("inputs_as_nchw: index 2 is not one of the 2 graph "
                        "inputs"));
  options.inputs_as_nchw = {};
  options.outputs_as_nchw = {0};
  options.use_onnx_ir = false;
  auto legacy = ToOnnxFromText(kConvProgram, {}, options);
  ASSERT_FALSE(legacy.ok());
  EXPECT_THAT(legacy.status().message(), HasSubstr("IR pipeline only"));
}

}  // namespace
}  // namespace jax2onnx
