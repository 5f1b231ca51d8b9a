// `check` runs every example set a bundle records (input_i / expected_i,
// then input_i@K / expected_i@K; jaxpr/io/examples.h) and reports each.
// The bundle adds two f32[B] vectors; the examples and their expected
// values are exact f32 sums computed by hand:
//   example 0: [1, 2] + [0.5, 0.25]         = [1.5, 2.25]
//   example 1: [3, -1, 8] + [1, 1, 0.5]     = [4, 0, 8.5]   (B = 3)
//   example 2: [2] + [2] = [4], but expected_2 plants 5: a FAIL naming it.
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/examples.h"
#include "jaxpr/io/npy.h"
#include "nlohmann/json.hpp"
#include "tests/cli_fixture.h"

namespace jax2onnx::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

jaxpr::Array F32(const std::vector<double>& values) {
  jaxpr::Array a(jaxpr::DType::kF32, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) a.SetFromDouble(i, values[i]);
  return a;
}

class CheckExamplesTest : public testing_util::CliFixture {
 protected:
  CheckExamplesTest() : CliFixture("check_examples_test_") {}
  void TearDown() override { fs::remove_all(dir_); }

  std::string WriteBundle(const jaxpr::NamedArrays& arrays) {
    const std::string jaxpr = P("sum.jaxpr");
    std::ofstream(jaxpr) << "{ lambda ; a:f32[B] b:f32[B]. let\n"
                            "    c:f32[B] = add a b\n"
                            "  in (c,) }\n";
    const absl::Status written = jaxpr::WriteNpzFile(P("sum.npz"), arrays);
    EXPECT_TRUE(written.ok()) << written;
    return jaxpr;
  }

  jaxpr::NamedArrays Examples(double planted) {
    return {
        {"input_0", F32({1, 2})},         {"input_1", F32({0.5, 0.25})},
        {"expected_0", F32({1.5, 2.25})}, {"input_0@1", F32({3, -1, 8})},
        {"input_1@1", F32({1, 1, 0.5})},  {"expected_0@1", F32({4, 0, 8.5})},
        {"input_0@2", F32({2})},          {"input_1@2", F32({2})},
        {"expected_0@2", F32({planted})}};
  }

};

TEST(ExampleEntryNames, SplitOnlyTheDocumentedForm) {
  std::string base;
  int k = 0;
  EXPECT_TRUE(jaxpr::SplitExampleEntryName("input_0@1", &base, &k));
  EXPECT_EQ(base, "input_0");
  EXPECT_EQ(k, 1);
  EXPECT_TRUE(jaxpr::SplitExampleEntryName("expected_12@30", &base, &k));
  EXPECT_EQ(base, "expected_12");
  EXPECT_EQ(k, 30);
  for (const char* bad : {"input_0", "input_0@0", "input_0@01", "const_0@1",
                          "input_@1", "input_0@", "input_0@x", "x@1"}) {
    EXPECT_FALSE(jaxpr::SplitExampleEntryName(bad, &base, &k)) << bad;
  }
}

TEST(ExampleEntryNames, GroupByExampleAndRefuseGaps) {
  auto grouped = jaxpr::GroupMoreExamples({{"input_0", F32({1})},
                                           {"input_0@2", F32({2})},
                                           {"input_0@1", F32({3})},
                                           {"expected_0@1", F32({4})}},
                                          "x.npz");
  ASSERT_TRUE(grouped.ok()) << grouped.status();
  ASSERT_EQ(grouped->size(), 2u);
  ASSERT_EQ((*grouped)[0].size(), 2u);
  EXPECT_EQ((*grouped)[0][0].first, "input_0");
  EXPECT_EQ((*grouped)[0][0].second.GetAsDouble(0), 3);
  EXPECT_EQ((*grouped)[0][1].first, "expected_0");
  EXPECT_EQ((*grouped)[1][0].second.GetAsDouble(0), 2);

  auto gap = jaxpr::GroupMoreExamples({{"input_0@2", F32({2})}}, "x.npz");
  ASSERT_FALSE(gap.ok());
  EXPECT_THAT(gap.status().message(),
              HasSubstr("example 2 are present but example 1 has none"));
  auto bad = jaxpr::GroupMoreExamples({{"input_0@0", F32({2})}}, "x.npz");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("'input_0@0'"));
  // Other names stay extra data a bundle may carry.
  auto extra = jaxpr::GroupMoreExamples({{"notes@1", F32({2})}}, "x.npz");
  ASSERT_TRUE(extra.ok()) << extra.status();
  EXPECT_TRUE(extra->empty());
}

