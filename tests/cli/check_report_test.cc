// `check` reports what it measured: per output the max absolute and
// relative error over all elements and the tolerance used with its source,
// in -v text and in --json, and --rtol/--atol replace the bundle header.
// The bundle is written here with a planted difference in expected_i:
//   input_0 = [3, 1.5, 0.25], input_1 = [1, 0.5, 0.25], so add gives
//   [4, 2, 0.5] exactly in f32 (in ONNX Runtime too);
//   expected_0 = [4 + 2^-14, 2, 0.5 + 2^-16] (exact f32 values), hence
//   max_abs = 2^-14 = 6.1035e-05 and
//   max_rel = 2^-16 / (0.5 + 2^-16) = 3.0516e-05,
// within the header's rtol 1e-5, atol 1e-4.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/npy.h"
#include "nlohmann/json.hpp"
#include "tests/cli_fixture.h"

namespace jax2onnx::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const double kAbs = std::ldexp(1.0, -14);
const double kRel = std::ldexp(1.0, -16) / (0.5 + std::ldexp(1.0, -16));

jaxpr::Array F32(const std::vector<double>& values) {
  jaxpr::Array a(jaxpr::DType::kF32, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) a.SetFromDouble(i, values[i]);
  return a;
}

// `got` agrees with `want` to 2 significant digits.
void ExpectTwoDigits(double got, double want) {
  EXPECT_NEAR(got, want, 0.005 * std::fabs(want)) << "want " << want;
}

class CheckReportTest : public testing_util::CliFixture {
 protected:
  CheckReportTest() : CliFixture("check_report_test_") {}
  void TearDown() override { fs::remove_all(dir_); }

  std::string WriteBundle() {
    const std::string jaxpr = P("planted.jaxpr");
    std::ofstream(jaxpr) << "# rtol: 1e-05\n# atol: 0.0001\n"
                            "{ lambda ; a:f32[3] b:f32[3]. let\n"
                            "    c:f32[3] = add a b\n"
                            "  in (c,) }\n";
    const absl::Status written = jaxpr::WriteNpzFile(
        P("planted.npz"),
        {{"input_0", F32({3, 1.5, 0.25})},
         {"input_1", F32({1, 0.5, 0.25})},
         {"expected_0", F32({4 + kAbs, 2, 0.5 + std::ldexp(1.0, -16)})}});
    EXPECT_TRUE(written.ok()) << written;
    return jaxpr;
  }

};

TEST_F(CheckReportTest, VerboseTextReportsPlantedErrorsAndHeaderTolerance) {
  const testing_util::ShellResult r = RunCheck("-v " + WriteBundle());
  if (CheckFoundNoOrt(r)) GTEST_SKIP() << CheckErr();
  ASSERT_EQ(r.exit_code, 0) << r.output << CheckErr();
  std::smatch m;
  const std::regex line(
      R"(out_0: ok  max_abs=(\S+) max_rel=(\S+) \(rtol=(\S+) atol=(\S+) from header\))");
  ASSERT_TRUE(std::regex_search(r.output, m, line)) << r.output;
  ExpectTwoDigits(std::stod(m[1]), kAbs);
  ExpectTwoDigits(std::stod(m[2]), kRel);
  EXPECT_EQ(std::stod(m[3]), 1e-5);
  EXPECT_EQ(std::stod(m[4]), 1e-4);
}

TEST_F(CheckReportTest, JsonReportsPlantedErrorsAndHeaderTolerance) {
  const testing_util::ShellResult r = RunCheck("--json " + WriteBundle());
  if (CheckFoundNoOrt(r)) GTEST_SKIP() << CheckErr();
  ASSERT_EQ(r.exit_code, 0) << r.output << CheckErr();
  const nlohmann::json doc = nlohmann::json::parse(r.output);
  ASSERT_EQ(doc.size(), 1u);
  const nlohmann::json& out = doc[0]["outputs"][0];
  EXPECT_EQ(out["ok"], true);
  ExpectTwoDigits(out["max_abs_error"].get<double>(), kAbs);
  ExpectTwoDigits(out["max_rel_error"].get<double>(), kRel);
  EXPECT_EQ(out["rtol"].get<double>(), 1e-5);
  EXPECT_EQ(out["atol"].get<double>(), 1e-4);
  EXPECT_EQ(out["tolerance_source"], "header");
}

