// Runs every conformance bundle of the indexing groups (gather, scatter*,
// dynamic_slice, dynamic_update_slice and their interp_ variants) through
// the interpreter and compares with the JAX/XLA-computed expected outputs,
// using each bundle's header tolerances.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/io/compare.h"

namespace jax2onnx::jaxpr {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> BundlePaths(const std::string& group) {
  std::vector<std::string> paths;
  const fs::path dir = fs::path(JAX2ONNX_SHARED_DIR) / "vectors" / group;
  if (!fs::is_directory(dir)) return paths;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".jaxpr") {
      paths.push_back(entry.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// "" when the bundle's outputs match, else why not.
std::string RunBundle(const std::string& path) {
  auto bundle = LoadBundle(path);
  if (!bundle.ok()) return absl::StrCat("load: ", bundle.status().ToString());
  if (!bundle->has_inputs() || !bundle->has_expected()) {
    return "bundle has no inputs or expected outputs";
  }
  EvalOptions options;
  options.elided_literals = &bundle->literals;
  auto got = Evaluate(bundle->jaxpr(), bundle->consts, bundle->inputs, options);
  if (!got.ok()) return absl::StrCat("eval: ", got.status().ToString());
  if (got->size() != bundle->expected.size()) {
    return absl::StrCat("got ", got->size(), " outputs, expected ",
                        bundle->expected.size());
  }
  for (size_t i = 0; i < got->size(); ++i) {
    CompareResult r = CompareArrays(bundle->expected[i], (*got)[i],
                                    bundle->rtol, bundle->atol);
    if (!r.ok) return absl::StrCat("output ", i, ": ", r.Summary());
  }
  return "";
}

class IndexingVectorsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(IndexingVectorsTest, AllBundlesMatchJax) {
  const std::vector<std::string> paths = BundlePaths(GetParam());
  ASSERT_FALSE(paths.empty()) << "no bundles for group " << GetParam();
  std::vector<std::string> failures;
  for (const std::string& path : paths) {
    const std::string error = RunBundle(path);
    if (!error.empty()) {
      failures.push_back(
          absl::StrCat(fs::path(path).filename().string(), ": ", error));
    }
  }
  std::cout << "[vectors] " << GetParam() << ": "
            << paths.size() - failures.size() << "/" << paths.size()
            << " pass\n";
  EXPECT_TRUE(failures.empty()) << absl::StrJoin(failures, "\n");
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
