// Parity dashboard: aggregation, rendering, and a run over a small
// generated corpus. The flip rule has its own binary (flip_rule.cc).
#include "api/parity.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include "api/router.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jax2onnx::api {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

ParityCase Case(const std::string& name, std::vector<std::string> prims,
                bool legacy, bool ir, Verdict verdict) {
  ParityCase c;
  c.name = name;
  c.bundle = name + ".jaxpr";
  c.primitives = std::move(prims);
  c.legacy.passed = legacy;
  c.ir.passed = ir;
  if (!legacy) {
    c.legacy.stage = "convert";
    c.legacy.error = "primitive 'mul' has no legacy-pipeline lowering";
  }
  if (!ir) {
    c.ir.stage = "compare";
    c.ir.error = "output 0 differs";
  }
  c.verdict = verdict;
  return c;
}

// Four cases whose counts are easy to tally by hand:
//   a: add        both pass, IDENTICAL
//   b: add, mul   both pass, EQUIVALENT
//   c: mul        IR only (legacy fails to convert, the error quotes 'mul'),
//                 LEGACY_FAILED
//   d: exp        legacy only (IR numbers differ, no primitive quoted),
//                 DIFFERENT
ParityReport Crafted() {
  ParityReport r;
  r.cases.push_back(Case("a", {"add"}, true, true, Verdict::kIdentical));
  r.cases.push_back(
      Case("b", {"add", "mul"}, true, true, Verdict::kEquivalent));
  r.cases.push_back(Case("c", {"mul"}, false, true, Verdict::kLegacyFailed));
  r.cases.push_back(Case("d", {"exp"}, true, false, Verdict::kDifferent));
  return r;
}

TEST(ParityAggregateTest, TotalsAndSummaryLine) {
  const ParityReport r = Crafted();
  // legacy passes a, b, d = 3; IR passes a, b, c = 3; both a, b = 2.
  EXPECT_EQ(r.SummaryLine(),
            "parity: 4 cases; legacy 3 pass, ir 3 pass, both 2; identical 1, "
            "equivalent 1, different 1");
  const PrimitiveParity t = r.Totals();
  EXPECT_EQ(t.ir_only, 1);          // c
  EXPECT_EQ(t.legacy_only, 1);      // d
  EXPECT_EQ(t.legacy_failures, 1);  // c
  EXPECT_EQ(t.ir_failures, 1);      // d, charged to no primitive
}

TEST(ParityAggregateTest, CasesCountUnderEveryPrimitiveTheyUse) {
  const auto rows = Crafted().ByPrimitive();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].primitive, "add");  // a, b
  EXPECT_EQ(rows[0].cases, 2);
  EXPECT_EQ(rows[0].both_pass, 2);
  EXPECT_EQ(rows[0].identical, 1);
  EXPECT_EQ(rows[0].equivalent, 1);
  EXPECT_EQ(rows[1].primitive, "exp");  // d
  EXPECT_EQ(rows[1].different, 1);
  // d's IR error quotes no primitive: it is the case's failure, not exp's.
  EXPECT_EQ(rows[1].ir_failures, 0);
  EXPECT_EQ(rows[1].legacy_only, 0);
  EXPECT_EQ(rows[2].primitive, "mul");  // b, c
  EXPECT_EQ(rows[2].cases, 2);
  EXPECT_EQ(rows[2].legacy_pass, 1);
  EXPECT_EQ(rows[2].ir_pass, 2);
  EXPECT_EQ(rows[2].legacy_failures, 1);  // c quotes 'mul'
  EXPECT_EQ(rows[2].ir_only, 1);
  EXPECT_THAT(rows[2].charged_cases, ElementsAre("c"));
  EXPECT_THAT(Crafted().UnattributedFailures(), ElementsAre("d"));
}

