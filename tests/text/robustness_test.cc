// The parser never crashes, hangs or overflows the stack: deep nesting is an
// error, and every truncation and many byte mutations of real samples
// either parse or fail with a positioned InvalidArgument.
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/text/printer.h"

namespace jax2onnx::jaxpr {
namespace {

using ::testing::HasSubstr;

// Real JAX samples from ../shared/corpus/real, which is not part of the
// repository: the tests that read them skip where it is absent.
const std::string kCorpus = std::string(JAX2ONNX_SHARED_DIR) + "/corpus/real";

#define SKIP_WITHOUT_REAL_CORPUS()                                      \
  if (!std::filesystem::is_directory(kCorpus))                          \
  GTEST_SKIP() << kCorpus                                               \
               << " does not exist: the real JAX samples are not part " \
                  "of the repository"

std::string Sample(const std::string& name) {
  std::ifstream in(kCorpus + "/" + name, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void ExpectParsesOrFailsCleanly(const std::string& text) {
  auto file = ParseJaxprText(text, "x");
  if (file.ok()) {
    // Whatever parsed must print and re-parse.
    const std::string printed = PrintJaxprFile(*file);
    auto again = ParseJaxprText(printed, "printed");
    EXPECT_TRUE(again.ok()) << again.status() << "\n" << printed;
  } else {
    EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(file.status().message(), HasSubstr("x:"));
  }
}

TEST(RobustnessTest, DeepJaxprNestingIsAnErrorNotAStackOverflow) {
  std::string text;
  const int depth = 100000;
  for (int i = 0; i < depth; ++i) {
    text += "{ lambda ; a:f32[]. let b:f32[] = jit[jaxpr=";
  }
  auto file = ParseJaxprText(text, "deep");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr("nesting deeper than 256"));
}

TEST(RobustnessTest, DeepParamAndDimNestingIsBounded) {
  const std::string deep_param =
      "{ lambda ; a:f32[]. let b:f32[] = p[x=" + std::string(200000, '(') +
      "] a in (b,) }";
  EXPECT_FALSE(ParseJaxprText(deep_param, "x").ok());
  const std::string deep_value =
      "{ lambda ; a:f32[]. let b:f32[] = p[x=" + std::string(5000, '(') + "1" +
      std::string(5000, ')') + "] a in (b,) }";
  auto f = ParseJaxprText(deep_value, "x");
  ASSERT_TRUE(f.ok()) << f.status();  // too deep to structure: kept as text
  EXPECT_EQ(f->main->eqns[0].params.Find("x")->kind(),
            ParamValue::Kind::kOpaque);
  const std::string deep_dim = "{ lambda ; a:f32[" + std::string(5000, '(') +
                               "b" + std::string(5000, ')') + "]. let  in () }";
  EXPECT_FALSE(ParseJaxprText(deep_dim, "x").ok());
}

TEST(RobustnessTest, SmallerNestingLimitIsHonoured) {
  SKIP_WITHOUT_REAL_CORPUS();
  ParseOptions options;
  options.max_nesting_depth = 2;
  const std::string text = Sample("047_shard_map_fft_all_to_all.jaxpr");
  auto file = ParseJaxprText(text, "047", options);
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr("nesting deeper than 2"));
  options.max_input_bytes = 10;
  EXPECT_THAT(ParseJaxprText(text, "047", options).status().message(),
              HasSubstr("max_input_bytes"));
}

TEST(RobustnessTest, EveryTruncationOfSamplesFailsCleanly) {
  SKIP_WITHOUT_REAL_CORPUS();
  for (const char* name :
       {"010_pjit_no_outvar_eqns.jaxpr", "013_jit_nested_shared.jaxpr",
        "046_custom_vjp_call_jaxpr_fft_complex.jaxpr",
        "050_pallas_kernel_state_refs.jaxpr", "057_oneline_dropvar_grad.jaxpr",
        "033_dynamic_shapes_gather.jaxpr"}) {
    const std::string text = Sample(name);
    ASSERT_FALSE(text.empty()) << name;
    for (size_t n = 0; n < text.size(); ++n) {
      ExpectParsesOrFailsCleanly(text.substr(0, n));
    }
  }
}

TEST(RobustnessTest, RandomByteMutationsNeverCrash) {
  SKIP_WITHOUT_REAL_CORPUS();
  const std::string text = Sample("029_gpt_fwd_gather_scan_random.jaxpr");
  std::mt19937 rng(12345);
  const std::string alphabet = "{}[]()<>:;,.=_ \n-+*^@#'\"abcxyz019\x1b";
  for (int trial = 0; trial < 300; ++trial) {
    std::string mutated = text;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % mutated.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          mutated[pos] = c;
          break;
        case 1:
          mutated.insert(mutated.begin() + pos, c);
          break;
        default:
          mutated.erase(pos, 1 + rng() % 8);
          break;
      }
    }
    ExpectParsesOrFailsCleanly(mutated);
  }
}

