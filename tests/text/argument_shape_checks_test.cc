// jaxpr/argument_shape_checks.h: the checks jax.export puts before a function
// with symbolic argument shapes, built for a printed jaxpr that does not show
// them (golden text of the equations; the numeric side, ONNX Runtime refusing
// the shapes, is tests/stablehlo/shape_assertion_test.cc).
#include "jaxpr/argument_shape_checks.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/text/printer.h"

namespace jax2onnx::jaxpr {
namespace {

std::string ChecksOf(const std::string& text) {
  auto file = ParseJaxprText(text);
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return "";
  std::unique_ptr<ClosedJaxpr> checks = ArgumentShapeChecks(*file->main);
  if (checks == nullptr) return "none";
  std::string out;
  for (const Eqn& eqn : checks->eqns) out += PrintEqn(eqn) + "\n";
  return out;
}

TEST(ArgumentShapeChecks, EachVariableAtLeastOneAndEveryOtherDimMatches) {
  // b is read from a's dim 0 and n from d's dim 0; c's dims are checked
  // against b, and 2*b against the value computed from b.
  EXPECT_EQ(
      ChecksOf("{ lambda ; a:f32[b,4] c:f32[b] e:f32[2*b] d:f32[n,b]. let  in "
               "(a,) }"),
      "shape_check_0:i64[] = dimension_size[dimension=0] a\n"
      "shape_check_1:bool[] = ge shape_check_0 1:i64[]\n"
      "shape_assertion[\n"
      "  error_message=Input shapes do not match the "
      "polymorphic shapes specification. Expected value >= 1 for dimension "
      "variable 'b'. Obtained dimension variables: 'b' = {0} from "
      "specification 'b' for dimension args[0].shape[0].\n"
      "] shape_check_1 "
      "shape_check_0\n"
      "shape_check_2:i64[] = dimension_size[dimension=0] d\n"
      "shape_check_3:bool[] = ge shape_check_2 1:i64[]\n"
      "shape_assertion[\n"
      "  error_message=Input shapes do not match the "
      "polymorphic shapes specification. Expected value >= 1 for dimension "
      "variable 'n'. Obtained dimension variables: 'n' = {0} from "
      "specification 'n' for dimension args[3].shape[0].\n"
      "] shape_check_3 "
      "shape_check_2\n"
      "shape_check_4:i64[] = dimension_size[dimension=0] c\n"
      "shape_check_5:i64[] = dim_as_value[dim=b] \n"
      "shape_check_6:bool[] = eq shape_check_4 shape_check_5\n"
      "shape_assertion[\n"
      "  error_message=Input shapes do not match the "
      "polymorphic shapes specification. Found inconsistency between "
      "dimension size args[1].shape[0] (= {0}) and the specification 'b' (= "
      "{1}).\n"
      "] shape_check_6 shape_check_4 shape_check_5\n"
      "shape_check_7:i64[] = dimension_size[dimension=0] e\n"
      "shape_check_8:i64[] = dim_as_value[dim=2*b] \n"
      "shape_check_9:bool[] = eq shape_check_7 shape_check_8\n"
      "shape_assertion[\n"
      "  error_message=Input shapes do not match the "
      "polymorphic shapes specification. Found inconsistency between "
      "dimension size args[2].shape[0] (= {0}) and the specification '2*b' "
      "(= {1}).\n"
      "] shape_check_9 shape_check_7 shape_check_8\n"
      "shape_check_10:i64[] = dimension_size[dimension=1] d\n"
      "shape_check_11:i64[] = dim_as_value[dim=b] \n"
      "shape_check_12:bool[] = eq shape_check_10 shape_check_11\n"
      "shape_assertion[\n"
      "  error_message=Input shapes do not match the "
      "polymorphic shapes specification. Found inconsistency between "
      "dimension size args[3].shape[1] (= {0}) and the specification 'b' (= "
      "{1}).\n"
      "] shape_check_12 shape_check_10 shape_check_11\n");
}

TEST(ArgumentShapeChecks, NoneForStaticShapesOrAProgramWithItsOwnChecks) {
  EXPECT_EQ(ChecksOf("{ lambda ; a:f32[3,4]. let  in (a,) }"), "none");
  // A symbol only inside an expression has no value to read: not checked.
  EXPECT_EQ(ChecksOf("{ lambda ; a:f32[2*b]. let  in (a,) }"), "none");
  EXPECT_EQ(ChecksOf(R"({ lambda ; a:f32[b]. let
    c:i32[] = dimension_size[dimension=0] a
    d:bool[] = ge c 1:i32[]
    shape_assertion[error_message=b >= 1] d c
  in (a,) })"),
            "none");
}

}  // namespace
}  // namespace jax2onnx::jaxpr
