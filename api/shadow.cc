// Shadow compare: canonical graph form, structural diff, numeric errors and
// the verdict of legacy vs IR on one bundle (see shadow.h).
#include "api/shadow.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "api/convert_internal.h"
#include "api/expect_graph.h"
#include "api/output_compare.h"
#include "ir/serde.h"
#include "jaxpr/dtype.h"
#include "jaxpr/io/compare.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx::api {
namespace {

std::string FirstLine(absl::string_view text) {
  const size_t nl = text.find('\n');
  return std::string(nl == absl::string_view::npos ? text : text.substr(0, nl));
}

// ---------------------------------------------------------------------------
// Numbers.

// Element values as doubles, complex numbers as two parts each.
std::vector<double> Components(const jaxpr::Array& a) {
  std::vector<double> v;
  if (jaxpr::IsComplex(a.dtype())) {
    const int64_t n = a.num_elements() * 2;
    v.reserve(n);
    if (a.dtype() == jaxpr::DType::kC64) {
      const float* p = a.typed_data<float>();
      for (int64_t i = 0; i < n; ++i) v.push_back(p[i]);
    } else {
      const double* p = a.typed_data<double>();
      for (int64_t i = 0; i < n; ++i) v.push_back(p[i]);
    }
    return v;
  }
  v.reserve(a.num_elements());
  for (int64_t i = 0; i < a.num_elements(); ++i) v.push_back(a.GetAsDouble(i));
  return v;
}

}  // namespace

ErrorStats CompareForShadow(const jaxpr::Array& reference,
                            const jaxpr::Array& got, std::optional<double> rtol,
                            std::optional<double> atol) {
  ErrorStats e;
  e.compared = true;
  jaxpr::CompareResult cmp = jaxpr::CompareArrays(reference, got, rtol, atol);
  e.ok = cmp.ok;
  e.summary = cmp.Summary();
  if (!cmp.structural_error.empty()) {
    e.max_abs = e.max_rel = std::numeric_limits<double>::infinity();
    return e;
  }
  const std::vector<double> r = Components(reference);
  const std::vector<double> g = Components(got);
  for (size_t i = 0; i < r.size() && i < g.size(); ++i) {
    const double x = r[i], y = g[i];
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;
    const double diff = std::fabs(x - y);
    if (std::isnan(diff) || std::isinf(diff)) {
      e.max_abs = e.max_rel = std::numeric_limits<double>::infinity();
      continue;
    }
    e.max_abs = std::max(e.max_abs, diff);
    if (x != 0) e.max_rel = std::max(e.max_rel, diff / std::fabs(x));
  }
  return e;
}

