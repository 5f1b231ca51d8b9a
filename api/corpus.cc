#include "api/corpus.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/convert_internal.h"
#include "api/expect_graph.h"
#include "api/untyped_values.h"
#include "jaxpr/io/compare.h"
#include "jaxpr/state/discharge.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/typecheck/typecheck.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace jax2onnx::api {
namespace {

bool IsXfailMarker(absl::string_view name) {
  return absl::EndsWith(name, "_xfail");
}

bool IsIdentChar(char c) { return absl::ascii_isalnum(c) || c == '_'; }

std::string FirstLine(absl::string_view text) {
  const size_t nl = text.find('\n');
  return std::string(nl == absl::string_view::npos ? text : text.substr(0, nl));
}

absl::StatusOr<std::optional<double>> HeaderTolerance(
    const jaxpr::JaxprFile& file, absl::string_view key) {
  auto text = file.Header(key);
  if (!text) return std::optional<double>();
  double value;
  if (!absl::SimpleAtod(absl::StripAsciiWhitespace(*text), &value) ||
      !(value >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "header '# ", key, ": ", *text, "' is not a non-negative number"));
  }
  return std::optional<double>(value);
}

}  // namespace

absl::StatusOr<bool> HeaderFuseAttention(const jaxpr::JaxprFile& file) {
  auto text = file.Header("fuse_attention");
  if (!text) return false;
  const absl::string_view value = absl::StripAsciiWhitespace(*text);
  if (value == "true") return true;
  if (value == "false") return false;
  return absl::InvalidArgumentError(absl::StrCat(
      "header '# fuse_attention: ", *text, "' is not true or false"));
}

namespace {

absl::StatusOr<std::optional<int>> HeaderOpset(const jaxpr::JaxprFile& file) {
  auto text = file.Header("opset");
  if (!text) return std::optional<int>();
  int opset;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &opset) ||
      opset < 17 || opset > 26) {
    return absl::InvalidArgumentError(absl::StrCat(
        "header '# opset: ", *text, "' is not an opset in 17..26"));
  }
  return std::optional<int>(opset);
}

std::string DisplayName(const std::string& path, const std::string& root) {
  std::string name = path;
  if (!root.empty()) {
    std::error_code ec;
    const auto rel = std::filesystem::relative(path, root, ec);
    if (!ec && !rel.empty() && !absl::StartsWith(rel.string(), "..")) {
      name = rel.string();
    }
  }
  if (absl::EndsWith(name, ".jaxpr")) name.resize(name.size() - 6);
  if (absl::EndsWith(name, ".mlir")) name.resize(name.size() - 5);
  return name;
}

// `arrays` with every f32 array rounded to `to` (the others unchanged).
std::vector<jaxpr::Array> PromotedF32Arrays(
    const std::vector<jaxpr::Array>& arrays, jaxpr::DType to) {
  std::vector<jaxpr::Array> out;
  out.reserve(arrays.size());
  for (const jaxpr::Array& a : arrays) {
    if (a.dtype() != jaxpr::DType::kF32) {
      out.push_back(a);
      continue;
    }
    jaxpr::Array promoted(to, a.shape());
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      promoted.SetFromDouble(i, a.GetAsDouble(i));
    }
    out.push_back(std::move(promoted));
  }
  return out;
}

