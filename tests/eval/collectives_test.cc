// Hand-derived tests of the interpreter's multi-device emulation: collectives
// over positional (vmap) axes, shard_map split/unroll/reassemble on 1-D and
// 2x2 meshes with psum, axis_index, all_gather, all_to_all, ppermute,
// pbroadcast, and the precise refusals. The interpreter is the oracle of the
// ONNX lowerings, so each expected value is derived by hand in a comment.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/mesh.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::jax2onnx::jaxpr::testing::EvalText;
using ::jax2onnx::jaxpr::testing::MakeArray;
using ::jax2onnx::jaxpr::testing::ToDoubles;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Array Iota(std::vector<int64_t> shape) {
  Array a(DType::kF32, shape);
  for (int64_t i = 0; i < a.num_elements(); ++i) a.SetFromDouble(i, i);
  return a;
}

TEST(PositionalCollectiveTest, PminPmaxReduceTheBatchAxis) {
  // Columns of [[1,5,9],[4,2,8],[7,3,0],[2,6,1]]: min [1,2,0], max [7,6,9].
  const Array a =
      MakeArray(DType::kF32, {4, 3}, {1, 5, 9, 4, 2, 8, 7, 3, 0, 2, 6, 1});
  auto out = EvalText(R"({ lambda ; a:f32[4,3]. let
    b:f32[3] = pmin[axes=(0,) axis_index_groups=None] a
    c:f32[3] = pmax[axes=(0,) axis_index_groups=None] a
    d:f32[3] = psum[axes=(0,) axis_index_groups=None] a
  in (b, c, d) })",
                      {a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(1, 2, 0));
  EXPECT_THAT(ToDoubles((*out)[1]), ElementsAre(7, 6, 9));
  // Sums: 1+4+7+2 = 14, 5+2+3+6 = 16, 9+8+0+1 = 18.
  EXPECT_THAT(ToDoubles((*out)[2]), ElementsAre(14, 16, 18));
}

constexpr char kMatmulPsum[] = R"({ lambda ; a:f32[2,8] b:f32[8,3]. let
    c:f32[2,3] = shard_map[
      check_vma=True
      in_specs=(P(None, 'data'), P('data', None))
      jaxpr={ lambda ; d:f32[2,2]{V:data} e:f32[2,3]{V:data}. let
          f:f32[2,3]{V:data} = dot_general[
            dimension_numbers=(([1], [0]), ([], []))
            preferred_element_type=float32
          ] d e
          g:f32[2,3] = psum_invariant[axes=('data',)] f
        in (g,) }
      mesh=MESH
      newly_manual_axes=frozenset({'data'})
      out_specs=(P(),)
    ] a b
  in (c,) })";

std::string WithMesh(std::string text, const std::string& mesh) {
  text.replace(text.find("MESH"), 4, mesh);
  return text;
}

std::vector<Array> MatmulInputs() {
  // x row 0 = 1..8, row 1 = ones; w[k] = [1, k, k % 2] for k = 0..7.
  Array x = MakeArray(DType::kF32, {2, 8},
                      {1, 2, 3, 4, 5, 6, 7, 8, 1, 1, 1, 1, 1, 1, 1, 1});
  std::vector<double> w;
  for (int k = 0; k < 8; ++k) {
    w.push_back(1);
    w.push_back(k);
    w.push_back(k % 2);
  }
  return {x, MakeArray(DType::kF32, {8, 3}, w)};
}

TEST(ShardMapTest, ContractionSplitOverFourDevicesIsSummedByPsum) {
  // Each device holds 2 of the 8 contracted columns; psum adds the partial
  // products, so the result is x @ w:
  //   row 0: sum(1..8) = 36, sum (k+1)*k = 140 + 28 = 168,
  //          sum over odd k of (k+1) = 2+4+6+8 = 20;
  //   row 1: 8, sum k = 28, number of odd k = 4.
  auto out = EvalText(WithMesh(kMatmulPsum, "Mesh('data': 4)"), MatmulInputs());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(36, 168, 20, 8, 28, 4));
}