TEST(ParityAggregateTest, AFailureIsChargedToTheInnermostQuotedPrimitive) {
  const std::vector<std::string> prims = {"add", "jit", "scatter-add"};
  EXPECT_EQ(AttributedPrimitive("equation #2 'jit' at line 3:5: equation #0 "
                                "'scatter-add': indices out of range",
                                prims),
            "scatter-add");
  EXPECT_EQ(AttributedPrimitive("unknown primitive 'add'", prims), "add");
  // Unquoted mentions and primitives the case does not use are not charged.
  EXPECT_EQ(AttributedPrimitive("add failed in 'mul'", prims), "");
  EXPECT_EQ(AttributedPrimitive("output 0: 3 of 4 elements differ", prims), "");

  // A case with three primitives failing in one of them charges only it.
  ParityReport r;
  ParityCase c = Case("e", prims, true, false, Verdict::kIrFailed);
  c.ir.error = "equation #1 'jit': equation #0 'scatter-add': refused";
  c.ir_xfail = true;
  r.cases.push_back(c);
  const auto rows = r.ByPrimitive();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].ir_failures, 0);  // add
  EXPECT_EQ(rows[1].ir_failures, 0);  // jit
  EXPECT_EQ(rows[2].primitive, "scatter-add");
  EXPECT_EQ(rows[2].ir_failures, 1);
  EXPECT_EQ(rows[2].xfail, 1);
  EXPECT_EQ(rows[2].legacy_only, 1);
  EXPECT_EQ(rows[0].legacy_only, 0);
  EXPECT_TRUE(r.UnattributedFailures().empty());
}

TEST(ParityCoverageTest, JaxPrimitiveListKnowsWhatIsLowered) {
  const std::vector<PrimitiveCoverage> coverage = JaxPrimitiveCoverage();
  ASSERT_GT(coverage.size(), 200u);  // the checked-in list, embedded
  auto find = [&](const std::string& name) -> const PrimitiveCoverage* {
    for (const PrimitiveCoverage& p : coverage) {
      if (p.primitive == name) return &p;
    }
    return nullptr;
  };
  const PrimitiveCoverage* add = find("add");
  ASSERT_NE(add, nullptr);
  EXPECT_TRUE(add->legacy);
  EXPECT_TRUE(add->ir);
  EXPECT_EQ(add->defined_in, "lax/lax.py");
  // Checked against the registry, not hard-coded: every listed primitive the
  // registry lacks is reported as not lowered.
  const PrimitiveCoverage* new_ref = find("new_ref");
  ASSERT_NE(new_ref, nullptr);
  EXPECT_TRUE(new_ref->discharged);
  EXPECT_FALSE(add->discharged);
  const PrimitiveCoverage* pjit = find("pjit");
  ASSERT_NE(pjit, nullptr);
  EXPECT_THAT(pjit->defined_in, HasSubstr("jax-v0.4.30"));
  int not_lowered = 0;
  for (const PrimitiveCoverage& p : coverage) not_lowered += !p.legacy && !p.ir;
  EXPECT_GT(not_lowered, 0);
  EXPECT_LT(not_lowered, static_cast<int>(coverage.size()));
}

TEST(ParityCoverageTest, CountsTheProgramsThatBindEachPrimitive) {
  const std::filesystem::path root =
      std::filesystem::path(::testing::TempDir()) /
      ("parity_uses_" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "sub");
  auto write = [&](const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p) << text;
  };
  // Two programs bind `eig` (one twice, counted once), one binds `schur`;
  // `let jaxpr = {` and the comment's " = eig" are not equations.
  write(root / "a.jaxpr",
        "# note: x = eig y\n"
        "{ lambda ; a:f32[2,2]. let\n"
        "    b:c64[2] c:c64[2,2] = eig[compute_left_eigenvectors=False] a\n"
        "    d:c64[2] = eig[compute_left_eigenvectors=False] a\n"
        "  in (b,) }\n");
  write(root / "sub" / "b.jaxpr",
        "let jaxpr = { lambda ; a:f32[2,2]. let\n"
        "    b:f32[2,2] c:f32[2,2] = schur a\n"
        "    d:c64[2] e:c64[2,2] = eig a\n"
        "    f:f32[2,2] = scatter-add[dimension_numbers=x] b c d\n"
        "  in (b,) }\n");
  write(root / "sub" / "c.txt", "b = eig a\n");  // not a .jaxpr
  const std::map<std::string, int> uses = CountPrimitiveUses(
      {root.string(), (root / "missing").string()});
  EXPECT_EQ(uses.at("eig"), 2);
  EXPECT_EQ(uses.at("schur"), 1);
  EXPECT_EQ(uses.at("scatter-add"), 1);
  EXPECT_EQ(uses.count("y"), 0u);
  EXPECT_EQ(uses.count("{"), 0u);
  std::filesystem::remove_all(root);
}