absl::StatusOr<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const Marker* FindMarker(const std::vector<Marker>& markers,
                         absl::string_view name) {
  for (const Marker& m : markers) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::string MarkerText(const Marker& m) {
  std::string s = m.name;
  if (m.strict) s += "(strict)";
  if (!m.reason.empty()) absl::StrAppend(&s, ": ", m.reason);
  return s;
}

// One case to run: a bundle (possibly generated) and the markers that make
// a failure expected.
struct Case {
  std::string name;
  const Bundle* bundle = nullptr;
  int opset = 23;
  std::vector<std::string> expect_graph;
  // `# functions:` globs, on the IR pipeline (the legacy pipeline converts
  // the same bundle inlined).
  std::vector<std::string> functions;
  // `# fuse_attention: true`, on the IR pipeline (the legacy pipeline is
  // literal).
  bool fuse_attention = false;
  std::vector<const Marker*> xfail;  // any of them makes a failure expected
  // A conversion refused as Unimplemented is a SKIP, not a failure: for the
  // generated opset-17 variant, where a lowering may precisely refuse an
  // opset that lacks what it needs (DESIGN.md §6).
  bool refusal_is_skip = false;
};

class Reporter {
 public:
  Reporter(const CorpusOptions& options, CorpusSummary* summary)
      : options_(options), summary_(summary) {}

  void Add(CaseResult r) {
    switch (r.outcome) {
      case Outcome::kPass:
        summary_->passed++;
        break;
      case Outcome::kFail:
        summary_->failed++;
        break;
      case Outcome::kSkip:
        summary_->skipped++;
        break;
      case Outcome::kXfail:
        summary_->xfailed++;
        break;
      case Outcome::kXpass:
        summary_->xpassed++;
        if (r.strict_xpass) summary_->failed++;
        break;
    }
    if (options_.on_case) {
      options_.on_case(r);
    } else if (options_.out != nullptr) {
      std::fprintf(options_.out, "%s\n",
                   CaseLine(r, options_.pipeline).c_str());
      std::fflush(options_.out);
    }
    summary_->cases.push_back(std::move(r));
  }

 private:
  const CorpusOptions& options_;
  CorpusSummary* summary_;
};

void RunCase(const Case& c, const CorpusOptions& options, OrtRunner& runner,
             Reporter& reporter) {
  CheckOptions check;
  check.seed = options.seed;
  check.special_values = options.special_values;
  check.convert.opset = c.opset;
  check.convert.functions = c.functions;
  check.convert.fuse_attention = c.fuse_attention;
  absl::StatusCode code = absl::StatusCode::kOk;
  CheckResult r;
  // One case exhausting memory (a huge interpreter intermediate, say) must
  // not take the rest of the corpus down with it.
  try {
    r = CheckLoadedBundle(*c.bundle, options.pipeline, check, runner,
                          c.expect_graph, nullptr, &code);
  } catch (const std::exception& e) {
    r.passed = false;
    r.stage = "exception";
    r.reason = FirstLine(e.what());
  }
  CaseResult out;
  out.name = c.name;
  out.rank_unknown = static_cast<int>(r.rank_unknown.size());
  std::string rank_note;
  if (r.passed && options.rank_unknown_allowed) {
    auto it = options.rank_unknown_allowed->find(c.name);
    const int allowed =
        it == options.rank_unknown_allowed->end() ? 0 : it->second;
    if (out.rank_unknown > allowed) {
      r.passed = false;
      r.stage = "untyped";
      r.reason = absl::StrCat(
          out.rank_unknown,
          " values have an unknown rank after strict shape inference with "
          "data propagation (",
          allowed, " allowed): ", UntypedNames(r.rank_unknown));
    } else if (out.rank_unknown < allowed) {
      rank_note =
          absl::StrCat("(", out.rank_unknown, " values of unknown rank, ",
                       allowed, " allowed: lower the allowance)");
    }
  }
  if (c.refusal_is_skip && !r.passed && r.stage == "convert" &&
      code == absl::StatusCode::kUnimplemented) {
    out.outcome = Outcome::kSkip;
    out.reason = absl::StrCat("refused at opset ", c.opset, ": ", r.reason);
    reporter.Add(std::move(out));
    return;
  }
  std::vector<std::string> markers;
  bool strict = false;
  for (const Marker* m : c.xfail) {
    markers.push_back(MarkerText(*m));
    strict = strict || m->strict;
  }
  const std::string failure = absl::StrCat(r.stage, ": ", r.reason);
  if (r.passed) {
    out.outcome = c.xfail.empty() ? Outcome::kPass : Outcome::kXpass;
    out.reason = rank_note;
    // A pass with nothing to compare says why (CheckLoadedBundle).
    if (r.stage == "no_outputs") out.reason = r.reason;
    if (!c.xfail.empty()) {
      out.strict_xpass = strict;
      out.reason = absl::StrCat(
          strict ? "passes despite a strict xfail marker (fails the run): "
                 : "passes despite ",
          absl::StrJoin(markers, "; "));
    }
  } else if (c.xfail.empty()) {
    out.outcome = Outcome::kFail;
    out.reason = failure;
  } else {
    out.outcome = Outcome::kXfail;
    out.reason = absl::StrCat("(", absl::StrJoin(markers, "; "), ") ", failure);
  }
  reporter.Add(std::move(out));
}

void RunBundle(const std::string& path, const CorpusOptions& options,
               OrtRunner& runner, Reporter& reporter) {
  const std::string name = DisplayName(path, options.display_root);
  auto fail = [&](const std::string& case_name, absl::string_view stage,
                  const absl::Status& status) {
    CaseResult r;
    r.name = case_name;
    r.outcome = Outcome::kFail;
    r.reason = absl::StrCat(stage, ": ", FirstLine(status.message()));
    reporter.Add(std::move(r));
  };
  auto skip = [&](const std::string& case_name, const std::string& why) {
    CaseResult r;
    r.name = case_name;
    r.outcome = Outcome::kSkip;
    r.reason = why;
    reporter.Add(std::move(r));
  };

  auto bundle = LoadBundle(path);
  if (!bundle.ok()) {
    // A listed case that cannot even be loaded (a StableHLO file with an
    // op or dtype ONNX cannot express) is an expected failure too.
    auto it = options.expected_failures.find(name);
    if (it != options.expected_failures.end()) {
      CaseResult r;
      r.name = name;
      r.outcome = Outcome::kXfail;
      r.reason = absl::StrCat(
          it->second, " (load: ", FirstLine(bundle.status().message()), ")");
      reporter.Add(std::move(r));
      return;
    }
    return fail(name, "load", bundle.status());
  }
  auto markers = ParseMarkers(bundle->file);
  if (!markers.ok()) return fail(name, "header", markers.status());
  auto opset = HeaderOpset(bundle->file);
  if (!opset.ok()) return fail(name, "header", opset.status());
  auto fuse_attention = HeaderFuseAttention(bundle->file);
  if (!fuse_attention.ok()) {
    return fail(name, "header", fuse_attention.status());
  }

  const bool ir = options.pipeline == Pipeline::kIr;
  if (const Marker* only =
          FindMarker(*markers, ir ? "legacy_only" : "ir_only")) {
    return skip(name, MarkerText(*only));
  }
  const Marker* pipeline_xfail =
      FindMarker(*markers, ir ? "ir_xfail" : "legacy_xfail");
  Marker listed;
  if (!pipeline_xfail) {
    auto it = options.expected_failures.find(name);
    if (it != options.expected_failures.end()) {
      listed.name = "expected_failures";
      listed.reason = it->second;
      pipeline_xfail = &listed;
    }
  }

  Case base;
  base.name = name;
  base.bundle = &*bundle;
  base.opset = opset->value_or(options.opset);
  for (const auto& [key, value] : bundle->file.header) {
    if (key == "expect_graph" ||
        key == (ir ? "expect_graph_ir" : "expect_graph_legacy")) {
      base.expect_graph.push_back(value);
    }
  }
  if (ir) {
    base.fuse_attention = *fuse_attention;
    if (std::optional<std::string> globs = bundle->file.Header("functions")) {
      for (absl::string_view glob : absl::StrSplit(*globs, ',')) {
        base.functions.emplace_back(absl::StripAsciiWhitespace(glob));
      }
    }
  }
  if (pipeline_xfail) base.xfail.push_back(pipeline_xfail);
  RunCase(base, options, runner, reporter);

  // NAME[f64] / NAME[bf16]: the bundle with every f32 type promoted, at the
  // dtype's default tolerance unless the header gives `<variant>_rtol` /
  // `<variant>_atol`; `no_<variant>` skips it, `<variant>_xfail` expects it
  // to fail. With `keep_npz_arrays`, the npz's consts, elided literals and
  // inputs come along with their f32 arrays rounded to `to` (expected_i are
  // dropped: the interpreter is the oracle).
  auto run_promoted = [&](jaxpr::DType to, bool keep_npz_arrays) {
    const std::string variant_tag(jaxpr::ShortName(to));
    const std::string variant_name = absl::StrCat(name, "[", variant_tag, "]");
    // The promotion rewrites jaxpr text: StableHLO modules have no variant.
    if (IsStablehloInput(bundle->jaxpr_path)) return;
    auto text = ReadText(bundle->jaxpr_path);
    if (!text.ok()) return fail(variant_name, "load", text.status());
    const std::string promoted_text = PromoteF32(*text, to);
    if (promoted_text == *text) return;  // no f32 anywhere: no variant
    if (const Marker* no =
            FindMarker(*markers, absl::StrCat("no_", variant_tag))) {
      return skip(variant_name, MarkerText(*no));
    }
    const std::string path_tag = absl::StrCat("[", variant_tag, "]");
    auto file =
        jaxpr::ParseJaxprText(promoted_text, bundle->jaxpr_path + path_tag);
    if (!file.ok()) return fail(variant_name, "promote", file.status());
    Bundle promoted;
    promoted.name = bundle->name + path_tag;
    promoted.jaxpr_path = bundle->jaxpr_path;
    promoted.file = *std::move(file);
    if (promoted.file.path.empty()) promoted.file.path = promoted.jaxpr_path;
    // As AssembleBundle does: refs become SSA values before any use.
    if (absl::Status s = jaxpr::DischargeState(&promoted.file); !s.ok()) {
      return fail(variant_name, "promote", s);
    }
    auto rtol = HeaderTolerance(promoted.file, variant_tag + "_rtol");
    if (!rtol.ok()) return fail(variant_name, "header", rtol.status());
    auto atol = HeaderTolerance(promoted.file, variant_tag + "_atol");
    if (!atol.ok()) return fail(variant_name, "header", atol.status());
    promoted.rtol = *rtol;
    promoted.atol = *atol;
    promoted.markers = bundle->markers;
    if (keep_npz_arrays) {
      promoted.consts = PromotedF32Arrays(bundle->consts, to);
      promoted.literals = PromotedF32Arrays(bundle->literals, to);
      promoted.inputs = PromotedF32Arrays(bundle->inputs, to);
    }
    Case variant;
    variant.name = variant_name;
    variant.bundle = &promoted;
    variant.opset = base.opset;
    variant.functions = base.functions;
    variant.fuse_attention = base.fuse_attention;
    if (pipeline_xfail) variant.xfail.push_back(pipeline_xfail);
    if (const Marker* m =
            FindMarker(*markers, absl::StrCat(variant_tag, "_xfail"))) {
      variant.xfail.push_back(m);
    }
    RunCase(variant, options, runner, reporter);
  };
  if (options.f64_variants && bundle->npz_path.empty() &&
      AllF32Signature(bundle->jaxpr())) {
    run_promoted(jaxpr::DType::kF64, /*keep_npz_arrays=*/false);
  }
  // bf16 is the dtype real programs come in: every bundle that has an f32
  // type anywhere, npz or not, mixed signatures too.
  if (options.bf16_variants) {
    run_promoted(jaxpr::DType::kBF16, /*keep_npz_arrays=*/true);
  }

  if (options.also_opset17 && base.opset != 17) {
    Case variant;
    variant.name = name + "[opset17]";
    variant.bundle = &*bundle;
    variant.opset = 17;
    variant.functions = base.functions;
    variant.fuse_attention = base.fuse_attention;
    variant.refusal_is_skip = true;
    if (pipeline_xfail) variant.xfail.push_back(pipeline_xfail);
    if (const Marker* m = FindMarker(*markers, "opset17_xfail")) {
      variant.xfail.push_back(m);
    }
    RunCase(variant, options, runner, reporter);
  }
}

}  // namespace

