// Precise refusals of the multi-device primitives on both pipelines: Pallas
// kernels, pmap bodies, named axes outside shard_map, axis_index_groups,
// meshes whose sizes are not printed (and --mesh supplying them), meshes too
// large to unroll, collectives under control flow in a shard_map body, and
// symbolic shapes. Nothing is produced on failure.
#include <string>

#include "api/convert_internal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/text/parser.h"
#include "tests/ort_accepts.h"

namespace jax2onnx::api {
namespace {

using ::testing::HasSubstr;

class CollectiveRefusalTest : public ::testing::TestWithParam<bool> {
 protected:
  absl::StatusOr<onnx::ModelProto> Convert(const std::string& text,
                                           const std::string& mesh = "") {
    auto file = jaxpr::ParseJaxprText(text, "<test>");
    if (!file.ok()) return file.status();
    jaxpr::Bundle bundle;
    bundle.name = "collectives";
    bundle.file = *std::move(file);
    ConvertOptions options;
    options.use_onnx_ir = GetParam();
    options.mesh_axis_sizes = mesh;
    absl::StatusOr<onnx::ModelProto> model = ToOnnx(bundle, options);
    // Whatever converts must be a model ORT accepts (tests/ort_accepts.h).
    if (model.ok()) EXPECT_ORT_ACCEPTS(*model);
    return model;
  }
};

std::string ShardMapSum(const std::string& mesh, const std::string& shape,
                        const std::string& local) {
  return "{ lambda ; a:f32[" + shape +
         "]. let\n"
         "    b:f32[" +
         local +
         "] = shard_map[\n"
         "      check_vma=False\n"
         "      in_specs=(P('data',),)\n"
         "      jaxpr={ lambda ; c:f32[" +
         local +
         "]. let\n"
         "          d:f32[" +
         local +
         "] = psum[axes=('data',) "
         "axis_index_groups=None] c\n"
         "        in (d,) }\n"
         "      mesh=" +
         mesh +
         "\n"
         "      out_specs=(P(),)\n"
         "    ] a\n"
         "  in (b,) }";
}

TEST_P(CollectiveRefusalTest, PallasCallAndCallbacks) {
  auto pallas = Convert(R"({ lambda ; a:f32[3]. let
    b:f32[3] = pallas_call[name=k] a
  in (b,) })");
  ASSERT_FALSE(pallas.ok());
  EXPECT_THAT(pallas.status().message(),
              HasSubstr("pallas_call: custom kernels (Pallas) cannot be "
                        "converted"));
  auto callback = Convert(R"({ lambda ; a:f32[3]. let
    b:f32[3] = pure_callback[callback=<function f at 0xXXXXXXXXXXXX>] a
  in (b,) })");
  ASSERT_FALSE(callback.ok());
  EXPECT_THAT(callback.status().message(),
              HasSubstr("pure_callback: host Python callbacks cannot run "
                        "inside an ONNX graph"));
}

TEST_P(CollectiveRefusalTest, NamedAxisOutsideShardMap) {
  auto out = Convert(R"({ lambda ; a:f32[3]. let
    b:f32[3] = psum[axes=('rows',) axis_index_groups=None] a
  in (b,) })");
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("'psum' over mesh axis 'rows' outside shard_map"));
}

TEST_P(CollectiveRefusalTest, AxisIndexGroups) {
  auto out = Convert(R"({ lambda ; a:f32[4,3]. let
    b:f32[3] = psum[axes=(0,) axis_index_groups=((0, 1), (2, 3))] a
  in (b,) })");
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("axis_index_groups=((0, 1), (2, 3)) is not "
                        "supported"));
}

TEST_P(CollectiveRefusalTest, MeshSizesFromTheMeshOption) {
  const std::string text = ShardMapSum("<unprintable mesh>", "8", "2");
  auto missing = Convert(text);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(),
              HasSubstr("does not show the size of axis 'data'; pass it with "
                        "--mesh data=SIZE"));
  EXPECT_TRUE(Convert(text, "data=4").ok());
  // 8 / 3 does not split evenly.
  auto uneven = Convert(text, "data=3");
  ASSERT_FALSE(uneven.ok());
  EXPECT_THAT(uneven.status().message(), HasSubstr("does not split evenly"));
  auto malformed = Convert(text, "data");
  ASSERT_FALSE(malformed.ok());
  EXPECT_THAT(malformed.status().message(), HasSubstr("is not NAME=SIZE"));
}

TEST_P(CollectiveRefusalTest, TooManyDevicesToUnroll) {
  auto out = Convert(ShardMapSum("Mesh('data': 128)", "256", "2"));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("shard_map over 128 devices: emulating more than 64"));
}

TEST_P(CollectiveRefusalTest, SymbolicShapes) {
  auto out = Convert(ShardMapSum("Mesh('data': 2)", "2*B", "B"));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("symbolic shape"));
}

TEST_P(CollectiveRefusalTest, CollectiveInsideScanInShardMap) {
  auto out = Convert(R"({ lambda ; a:f32[8]. let
    b:f32[4] = shard_map[
      check_vma=False
      in_specs=(P('data',),)
      jaxpr={ lambda ; c:f32[4]. let
          d:f32[4] = scan[
            _split_transpose=False
            jaxpr={ lambda ; e:f32[4]. let
                f:f32[4] = psum[axes=('data',) axis_index_groups=None] e
              in (f,) }
            length=2
            linear=(False,)
            num_carry=1
            num_consts=0
            reverse=False
            unroll=1
          ] c
        in (d,) }
      mesh=Mesh('data': 2)
      out_specs=(P(),)
    ] a
  in (b,) })");
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("a collective over a mesh axis inside 'scan' (param "
                        "jaxpr) in a shard_map body is not supported"));
}

INSTANTIATE_TEST_SUITE_P(BothPipelines, CollectiveRefusalTest,
                         ::testing::Bool(), [](const auto& info) {
                           return info.param ? "ir" : "legacy";
                         });

}  // namespace
}  // namespace jax2onnx::api
