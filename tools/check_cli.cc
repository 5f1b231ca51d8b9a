#include "tools/check_cli.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "gflags/gflags.h"

DEFINE_double(rtol, 0,
              "Relative tolerance for every float output, replacing the "
              "bundle's `# rtol:` header and the dtype default; turns the f32 "
              "noise bound off (check). Unset unless given: the 0 shown is "
              "not applied.");
DEFINE_double(atol, 0,
              "Absolute tolerance for every float output, replacing the "
              "bundle's `# atol:` header and the dtype default; turns the f32 "
              "noise bound off (check). Unset unless given: the 0 shown is "
              "not applied.");

namespace jax2onnx::cli {
namespace {

// The flag's value when given on the command line; false when it is bad.
bool GivenValue(const char* name, double value, std::optional<double>* out) {
  gflags::CommandLineFlagInfo info;
  if (!gflags::GetCommandLineFlagInfo(name, &info) || info.is_default) {
    return true;
  }
  if (!std::isfinite(value) || value < 0) {
    std::fprintf(stderr,
                 "jax2onnx check: --%s must be a finite number >= 0, got %g\n",
                 name, value);
    return false;
  }
  *out = value;
  return true;
}

nlohmann::json Number(double x) {
  if (std::isnan(x)) return nullptr;
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

}  // namespace

bool ToleranceOverrideFromFlags(api::ToleranceOverride* tolerance) {
  return GivenValue("rtol", FLAGS_rtol, &tolerance->rtol) &&
         GivenValue("atol", FLAGS_atol, &tolerance->atol);
}

nlohmann::json OutputCheckJson(const api::OutputCheck& o) {
  nlohmann::json out = {{"index", o.index},
                        {"ok", o.ok},
                        {"max_abs_error", Number(o.max_abs_error)},
                        {"max_rel_error", Number(o.max_rel_error)},
                        {"rtol", o.rtol},
                        {"atol", o.atol},
                        {"tolerance_source", o.tolerance_source},
                        {"summary", o.summary}};
  if (o.noise_checked) {
    out["f64_error"] = Number(o.f64_error);
    out["sequential_f32_error"] = Number(o.sequential_f32_error);
  }
  return out;
}

nlohmann::json BisectJson(const api::BisectResult& bisect) {
  nlohmann::json steps = nlohmann::json::array();
  for (const api::BisectStep& s : bisect.steps) {
    nlohmann::json j = {{"equation_index", s.eqn_index},
                        {"var", s.var},
                        {"where", s.where},
                        {"primitive", s.primitive},
                        {"equation", s.equation},
                        {"observed", s.observed},
                        {"summary", s.summary}};
    if (!s.within.empty()) j["within"] = s.within;
    if (s.observed) {
      j["onnx_value"] = s.onnx_name;
      j["ok"] = s.ok;
      j["max_abs_error"] = Number(s.max_abs_error);
    }
    steps.push_back(std::move(j));
  }
  return {{"first_diverging", bisect.first_diverging < 0
                                  ? nlohmann::json(nullptr)
                                  : steps[bisect.first_diverging]},
          {"observed", bisect.observed},
          {"summary", bisect.Summary()},
          {"steps", steps}};
}

}  // namespace jax2onnx::cli
