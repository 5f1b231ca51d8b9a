// Runs every conformance bundle of the elementwise groups (arithmetic, math,
// bitwise, comparisons, select_n, clamp, conversions and their interp_
// variants) through the interpreter and compares with the JAX/XLA-computed
// expected outputs, using each bundle's header tolerances.
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

class ElementwiseVectorsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ElementwiseVectorsTest, AllBundlesMatchJax) {
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
