// The type-propagation pass (ir/passes/type_propagation.cc) on small graphs
// stated as IR text: the types the pass gives are compared as printed text
// written by hand (values derived in comments) and each test also pins what
// the pass refuses (tests/ir/pass_test_util.h: verifier around the pass,
// cleanup after, ONNX Runtime accepts the model before and after).
#include <string>

#include "absl/strings/string_view.h"
#include "glog/logging.h"
#include "gtest/gtest.h"
#include "ir/ir.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::ParseIr;
using pass_test::RunPass;

// The value `name` that a node of the main graph outputs.
Value* Produced(const Model& m, absl::string_view name) {
  Value* found = nullptr;
  for (Node* n : m.graph().nodes()) {
    for (Value* v : n->outputs()) {
      if (v->name() == name) found = v;
    }
  }
  CHECK(found != nullptr) << "no node outputs %" << name;
  return found;
}

TEST(TypePropagationTest, TypesUntypedOutputsFromTheInputTypes) {
  // %mixed: B and C are different symbols, their broadcast is not
  // decidable. Graph outputs must be typed: typed Identities read the
  // values. (Cast's to=11 is DOUBLE.)
  Model m = ParseIr(R"(
    graph main(%x: f32[B,3], %y: f32[3], %z: f32[C,3])
        -> (%o1: bool[B,3], %o2: i64[2], %o3: f32[?,3]) {
      %add = Add(%x, %y)
      %less = Less(%add, %y)
      %cast = Cast(%add) {to=11}
      %t = Transpose(%cast) {perm=[1, 0]}
      %shape = Shape(%t)
      %mixed = Add(%x, %z)
      %o1: bool[B,3] = Identity(%less)
      %o2: i64[2] = Identity(%shape)
      %o3: f32[?,3] = Identity(%mixed)
    })");
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(Produced(m, "add")->type()->ToString(), "f32[B,3]");
  EXPECT_EQ(Produced(m, "less")->type()->ToString(), "bool[B,3]");
  EXPECT_EQ(Produced(m, "cast")->type()->ToString(), "f64[B,3]");
  EXPECT_EQ(Produced(m, "t")->type()->ToString(), "f64[3,B]");
  EXPECT_EQ(Produced(m, "shape")->type()->ToString(), "i64[2]");
  EXPECT_EQ(Produced(m, "mixed")->type(), nullptr);
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, CompletesConvMatMulAndReshapeShapes) {
  // %conv has a dtype-only type (what the conv lowering leaves): spatial
  // sizes floor((32 + 0 + 1 - 2*(3-1) - 1) / 2) + 1 = 15 and
  // floor((31 + 1 + 1 - 2*(3-1) - 1) / 2) + 1 = 15; channels = w's 8.
  // %valid: VALID and an unknown-size axis: 32 - 3 + 1 = 30 and ?.
  // %mm: [N,5,6] @ [6,4] -> [N,5,4]; %vec: [6,4] @ [4] (1-D rhs: its axis
  // is dropped) -> [6].
  // %rs: Reshape [N,5,4] by {0, -1, 2}: N copied, -1 not computable under
  // a symbol -> no type; %rt: of the static [6,4] by {0, -1, 2}: [6, 2, 2].
  // %wrong: a type that disagrees with the rule (dim 2 says 9): left as it
  // is. Graph outputs must be typed: dtype-only Identities read the values.
  Model m = ParseIr(R"(
    graph main(%x: f32[N,3,32,31], %w: f32[8,3,3,3], %v: f32[4],
               %a: f32[N,5,6], %b: f32[6,4], %w2: f32[4,8,3,3])
        -> (%conv_out: f32[*], %valid_out: f32[*], %vec_out: f32[*],
            %rs_out: f32[*], %rt_out: f32[*], %wrong_out: f32[*]) {
      init %target: i64[3] = i64[3]{0, -1, 2}
      %conv: f32[*] = Conv(%x, %w) {pads=[0, 1, 1, 1], strides=[2, 2],
                                    dilations=[2, 2]}
      %valid = Conv(%conv, %w2) {auto_pad="VALID"}
      %mm = MatMul(%a, %b)
      %vec = MatMul(%b, %v)
      %rs = Reshape(%mm, %target)
      %rt = Reshape(%b, %target)
      %wrong: f32[N,?,9] = Relu(%mm)
      %conv_out: f32[*] = Identity(%conv)
      %valid_out: f32[*] = Identity(%valid)
      %vec_out: f32[*] = Identity(%vec)
      %rs_out: f32[*] = Identity(%rs)
      %rt_out: f32[*] = Identity(%rt)
      %wrong_out: f32[*] = Identity(%wrong)
    })");
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(Produced(m, "conv")->type()->ToString(), "f32[N,8,15,15]");
  EXPECT_EQ(Produced(m, "valid")->type()->ToString(), "f32[N,4,13,13]");
  EXPECT_EQ(Produced(m, "mm")->type()->ToString(), "f32[N,5,4]");
  EXPECT_EQ(Produced(m, "vec")->type()->ToString(), "f32[6]");
  EXPECT_EQ(Produced(m, "rs")->type(), nullptr);
  EXPECT_EQ(Produced(m, "rt")->type()->ToString(), "f32[6,2,2]");
  EXPECT_EQ(Produced(m, "wrong")->type()->ToString(), "f32[N,?,9]");
  EXPECT_FALSE(RunPass("type-propagation", m));
}

