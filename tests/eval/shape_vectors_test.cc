// Runs every conformance bundle of the shape, reduction and sort groups
// (broadcast_in_dim ... top_k, argmax/argmin, cumulative ops and their
// interp_ variants) through the interpreter and compares with the
// JAX/XLA-computed expected outputs, using each bundle's header tolerances.
#include <string>

#include "gtest/gtest.h"
#include "tests/eval/vector_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

class ShapeVectorsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ShapeVectorsTest, AllBundlesMatchJax) {
  testing::ExpectVectorGroupMatchesJax(GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Groups, ShapeVectorsTest,
    ::testing::Values("broadcast_in_dim", "concatenate", "pad", "reshape",
                      "rev", "slice", "squeeze", "transpose", "reduce_max",
                      "reduce_min", "reduce_prod", "reduce_sum", "argmax",
                      "argmin", "cumlogsumexp", "cummax", "cummin", "cumprod",
                      "cumsum", "sort", "top_k", "interp_broadcast_in_dim",
                      "interp_concatenate", "interp_iota", "interp_pad",
                      "interp_reduce", "interp_reshape", "interp_reverse",
                      "interp_slice", "interp_sort", "interp_transpose"),
    [](const ::testing::TestParamInfo<std::string>& info) {
      return info.param;
    });

}  // namespace
}  // namespace jax2onnx::jaxpr
