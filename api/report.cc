#include "api/report.h"

#include <chrono>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/convert_internal.h"
#include "ir/type.h"
#include "jaxpr/mesh.h"
#include "plugin/conversion_checks.h"
#include "plugin/onnx_types.h"
#include "plugin/registry.h"

namespace jax2onnx::api {
namespace {

void Scan(const jaxpr::ClosedJaxpr& jaxpr, const std::string& file,
          Pipeline pipeline, std::set<const jaxpr::ClosedJaxpr*>* seen,
          std::map<std::string, UnsupportedPrimitive>* unsupported,
          std::vector<std::string>* order, ConversionReport* report) {
  if (!seen->insert(&jaxpr).second) return;
  const plugin::Registry& registry = plugin::Registry::Global();
  for (const jaxpr::Eqn& eqn : jaxpr.eqns) {
    ++report->primitives[eqn.primitive];
    std::string reason;
    for (const std::string& refused : jaxpr::RefusedPrimitives()) {
      if (refused == eqn.primitive) {
        reason =
            std::string(jaxpr::RefusedPrimitiveError(eqn.primitive).message());
      }
    }
    const plugin::PrimitiveEntry* entry = registry.Find(eqn.primitive);
    const bool lowered = entry != nullptr &&
                         (pipeline == Pipeline::kIr ? entry->ir != nullptr
                                                    : entry->legacy != nullptr);
    if (reason.empty() && !lowered) {
      reason = pipeline == Pipeline::kIr
                   ? plugin::MissingLoweringMessage(registry, eqn.primitive,
                                                    plugin::kIrPipelineName,
                                                    plugin::kLegacyPipelineName)
                   : plugin::MissingLoweringMessage(registry, eqn.primitive,
                                                    plugin::kLegacyPipelineName,
                                                    plugin::kIrPipelineName);
    }
    if (!reason.empty()) {
      auto [it, inserted] = unsupported->try_emplace(eqn.primitive);
      if (inserted) {
        order->push_back(eqn.primitive);
        it->second.primitive = eqn.primitive;
        it->second.first_location =
            absl::StrCat(file, ":", eqn.loc.line, ":", eqn.loc.column);
        it->second.reason = reason;
      }
      ++it->second.count;
    }
    for (const auto& [key, value] : eqn.params.entries()) {
      if (value.kind() == jaxpr::ParamValue::Kind::kJaxpr && value.jaxpr()) {
        Scan(*value.jaxpr(), file, pipeline, seen, unsupported, order, report);
      } else if (value.kind() == jaxpr::ParamValue::Kind::kJaxprTuple) {
        for (const jaxpr::ParamValue& item : value.items()) {
          if (item.jaxpr()) {
            Scan(*item.jaxpr(), file, pipeline, seen, unsupported, order,
                 report);
          }
        }
      }
    }
  }
}

std::string Seconds(double s) { return absl::StrFormat("%.4f", s); }

}  // namespace

void ScanProgram(const Bundle& bundle, Pipeline pipeline,
                 ConversionReport* report) {
  RegisterAllLowerings();
  std::set<const jaxpr::ClosedJaxpr*> seen;
  std::map<std::string, UnsupportedPrimitive> unsupported;
  std::vector<std::string> order;
  Scan(bundle.jaxpr(), bundle.jaxpr_path, pipeline, &seen, &unsupported, &order,
       report);
  for (const std::string& name : order) {
    report->unsupported.push_back(unsupported[name]);
  }
}

void DescribeModel(const onnx::ModelProto& model, ConversionReport* report) {
  report->ops_final.clear();
  report->initializer_bytes.clear();
  for (const onnx::NodeProto& n : model.graph().node()) {
    ++report->ops_final[n.domain().empty() || n.domain() == "ai.onnx"
                            ? n.op_type()
                            : absl::StrCat(n.domain(), ".", n.op_type())];
  }
  for (const onnx::TensorProto& t : model.graph().initializer()) {
    int64_t elements = 1;
    for (int64_t d : t.dims()) elements *= d;
    report->initializer_bytes[onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(t.data_type()))] +=
        elements * ir::DataTypeSize(t.data_type());
  }
  report->ir_version = static_cast<int>(model.ir_version());
}

