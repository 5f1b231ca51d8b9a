// The migration rule of DESIGN.md §4: api::kDefaultPipeline is the IR
// pipeline exactly when the parity dashboard over testdata/ shows IR passing
// every case legacy passes. Its own binary (ctest parity_flip_rule) so it
// can read the parity.json the parity_dashboard ctest just wrote
// ($JAX2ONNX_PARITY_JSON) instead of running the corpus a second time;
// without that variable it computes the dashboard over testdata/ itself.
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "api/parity.h"
#include "api/router.h"
#include "gtest/gtest.h"

namespace jax2onnx::api {
namespace {

struct RuleInputs {
  int cases = 0;
  std::vector<std::string> legacy_only;  // legacy passes, IR does not
};

TEST(ParityFlipRuleTest, DefaultPipelineFollowsTheFlipRule) {
  RuleInputs in;
  const char* json_path = std::getenv("JAX2ONNX_PARITY_JSON");
  if (json_path != nullptr && *json_path != '\0') {
    std::ifstream file(json_path);
    if (!file) GTEST_SKIP() << "no dashboard at " << json_path;
    const nlohmann::json j = nlohmann::json::parse(file);
    ASSERT_EQ(j.at("schema"), "jax2onnx.parity/1");
    // The rule is over testdata/ (the checked-in vectors included, as
    // testdata/vectors/...); other arguments of the dashboard do not count.
    for (const auto& c : j.at("cases")) {
      const std::string name = c.at("name");
      if (!absl::StartsWith(name, "testdata/")) continue;
      ++in.cases;
      if (c.at("legacy").at("passed") == true &&
          c.at("ir").at("passed") == false) {
        in.legacy_only.push_back(name);
      }
    }
  } else {
    std::string reason;
    if (!OrtRunner::Shared().IsAvailable(&reason)) {
      GTEST_SKIP() << "ONNX Runtime unavailable: " << reason;
    }
    auto report = RunParity({std::string(JAX2ONNX_SOURCE_DIR) + "/testdata"},
                            ParityOptions(), OrtRunner::Shared());
    ASSERT_TRUE(report.ok()) << report.status();
    in.cases = static_cast<int>(report->cases.size());
    in.legacy_only = report->LegacyOnlyCases();
  }
  ASSERT_GT(in.cases, 0);
  const bool rule_holds = in.legacy_only.empty();
  const bool ir_default = kDefaultPipeline == Pipeline::kIr;
  EXPECT_EQ(ir_default, rule_holds)
      << in.cases << " testdata cases. "
      << (rule_holds
              ? "IR passes every case legacy passes: flip kDefaultPipeline to "
                "Pipeline::kIr in api/router.h"
              : "IR fails " + std::to_string(in.legacy_only.size()) +
                    " case(s) legacy passes, so the default must be legacy: " +
                    absl::StrJoin(in.legacy_only, ", "));
}

}  // namespace
}  // namespace jax2onnx::api
