#include "api/output_compare.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/corpus.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/io/compare.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/text/printer.h"

namespace jax2onnx::api {
namespace {

std::vector<jaxpr::Array> WidenedF32(const std::vector<jaxpr::Array>& arrays) {
  std::vector<jaxpr::Array> out;
  out.reserve(arrays.size());
  for (const jaxpr::Array& a : arrays) {
    if (a.dtype() != jaxpr::DType::kF32) {
      out.push_back(a);
      continue;
    }
    jaxpr::Array wide(jaxpr::DType::kF64, a.shape());
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      wide.SetFromDouble(i, a.GetAsDouble(i));
    }
    out.push_back(std::move(wide));
  }
  return out;
}

// The fixed rule at one element (jaxpr/io/compare.h semantics for reals).
bool WithinFixed(double expected, double got, const jaxpr::Tolerance& tol) {
  if (std::isnan(expected) || std::isnan(got)) {
    return std::isnan(expected) && std::isnan(got);
  }
  if (std::isinf(expected) || std::isinf(got)) return expected == got;
  return std::fabs(got - expected) <= tol.atol + tol.rtol * std::fabs(expected);
}

// E: the worst |seq - ref| over the finite elements of both.
double SequentialError(const jaxpr::Array& seq, const jaxpr::Array& ref) {
  double worst = 0;
  for (int64_t k = 0; k < ref.num_elements(); ++k) {
    const double s = seq.GetAsDouble(k), r = ref.GetAsDouble(k);
    if (std::isfinite(s) && std::isfinite(r)) {
      worst = std::max(worst, std::fabs(s - r));
    }
  }
  return worst;
}

struct NoiseVerdict {
  bool ok = true;
  double worst_error = 0;  // worst |values - ref| among finite pairs
  int64_t worst_index = -1;
  double worst_allowed = 0;
  double worst_value = 0, worst_ref = 0;
};

// `values` against `ref` under K * E + floor, elements that pass the fixed
// rule against `fixed_oracle` (when given) excepted.
NoiseVerdict NoiseCheck(const jaxpr::Array& values, const jaxpr::Array& ref,
                        double sequential_error,
                        const jaxpr::Array* fixed_oracle,
                        const jaxpr::Tolerance& floor) {
  NoiseVerdict v;
  double worst_excess = -1;
  for (int64_t k = 0; k < ref.num_elements(); ++k) {
    const double g = values.GetAsDouble(k), r = ref.GetAsDouble(k);
    const double allowed = kNoiseMultiple * sequential_error + floor.atol +
                           floor.rtol * std::fabs(r);
    bool ok;
    double excess;
    if (std::isfinite(g) && std::isfinite(r)) {
      const double err = std::fabs(g - r);
      v.worst_error = std::max(v.worst_error, err);
      ok = err <= allowed;
      excess = err - allowed;
    } else {
      // Overflow or NaN: only exact agreement (NaN with NaN) counts here.
      ok = (std::isnan(g) && std::isnan(r)) || g == r;
      excess = ok ? -1 : HUGE_VAL;
    }
    if (!ok && fixed_oracle != nullptr &&
        WithinFixed(fixed_oracle->GetAsDouble(k), g, floor)) {
      ok = true;
    }
    if (!ok) {
      v.ok = false;
      if (excess > worst_excess) {
        worst_excess = excess;
        v.worst_index = k;
        v.worst_allowed = allowed;
        v.worst_value = g;
        v.worst_ref = r;
      }
    }
  }
  return v;
}

std::string Num(double x) { return absl::StrFormat("%.9g", x); }

}  // namespace

absl::StatusOr<NoiseReference> ComputeNoiseReference(
    const jaxpr::Bundle& bundle, const std::vector<jaxpr::Array>& inputs) {
  NoiseReference ref;
  const std::string label = absl::StrCat(bundle.file.path, "[f64 reference]");
  const std::string wide_text =
      PromoteF32(jaxpr::PrintJaxprFile(bundle.file), jaxpr::DType::kF64);
  J2O_ASSIGN_OR_RETURN(jaxpr::JaxprFile wide,
                       jaxpr::ParseJaxprText(wide_text, label));
  const std::vector<jaxpr::Array> wide_literals = WidenedF32(bundle.literals);
  jaxpr::EvalOptions wide_options;
  wide_options.elided_literals = &wide_literals;
  wide_options.filename = label;
  J2O_ASSIGN_OR_RETURN(
      ref.f64, jaxpr::Evaluate(*wide.main, WidenedF32(bundle.consts),
                               WidenedF32(inputs), wide_options));
  for (jaxpr::PartialSumRounding mode :
       {jaxpr::PartialSumRounding::kNearest,
        jaxpr::PartialSumRounding::kUpward,
        jaxpr::PartialSumRounding::kDownward}) {
    jaxpr::EvalOptions seq_options;
    seq_options.elided_literals = &bundle.literals;
    seq_options.filename = bundle.file.path;
    seq_options.f32_partial_sums = mode;
    J2O_ASSIGN_OR_RETURN(std::vector<jaxpr::Array> run,
                         jaxpr::Evaluate(bundle.jaxpr(), bundle.consts, inputs,
                                         seq_options));
    if (run.size() != ref.f64.size()) {
      return absl::InternalError("the f64 reference has another output count");
    }
    ref.sequential_f32.push_back(std::move(run));
  }
  return ref;
}