ShadowResult CompareModels(
    const absl::StatusOr<onnx::ModelProto>& legacy,
    const absl::StatusOr<onnx::ModelProto>& ir,
    const absl::StatusOr<std::vector<jaxpr::Array>>& inputs,
    const absl::StatusOr<std::vector<jaxpr::Array>>& oracle,
    std::optional<double> rtol, std::optional<double> atol, OrtRunner* runner,
    const OracleJudge& oracle_judge) {
  ShadowResult result;
  auto take = [](const absl::StatusOr<onnx::ModelProto>& m, PipelineRun* run,
                 onnx::ModelProto* model) {
    if (!m.ok()) {
      run->stage = "convert";
      run->error = FirstLine(m.status().message());
      return;
    }
    run->converted = true;
    run->nodes = m->graph().node_size();
    run->initializers = m->graph().initializer_size();
    *model = *m;
  };
  take(legacy, &result.legacy, &result.legacy_model);
  take(ir, &result.ir, &result.ir_model);
  if (result.legacy.converted && result.ir.converted) {
    result.diff = DiffGraphs(Canonicalize(result.legacy_model),
                             Canonicalize(result.ir_model));
  }

  std::vector<jaxpr::Array> legacy_out, ir_out;
  const bool have_oracle = oracle.ok();
  if (!have_oracle) result.oracle_error = FirstLine(oracle.status().message());
  const bool can_run = runner != nullptr;
  if (!can_run) {
    for (PipelineRun* r : {&result.legacy, &result.ir}) {
      if (r->converted) {
        r->stage = "run";
        r->error = "not run (no ONNX Runtime)";
      }
    }
  } else if (!inputs.ok()) {
    for (PipelineRun* r : {&result.legacy, &result.ir}) {
      if (!r->converted) continue;
      r->stage = "inputs";
      r->error = FirstLine(inputs.status().message());
    }
  } else {
    auto run = [&](const onnx::ModelProto& model, PipelineRun* r,
                   std::vector<jaxpr::Array>* out) {
      if (!r->converted) return;
      auto got = RunModel(model, *inputs, *runner);
      if (!got.ok()) {
        r->stage = "run";
        r->error = FirstLine(got.status().message());
        return;
      }
      r->ran = true;
      *out = *std::move(got);
    };
    run(result.legacy_model, &result.legacy, &legacy_out);
    run(result.ir_model, &result.ir, &ir_out);
  }
  static const std::vector<jaxpr::Array> kNone;
  const std::vector<jaxpr::Array>& oracle_out = have_oracle ? *oracle : kNone;

  // Per-output errors.
  const size_t num_outputs =
      std::max({legacy_out.size(), ir_out.size(), oracle_out.size()});
  for (size_t i = 0; i < num_outputs; ++i) {
    OutputErrors oe;
    oe.index = static_cast<int>(i);
    const bool has_l = i < legacy_out.size(), has_i = i < ir_out.size(),
               has_o = i < oracle_out.size();
    auto missing = [](ErrorStats* e, absl::string_view why) {
      e->compared = false;
      e->summary = std::string(why);
    };
    if (has_l && has_i) {
      oe.legacy_vs_ir = CompareForShadow(ir_out[i], legacy_out[i], rtol, atol);
    } else {
      missing(&oe.legacy_vs_ir, "an output is missing");
    }
    if (has_l && has_o) {
      oe.legacy_vs_oracle =
          CompareForShadow(oracle_out[i], legacy_out[i], rtol, atol);
    } else {
      missing(&oe.legacy_vs_oracle, "no legacy output or no oracle");
    }
    if (has_i && has_o) {
      oe.ir_vs_oracle = CompareForShadow(oracle_out[i], ir_out[i], rtol, atol);
    } else {
      missing(&oe.ir_vs_oracle, "no IR output or no oracle");
    }
    result.outputs.push_back(std::move(oe));
  }
  if (oracle_judge && have_oracle) {
    auto rejudge = [&](const std::vector<jaxpr::Array>& out,
                       ErrorStats OutputErrors::*side) {
      if (out.size() != oracle_out.size() || out.empty()) return;
      const std::vector<OutputCheck> checks = oracle_judge(out);
      for (size_t i = 0; i < checks.size() && i < result.outputs.size(); ++i) {
        ErrorStats& e = result.outputs[i].*side;
        e.ok = checks[i].ok;
        e.summary = checks[i].summary;
      }
    };
    rejudge(legacy_out, &OutputErrors::legacy_vs_oracle);
    rejudge(ir_out, &OutputErrors::ir_vs_oracle);
  }

  auto judge = [&](PipelineRun* r, const std::vector<jaxpr::Array>& out,
                   bool is_legacy) {
    if (!r->ran) return;
    if (!have_oracle) {
      r->stage = "oracle";
      r->error = result.oracle_error;
      return;
    }
    if (out.size() != oracle_out.size()) {
      r->stage = "compare";
      r->error = absl::StrCat("the model returned ", out.size(),
                              " outputs, expected ", oracle_out.size());
      return;
    }
    for (const OutputErrors& oe : result.outputs) {
      const ErrorStats& e = is_legacy ? oe.legacy_vs_oracle : oe.ir_vs_oracle;
      if (!e.ok) {
        r->stage = "compare";
        r->error = absl::StrCat("output ", oe.index, ": ", e.summary);
        return;
      }
    }
    r->passed = true;
  };
  judge(&result.legacy, legacy_out, true);
  judge(&result.ir, ir_out, false);

  // The verdict.
  auto failed = [](bool legacy_failed, bool ir_failed) {
    return legacy_failed && ir_failed ? Verdict::kBothFailed
           : legacy_failed            ? Verdict::kLegacyFailed
                                      : Verdict::kIrFailed;
  };
  if (!result.legacy.converted || !result.ir.converted) {
    result.verdict = failed(!result.legacy.converted, !result.ir.converted);
    std::vector<std::string> why;
    if (!result.legacy.converted)
      why.push_back("legacy: " + result.legacy.error);
    if (!result.ir.converted) why.push_back("ir: " + result.ir.error);
    result.reason = absl::StrJoin(why, "; ");
    return result;
  }
  if (result.diff->identical) {
    result.verdict = Verdict::kIdentical;
    result.reason = "same canonical graph";
    return result;
  }
  if (!can_run) {
    result.verdict = Verdict::kNotRun;
    result.reason = "graphs differ; models not run";
    return result;
  }
  if (!result.legacy.ran || !result.ir.ran) {
    result.verdict = failed(!result.legacy.ran, !result.ir.ran);
    std::vector<std::string> why;
    if (!result.legacy.ran) {
      why.push_back(absl::StrCat("legacy ", result.legacy.stage, ": ",
                                 result.legacy.error));
    }
    if (!result.ir.ran) {
      why.push_back(
          absl::StrCat("ir ", result.ir.stage, ": ", result.ir.error));
    }
    result.reason = absl::StrJoin(why, "; ");
    return result;
  }
  if (legacy_out.size() != ir_out.size()) {
    result.verdict = Verdict::kDifferent;
    result.reason = absl::StrCat("legacy returned ", legacy_out.size(),
                                 " outputs, ir ", ir_out.size());
    return result;
  }
  for (const OutputErrors& oe : result.outputs) {
    if (!oe.legacy_vs_ir.ok) {
      result.verdict = Verdict::kDifferent;
      result.reason =
          absl::StrCat("output ", oe.index, ": ", oe.legacy_vs_ir.summary);
      return result;
    }
  }
  result.verdict = Verdict::kEquivalent;
  result.reason = absl::StrCat("graphs differ; ", result.outputs.size(),
                               " output(s) agree within tolerance");
  return result;
}

