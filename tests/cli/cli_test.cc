// The conventions every `jax2onnx` command follows: flags belong to their
// command, usage errors exit 2, help and --version, -q/-v, the progress
// display, --json documents and conversion errors located in the jaxpr.
// Runs the built binary; stdout and stderr are captured separately.
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "onnx/onnx_pb.h"
#include "tests/cli_fixture.h"
#include "tests/ort_accepts.h"

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

class CliTest : public testing_util::CliFixture {
 protected:
  CliTest() : CliFixture("cli_test_") {}
  void TearDown() override { fs::remove_all(dir_); }

  // `env` is prepended to the command (e.g. "JAX2ONNX_USE_ONNX_IR=0").
  Result Run(const std::string& args, const std::string& env = "") {
    return RunBinary(args, absl::StrCat("env -u JAX2ONNX_USE_ONNX_IR "
                                        "-u JAX2ONNX_SHADOW_COMPARE ",
                                        env, " "));
  }
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path.string()) << text;
    return path.string();
  }
};

// Every model a test writes through the CLI must be one ONNX Runtime
// accepts (tests/ort_accepts.h).
void ExpectWrittenModelOrtAccepts(const fs::path& path) {
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(ReadFileText(path))) << path;
  EXPECT_ORT_ACCEPTS(model);
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

// --- flags belong to their command -------------------------------------

TEST_F(CliTest, FlagOfAnotherCommandIsAUsageErrorListingTheAcceptedOnes) {
  const std::string bundle = Write("add.jaxpr", kAdd);
  const Result r =
      Run("convert --json --seed 5 " + bundle + " -o " + P("add.onnx"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  ASSERT_EQ(Lines(r.err).size(), 1u) << r.err;
  EXPECT_THAT(r.err, StartsWith("jax2onnx convert: unknown flag --json "
                                "(convert accepts: -o, "));
  EXPECT_THAT(r.err, HasSubstr("--opset"));
  EXPECT_FALSE(fs::exists(P("add.onnx")));
}

TEST_F(CliTest, MisspelledFlagGetsASuggestion) {
  const Result r = Run("check --sed=3 " + Write("add.jaxpr", kAdd));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("did you mean --seed?"));
}

TEST_F(CliTest, BadFlagValueAndMissingValueAreUsageErrors) {
  const std::string bundle = Write("add.jaxpr", kAdd);
  Result r = Run("convert " + bundle + " -o " + P("x.onnx") + " --opset=abc");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("invalid value 'abc' for --opset"));
  r = Run("convert " + bundle + " -o");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("-o needs a value"));
}

