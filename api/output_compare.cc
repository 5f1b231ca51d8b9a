#include "api/output_compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/corpus.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/io/compare.h"
#include "jaxpr/mesh.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/prng.h"
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

struct Measured {
  double max_abs = 0;
  double max_rel = 0;
};

// The worst absolute and relative errors of `got` against `oracle` over all
// elements (output_compare.h states the rules). NaN for both when the arrays
// cannot be compared element-wise (their structural error says why).
Measured MeasureAll(const jaxpr::Array& oracle_in, const jaxpr::Array& got_in) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  auto numeric = [](jaxpr::DType d) {
    return jaxpr::IsFloat(d) || jaxpr::IsComplex(d) || jaxpr::IsInteger(d) ||
           d == jaxpr::DType::kBool;
  };
  const jaxpr::DType dtype = oracle_in.dtype();
  if (!numeric(dtype) || !numeric(got_in.dtype())) return {nan, nan};
  // Complex values on both sides as (re, im) pairs, as the model returns them.
  const jaxpr::Array oracle = jaxpr::IsComplex(dtype)
                                  ? jaxpr::ComplexAsPairs(oracle_in)
                                  : oracle_in;
  const jaxpr::Array got = jaxpr::IsComplex(got_in.dtype())
                               ? jaxpr::ComplexAsPairs(got_in)
                               : got_in;
  if (oracle.num_elements() != got.num_elements() ||
      oracle.shape() != got.shape()) {
    return {nan, nan};
  }
  Measured m;
  for (int64_t k = 0; k < oracle.num_elements(); ++k) {
    const double e = oracle.GetAsDouble(k), g = got.GetAsDouble(k);
    double abs_err, rel_err;
    if (std::isnan(e) || std::isnan(g) || std::isinf(e) || std::isinf(g)) {
      const bool same = (std::isnan(e) && std::isnan(g)) || e == g;
      abs_err = rel_err = same ? 0 : inf;
    } else {
      abs_err = std::fabs(g - e);
      rel_err = e != 0 ? abs_err / std::fabs(e) : (abs_err == 0 ? 0 : inf);
    }
    m.max_abs = std::max(m.max_abs, abs_err);
    m.max_rel = std::max(m.max_rel, rel_err);
  }
  return m;
}

// Where the fixed tolerance of an output of `dtype` comes from.
std::string ToleranceSource(jaxpr::DType dtype, const jaxpr::Bundle& bundle,
                            const ToleranceOverride& overrides) {
  if (!jaxpr::IsFloat(dtype) && !jaxpr::IsComplex(dtype)) return "exact";
  auto source = [](const std::optional<double>& flag,
                   const std::optional<double>& header) -> std::string {
    if (flag.has_value()) return "flag";
    if (header.has_value()) return "header";
    return "default";
  };
  const std::string r = source(overrides.rtol, bundle.rtol);
  const std::string a = source(overrides.atol, bundle.atol);
  if (r == a) return r;
  return absl::StrCat("rtol ", r, ", atol ", a);
}

std::string Short(double x) { return absl::StrFormat("%.3g", x); }

}  // namespace

absl::StatusOr<jaxpr::EvalOptions> InterpreterOptions(
    const jaxpr::Bundle& bundle, const ConvertOptions& convert) {
  jaxpr::EvalOptions options;
  options.elided_literals = &bundle.literals;
  options.filename = bundle.file.path;
  J2O_ASSIGN_OR_RETURN(
      options.threefry_partitionable,
      jaxpr::ThreefryModeOf(bundle.file, convert.threefry_partitionable));
  J2O_ASSIGN_OR_RETURN(options.mesh_axis_sizes,
                       jaxpr::ParseMeshAxisSizes(convert.mesh_axis_sizes));
  return options;
}