TEST_F(CheckExamplesTest, EveryExampleIsCheckedAndReported) {
  const std::string bundle = WriteBundle(Examples(/*planted=*/5));
  const auto r = RunCheck(bundle);
  if (CheckFoundNoOrt(r)) GTEST_SKIP() << "ONNX Runtime not installed: " << CheckErr();
  EXPECT_EQ(r.exit_code, 1) << r.output << CheckErr();
  EXPECT_THAT(r.output,
              HasSubstr(absl::StrCat("PASS ", bundle, " (example 0) [")));
  EXPECT_THAT(r.output,
              HasSubstr(absl::StrCat("PASS ", bundle, " (example 1) [")));
  EXPECT_THAT(r.output,
              HasSubstr(absl::StrCat("FAIL ", bundle, " (example 2) [")));
  EXPECT_THAT(r.output, HasSubstr("2 passed, 1 failed"));

  const auto json = RunCheck(absl::StrCat("--json ", bundle));
  const nlohmann::json doc = nlohmann::json::parse(json.output);
  ASSERT_EQ(doc.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(doc[k]["example"], k);
    EXPECT_EQ(doc[k]["oracle"], "expected");
    EXPECT_EQ(doc[k]["passed"], k < 2);
  }
  EXPECT_EQ(doc[1]["inputs"], "bundle example 1");
}

TEST_F(CheckExamplesTest, AllPassAndInputsOrSeedCheckOneSet) {
  const std::string bundle = WriteBundle(Examples(/*planted=*/4));
  const auto r = RunCheck(bundle);
  if (CheckFoundNoOrt(r)) GTEST_SKIP() << "ONNX Runtime not installed: " << CheckErr();
  EXPECT_EQ(r.exit_code, 0) << r.output << CheckErr();
  EXPECT_THAT(r.output, HasSubstr("3 passed, 0 failed"));
  // --seed chooses the inputs: one check, labelled as before.
  const auto seeded = RunCheck(absl::StrCat("--seed 3 ", bundle));
  EXPECT_EQ(seeded.exit_code, 0) << seeded.output << CheckErr();
  EXPECT_THAT(seeded.output, HasSubstr(absl::StrCat("PASS ", bundle, " [")));
  EXPECT_THAT(seeded.output, Not(HasSubstr("(example")));
  EXPECT_THAT(seeded.output, HasSubstr("1 passed, 0 failed"));
}

TEST_F(CheckExamplesTest, AModelFileIsCheckedOnEveryExampleToo) {
  const std::string bundle = WriteBundle(Examples(/*planted=*/5));
  const std::string model = P("sum.onnx");
  const auto converted = testing_util::RunShell(
      absl::StrCat(binary_, " convert -q ", bundle, " -o ", model, " 2>&1"));
  ASSERT_EQ(converted.exit_code, 0) << converted.output;
  const auto r = RunCheck(absl::StrCat(model, " ", bundle));
  if (CheckFoundNoOrt(r)) GTEST_SKIP() << "ONNX Runtime not installed: " << CheckErr();
  EXPECT_EQ(r.exit_code, 1) << r.output << CheckErr();
  EXPECT_THAT(r.output, HasSubstr(absl::StrCat("PASS ", bundle,
                                               " (example 0) [", model, "]")));
  EXPECT_THAT(r.output, HasSubstr(absl::StrCat("PASS ", bundle,
                                               " (example 1) [", model, "]")));
  EXPECT_THAT(r.output,
              HasSubstr(absl::StrCat("FAIL ", bundle, " (example 2) [", model,
                                     "] compare")));
  EXPECT_THAT(r.output, HasSubstr("2 passed, 1 failed"));
}

TEST_F(CheckExamplesTest, AnExampleThatDoesNotFitTheProgramFailsAtLoad) {
  jaxpr::NamedArrays arrays = Examples(/*planted=*/4);
  arrays.push_back({"input_0@3", F32({1, 2})});
  arrays.push_back({"input_1@3", F32({1, 2, 3})});  // B = 2 and B = 3
  const std::string bundle = WriteBundle(arrays);
  const auto r = RunCheck(bundle);
  if (CheckFoundNoOrt(r)) GTEST_SKIP() << "ONNX Runtime not installed: " << CheckErr();
  EXPECT_EQ(r.exit_code, 1) << r.output << CheckErr();
  EXPECT_THAT(r.output,
              HasSubstr(absl::StrCat("FAIL ", bundle, " (example 3) [")));
  EXPECT_THAT(r.output, HasSubstr("example 3"));
  EXPECT_THAT(r.output, HasSubstr("3 passed, 1 failed"));
}

}  // namespace
}  // namespace jax2onnx::cli
