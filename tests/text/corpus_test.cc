// Runs the parser and printer over every real sample in
// ../shared/corpus/real (skipped where absent) and every conformance bundle
// in testdata/vectors:
// everything parses (except the legacy 037), FRAGMENT files parse as
// equations, print(parse(x)) is a fixed point, and the primitive set found
// matches the independent list in corpus/real/INDEX.md.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/text/printer.h"

namespace jax2onnx::jaxpr {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The real JAX samples live outside the repository (../shared/corpus/real);
// the tests that read them skip, with the reason, where it is absent. The
// conformance vectors are checked in (testdata/vectors).
const std::string kCorpus = std::string(JAX2ONNX_SHARED_DIR) + "/corpus/real";
const std::string kVectors = std::string(JAX2ONNX_VECTORS_DIR);

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> Files(const std::string& dir, bool recursive) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  auto add = [&](const fs::directory_entry& e) {
    if (e.is_regular_file() && e.path().extension() == ".jaxpr") {
      out.push_back(e.path().string());
    }
  };
  if (recursive) {
    for (const auto& e : fs::recursive_directory_iterator(dir)) add(e);
  } else {
    for (const auto& e : fs::directory_iterator(dir)) add(e);
  }
  std::sort(out.begin(), out.end());
  return out;
}

class CorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::is_directory(kCorpus)) {
      GTEST_SKIP() << kCorpus
                   << " does not exist: the real JAX samples are not part of "
                      "the repository";
    }
  }
};

bool IsFragment(const std::string& path) {
  return path.find("FRAGMENT") != std::string::npos;
}
bool IsLegacy(const std::string& path) {
  return path.find("/037_") != std::string::npos;
}

void ExpectFixedPoint(const std::string& path) {
  SCOPED_TRACE(path);
  auto first = ParseJaxprFile(path);
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string printed = PrintJaxprFile(*first);
  auto second = ParseJaxprText(printed, path + " (printed)");
  ASSERT_TRUE(second.ok()) << second.status() << "\n" << printed;
  std::string diff;
  EXPECT_TRUE(StructurallyEqual(*first, *second, &diff)) << diff;
  EXPECT_EQ(PrintJaxprFile(*second), printed);
}

TEST_F(CorpusTest, HasTheExpectedSamples) {
  EXPECT_EQ(Files(kCorpus, false).size(), 58u);
}

TEST_F(CorpusTest, EveryFullSampleParses) {
  int parsed = 0;
  for (const std::string& path : Files(kCorpus, false)) {
    if (IsFragment(path) || IsLegacy(path)) continue;
    auto file = ParseJaxprFile(path);
    EXPECT_TRUE(file.ok()) << path << ": " << file.status();
    if (file.ok()) ++parsed;
  }
  EXPECT_EQ(parsed, 54);
}

TEST_F(CorpusTest, LegacyUntypedFormatIsRejectedClearly) {
  const std::string path = kCorpus + "/037_legacy_untyped_format.jaxpr";
  auto file = ParseJaxprFile(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(), HasSubstr("legacy pre-2021"));
  // Points at the untyped binder `a` in `{ lambda  ; a.` (line 1, col 13).
  EXPECT_THAT(file.status().message(), HasSubstr("037_legacy_untyped_format"
                                                 ".jaxpr:1:13: error:"));
}

TEST_F(CorpusTest, FragmentsParseAsEquations) {
  int fragments = 0;
  for (const std::string& path : Files(kCorpus, false)) {
    if (!IsFragment(path)) continue;
    ++fragments;
    SCOPED_TRACE(path);
    ClosedJaxpr scope;
    auto eqns = ParseEquations(ReadFile(path), path, &scope);
    ASSERT_TRUE(eqns.ok()) << eqns.status();
    ASSERT_FALSE(eqns->empty());
    // As whole jaxprs they are rejected: they are not one.
    EXPECT_FALSE(ParseJaxprFile(path).ok());
  }
  EXPECT_EQ(fragments, 3);
}