TEST(ParityCoverageTest, NextPortsListsTheMostUsedFirst) {
  ParityReport r = Crafted();
  auto row = [](const std::string& name, int uses) {
    PrimitiveCoverage p;
    p.primitive = name;
    p.defined_in = "lax/x.py";
    p.uses = uses;
    return p;
  };
  PrimitiveCoverage state = row("new_ref", 9);
  state.discharged = true;  // handled by the state discharge: not a port
  r.coverage = {row("aaa", 1), row("bbb", 7), row("ccc", 0), row("ddd", 7),
                state};
  r.usage_roots = {"testdata", "../shared/corpus/real"};
  const std::string md = ParityMarkdown(r);
  EXPECT_THAT(md, HasSubstr("`bbb` (lax/x.py; 7 programs), `ddd` (lax/x.py; "
                            "7 programs), `aaa` (lax/x.py; 1 program), `ccc` "
                            "(lax/x.py; 0 programs)"));
  EXPECT_THAT(md, HasSubstr("testdata, ../shared/corpus/real"));
  EXPECT_THAT(md, HasSubstr("4 of the 5 primitives"));
  EXPECT_THAT(md, HasSubstr("so not ports: `new_ref` (9)"));
  const std::string html = ParityHtml(r);
  EXPECT_THAT(html, HasSubstr("<code>bbb</code> (7), <code>ddd</code> (7), "
                              "<code>aaa</code> (1), <code>ccc</code> (0)"));
}

TEST(ParityAggregateTest, FlipRuleNeedsEveryLegacyPassToPassInIr) {
  ParityReport r = Crafted();
  EXPECT_FALSE(r.IrCoversLegacy());
  EXPECT_THAT(r.LegacyOnlyCases(), ElementsAre("d"));
  r.cases[3].ir.passed = true;
  EXPECT_TRUE(r.IrCoversLegacy());
  // IR-only passes do not block the flip.
  EXPECT_FALSE(r.cases[2].legacy.passed);
}

TEST(ParityRenderTest, MarkdownHasSummaryTableAndFailures) {
  const std::string md = ParityMarkdown(Crafted());
  EXPECT_THAT(md, HasSubstr(Crafted().SummaryLine()));
  EXPECT_THAT(md, HasSubstr("| primitive | cases | legacy failures | IR "
                            "failures | xfail | identical | equivalent | "
                            "different | IR-only | legacy-only |"));
  EXPECT_THAT(md, HasSubstr("| mul | 2 | 1 | 0 | 0 | 0 | 1 | 0 | 1 | 0 |"));
  EXPECT_THAT(md, HasSubstr("| exp | 1 | 0 | 0 | 0 | 0 | 0 | 1 | 0 | 0 |"));
  EXPECT_THAT(md, HasSubstr("- `c` (LEGACY_FAILED; charged to legacy: mul): "
                            "legacy convert: primitive 'mul' has no"));
  EXPECT_THAT(md, HasSubstr("- `d` (DIFFERENT; charged to IR: the case): ir "
                            "compare: output 0 differs"));
  // c under mul, with a link to its bundle; d under the case-only list.
  EXPECT_THAT(md, HasSubstr("### mul\n\n- [`c`](c.jaxpr) (LEGACY_FAILED): "));
  EXPECT_THAT(md, HasSubstr("## Failures not charged to a primitive\n\n- "
                            "[`d`](d.jaxpr) (DIFFERENT): "));
  EXPECT_THAT(md, Not(HasSubstr("- `a`")));
  EXPECT_THAT(md, HasSubstr("does not hold"));
}