TEST_F(CliTest, OneLetterFlagsAreSpelledWithOneDash) {
  const Result r = Run("convert --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("\n  -o (string"));
  EXPECT_THAT(r.out, Not(HasSubstr("--o ")));
  // Given either way, -o works.
  const std::string bundle = Write("add.jaxpr", kAdd);
  EXPECT_EQ(Run("convert " + bundle + " -o=" + P("a.onnx")).exit_code, 0);
  ASSERT_TRUE(fs::exists(P("a.onnx")));
  onnx::ModelProto model;
  std::ifstream in(P("a.onnx"), std::ios::binary);
  ASSERT_TRUE(model.ParseFromIstream(&in));
  EXPECT_ORT_ACCEPTS(model);
}

TEST_F(CliTest, FlagHelpIsWrittenForTheCommand) {
  const Result parity = Run("parity --help");
  EXPECT_EQ(parity.exit_code, 0);
  EXPECT_THAT(parity.out, HasSubstr("Directory to write parity.json"));
  EXPECT_THAT(parity.out, Not(HasSubstr("out_i")));
  const Result eval = Run("help eval");
  EXPECT_EQ(eval.exit_code, 0);
  EXPECT_THAT(eval.out, HasSubstr("--out (string"));
  EXPECT_THAT(eval.out, HasSubstr("out_i"));
}

// --- help, version, commands ---------------------------------------------

TEST_F(CliTest, VersionPrintsTheProjectVersionAndCommit) {
  const Result r = Run("--version");
  EXPECT_EQ(r.exit_code, 0);
  // `git describe --always --dirty` of the checkout (cmake/git_version.cmake),
  // "unknown" outside git.
  const std::string prefix =
      absl::StrCat("jax2onnx ", JAX2ONNX_VERSION, " (git ");
  ASSERT_TRUE(absl::StartsWith(r.out, prefix)) << r.out;
  ASSERT_TRUE(absl::EndsWith(r.out, ")\n")) << r.out;
  const std::string hash =
      r.out.substr(prefix.size(), r.out.size() - prefix.size() - 2);
  EXPECT_TRUE(hash == "unknown" ||
              hash.find_first_not_of("0123456789abcdefgtdiry-") ==
                  std::string::npos)
      << hash;
  EXPECT_FALSE(hash.empty());
}

TEST_F(CliTest, HelpCommandEqualsCommandHelpFlag) {
  const Result a = Run("help convert");
  const Result b = Run("convert --help");
  EXPECT_EQ(a.exit_code, 0);
  EXPECT_EQ(b.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_THAT(a.out, StartsWith("Usage: jax2onnx convert"));
  EXPECT_EQ(Run("--help").exit_code, 0);
  EXPECT_EQ(Run("help").exit_code, 0);
}

TEST_F(CliTest, MistypedCommandSuggestsTheNearestAndExitsTwo) {
  const Result r = Run("conver x.jaxpr");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("unknown command 'conver'; did you mean "
                               "'convert'?"));
  EXPECT_THAT(Run("help randomise").err, HasSubstr("'randomize'"));
  EXPECT_THAT(Run("frobnicate").err, Not(HasSubstr("did you mean")));
}

TEST_F(CliTest, MissingArgumentsAreUsageErrors) {
  EXPECT_EQ(Run("").exit_code, 2);
  EXPECT_EQ(Run("convert").exit_code, 2);
  EXPECT_EQ(Run("parse").exit_code, 2);
  EXPECT_EQ(Run("eval").exit_code, 2);
  EXPECT_EQ(Run("randomize").exit_code, 2);
}

TEST_F(CliTest, FailureOfTheWorkExitsOne) {
  const std::string broken = Write("broken.jaxpr", "{ lambda ; a:f32[2]. let");
  const Result r = Run("parse " + broken);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("broken.jaxpr:1:"));
}

// --- --use_onnx_ir ---------------------------------------------------------

TEST_F(CliTest, UseOnnxIrHelpStatesTheRealDefault) {
  const Result r = Run("help convert");
  EXPECT_THAT(r.out, HasSubstr("--use_onnx_ir (bool, default true)"));
  EXPECT_THAT(r.out, HasSubstr("(default: IR)"));
  EXPECT_THAT(r.out, HasSubstr("--use_onnx_ir=false selects the legacy"));
  EXPECT_THAT(r.out, HasSubstr("JAX2ONNX_USE_ONNX_IR, when set, overrides"));
}

TEST_F(CliTest, UseOnnxIrIsTriStateAndTheEnvironmentOverridesIt) {
  const std::string bundle = Write("add.jaxpr", kAdd);
  auto pipeline = [&](const std::string& flags, const std::string& env) {
    const Result r =
        Run("convert -v " + bundle + " -o " + P("a.onnx") + " " + flags, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    ExpectWrittenModelOrtAccepts(P("a.onnx"));
    if (r.err.find("with the ir pipeline") != std::string::npos) return "ir";
    if (r.err.find("with the legacy pipeline") != std::string::npos) {
      return "legacy";
    }
    return "?";
  };
  EXPECT_STREQ(pipeline("", ""), "ir");
  EXPECT_STREQ(pipeline("--use_onnx_ir=false", ""), "legacy");
  EXPECT_STREQ(pipeline("--nouse_onnx_ir", ""), "legacy");
  EXPECT_STREQ(pipeline("--use_onnx_ir", "JAX2ONNX_USE_ONNX_IR=0"), "legacy");
  EXPECT_STREQ(pipeline("--use_onnx_ir=false", "JAX2ONNX_USE_ONNX_IR=1"), "ir");
}

// --- -q / -v -----------------------------------------------------------------

TEST_F(CliTest, QuietConvertPrintsNothingVerboseMore) {
  const std::string bundle = Write("add.jaxpr", kAdd);
  const Result quiet = Run("convert -q " + bundle + " -o " + P("q.onnx"));
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.out, "");
  EXPECT_EQ(quiet.err, "");
  EXPECT_TRUE(fs::exists(P("q.onnx")));
  const Result normal = Run("convert " + bundle + " -o " + P("n.onnx"));
  EXPECT_THAT(normal.err, HasSubstr("wrote "));
  EXPECT_THAT(normal.err, Not(HasSubstr("pipeline")));
  const Result verbose =
      Run("convert --verbose " + bundle + " -o " + P("v.onnx"));
  EXPECT_THAT(verbose.err, HasSubstr("wrote "));
  EXPECT_THAT(verbose.err, HasSubstr("pipeline in"));
  for (const char* name : {"q.onnx", "n.onnx", "v.onnx"}) {
    ExpectWrittenModelOrtAccepts(P(name));
  }
}

// jax.debug.print (debug_print, and debug_callback before JAX 0.7.2) and
// dce_sink lower to nothing: the model is the program without them, and
// `convert -v` names each dropped equation with its location (nested ones
// too), while a plain convert stays quiet about them.
TEST_F(CliTest, VerboseConvertNamesDroppedDebugPrints) {
  const std::string bundle = Write(
      "dbg.jaxpr",
      "{ lambda ; a:f32[2]. let\n"
      "    debug_print[fmt=a: {} has_placeholders=True in_tree=PyTreeDef(((*,),"
      " {})) logging_record=None np_printoptions=() ordered=False "
      "partitioned=False static_args=()] a\n"
      "    b:f32[2] = jit[\n"
      "      name=f\n"
      "      jaxpr={ lambda ; c:f32[2]. let\n"
      "          debug_callback[callback=<function f at 0x7f00> effect=Debug"
      " partitioned=False] c\n"
      "          dce_sink[prevent_mlir_dce=False] c\n"
      "          d:f32[2] = neg c\n"
      "        in (d,) }\n"
      "    ] a\n"
      "  in (b,) }\n");
  const Result verbose = Run("convert -v " + bundle + " -o " + P("v.onnx"));
  ASSERT_EQ(verbose.exit_code, 0) << verbose.err;
  EXPECT_THAT(verbose.err,
              HasSubstr("dbg.jaxpr:2:5: note: dropped debug_print (host print "
                        "of 'a: {}'"));
  EXPECT_THAT(verbose.err, HasSubstr(":6:11: note: dropped debug_callback"));
  EXPECT_THAT(verbose.err, HasSubstr(":7:11: note: dropped dce_sink"));
  ExpectWrittenModelOrtAccepts(P("v.onnx"));
  const Result normal = Run("convert " + bundle + " -o " + P("n.onnx"));
  EXPECT_EQ(normal.exit_code, 0);
  EXPECT_THAT(normal.err, Not(HasSubstr("dropped")));
}

// JAX's narrow dtypes convert from the opset ONNX introduced their type in;
// below it (and for types ONNX lacks) they are refused before any lowering,
// naming the dtype, where it appears and what ONNX offers for it.
TEST_F(CliTest, NarrowDtypesAreRefusedNamingTheDtypeAndOnnxOpset) {
  const std::string f8 = Write(
      "f8.jaxpr",
      "{ lambda ; a:f32[4]. let\n"
      "    b:f8_e4m3fn[4] = convert_element_type[new_dtype=float8_e4m3fn "
      "weak_type=False] a\n"
      "    c:f32[4] = convert_element_type[new_dtype=float32 weak_type=False] "
      "b\n"
      "  in (c,) }\n");
  for (const char* ir : {"false", "true"}) {
    const Result r =
        Run(absl::StrCat("convert --use_onnx_ir=", ir, " --opset 17 ", f8,
                         " -o ", P("f8.onnx")));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr("f8.jaxpr:2:5: error: dtype f8_e4m3fn "
                                 "(float8_e4m3fn) of the result b of "
                                 "'convert_element_type'"));
    EXPECT_THAT(r.err,
                HasSubstr("ONNX has FLOAT8E4M3FN only from opset 19; this is "
                          "opset 17"));
    EXPECT_FALSE(fs::exists(P("f8.onnx")));
    const Result at19 =
        Run(absl::StrCat("convert --use_onnx_ir=", ir, " --opset 19 ", f8,
                         " -o ", P("f8.onnx")));
    EXPECT_EQ(at19.exit_code, 0) << at19.err;
    EXPECT_TRUE(fs::exists(P("f8.onnx")));
    fs::remove(P("f8.onnx"));
  }
  // The formats ONNX has no type for, at every opset, both pipelines; as
  // an input and as a result (convert_element_type from f32).
  for (const auto& [short_name, numpy_name] :
       std::vector<std::pair<std::string, std::string>>{
           {"f6_e2m3fn", "float6_e2m3fn"},
           {"f6_e3m2fn", "float6_e3m2fn"},
           {"f8_e3m4", "float8_e3m4"},
           {"f8_e4m3", "float8_e4m3"},
           {"f8_e4m3b11fnuz", "float8_e4m3b11fnuz"}}) {
    const std::string input = Write(
        "none_in.jaxpr",
        absl::StrCat("{ lambda ; a:", short_name, "[4]. let\n  in (a,) }\n"));
    const std::string result =
        Write("none_out.jaxpr",
              absl::StrCat("{ lambda ; a:f32[4]. let\n    b:", short_name,
                           "[4] = convert_element_type[new_dtype=", numpy_name,
                           " weak_type=False] a\n  in (b,) }\n"));
    for (const char* ir : {"false", "true"}) {
      for (const char* opset : {"17", "26"}) {
        const std::string flags =
            absl::StrCat(" --use_onnx_ir=", ir, " --opset ", opset, " ");
        const Result r =
            Run(absl::StrCat("convert", flags, input, " -o ", P("x.onnx")));
        EXPECT_EQ(r.exit_code, 1) << short_name << flags;
        EXPECT_THAT(r.err, HasSubstr(absl::StrCat("dtype ", short_name, " (",
                                                  numpy_name, ") of input a")));
        EXPECT_THAT(r.err, HasSubstr("ONNX has no element type for it"));
        const Result out =
            Run(absl::StrCat("convert", flags, result, " -o ", P("x.onnx")));
        EXPECT_EQ(out.exit_code, 1) << short_name << flags;
        EXPECT_THAT(out.err, HasSubstr(absl::StrCat("dtype ", short_name, " (",
                                                    numpy_name,
                                                    ") of the result b of "
                                                    "'convert_element_type'")));
        EXPECT_FALSE(fs::exists(P("x.onnx")));
      }
    }
  }
}

