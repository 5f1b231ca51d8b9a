// `jax2onnx verify` and the type check in front of `convert`: exit codes,
// FILE:LINE:COL errors on stderr, and nothing written for an ill-typed
// bundle.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/array.h"
#include "jaxpr/io/npy.h"
#include "tests/cli_fixture.h"

namespace jax2onnx {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kGood[] = R"({ lambda ; a:f32[5] b:f32[5]. let
    c:f32[5] = add a b
  in (c,) }
)";
// The declared result is one element longer than add computes.
constexpr char kBad[] = R"({ lambda ; a:f32[5] b:f32[5]. let
    c:f32[6] = add a b
  in (c,) }
)";

using RunResult = testing_util::ShellResult;  // stdout + stderr

class VerifyCliTest : public testing_util::CliFixture {
 protected:
  VerifyCliTest() : CliFixture("verify_cli_test_") {}
  void SetUp() override {
    CliFixture::SetUp();
    if (IsSkipped()) return;
    std::ofstream((dir_ / "good.jaxpr").string()) << kGood;
    std::ofstream((dir_ / "bad.jaxpr").string()) << kBad;
  }
  RunResult Run(const std::string& args) {
    return testing_util::RunShell(absl::StrCat(binary_, " ", args, " 2>&1"));
  }
};

TEST_F(VerifyCliTest, WellTypedFileExitsZero) {
  const RunResult r = Run(absl::StrCat("verify ", P("good.jaxpr")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("verify: 1 well-typed, 0 rejected"));
}

TEST_F(VerifyCliTest, IllTypedFileExitsOneWithLocation) {
  const RunResult r =
      Run(absl::StrCat("verify ", P("good.jaxpr"), " ", P("bad.jaxpr")));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr(absl::StrCat(P("bad.jaxpr"),
                                     ":2:5: error: 'add': expected f32[5], "
                                     "declared f32[6] (operands: f32[5], "
                                     "f32[5])")));
  EXPECT_THAT(r.output, HasSubstr("verify: 1 well-typed, 1 rejected"));
}

TEST_F(VerifyCliTest, DirectoryExpandsToItsJaxprs) {
  const RunResult r = Run(absl::StrCat("verify ", dir_.string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("verify: 1 well-typed, 1 rejected"));
}

TEST_F(VerifyCliTest, UnknownDtypeIsAParseErrorWithLocation) {
  std::ofstream(P("f33.jaxpr")) << "{ lambda ; a:f33[2]. let\n"
                                   "    b:f33[2] = neg a\n  in (b,) }\n";
  const RunResult r = Run(absl::StrCat("verify ", P("f33.jaxpr")));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(absl::StrCat(P("f33.jaxpr"),
                                               ":1:14: error: unknown dtype "
                                               "'f33'")));
}

TEST_F(VerifyCliTest, ConvertOfAnIllTypedBundleWritesNothing) {
  for (const char* pipeline : {"true", "false"}) {
    const RunResult r =
        Run(absl::StrCat("convert ", P("bad.jaxpr"), " -o ", P("out.onnx"),
                         " --use_onnx_ir=", pipeline));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_THAT(r.output,
                HasSubstr(absl::StrCat(P("bad.jaxpr"), ":2:5: error: 'add'")));
    EXPECT_FALSE(fs::exists(P("out.onnx")));
    EXPECT_FALSE(fs::exists(P("out.onnx.tmp")));
  }
}

TEST_F(VerifyCliTest, EvalOfAnIllTypedBundleIsRefused) {
  jaxpr::Array x(jaxpr::DType::kF32, {5});
  ASSERT_TRUE(
      jaxpr::WriteNpzFile(P("bad.npz"), {{"input_0", x}, {"input_1", x}}).ok());
  const RunResult r = Run(absl::StrCat("eval ", P("bad.jaxpr")));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr(absl::StrCat(P("bad.jaxpr"), ":2:5: error: 'add'")));
}

}  // namespace
}  // namespace jax2onnx
