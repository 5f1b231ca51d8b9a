// eig's type rule (jaxpr/typecheck/rules_decompositions.cc), after JAX's
// _eig_shape_rule / _eig_dtype_rule: w [..., n] plus vl / vr [..., n, n] as
// requested, all complex of the operand's precision (f32, c64 -> c64; f64,
// c128 -> c128).
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/typecheck/typecheck.h"

namespace jax2onnx::jaxpr::typecheck {
namespace {

using ::testing::HasSubstr;

absl::Status Check(const std::string& text) {
  auto file = ParseJaxprText(text, "t.jaxpr");
  if (!file.ok()) return file.status();
  return TypeCheckFile(*file);
}

std::string Eig(const std::string& results, const std::string& outs,
                const std::string& operand, bool left, bool right) {
  return "{ lambda ; a:" + operand + ". let\n    " + results +
         " = eig[compute_left_eigenvectors=" + (left ? "True" : "False") +
         " compute_right_eigenvectors=" + (right ? "True" : "False") +
         " enable_eigvec_derivs=False implementation=None] a\n  in (" + outs +
         ",) }";
}

TEST(EigRuleTest, ResultsAreComplexOfTheOperandsPrecision) {
  EXPECT_TRUE(Check(Eig("w:c64[3] vl:c64[3,3] vr:c64[3,3]", "w, vl, vr",
                        "f32[3,3]", true, true))
                  .ok());
  EXPECT_TRUE(Check(Eig("w:c128[2,4] vr:c128[2,4,4]", "w, vr", "f64[2,4,4]",
                        false, true))
                  .ok());
  EXPECT_TRUE(Check(Eig("w:c128[4]", "w", "c128[4,4]", false, false)).ok());
  EXPECT_TRUE(
      Check(Eig("w:c64[4] vl:c64[4,4]", "w, vl", "c64[4,4]", true, false))
          .ok());
  // JAX's older param name use_magma instead of enable_eigvec_derivs /
  // implementation.
  EXPECT_TRUE(Check("{ lambda ; a:f32[2,2]. let\n    w:c64[2] = "
                    "eig[compute_left_eigenvectors=False "
                    "compute_right_eigenvectors=False use_magma=None] a\n  "
                    "in (w,) }")
                  .ok());
}

TEST(EigRuleTest, WrongDeclarationsAreRefused) {
  // f64 gives c128, not c64.
  EXPECT_THAT(
      std::string(
          Check(Eig("w:c64[3]", "w", "f64[3,3]", false, false)).message()),
      HasSubstr("c128[3]"));
  // Two results declared where only w is requested.
  EXPECT_THAT(std::string(Check(Eig("w:c64[3] vr:c64[3,3]", "w, vr", "f32[3,3]",
                                    false, false))
                              .message()),
              HasSubstr("t.jaxpr:2:"));
  EXPECT_THAT(
      std::string(
          Check(Eig("w:c64[3]", "w", "f32[3,4]", false, false)).message()),
      HasSubstr("the input to eig must be a square matrix"));
  EXPECT_THAT(
      std::string(
          Check(Eig("w:c64[3]", "w", "i32[3,3]", false, false)).message()),
      HasSubstr("t.jaxpr:2:"));
}

}  // namespace
}  // namespace jax2onnx::jaxpr::typecheck