// parser_fuzzer, 2026-11-24: `g = ad;d f 1.0` parsed as `ad` (no operands)
// then a zero-output equation `d f 1.0` whose primitive is named like the
// bound variable d. Printed on its own line it re-parsed as operands of
// `ad` (13 vs 12 equations). Such an equation is now an error at its
// position; the same text with a real primitive name still round-trips.
TEST(RobustnessTest, ZeroOutputEquationNamedLikeABoundVariableIsAnError) {
  const std::string bad =
      "{ lambda ; d:f32[] f:f32[]. let\n"
      "    g:f32[] = ad;d f 1.0:f32[]\n"
      "  in (g,) }\n";
  auto file = ParseJaxprText(bad, "x");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(
      file.status().message(),
      HasSubstr("x:2:18: error: 'd' is a variable bound in this jaxpr"));
  const std::string good =
      "{ lambda ; d:f32[] f:f32[]. let\n"
      "    g:f32[] = ad;debug_thing f 1.0:f32[]\n"
      "  in (g,) }\n";
  auto ok = ParseJaxprText(good, "x");
  ASSERT_TRUE(ok.ok()) << ok.status();
  auto again = ParseJaxprText(PrintJaxprFile(*ok), "printed");
  ASSERT_TRUE(again.ok()) << again.status();
  std::string diff;
  EXPECT_TRUE(StructurallyEqual(*ok, *again, &diff)) << diff;
}

// parser_fuzzer, 2026-11-24: `in_specs= = all_gather_invariant[...]` (a
// value starting with '=') was accepted as opaque text and printed as
// `in_specs==...`; re-parsed, the previous param's value ran on through it
// (a value does not end at `KEY==`), giving 4 params instead of 5. A value
// starting with '=' is now an error at its position.
TEST(RobustnessTest, ParamValueStartingWithEqualsIsAnError) {
  const std::string bad =
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = custom_thing[\n"
      "      flag=True\n"
      "      spec= = other[x=1] c\n"
      "    ] a\n"
      "  in (b,) }\n";
  auto file = ParseJaxprText(bad, "x");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(),
              HasSubstr("x:4:13: error: expected a value for param 'spec'"));
}

// parser_fuzzer, 2026-11-24: `a:f32[4@]` parsed as a sharded type with an
// empty axis name and printed as `f32[4]`, which re-parsed as unsharded
// (types unequal although printed alike). An empty name after '@' is now an
// error; `f32[4@data]` still round-trips.
TEST(RobustnessTest, EmptyMeshAxisAfterAtIsAnError) {
  auto bad = ParseJaxprText(
      "{ lambda ; a:f32[4@]. let b:f32[4] = neg a in (b,) }\n", "x");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("x:1:19: error: expected a mesh axis name after '@'"));
  auto good = ParseJaxprText(
      "{ lambda ; a:f32[4@data]. let b:f32[4@data] = neg a in (b,) }\n", "y");
  ASSERT_TRUE(good.ok()) << good.status();
  auto again = ParseJaxprText(PrintJaxprFile(*good), "printed");
  ASSERT_TRUE(again.ok()) << again.status();
  std::string diff;
  EXPECT_TRUE(StructurallyEqual(*good, *again, &diff)) << diff;
}

}  // namespace
}  // namespace jax2onnx::jaxpr