const std::vector<std::string>& KnownMarkers() {
  static const auto* known = new std::vector<std::string>{
      "legacy_only", "ir_only",       "legacy_xfail", "ir_xfail", "f64_xfail",
      "no_f64",      "opset17_xfail", "bf16_xfail",   "no_bf16"};
  return *known;
}

absl::StatusOr<std::vector<Marker>> ParseMarkersLine(absl::string_view value) {
  const absl::string_view line = absl::StripAsciiWhitespace(value);
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("markers '", line, "': ", what));
  };
  // The marker list ends at the first ':' outside parentheses.
  size_t end = line.size();
  int depth = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '(') depth++;
    if (line[i] == ')') depth--;
    if (line[i] == ':' && depth == 0) {
      end = i;
      break;
    }
  }
  const std::string reason =
      end < line.size()
          ? std::string(absl::StripAsciiWhitespace(line.substr(end + 1)))
          : "";
  std::vector<Marker> markers;
  absl::string_view list = line.substr(0, end);
  // Split on ',' outside parentheses.
  std::vector<absl::string_view> items;
  depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] == '(') depth++;
    if (i < list.size() && list[i] == ')') depth--;
    if (i == list.size() || (list[i] == ',' && depth == 0)) {
      items.push_back(
          absl::StripAsciiWhitespace(list.substr(start, i - start)));
      start = i + 1;
    }
  }
  for (absl::string_view item : items) {
    if (item.empty()) return error("empty marker");
    Marker m;
    const size_t paren = item.find('(');
    absl::string_view name = absl::StripAsciiWhitespace(item.substr(0, paren));
    if (paren != absl::string_view::npos) {
      absl::string_view flags = item.substr(paren + 1);
      if (!absl::ConsumeSuffix(&flags, ")")) {
        return error(absl::StrCat("'", item, "' lacks ')'"));
      }
      for (absl::string_view flag : absl::StrSplit(flags, ',')) {
        flag = absl::StripAsciiWhitespace(flag);
        if (flag != "strict") {
          return error(absl::StrCat("unknown flag '", flag, "' in '", item,
                                    "' (only `strict`)"));
        }
        m.strict = true;
      }
    }
    for (char c : name) {
      if (!IsIdentChar(c)) {
        return error(absl::StrCat("'", item,
                                  "' is not a marker (separate markers with "
                                  "',' and put the reason after ':')"));
      }
    }
    const auto& known = KnownMarkers();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return error(absl::StrCat("unknown marker '", name,
                                "' (known: ", absl::StrJoin(known, ", "), ")"));
    }
    if (m.strict && !IsXfailMarker(name)) {
      return error(absl::StrCat("'", name,
                                "' is not an xfail marker; only "
                                "xfail markers take (strict)"));
    }
    m.name = std::string(name);
    m.reason = reason;
    markers.push_back(std::move(m));
  }
  return markers;
}