TEST_F(CheckReportTest, ToleranceFlagsReplaceTheHeader) {
  const std::string bundle = WriteBundle();
  // --atol 1e-5 with the header's rtol 1e-5 allows 1e-5 + 4e-5 at [0],
  // less than the planted 2^-14: FAIL, with the same measured errors.
  testing_util::ShellResult r = RunCheck("--json --atol=1e-5 " + bundle);
  if (CheckFoundNoOrt(r)) GTEST_SKIP() << CheckErr();
  EXPECT_EQ(r.exit_code, 1) << r.output << CheckErr();
  nlohmann::json out = nlohmann::json::parse(r.output)[0]["outputs"][0];
  EXPECT_EQ(out["ok"], false);
  ExpectTwoDigits(out["max_abs_error"].get<double>(), kAbs);
  EXPECT_EQ(out["atol"].get<double>(), 1e-5);
  EXPECT_EQ(out["rtol"].get<double>(), 1e-5);
  EXPECT_EQ(out["tolerance_source"], "rtol header, atol flag");

  r = RunCheck("-v --rtol=0 --atol=0.001 " + bundle);
  EXPECT_EQ(r.exit_code, 0) << r.output << CheckErr();
  EXPECT_THAT(r.output, HasSubstr("(rtol=0 atol=0.001 from flag)"));
}

// --inputs F.npz: F's input_i are used and F's expected_i are the oracle.
// F: input_0 = [8, 1, -0.5], input_1 = [0, 1, 0.25], so add gives
// [8, 2, -0.25]; F's expected_0 = [8 + 2^-14, 2, -0.25]: max_abs = 2^-14,
// max_rel = 2^-14 / (8 + 2^-14), within the header's atol 1e-4 (the
// bundle's own inputs would give 4 at [0], an error of 4).
TEST_F(CheckReportTest, InputsNpzReplacesInputsAndExpected) {
  const std::string bundle = WriteBundle();
  const double planted = std::ldexp(1.0, -14);
  ASSERT_TRUE(jaxpr::WriteNpzFile(
                  P("f.npz"), {{"input_0", F32({8, 1, -0.5})},
                               {"input_1", F32({0, 1, 0.25})},
                               {"expected_0", F32({8 + planted, 2, -0.25})}})
                  .ok());
  testing_util::ShellResult r =
      RunCheck(absl::StrCat("--json --inputs ", P("f.npz"), " ", bundle));
  if (CheckFoundNoOrt(r)) GTEST_SKIP() << CheckErr();
  ASSERT_EQ(r.exit_code, 0) << r.output << CheckErr();
  nlohmann::json doc = nlohmann::json::parse(r.output);
  EXPECT_EQ(doc[0]["inputs"], P("f.npz"));
  EXPECT_EQ(doc[0]["oracle"], "expected");
  ExpectTwoDigits(doc[0]["outputs"][0]["max_abs_error"].get<double>(), planted);
  ExpectTwoDigits(doc[0]["outputs"][0]["max_rel_error"].get<double>(),
                  planted / (8 + planted));
  // Without expected_i in F the interpreter is the oracle: add is exact.
  ASSERT_TRUE(jaxpr::WriteNpzFile(P("g.npz"), {{"input_0", F32({8, 1, -0.5})},
                                               {"input_1", F32({0, 1, 0.25})}})
                  .ok());
  r = RunCheck(absl::StrCat("-v --inputs ", P("g.npz"), " ", bundle));
  ASSERT_EQ(r.exit_code, 0) << r.output << CheckErr();
  EXPECT_THAT(r.output, HasSubstr(absl::StrCat("inputs ", P("g.npz"),
                                               ", oracle interpreter")));
  EXPECT_THAT(r.output, HasSubstr("max_abs=0 max_rel=0"));
}

TEST_F(CheckReportTest, SeedTakesRandomInputsAndTheInterpreter) {
  const testing_util::ShellResult r = RunCheck("--json --seed 3 " + WriteBundle());
  if (CheckFoundNoOrt(r)) GTEST_SKIP() << CheckErr();
  ASSERT_EQ(r.exit_code, 0) << r.output << CheckErr();
  const nlohmann::json doc = nlohmann::json::parse(r.output);
  EXPECT_EQ(doc[0]["inputs"], "random (seed 3)");
  EXPECT_EQ(doc[0]["oracle"], "interpreter");
  // f32 add is correctly rounded in both: exactly equal.
  EXPECT_EQ(doc[0]["outputs"][0]["max_abs_error"].get<double>(), 0.0);
}

TEST_F(CheckReportTest, MissingInputsFileIsAUsageErrorNamingTheFlag) {
  const testing_util::ShellResult r =
      RunCheck(absl::StrCat("--inputs ", P("none.npz"), " ", WriteBundle()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(CheckErr(), HasSubstr("jax2onnx check: --inputs: no such file"));
}

TEST_F(CheckReportTest, NegativeToleranceIsAUsageErrorNamingTheFlag) {
  const testing_util::ShellResult r = RunCheck("--rtol=-1 " + WriteBundle());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(CheckErr(), HasSubstr("--rtol"));
}

}  // namespace
}  // namespace jax2onnx::cli
