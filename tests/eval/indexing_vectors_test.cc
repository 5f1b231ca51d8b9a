// Runs every conformance bundle of the indexing groups (gather, scatter*,
// dynamic_slice, dynamic_update_slice and their interp_ variants) through
// the interpreter and compares with the JAX/XLA-computed expected outputs,
// using each bundle's header tolerances.
#include <string>

#include "gtest/gtest.h"
#include "tests/eval/vector_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

class IndexingVectorsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(IndexingVectorsTest, AllBundlesMatchJax) {
  testing::ExpectVectorGroupMatchesJax(GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Groups, IndexingVectorsTest,
    ::testing::Values("gather", "scatter", "scatter_add", "scatter_max",
                      "scatter_min", "scatter_mul", "dynamic_slice",
                      "dynamic_update_slice", "interp_gather", "interp_scatter",
                      "interp_dynamic_slice", "interp_dynamic_update_slice"),
    [](const ::testing::TestParamInfo<std::string>& info) {
      return info.param;
    });

}  // namespace
}  // namespace jax2onnx::jaxpr