absl::StatusOr<std::vector<Marker>> ParseMarkers(const jaxpr::JaxprFile& file) {
  std::vector<Marker> all;
  for (const auto& [key, value] : file.header) {
    if (key != "markers") continue;
    auto markers = ParseMarkersLine(value);
    if (!markers.ok()) return markers.status();
    for (Marker& m : *markers) all.push_back(std::move(m));
  }
  if (FindMarker(all, "legacy_only") && FindMarker(all, "ir_only")) {
    return absl::InvalidArgumentError(
        "markers: legacy_only and ir_only together skip every pipeline");
  }
  return all;
}

std::string PromoteF32ToF64(absl::string_view text) {
  return PromoteF32(text, jaxpr::DType::kF64);
}

std::string PromoteF32(absl::string_view text, jaxpr::DType to) {
  const absl::string_view short_name = jaxpr::ShortName(to);
  const absl::string_view numpy_name = jaxpr::NumpyName(to);
  std::string out;
  out.reserve(text.size() + 64);
  bool first = true;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!first) out.push_back('\n');
    first = false;
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "#")) {
      out.append(line.data(), line.size());
      continue;
    }
    for (size_t i = 0; i < line.size();) {
      const bool boundary = i == 0 || !IsIdentChar(line[i - 1]);
      auto replace = [&](absl::string_view from, absl::string_view to) {
        if (!boundary || !absl::StartsWith(line.substr(i), from)) return false;
        const size_t after = i + from.size();
        if (after < line.size() && IsIdentChar(line[after])) return false;
        out.append(to.data(), to.size());
        i = after;
        return true;
      };
      if (replace("f32", short_name) || replace("float32", numpy_name)) {
        continue;
      }
      out.push_back(line[i++]);
    }
  }
  return out;
}