ShadowResult ShadowCompare(const Bundle& bundle, const ShadowOptions& options,
                           OrtRunner* runner) {
  auto convert = [&](Pipeline p, double* seconds) {
    const auto start = std::chrono::steady_clock::now();
    // ONNX functions are an IR-only structure: the legacy side converts the
    // same program inlined, and the outputs must still agree.
    ConvertOptions convert_options = options.check.convert;
    if (p == Pipeline::kLegacy) convert_options.functions.clear();
    auto m = ConvertWithPipeline(p, bundle, convert_options);
    *seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return m;
  };
  double legacy_seconds = 0, ir_seconds = 0;
  auto legacy = convert(Pipeline::kLegacy, &legacy_seconds);
  auto ir = convert(Pipeline::kIr, &ir_seconds);
  if (!options.run_models) runner = nullptr;

  absl::StatusOr<std::vector<jaxpr::Array>> inputs =
      absl::FailedPreconditionError("not run");
  absl::StatusOr<std::vector<jaxpr::Array>> oracle =
      absl::FailedPreconditionError("not run");
  std::string oracle_name;
  if (runner != nullptr && (legacy.ok() || ir.ok())) {
    inputs = InputsFor(bundle, options.check);
    if (inputs.ok()) {
      oracle =
          OracleOutputs(bundle, *inputs, &oracle_name, options.check.convert);
    } else {
      oracle = inputs.status();
    }
  }
  // Pass/fail against the oracle by `check`'s rule (fixed tolerance, then
  // the f32 noise bound for bundles without a tolerance header).
  OracleJudge judge;
  if (inputs.ok() && oracle.ok()) {
    judge = [&](const std::vector<jaxpr::Array>& got) {
      std::string first_failure;
      return CompareOutputs(bundle, *inputs, *oracle, got,
                            oracle_name == "expected", &first_failure, {},
                            options.check.convert);
    };
  }
  ShadowResult result = CompareModels(legacy, ir, inputs, oracle, bundle.rtol,
                                      bundle.atol, runner, judge);
  result.bundle = bundle.jaxpr_path;
  result.name = bundle.jaxpr_path.empty() ? bundle.name : bundle.jaxpr_path;
  if (oracle.ok()) result.oracle = oracle_name;
  result.legacy.convert_seconds = legacy_seconds;
  result.ir.convert_seconds = ir_seconds;

  auto expect = [&](PipelineRun* r, const onnx::ModelProto& model,
                    const std::vector<std::string>& lines) {
    if (!r->passed || lines.empty()) return;
    absl::Status s = CheckGraphExpectations(model, lines);
    if (!s.ok()) {
      r->passed = false;
      r->stage = "expect_graph";
      r->error = FirstLine(s.message());
    }
  };
  expect(&result.legacy, result.legacy_model, options.expect_graph_legacy);
  expect(&result.ir, result.ir_model, options.expect_graph_ir);
  return result;
}

