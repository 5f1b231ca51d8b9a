// Shadow compare, the reporting half: verdict names, the JSON record and
// the text summary of a ShadowResult (see shadow.h).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "api/shadow.h"

namespace jax2onnx::api {
namespace {

nlohmann::json Number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return v;
}

nlohmann::json ErrorsJson(const ErrorStats& e) {
  if (!e.compared) return {{"compared", false}, {"summary", e.summary}};
  return {{"compared", true},
          {"ok", e.ok},
          {"max_abs", Number(e.max_abs)},
          {"max_rel", Number(e.max_rel)},
          {"summary", e.summary}};
}

nlohmann::json RunJson(const PipelineRun& r) {
  return {{"converted", r.converted},
          {"ran", r.ran},
          {"passed", r.passed},
          {"stage", r.stage},
          {"error", r.error},
          {"nodes", r.nodes},
          {"initializers", r.initializers},
          {"convert_seconds", r.convert_seconds}};
}

std::string ErrorText(const ErrorStats& e) {
  if (!e.compared) return "-";
  return absl::StrFormat("%s max_abs %.3g max_rel %.3g", e.ok ? "ok" : "FAIL",
                         e.max_abs, e.max_rel);
}

}  // namespace

// ---------------------------------------------------------------------------

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kIdentical:
      return "IDENTICAL";
    case Verdict::kEquivalent:
      return "EQUIVALENT";
    case Verdict::kDifferent:
      return "DIFFERENT";
    case Verdict::kLegacyFailed:
      return "LEGACY_FAILED";
    case Verdict::kIrFailed:
      return "IR_FAILED";
    case Verdict::kBothFailed:
      return "BOTH_FAILED";
    case Verdict::kNotRun:
      return "NOT_RUN";
  }
  return "?";
}

const char* NodeDiffKindName(NodeDiff::Kind kind) {
  switch (kind) {
    case NodeDiff::Kind::kChanged:
      return "changed";
    case NodeDiff::Kind::kLegacyOnly:
      return "legacy_only";
    case NodeDiff::Kind::kIrOnly:
      return "ir_only";
  }
  return "?";
}

nlohmann::json ShadowToJson(const ShadowResult& result, int max_node_diffs) {
  nlohmann::json j;
  j["schema"] = "jax2onnx.shadow/1";
  j["bundle"] = result.bundle;
  j["name"] = result.name;
  j["verdict"] = VerdictName(result.verdict);
  j["reason"] = result.reason;
  j["legacy"] = RunJson(result.legacy);
  j["ir"] = RunJson(result.ir);
  j["oracle"] = result.oracle;
  j["oracle_error"] = result.oracle_error;
  if (result.diff.has_value()) {
    const StructuralDiff& d = *result.diff;
    nlohmann::json s;
    s["identical"] = d.identical;
    nlohmann::json hist = nlohmann::json::array();
    for (const auto& h : d.op_histogram_delta) {
      hist.push_back({{"op", h.op_type}, {"legacy", h.legacy}, {"ir", h.ir}});
    }
    s["op_histogram_delta"] = hist;
    s["signature_diffs"] = d.signature_diffs;
    s["initializers"] = {{"common", d.initializers_common},
                         {"legacy_only", d.initializers_legacy_only},
                         {"ir_only", d.initializers_ir_only}};
    s["matched_nodes"] = d.matched_nodes;
    nlohmann::json nodes = nlohmann::json::array();
    for (size_t i = 0;
         i < d.nodes.size() && static_cast<int>(i) < max_node_diffs; ++i) {
      const NodeDiff& n = d.nodes[i];
      nodes.push_back({{"kind", NodeDiffKindName(n.kind)},
                       {"op", n.op_type},
                       {"legacy_index", n.legacy_index},
                       {"ir_index", n.ir_index},
                       {"details", n.details}});
    }
    s["node_diffs"] = nodes;
    s["node_diffs_truncated"] =
        std::max<int>(0, static_cast<int>(d.nodes.size()) - max_node_diffs);
    j["structure"] = s;
  } else {
    j["structure"] = nullptr;
  }
  nlohmann::json outs = nlohmann::json::array();
  for (const OutputErrors& oe : result.outputs) {
    outs.push_back({{"index", oe.index},
                    {"legacy_vs_ir", ErrorsJson(oe.legacy_vs_ir)},
                    {"legacy_vs_oracle", ErrorsJson(oe.legacy_vs_oracle)},
                    {"ir_vs_oracle", ErrorsJson(oe.ir_vs_oracle)}});
  }
  j["outputs"] = outs;
  return j;
}

std::string ShadowSummary(const ShadowResult& r, int max_node_diffs) {
  std::string s =
      absl::StrCat(VerdictName(r.verdict), " ", r.name, ": ", r.reason, "\n");
  auto run_line = [](absl::string_view which, const PipelineRun& p) {
    std::string line =
        absl::StrFormat("  %-6s %s", which, p.passed ? "pass" : "fail");
    if (p.converted) {
      absl::StrAppend(&line, ", ", p.nodes, " nodes, ", p.initializers,
                      " initializers");
    }
    if (!p.passed && !p.stage.empty()) {
      absl::StrAppend(&line, " (", p.stage, ": ", p.error, ")");
    }
    return line + "\n";
  };
  absl::StrAppend(&s, run_line("legacy", r.legacy), run_line("ir", r.ir));
  if (r.diff.has_value() && !r.diff->identical) {
    const StructuralDiff& d = *r.diff;
    if (!d.op_histogram_delta.empty()) {
      std::vector<std::string> parts;
      for (const auto& h : d.op_histogram_delta) {
        parts.push_back(
            absl::StrFormat("%s %d->%d", h.op_type, h.legacy, h.ir));
      }
      absl::StrAppend(&s, "  ops (legacy->ir): ", absl::StrJoin(parts, ", "),
                      "\n");
    }
    for (const auto& sd : d.signature_diffs) {
      absl::StrAppend(&s, "  signature: ", sd, "\n");
    }
    if (!d.initializers_legacy_only.empty() ||
        !d.initializers_ir_only.empty()) {
      absl::StrAppend(&s, "  initializers: ", d.initializers_common,
                      " common, ", d.initializers_legacy_only.size(),
                      " legacy-only, ", d.initializers_ir_only.size(),
                      " ir-only\n");
    }
    for (size_t i = 0;
         i < d.nodes.size() && static_cast<int>(i) < max_node_diffs; ++i) {
      const NodeDiff& n = d.nodes[i];
      absl::StrAppend(&s, "  ", NodeDiffKindName(n.kind), " ", n.op_type,
                      " [legacy ", n.legacy_index, ", ir ", n.ir_index,
                      "]: ", absl::StrJoin(n.details, "; "), "\n");
    }
    if (static_cast<int>(d.nodes.size()) > max_node_diffs) {
      absl::StrAppend(&s, "  ... ", d.nodes.size() - max_node_diffs,
                      " more node diffs (--json for all)\n");
    }
  }
  for (const OutputErrors& oe : r.outputs) {
    absl::StrAppend(&s, "  output ", oe.index, ": legacy vs ir ",
                    ErrorText(oe.legacy_vs_ir), "; legacy vs ",
                    r.oracle.empty() ? "oracle" : r.oracle, " ",
                    ErrorText(oe.legacy_vs_oracle), "; ir vs ",
                    r.oracle.empty() ? "oracle" : r.oracle, " ",
                    ErrorText(oe.ir_vs_oracle), "\n");
  }
  return s;
}

}  // namespace jax2onnx::api