bool AllF32Signature(const jaxpr::ClosedJaxpr& jaxpr) {
  if (jaxpr.invars.empty() && jaxpr.outvars.empty()) return false;
  for (const jaxpr::Var* v : jaxpr.invars) {
    if (v->aval.dtype != jaxpr::DType::kF32) return false;
  }
  for (const jaxpr::Atom& a : jaxpr.outvars) {
    if (a.is_literal()) {
      if (!a.literal->aval || a.literal->aval->dtype != jaxpr::DType::kF32) {
        return false;
      }
    } else if (a.var->aval.dtype != jaxpr::DType::kF32) {
      return false;
    }
  }
  return true;
}

absl::Status ValidateWithOnnxChecker(const onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  copy.set_ir_version(8);
  try {
    onnx::checker::check_model(copy);
  } catch (const std::exception& e) {
    return absl::FailedPreconditionError(
        absl::StrCat("onnx::checker::check_model: ", FirstLine(e.what())));
  }
  try {
    onnx::shape_inference::InferShapes(
        copy, onnx::OpSchemaRegistry::Instance(),
        onnx::ShapeInferenceOptions(/*check_type_val=*/true,
                                    /*strict_mode_val=*/1,
                                    /*data_prop_val=*/true));
  } catch (const std::exception& e) {
    return absl::FailedPreconditionError(
        absl::StrCat("strict shape inference: ", FirstLine(e.what())));
  }
  return absl::OkStatus();
}

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass:
      return "PASS";
    case Outcome::kFail:
      return "FAIL";
    case Outcome::kXfail:
      return "XFAIL";
    case Outcome::kXpass:
      return "XPASS";
    case Outcome::kSkip:
      return "SKIP";
  }
  return "?";
}