std::function<void(const std::string&, const ir::Model&)> ReportingDump(
    ConversionReport* report,
    std::function<void(const std::string&, const ir::Model&)> inner) {
  struct State {
    std::chrono::steady_clock::time_point last =
        std::chrono::steady_clock::now();
    std::map<std::string, int64_t> ops;
    int64_t nodes = 0;
  };
  auto state = std::make_shared<State>();
  return [report, inner, state](const std::string& step,
                                const ir::Model& model) {
    const double seconds = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - state->last)
                               .count();
    if (inner) inner(step, model);
    std::map<std::string, int64_t> ops;
    for (const ir::Node* node : model.graph().nodes()) ++ops[node->op_type()];
    const int64_t nodes = static_cast<int64_t>(model.graph().num_nodes());
    if (step == "lowered") {
      report->ops_lowered = ops;
      report->stage_seconds.emplace_back("lower", seconds);
    } else {
      PassRecord* record = nullptr;
      for (PassRecord& p : report->passes) {
        if (p.name == step) record = &p;
      }
      if (record == nullptr) {
        report->passes.push_back({});
        record = &report->passes.back();
        record->name = step;
        record->nodes_before = state->nodes;
      }
      ++record->runs;
      record->seconds += seconds;
      record->nodes_after = nodes;
      for (const auto& [op, n] : ops) record->op_delta[op] += n;
      for (const auto& [op, n] : state->ops) record->op_delta[op] -= n;
    }
    state->ops = std::move(ops);
    state->nodes = nodes;
    // Bookkeeping (and the inner dump) is not counted as the next pass's.
    state->last = std::chrono::steady_clock::now();
  };
}

