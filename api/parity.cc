// Parity dashboard: runs a corpus through ShadowCompare and renders the
// results as JSON, Markdown and a static HTML page (see parity.h).
#include "api/parity.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/bundle_access.h"
#include "api/convert_internal.h"
#include "api/corpus.h"
#include "api/write_model.h"
#include "jaxpr/io/output_guard.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/state/discharge.h"
#include "jaxpr/state/ref_state.h"
#include "jaxpr/text/parser.h"
#include "plugin/registry.h"

namespace jax2onnx::api {
namespace {

namespace fs = std::filesystem;

// docs/parity/jax_primitives.txt, embedded by api/CMakeLists.txt.
constexpr char kJaxPrimitivesList[] =
#include "jax_primitives.inc"
    ;

struct Found {
  std::string path;
  std::string name;
};

std::string StripJaxpr(std::string s) {
  if (absl::EndsWith(s, ".jaxpr")) s.resize(s.size() - 6);
  if (absl::EndsWith(s, ".mlir")) s.resize(s.size() - 5);
  return s;
}

absl::StatusOr<std::vector<Found>> FindCases(
    const std::vector<std::string>& args) {
  std::vector<Found> found;
  for (const std::string& arg : args) {
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      const fs::path dir = fs::path(arg).lexically_normal();
      std::string label = dir.filename().string();
      if (label.empty()) label = dir.parent_path().filename().string();
      std::vector<Found> here;
      for (const auto& entry : fs::recursive_directory_iterator(arg, ec)) {
        // Bundles and StableHLO modules (`.mlir`, `.stablehlo`) alike.
        if (entry.is_regular_file() &&
            (entry.path().extension() == ".jaxpr" ||
             IsStablehloInput(entry.path().string()))) {
          here.push_back(
              {entry.path().string(),
               StripJaxpr(absl::StrCat(
                   label, "/",
                   entry.path().lexically_relative(arg).generic_string()))});
        }
      }
      std::sort(here.begin(), here.end(),
                [](const Found& a, const Found& b) { return a.name < b.name; });
      found.insert(found.end(), here.begin(), here.end());
    } else if (fs::exists(arg, ec)) {
      found.push_back({arg, StripJaxpr(arg)});
    } else {
      return absl::NotFoundError(
          absl::StrCat("parity: no such file or directory: ", arg));
    }
  }
  return found;
}

std::optional<double> HeaderDouble(const jaxpr::JaxprFile& file,
                                   absl::string_view key) {
  auto text = file.Header(key);
  double v;
  if (!text || !absl::SimpleAtod(absl::StripAsciiWhitespace(*text), &v)) {
    return std::nullopt;
  }
  return v;
}

std::vector<std::string> Primitives(const jaxpr::ClosedJaxpr& jaxpr) {
  std::set<std::string> names;
  jaxpr::ForEachEqn(
      jaxpr, [&](const jaxpr::Eqn& eqn) { names.insert(eqn.primitive); });
  return {names.begin(), names.end()};
}

std::string MarkersText(const jaxpr::JaxprFile& file) {
  std::vector<std::string> lines;
  for (const auto& [key, value] : file.header) {
    if (key == "markers") {
      lines.push_back(std::string(absl::StripAsciiWhitespace(value)));
    }
  }
  return absl::StrJoin(lines, "; ");
}

ParityCase RunCase(const std::string& name, const Bundle& bundle,
                   const ParityOptions& options, OrtRunner& runner) {
  ShadowOptions shadow;
  shadow.check.seed = options.seed;
  shadow.check.convert.opset = options.opset;
  if (auto opset = HeaderDouble(bundle.file, "opset")) {
    shadow.check.convert.opset = static_cast<int>(*opset);
  }
  // expect_graph lines describe the graph of the bundle as written: the
  // [opset17] and [f64] variants check numbers only, as the corpus runner
  // does.
  const bool variant =
      absl::EndsWith(name, "[opset17]") || absl::EndsWith(name, "[f64]");
  // `# fuse_attention: true` and `# functions:` globs apply to the IR side
  // (shadow converts the legacy side literal and inlined), as in the corpus
  // runner.
  shadow.check.convert.fuse_attention =
      HeaderFuseAttention(bundle.file).value_or(false);
  if (std::optional<std::string> globs = bundle.file.Header("functions")) {
    for (absl::string_view glob : absl::StrSplit(*globs, ',')) {
      shadow.check.convert.functions.emplace_back(
          absl::StripAsciiWhitespace(glob));
    }
  }
  for (const auto& [key, value] : bundle.file.header) {
    if (variant) break;
    if (key == "expect_graph" || key == "expect_graph_legacy") {
      shadow.expect_graph_legacy.push_back(value);
    }
    if (key == "expect_graph" || key == "expect_graph_ir") {
      shadow.expect_graph_ir.push_back(value);
    }
  }
  ShadowResult r = ShadowCompare(bundle, shadow, &runner);
  ParityCase c;
  c.name = name;
  c.bundle = bundle.jaxpr_path;
  c.primitives = Primitives(bundle.jaxpr());
  c.markers = MarkersText(bundle.file);
  if (auto markers = ParseMarkers(bundle.file); markers.ok()) {
    const bool f64 = absl::EndsWith(name, "[f64]");
    const bool opset17 = absl::EndsWith(name, "[opset17]");
    for (const Marker& m : *markers) {
      const bool variant_xfail = (f64 && m.name == "f64_xfail") ||
                                 (opset17 && m.name == "opset17_xfail");
      c.legacy_xfail |= m.name == "legacy_xfail" || variant_xfail;
      c.ir_xfail |= m.name == "ir_xfail" || variant_xfail;
    }
  }
  c.verdict = r.verdict;
  c.reason = r.reason;
  c.legacy = r.legacy;
  c.ir = r.ir;
  return c;
}

ParityCase LoadFailure(const std::string& name, const std::string& path,
                       const absl::Status& status) {
  ParityCase c;
  c.name = name;
  c.bundle = path;
  c.verdict = Verdict::kBothFailed;
  std::string message(status.message());
  message = message.substr(0, message.find('\n'));
  for (PipelineRun* r : {&c.legacy, &c.ir}) {
    r->stage = "load";
    r->error = message;
  }
  c.reason = "load: " + message;
  return c;
}

// The facts about a case, the same in every row that counts it.
void CountCaseFacts(const ParityCase& c, PrimitiveParity* row) {
  row->cases++;
  row->legacy_pass += c.legacy.passed;
  row->ir_pass += c.ir.passed;
  row->both_pass += c.legacy.passed && c.ir.passed;
  row->identical += c.verdict == Verdict::kIdentical;
  row->equivalent += c.verdict == Verdict::kEquivalent;
  row->different += c.verdict == Verdict::kDifferent;
}

// The failures of `c` charged to the row (and the ir_only/legacy_only they
// make): a side counts only when its flag says its failure is charged here.
void CountChargedFailures(const ParityCase& c, bool legacy_charged,
                          bool ir_charged, PrimitiveParity* row) {
  row->legacy_failures += legacy_charged;
  row->ir_failures += ir_charged;
  row->xfail +=
      (legacy_charged && c.legacy_xfail) || (ir_charged && c.ir_xfail);
  row->ir_only += c.ir.passed && legacy_charged;
  row->legacy_only += c.legacy.passed && ir_charged;
}

// The totals row charges every failure (to "(all)").
void Count(const ParityCase& c, PrimitiveParity* row) {
  CountCaseFacts(c, row);
  CountChargedFailures(c, !c.legacy.passed, !c.ir.passed, row);
}

// The per-primitive count of `c` under `p`: facts about the case, except
// that failures (and the ir_only/legacy_only they make) count only where the
// failing side's error is charged to `p`.
void CountCharged(const ParityCase& c, const std::string& p,
                  PrimitiveParity* row) {
  CountCaseFacts(c, row);
  const bool legacy_charged =
      !c.legacy.passed &&
      AttributedPrimitive(c.legacy.error, c.primitives) == p;
  const bool ir_charged =
      !c.ir.passed && AttributedPrimitive(c.ir.error, c.primitives) == p;
  CountChargedFailures(c, legacy_charged, ir_charged, row);
  if (legacy_charged || ir_charged) row->charged_cases.push_back(c.name);
}

nlohmann::json RowJson(const PrimitiveParity& r) {
  return {{"primitive", r.primitive},
          {"cases", r.cases},
          {"legacy_pass", r.legacy_pass},
          {"ir_pass", r.ir_pass},
          {"both_pass", r.both_pass},
          {"identical", r.identical},
          {"equivalent", r.equivalent},
          {"different", r.different},
          {"ir_only", r.ir_only},
          {"legacy_only", r.legacy_only},
          {"legacy_failures", r.legacy_failures},
          {"ir_failures", r.ir_failures},
          {"xfail", r.xfail},
          {"charged_cases", r.charged_cases}};
}

// Where a page in `page_dir` links to `bundle`: relative to the page when
// both resolve, else the path as found.
std::string BundleLink(const std::string& bundle, const std::string& page_dir) {
  if (page_dir.empty() || bundle.empty()) return bundle;
  std::error_code ec;
  const fs::path from = fs::absolute(page_dir, ec).lexically_normal();
  if (ec) return bundle;
  const fs::path to = fs::absolute(bundle, ec).lexically_normal();
  if (ec) return bundle;
  const fs::path rel = to.lexically_relative(from);
  return rel.empty() ? bundle : rel.generic_string();
}

std::string Charge(const ParityCase& c) {
  std::vector<std::string> parts;
  if (!c.legacy.passed) {
    const std::string p = AttributedPrimitive(c.legacy.error, c.primitives);
    parts.push_back("legacy: " + (p.empty() ? "the case" : p));
  }
  if (!c.ir.passed) {
    const std::string p = AttributedPrimitive(c.ir.error, c.primitives);
    parts.push_back("IR: " + (p.empty() ? "the case" : p));
  }
  return absl::StrJoin(parts, ", ");
}

nlohmann::json RunJson(const PipelineRun& r) {
  return {{"passed", r.passed},
          {"stage", r.stage},
          {"error", r.error},
          {"nodes", r.nodes},
          {"initializers", r.initializers}};
}

std::string FailureLine(const ParityCase& c) {
  std::vector<std::string> parts;
  auto side = [&](absl::string_view which, const PipelineRun& r) {
    if (!r.passed) {
      parts.push_back(absl::StrCat(which, " ", r.stage, ": ", r.error));
    }
  };
  side("legacy", c.legacy);
  side("ir", c.ir);
  if (c.verdict == Verdict::kDifferent) {
    parts.push_back(absl::StrCat("DIFFERENT: ", c.reason));
  }
  std::string line = absl::StrJoin(parts, "; ");
  if (!c.markers.empty()) absl::StrAppend(&line, " [markers: ", c.markers, "]");
  return line;
}

// IR nodes / legacy nodes ("0.62"), or "-" when either did not convert.
std::string NodeRatio(const ParityCase& c) {
  if (!c.legacy.converted || !c.ir.converted || c.legacy.nodes == 0) {
    return "-";
  }
  return absl::StrFormat("%.2f", static_cast<double>(c.ir.nodes) /
                                     static_cast<double>(c.legacy.nodes));
}

// Node totals over the cases both pipelines converted.
std::string NodeTotals(const ParityReport& report) {
  int64_t legacy = 0, ir = 0, both = 0;
  for (const ParityCase& c : report.cases) {
    if (!c.legacy.converted || !c.ir.converted) continue;
    ++both;
    legacy += c.legacy.nodes;
    ir += c.ir.nodes;
  }
  return absl::StrFormat(
      "%d cases converted by both pipelines: %d legacy nodes, %d IR nodes "
      "(IR/legacy %.2f)",
      both, legacy, ir,
      legacy == 0 ? 0.0
                  : static_cast<double>(ir) / static_cast<double>(legacy));
}

bool Failing(const ParityCase& c) {
  return !c.legacy.passed || !c.ir.passed || c.verdict == Verdict::kDifferent;
}

// Markdown table cells cannot hold '|' or newlines.
std::string Cell(absl::string_view s) {
  std::string out = absl::StrReplaceAll(s, {{"|", "\\|"}, {"\n", " "}});
  if (out.size() > 300) out = out.substr(0, 297) + "...";
  return out;
}

std::string Html(absl::string_view s) {
  return absl::StrReplaceAll(
      s, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

}  // namespace

PrimitiveParity ParityReport::Totals() const {
  PrimitiveParity all;
  all.primitive = "(all)";
  for (const ParityCase& c : cases) Count(c, &all);
  return all;
}

std::vector<PrimitiveParity> ParityReport::ByPrimitive() const {
  std::map<std::string, PrimitiveParity> rows;
  for (const ParityCase& c : cases) {
    for (const std::string& p : c.primitives) {
      PrimitiveParity& row = rows[p];
      row.primitive = p;
      CountCharged(c, p, &row);
    }
  }
  std::vector<PrimitiveParity> out;
  for (auto& [name, row] : rows) out.push_back(row);
  return out;
}

std::vector<std::string> ParityReport::UnattributedFailures() const {
  std::vector<std::string> names;
  for (const ParityCase& c : cases) {
    const bool legacy_unattributed =
        !c.legacy.passed &&
        AttributedPrimitive(c.legacy.error, c.primitives).empty();
    const bool ir_unattributed =
        !c.ir.passed && AttributedPrimitive(c.ir.error, c.primitives).empty();
    if (legacy_unattributed || ir_unattributed) names.push_back(c.name);
  }
  return names;
}

std::vector<PrimitiveCoverage> JaxPrimitiveCoverage() {
  RegisterAllLowerings();
  const plugin::Registry& registry = plugin::Registry::Global();
  std::map<std::string, PrimitiveCoverage> rows;
  for (absl::string_view line : absl::StrSplit(kJaxPrimitivesList, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    const size_t hash = line.find('#');
    PrimitiveCoverage row;
    row.primitive =
        std::string(absl::StripAsciiWhitespace(line.substr(0, hash)));
    if (hash != absl::string_view::npos) {
      row.defined_in =
          std::string(absl::StripAsciiWhitespace(line.substr(hash + 1)));
    }
    if (const plugin::PrimitiveEntry* e = registry.Find(row.primitive)) {
      row.legacy = e->legacy != nullptr;
      row.ir = e->ir != nullptr;
    }
    row.discharged = jaxpr::IsStatePrimitive(row.primitive);
    rows[row.primitive] = row;
  }
  std::vector<PrimitiveCoverage> out;
  for (auto& [name, row] : rows) out.push_back(std::move(row));
  return out;
}

namespace {

// Adds to `seen` the primitive of every equation in one program's text.
void CollectBoundPrimitives(absl::string_view text,
                            std::set<std::string>* seen) {
  auto is_name_char = [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           c == '-';
  };
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "#")) {
      continue;
    }
    for (size_t at = line.find(" = "); at != absl::string_view::npos;
         at = line.find(" = ", at + 1)) {
      size_t end = at + 3;
      while (end < line.size() && is_name_char(line[end])) ++end;
      if (end == at + 3) continue;  // `let jaxpr = { lambda`
      if (end < line.size() && line[end] != ' ' && line[end] != '[') continue;
      seen->insert(std::string(line.substr(at + 3, end - at - 3)));
    }
  }
}

}  // namespace

