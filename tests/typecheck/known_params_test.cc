// Unknown params and unknown fields of structured params are located type
// errors (issue 24): a param a newer JAX adds with a new meaning must not be
// dropped silently.
#include "jaxpr/typecheck/known_params.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/typecheck/typecheck.h"

namespace jax2onnx::jaxpr {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

absl::Status Check(const std::string& text) {
  auto file = ParseJaxprText(text, "t.jaxpr");
  if (!file.ok()) return file.status();
  return TypeCheckFile(*file);
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(KnownParamsTest, BogusParamIsALocatedErrorListingTheKnownParams) {
  const absl::Status s = Check(R"({ lambda ; a:f32[2,3]. let
    b:f32[2] = reduce_sum[axes=(1,) bogus=1] a
  in (b,) })");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(Message(s),
              StartsWith("t.jaxpr:2:5: error: 'reduce_sum': unknown param "
                         "'bogus' (known params: axes, out_sharding)"));
}

TEST(KnownParamsTest, TheSameProgramWithoutTheBogusParamPasses) {
  EXPECT_TRUE(Check(R"({ lambda ; a:f32[2,3]. let
    b:f32[2] = reduce_sum[axes=(1,) out_sharding=None] a
  in (b,) })")
                  .ok());
}

TEST(KnownParamsTest, ParamOfAPrimitiveWithNoParamsIsAnError) {
  const absl::Status s = Check(R"({ lambda ; a:f32[3]. let
    b:f32[3] = neg[mode=1] a
  in (b,) })");
  EXPECT_THAT(Message(s), HasSubstr("t.jaxpr:2:5: error: 'neg': unknown param "
                                    "'mode' (known params: none)"));
}

TEST(KnownParamsTest, PlacementParamsAreAcceptedOnEveryPrimitive) {
  // `sharding` places data and never changes a value (the allow-list).
  EXPECT_TRUE(Check(R"({ lambda ; a:f32[3]. let
    b:f32[3] = neg[sharding=None] a
  in (b,) })")
                  .ok());
}

constexpr char kGather[] = R"({ lambda ; a:f32[5,3] b:i32[4,1]. let
    c:f32[4,3] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=()FIELD)
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.CLIP
      slice_sizes=(1, 3)
      unique_indices=False
    ] a b
  in (c,) })";

std::string Gather(const std::string& extra_field) {
  std::string text = kGather;
  text.replace(text.find("FIELD"), 5, extra_field);
  return text;
}

TEST(KnownParamsTest, BogusGatherDimensionNumbersFieldIsALocatedError) {
  ASSERT_TRUE(Check(Gather("")).ok());
  const absl::Status s = Check(Gather(", bogus_dims=(1,)"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(
      Message(s),
      StartsWith("t.jaxpr:2:5: error: 'gather': unknown field 'bogus_dims' in "
                 "GatherDimensionNumbers(...) of param 'dimension_numbers' "
                 "(known fields: collapsed_slice_dims, offset_dims, "
                 "operand_batching_dims, start_index_map, "
                 "start_indices_batching_dims)"));
}

TEST(KnownParamsTest, BogusConvDimensionNumbersFieldIsAnError) {
  const absl::Status s = Check(R"({ lambda ; a:f32[1,1,4] b:f32[1,1,2]. let
    c:f32[1,1,3] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2), rhs_spec=(0, 1, 2), out_spec=(0, 1, 2), flipped=True)
      feature_group_count=1
      lhs_dilation=(1,)
      padding=((0, 0),)
      precision=None
      preferred_element_type=None
      rhs_dilation=(1,)
      window_strides=(1,)
    ] a b
  in (c,) })");
  EXPECT_THAT(Message(s),
              HasSubstr("'conv_general_dilated': unknown field 'flipped' in "
                        "ConvDimensionNumbers(...) of param "
                        "'dimension_numbers' (known fields: lhs_spec, "
                        "out_spec, rhs_spec)"));
}

TEST(KnownParamsTest, BogusParamInANestedJaxprNamesItsEnclosingEquation) {
  const absl::Status s = Check(R"({ lambda ; a:f32[3]. let
    b:f32[3] = pjit[
      name=f
      jaxpr={ lambda ; c:f32[3]. let d:f32[3] = exp[accuracy=None later=2] c in (d,) }
    ] a
  in (b,) })");
  EXPECT_THAT(Message(s), HasSubstr("'exp': unknown param 'later' (known "
                                    "params: accuracy) (in the jaxpr of "
                                    "'pjit' at t.jaxpr:2:5)"));
}

TEST(KnownParamsTest, EveryPrimitiveWithATypeRuleHasAKnownParamsEntry) {
  const std::vector<std::string> unchecked =
      typecheck::UncheckedParamPrimitives();
  for (const std::string& prim : TypeRulePrimitives()) {
    const bool skipped =
        std::find(unchecked.begin(), unchecked.end(), prim) != unchecked.end();
    EXPECT_TRUE(typecheck::KnownParams(prim) != nullptr || skipped)
        << "no known-params entry for '" << prim << "'";
    EXPECT_FALSE(typecheck::KnownParams(prim) != nullptr && skipped) << prim;
  }
}

}  // namespace
}  // namespace jax2onnx::jaxpr