absl::StatusOr<PendingModel> ToOnnxWithReport(const Bundle& bundle,
                                              const ConvertOptions& options,
                                              ConversionReport* report) {
  report->bundle = bundle.jaxpr_path;
  report->opset = options.opset;
  report->ir_version = plugin::IrVersionForOpset(options.opset);
  absl::StatusOr<Pipeline> pipeline = RoutePipeline(options);
  if (!pipeline.ok()) {
    report->error = std::string(pipeline.status().message());
    return pipeline.status();
  }
  report->pipeline = PipelineName(*pipeline);
  ScanProgram(bundle, *pipeline, report);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<PendingModel> model;
  model = ToOnnxForWriting(bundle, options, report);
  report->stage_seconds.emplace_back(
      "convert",
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  if (!model.ok()) {
    report->error = FormatConversionError(model.status(), bundle.jaxpr_path);
    return model.status();
  }
  report->converted = true;
  DescribeModel(model->proto, report);
  return model;
}

nlohmann::json ConversionReport::ToJson() const {
  nlohmann::json j;
  j["bundle"] = bundle;
  j["pipeline"] = pipeline;
  j["opset"] = opset;
  j["ir_version"] = ir_version;
  j["converted"] = converted;
  j["error"] = error;
  j["unsupported"] = nlohmann::json::array();
  for (const UnsupportedPrimitive& u : unsupported) {
    j["unsupported"].push_back({{"primitive", u.primitive},
                                {"count", u.count},
                                {"first_location", u.first_location},
                                {"reason", u.reason}});
  }
  j["primitives"] = primitives;
  j["ops_lowered"] = ops_lowered;
  j["ops_final"] = ops_final;
  j["passes"] = nlohmann::json::array();
  for (const PassRecord& p : passes) {
    j["passes"].push_back({{"name", p.name},
                           {"runs", p.runs},
                           {"seconds", p.seconds},
                           {"nodes_before", p.nodes_before},
                           {"nodes_after", p.nodes_after},
                           {"op_delta", p.op_delta}});
  }
  auto entries = [](const std::vector<ir::FusionLog::Entry>& list,
                    bool with_reason) {
    nlohmann::json a = nlohmann::json::array();
    for (const ir::FusionLog::Entry& e : list) {
      nlohmann::json x = {{"rule", e.rule}, {"tensor", e.tensor}};
      if (with_reason) x["reason"] = e.reason;
      a.push_back(std::move(x));
    }
    return a;
  };
  j["fusions"] = {{"applied", entries(fusions.applied, false)},
                  {"near_misses", entries(fusions.near_misses, true)}};
  j["initializer_bytes"] = initializer_bytes;
  j["stage_seconds"] = nlohmann::json::object();
  for (const auto& [stage, s] : stage_seconds) j["stage_seconds"][stage] = s;
  return j;
}

std::string ConversionReport::ToMarkdown() const {
  std::string md = absl::StrCat("# Conversion report: ", bundle, "\n\n");
  absl::StrAppend(&md, "- pipeline: ", pipeline, "\n- opset: ", opset,
                  "\n- IR version: ", ir_version,
                  "\n- result: ", converted ? "converted" : "FAILED", "\n");
  if (!error.empty()) absl::StrAppend(&md, "- error: `", error, "`\n");
  absl::StrAppend(&md, "\n## Unsupported primitives and refusals\n\n");
  if (unsupported.empty()) {
    absl::StrAppend(&md, "None.\n");
  } else {
    absl::StrAppend(&md,
                    "| primitive | count | first location | reason |\n"
                    "|---|---:|---|---|\n");
    for (const UnsupportedPrimitive& u : unsupported) {
      absl::StrAppend(&md, "| ", u.primitive, " | ", u.count, " | ",
                      u.first_location, " | ", u.reason, " |\n");
    }
  }
  absl::StrAppend(&md,
                  "\n## Primitives\n\n| primitive | equations |\n"
                  "|---|---:|\n");
  for (const auto& [name, n] : primitives) {
    absl::StrAppend(&md, "| ", name, " | ", n, " |\n");
  }
  if (!passes.empty()) {
    absl::StrAppend(&md,
                    "\n## Passes\n\n| pass | runs | seconds | nodes before | "
                    "nodes after | ops changed |\n|---|---:|---:|---:|---:|---|"
                    "\n");
    for (const PassRecord& p : passes) {
      std::string delta;
      for (const auto& [op, d] : p.op_delta) {
        if (d == 0) continue;
        absl::StrAppend(&delta, delta.empty() ? "" : ", ", op, " ",
                        d > 0 ? "+" : "", d);
      }
      absl::StrAppend(&md, "| ", p.name, " | ", p.runs, " | ",
                      Seconds(p.seconds), " | ", p.nodes_before, " | ",
                      p.nodes_after, " | ", delta, " |\n");
    }
  }
  if (!fusions.applied.empty() || !fusions.near_misses.empty()) {
    // Counts per rule, then the entries (the first 100 of each list).
    std::map<std::string, std::pair<int64_t, int64_t>> per_rule;
    for (const auto& e : fusions.applied) ++per_rule[e.rule].first;
    for (const auto& e : fusions.near_misses) ++per_rule[e.rule].second;
    absl::StrAppend(&md,
                    "\n## Fusions\n\n| rule | applied | near misses |\n"
                    "|---|---:|---:|\n");
    for (const auto& [rule, n] : per_rule) {
      absl::StrAppend(&md, "| ", rule, " | ", n.first, " | ", n.second, " |\n");
    }
    constexpr size_t kListed = 100;
    if (!fusions.applied.empty()) {
      absl::StrAppend(&md, "\n| applied | replaced tensor |\n|---|---|\n");
      for (size_t i = 0; i < fusions.applied.size() && i < kListed; ++i) {
        absl::StrAppend(&md, "| ", fusions.applied[i].rule, " | `",
                        fusions.applied[i].tensor, "` |\n");
      }
    }
    if (!fusions.near_misses.empty()) {
      absl::StrAppend(&md,
                      "\n| near miss | at tensor | refused because |\n"
                      "|---|---|---|\n");
      for (size_t i = 0; i < fusions.near_misses.size() && i < kListed; ++i) {
        const ir::FusionLog::Entry& e = fusions.near_misses[i];
        absl::StrAppend(&md, "| ", e.rule, " | `", e.tensor, "` | ", e.reason,
                        " |\n");
      }
    }
  }
  auto histogram = [&](const char* title,
                       const std::map<std::string, int64_t>& ops) {
    if (ops.empty()) return;
    absl::StrAppend(&md, "\n## ", title, "\n\n| op | nodes |\n|---|---:|\n");
    for (const auto& [op, n] : ops)
      absl::StrAppend(&md, "| ", op, " | ", n, " |\n");
  };
  histogram("Nodes per op after lowering", ops_lowered);
  histogram("Nodes per op in the model", ops_final);
  if (!initializer_bytes.empty()) {
    absl::StrAppend(&md,
                    "\n## Initializer bytes\n\n| dtype | bytes |\n"
                    "|---|---:|\n");
    for (const auto& [dtype, n] : initializer_bytes) {
      absl::StrAppend(&md, "| ", dtype, " | ", n, " |\n");
    }
  }
  absl::StrAppend(&md,
                  "\n## Time per stage\n\n| stage | seconds |\n"
                  "|---|---:|\n");
  for (const auto& [stage, s] : stage_seconds) {
    absl::StrAppend(&md, "| ", stage, " | ", Seconds(s), " |\n");
  }
  return md;
}

absl::Status WriteReport(const ConversionReport& report,
                         const std::string& path) {
  const std::string text = absl::EndsWith(path, ".json")
                               ? report.ToJson().dump(2) + "\n"
                               : report.ToMarkdown();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace jax2onnx::api
