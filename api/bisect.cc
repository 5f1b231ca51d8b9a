#include "api/bisect.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "api/convert_internal.h"
#include "api/router.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/io/compare.h"
#include "jaxpr/literal_value.h"
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

// The callee of a call primitive the IR pipeline inlines into the graph
// (plugins2/lax/calls.cc), so its equations' values are main-graph values
// named under the call's result ("d/pjit/c/add"); nullptr for any other
// equation, and for callees with constvars (none of the printed forms have
// them).
const jaxpr::ClosedJaxpr* InlinedCallee(const jaxpr::Eqn& eqn) {
  static const auto* kCalls = new absl::flat_hash_set<std::string>(
      {"pjit", "jit", "closed_call", "core_call", "remat", "remat2",
       "checkpoint", "custom_jvp_call", "custom_vjp_call",
       "custom_vjp_call_jaxpr"});
  if (!kCalls->contains(eqn.primitive)) return nullptr;
  for (const char* key : {"jaxpr", "call_jaxpr", "fun_jaxpr"}) {
    if (!eqn.params.Has(key)) continue;
    auto callee = eqn.params.GetJaxpr(key);
    if (!callee.ok() || !(*callee)->constvars.empty()) return nullptr;
    return *callee;
  }
  return nullptr;
}

// True when the equation holds a jaxpr that is not inlined (a scan, while or
// cond body becomes an ONNX Loop/If subgraph whose values the harness cannot
// expose as graph outputs).
bool HasOpaqueBody(const jaxpr::Eqn& eqn) {
  if (InlinedCallee(eqn) != nullptr) return false;
  for (const auto& [key, value] : eqn.params.entries()) {
    if (value.kind() == jaxpr::ParamValue::Kind::kJaxpr ||
        value.kind() == jaxpr::ParamValue::Kind::kJaxprTuple) {
      return true;
    }
    if (value.kind() == jaxpr::ParamValue::Kind::kList ||
        value.kind() == jaxpr::ParamValue::Kind::kTuple) {
      for (const jaxpr::ParamValue& item : value.items()) {
        if (item.kind() == jaxpr::ParamValue::Kind::kJaxpr) return true;
      }
    }
  }
  return false;
}

std::string Params(const jaxpr::Eqn& eqn) {
  std::string printed = jaxpr::PrintEqn(eqn);
  // Nested jaxprs make a line unreadable; the first line says enough.
  const size_t nl = printed.find('\n');
  if (nl != std::string::npos) printed = printed.substr(0, nl) + " ...";
  return printed;
}

// One result to compare: its step, the interpreter's value and the name of
// the model's value for it.
struct Pending {
  BisectStep step;
  jaxpr::Array reference;
  std::string onnx_name;
};

// Walks a jaxpr in program order, evaluating it with every result exposed,
// and descends into the callees the IR pipeline inlines (their equations
// come before the call's own results, named under the call's result
// "d/pjit/c/add"; a callee's outvar is the call's value).
class StepCollector {
 public:
  StepCollector(const jaxpr::Bundle& bundle,
                const jaxpr::EvalOptions& eval_options,
                std::vector<Pending>* pending)
      : bundle_(bundle), eval_options_(eval_options), pending_(pending) {}