std::vector<OutputCheck> CompareOutputs(
    const jaxpr::Bundle& bundle, const std::vector<jaxpr::Array>& inputs,
    const std::vector<jaxpr::Array>& expected,
    const std::vector<jaxpr::Array>& got, bool oracle_is_expected,
    std::string* first_failure) {
  first_failure->clear();
  const bool header_tolerance = bundle.rtol.has_value() || bundle.atol.has_value();
  std::optional<absl::StatusOr<NoiseReference>> noise;  // computed on demand
  std::vector<OutputCheck> outputs;
  for (size_t i = 0; i < got.size(); ++i) {
    jaxpr::CompareResult cmp =
        jaxpr::CompareArrays(expected[i], got[i], bundle.rtol, bundle.atol);
    OutputCheck out;
    out.index = static_cast<int>(i);
    out.ok = cmp.ok;
    out.summary = cmp.Summary();
    out.max_abs_error = cmp.worst_abs_diff;
    if (!cmp.ok && !header_tolerance && cmp.structural_error.empty() &&
        expected[i].dtype() == jaxpr::DType::kF32) {
      if (!noise.has_value()) noise = ComputeNoiseReference(bundle, inputs);
      if (!noise->ok()) {
        absl::StrAppend(&out.summary, "; noise bound unavailable: ",
                        noise->status().message());
      } else if (i < (*noise)->f64.size() &&
                 (*noise)->f64[i].shape() == got[i].shape()) {
        const jaxpr::Array& ref = (*noise)->f64[i];
        double e = 0;
        for (const auto& run : (*noise)->sequential_f32) {
          e = std::max(e, SequentialError(run[i], ref));
        }
        const jaxpr::Tolerance floor =
            jaxpr::DefaultTolerance(jaxpr::DType::kF32);
        const NoiseVerdict v = NoiseCheck(got[i], ref, e, &expected[i], floor);
        out.noise_checked = true;
        out.f64_error = v.worst_error;
        out.sequential_f32_error = e;
        const std::string rule = absl::StrCat(
            kNoiseMultiple, " x ", Num(e),
            " (sequential-f32 interpreter error) + ", floor.atol, " + ",
            floor.rtol, " x |ref|");
        bool oracle_ok = true;
        if (oracle_is_expected) {
          const NoiseVerdict ov =
              NoiseCheck(expected[i], ref, e, nullptr, floor);
          oracle_ok = ov.ok;
          if (!ov.ok) {
            absl::StrAppend(&out.summary,
                            "; noise bound not applied: expected_i differs "
                            "from the f64 interpreter at flat index ",
                            ov.worst_index, " (", Num(ov.worst_value), " vs ",
                            Num(ov.worst_ref), ")");
          }
        }
        if (oracle_ok && v.ok) {
          out.ok = true;
          out.summary = absl::StrCat(
              "ok within the f32 noise bound: |got - f64 reference| <= ",
              Num(v.worst_error), ", allowed ", rule, "; fixed rule: ",
              cmp.Summary());
        } else if (oracle_ok) {
          absl::StrAppend(&out.summary, "; beyond the f32 noise bound too: at flat index ",
                          v.worst_index, " got ", Num(v.worst_value),
                          ", f64 reference ", Num(v.worst_ref), " (|diff| ",
                          Num(std::fabs(v.worst_value - v.worst_ref)),
                          " > allowed ", Num(v.worst_allowed), " = ", rule,
                          ")");
        }
      }
    }
    if (!out.ok && first_failure->empty()) {
      *first_failure = absl::StrCat("output ", i, ": ", out.summary);
    }
    outputs.push_back(std::move(out));
  }
  return outputs;
}

}  // namespace jax2onnx::api
