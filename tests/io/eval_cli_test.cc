// End-to-end tests of `jax2onnx eval`: runs the built binary on small
// bundles written here (hand-computed values) and checks its output lines,
// --out/--inputs files, exit codes and the conformance policy flags.
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/npy.h"
#include "tests/cli_fixture.h"

namespace jax2onnx::jaxpr {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kAdd[] = R"({ lambda ; a:f32[2] b:f32[2]. let
    c:f32[2] = add a b
  in (c,) }
)";

Array F32(std::vector<double> values) {
  Array a(DType::kF32, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) a.SetFromDouble(i, values[i]);
  return a;
}

struct RunResult {
  int exit_code = -1;
  std::string output;
  std::string last_line;
};

class EvalCliTest : public testing_util::CliFixture {
 protected:
  EvalCliTest() : CliFixture("eval_cli_test_") {}
  void SetUp() override {
    CliFixture::SetUp();
    if (IsSkipped()) return;
    fs::create_directories(dir_ / "g");
    // 1+3 = 4, 2+4 = 6: `good` expects that, `bad` expects 7 at index 1.
    WriteBundle("g/good", {{"input_0", F32({1, 2})},
                           {"input_1", F32({3, 4})},
                           {"expected_0", F32({4, 6})}});
    WriteBundle("g/bad", {{"input_0", F32({1, 2})},
                          {"input_1", F32({3, 4})},
                          {"expected_0", F32({4, 7})}});
  }
  void WriteBundle(const std::string& stem, const NamedArrays& arrays) {
    std::ofstream((dir_ / (stem + ".jaxpr")).string()) << kAdd;
    ASSERT_TRUE(WriteNpzFile((dir_ / (stem + ".npz")).string(), arrays).ok());
  }
  RunResult Run(const std::string& args) {
    testing_util::ShellResult shell =
        testing_util::RunShell(absl::StrCat(binary_, " eval ", args, " 2>&1"));
    RunResult r;
    r.exit_code = shell.exit_code;
    r.output = std::move(shell.output);
    std::vector<std::string> lines =
        absl::StrSplit(r.output, '\n', absl::SkipEmpty());
    if (!lines.empty()) r.last_line = lines.back();
    return r;
  }
};

TEST_F(EvalCliTest, CompareReportsPassFailWorstElementAndSummary) {
  const RunResult r = Run("--compare " + P(""));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // Directory bundles are sorted: g/bad before g/good.
  EXPECT_THAT(r.output, HasSubstr("FAIL g/bad.jaxpr: out_0: 1 of 2 elements "
                                  "differ; worst at [1]: got 6, expected 7"));
  EXPECT_THAT(r.output, HasSubstr("PASS g/good.jaxpr"));
  EXPECT_LT(r.output.find("g/bad.jaxpr"), r.output.find("g/good.jaxpr"));
  EXPECT_EQ(r.last_line, "1 passed, 1 failed");
  const RunResult one = Run("--compare " + P("g/good.jaxpr"));
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(one.last_line, "1 passed, 0 failed");
  // Isolated children give the same verdicts.
  const RunResult iso = Run("--compare --isolate " + P(""));
  EXPECT_EQ(iso.exit_code, 1) << iso.output;
  EXPECT_THAT(iso.output, HasSubstr("worst at [1]: got 6, expected 7"));
  EXPECT_EQ(iso.last_line, "1 passed, 1 failed");
}

TEST_F(EvalCliTest, OutAndInputsFiles) {
  const RunResult r = Run(P("g/good.jaxpr") + " --out " + P("out.npz"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto out = ReadNpzFile(P("out.npz"));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].first, "out_0");
  EXPECT_EQ((*out)[0].second, F32({4, 6}));
  // Other inputs: 10+0.5 = 10.5, -1+1 = 0.
  ASSERT_TRUE(WriteNpzFile(P("in.npz"), {{"input_0", F32({10, -1})},
                                         {"input_1", F32({0.5, 1})}})
                  .ok());
  const RunResult r2 = Run(P("g/good.jaxpr") + " --inputs " + P("in.npz") +
                           " --out " + P("out2.npz"));
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  EXPECT_EQ((*ReadNpzFile(P("out2.npz")))[0].second, F32({10.5, 0}));
  // Printing without --out shows the values.
  const RunResult r3 = Run(P("g/good.jaxpr"));
  EXPECT_THAT(r3.output, HasSubstr("out_0: f32[2] = [4, 6]"));
  // --out with several bundles is a usage error.
  EXPECT_EQ(Run(P("") + " --out " + P("x.npz")).exit_code, 2);
}

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Issue 24: `eval B.jaxpr --out B.npz` replaced the bundle's npz (consts,
// inputs, expected) with one holding only out_0, and --out B.jaxpr the
// program. --out never replaces an input: refused before evaluating, both
// files byte for byte unchanged, nothing written.
TEST_F(EvalCliTest, OutRefusesTheBundlesOwnFilesAndInputs) {
  const std::string npz_before = FileBytes(P("g/good.npz"));
  const std::string jaxpr_before = FileBytes(P("g/good.jaxpr"));
  for (const std::string& target :
       {P("g/good.npz"), P("g/good.jaxpr"), P("g/../g/good.npz")}) {
    const RunResult r = Run(P("g/good.jaxpr") + " --out " + target);
    EXPECT_EQ(r.exit_code, 2) << target << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("it is the input")) << r.output;
  }
  // A hard link to the npz is the same file (same inode).
  fs::create_hard_link(P("g/good.npz"), P("link.npz"));
  EXPECT_EQ(Run(P("g/good.jaxpr") + " --out " + P("link.npz")).exit_code, 2);
  // --inputs is protected too.
  ASSERT_TRUE(WriteNpzFile(P("in.npz"), {{"input_0", F32({1, 1})},
                                         {"input_1", F32({2, 2})}})
                  .ok());
  const std::string in_before = FileBytes(P("in.npz"));
  EXPECT_EQ(Run(P("g/good.jaxpr") + " --inputs " + P("in.npz") + " --out " +
                P("in.npz"))
                .exit_code,
            2);
  EXPECT_EQ(FileBytes(P("in.npz")), in_before);
  EXPECT_EQ(FileBytes(P("g/good.npz")), npz_before);
  EXPECT_EQ(FileBytes(P("g/good.jaxpr")), jaxpr_before);
}

