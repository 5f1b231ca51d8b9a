// No silent surprises on the command line (issue 28 item 6) and the
// conversion report (item 4): bad flag values exit 2 naming the command and
// the flag; a missing input file exits 2 from every command; options that
// cannot take effect are refused or warned about; `-o -` writes the model
// to stdout; `eval --out` does not overwrite what it reads; `plugins` marks
// refusals and filters by name; `convert --report` lists every unsupported
// primitive at once and is written when the conversion fails.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/npy.h"
#include "nlohmann/json.hpp"
#include "onnx/onnx_pb.h"
#include "tests/cli_fixture.h"

namespace jax2onnx::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

using Result = testing_util::CliResult;
using testing_util::ReadFileText;

constexpr char kAdd[] =
    "{ lambda ; a:f32[2] b:f32[2]. let\n"
    "    c:f32[2] = add a b\n"
    "  in (c,) }\n";

class CliValuesTest : public testing_util::CliFixture {
 protected:
  CliValuesTest() : CliFixture("cli_values_test_") {}
  void TearDown() override { fs::remove_all(dir_); }

  // Runs in the test's directory.
  Result Run(const std::string& args) {
    return RunBinary(args, absl::StrCat("cd ", dir_.string(),
                                        " && env -u JAX2ONNX_USE_ONNX_IR "));
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(P(name)) << text;
    return P(name);
  }
};

TEST_F(CliValuesTest, BadFlagValuesExitTwoNamingCommandAndFlag) {
  const std::string add = Write("add.jaxpr", kAdd);
  const std::string out = P("o.onnx");
  struct Case {
    std::string args, command, flag;
  };
  const std::vector<Case> cases = {
      {"convert " + add + " -o " + out + " --opset 27", "convert", "--opset"},
      {"convert " + add + " -o " + out + " --opset 16", "convert", "--opset"},
      {"convert " + add + " -o " + out + " --optimize 3", "convert",
       "--optimize"},
      {"convert " + add + " -o " + out + " --mesh foo", "convert", "--mesh"},
      {"convert " + add + " -o " + out + " --external_data=sometimes",
       "convert", "--external_data"},
      {"convert " + add + " -o " + out + " --inputs_as_nchw=x", "convert",
       "--inputs_as_nchw"},
      {"convert " + add + " -o " + out + " --functions=a,,b", "convert",
       "--functions"},
      {"check " + add + " --opset 27", "check", "--opset"},
      {"check " + add + " --mesh foo", "check", "--mesh"},
      {"check " + add + " --rtol=-1", "check", "--rtol"},
      {"eval " + add + " --mesh foo", "eval", "--mesh"},
      {"eval " + add + " --min_pass_rate 2", "eval", "--min_pass_rate"},
      {"shadow " + add + " --opset 99", "shadow", "--opset"},
      {"corpus " + add + " --pipeline=both", "corpus", "--pipeline"},
      {"print " + add + " --to=mlir", "print", "--to"},
  };
  for (const Case& c : cases) {
    const Result r = Run(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_THAT(r.err,
                StartsWith(absl::StrCat("jax2onnx ", c.command, ": ", c.flag)))
        << c.args;
  }
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CliValuesTest, MissingInputFileExitsTwoFromEveryCommand) {
  const std::string missing = P("missing.jaxpr");
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"parse", "parse " + missing},
      {"verify", "verify " + missing},
      {"print", "print " + missing},
      {"eval", "eval " + missing},
      {"convert", "convert " + missing + " -o " + P("m.onnx")},
      {"check", "check " + missing},
      {"randomize", "randomize " + missing},
      {"corpus", "corpus " + missing},
      {"shadow", "shadow " + missing},
      {"parity", "parity " + missing + " --out " + P("dash")},
  };
  for (const auto& [command, args] : commands) {
    const Result r = Run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_THAT(r.err, StartsWith(absl::StrCat("jax2onnx ", command, ": ")))
        << args;
    EXPECT_THAT(r.err, HasSubstr("missing.jaxpr")) << args;
  }
}

TEST_F(CliValuesTest, FuseAttentionThatCannotTakeEffectIsRefused) {
  const std::string add = Write("add.jaxpr", kAdd);
  Result r = Run("convert " + add + " -o " + P("a.onnx") +
                 " --fuse_attention --opset 17");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--fuse_attention needs --opset 23"));
  r = Run("convert " + add + " -o " + P("a.onnx") +
          " --fuse_attention --optimize=1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--fuse_attention is a fusion of --optimize=2"));
  EXPECT_FALSE(fs::exists(P("a.onnx")));
}

