// Hand-derived tests of the interpreter's indexing kernels: gather (modes,
// fill defaults, start_index_map order, batching dims), the scatter family
// (duplicates, whole-window drop vs clamp, NaN in min/max, integer wrap,
// custom combiners), and the clamping of dynamic_slice and
// dynamic_update_slice. Each expected value is derived in a comment.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::jax2onnx::jaxpr::testing::EvalText;
using ::jax2onnx::jaxpr::testing::MakeArray;
using ::jax2onnx::jaxpr::testing::MakeIntArray;
using ::jax2onnx::jaxpr::testing::ToDoubles;
using ::jax2onnx::jaxpr::testing::ToInts;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsNan;

// A one-gather jaxpr `c = gather[...] a b`.
std::string GatherText(const std::string& operand, const std::string& indices,
                       const std::string& out, const std::string& dnums,
                       const std::string& slice_sizes, const std::string& mode,
                       const std::string& fill = "None") {
  return absl::StrCat("{ lambda ; a:", operand, " b:", indices,
                      ". let\n    c:", out, " = gather[\n",
                      "      dimension_numbers=GatherDimensionNumbers(", dnums,
                      ")\n      fill_value=", fill,
                      "\n      indices_are_sorted=False\n      mode=", mode,
                      "\n      slice_sizes=", slice_sizes,
                      "\n      unique_indices=False\n    ] a b\n  in (c,) }\n");
}

// A one-scatter jaxpr `d = PRIM[...] a b c` (operand, indices, updates).
std::string ScatterText(const std::string& prim, const std::string& operand,
                        const std::string& indices, const std::string& updates,
                        const std::string& dnums, const std::string& mode,
                        const std::string& update_jaxpr) {
  return absl::StrCat("{ lambda ; a:", operand, " b:", indices, " c:", updates,
                      ". let\n    d:", operand, " = ", prim, "[\n",
                      "      dimension_numbers=ScatterDimensionNumbers(", dnums,
                      ")\n      indices_are_sorted=False\n      mode=", mode,
                      "\n      unique_indices=False\n      update_consts=()",
                      "\n      update_jaxpr=", update_jaxpr,
                      "\n    ] a b c\n  in (d,) }\n");
}

std::string Combiner(const std::string& prim, const std::string& t) {
  return absl::StrCat("{ lambda ; e:", t, "[] f:", t, "[]. let g:", t,
                      "[] = ", prim, " e f in (g,) }");
}

constexpr char kRowGather[] =
    "offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), "
    "operand_batching_dims=(), start_indices_batching_dims=()";
// Windows of 3 consecutive elements of a vector.
constexpr char kWindowGather[] =
    "offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,), "
    "operand_batching_dims=(), start_indices_batching_dims=()";
constexpr char kElementScatter[] =
    "update_window_dims=(), inserted_window_dims=(0,), "
    "scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), "
    "scatter_indices_batching_dims=()";
