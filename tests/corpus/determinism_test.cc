// Determinism (DESIGN.md §7): converting the same bundle twice with the same
// options gives byte-identical serialized models, for every testdata bundle
// and both pipelines. Each conversion loads the bundle afresh, so anything
// keyed by pointer values or hash order would show up as a difference.
// The models converted here must also be ones ONNX Runtime loads and runs
// on the bundle's inputs (tests/ort_accepts.h). The corpus (corpus_legacy,
// corpus_ir) runs byte-identical models (same options; this test proves the
// bytes do not vary) on the same inputs and fails on a refusal, except for
// bundles whose `# opset:` header picks another opset and bundles it expects
// to fail (`*_xfail` markers). Those are gated here, plus every 16th bundle
// as a spot check of that equivalence: gating all ~2000 models would add
// ~80 s to a 6 s test for models the corpus already gates.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "api/check.h"
#include "api/convert_internal.h"
#include "api/corpus.h"
#include "gtest/gtest.h"
#include "ir/serde.h"
#include "tests/ort_accepts.h"

namespace jax2onnx::api {
namespace {

// True when the corpus does not run this exact model or accepts its
// failure (see above).
bool CorpusLeavesUngated(const Bundle& bundle) {
  const std::optional<std::string> opset = bundle.file.Header("opset");
  if (opset.has_value() && absl::StripAsciiWhitespace(*opset) !=
                               std::to_string(ConvertOptions{}.opset)) {
    return true;
  }
  const std::optional<std::string> markers = bundle.file.Header("markers");
  return markers.has_value() && absl::StrContains(*markers, "_xfail");
}

// The serialized model, or "error: message" when the conversion fails (a
// failure must be deterministic too). With `ort_status`, also whether ORT
// accepts the model on the bundle's inputs (untouched on a failure) when
// `spot_check` or the corpus leaves it ungated; `gated` counts those runs.
std::string ConvertOnce(const std::string& path, Pipeline pipeline,
                        absl::Status* ort_status = nullptr,
                        bool spot_check = false, int* gated = nullptr) {
  auto bundle = LoadBundle(path);
  if (!bundle.ok()) return "load error: " + bundle.status().ToString();
  auto model = ConvertWithPipeline(pipeline, *bundle, ConvertOptions{});
  if (!model.ok()) return "error: " + model.status().ToString();
  if (ort_status != nullptr && (spot_check || CorpusLeavesUngated(*bundle))) {
    ++*gated;
    auto inputs = InputsFor(*bundle, CheckOptions{});
    *ort_status = inputs.ok() ? ort_accepts::OrtAcceptsOn(*model, *inputs)
                              : inputs.status();
  }
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
  std::string reason;
  const bool have_ort = OrtRunner::Shared().IsAvailable(&reason);
  int converted = 0, gated = 0;
  for (size_t i = 0; i < bundles->size(); ++i) {
    const std::string& path = (*bundles)[i];
    absl::Status ort_status;
    const std::string first =
        ConvertOnce(path, GetParam(), have_ort ? &ort_status : nullptr,
                    i % 16 == 0, &gated);
    EXPECT_TRUE(ort_status.ok()) << path << ": " << ort_status;
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
  std::printf(
      "%d of %zu bundles converted (%s), all deterministic; %d run in ORT\n",
      converted, bundles->size(), PipelineName(GetParam()), gated);
}

INSTANTIATE_TEST_SUITE_P(BothPipelines, DeterminismTest,
                         ::testing::Values(Pipeline::kLegacy, Pipeline::kIr),
                         [](const auto& info) {
                           return std::string(PipelineName(info.param));
                         });

}  // namespace
}  // namespace jax2onnx::api