TEST(ShardMapTest, MeshSizeNotPrintedNeedsTheMeshOption) {
  auto missing = EvalText(WithMesh(kMatmulPsum, "<mesh>"), MatmulInputs());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(),
              HasSubstr("does not show the size of axis 'data'; pass it with "
                        "--mesh data=SIZE"));
  // With the size given the result is the same as above.
  {
    EvalOptions sizes;
    sizes.mesh_axis_sizes = {{"data", 4}};
    auto out =
        EvalText(WithMesh(kMatmulPsum, "<mesh>"), MatmulInputs(), {}, sizes);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(36, 168, 20, 8, 28, 4));
  }
  // A size that contradicts the body's shard shapes (8 devices would hold
  // f32[2,1] shards of `a`, the body declares f32[2,2]) is a type error.
  EvalOptions wrong;
  wrong.mesh_axis_sizes = {{"data", 8}};
  auto contradicted =
      EvalText(WithMesh(kMatmulPsum, "<mesh>"), MatmulInputs(), {}, wrong);
  ASSERT_FALSE(contradicted.ok());
  EXPECT_THAT(contradicted.status().message(),
              HasSubstr("has the shard shape f32[2,1]{V:data} on this mesh, "
                        "the body declares f32[2,2]{V:data}"));
}

TEST(ShardMapTest, AxisIndexOnTwoByTwoMesh) {
  // Block (data, model) of the 4x6 zeros holds 10*data + model +
  // 100*(2*data + model) (axis_index(('data', 'model')) as JAX binds it): (0,0)
  // -> 0, (0,1) -> 101, (1,0) -> 210, (1,1) -> 311. Rows 0-1 are data 0,
  // columns 3-5 model 1.
  auto out = EvalText(R"({ lambda ; a:f32[4,6]. let
    b:f32[4,6] = shard_map[
      check_vma=True
      in_specs=(P('data', 'model'),)
      jaxpr={ lambda ; c:f32[2,3]. let
          d:i32[] = axis_index[axis_name=data]
          e:i32[] = mul 10:i32[] d
          f:i32[] = axis_index[axis_name=model]
          g:i32[] = add e f
          m:i32[] = axis_index[axis_name=model] 
          n:i32[] = axis_index[axis_name=data] 
          o:i32[] = mul n 2:i32[]
          h:i32[] = add m o
          i:i32[] = mul 100:i32[] h
          j:i32[] = add g i
          k:f32[] = convert_element_type[new_dtype=float32 weak_type=False] j
          l:f32[2,3] = add c k
        in (l,) }
      mesh=Mesh('data': 2, 'model': 2, axis_types=(Explicit, Explicit))
      newly_manual_axes=frozenset({'data', 'model'})
      out_specs=(P('data', 'model'),)
    ] a
  in (b,) })",
                      {Array(DType::kF32, {4, 6})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]),
              ElementsAre(0, 0, 0, 101, 101, 101,        //
                          0, 0, 0, 101, 101, 101,        //
                          210, 210, 210, 311, 311, 311,  //
                          210, 210, 210, 311, 311, 311));
}