constexpr char kWindowScatter[] =
    "update_window_dims=(1,), inserted_window_dims=(), "
    "scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), "
    "scatter_indices_batching_dims=()";

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(GatherTest, RowGatherPicksRowsInIndexOrder) {
  // operand rows: [0,1], [2,3], [4,5]; indices 2, 0 -> rows 2 then 0.
  auto out =
      EvalText(GatherText("f32[3,2]", "i32[2,1]", "f32[2,2]", kRowGather,
                          "(1, 2)", "GatherScatterMode.PROMISE_IN_BOUNDS"),
               {MakeArray(DType::kF32, {3, 2}, {0, 1, 2, 3, 4, 5}),
                MakeIntArray(DType::kI32, {2, 1}, {2, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(4, 5, 0, 1));
}

TEST(GatherTest, ClipClampsPartlyOutOfBoundsWindows) {
  // operand [10..14], window 3, valid starts [0, 5-3=2]:
  // start 3 -> 2 -> [12,13,14]; start -1 -> 0 -> [10,11,12]; 1 -> [11,12,13].
  auto out =
      EvalText(GatherText("f32[5]", "i32[3,1]", "f32[3,3]", kWindowGather,
                          "(3,)", "GatherScatterMode.CLIP"),
               {MakeArray(DType::kF32, {5}, {10, 11, 12, 13, 14}),
                MakeIntArray(DType::kI32, {3, 1}, {3, -1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]),
              ElementsAre(12, 13, 14, 10, 11, 12, 11, 12, 13));
}

TEST(GatherTest, PromiseInBoundsClampsLikeClip) {
  // Same derivation as the CLIP case: XLA clamps gather starts.
  auto out =
      EvalText(GatherText("f32[5]", "i32[2,1]", "f32[2,3]", kWindowGather,
                          "(3,)", "GatherScatterMode.PROMISE_IN_BOUNDS"),
               {MakeArray(DType::kF32, {5}, {10, 11, 12, 13, 14}),
                MakeIntArray(DType::kI32, {2, 1}, {3, -1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(12, 13, 14, 10, 11, 12));
}

TEST(GatherTest, FillOrDropFillsWholeWindowWithNaNByDefault) {
  // start 3 > 2: the window [3,6) is partly in bounds, yet all of it is
  // filled; start -1 likewise; start 1 is in bounds -> [11,12,13].
  auto out =
      EvalText(GatherText("f32[5]", "i32[3,1]", "f32[3,3]", kWindowGather,
                          "(3,)", "GatherScatterMode.FILL_OR_DROP"),
               {MakeArray(DType::kF32, {5}, {10, 11, 12, 13, 14}),
                MakeIntArray(DType::kI32, {3, 1}, {3, -1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]),
              ElementsAre(IsNan(), IsNan(), IsNan(), IsNan(), IsNan(), IsNan(),
                          11, 12, 13));
}

TEST(GatherTest, FillOrDropDefaultFillDependsOnDType) {
  // One out-of-bounds window (start 3 > 2) then an in-bounds one (start 0).
  const auto run = [](DType dtype, const std::string& t) {
    return EvalText(
        GatherText(absl::StrCat(t, "[5]"), "i32[2,1]", absl::StrCat(t, "[2,3]"),
                   kWindowGather, "(3,)", "GatherScatterMode.FILL_OR_DROP"),
        {MakeIntArray(dtype, {5}, {1, 0, 1, 0, 1}),
         MakeIntArray(DType::kI32, {2, 1}, {3, 0})});
  };
  auto i32 = run(DType::kI32, "i32");
  ASSERT_TRUE(i32.ok()) << i32.status();
  EXPECT_THAT(ToInts((*i32)[0]),
              ElementsAre(INT32_MIN, INT32_MIN, INT32_MIN, 1, 0, 1));
  auto u8 = run(DType::kU8, "u8");
  ASSERT_TRUE(u8.ok()) << u8.status();
  EXPECT_THAT(ToInts((*u8)[0]), ElementsAre(255, 255, 255, 1, 0, 1));
  auto b = run(DType::kBool, "bool");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT(ToInts((*b)[0]), ElementsAre(1, 1, 1, 1, 0, 1));
}

TEST(GatherTest, FillOrDropUsesExplicitFillValue) {
  auto out =
      EvalText(GatherText("f32[5]", "i32[2,1]", "f32[2,3]", kWindowGather,
                          "(3,)", "GatherScatterMode.FILL_OR_DROP", "-1.5"),
               {MakeArray(DType::kF32, {5}, {10, 11, 12, 13, 14}),
                MakeIntArray(DType::kI32, {2, 1}, {-1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(-1.5, -1.5, -1.5, 12, 13, 14));
}

TEST(GatherTest, FillOrDropTreatsHugeUnsignedIndexAsOutOfBounds) {
  // u32 4294967295 is far above 2; u32 2 is the last valid start.
  auto out =
      EvalText(GatherText("f32[5]", "u32[2,1]", "f32[2,3]", kWindowGather,
                          "(3,)", "GatherScatterMode.FILL_OR_DROP"),
               {MakeArray(DType::kF32, {5}, {10, 11, 12, 13, 14}),
                MakeIntArray(DType::kU32, {2, 1}, {4294967295LL, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]),
              ElementsAre(IsNan(), IsNan(), IsNan(), 12, 13, 14));
}

TEST(GatherTest, StartIndexMapReordersTheIndexVector) {
  // operand[r][c] = 10r + c. Index vector (1, 2) with start_index_map (1, 0)
  // means column start 1, row start 2: operand[2, 1:3] = [21, 22].
  auto out =
      EvalText(GatherText("f32[3,4]", "i32[1,2]", "f32[1,2]",
                          "offset_dims=(1,), collapsed_slice_dims=(0,), "
                          "start_index_map=(1, 0), operand_batching_dims=(), "
                          "start_indices_batching_dims=()",
                          "(1, 2)", "GatherScatterMode.PROMISE_IN_BOUNDS"),
               {MakeArray(DType::kF32, {3, 4},
                          {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23}),
                MakeIntArray(DType::kI32, {1, 2}, {1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(21, 22));
}

TEST(GatherTest, BatchingDimsSelectTheOperandBatch) {
  // take_along_axis: out[b, j] = operand[b, idx[b, j]].
  // b=0: row [0,1,2] at 2, 0 -> 2, 0; b=1: row [10,11,12] at 1, 1 -> 11, 11.
  auto out =
      EvalText(GatherText("f32[2,3]", "i32[2,2,1]", "f32[2,2]",
                          "offset_dims=(), collapsed_slice_dims=(1,), "
                          "start_index_map=(1,), operand_batching_dims=(0,), "
                          "start_indices_batching_dims=(0,)",
                          "(1, 1)", "GatherScatterMode.CLIP"),
               {MakeArray(DType::kF32, {2, 3}, {0, 1, 2, 10, 11, 12}),
                MakeIntArray(DType::kI32, {2, 2, 1}, {2, 0, 1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(2, 0, 11, 11));
}

TEST(GatherTest, AcceptsOldThreeFieldDimensionNumbersAndIntMode) {
  // JAX 0.4.30 prints no batching fields; mode 1 is GatherScatterMode.CLIP
  // (enum.auto() numbering), so start 7 clamps to 2 -> row [4, 5].
  auto out = EvalText(GatherText("f32[3,2]", "i64[1,1]", "f32[1,2]",
                                 "offset_dims=(1,), collapsed_slice_dims=(0,), "
                                 "start_index_map=(0,)",
                                 "(1, 2)", "1"),
                      {MakeArray(DType::kF32, {3, 2}, {0, 1, 2, 3, 4, 5}),
                       MakeIntArray(DType::kI64, {1, 1}, {7})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(4, 5));
}

TEST(GatherTest, OneHotModeIsAnErrorNamingTheMode) {
  auto out = EvalText(GatherText("f32[3,2]", "i32[1,1]", "f32[1,2]", kRowGather,
                                 "(1, 2)", "GatherScatterMode.ONE_HOT"),
                      {MakeArray(DType::kF32, {3, 2}, {0, 1, 2, 3, 4, 5}),
                       MakeIntArray(DType::kI32, {1, 1}, {0})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              ::testing::HasSubstr("ONE_HOT"));
}

TEST(ScatterTest, ScatterAddAccumulatesRepeatedIndices) {
  // [1,1,1,1]; +10 at 1, +20 at 3, +30 at 1 -> [1, 41, 1, 21].
  auto out =
      EvalText(ScatterText("scatter-add", "f32[4]", "i32[3,1]", "f32[3]",
                           kElementScatter, "GatherScatterMode.FILL_OR_DROP",
                           Combiner("add", "f32")),
               {MakeArray(DType::kF32, {4}, {1, 1, 1, 1}),
                MakeIntArray(DType::kI32, {3, 1}, {1, 3, 1}),
                MakeArray(DType::kF32, {3}, {10, 20, 30})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(1, 41, 1, 21));
}

TEST(ScatterTest, FillOrDropAndPromiseInBoundsDropPartlyOutOfBoundsWindow) {
  // operand [0..5], windows of 3, valid starts [0, 3]. Start 4 covers
  // [4,7): partly in bounds, so the whole window is dropped; start 0 writes
  // 20,21,22 -> [20, 21, 22, 3, 4, 5].
  for (const char* mode : {"GatherScatterMode.FILL_OR_DROP",
                           "GatherScatterMode.PROMISE_IN_BOUNDS"}) {
    auto out =
        EvalText(ScatterText("scatter", "f32[6]", "i32[2,1]", "f32[2,3]",
                             kWindowScatter, mode, "None"),
                 {MakeArray(DType::kF32, {6}, {0, 1, 2, 3, 4, 5}),
                  MakeIntArray(DType::kI32, {2, 1}, {4, 0}),
                  MakeArray(DType::kF32, {2, 3}, {10, 11, 12, 20, 21, 22})});
    ASSERT_TRUE(out.ok()) << mode << ": " << out.status();
    EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(20, 21, 22, 3, 4, 5)) << mode;
  }
}

TEST(ScatterTest, ClipClampsPartlyOutOfBoundsWindow) {
  // Start 4 clamps to 3 -> 10,11,12 at [3,6); start 0 -> 20,21,22 at [0,3).
  auto out =
      EvalText(ScatterText("scatter", "f32[6]", "i32[2,1]", "f32[2,3]",
                           kWindowScatter, "GatherScatterMode.CLIP", "None"),
               {MakeArray(DType::kF32, {6}, {0, 1, 2, 3, 4, 5}),
                MakeIntArray(DType::kI32, {2, 1}, {4, 0}),
                MakeArray(DType::kF32, {2, 3}, {10, 11, 12, 20, 21, 22})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(20, 21, 22, 10, 11, 12));
}

TEST(ScatterTest, NegativeStartIsDroppedOrClampedByMode) {
  // Window [1, 2] at start -1: dropped (FILL_OR_DROP), or clamped to 0.
  const auto run = [](const char* mode) {
    return EvalText(ScatterText("scatter-add", "f32[4]", "i32[1,1]", "f32[1,2]",
                                kWindowScatter, mode, Combiner("add", "f32")),
                    {MakeArray(DType::kF32, {4}, {0, 0, 0, 0}),
                     MakeIntArray(DType::kI32, {1, 1}, {-1}),
                     MakeArray(DType::kF32, {1, 2}, {1, 2})});
  };
  auto dropped = run("GatherScatterMode.FILL_OR_DROP");
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_THAT(ToDoubles((*dropped)[0]), ElementsAre(0, 0, 0, 0));
  auto clamped = run("GatherScatterMode.CLIP");
  ASSERT_TRUE(clamped.ok()) << clamped.status();
  EXPECT_THAT(ToDoubles((*clamped)[0]), ElementsAre(1, 2, 0, 0));
}

TEST(ScatterTest, MinAndMaxPropagateNaN) {
  // operand [1, NaN, 5]; updates NaN@0, 3@2, 2@1, 0@0.
  // max: 0: max(1,NaN)=NaN, max(NaN,0)=NaN; 1: max(NaN,2)=NaN; 2: max(5,3)=5.
  // min: 0: NaN; 1: NaN; 2: min(5,3)=3.
  const auto run = [](const std::string& prim, const std::string& op) {
    return EvalText(
        ScatterText(prim, "f32[3]", "i32[4,1]", "f32[4]", kElementScatter,
                    "GatherScatterMode.FILL_OR_DROP", Combiner(op, "f32")),
        {MakeArray(DType::kF32, {3}, {1, kNaN, 5}),
         MakeIntArray(DType::kI32, {4, 1}, {0, 2, 1, 0}),
         MakeArray(DType::kF32, {4}, {kNaN, 3, 2, 0})});
  };
  auto mx = run("scatter-max", "max");
  ASSERT_TRUE(mx.ok()) << mx.status();
  EXPECT_THAT(ToDoubles((*mx)[0]), ElementsAre(IsNan(), IsNan(), 5));
  auto mn = run("scatter-min", "min");
  ASSERT_TRUE(mn.ok()) << mn.status();
  EXPECT_THAT(ToDoubles((*mn)[0]), ElementsAre(IsNan(), IsNan(), 3));
}

TEST(ScatterTest, IntegerMinAndMax) {
  // [5, -3]; updates 7@0, -9@1, 2@0. max -> [7, -3]; min -> [2, -9].
  const auto run = [](const std::string& prim, const std::string& op) {
    return EvalText(
        ScatterText(prim, "i32[2]", "i32[3,1]", "i32[3]", kElementScatter,
                    "GatherScatterMode.FILL_OR_DROP", Combiner(op, "i32")),
        {MakeIntArray(DType::kI32, {2}, {5, -3}),
         MakeIntArray(DType::kI32, {3, 1}, {0, 1, 0}),
         MakeIntArray(DType::kI32, {3}, {7, -9, 2})});
  };
  auto mx = run("scatter-max", "max");
  ASSERT_TRUE(mx.ok()) << mx.status();
  EXPECT_THAT(ToInts((*mx)[0]), ElementsAre(7, -3));
  auto mn = run("scatter-min", "min");
  ASSERT_TRUE(mn.ok()) << mn.status();
  EXPECT_THAT(ToInts((*mn)[0]), ElementsAre(2, -9));
}

TEST(ScatterTest, ScatterMulMultipliesRepeatedIndices) {
  // [2,3,4]; *5 @0, *0.5 @0, *10 @2 -> [5, 3, 40].
  auto out =
      EvalText(ScatterText("scatter-mul", "f32[3]", "i32[3,1]", "f32[3]",
                           kElementScatter, "GatherScatterMode.FILL_OR_DROP",
                           Combiner("mul", "f32")),
               {MakeArray(DType::kF32, {3}, {2, 3, 4}),
                MakeIntArray(DType::kI32, {3, 1}, {0, 0, 2}),
                MakeArray(DType::kF32, {3}, {5, 0.5, 10})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(5, 3, 40));
}

TEST(ScatterTest, ScatterMulWrapsIntegers) {
  // i8: 100 * 3 = 300 = 256 + 44 -> 44.
  auto out = EvalText(
      ScatterText("scatter-mul", "i8[1]", "i32[1,1]", "i8[1]", kElementScatter,
                  "GatherScatterMode.FILL_OR_DROP", Combiner("mul", "i8")),
      {MakeIntArray(DType::kI8, {1}, {100}),
       MakeIntArray(DType::kI32, {1, 1}, {0}),
       MakeIntArray(DType::kI8, {1}, {3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(44));
}

TEST(ScatterTest, NonStandardUpdateJaxprIsCalled) {
  // Combiner g = f - e (update minus operand): 3 - 10 = -7 (a plain
  // scatter-sub would give 10 - 3 = 7).
  auto out = EvalText(
      ScatterText(
          "scatter-sub", "f32[1]", "i32[1,1]", "f32[1]", kElementScatter,
          "GatherScatterMode.FILL_OR_DROP",
          "{ lambda ; e:f32[] f:f32[]. let g:f32[] = sub f e in (g,) }"),
      {MakeArray(DType::kF32, {1}, {10}),
       MakeIntArray(DType::kI32, {1, 1}, {0}),
       MakeArray(DType::kF32, {1}, {3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(-7));
}

TEST(ScatterTest, ScatterApplyCombinerRunsOncePerUpdate) {
  // lax.scatter_apply binds plain `scatter` with update_jaxpr
  // `lambda x, _: f(x)`. f = neg applied at index 1 twice: -(-2) = 2; at
  // index 2 once: -3.
  auto out = EvalText(
      ScatterText("scatter", "f32[3]", "i32[3,1]", "f32[3]", kElementScatter,
                  "GatherScatterMode.FILL_OR_DROP",
                  "{ lambda ; e:f32[] f:f32[]. let g:f32[] = neg e in (g,) }"),
      {MakeArray(DType::kF32, {3}, {1, 2, 3}),
       MakeIntArray(DType::kI32, {3, 1}, {1, 2, 1}),
       MakeArray(DType::kF32, {3}, {0, 0, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(1, 2, -3));
}

TEST(ScatterTest, SharedCombinerReferenceIsResolved) {
  // The combiner hoisted as `let jaxpr = ...` (JAX caches it):
  // [1, 1]; +5 @0, +7 @0 -> [13, 1].
  auto out = EvalText(
      absl::StrCat("let jaxpr = ", Combiner("add", "f32"), " in\n",
                   ScatterText("scatter-add", "f32[2]", "i32[2,1]", "f32[2]",
                               kElementScatter,
                               "GatherScatterMode.FILL_OR_DROP", "jaxpr")),
      {MakeArray(DType::kF32, {2}, {1, 1}),
       MakeIntArray(DType::kI32, {2, 1}, {0, 0}),
       MakeArray(DType::kF32, {2}, {5, 7})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(13, 1));
}

TEST(ScatterTest, ScatterSubSubtractsUpdates) {
  // [10, 10]; -3 @1, -4 @1 -> [10, 3].
  auto out =
      EvalText(ScatterText("scatter-sub", "f32[2]", "i32[2,1]", "f32[2]",
                           kElementScatter, "GatherScatterMode.FILL_OR_DROP",
                           Combiner("sub", "f32")),
               {MakeArray(DType::kF32, {2}, {10, 10}),
                MakeIntArray(DType::kI32, {2, 1}, {1, 1}),
                MakeArray(DType::kF32, {2}, {3, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(10, 3));
}

TEST(ScatterTest, BatchingDimsScatterIntoTheirBatch) {
  // out[b, idx[b, j]] += upd[b, j]. b=0: idx 2, 2 -> out[0,2] = 1+2;
  // b=1: idx 0, 1 -> out[1,0] = 3, out[1,1] = 4.
  auto out = EvalText(
      ScatterText("scatter-add", "f32[2,3]", "i32[2,2,1]", "f32[2,2]",
                  "update_window_dims=(), inserted_window_dims=(1,), "
                  "scatter_dims_to_operand_dims=(1,), "
                  "operand_batching_dims=(0,), "
                  "scatter_indices_batching_dims=(0,)",
                  "GatherScatterMode.FILL_OR_DROP", Combiner("add", "f32")),
      {MakeArray(DType::kF32, {2, 3}, {0, 0, 0, 0, 0, 0}),
       MakeIntArray(DType::kI32, {2, 2, 1}, {2, 2, 0, 1}),
       MakeArray(DType::kF32, {2, 2}, {1, 2, 3, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(0, 0, 3, 3, 4, 0));
}

std::string DynamicSliceText(const std::string& operand,
                             const std::string& index_type,
                             const std::string& out,
                             const std::string& slice_sizes, int num_starts) {
  std::string binders, args;
  for (int i = 0; i < num_starts; ++i) {
    const char name = static_cast<char>('b' + i);
    absl::StrAppend(&binders, " ", std::string(1, name), ":", index_type, "[]");
    absl::StrAppend(&args, " ", std::string(1, name));
  }
  return absl::StrCat("{ lambda ; a:", operand, binders, ". let\n    z:", out,
                      " = dynamic_slice[slice_sizes=", slice_sizes, "] a", args,
                      "\n  in (z,) }\n");
}

TEST(DynamicSliceTest, ClampsSignedStarts) {
  // operand [0..4], size 2, valid starts [0, 3]: -3 -> 0, 4 -> 3, 2 -> 2.
  const std::vector<std::pair<int64_t, std::vector<int64_t>>> cases = {
      {-3, {0, 1}}, {4, {3, 4}}, {2, {2, 3}}};
  for (const auto& [start, expected] : cases) {
    auto out = EvalText(DynamicSliceText("i32[5]", "i32", "i32[2]", "(2,)", 1),
                        {MakeIntArray(DType::kI32, {5}, {0, 1, 2, 3, 4}),
                         MakeIntArray(DType::kI32, {}, {start})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(ToInts((*out)[0]), ElementsAreArray(expected)) << start;
  }
}

TEST(DynamicSliceTest, ClampsHugeUnsignedStarts) {
  // u32 4294967295 is not negative: it clamps high, to 3.
  auto out = EvalText(DynamicSliceText("i32[5]", "u32", "i32[2]", "(2,)", 1),
                      {MakeIntArray(DType::kI32, {5}, {0, 1, 2, 3, 4}),
                       MakeIntArray(DType::kU32, {}, {4294967295LL})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(3, 4));
}

TEST(DynamicSliceTest, ClampsEachDimSeparately) {
  // operand[r][c] = 10r + c, 3x3, sizes (2,2): starts (5, -1) -> (1, 0).
  auto out = EvalText(
      DynamicSliceText("f32[3,3]", "i64", "f32[2,2]", "(2, 2)", 2),
      {MakeArray(DType::kF32, {3, 3}, {0, 1, 2, 10, 11, 12, 20, 21, 22}),
       MakeIntArray(DType::kI64, {}, {5}),
       MakeIntArray(DType::kI64, {}, {-1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(10, 11, 20, 21));
}

TEST(DynamicUpdateSliceTest, ClampsStartsToKeepUpdateInside) {
  // operand zeros[5], update [7, 8], valid starts [0, 3]:
  // i32 4 -> 3; i32 -1 -> 0; u8 255 -> 3.
  const auto run = [](DType index_dtype, const std::string& t, int64_t start) {
    return EvalText(
        absl::StrCat("{ lambda ; a:f32[5] b:f32[2] c:", t,
                     "[]. let\n    d:f32[5] = dynamic_update_slice a b c\n"
                     "  in (d,) }\n"),
        {MakeArray(DType::kF32, {5}, {0, 0, 0, 0, 0}),
         MakeArray(DType::kF32, {2}, {7, 8}),
         MakeIntArray(index_dtype, {}, {start})});
  };
  auto high = run(DType::kI32, "i32", 4);
  ASSERT_TRUE(high.ok()) << high.status();
  EXPECT_THAT(ToDoubles((*high)[0]), ElementsAre(0, 0, 0, 7, 8));
  auto low = run(DType::kI32, "i32", -1);
  ASSERT_TRUE(low.ok()) << low.status();
  EXPECT_THAT(ToDoubles((*low)[0]), ElementsAre(7, 8, 0, 0, 0));
  auto u8 = run(DType::kU8, "u8", 255);
  ASSERT_TRUE(u8.ok()) << u8.status();
  EXPECT_THAT(ToDoubles((*u8)[0]), ElementsAre(0, 0, 0, 7, 8));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
