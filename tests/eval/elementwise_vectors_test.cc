// Runs every conformance bundle of the elementwise groups (arithmetic, math,
// bitwise, comparisons, select_n, clamp, conversions and their interp_
// variants) through the interpreter and compares with the JAX/XLA-computed
// expected outputs, using each bundle's header tolerances.
#include <string>

#include "gtest/gtest.h"
#include "tests/eval/vector_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

class ElementwiseVectorsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ElementwiseVectorsTest, AllBundlesMatchJax) {
  testing::ExpectVectorGroupMatchesJax(GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Groups, ElementwiseVectorsTest,
    ::testing::Values("abs", "acos", "acosh", "add", "add_any", "and", "asinh",
                      "atan", "atan2", "atanh", "cbrt", "ceil", "clamp",
                      "convert_element_type", "cos", "cosh", "digamma", "div",
                      "eq", "erf", "erfc", "exp", "floor", "ge", "gt",
                      "integer_pow", "le", "log", "log1p", "logistic", "lt",
                      "max", "min", "mul", "ne", "neg", "nextafter", "or",
                      "population_count", "pow", "rem", "round", "rsqrt",
                      "select_n", "shift_left", "shift_right_arithmetic",
                      "shift_right_logical", "sign", "sqrt", "sub", "xor",
                      "interp_clamp", "interp_select"),
    [](const ::testing::TestParamInfo<std::string>& info) {
      return info.param;
    });

}  // namespace
}  // namespace jax2onnx::jaxpr