TEST_F(CliTest, QuietEvalShowsOnlyFailures) {
  Write("d/add.jaxpr", kAdd);
  Write("d/broken.jaxpr", "{ lambda ; a:f32[2]. let");
  const Result normal = Run("eval " + P("d"));
  EXPECT_EQ(normal.exit_code, 1);
  EXPECT_THAT(normal.out, HasSubstr("FAIL "));
  EXPECT_THAT(normal.out, HasSubstr("passed"));
  const Result quiet = Run("eval -q " + P("d"));
  EXPECT_EQ(quiet.exit_code, 1);
  ASSERT_EQ(Lines(quiet.out).size(), 2u) << quiet.out;  // both fail: no npz
  for (const std::string& line : Lines(quiet.out)) {
    EXPECT_THAT(line, StartsWith("FAIL "));
  }
  EXPECT_EQ(quiet.err, "");
}

// --- progress
// ------------------------------------------------------------------

TEST_F(CliTest, PipedProgressWritesNoCarriageReturns) {
  for (int i = 0; i < 4; ++i) Write(absl::StrCat("d/add", i, ".jaxpr"), kAdd);
  const Result eval = Run("eval " + P("d"));
  EXPECT_THAT(eval.err, Not(HasSubstr("\r")));
  EXPECT_EQ(eval.err, "");
  const Result shadow = Run("shadow " + P("d"));
  EXPECT_THAT(shadow.err, Not(HasSubstr("\r")));
}