TEST_F(CliValuesTest, FunctionsPatternMatchingNothingWarnsNamingTheCalls) {
  const std::string f = Write(
      "f.jaxpr",
      "{ lambda ; a:f32[3] b:f32[3]. let\n"
      "    c:f32[3] = pjit[\n"
      "      name=inner\n"
      "      jaxpr={ lambda ; x:f32[3] y:f32[3]. let z:f32[3] = sub x y in "
      "(z,) }\n"
      "    ] a b\n"
      "  in (c,) }\n");
  Result r =
      Run("convert " + f + " -o " + P("f.onnx") + " --functions=nomatch");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("jax2onnx convert: warning: --functions pattern "
                               "'nomatch' matches no call"));
  EXPECT_THAT(r.err, HasSubstr("(named calls: inner)"));
  r = Run("convert " + f + " -o " + P("g.onnx") + " --functions=inn*");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("warning")));
}

TEST_F(CliValuesTest, DashOWritesTheModelToStdout) {
  const std::string add = Write("add.jaxpr", kAdd);
  const Result r = Run("convert " + add + " -o -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(r.out));
  ASSERT_EQ(model.graph().node_size(), 1);
  EXPECT_EQ(model.graph().node(0).op_type(), "Add");
  EXPECT_FALSE(fs::exists(dir_ / "-"));
  EXPECT_THAT(r.err, HasSubstr("wrote the model to stdout"));
  const Result always = Run("convert " + add + " -o - --external_data=always");
  EXPECT_EQ(always.exit_code, 2);
  EXPECT_THAT(always.err, HasSubstr("jax2onnx convert: -o -"));
}

TEST_F(CliValuesTest, EvalOutRefusesToOverwriteWhatItReads) {
  const std::string add = Write("add.jaxpr", kAdd);
  jaxpr::Array a(jaxpr::DType::kF32, {2});
  a.SetFromDouble(0, 1);
  a.SetFromDouble(1, 2);
  ASSERT_TRUE(
      jaxpr::WriteNpzFile(P("add.npz"), {{"input_0", a}, {"input_1", a}}).ok());
  ASSERT_TRUE(
      jaxpr::WriteNpzFile(P("in.npz"), {{"input_0", a}, {"input_1", a}}).ok());
  const std::string npz_before = ReadFileText(P("add.npz"));
  Result r = Run("eval " + add + " --out " + P("add.npz"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("jax2onnx eval: refusing to write --out"));
  EXPECT_EQ(ReadFileText(P("add.npz")), npz_before);
  r = Run("eval " + add + " --inputs " + P("in.npz") + " --out " + P("in.npz"));
  EXPECT_EQ(r.exit_code, 2);
  r = Run("eval " + add + " --out " + P("result.npz"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(P("result.npz")));
}

TEST_F(CliValuesTest, PluginsMarksRefusalsAndFiltersByName) {
  Result r = Run("plugins pallas_call");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("refused"));
  EXPECT_THAT(r.out, Not(HasSubstr("yes")));
  EXPECT_THAT(r.out, HasSubstr("1 primitives: 0 legacy, 0 ir, 1 refused"));
  r = Run("plugins --json 'xla_pm*'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc.size(), 1u);
  EXPECT_EQ(doc[0]["primitive"], "xla_pmap");
  EXPECT_EQ(doc[0]["refused"], true);
  EXPECT_EQ(doc[0]["ir"], false);
  r = Run("plugins cumsum");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("cumsum"));
  EXPECT_THAT(r.out, Not(HasSubstr("cumprod")));
  r = Run("plugins no_such_primitive_zz");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("jax2onnx plugins: no primitive matches"));
}

TEST_F(CliValuesTest, ReportListsEveryUnknownPrimitiveAndIsWrittenOnFailure) {
  const std::string p = Write("three.jaxpr",
                              "{ lambda ; a:f32[2]. let\n"
                              "    b:f32[2] = frobnicate a\n"
                              "    c:f32[2] = add b a\n"
                              "    d:f32[2] = twiddle c\n"
                              "    e:f32[2] = frobnicate d\n"
                              "    f:f32[2] = wobble e\n"
                              "  in (f,) }\n");
  Result r = Run("convert " + p + " -o " + P("three.onnx") + " --report " +
                 P("three.json"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(fs::exists(P("three.onnx")));
  ASSERT_TRUE(fs::exists(P("three.json"))) << r.err;
  const nlohmann::json report =
      nlohmann::json::parse(ReadFileText(P("three.json")));
  EXPECT_EQ(report["converted"], false);
  EXPECT_THAT(report["error"].get<std::string>(), HasSubstr("frobnicate"));
  const nlohmann::json& u = report["unsupported"];
  ASSERT_EQ(u.size(), 3u) << u.dump();
  EXPECT_EQ(u[0]["primitive"], "frobnicate");
  EXPECT_EQ(u[0]["count"], 2);
  EXPECT_EQ(u[0]["first_location"], p + ":2:5");
  EXPECT_EQ(u[1]["primitive"], "twiddle");
  EXPECT_EQ(u[1]["count"], 1);
  EXPECT_EQ(u[1]["first_location"], p + ":4:5");
  EXPECT_EQ(u[2]["primitive"], "wobble");
  EXPECT_EQ(u[2]["first_location"], p + ":6:5");
  EXPECT_EQ(report["primitives"]["frobnicate"], 2);
  EXPECT_EQ(report["primitives"]["add"], 1);
  // Markdown by default: the same three rows.
  r = Run("convert " + p + " -o " + P("three.onnx") + " --report " +
          P("three.md"));
  EXPECT_EQ(r.exit_code, 1);
  const std::string md = ReadFileText(P("three.md"));
  EXPECT_THAT(md, HasSubstr("| frobnicate | 2 | " + p + ":2:5 |"));
  EXPECT_THAT(md, HasSubstr("| twiddle | 1 |"));
  EXPECT_THAT(md, HasSubstr("| wobble | 1 |"));
}

// x * 1 + 0 over a 256-element weight: lowering gives Mul and Add; the
// generic passes keep both (w is an input-independent weight, x is not);
// the report shows the passes that ran, 1 KiB of FLOAT initializers (the
// 256 f32 weights; the scalar literals fold or stay tiny) and the stages.
TEST_F(CliValuesTest, ReportOfASuccessfulConversionHasPassesBytesAndStages) {
  const std::string p = Write("w.jaxpr",
                              "{ lambda w:f32[256]; x:f32[256]. let\n"
                              "    y:f32[256] = mul x w\n"
                              "  in (y,) }\n");
  jaxpr::Array w(jaxpr::DType::kF32, {256});
  ASSERT_TRUE(jaxpr::WriteNpzFile(P("w.npz"), {{"const_0", w}}).ok());
  const Result r = Run("convert " + p + " -o " + P("w.onnx") + " --opset 19 " +
                       "--report " + P("w.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json report =
      nlohmann::json::parse(ReadFileText(P("w.json")));
  EXPECT_EQ(report["converted"], true);
  EXPECT_EQ(report["opset"], 19);
  EXPECT_EQ(report["ir_version"], 9);  // ONNX's pairing for opset 19
  EXPECT_EQ(report["unsupported"].size(), 0u);
  EXPECT_EQ(report["ops_lowered"]["Mul"], 1);
  EXPECT_EQ(report["ops_final"]["Mul"], 1);
  EXPECT_GT(report["passes"].size(), 0u);
  EXPECT_EQ(report["initializer_bytes"]["FLOAT"], 1024);
  for (const char* stage : {"load", "lower", "convert", "write"}) {
    EXPECT_TRUE(report["stage_seconds"].contains(stage)) << stage;
  }
}

// The fusions section (IR pipeline): a softmax fuses where its chain is
// private, and where the row max is also returned (as
// testdata/fusion/softmax_max_reused) it is a near miss naming the tensor
// and the reason; the legacy pipeline has no fusions to report.
TEST_F(CliValuesTest, ReportListsAppliedFusionsAndNearMisses) {
  const std::string chain =
      "    b:f32[3] = reduce_max[axes=(1,) out_sharding=None] a\n"
      "    c:f32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b\n"
      "    d:f32[3,7] = sub a c\n"
      "    e:f32[3,7] = exp d\n"
      "    f:f32[3] = reduce_sum[axes=(1,) out_sharding=None] e\n"
      "    g:f32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f\n"
      "    h:f32[3,7] = div e g\n";
  const std::string fused = Write(
      "fused.jaxpr", "{ lambda ; a:f32[3,7]. let\n" + chain + "  in (h,) }\n");
  const std::string reused =
      Write("reused.jaxpr",
            "{ lambda ; a:f32[3,7]. let\n" + chain + "  in (h, c) }\n");
  Result r = Run("convert " + fused + " -o " + P("f.onnx") + " --report " +
                 P("f.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json report = nlohmann::json::parse(ReadFileText(P("f.json")));
  ASSERT_EQ(report["fusions"]["applied"].size(), 1u) << report.dump();
  EXPECT_EQ(report["fusions"]["applied"][0]["rule"], "fuse-softmax");
  EXPECT_EQ(report["fusions"]["near_misses"].size(), 0u);
  r = Run("convert " + reused + " -o " + P("r.onnx") + " --report " +
          P("r.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  report = nlohmann::json::parse(ReadFileText(P("r.json")));
  EXPECT_EQ(report["fusions"]["applied"].size(), 0u);
  ASSERT_EQ(report["fusions"]["near_misses"].size(), 1u) << report.dump();
  const nlohmann::json& miss = report["fusions"]["near_misses"][0];
  EXPECT_EQ(miss["rule"], "fuse-softmax");
  EXPECT_EQ(miss["tensor"], "h");
  EXPECT_THAT(miss["reason"].get<std::string>(), HasSubstr("used outside it"));
  r = Run("convert " + reused + " -o " + P("r.onnx") + " --report " +
          P("r.md"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(ReadFileText(P("r.md")),
              HasSubstr("| fuse-softmax | `h` | an intermediate of the chain "
                        "is used outside it"));
  r = Run("convert " + reused + " -o " + P("l.onnx") +
          " --use_onnx_ir=false --report " + P("l.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  report = nlohmann::json::parse(ReadFileText(P("l.json")));
  EXPECT_EQ(report["fusions"]["near_misses"].size(), 0u);
}

}  // namespace
}  // namespace jax2onnx::cli
