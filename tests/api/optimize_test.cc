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
        ASSERT_TRUE(info.count(out)) << "no value_info for " << out << " ("
                                     << n.op_type() << ", level " << level
                                     << ")";
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