std::string CorpusSummary::Line() const {
  return absl::StrCat(passed, " passed, ", failed, " failed, ", skipped,
                      " skipped, ", xfailed, " xfailed, ", xpassed, " xpassed");
}

CheckResult CheckLoadedBundle(const Bundle& bundle, Pipeline pipeline,
                              const CheckOptions& options, OrtRunner& runner,
                              const std::vector<std::string>& expect_graph,
                              onnx::ModelProto* converted,
                              absl::StatusCode* failure_code) {
  CheckResult result;
  result.bundle = bundle.jaxpr_path;
  absl::StatusCode ignored_code;
  if (failure_code == nullptr) failure_code = &ignored_code;
  *failure_code = absl::StatusCode::kOk;
  auto fail = [&](absl::string_view stage, const absl::Status& status) {
    *failure_code = status.code();
    result.passed = false;
    result.stage = std::string(stage);
    result.reason = FirstLine(status.message());
    return result;
  };
  result.pipeline = pipeline;
  // Expectations are parsed first so a malformed line is reported even when
  // the conversion fails.
  std::vector<GraphExpectation> expectations;
  for (const std::string& line : expect_graph) {
    auto e = ParseGraphExpectation(line);
    if (!e.ok()) return fail("header", e.status());
    expectations.push_back(*std::move(e));
  }
  if (bundle.jaxpr().outvars.empty() && IsStablehloInput(bundle.jaxpr_path)) {
    // A StableHLO test function without results or checks (after_all.mlir):
    // StableHLO's test asserts only that its interpreter runs it. It is
    // type-checked and interpreted; an ONNX graph needs an output (convert
    // refuses the program), so nothing is converted or compared, and the
    // case line says so.
    absl::Status typed = jaxpr::TypeCheckFile(bundle.file, {});
    if (!typed.ok()) return fail("typecheck", typed);
    auto inputs = InputsFor(bundle, options);
    if (!inputs.ok()) return fail("inputs", inputs.status());
    auto ran = OracleOutputs(bundle, *inputs, &result.oracle, options.convert);
    if (!ran.ok()) return fail("oracle", ran.status());
    result.passed = true;
    result.stage = "no_outputs";
    result.reason =
        "no outputs: type-checked and run in the interpreter; not converted "
        "(an ONNX graph needs an output), nothing to compare";
    return result;
  }
  const auto start = std::chrono::steady_clock::now();
  auto model = ConvertWithPipeline(pipeline, bundle, options.convert);
  result.convert_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!model.ok()) return fail("convert", model.status());
  if (converted != nullptr) *converted = *model;
  auto inputs = InputsFor(bundle, options);
  if (!inputs.ok()) return fail("inputs", inputs.status());
  auto expected =
      OracleOutputs(bundle, *inputs, &result.oracle, options.convert);
  if (!expected.ok()) return fail("oracle", expected.status());
  auto got = RunModel(*model, *inputs, runner);
  if (!got.ok()) return fail("run", got.status());
  if (got->size() != expected->size()) {
    return fail("compare", absl::InternalError(absl::StrCat(
                               "the model returned ", got->size(),
                               " outputs, expected ", expected->size())));
  }
  std::string failure;
  result.outputs = CompareOutputs(bundle, *inputs, *expected, *got,
                                  result.oracle == "expected", &failure, {},
                                  options.convert);
  result.passed = failure.empty();
  if (!result.passed) {
    *failure_code = absl::StatusCode::kFailedPrecondition;
    result.stage = "compare";
    result.reason = std::move(failure);
  }
  if (!result.passed) return result;
  for (const GraphExpectation& e : expectations) {
    absl::Status s = CheckGraphExpectation(*model, e);
    if (!s.ok()) return fail("expect_graph", s);
  }
  if (options.convert.opset == 17) {
    absl::Status s = ValidateWithOnnxChecker(*model);
    if (!s.ok()) return fail("onnx_checker", s);
    auto untyped = UntypedValues(*model);
    if (!untyped.ok()) return fail("onnx_checker", untyped.status());
    std::vector<UntypedValue> no_elem_type;
    for (UntypedValue& v : *untyped) {
      (v.has_elem_type ? result.rank_unknown : no_elem_type)
          .push_back(std::move(v));
    }
    if (!no_elem_type.empty()) {
      return fail("untyped", absl::FailedPreconditionError(absl::StrCat(
                                 no_elem_type.size(),
                                 " values have no element type after strict "
                                 "shape inference with data propagation: ",
                                 UntypedNames(no_elem_type))));
    }
  }
  return result;
}