// The rules below follow the ONNX operators' shape inference; each expected
// type is derived by hand in the comment above its graph. Graph outputs must
// be typed: a dtype-only Identity (`%name_out`) reads each value checked.

TEST(TypePropagationTest, GatherInsertsTheIndicesShapeAtItsAxis) {
  // %mid, axis 1: [B] + [2,3] + [7].
  // %last, axis -1 (2) with scalar indices: [B,5] + [] + [].
  // %first, default axis 0: [2,3] + [5,7].
  // %blind: data of unknown type (B vs C does not broadcast statically):
  // refused.
  Model m = ParseIr(R"(
    graph main(%data: f32[B,5,7], %idx: i64[2,3], %one: i64[],
               %y: f32[C,5,7])
        -> (%mid_out: f32[*], %last_out: f32[*], %first_out: f32[*],
            %blind_out: f32[*]) {
      %mid = Gather(%data, %idx) {axis=1}
      %last = Gather(%data, %one) {axis=-1}
      %first = Gather(%data, %idx)
      %mixed = Add(%data, %y)
      %blind = Gather(%mixed, %idx)
      %mid_out: f32[*] = Identity(%mid)
      %last_out: f32[*] = Identity(%last)
      %first_out: f32[*] = Identity(%first)
      %blind_out: f32[*] = Identity(%blind)
    })");
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(Produced(m, "mid")->type()->ToString(), "f32[B,2,3,7]");
  EXPECT_EQ(Produced(m, "last")->type()->ToString(), "f32[B,5]");
  EXPECT_EQ(Produced(m, "first")->type()->ToString(), "f32[2,3,5,7]");
  EXPECT_EQ(Produced(m, "blind")->type(), nullptr);
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, UnsqueezeInsertsOnesAtTheOutputAxes) {
  // %both: output rank 2 + 2 = 4; axes {0, -1} are {0, 3}: [1, B, 3, 1].
  // %inner: output rank 3; axis 1: [B, 1, 3].
  // %blind: axes known only at run time: refused.
  Model m = ParseIr(R"(
    graph main(%x: f32[B,3], %axes: i64[1])
        -> (%both_out: f32[*], %inner_out: f32[*], %blind_out: f32[*]) {
      init %ends: i64[2] = i64[2]{0, -1}
      init %one: i64[1] = i64[1]{1}
      %both = Unsqueeze(%x, %ends)
      %inner = Unsqueeze(%x, %one)
      %blind = Unsqueeze(%x, %axes)
      %both_out: f32[*] = Identity(%both)
      %inner_out: f32[*] = Identity(%inner)
      %blind_out: f32[*] = Identity(%blind)
    })");
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(Produced(m, "both")->type()->ToString(), "f32[1,B,3,1]");
  EXPECT_EQ(Produced(m, "inner")->type()->ToString(), "f32[B,1,3]");
  EXPECT_EQ(Produced(m, "blind")->type(), nullptr);
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, ConcatSumsTheAxisAndMergesTheOtherDims) {
  // %rows, axis 0: 2 + 3 + 0 = 5; dim 1 is B in all.
  // %cols, axis -1 (1): B + 4 is not static, so unknown; dim 0 is 2.
  // %merged, axis 1: 4 + 4 = 8; dim 0 merges S and 2: the static 2 (ONNX's
  // merge; the operands must agree at run time).
  // %blind: an operand of unknown type: refused.
  Model m = ParseIr(R"(
    graph main(%a: f32[2,B], %b: f32[3,B], %e: f32[0,B], %c: f32[2,4],
               %s: f32[S,4], %z: f32[2,C])
        -> (%rows_out: f32[*], %cols_out: f32[*], %merged_out: f32[*],
            %blind_out: f32[*]) {
      %rows = Concat(%a, %b, %e) {axis=0}
      %cols = Concat(%a, %c) {axis=-1}
      %merged = Concat(%s, %c) {axis=1}
      %mixed = Add(%a, %z)
      %blind = Concat(%a, %mixed) {axis=0}
      %rows_out: f32[*] = Identity(%rows)
      %cols_out: f32[*] = Identity(%cols)
      %merged_out: f32[*] = Identity(%merged)
      %blind_out: f32[*] = Identity(%blind)
    })");
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(Produced(m, "rows")->type()->ToString(), "f32[5,B]");
  EXPECT_EQ(Produced(m, "cols")->type()->ToString(), "f32[2,?]");
  EXPECT_EQ(Produced(m, "merged")->type()->ToString(), "f32[2,8]");
  EXPECT_EQ(Produced(m, "blind")->type(), nullptr);
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, RangeLengthFromConstantIntOperands) {
  // %up: 2, 5, 8: ceil((11 - 2) / 3) = 3.
  // %down: 10, 6, 2: ceil((1 - 10) / -4) = ceil(2.25) = 3.
  // %empty: limit below start with a positive delta:
  // max(ceil(-4 / 2), 0) = 0.
  // %narrow, int32: 0, 2, 4, 6: ceil(7 / 2) = 4, of start's dtype.
  // %floats: float operands: 1-D f32 whose length is left unknown (the
  // rule computes it from int operands only).
  Model m = ParseIr(R"(
    graph main()
        -> (%up_out: i64[*], %down_out: i64[*], %empty_out: i64[*],
            %narrow_out: i32[*], %floats_out: f32[*]) {
      init %s1: i64[] = i64[]{2}
      init %l1: i64[] = i64[]{11}
      init %d1: i64[] = i64[]{3}
      init %s2: i64[] = i64[]{10}
      init %l2: i64[] = i64[]{1}
      init %d2: i64[] = i64[]{-4}
      init %s3: i64[] = i64[]{5}
      init %l3: i64[] = i64[]{1}
      init %d3: i64[] = i64[]{2}
      init %s4: i32[] = i32[]{0}
      init %l4: i32[] = i32[]{7}
      init %d4: i32[] = i32[]{2}
      init %fs: f32[] = f32[]{0}
      init %fl: f32[] = f32[]{1}
      init %fd: f32[] = f32[]{0.25}
      %up = Range(%s1, %l1, %d1)
      %down = Range(%s2, %l2, %d2)
      %empty = Range(%s3, %l3, %d3)
      %narrow = Range(%s4, %l4, %d4)
      %floats = Range(%fs, %fl, %fd)
      %up_out: i64[*] = Identity(%up)
      %down_out: i64[*] = Identity(%down)
      %empty_out: i64[*] = Identity(%empty)
      %narrow_out: i32[*] = Identity(%narrow)
      %floats_out: f32[*] = Identity(%floats)
    })");
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(Produced(m, "up")->type()->ToString(), "i64[3]");
  EXPECT_EQ(Produced(m, "down")->type()->ToString(), "i64[3]");
  EXPECT_EQ(Produced(m, "empty")->type()->ToString(), "i64[0]");
  EXPECT_EQ(Produced(m, "narrow")->type()->ToString(), "i32[4]");
  EXPECT_EQ(Produced(m, "floats")->type()->ToString(), "f32[?]");
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, SliceClampsStartsAndEndsPerAxis) {
  // %inner, axis 0, [1, -1) = [1, 9): 8.
  // %back, axis 2 backwards by 2: start -1 -> 5, end INT64_MIN -> clamped
  // to -1; ceil((-1 - 5) / -2) = 3 (elements 5, 3, 1).
  // %clamped, no axes: starts/ends cover axes 0, 1. Axis 0: start 20 and
  // end 30 clamp to 10: 0. Axis 1 is symbolic: unknown.
  // %strided, axis -1 (2) by 3 from 0 to INT64_MAX (clamped to 6):
  // ceil(6 / 3) = 2.
  // %blind: starts known only at run time: refused.
  Model m = ParseIr(R"(
    graph main(%x: f32[10,B,6], %rs: i64[1])
        -> (%inner_out: f32[*], %back_out: f32[*], %clamped_out: f32[*],
            %strided_out: f32[*], %blind_out: f32[*]) {
      init %s1: i64[1] = i64[1]{1}
      init %e1: i64[1] = i64[1]{-1}
      init %a1: i64[1] = i64[1]{0}
      init %s2: i64[1] = i64[1]{-1}
      init %e2: i64[1] = i64[1]{-9223372036854775808}
      init %a2: i64[1] = i64[1]{2}
      init %st2: i64[1] = i64[1]{-2}
      init %s3: i64[2] = i64[2]{20, 0}
      init %e3: i64[2] = i64[2]{30, 2}
      init %s4: i64[1] = i64[1]{0}
      init %e4: i64[1] = i64[1]{9223372036854775807}
      init %a4: i64[1] = i64[1]{-1}
      init %st4: i64[1] = i64[1]{3}
      init %e5: i64[1] = i64[1]{2}
      init %a5: i64[1] = i64[1]{0}
      %inner = Slice(%x, %s1, %e1, %a1)
      %back = Slice(%x, %s2, %e2, %a2, %st2)
      %clamped = Slice(%x, %s3, %e3)
      %strided = Slice(%x, %s4, %e4, %a4, %st4)
      %blind = Slice(%x, %rs, %e5, %a5)
      %inner_out: f32[*] = Identity(%inner)
      %back_out: f32[*] = Identity(%back)
      %clamped_out: f32[*] = Identity(%clamped)
      %strided_out: f32[*] = Identity(%strided)
      %blind_out: f32[*] = Identity(%blind)
    })");
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(Produced(m, "inner")->type()->ToString(), "f32[8,B,6]");
  EXPECT_EQ(Produced(m, "back")->type()->ToString(), "f32[10,B,3]");
  EXPECT_EQ(Produced(m, "clamped")->type()->ToString(), "f32[0,?,6]");
  EXPECT_EQ(Produced(m, "strided")->type()->ToString(), "f32[10,B,2]");
  EXPECT_EQ(Produced(m, "blind")->type(), nullptr);
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, BitShiftBroadcastsLikeTheOtherBinaryOps) {
  // [B,4] and [4] broadcast to [B,4]; the dtype is x's.
  Model m = ParseIr(R"(
    graph main(%x: u32[B,4], %k: u32[4]) -> (%shl_out: u32[*]) {
      %shl = BitShift(%x, %k) {direction="LEFT"}
      %shl_out: u32[*] = Identity(%shl)
    })");
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(Produced(m, "shl")->type()->ToString(), "u32[B,4]");
  EXPECT_FALSE(RunPass("type-propagation", m));
}

}  // namespace
}  // namespace jax2onnx::ir
