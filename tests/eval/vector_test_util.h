// Runs the testdata/vectors conformance bundles of one group through the
// interpreter and compares with their JAX/XLA-computed expected outputs, using
// each bundle's header tolerances. Shared by the *_vectors_test.cc files.
#ifndef JAX2ONNX_TESTS_EVAL_VECTOR_TEST_UTIL_H_
#define JAX2ONNX_TESTS_EVAL_VECTOR_TEST_UTIL_H_

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

namespace jax2onnx::jaxpr::testing {

// The group's .jaxpr bundles, sorted; empty when the group is absent.
inline std::vector<std::string> VectorBundlePaths(const std::string& group) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  const fs::path dir = fs::path(JAX2ONNX_VECTORS_DIR) / group;
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
inline std::string EvaluateVectorBundle(const std::string& path) {
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

// Fails the current test with every mismatching bundle of `group` (and when
// the group has no bundles at all); prints "[vectors] group: N/M pass".
inline void ExpectVectorGroupMatchesJax(const std::string& group) {
  const std::vector<std::string> paths = VectorBundlePaths(group);
  ASSERT_FALSE(paths.empty()) << "no bundles for group " << group;
  std::vector<std::string> failures;
  for (const std::string& path : paths) {
    const std::string error = EvaluateVectorBundle(path);
    if (!error.empty()) {
      failures.push_back(absl::StrCat(
          std::filesystem::path(path).filename().string(), ": ", error));
    }
  }
  std::cout << "[vectors] " << group << ": " << paths.size() - failures.size()
            << "/" << paths.size() << " pass\n";
  EXPECT_TRUE(failures.empty()) << absl::StrJoin(failures, "\n");
}

}  // namespace jax2onnx::jaxpr::testing

#endif  // JAX2ONNX_TESTS_EVAL_VECTOR_TEST_UTIL_H_
