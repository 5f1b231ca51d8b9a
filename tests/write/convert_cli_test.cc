// End-to-end tests of how `jax2onnx convert` writes its output: runs the
// built binary on a bundle with a 256 KiB constant and checks exit codes,
// stderr and the files left in the directory.
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/npy.h"
#include "onnx/onnx_pb.h"
#include "tests/cli_fixture.h"
#include "tests/ort_accepts.h"
#include "tests/write/write_test_util.h"

namespace jax2onnx::write_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int kN = 64 * 1024;  // f32: 256 KiB of weights
const std::string kJaxpr =
    absl::StrCat("{ lambda a:f32[", kN, "]; b:f32[", kN, "]. let\n    c:f32[",
                 kN, "] = add a b\n  in (c,) }\n");

using RunResult = testing_util::ShellResult;  // stdout + stderr

class ConvertCliTest : public testing_util::CliFixture {
 protected:
  ConvertCliTest() : CliFixture("convert_cli_test_") {}
  void SetUp() override {
    CliFixture::SetUp();
    if (IsSkipped()) return;
    WriteFile(dir_ / "b.jaxpr", kJaxpr);
    jaxpr::Array weights(jaxpr::DType::kF32, {kN});
    for (int i = 0; i < kN; ++i) weights.SetFromDouble(i, i * 0.5);
    ASSERT_TRUE(jaxpr::WriteNpzFile(P("b.npz"), {{"const_0", weights}}).ok());
    npz_bytes_ = ReadFile(dir_ / "b.npz");
  }
  // `prefix` runs before the binary in the same shell (e.g. `ulimit -f`).
  RunResult Convert(const std::string& args, const std::string& prefix = "") {
    return testing_util::RunShell(
        absl::StrCat("/bin/sh -c '", prefix, " exec ", binary_, " convert ",
                     P("b.jaxpr"), " ", args, "' 2>&1"));
  }
  void ExpectInputsIntact() {
    EXPECT_EQ(ReadFile(dir_ / "b.jaxpr"), kJaxpr);
    EXPECT_EQ(ReadFile(dir_ / "b.npz"), npz_bytes_);
  }
  std::string npz_bytes_;
};

TEST_F(ConvertCliTest, DefaultKeepsASmallModelInline) {
  const RunResult r = Convert("-o " + P("m.onnx"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(ListDir(dir_), ElementsAre("b.jaxpr", "b.npz", "m.onnx"));
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(ReadFile(dir_ / "m.onnx")));
  EXPECT_ORT_ACCEPTS(model);
}

TEST_F(ConvertCliTest, AlwaysWritesTheNamedSidecar) {
  const RunResult r = Convert("-o " + P("m.onnx") +
                              " --external_data=always "
                              "--external_data_name=weights.bin");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(ListDir(dir_),
              ElementsAre("b.jaxpr", "b.npz", "m.onnx", "weights.bin"));
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(ReadFile(dir_ / "m.onnx")));
  // The one weight, at offset 0 of the sidecar, byte for byte the npz data.
  ASSERT_EQ(model.graph().initializer_size(), 1);
  EXPECT_EQ(model.graph().initializer(0).external_data(0).value(),
            "weights.bin");
  EXPECT_EQ(fs::file_size(dir_ / "weights.bin"), kN * 4u);
}

TEST_F(ConvertCliTest, ThresholdBelowTheWeightUsesTheDefaultSidecarName) {
  const RunResult r =
      Convert("-o " + P("m.onnx") + " --external_data_threshold=1000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(ListDir(dir_),
              ElementsAre("b.jaxpr", "b.npz", "m.onnx", "m.onnx.data"));
}

TEST_F(ConvertCliTest, BadExternalDataModeIsAUsageError) {
  const RunResult r = Convert("-o " + P("m.onnx") + " --external_data=maybe");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("jax2onnx convert: --external_data must be "
                                  "auto, always, never; got 'maybe'"));
  EXPECT_THAT(ListDir(dir_), ElementsAre("b.jaxpr", "b.npz"));
}

TEST_F(ConvertCliTest, OutputEqualToAnInputIsRefused) {
  for (const char* input : {"b.jaxpr", "b.npz"}) {
    const RunResult r = Convert("-o " + P(input));
    EXPECT_EQ(r.exit_code, 1) << input;
    EXPECT_THAT(r.output, HasSubstr("is the input")) << input;
  }
  // Also through another spelling of the same file.
  const RunResult r = Convert("-o " + P("./b.npz"));
  EXPECT_EQ(r.exit_code, 1);
  ExpectInputsIntact();
  EXPECT_THAT(ListDir(dir_), ElementsAre("b.jaxpr", "b.npz"));
}

TEST_F(ConvertCliTest, DevFullIsRefusedWithNonZeroExit) {
  const RunResult r = Convert("-o /dev/full");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("not a regular file"));
}

TEST_F(ConvertCliTest, MissingDirectoryReportsTheOsReason) {
  const RunResult r = Convert("-o " + P("missing/m.onnx"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr(absl::StrCat(
                            "cannot create temporary in '", P("missing"),
                            "': No such file or directory")));
}

// `ulimit -f 64` caps files at 64 KiB: the 256 KiB weight cannot be written.
TEST_F(ConvertCliTest, FailedWriteExitsNonZeroAndKeepsTheOldOutput) {
  WriteFile(dir_ / "m.onnx", "old model");
  WriteFile(dir_ / "m.onnx.tmp", "user file");
  for (const char* mode : {"never", "always"}) {
    const RunResult r =
        Convert(absl::StrCat("-o ", P("m.onnx"), " --external_data=", mode),
                "ulimit -f 64;");
    EXPECT_EQ(r.exit_code, 1) << mode << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("File too large")) << mode;
    EXPECT_THAT(ListDir(dir_),
                ElementsAre("b.jaxpr", "b.npz", "m.onnx", "m.onnx.tmp"))
        << mode;
    EXPECT_EQ(ReadFile(dir_ / "m.onnx"), "old model");
    EXPECT_EQ(ReadFile(dir_ / "m.onnx.tmp"), "user file");
  }
}

}  // namespace
}  // namespace jax2onnx::write_test