TEST_F(CliTest, TerminalGetsABarThatIsClearedBeforeResults) {
  for (int i = 0; i < 3; ++i) Write(absl::StrCat("d/add", i, ".jaxpr"), kAdd);
  // stderr (and stdin) on a pseudo-terminal, stdout to a file.
  const fs::path out = dir_ / "stdout.txt";
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    FILE* f = std::fopen(out.c_str(), "w");
    if (f == nullptr) _exit(99);
    dup2(fileno(f), STDOUT_FILENO);
    execl(binary_.c_str(), binary_.c_str(), "eval", P("d").c_str(),
          static_cast<char*>(nullptr));
    _exit(98);
  }
  std::string tty;
  char buf[4096];
  ssize_t n;
  while ((n = read(master, buf, sizeof(buf))) > 0) tty.append(buf, n);
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);  // no npz: every bundle fails
  EXPECT_THAT(tty, HasSubstr("\r\033[Keval ["));
  EXPECT_THAT(tty, HasSubstr("] 0/3 "));
  EXPECT_THAT(tty, HasSubstr("\r\033[K"));  // cleared
  // stdout has the results only.
  const std::string results = ReadFileText(out);
  EXPECT_THAT(results, Not(HasSubstr("\r")));
  EXPECT_EQ(Lines(results).size(), 4u) << results;  // 3 FAIL + summary
}