TEST(ParityRenderTest, HtmlIsSelfContainedWithAnSvgChart) {
  ParityReport r = Crafted();
  r.cases[0].name = "<script>alert(1)</script>";
  r.cases[0].legacy.passed = false;  // so it is listed (escaped)
  const std::string html = ParityHtml(r);
  EXPECT_THAT(html, HasSubstr("<svg"));
  EXPECT_THAT(html, HasSubstr("</svg>"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  // Links go only to the bundle files, relative to the page.
  EXPECT_THAT(html, Not(HasSubstr("href=\"http")));
  EXPECT_THAT(html, Not(HasSubstr("href=\"/")));
  EXPECT_THAT(html, Not(HasSubstr("@import")));
  EXPECT_THAT(html, Not(HasSubstr("url(")));
  // Two bars per primitive: legacy and IR.
  size_t bars = 0;
  for (size_t p = html.find("height=\"9\""); p != std::string::npos;
       p = html.find("height=\"9\"", p + 1)) {
    ++bars;
  }
  EXPECT_EQ(bars, 2 * r.ByPrimitive().size());
}

TEST(ParityRenderTest, JsonIsStable) {
  const nlohmann::json j = ParityToJson(Crafted());
  EXPECT_EQ(j["schema"], "jax2onnx.parity/1");
  EXPECT_EQ(j["summary_line"], Crafted().SummaryLine());
  EXPECT_EQ(j["totals"]["cases"], 4);
  EXPECT_EQ(j["ir_covers_legacy"], false);
  EXPECT_EQ(j["legacy_only_cases"], nlohmann::json::array({"d"}));
  EXPECT_EQ(j["primitives"].size(), 3u);
  EXPECT_EQ(j["cases"][3]["verdict"], "DIFFERENT");
  EXPECT_EQ(j["cases"][3]["ir"]["stage"], "compare");
  EXPECT_EQ(ParityToJson(Crafted()).dump(), j.dump());  // deterministic
}

// --- Runs
// ----------------------------------------------------------------------

class ParityRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!OrtRunner::Shared().IsAvailable(&reason)) {
      GTEST_SKIP() << "ONNX Runtime unavailable: " << reason;
    }
  }
};

