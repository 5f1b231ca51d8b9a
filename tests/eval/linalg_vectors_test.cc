// Runs every conformance bundle of the dot, convolution and window groups
// (dot_general, conv_general_dilated, reduce_window_* and their interp_
// variants) through the interpreter and compares with the JAX/XLA-computed
// expected outputs, using each bundle's header tolerances.
#include <string>

#include "gtest/gtest.h"
#include "tests/eval/vector_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

class LinalgVectorsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LinalgVectorsTest, AllBundlesMatchJax) {
  testing::ExpectVectorGroupMatchesJax(GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Groups, LinalgVectorsTest,
    ::testing::Values("dot_general", "conv_general_dilated",
                      "reduce_window_add", "reduce_window_max",
                      "reduce_window_min", "interp_convolution",
                      "interp_dot_general", "interp_reduce_window"),
    [](const ::testing::TestParamInfo<std::string>& info) {
      return info.param;
    });

}  // namespace
}  // namespace jax2onnx::jaxpr