  absl::Status Collect(
      const jaxpr::ClosedJaxpr& jaxpr, absl::Span<const jaxpr::Array> consts,
      absl::Span<const jaxpr::Array> inputs, const std::string& value_scope,
      const std::string& within,
      const absl::flat_hash_map<const jaxpr::Var*, std::string>& fixed_names,
      int depth) {
    std::vector<std::pair<int, int>> results;
    const jaxpr::ClosedJaxpr all = WithEveryResult(jaxpr, &results);
    J2O_ASSIGN_OR_RETURN(std::vector<jaxpr::Array> reference,
                         jaxpr::Evaluate(all, consts, inputs, eval_options_));
    absl::flat_hash_map<const jaxpr::Var*, const jaxpr::Array*> env;
    for (size_t i = 0; i < jaxpr.constvars.size() && i < consts.size(); ++i) {
      env[jaxpr.constvars[i]] = &consts[i];
    }
    for (size_t i = 0; i < jaxpr.invars.size() && i < inputs.size(); ++i) {
      env[jaxpr.invars[i]] = &inputs[i];
    }
    for (size_t k = 0; k < results.size(); ++k) {
      const auto& [e, o] = results[k];
      env[jaxpr.eqns[e].outputs[o]] = &reference[k];
    }
    auto name_of = [&](const jaxpr::Eqn& eqn, int o) {
      const jaxpr::Var* var = eqn.outputs[o];
      if (auto f = fixed_names.find(var); f != fixed_names.end()) {
        return f->second;
      }
      return absl::StrCat(value_scope, var->name, "/", eqn.primitive);
    };
    size_t k = 0;
    for (size_t e = 0; e < jaxpr.eqns.size(); ++e) {
      const jaxpr::Eqn& eqn = jaxpr.eqns[e];
      const std::string where = absl::StrCat(bundle_.file.path, ":",
                                             eqn.loc.line, ":", eqn.loc.column);
      if (const jaxpr::ClosedJaxpr* callee = InlinedCallee(eqn);
          callee != nullptr && depth < kMaxDepth) {
        std::vector<jaxpr::Array> args;
        bool known = true;
        for (const jaxpr::Atom& a : eqn.inputs) {
          if (a.is_literal()) {
            auto v = jaxpr::LiteralValue(*a.literal, &eqn,
                                         eval_options_.elided_literals);
            if (!v.ok()) {
              known = false;
              break;
            }
            args.push_back(*std::move(v));
          } else if (auto it = env.find(a.var); it != env.end()) {
            args.push_back(*it->second);
          } else {
            known = false;
            break;
          }
        }
        if (known && args.size() == callee->invars.size()) {
          absl::flat_hash_map<const jaxpr::Var*, std::string> callee_names;
          for (size_t i = 0;
               i < callee->outvars.size() && i < eqn.outputs.size(); ++i) {
            const jaxpr::Atom& a = callee->outvars[i];
            if (a.is_literal() || eqn.outputs[i]->is_drop) continue;
            callee_names.try_emplace(a.var, name_of(eqn, static_cast<int>(i)));
          }
          const std::string scope =
              absl::StrCat(value_scope,
                           eqn.outputs.empty() || eqn.outputs[0]->is_drop
                               ? "_"
                               : eqn.outputs[0]->name,
                           "/", eqn.primitive, "/");
          J2O_RETURN_IF_ERROR(
              Collect(*callee, {}, args, scope,
                      absl::StrCat(within, "#", e, " '", eqn.primitive, "' at ",
                                   where, " > "),
                      callee_names, depth + 1));
        }
      }
      for (; k < results.size() && results[k].first == static_cast<int>(e);
           ++k) {
        const int o = results[k].second;
        Pending p;
        p.step.eqn_index = static_cast<int>(e);
        p.step.var = eqn.outputs[o]->name;
        p.step.primitive = eqn.primitive;
        p.step.where = where;
        p.step.within = within;
        p.step.depth = depth;
        p.step.equation = Params(eqn);
        p.step.opaque_body = HasOpaqueBody(eqn);
        p.onnx_name = name_of(eqn, o);
        p.reference = std::move(reference[k]);
        pending_->push_back(std::move(p));
      }
    }
    return absl::OkStatus();
  }

 private:
  static constexpr int kMaxDepth = 16;
  const jaxpr::Bundle& bundle_;
  const jaxpr::EvalOptions& eval_options_;
  std::vector<Pending>* pending_;
};

}  // namespace

std::string BisectResult::Summary() const {
  if (first_diverging < 0) {
    return absl::StrCat("every one of the ", observed,
                        " observable equation results agrees with the "
                        "interpreter (",
                        steps.size() - observed, " not observable)");
  }
  const BisectStep& s = steps[first_diverging];
  return absl::StrCat(
      s.where, ": first diverging equation #", s.eqn_index, " '", s.primitive,
      "'",
      s.within.empty()
          ? ""
          : absl::StrCat(" inside ", absl::StripSuffix(s.within, " > ")),
      " (", s.equation, "): max |error| ",
      absl::StrFormat("%.2g", s.max_abs_error), "; ", s.summary,
      s.opaque_body ? "; the equations of its body are not observable (an "
                      "ONNX Loop/If subgraph)"
                    : "");
}