std::map<std::string, int> CountPrimitiveUses(
    const std::vector<std::string>& roots) {
  std::vector<fs::path> files;
  for (const std::string& root : roots) {
    std::error_code ec;
    if (fs::is_regular_file(root, ec)) {
      files.emplace_back(root);
      continue;
    }
    if (!fs::is_directory(root, ec)) continue;
    for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end;
         it.increment(ec)) {
      if (it->is_regular_file(ec) && it->path().extension() == ".jaxpr") {
        files.push_back(it->path());
      }
    }
  }
  std::map<std::string, int> counts;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    std::set<std::string> seen;
    CollectBoundPrimitives(text.str(), &seen);
    for (const std::string& p : seen) ++counts[p];
  }
  return counts;
}

namespace {

// The primitives no pipeline lowers, most used first (then by name).
std::vector<const PrimitiveCoverage*> NotLoweredByUse(
    const ParityReport& report) {
  std::vector<const PrimitiveCoverage*> none;
  for (const PrimitiveCoverage& p : report.coverage) {
    if (!p.legacy && !p.ir && !p.discharged) none.push_back(&p);
  }
  std::stable_sort(none.begin(), none.end(),
                   [](const PrimitiveCoverage* a, const PrimitiveCoverage* b) {
                     if (a->uses != b->uses) return a->uses > b->uses;
                     return a->primitive < b->primitive;
                   });
  return none;
}

std::string UsageRootsText(const ParityReport& report) {
  return report.usage_roots.empty() ? std::string("the parity inputs")
                                    : absl::StrJoin(report.usage_roots, ", ");
}

}  // namespace