TEST(ShardMapTest, AllToAllMovesTheSplitAndPpermuteRollsBlocks) {
  // x = iota(32) as 8x4; device d holds rows 2d, 2d+1. all_to_all (split
  // columns, concat rows) gives device d column d of all rows, which
  // out_specs P(None, 'data') puts back at column d: the identity. ppermute
  // (d -> d+1 mod 4) gives device d the rows of device d-1, so output rows
  // 0-1 are x rows 6-7 (24..31) and rows 2-3 are x rows 0-1 (0..7).
  auto out = EvalText(R"({ lambda ; a:f32[8,4]. let
    b:f32[8,4] c:f32[8,4] = shard_map[
      check_vma=False
      in_specs=(P('data', None),)
      jaxpr={ lambda ; d:f32[2,4]. let
          e:f32[8,1] = all_to_all[
            axis_index_groups=None
            axis_name=('data',)
            concat_axis=0
            split_axis=1
            tiled=True
          ] d
          f:f32[2,4] = ppermute[
            axis_name=('data',)
            perm=((0, 1), (1, 2), (2, 3), (3, 0))
          ] d
        in (e, f) }
      manual_axes=frozenset({'data'})
      mesh=Mesh('data': 4, axis_types=(Auto,))
      out_specs=(P(None, 'data'), P('data', None))
    ] a
  in (b, c) })",
                      {Iota({8, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles((*out)[0]), ToDoubles(Iota({8, 4})));
  const std::vector<double> rolled = ToDoubles((*out)[1]);
  EXPECT_EQ(rolled[0], 24);   // x[6][0]
  EXPECT_EQ(rolled[7], 31);   // x[7][3]
  EXPECT_EQ(rolled[8], 0);    // x[0][0]
  EXPECT_EQ(rolled[31], 23);  // x[5][3]
}

TEST(ShardMapTest, UntiledAllGatherStacksShardsOnANewAxis) {
  // x = iota(24) as 8x3; device d holds rows 2d, 2d+1. The gathered value
  // g[i][d][:] = x[2d + i][:], so g[1][2][0] = x[5][0] = 15 and
  // g[0][3][2] = x[6][2] = 20.
  auto out = EvalText(R"({ lambda ; a:f32[8,3]. let
    b:f32[2,4,3] = shard_map[
      check_vma=True
      in_specs=(P('data',),)
      jaxpr={ lambda ; c:f32[2,3]. let
          d:f32[2,4,3] = all_gather_invariant[
            all_gather_dimension=1
            axis_name=('data',)
            axis_size=4
            tiled=False
          ] c
        in (d,) }
      mesh=Mesh('data': 4, axis_types=(Explicit,))
      newly_manual_axes=frozenset({'data'})
      out_specs=(P(),)
    ] a
  in (b,) })",
                      {Iota({8, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> g = ToDoubles((*out)[0]);
  EXPECT_EQ(g[(1 * 4 + 2) * 3 + 0], 15);
  EXPECT_EQ(g[(0 * 4 + 3) * 3 + 2], 20);
}

TEST(ShardMapTest, PbroadcastPmaxPmin) {
  // Shards [3,1] [4,1] [5,9] [2,6]: pbroadcast from device 2 = [5,9],
  // pmax = [5,9], pmin = [2,1]; 5+5-2 = 8, 9+9-1 = 17.
  auto out = EvalText(R"({ lambda ; a:f32[8]. let
    b:f32[2] = shard_map[
      check_vma=False
      in_specs=(P('data',),)
      jaxpr={ lambda ; c:f32[2]. let
          d:f32[2] = pbroadcast[axis_name=('data',) source=2] c
          e:f32[2] = pmax[axes=('data',) axis_index_groups=None] c
          f:f32[2] = add d e
          g:f32[2] = pmin[axes=('data',) axis_index_groups=None] c
          h:f32[2] = sub f g
        in (h,) }
      manual_axes=frozenset({'data'})
      mesh=Mesh('data': 4, axis_types=(Auto,))
      out_specs=(P(),)
    ] a
  in (b,) })",
                      {MakeArray(DType::kF32, {8}, {3, 1, 4, 1, 5, 9, 2, 6})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(8, 17));
}

TEST(CollectiveRefusalTest, NamedAxisOutsideShardMapAndAxisIndexGroups) {
  auto named = EvalText(R"({ lambda ; a:f32[3]. let
    b:f32[3] = psum[axes=('rows',) axis_index_groups=None] a
  in (b,) })",
                        {Array(DType::kF32, {3})});
  ASSERT_FALSE(named.ok());
  EXPECT_THAT(named.status().message(),
              HasSubstr("'psum' over mesh axis 'rows' outside shard_map"));
  auto groups = EvalText(R"({ lambda ; a:f32[4,3]. let
    b:f32[3] = psum[axes=(0,) axis_index_groups=((0, 1), (2, 3))] a
  in (b,) })",
                         {Array(DType::kF32, {4, 3})});
  ASSERT_FALSE(groups.ok());
  EXPECT_THAT(groups.status().message(), HasSubstr("axis_index_groups"));
}

TEST(CollectiveRefusalTest, PallasCallSaysWhy) {
  auto out = EvalText(R"({ lambda ; a:f32[3]. let
    b:f32[3] = pallas_call[name=k] a
  in (b,) })",
                      {Array(DType::kF32, {3})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("pallas_call: custom kernels (Pallas) cannot be "
                        "converted"));
}

