#include "api/bisect.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "api/convert_internal.h"
#include "api/router.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/io/compare.h"
#include "jaxpr/prng.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/printer.h"

namespace jax2onnx::api {
namespace {

std::optional<double> HeaderNumber(const jaxpr::Bundle& bundle,
                                   absl::string_view key) {
  std::optional<std::string> text = bundle.file.Header(key);
  double value = 0;
  if (!text || !absl::SimpleAtod(absl::StripAsciiWhitespace(*text), &value)) {
    return std::nullopt;
  }
  return value;
}

// The program with every top-level equation's (non-dropped) results as its
// outputs; `results` receives (equation index, result index) per output.
// The copy shares the bundle's vars, which outlive it.
jaxpr::ClosedJaxpr WithEveryResult(const jaxpr::ClosedJaxpr& main,
                                   std::vector<std::pair<int, int>>* results) {
  jaxpr::ClosedJaxpr all;
  all.constvars = main.constvars;
  all.invars = main.invars;
  all.eqns = main.eqns;
  all.effects = main.effects;
  all.loc = main.loc;
  for (size_t e = 0; e < main.eqns.size(); ++e) {
    const jaxpr::Eqn& eqn = main.eqns[e];
    for (size_t o = 0; o < eqn.outputs.size(); ++o) {
      if (eqn.outputs[o]->is_drop) continue;
      all.outvars.push_back(jaxpr::Atom::OfVar(eqn.outputs[o]));
      results->emplace_back(static_cast<int>(e), static_cast<int>(o));
    }
  }
  return all;
}

std::string Params(const jaxpr::Eqn& eqn) {
  std::string printed = jaxpr::PrintEqn(eqn);
  // Nested jaxprs make a line unreadable; the first line says enough.
  const size_t nl = printed.find('\n');
  if (nl != std::string::npos) printed = printed.substr(0, nl) + " ...";
  return printed;
}

}  // namespace

std::string BisectResult::Summary() const {
  if (first_diverging < 0) {
    return absl::StrCat("every one of the ", observed,
                        " observable equation results agrees with the "
                        "interpreter (",
                        steps.size() - observed, " not observable)");
  }
  const BisectStep& s = steps[first_diverging];
  return absl::StrCat(s.where, ": first diverging equation #", s.eqn_index,
                      " '", s.primitive, "' (", s.equation, "): max |error| ",
                      absl::StrFormat("%.2g", s.max_abs_error), "; ",
                      s.summary);
}

absl::StatusOr<BisectResult> Bisect(const jaxpr::Bundle& bundle,
                                    const onnx::ModelProto& model,
                                    const std::vector<jaxpr::Array>& inputs,
                                    const ToleranceOverride& tolerance,
                                    const ConvertOptions& convert,
                                    OrtRunner& runner) {
  const jaxpr::ClosedJaxpr& main = bundle.jaxpr();
  std::vector<std::pair<int, int>> results;
  const jaxpr::ClosedJaxpr all = WithEveryResult(main, &results);

  // The interpreter's value of every result.
  J2O_ASSIGN_OR_RETURN(const jaxpr::EvalOptions eval_options,
                       InterpreterOptions(bundle, convert));
  J2O_ASSIGN_OR_RETURN(
      std::vector<jaxpr::Array> reference,
      jaxpr::Evaluate(all, bundle.consts, inputs, eval_options));

  // The harness: the model's outputs, then every result's value the model
  // has, by name (the program's outputs are the model's outputs).
  onnx::ModelProto harness = model;
  onnx::GraphProto& graph = *harness.mutable_graph();
  absl::flat_hash_map<std::string, const onnx::ValueInfoProto*> typed;
  for (const onnx::ValueInfoProto& v : model.graph().value_info()) {
    typed.emplace(v.name(), &v);
  }
  absl::flat_hash_map<std::string, int> harness_output;
  for (int i = 0; i < graph.output_size(); ++i) {
    harness_output.emplace(graph.output(i).name(), i);
  }
  absl::flat_hash_map<const jaxpr::Var*, std::string> program_output;
  for (size_t i = 0; i < main.outvars.size(); ++i) {
    const jaxpr::Atom& a = main.outvars[i];
    if (!a.is_literal() && static_cast<int>(i) < model.graph().output_size()) {
      program_output.try_emplace(a.var, model.graph().output(i).name());
    }
  }
  BisectResult out;
  std::vector<int> output_of_step;
  for (const auto& [e, o] : results) {
    const jaxpr::Eqn& eqn = main.eqns[e];
    BisectStep step;
    step.eqn_index = e;
    step.var = eqn.outputs[o]->name;
    step.primitive = eqn.primitive;
    step.where =
        absl::StrCat(bundle.file.path, ":", eqn.loc.line, ":", eqn.loc.column);
    step.equation = Params(eqn);
    int output = -1;
    if (auto p = program_output.find(eqn.outputs[o]);
        p != program_output.end()) {
      step.onnx_name = p->second;
      output = harness_output.at(p->second);
    } else {
      const std::string name = absl::StrCat(step.var, "/", eqn.primitive);
      if (auto h = harness_output.find(name); h != harness_output.end()) {
        output = h->second;
      } else if (auto t = typed.find(name); t != typed.end()) {
        output = graph.output_size();
        *graph.add_output() = *t->second;
        harness_output.emplace(name, output);
      }
      if (output >= 0) step.onnx_name = name;
    }
    if (output < 0) {
      step.summary =
          "not observable: the model has no value of its own for it (inside "
          "a fused node, folded, or an alias of an earlier value)";
    }
    output_of_step.push_back(output);
    out.steps.push_back(std::move(step));
  }

  J2O_ASSIGN_OR_RETURN(std::vector<jaxpr::Array> got,
                       RunModel(harness, inputs, runner));
  const std::optional<double> rtol =
      tolerance.rtol ? tolerance.rtol : HeaderNumber(bundle, "rtol");
  const std::optional<double> atol =
      tolerance.atol ? tolerance.atol : HeaderNumber(bundle, "atol");
  for (size_t k = 0; k < out.steps.size(); ++k) {
    BisectStep& step = out.steps[k];
    const int output = output_of_step[k];
    if (output < 0 || output >= static_cast<int>(got.size())) continue;
    const jaxpr::CompareResult c =
        jaxpr::CompareArrays(reference[k], got[output], rtol, atol);
    if (!c.structural_error.empty()) {
      step.onnx_name.clear();
      step.summary = absl::StrCat("not comparable: ", c.structural_error);
      continue;
    }
    step.observed = true;
    ++out.observed;
    step.ok = c.ok;
    step.summary = c.Summary();
    for (int64_t i = 0; i < reference[k].num_elements(); ++i) {
      const double a = reference[k].GetAsDouble(i);
      const double b = got[output].GetAsDouble(i);
      if (a == b || (std::isnan(a) && std::isnan(b))) continue;
      step.max_abs_error = std::max(step.max_abs_error, std::abs(a - b));
      if (std::isnan(a - b)) step.max_abs_error = INFINITY;
    }
    if (!c.ok && out.first_diverging < 0) {
      out.first_diverging = static_cast<int>(k);
    }
  }
  return out;
}

absl::StatusOr<BisectResult> BisectBundle(const std::string& bundle_path,
                                          const CheckOptions& options,
                                          OrtRunner& runner) {
  J2O_ASSIGN_OR_RETURN(const Pipeline pipeline, RoutePipeline(options.convert));
  std::string inputs_source;
  J2O_ASSIGN_OR_RETURN(
      const Bundle bundle,
      LoadBundleForCheck(bundle_path, options, &inputs_source));
  J2O_ASSIGN_OR_RETURN(const onnx::ModelProto model,
                       ConvertWithPipeline(pipeline, bundle, options.convert));
  J2O_ASSIGN_OR_RETURN(const std::vector<jaxpr::Array> inputs,
                       InputsFor(bundle, options));
  return Bisect(bundle, model, inputs, options.tolerance, options.convert,
                runner);
}

}  // namespace jax2onnx::api