std::string AttributedPrimitive(absl::string_view error,
                                const std::vector<std::string>& primitives) {
  std::string best;
  size_t best_pos = 0;
  for (const std::string& p : primitives) {
    const size_t pos = error.rfind(absl::StrCat("'", p, "'"));
    if (pos == absl::string_view::npos) continue;
    if (best.empty() || pos > best_pos) {
      best = p;
      best_pos = pos;
    }
  }
  return best;
}

std::string ParityReport::SummaryLine() const {
  const PrimitiveParity t = Totals();
  return absl::StrCat("parity: ", t.cases, " cases; legacy ", t.legacy_pass,
                      " pass, ir ", t.ir_pass, " pass, both ", t.both_pass,
                      "; identical ", t.identical, ", equivalent ",
                      t.equivalent, ", different ", t.different);
}

bool ParityReport::IrCoversLegacy() const { return LegacyOnlyCases().empty(); }

std::vector<std::string> ParityReport::LegacyOnlyCases() const {
  std::vector<std::string> names;
  for (const ParityCase& c : cases) {
    if (c.legacy.passed && !c.ir.passed) names.push_back(c.name);
  }
  return names;
}

absl::StatusOr<ParityReport> RunParity(const std::vector<std::string>& args,
                                       const ParityOptions& options,
                                       OrtRunner& runner) {
  auto found = FindCases(args);
  if (!found.ok()) return found.status();
  std::string why;
  if (!runner.IsAvailable(&why)) {
    return absl::FailedPreconditionError(
        absl::StrCat("parity needs ONNX Runtime: ", why));
  }
  ParityReport report;
  if (auto v = runner.OrtVersion(); v.ok()) report.ort_version = *v;
  report.coverage = JaxPrimitiveCoverage();
  report.usage_roots = args;
  for (const std::string& root : options.usage_roots) {
    std::error_code ec;
    if (std::filesystem::exists(root, ec)) report.usage_roots.push_back(root);
  }
  const std::map<std::string, int> uses =
      CountPrimitiveUses(report.usage_roots);
  for (PrimitiveCoverage& p : report.coverage) {
    auto it = uses.find(p.primitive);
    p.uses = it == uses.end() ? 0 : it->second;
  }
  int total = static_cast<int>(found->size());
  auto add = [&](ParityCase c) {
    const std::string name = c.name;
    report.cases.push_back(std::move(c));
    if (options.progress) {
      options.progress(static_cast<int>(report.cases.size()), total, name);
    }
  };
  for (const Found& f : *found) {
    auto bundle = LoadBundle(f.path);
    if (!bundle.ok()) {
      add(LoadFailure(f.name, f.path, bundle.status()));
      continue;
    }
    add(RunCase(f.name, *bundle, options, runner));
    if (options.opset17_variants && options.opset != 17 &&
        !HeaderDouble(bundle->file, "opset").has_value()) {
      ++total;
      ParityOptions at17 = options;
      at17.opset = 17;
      add(RunCase(f.name + "[opset17]", *bundle, at17, runner));
    }

    // The f64 variant promotes the jaxpr text; StableHLO modules have none.
    if (!options.f64_variants || !bundle->npz_path.empty() ||
        !AllF32Signature(bundle->jaxpr()) || IsStablehloInput(f.path)) {
      continue;
    }
    auto markers = ParseMarkers(bundle->file);
    bool no_f64 = false;
    if (markers.ok()) {
      for (const Marker& m : *markers) no_f64 |= m.name == "no_f64";
    }
    if (no_f64) continue;
    ++total;
    const std::string f64_name = f.name + "[f64]";
    std::ifstream in(f.path);
    std::stringstream text;
    text << in.rdbuf();
    auto file =
        jaxpr::ParseJaxprText(PromoteF32ToF64(text.str()), f.path + "[f64]");
    if (!file.ok()) {
      add(LoadFailure(f64_name, f.path, file.status()));
      continue;
    }
    Bundle f64;
    f64.name = bundle->name + "[f64]";
    f64.jaxpr_path = bundle->jaxpr_path;
    f64.file = *std::move(file);
    // As AssembleBundle does: refs become SSA values before any use.
    if (absl::Status s = jaxpr::DischargeState(&f64.file); !s.ok()) {
      add(LoadFailure(f64_name, f.path, s));
      continue;
    }
    f64.rtol = HeaderDouble(f64.file, "f64_rtol");
    f64.atol = HeaderDouble(f64.file, "f64_atol");
    f64.markers = bundle->markers;
    add(RunCase(f64_name, f64, options, runner));
  }
  return report;
}