ShadowResult ShadowCompareFile(const std::string& bundle_path,
                               const ShadowOptions& options,
                               OrtRunner* runner) {
  auto bundle = LoadBundle(bundle_path);
  if (!bundle.ok()) {
    ShadowResult r;
    r.bundle = r.name = bundle_path;
    r.verdict = Verdict::kBothFailed;
    for (PipelineRun* p : {&r.legacy, &r.ir}) {
      p->stage = "load";
      p->error = FirstLine(bundle.status().message());
    }
    r.reason = "load: " + r.legacy.error;
    return r;
  }
  return ShadowCompare(*bundle, options, runner);
}

absl::StatusOr<ShadowMode> ParseShadowMode(const char* env_value) {
  if (env_value == nullptr) return ShadowMode::kOff;
  const std::string v =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(env_value));
  if (v.empty()) return ShadowMode::kOff;
  if (v == "strict") return ShadowMode::kStrict;
  auto on = ParseBoolSwitch(kShadowCompareEnv, env_value);
  if (!on.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kShadowCompareEnv, "='", env_value,
                     "' is not valid: use 1/true/on, 0/false/off or strict"));
  }
  return *on ? ShadowMode::kOn : ShadowMode::kOff;
}

absl::StatusOr<ShadowMode> ShadowModeFromEnvironment() {
  return ParseShadowMode(std::getenv(kShadowCompareEnv));
}

absl::Status ShadowStrictStatus(ShadowMode mode, const ShadowResult& r) {
  if (mode != ShadowMode::kStrict || r.verdict != Verdict::kDifferent) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      absl::StrCat(kShadowCompareEnv, "=strict: legacy and IR models of '",
                   r.name, "' differ: ", r.reason));
}

absl::Status AppendJsonLine(const std::string& path,
                            const nlohmann::json& line) {
  std::ofstream out(path, std::ios::app);
  if (!out) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot open shadow report '", path, "' for appending"));
  }
  out << line.dump() << "\n";
  out.close();
  if (!out) {
    return absl::InternalError(
        absl::StrCat("short write to shadow report '", path, "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<onnx::ModelProto> ConvertWithShadow(
    Pipeline routed, ShadowMode mode, const Bundle& bundle,
    const ConvertOptions& options) {
  if (routed == Pipeline::kLegacy && !options.functions.empty()) {
    // The legacy pipeline's refusal of --functions, as without shadow mode
    // (the comparison itself would convert the legacy side without them).
    return ConvertWithPipeline(routed, bundle, options);
  }
  ShadowOptions shadow;
  shadow.check.convert = options;
  OrtRunner* runner = &OrtRunner::Shared();
  std::string why_not;
  if (!runner->IsAvailable(&why_not)) runner = nullptr;
  ShadowResult r = ShadowCompare(bundle, shadow, runner);

  const char* report = std::getenv(kShadowReportEnv);
  if (report != nullptr && *report != '\0') {
    nlohmann::json line = ShadowToJson(r);
    line["routed"] = PipelineName(routed);
    line["mode"] = mode == ShadowMode::kStrict ? "strict" : "on";
    if (runner == nullptr) line["ort_unavailable"] = why_not;
    if (absl::Status s = AppendJsonLine(report, line); !s.ok()) return s;
  } else {
    std::fprintf(stderr, "jax2onnx shadow: %s %s: %s\n", VerdictName(r.verdict),
                 r.name.c_str(), r.reason.c_str());
  }
  J2O_RETURN_IF_ERROR(ShadowStrictStatus(mode, r));
  const bool ir = routed == Pipeline::kIr;
  const PipelineRun& run = ir ? r.ir : r.legacy;
  if (!run.converted) {
    // The routed pipeline's own error, exactly as without shadow mode.
    return ConvertWithPipeline(routed, bundle, options);
  }
  return ir ? std::move(r.ir_model) : std::move(r.legacy_model);
}

}  // namespace jax2onnx::api