void Write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST_F(ParityRunTest, SmallCorpusEndToEnd) {
  const auto root = std::filesystem::temp_directory_path() /
                    ("parity_corpus_" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  const auto dir = root / "mini";
  Write(dir / "a" / "neg.jaxpr",
        "# source: hand-written in JAX 0.10 print style\n"
        "{ lambda ; a:f32[2,3]. let b:f32[2,3] = neg a in (b,) }\n");
  Write(dir / "a" / "pjit_exp.jaxpr",
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[2,3] = pjit[\n"
        "      name=inner\n"
        "      jaxpr={ lambda ; c:f32[2,3]. let d:f32[2,3] = exp c in (d,) }\n"
        "    ] a\n"
        "  in (b,) }\n");
  Write(dir / "b" / "int.jaxpr",
        "{ lambda ; a:i32[4]. let b:i32[4] = neg a in (b,) }\n");
  Write(dir / "b" / "unknown.jaxpr",
        "{ lambda ; a:i32[4]. let b:i32[4] = no_such_primitive a in (b,) }\n");
  Write(dir / "b" / "broken.jaxpr", "{ lambda ; a:f32[. let\n");

  ParityOptions options;
  int progress_calls = 0;
  options.progress = [&](int done, int, const std::string&) {
    EXPECT_EQ(done, ++progress_calls);
  };
  auto report = RunParity({dir.string()}, options, OrtRunner::Shared());
  ASSERT_TRUE(report.ok()) << report.status();
  std::vector<std::string> names;
  for (const ParityCase& c : report->cases) names.push_back(c.name);
  // f32-only bundles without npz get [f64] variants; the i32 ones and the
  // unparsable one do not.
  EXPECT_THAT(names,
              ElementsAre("mini/a/neg", "mini/a/neg[f64]", "mini/a/pjit_exp",
                          "mini/a/pjit_exp[f64]", "mini/b/broken", "mini/b/int",
                          "mini/b/unknown"));
  EXPECT_EQ(progress_calls, 7);

  const ParityCase& pjit = report->cases[2];
  EXPECT_THAT(pjit.primitives, ElementsAre("exp", "pjit"));  // nested too
  const ParityCase& broken = report->cases[4];
  EXPECT_EQ(broken.verdict, Verdict::kBothFailed);
  EXPECT_EQ(broken.legacy.stage, "load");
  const ParityCase& unknown = report->cases[6];
  EXPECT_EQ(unknown.verdict, Verdict::kBothFailed);
  EXPECT_EQ(unknown.legacy.stage, "convert");
  EXPECT_THAT(unknown.legacy.error, HasSubstr("no_such_primitive"));
  EXPECT_EQ(AttributedPrimitive(unknown.legacy.error, unknown.primitives),
            "no_such_primitive");
  EXPECT_FALSE(report->coverage.empty());  // the not-lowered section's input

  for (int i : {0, 1, 5}) {  // neg is in both pipelines
    const ParityCase& c = report->cases[i];
    EXPECT_TRUE(c.legacy.passed) << c.name << ": " << c.legacy.error;
    EXPECT_TRUE(c.ir.passed) << c.name << ": " << c.ir.error;
    EXPECT_THAT(c.verdict,
                ::testing::AnyOf(Verdict::kIdentical, Verdict::kEquivalent))
        << c.name << ": " << c.reason;
  }

  const auto out = root / "out";
  ASSERT_TRUE(WriteParityDashboard(*report, out.string()).ok());
  for (const char* f : {"parity.json", "PARITY.md", "index.html"}) {
    EXPECT_TRUE(std::filesystem::exists(out / f)) << f;
  }
  std::ifstream in(out / "parity.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["totals"]["cases"], 7);
  EXPECT_TRUE(std::regex_match(
      std::string(j["summary_line"]),
      std::regex("parity: 7 cases; legacy \\d+ pass, ir \\d+ pass, both "
                 "\\d+; identical \\d+, equivalent \\d+, different \\d+")));
  std::filesystem::remove_all(root);
}

TEST_F(ParityRunTest, Opset17VariantsAreCasesOfTheirOwn) {
  const auto root = std::filesystem::temp_directory_path() /
                    ("parity_opset17_" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  const auto dir = root / "mini";
  Write(dir / "neg.jaxpr",
        "{ lambda ; a:i32[4]. let b:i32[4] = neg a in (b,) }\n");
  // A bundle with its own opset keeps it: no variant.
  Write(dir / "pinned.jaxpr",
        "# opset: 21\n"
        "{ lambda ; a:i32[4]. let b:i32[4] = neg a in (b,) }\n");
  // Marked to fail at opset 17 only: the variant counts as xfail there.
  Write(dir / "marked.jaxpr",
        "# markers: opset17_xfail\n"
        "{ lambda ; a:i32[4]. let b:i32[4] = abs a in (b,) }\n");
  ParityOptions options;
  options.opset17_variants = true;
  auto report = RunParity({dir.string()}, options, OrtRunner::Shared());
  ASSERT_TRUE(report.ok()) << report.status();
  std::vector<std::string> names;
  for (const ParityCase& c : report->cases) names.push_back(c.name);
  EXPECT_THAT(names, ElementsAre("mini/marked", "mini/marked[opset17]",
                                 "mini/neg", "mini/neg[opset17]",
                                 "mini/pinned"));
  EXPECT_FALSE(report->cases[0].ir_xfail);
  EXPECT_TRUE(report->cases[1].ir_xfail);
  EXPECT_TRUE(report->cases[1].legacy_xfail);
  EXPECT_TRUE(report->cases[3].legacy.passed) << report->cases[3].legacy.error;
  EXPECT_TRUE(report->cases[3].ir.passed) << report->cases[3].ir.error;
  EXPECT_THAT(ParityMarkdown(*report, root.string()),
              HasSubstr("Opset 17 (the `[opset17]` cases): 2 cases; legacy 2 "
                        "pass, ir 2 pass."));
  std::filesystem::remove_all(root);
}

TEST_F(ParityRunTest, MissingArgumentIsNotFound) {
  auto report =
      RunParity({"/no/such/dir"}, ParityOptions(), OrtRunner::Shared());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(report.status().message(), HasSubstr("/no/such/dir"));
}

}  // namespace
}  // namespace jax2onnx::api