nlohmann::json ParityToJson(const ParityReport& report) {
  nlohmann::json j;
  j["schema"] = "jax2onnx.parity/1";
  j["summary_line"] = report.SummaryLine();
  j["ort_version"] = report.ort_version;
  j["totals"] = RowJson(report.Totals());
  j["ir_covers_legacy"] = report.IrCoversLegacy();
  j["legacy_only_cases"] = report.LegacyOnlyCases();
  nlohmann::json rows = nlohmann::json::array();
  for (const PrimitiveParity& r : report.ByPrimitive()) {
    rows.push_back(RowJson(r));
  }
  j["primitives"] = rows;
  nlohmann::json coverage = nlohmann::json::array();
  for (const PrimitiveCoverage& p : report.coverage) {
    coverage.push_back({{"primitive", p.primitive},
                        {"defined_in", p.defined_in},
                        {"legacy", p.legacy},
                        {"ir", p.ir},
                        {"discharged", p.discharged},
                        {"uses", p.uses}});
  }
  j["jax_primitives"] = coverage;
  j["unattributed_failures"] = report.UnattributedFailures();
  nlohmann::json cases = nlohmann::json::array();
  for (const ParityCase& c : report.cases) {
    cases.push_back({{"name", c.name},
                     {"bundle", c.bundle},
                     {"primitives", c.primitives},
                     {"markers", c.markers},
                     {"legacy_xfail", c.legacy_xfail},
                     {"ir_xfail", c.ir_xfail},
                     {"charged_to", Charge(c)},
                     {"verdict", VerdictName(c.verdict)},
                     {"reason", c.reason},
                     {"legacy", RunJson(c.legacy)},
                     {"ir", RunJson(c.ir)}});
  }
  j["cases"] = cases;
  return j;
}