TEST_F(EvalCliTest, OutRefusesFifosAndDirectories) {
  ASSERT_EQ(::mkfifo(P("fifo").c_str(), 0644), 0);
  const RunResult fifo = Run(P("g/good.jaxpr") + " --out " + P("fifo"));
  EXPECT_EQ(fifo.exit_code, 2) << fifo.output;
  EXPECT_THAT(fifo.output, HasSubstr("not a regular file"));
  EXPECT_TRUE(fs::is_fifo(P("fifo")));  // still the FIFO
  const RunResult dir = Run(P("g/good.jaxpr") + " --out " + P("g"));
  EXPECT_EQ(dir.exit_code, 2) << dir.output;
  EXPECT_THAT(dir.output, HasSubstr("is a directory"));
}

TEST_F(EvalCliTest, MissingPathIsReportedAsNotExisting) {
  const RunResult r = Run("--compare " + P("nothing_here"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("does not exist"));
}

TEST_F(EvalCliTest, PolicyAcceptsListedFailuresAboveThePassRate) {
  std::ofstream(P("known.txt")) << "# comment\n"
                                << "g/bad.jaxpr: expected_0 was edited\n";
  const RunResult ok =
      Run("--compare --min_pass_rate=0.5 --known_failures=" + P("known.txt") +
          " " + P(""));
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_THAT(ok.output, HasSubstr("policy: OK"));
  EXPECT_EQ(ok.last_line, "1 passed, 1 failed");
  // 50% < 60%.
  const RunResult rate =
      Run("--compare --min_pass_rate=0.6 --known_failures=" + P("known.txt") +
          " " + P(""));
  EXPECT_EQ(rate.exit_code, 1) << rate.output;
  EXPECT_THAT(rate.output, HasSubstr("pass rate 50.00% is below"));
  // A must-pass group rejects even listed failures.
  const RunResult group =
      Run("--compare --must_pass_groups=x,g* "
          "--known_failures=" +
          P("known.txt") + " " + P(""));
  EXPECT_EQ(group.exit_code, 1) << group.output;
  EXPECT_THAT(group.output,
              HasSubstr("must-pass group 'g' has a failure: g/bad.jaxpr"));
}

TEST_F(EvalCliTest, PolicyRejectsUnlistedFailures) {
  std::ofstream(P("empty.txt")) << "";
  const RunResult r =
      Run("--compare --known_failures=" + P("empty.txt") + " " + P(""));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("policy: failure not in known failures: g/bad.jaxpr"));
}

TEST_F(EvalCliTest, KnownFailureThatPassesFailsOnlyWhenStrict) {
  std::ofstream(P("lax.txt")) << "g/bad.jaxpr: edited\n"
                              << "g/good.jaxpr: was broken once\n";
  const RunResult lax =
      Run("--compare --known_failures=" + P("lax.txt") + " " + P(""));
  EXPECT_EQ(lax.exit_code, 0) << lax.output;
  EXPECT_THAT(lax.output,
              HasSubstr("policy: known failure now passes: g/good.jaxpr"));
  std::ofstream(P("strict.txt")) << "g/bad.jaxpr: edited\n"
                                 << "strict g/good.jaxpr: was broken once\n";
  const RunResult strict =
      Run("--compare --known_failures=" + P("strict.txt") + " " + P(""));
  EXPECT_EQ(strict.exit_code, 1) << strict.output;
}

TEST_F(EvalCliTest, KnownFailureLinesNeedAReason) {
  std::ofstream(P("bad.txt")) << "g/bad.jaxpr:\n";
  const RunResult r =
      Run("--compare --known_failures=" + P("bad.txt") + " " + P(""));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("bad.txt:1: g/bad.jaxpr has no reason"));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