TEST_F(CorpusTest, FragmentContentsAreStructured) {
  ClosedJaxpr scope;
  auto eqns = ParseEquations(
      ReadFile(kCorpus + "/052_FRAGMENT_fp8_convert_dot_precision.jaxpr"),
      "052", &scope);
  ASSERT_TRUE(eqns.ok()) << eqns.status();
  // Four equations: convert, convert, mul, dot_general (read off the file).
  ASSERT_EQ(eqns->size(), 4u);
  EXPECT_EQ((*eqns)[0].primitive, "convert_element_type");
  EXPECT_EQ((*eqns)[0].outputs[0]->aval.dtype_name, "f8_e4m3fn");
  EXPECT_EQ((*eqns)[0].outputs[0]->aval.dtype,
            NarrowDType(NarrowFormat::kF8E4M3FN));
  // bqi is bound by eqn 0 and reused by eqn 1; bqh is unknown (opaque).
  EXPECT_EQ((*eqns)[1].inputs[0].var, (*eqns)[0].outputs[0]);
  EXPECT_EQ((*eqns)[0].inputs[0].var->aval.kind, Aval::Kind::kOpaque);
  const ParamValue* precision = (*eqns)[3].params.Find("precision");
  ASSERT_NE(precision, nullptr);
  ASSERT_EQ(precision->kind(), ParamValue::Kind::kTuple);
  EXPECT_EQ(precision->items()[0].text(), "Precision.DEFAULT");
  auto dn = (*eqns)[3].params.Get("dimension_numbers");
  ASSERT_TRUE(dn.ok());
  EXPECT_EQ((*dn)->ToString(), "(([3], [0]), ([], []))");

  ClosedJaxpr scope2;
  auto conv = ParseEquations(
      ReadFile(kCorpus + "/048_FRAGMENT_conv_general_dilated_eqn.jaxpr"), "048",
      &scope2);
  ASSERT_TRUE(conv.ok()) << conv.status();
  ASSERT_EQ(conv->size(), 1u);
  EXPECT_TRUE((*conv)[0].inputs.empty());
  auto spec =
      (*conv)[0].params.GetCall("dimension_numbers", "ConvDimensionNumbers");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(*(*spec)->Field("rhs_spec")->AsIntList(),
            (std::vector<int64_t>{3, 2, 0, 1}));
}

TEST_F(CorpusTest, PrinterIsAFixedPointOnEverySample) {
  for (const std::string& path : Files(kCorpus, false)) {
    if (IsFragment(path) || IsLegacy(path)) continue;
    ExpectFixedPoint(path);
  }
}

// The layout engine transcribes JAX's; samples copied verbatim from JAX
// output come back byte for byte. 030 lost its trailing spaces (`iota[...] `)
// when it was copied out of a comment block, so it is compared modulo those.
TEST_F(CorpusTest, PrintingReproducesVerbatimSamples) {
  for (const std::string& path : Files(kCorpus, false)) {
    if (IsFragment(path) || IsLegacy(path)) continue;
    SCOPED_TRACE(path);
    auto file = ParseJaxprFile(path);
    ASSERT_TRUE(file.ok());
    std::string printed = PrintJaxprFile(*file) + "\n";
    std::string original = ReadFile(path);
    if (path.find("/030_") != std::string::npos) {
      std::string stripped;
      for (absl::string_view line : absl::StrSplit(printed, '\n')) {
        absl::StrAppend(&stripped, absl::StripTrailingAsciiWhitespace(line),
                        "\n");
      }
      printed = stripped.substr(0, stripped.size() - 1);
    }
    EXPECT_EQ(printed, original);
  }
}

std::set<std::string> Primitives(const JaxprFile& file) {
  std::set<std::string> out;
  ForEachEqn(*file.main, [&](const Eqn& e) { out.insert(e.primitive); });
  return out;
}

// INDEX.md lists the primitives each sample uses (written independently
// of this parser). Rows whose list is prose, not names, are skipped.
TEST_F(CorpusTest, PrimitiveSetsMatchIndex) {
  const std::string index = ReadFile(kCorpus + "/INDEX.md");
  int compared = 0;
  for (absl::string_view line : absl::StrSplit(index, '\n')) {
    if (!absl::StartsWith(line, "| 0")) continue;
    std::vector<std::string> cols = absl::StrSplit(line, '|');
    if (cols.size() < 6) continue;
    const std::string name(absl::StripAsciiWhitespace(cols[1]));
    const std::string prims(absl::StripAsciiWhitespace(cols[4]));
    const std::string path = kCorpus + "/" + name;
    if (IsFragment(path) || IsLegacy(path)) continue;
    if (prims.find_first_of("(/\"") != std::string::npos) continue;
    std::set<std::string> expected;
    for (absl::string_view p : absl::StrSplit(prims, ',')) {
      expected.insert(std::string(absl::StripAsciiWhitespace(p)));
    }
    auto file = ParseJaxprFile(path);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_EQ(Primitives(*file), expected) << name;
    ++compared;
  }
  EXPECT_GE(compared, 45);
}

TEST(ConformanceVectorsTest, EveryBundleParsesAndRoundTrips) {
  const auto files = Files(kVectors, true);
  ASSERT_GT(files.size(), 100u);
  for (const std::string& path : files) {
    auto file = ParseJaxprFile(path);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_TRUE(file->Header("source").has_value()) << path;
    const std::string printed = PrintJaxprFile(*file);
    auto again = ParseJaxprText(printed, path);
    ASSERT_TRUE(again.ok()) << again.status();
    std::string diff;
    EXPECT_TRUE(StructurallyEqual(*file, *again, &diff)) << path << diff;
  }
}

}  // namespace
}  // namespace jax2onnx::jaxpr