std::string ParityMarkdown(const ParityReport& report,
                           const std::string& page_dir) {
  const PrimitiveParity t = report.Totals();
  std::string md = "# Parity: legacy vs IR pipeline\n\n";
  absl::StrAppend(&md, "`", report.SummaryLine(), "`\n\n");
  std::map<Verdict, int> verdicts;
  for (const ParityCase& c : report.cases) verdicts[c.verdict]++;
  std::vector<std::string> vparts;
  for (const auto& [v, n] : verdicts) {
    vparts.push_back(absl::StrCat(VerdictName(v), " ", n));
  }
  absl::StrAppend(&md, "Verdicts: ", absl::StrJoin(vparts, ", "), ". ",
                  "IR-only passes: ", t.ir_only,
                  ", legacy-only passes: ", t.legacy_only, ". ");
  absl::StrAppend(&md, "Flip rule (IR passes every case legacy passes): **",
                  report.IrCoversLegacy() ? "holds" : "does not hold", "**.",
                  report.ort_version.empty()
                      ? ""
                      : absl::StrCat(" ONNX Runtime ", report.ort_version, "."),
                  "\n\n");
  int at17 = 0, at17_legacy = 0, at17_ir = 0;
  for (const ParityCase& c : report.cases) {
    if (!absl::EndsWith(c.name, "[opset17]")) continue;
    ++at17;
    at17_legacy += c.legacy.passed;
    at17_ir += c.ir.passed;
  }
  if (at17 > 0) {
    absl::StrAppend(&md, "Opset 17 (the `[opset17]` cases): ", at17,
                    " cases; legacy ", at17_legacy, " pass, ir ", at17_ir,
                    " pass.\n\n");
  }
  absl::StrAppend(
      &md,
      "A case passes for a pipeline when it converts, runs in ONNX Runtime "
      "and matches the oracle (and its `expect_graph` lines hold). A case "
      "counts under every primitive its jaxpr uses (nested jaxprs included), "
      "but a failure is charged only to the primitive its error quotes (the "
      "innermost one), else to the case alone. See "
      "docs/shadow_and_parity.md.\n\n");
  if (!report.coverage.empty()) {
    std::set<std::string> used;
    for (const ParityCase& c : report.cases) {
      used.insert(c.primitives.begin(), c.primitives.end());
    }
    std::vector<std::string> none, one_side, untested;
    for (const PrimitiveCoverage* p : NotLoweredByUse(report)) {
      none.push_back(absl::StrCat(
          "`", p->primitive, "` (",
          p->defined_in.empty() ? "" : absl::StrCat(p->defined_in, "; "),
          p->uses, p->uses == 1 ? " program)" : " programs)"));
    }
    std::vector<std::string> discharged;
    for (const PrimitiveCoverage& p : report.coverage) {
      if (p.discharged && !p.legacy && !p.ir) {
        discharged.push_back(absl::StrCat("`", p.primitive, "` (", p.uses,
                                          ")"));
      } else if (!p.legacy && !p.ir) {
        continue;
      } else if (p.legacy != p.ir) {
        one_side.push_back(absl::StrCat("`", p.primitive, "` (",
                                        p.ir ? "IR" : "legacy", " only)"));
      } else if (!used.contains(p.primitive)) {
        untested.push_back(absl::StrCat("`", p.primitive, "`"));
      }
    }
    absl::StrAppend(
        &md, "## Next ports: JAX primitives not lowered yet\n\n", none.size(),
        " of the ", report.coverage.size(),
        " primitives in JAX's list (docs/parity/jax_primitives.txt) have no "
        "lowering in either pipeline. Most used first: the count is of the "
        "programs (.jaxpr files under ",
        UsageRootsText(report), ") that bind the primitive.\n\n",
        none.empty() ? "None." : absl::StrJoin(none, ", "), "\n\n");
    if (!discharged.empty()) {
      absl::StrAppend(&md,
                      "Handled before lowering by the state discharge "
                      "(jaxpr/state/discharge.h), so not ports: ",
                      absl::StrJoin(discharged, ", "), "\n\n");
    }
    if (!one_side.empty()) {
      absl::StrAppend(&md, "Lowered in one pipeline only: ",
                      absl::StrJoin(one_side, ", "), "\n\n");
    }
    if (!untested.empty()) {
      absl::StrAppend(&md, "Lowered but used by no case here (add a bundle): ",
                      absl::StrJoin(untested, ", "), "\n\n");
    }
  }
  const std::vector<PrimitiveParity> rows = report.ByPrimitive();
  absl::StrAppend(&md, "## Per primitive\n\n",
                  "| primitive | cases | legacy failures | IR failures | "
                  "xfail | identical | equivalent | different | IR-only | "
                  "legacy-only |\n",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const PrimitiveParity& r : rows) {
    absl::StrAppend(&md, "| ", Cell(r.primitive), " | ", r.cases, " | ",
                    r.legacy_failures, " | ", r.ir_failures, " | ", r.xfail,
                    " | ", r.identical, " | ", r.equivalent, " | ", r.different,
                    " | ", r.ir_only, " | ", r.legacy_only, " |\n");
  }
  std::map<std::string, const ParityCase*> by_name;
  for (const ParityCase& c : report.cases) by_name[c.name] = &c;
  auto case_line = [&](const ParityCase& c) {
    std::string flags = VerdictName(c.verdict);
    if ((!c.legacy.passed && c.legacy_xfail) || (!c.ir.passed && c.ir_xfail)) {
      absl::StrAppend(&flags, ", xfail");
    }
    return absl::StrCat("- [`", c.name, "`](",
                        absl::StrReplaceAll(BundleLink(c.bundle, page_dir),
                                            {{" ", "%20"}, {")", "%29"}}),
                        ") (", flags, "): ", Cell(FailureLine(c)), "\n");
  };
  absl::StrAppend(&md, "\n## Failing and xfail cases by primitive\n\n");
  int charged = 0;
  for (const PrimitiveParity& r : rows) {
    if (r.charged_cases.empty()) continue;
    absl::StrAppend(&md, "### ", r.primitive, "\n\n");
    for (const std::string& name : r.charged_cases) {
      ++charged;
      absl::StrAppend(&md, case_line(*by_name[name]));
    }
    absl::StrAppend(&md, "\n");
  }
  if (charged == 0) absl::StrAppend(&md, "None.\n\n");
  absl::StrAppend(&md, "## Failures not charged to a primitive\n\n");
  const std::vector<std::string> unattributed = report.UnattributedFailures();
  for (const std::string& name : unattributed) {
    absl::StrAppend(&md, case_line(*by_name[name]));
  }
  if (unattributed.empty()) absl::StrAppend(&md, "None.\n");
  absl::StrAppend(&md, "\n## Failing cases\n\n");
  int failing = 0;
  for (const ParityCase& c : report.cases) {
    if (!Failing(c)) continue;
    ++failing;
    absl::StrAppend(&md, "- `", c.name, "` (", VerdictName(c.verdict),
                    Charge(c).empty() ? "" : "; charged to " + Charge(c),
                    "): ", Cell(FailureLine(c)), "\n");
  }
  if (failing == 0) absl::StrAppend(&md, "None.\n");
  // The IR optimizer's effect: the legacy pipeline is literal.
  absl::StrAppend(&md, "\n## Node counts per case\n\n", NodeTotals(report),
                  ".\n\n| case | legacy nodes | IR nodes | IR/legacy |\n"
                  "|---|---|---|---|\n");
  for (const ParityCase& c : report.cases) {
    absl::StrAppend(&md, "| `", Cell(c.name), "` | ",
                    c.legacy.converted ? absl::StrCat(c.legacy.nodes) : "-",
                    " | ", c.ir.converted ? absl::StrCat(c.ir.nodes) : "-",
                    " | ", NodeRatio(c), " |\n");
  }
  return md;
}

