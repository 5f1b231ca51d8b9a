// Determinism (DESIGN.md §7): converting the same bundle twice with the same
// options gives byte-identical serialized models, for every testdata bundle
// and both pipelines. Each conversion loads the bundle afresh, so anything
// keyed by pointer values or hash order would show up as a difference.
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "api/convert_internal.h"
#include "api/corpus.h"
#include "gtest/gtest.h"
#include "ir/serde.h"

namespace jax2onnx::api {
namespace {

// The serialized model, or "error: message" when the conversion fails (a
// failure must be deterministic too).
std::string ConvertOnce(const std::string& path, Pipeline pipeline) {
  auto bundle = LoadBundle(path);
  if (!bundle.ok()) return "load error: " + bundle.status().ToString();
  auto model = ConvertWithPipeline(pipeline, *bundle, ConvertOptions{});
  if (!model.ok()) return "error: " + model.status().ToString();
  return ir::SerializeDeterministic(*model);
}

class DeterminismTest : public ::testing::TestWithParam<Pipeline> {};

TEST_P(DeterminismTest, EveryTestdataBundleConvertsToIdenticalBytes) {
  auto found = FindBundles({std::string(JAX2ONNX_SOURCE_DIR) + "/testdata"});
  ASSERT_TRUE(found.ok()) << found.status();
  // The corpus, not the conformance vectors (testdata/vectors): those are
  // single-primitive reference data already run by their own ctests.
  std::vector<std::string> corpus;
  for (const std::string& path : *found) {
    if (!absl::StartsWith(path, std::string(JAX2ONNX_VECTORS_DIR) + "/")) {
      corpus.push_back(path);
    }
  }
  const std::vector<std::string>* bundles = &corpus;
  ASSERT_FALSE(bundles->empty());
  int converted = 0;
  for (const std::string& path : *bundles) {
    const std::string first = ConvertOnce(path, GetParam());
    const std::string second = ConvertOnce(path, GetParam());
    EXPECT_TRUE(first == second)
        << path << ": two conversions differ (" << first.size() << " vs "
        << second.size() << " bytes)";
    if (first.rfind("error: ", 0) != 0 && first.rfind("load error", 0) != 0) {
      ++converted;
    }
  }
  // The bundled MLP example converts with both pipelines, so a zero here
  // means conversion is broken, not that there was nothing to compare.
  EXPECT_GT(converted, 0);
  std::printf("%d of %zu bundles converted (%s), all deterministic\n",
              converted, bundles->size(), PipelineName(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(BothPipelines, DeterminismTest,
                         ::testing::Values(Pipeline::kLegacy, Pipeline::kIr),
                         [](const auto& info) {
                           return std::string(PipelineName(info.param));
                         });

}  // namespace
}  // namespace jax2onnx::api