absl::StatusOr<NoiseReference> ComputeNoiseReference(
    const jaxpr::Bundle& bundle, const std::vector<jaxpr::Array>& inputs,
    const ConvertOptions& convert) {
  NoiseReference ref;
  J2O_ASSIGN_OR_RETURN(const jaxpr::EvalOptions base,
                       InterpreterOptions(bundle, convert));
  const std::string label = absl::StrCat(bundle.file.path, "[f64 reference]");
  const std::string wide_text =
      PromoteF32(jaxpr::PrintJaxprFile(bundle.file), jaxpr::DType::kF64);
  J2O_ASSIGN_OR_RETURN(jaxpr::JaxprFile wide,
                       jaxpr::ParseJaxprText(wide_text, label));
  const std::vector<jaxpr::Array> wide_literals = WidenedF32(bundle.literals);
  jaxpr::EvalOptions wide_options = base;
  wide_options.elided_literals = &wide_literals;
  wide_options.filename = label;
  J2O_ASSIGN_OR_RETURN(
      ref.f64, jaxpr::Evaluate(*wide.main, WidenedF32(bundle.consts),
                               WidenedF32(inputs), wide_options));
  for (jaxpr::PartialSumRounding mode :
       {jaxpr::PartialSumRounding::kNearest,
        jaxpr::PartialSumRounding::kUpward,
        jaxpr::PartialSumRounding::kDownward}) {
    jaxpr::EvalOptions seq_options = base;
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

// int4/uint4 and int2/uint2 outputs of a model below their first ONNX
// opset come back in their INT8/UINT8 carrier (plugin/narrow_int_carrier.h):
// `got` with those outputs read back as the oracle's narrow dtype (exact:
// the carrier holds the value itself), or `got` itself when none is.
const std::vector<jaxpr::Array>& NarrowIntsFromCarriers(
    const std::vector<jaxpr::Array>& expected,
    const std::vector<jaxpr::Array>& got, std::vector<jaxpr::Array>* storage) {
  auto carried = [&](size_t i) {
    return i < expected.size() && jaxpr::IsNarrowInt(expected[i].dtype()) &&
           (got[i].dtype() == jaxpr::DType::kI8 ||
            got[i].dtype() == jaxpr::DType::kU8);
  };
  bool any = false;
  for (size_t i = 0; i < got.size(); ++i) any = any || carried(i);
  if (!any) return got;
  *storage = got;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!carried(i)) continue;
    jaxpr::Array narrow(expected[i].dtype(), got[i].shape());
    for (int64_t k = 0; k < got[i].num_elements(); ++k) {
      narrow.SetFromDouble(k, static_cast<double>(got[i].GetAsInt64(k)));
    }
    (*storage)[i] = std::move(narrow);
  }
  return *storage;
}

std::vector<OutputCheck> CompareOutputs(
    const jaxpr::Bundle& bundle, const std::vector<jaxpr::Array>& inputs,
    const std::vector<jaxpr::Array>& expected,
    const std::vector<jaxpr::Array>& got_from_model, bool oracle_is_expected,
    std::string* first_failure, const ToleranceOverride& overrides,
    const ConvertOptions& convert) {
  std::vector<jaxpr::Array> uncarried;
  const std::vector<jaxpr::Array>& got =
      NarrowIntsFromCarriers(expected, got_from_model, &uncarried);
  first_failure->clear();
  const std::optional<double> rtol =
      overrides.rtol.has_value() ? overrides.rtol : bundle.rtol;
  const std::optional<double> atol =
      overrides.atol.has_value() ? overrides.atol : bundle.atol;
  const bool explicit_tolerance = rtol.has_value() || atol.has_value();
  std::optional<absl::StatusOr<NoiseReference>> noise;  // computed on demand
  std::vector<OutputCheck> outputs;
  for (size_t i = 0; i < got.size(); ++i) {
    jaxpr::CompareResult cmp =
        jaxpr::CompareArrays(expected[i], got[i], rtol, atol);
    OutputCheck out;
    out.index = static_cast<int>(i);
    out.ok = cmp.ok;
    out.summary = cmp.Summary();
    const Measured measured = MeasureAll(expected[i], got[i]);
    out.max_abs_error = measured.max_abs;
    out.max_rel_error = measured.max_rel;
    out.rtol = cmp.tolerance.rtol;
    out.atol = cmp.tolerance.atol;
    out.tolerance_source =
        ToleranceSource(expected[i].dtype(), bundle, overrides);
    if (!cmp.ok && !explicit_tolerance && cmp.structural_error.empty() &&
        expected[i].dtype() == jaxpr::DType::kF32) {
      if (!noise.has_value())
        noise = ComputeNoiseReference(bundle, inputs, convert);
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
          out.rtol = floor.rtol;
          out.atol = floor.atol;
          out.tolerance_source = "noise-scaled";
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

std::string MeasuredErrors(const OutputCheck& check) {
  if (std::isnan(check.max_abs_error)) {
    return absl::StrCat("not measured (", check.tolerance_source, ")");
  }
  std::string out = absl::StrCat("max_abs=", Short(check.max_abs_error),
                                 " max_rel=", Short(check.max_rel_error));
  if (check.tolerance_source == "exact") {
    absl::StrAppend(&out, " (exact)");
  } else if (check.tolerance_source == "noise-scaled") {
    absl::StrAppend(&out, " (noise-scaled: |got - f64 ref| ",
                    Short(check.f64_error), " <= ", Short(kNoiseMultiple),
                    " x ", Short(check.sequential_f32_error),
                    " + atol=", Short(check.atol), " + rtol=",
                    Short(check.rtol), " x |ref|)");
  } else {
    absl::StrAppend(&out, " (rtol=", Short(check.rtol), " atol=",
                    Short(check.atol), " from ", check.tolerance_source, ")");
  }
  return out;
}

}  // namespace jax2onnx::api