absl::StatusOr<std::map<std::string, int>> ReadRankUnknownAllowance(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::map<std::string, int> allowed;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || text[0] == '#') continue;
    std::vector<absl::string_view> parts =
        absl::StrSplit(text, absl::MaxSplits(' ', 1));
    int count = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &count) ||
        count <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", number, ": expected `COUNT NAME`"));
    }
    allowed[std::string(absl::StripAsciiWhitespace(parts[1]))] = count;
  }
  return allowed;
}

CorpusSummary RunCorpus(const std::vector<std::string>& bundle_paths,
                        const CorpusOptions& options, OrtRunner& runner) {
  CorpusSummary summary;
  Reporter reporter(options, &summary);
  const int total = static_cast<int>(bundle_paths.size());
  for (int i = 0; i < total; ++i) {
    if (options.progress) options.progress(i, total, bundle_paths[i]);
    RunBundle(bundle_paths[i], options, runner, reporter);
  }
  if (options.progress) options.progress(total, total, "");
  return summary;
}

std::string CaseLine(const CaseResult& r, Pipeline pipeline) {
  return absl::StrCat(OutcomeName(r.outcome), " ", r.name, " [",
                      PipelineName(pipeline), "]", r.reason.empty() ? "" : " ",
                      r.reason);
}

absl::StatusOr<std::vector<std::string>> FindBundles(
    const std::vector<std::string>& paths_or_dirs) {
  std::vector<std::string> bundles;
  for (const std::string& arg : paths_or_dirs) {
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      std::vector<std::string> found;
      for (const auto& entry :
           std::filesystem::recursive_directory_iterator(arg, ec)) {
        if (entry.is_regular_file() &&
            (entry.path().extension() == ".jaxpr" ||
             IsStablehloInput(entry.path().string()))) {
          found.push_back(entry.path().string());
        }
      }
      std::sort(found.begin(), found.end());
      bundles.insert(bundles.end(), found.begin(), found.end());
    } else if (std::filesystem::exists(arg, ec)) {
      bundles.push_back(arg);
    } else {
      return absl::NotFoundError(
          absl::StrCat("no such file or directory: ", arg));
    }
  }
  return bundles;
}

}  // namespace jax2onnx::api