TEST(ShardMapTest, ReprMeshAndPartialAutoUseOnlyManualAxes) {
  // Mesh repr form with axis_sizes/axis_names; 'model' is auto, so only the
  // 2 devices of 'data' are emulated: shards [1,2] and [3,4], psum over data
  // gives [4,6] on both.
  auto out = EvalText(R"({ lambda ; a:f32[4]. let
    b:f32[2] = shard_map[
      auto=frozenset({'model'})
      check_rep=False
      in_names=({0: ('data',)},)
      jaxpr={ lambda ; c:f32[2]. let
          d:f32[2] = psum[axes=('data',) axis_index_groups=None] c
        in (d,) }
      mesh=Mesh(axis_sizes=(2, 3), axis_names=('data', 'model'), axis_types=(Auto, Auto))
      out_names=({},)
      rewrite=False
    ] a
  in (b,) })",
                      {MakeArray(DType::kF32, {4}, {1, 2, 3, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(4, 6));
}

TEST(ShardMapTest, SingleEntryPartitionSpecKeepsItsTrailingComma) {
  // PartitionSpec's repr is its partitions tuple's: P('data',) for one entry.
  auto file = ParseJaxprText(R"({ lambda ; a:f32[4]. let
    b:f32[4] = shard_map[
      check_vma=False
      in_specs=(P('data',),)
      jaxpr={ lambda ; c:f32[2]. let  in (c,) }
      mesh=Mesh('data': 2)
      out_specs=(P('data', None),)
    ] a
  in (b,) })",
                             "<test>");
  ASSERT_TRUE(file.ok()) << file.status();
  const Params& params = file->main->eqns[0].params;
  EXPECT_EQ(params.Find("in_specs")->ToString(), "(P('data',),)");
  EXPECT_EQ(params.Find("out_specs")->ToString(), "(P('data', None),)");
}

TEST(ShardMapTest, OneDimSplitOverTwoAxesDataMajor) {
  // testdata/collectives/shard_map_two_axes_one_dim: x = iota(24) as 8x3,
  // rows split over (data, model), data major, so device (d, m) holds row
  // block k = 2d + m (rows 2k, 2k+1) and axis_index(('data', 'model')) = k.
  //   b = tiled all_gather over (data, model) = the blocks in k order = x;
  //   c = block k times (k + 1): c[0][0] = 0, c[2][0] = x[2][0] * 2 = 12,
  //       c[7][2] = x[7][2] * 4 = 23 * 4 = 92;
  //   d = sum of the 4 blocks: d[0][0] = 0 + 6 + 12 + 18 = 36,
  //       d[1][2] = 5 + 11 + 17 + 23 = 56.
  auto file =
      LoadBundle(std::string(JAX2ONNX_SOURCE_DIR) +
                 "/testdata/collectives/shard_map_two_axes_one_dim.jaxpr");
  ASSERT_TRUE(file.ok()) << file.status();
  auto out = Evaluate(file->jaxpr(), {}, {Iota({8, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles((*out)[0]), ToDoubles(Iota({8, 3})));
  const std::vector<double> c = ToDoubles((*out)[1]);
  EXPECT_EQ(c[0], 0);
  EXPECT_EQ(c[2 * 3], 12);
  EXPECT_EQ(c[7 * 3 + 2], 92);
  const std::vector<double> d = ToDoubles((*out)[2]);
  EXPECT_EQ(d[0], 36);
  EXPECT_EQ(d[1 * 3 + 2], 56);
}

TEST(ShardMapTest, PsumScatterTiledAndUntiled) {
  // testdata/collectives/shard_map_psum_scatter on x = iota(32) as 8x4 and
  // y = iota(16) as 8x2, two devices holding row blocks 0-3 and 4-7.
  //   Sum of blocks S[r][c] = (4r + c) + (4(r + 4) + c) = 8r + 2c + 16;
  //   tiled: device d keeps columns 2d, 2d+1 and out_specs P(None, 'data')
  //   puts them back, so c = S: c[0][0] = 16, c[3][3] = 24 + 6 + 16 = 46.
  //   S'[r][c] = (2r + c) + (2(r + 4) + c) = 4r + 2c + 8; untiled: device d
  //   keeps column d as a vector, P('data') concatenates: [8, 12, 16, 20,
  //   10, 14, 18, 22].
  auto file = LoadBundle(std::string(JAX2ONNX_SOURCE_DIR) +
                         "/testdata/collectives/shard_map_psum_scatter.jaxpr");
  ASSERT_TRUE(file.ok()) << file.status();
  auto out = Evaluate(file->jaxpr(), {}, {Iota({8, 4}), Iota({8, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> c = ToDoubles((*out)[0]);
  EXPECT_EQ(c[0], 16);
  EXPECT_EQ(c[15], 46);
  EXPECT_THAT(ToDoubles((*out)[1]), ElementsAre(8, 12, 16, 20, 10, 14, 18, 22));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