// --- --json ------------------------------------------------------------------

TEST_F(CliTest, ParseJsonIsOneDocumentForManyFiles) {
  const std::string a = Write("a.jaxpr", kAdd);
  const std::string broken = Write("broken.jaxpr", "{ lambda ; a:f32[2]. let");
  const Result r = Run("parse --json " + a + " " + broken);
  EXPECT_EQ(r.exit_code, 1);
  const nlohmann::json doc = nlohmann::json::parse(r.out);  // throws if not
  ASSERT_TRUE(doc.is_array());
  ASSERT_EQ(doc.size(), 2u);
  EXPECT_EQ(doc[0]["ok"], true);
  EXPECT_EQ(doc[0]["primitives"]["add"], 1);
  // No release-specific form: every covered release could have printed it.
  EXPECT_EQ(doc[0]["jax_releases"]["consistent"], true);
  EXPECT_EQ(doc[0]["jax_releases"]["oldest"], "0.4.30");
  EXPECT_EQ(doc[0]["jax_releases"]["newest"], "main");
  EXPECT_EQ(doc[1]["ok"], false);
}

TEST_F(CliTest, ShadowAndPluginsJsonAreOneDocument) {
  const std::string a = Write("d/a.jaxpr", kAdd);
  Write("d/b.jaxpr", kAdd);
  const Result shadow = Run("shadow --json " + P("d"));
  const nlohmann::json doc = nlohmann::json::parse(shadow.out);
  ASSERT_TRUE(doc.is_array());
  EXPECT_EQ(doc.size(), 2u);
  const Result plugins = Run("plugins --json");
  EXPECT_EQ(plugins.exit_code, 0);
  const nlohmann::json registry = nlohmann::json::parse(plugins.out);
  ASSERT_TRUE(registry.is_array());
  EXPECT_GT(registry.size(), 50u);
}

