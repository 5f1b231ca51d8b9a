// jaxpr/argument_shape_checks.h: the consistency checks jax.export puts
// before a function with symbolic argument shapes, built for a printed jaxpr
// that does not show them (golden text of the equations; the numeric side, ONNX
// Runtime refusing the shapes, is tests/stablehlo/shape_assertion_test.cc).
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

TEST(ArgumentShapeChecks, EveryDimASymbolNamesAgainMatchesItsFirst) {
  // b is read from a's dim 0 and n from d's dim 0; c's dim and d's dim 1
  // are checked against b, and e's 2*b against the value computed from b.
  const std::string a_message =
      "Input shapes do not match the polymorphic shapes specification. Found "
      "inconsistency between dimension size ";
  EXPECT_EQ(
      ChecksOf("{ lambda ; a:f32[b,4] c:f32[b] e:f32[2*b] d:f32[n,b]. let  in "
               "(a,) }"),
      "shape_check_0:i64[] = dimension_size[dimension=0] c\n"
      "shape_check_1:i64[] = dim_as_value[dim=b] \n"
      "shape_check_2:bool[] = eq shape_check_0 shape_check_1\n"
      "shape_assertion[\n"
      "  error_message=" +
          a_message +
          "args[1].shape[0] (= {0}) and the specification 'b' (= {1}).\n"
          "] shape_check_2 shape_check_0 shape_check_1\n"
          "shape_check_3:i64[] = dimension_size[dimension=0] e\n"
          "shape_check_4:i64[] = dim_as_value[dim=2*b] \n"
          "shape_check_5:bool[] = eq shape_check_3 shape_check_4\n"
          "shape_assertion[\n"
          "  error_message=" +
          a_message +
          "args[2].shape[0] (= {0}) and the specification '2*b' (= {1}).\n"
          "] shape_check_5 shape_check_3 shape_check_4\n"
          "shape_check_6:i64[] = dimension_size[dimension=1] d\n"
          "shape_check_7:i64[] = dim_as_value[dim=b] \n"
          "shape_check_8:bool[] = eq shape_check_6 shape_check_7\n"
          "shape_assertion[\n"
          "  error_message=" +
          a_message +
          "args[3].shape[1] (= {0}) and the specification 'b' (= {1}).\n"
          "] shape_check_8 shape_check_6 shape_check_7\n");
}

TEST(ArgumentShapeChecks, NoneForStaticShapesOrAProgramWithItsOwnChecks) {
  EXPECT_EQ(ChecksOf("{ lambda ; a:f32[3,4]. let  in (a,) }"), "none");
  // Each symbol once: nothing to compare (no `b >= 1` either: a jaxpr runs
  // at size 0).
  EXPECT_EQ(ChecksOf("{ lambda ; a:f32[b,n] c:f32[4]. let  in (a,) }"), "none");
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