std::string ParityHtml(const ParityReport& report,
                       const std::string& page_dir) {
  const std::vector<PrimitiveParity> rows = report.ByPrimitive();
  const PrimitiveParity t = report.Totals();
  // Chart geometry: one band per primitive, two bars (legacy, IR), each the
  // fraction of that primitive's cases with no failure charged to it.
  const int label_w = 230, bar_w = 420, text_w = 170, band = 26, top = 36;
  const int width = label_w + bar_w + text_w;
  const int height = top + band * static_cast<int>(rows.size()) + 10;
  const char* kLegacy = "#4e79a7";
  const char* kIr = "#f28e2b";
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"pass counts per "
      "primitive, legacy vs IR\">\n",
      width, height, width, height);
  absl::StrAppendFormat(
      &svg,
      "<rect x=\"%d\" y=\"8\" width=\"12\" height=\"10\" fill=\"%s\"/>"
      "<text x=\"%d\" y=\"17\">legacy</text>"
      "<rect x=\"%d\" y=\"8\" width=\"12\" height=\"10\" fill=\"%s\"/>"
      "<text x=\"%d\" y=\"17\">IR</text>"
      "<text x=\"%d\" y=\"17\" class=\"dim\">bar = cases not failing "
      "because of the primitive / its cases</text>\n",
      label_w, kLegacy, label_w + 16, label_w + 70, kIr, label_w + 86,
      label_w + 120);
  for (size_t i = 0; i < rows.size(); ++i) {
    const PrimitiveParity& r = rows[i];
    const int y = top + band * static_cast<int>(i);
    const int legacy_ok = r.cases - r.legacy_failures;
    const int ir_ok = r.cases - r.ir_failures;
    const double lf = r.cases ? static_cast<double>(legacy_ok) / r.cases : 0;
    const double irf = r.cases ? static_cast<double>(ir_ok) / r.cases : 0;
    const bool regress = r.legacy_only > 0;
    absl::StrAppendFormat(
        &svg,
        "<g><title>%s: %d cases; failures charged to it: legacy %d, IR %d; "
        "identical %d, equivalent %d, different %d</title>"
        "<text x=\"%d\" y=\"%d\" text-anchor=\"end\"%s>%s</text>"
        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"20\" fill=\"#eee\"/>"
        "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"9\" fill=\"%s\"/>"
        "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"9\" fill=\"%s\"/>"
        "<text x=\"%d\" y=\"%d\" class=\"dim\">%d/%d legacy, %d/%d IR"
        "</text>"
        "</g>\n",
        Html(r.primitive), r.cases, r.legacy_failures, r.ir_failures,
        r.identical, r.equivalent, r.different, label_w - 8, y + 15,
        regress ? " class=\"bad\"" : "", Html(r.primitive), label_w, y, bar_w,
        label_w, y + 1, lf * bar_w, kLegacy, label_w, y + 10, irf * bar_w, kIr,
        label_w + bar_w + 8, y + 15, legacy_ok, r.cases, ir_ok, r.cases);
  }
  svg += "</svg>\n";

  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
      "charset=\"utf-8\">\n<title>jax2onnx parity: legacy vs IR</title>\n"
      "<style>\n"
      "body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}\n"
      "svg text{font-family:sans-serif;font-size:12px;fill:#222}\n"
      "svg text.dim{fill:#666}svg text.bad{fill:#c00;font-weight:bold}\n"
      "table{border-collapse:collapse;font-size:13px}\n"
      "td,th{border:1px solid #ccc;padding:2px 6px}td.n{text-align:right}\n"
      "tr.bad td{background:#fdd}code{background:#f4f4f4}\n"
      "li{font-size:13px;margin:2px 0}\n"
      "</style>\n</head>\n<body>\n"
      "<h1>Parity: legacy vs IR pipeline</h1>\n";
  absl::StrAppend(&html, "<p><code>", Html(report.SummaryLine()),
                  "</code></p>\n");
  absl::StrAppend(
      &html, "<p>IR-only passes: ", t.ir_only,
      ", legacy-only passes: ", t.legacy_only,
      ". Flip rule (IR passes every case legacy passes): <b>",
      report.IrCoversLegacy() ? "holds" : "does not hold", "</b>.",
      report.ort_version.empty()
          ? ""
          : absl::StrCat(" ONNX Runtime ", Html(report.ort_version), "."),
      " Primitives in red have a case legacy passes and IR fails because of "
      "them. A failure is charged only to the primitive its error quotes, "
      "else to the case alone.</p>\n");
  absl::StrAppend(
      &html, "<h2>Cases per primitive not failing because of it</h2>\n", svg);
  absl::StrAppend(&html,
                  "<h2>Per primitive</h2>\n<table>\n<tr><th>primitive</th>"
                  "<th>cases</th><th>legacy failures</th><th>IR failures</th>"
                  "<th>xfail</th><th>identical</th><th>equivalent</th>"
                  "<th>different</th><th>IR-only</th><th>legacy-only</th>"
                  "</tr>\n");
  for (const PrimitiveParity& r : rows) {
    absl::StrAppendFormat(
        &html,
        "<tr%s><td>%s</td><td class=\"n\">%d</td><td class=\"n\">%d</td>"
        "<td class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"n\">%d</td>"
        "<td class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"n\">%d</td>"
        "<td class=\"n\">%d</td></tr>\n",
        r.legacy_only > 0 ? " class=\"bad\"" : "", Html(r.primitive), r.cases,
        r.legacy_failures, r.ir_failures, r.xfail, r.identical, r.equivalent,
        r.different, r.ir_only, r.legacy_only);
  }
  absl::StrAppend(&html, "</table>\n");
  if (!report.coverage.empty()) {
    std::vector<std::string> none;
    for (const PrimitiveCoverage* p : NotLoweredByUse(report)) {
      none.push_back(absl::StrCat("<code>", Html(p->primitive), "</code> (",
                                  p->uses, ")"));
    }
    absl::StrAppend(&html,
                    "<h2>Next ports: JAX primitives not lowered yet</h2>\n<p>",
                    none.size(), " of ", report.coverage.size(),
                    " (docs/parity/jax_primitives.txt), most used first (in "
                    "parentheses: the programs under ",
                    Html(UsageRootsText(report)),
                    " that bind it): ", absl::StrJoin(none, ", "), "</p>\n");
  }
  absl::StrAppend(&html, "<h2>Failing cases</h2>\n<ul>\n");
  int failing = 0;
  for (const ParityCase& c : report.cases) {
    if (!Failing(c)) continue;
    ++failing;
    const std::string charge = Charge(c);
    absl::StrAppend(&html, "<li><a href=\"",
                    Html(BundleLink(c.bundle, page_dir)), "\"><code>",
                    Html(c.name), "</code></a> (", VerdictName(c.verdict),
                    charge.empty() ? "" : "; charged to " + Html(charge),
                    "): ", Html(FailureLine(c)), "</li>\n");
  }
  if (failing == 0) absl::StrAppend(&html, "<li>None.</li>\n");
  absl::StrAppend(&html, "</ul>\n<h2>Node counts per case</h2>\n<p>",
                  Html(NodeTotals(report)),
                  ".</p>\n<table>\n<tr><th>case</th><th>legacy nodes</th>"
                  "<th>IR nodes</th><th>IR/legacy</th></tr>\n");
  for (const ParityCase& c : report.cases) {
    absl::StrAppend(&html, "<tr><td><code>", Html(c.name),
                    "</code></td><td class=\"n\">",
                    c.legacy.converted ? absl::StrCat(c.legacy.nodes) : "-",
                    "</td><td class=\"n\">",
                    c.ir.converted ? absl::StrCat(c.ir.nodes) : "-",
                    "</td><td class=\"n\">", NodeRatio(c), "</td></tr>\n");
  }
  absl::StrAppend(&html, "</table>\n</body>\n</html>\n");
  return html;
}

absl::Status WriteParityDashboard(const ParityReport& report,
                                  const std::string& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot create output directory '", out_dir, "': ", ec.message()));
  }
  const std::vector<std::pair<std::string, std::string>> files = {
      {"parity.json", ParityToJson(report).dump(1) + "\n"},
      {"PARITY.md", ParityMarkdown(report, out_dir)},
      {"index.html", ParityHtml(report, out_dir)}};
  for (const auto& [name, content] : files) {
    const std::string path = (fs::path(out_dir) / name).string();
    // Never through a directory, FIFO or device at that name.
    J2O_RETURN_IF_ERROR(
        jaxpr::CheckOutputReplaceable(path, "the parity output", {}));
    // An exclusively created temporary next to the file, renamed into place.
    J2O_ASSIGN_OR_RETURN(ExclusiveTempFile tmp,
                         ExclusiveTempFile::Create(out_dir));
    J2O_RETURN_IF_ERROR(tmp.Write(content.data(), content.size()));
    J2O_RETURN_IF_ERROR(tmp.SyncAndClose());
    J2O_RETURN_IF_ERROR(tmp.Commit(path));
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx::api