absl::StatusOr<BisectResult> Bisect(const jaxpr::Bundle& bundle,
                                    const onnx::ModelProto& model,
                                    const std::vector<jaxpr::Array>& inputs,
                                    const ToleranceOverride& tolerance,
                                    const ConvertOptions& convert,
                                    OrtRunner& runner) {
  const jaxpr::ClosedJaxpr& main = bundle.jaxpr();
  J2O_ASSIGN_OR_RETURN(const jaxpr::EvalOptions eval_options,
                       InterpreterOptions(bundle, convert));

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

  // The interpreter's value of every result, nested calls included.
  std::vector<Pending> pending;
  StepCollector collector(bundle, eval_options, &pending);
  J2O_RETURN_IF_ERROR(collector.Collect(main, bundle.consts, inputs, "", "",
                                        program_output, 0));
  std::vector<jaxpr::Array> reference;
  BisectResult out;
  std::vector<int> output_of_step;
  for (Pending& p : pending) {
    BisectStep step = std::move(p.step);
    reference.push_back(std::move(p.reference));
    const std::string& name = p.onnx_name;
    int output = -1;
    if (auto h = harness_output.find(name); h != harness_output.end()) {
      output = h->second;
    } else if (auto t = typed.find(name); t != typed.end()) {
      output = graph.output_size();
      *graph.add_output() = *t->second;
      harness_output.emplace(name, output);
    }
    if (output >= 0) step.onnx_name = name;
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

namespace {

// The model at `path` with every external initializer read into the proto
// (its location relative to the model's folder, offset and length).
absl::StatusOr<onnx::ModelProto> ReadModelInlined(const std::string& path) {
  J2O_ASSIGN_OR_RETURN(onnx::ModelProto model, ReadModelFile(path));
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  uint64_t inlined = model.ByteSizeLong();
  for (onnx::TensorProto& t : *model.mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    std::string location;
    uint64_t offset = 0, length = 0;
    bool has_length = false;
    for (const onnx::StringStringEntryProto& e : t.external_data()) {
      if (e.key() == "location") location = e.value();
      if (e.key() == "offset" && !absl::SimpleAtoi(e.value(), &offset)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "initializer ", t.name(), ": bad external offset ", e.value()));
      }
      if (e.key() == "length") {
        has_length = absl::SimpleAtoi(e.value(), &length);
        if (!has_length) {
          return absl::InvalidArgumentError(absl::StrCat(
              "initializer ", t.name(), ": bad external length ", e.value()));
        }
      }
    }
    if (location.empty() || !has_length) {
      return absl::InvalidArgumentError(
          absl::StrCat("initializer ", t.name(),
                       ": external data needs a location and a length"));
    }
    inlined += length;
    if (inlined >= (uint64_t{1} << 31)) {
      return absl::ResourceExhaustedError(
          "the model with its external data inlined would pass protobuf's "
          "2 GiB limit: bisect the bundle instead (check --bisect BUNDLE)");
    }
    std::ifstream data(dir / location, std::ios::binary);
    if (!data) {
      return absl::NotFoundError(absl::StrCat("initializer ", t.name(),
                                              ": cannot open external data ",
                                              (dir / location).string()));
    }
    std::string bytes(length, '\0');
    data.seekg(static_cast<std::streamoff>(offset));
    if (!data.read(bytes.data(), static_cast<std::streamsize>(length))) {
      return absl::DataLossError(
          absl::StrCat("initializer ", t.name(), ": external data ", location,
                       " ends before offset ", offset, " + length ", length));
    }
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
    t.set_raw_data(std::move(bytes));
  }
  return model;
}

}  // namespace

absl::StatusOr<BisectResult> BisectModelFile(const std::string& model_path,
                                             const std::string& bundle_path,
                                             const CheckOptions& options,
                                             OrtRunner& runner) {
  std::string inputs_source;
  J2O_ASSIGN_OR_RETURN(
      const Bundle bundle,
      LoadBundleForCheck(bundle_path, options, &inputs_source));
  J2O_ASSIGN_OR_RETURN(const onnx::ModelProto model,
                       ReadModelInlined(model_path));
  auto refuse = [&](absl::string_view why) {
    return absl::UnimplementedError(
        absl::StrCat("bisect of ", model_path, ": ", why,
                     "; bisect the bundle instead (check --bisect BUNDLE)"));
  };
  for (const onnx::StringStringEntryProto& e : model.metadata_props()) {
    if ((e.key() == "jax2onnx_inputs_as_nchw" ||
         e.key() == "jax2onnx_outputs_as_nchw") &&
        !e.value().empty()) {
      return refuse("the model has NCHW adapters (metadata " + e.key() + ")");
    }
  }
  if (!options.convert.inputs_as_nchw.empty() ||
      !options.convert.outputs_as_nchw.empty()) {
    return refuse("NCHW adapters are not followed");
  }
  if (!options.convert.input_names.empty() ||
      !options.convert.output_names.empty() ||
      bundle.file.Header("input_names").has_value() ||
      bundle.file.Header("output_names").has_value()) {
    return refuse("renamed inputs or outputs are not followed");
  }
  const size_t program_inputs = bundle.jaxpr().invars.size();
  if (static_cast<size_t>(model.graph().input_size()) != program_inputs) {
    return refuse(absl::StrCat("the model has ", model.graph().input_size(),
                               " graph inputs, the program ", program_inputs));
  }
  J2O_ASSIGN_OR_RETURN(const std::vector<jaxpr::Array> inputs,
                       InputsFor(bundle, options));
  return Bisect(bundle, model, inputs, options.tolerance, options.convert,
                runner);
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