TEST_F(CliTest, CheckJsonKeepsTheSummaryOnStderr) {
  const std::string mlp =
      std::string(JAX2ONNX_SOURCE_DIR) + "/testdata/examples/mlp";
  const Result r = Run("check --json " + mlp);
  if (r.exit_code == 1 && r.out.empty()) {
    GTEST_SKIP() << "ONNX Runtime unavailable: " << r.err;
  }
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  ASSERT_TRUE(doc.is_array());
  ASSERT_EQ(doc.size(), 1u);
  EXPECT_EQ(doc[0]["passed"], true);
  EXPECT_THAT(r.err, HasSubstr("1 passed, 0 failed"));
  EXPECT_THAT(r.out, Not(HasSubstr("passed,")));
}

TEST_F(CliTest, ParityJsonKeepsTheSummaryOnStderr) {
  Write("d/add.jaxpr", kAdd);
  const Result r = Run("parity --json " + P("d") + " --out " + P("dash"));
  if (r.exit_code == 77) GTEST_SKIP() << "ONNX Runtime unavailable";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_TRUE(doc.is_object());
  EXPECT_THAT(r.err, HasSubstr("parity: "));
  EXPECT_THAT(r.err, HasSubstr("wrote "));
  EXPECT_TRUE(fs::exists(P("dash/parity.json")));
}

// --- conversion errors -------------------------------------------------------

TEST_F(CliTest, ConversionErrorIsLocatedLikeAParseError) {
  // Line 3 col 5 holds the equation no pipeline can lower.
  const std::string bundle = Write("unknown.jaxpr",
                                   "{ lambda ; a:f32[2]. let\n"
                                   "    b:f32[2] = neg a\n"
                                   "    c:f32[2] = frobnicate b\n"
                                   "  in (c,) }\n");
  const Result r = Run("convert " + bundle + " -o " + P("u.onnx"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, StartsWith(bundle + ":3:5: error: "));
  EXPECT_THAT(r.err, HasSubstr("'frobnicate'"));
  // The source line and a caret under column 5, as parse errors show.
  EXPECT_THAT(r.err, HasSubstr("\n    c:f32[2] = frobnicate b\n    ^"));
  EXPECT_FALSE(fs::exists(P("u.onnx")));
}

TEST_F(CliTest, TypeErrorIsPrintedOnceWithItsLocation) {
  const std::string bundle = Write("ill.jaxpr",
                                   "{ lambda ; a:f32[5] b:f32[5]. let\n"
                                   "    c:f32[6] = add a b\n"
                                   "  in (c,) }\n");
  const Result r = Run("convert " + bundle + " -o " + P("ill.onnx"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith(bundle + ":2:5: error: 'add': expected "
                                         "f32[5], declared f32[6]"));
  // One location prefix, not the file name again in front of it.
  EXPECT_THAT(r.err, Not(HasSubstr(bundle + ": error:")));
  EXPECT_FALSE(fs::exists(P("ill.onnx")));
}

TEST_F(CliTest, NestedConversionErrorPointsAtTheInnerEquation) {
  const std::string bundle =
      Write("nested.jaxpr",
            "{ lambda ; p:i32[] a:f32[2]. let\n"
            "    b:f32[2] = cond[\n"
            "      branches=(\n"
            "        { lambda ; c:f32[2]. let d:f32[2] = neg c in (d,) }\n"
            "        { lambda ; e:f32[2]. let\n"
            "            f:f32[2] = frobnicate e\n"
            "          in (f,) }\n"
            "      )\n"
            "    ] p a\n"
            "  in (b,) }\n");
  for (const char* flag : {"--use_onnx_ir", "--use_onnx_ir=false"}) {
    const Result r =
        Run("convert " + bundle + " -o " + P("n.onnx") + " " + flag);
    EXPECT_EQ(r.exit_code, 1) << flag;
    EXPECT_THAT(r.err, StartsWith(bundle + ":6:13: error: ")) << flag << r.err;
  }
}

}  // namespace
}  // namespace jax2onnx::cli
