#include "converter2/functions.h"

#include <fnmatch.h>

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "converter2/lowering_context.h"
#include "jaxpr/literal_value.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/printer.h"

namespace jax2onnx::converter2 {
namespace {

// Prints a closed jaxpr with its variables numbered in binding order, so
// that alpha-equivalent jaxprs print alike. Closed jaxprs (every jaxpr in
// a param) bind all the variables they use, so each gets its own numbering.
class CanonicalPrinter {
 public:
  std::string Jaxpr(const jaxpr::ClosedJaxpr& j) {
    std::string out = "{";
    for (const jaxpr::Var* v : j.constvars) absl::StrAppend(&out, Bind(v), " ");
    absl::StrAppend(&out, ";");
    for (const jaxpr::Var* v : j.invars) absl::StrAppend(&out, " ", Bind(v));
    absl::StrAppend(&out, ". let");
    for (const jaxpr::Eqn& eqn : j.eqns) {
      // Operands first: they refer to earlier bindings.
      std::string ins;
      for (const jaxpr::Atom& a : eqn.inputs)
        absl::StrAppend(&ins, " ", Atom(a));
      std::string outs;
      for (const jaxpr::Var* v : eqn.outputs)
        absl::StrAppend(&outs, Bind(v), " ");
      absl::StrAppend(&out, " ", outs, "= ", eqn.primitive, Params(eqn.params),
                      ins, ";");
    }
    absl::StrAppend(&out, " in (");
    for (const jaxpr::Atom& a : j.outvars) absl::StrAppend(&out, Atom(a), ",");
    absl::StrAppend(&out, ")}");
    return out;
  }

  static std::string Params(const jaxpr::Params& params) {
    std::string out = "[";
    for (const auto& [key, value] : params.entries()) {
      absl::StrAppend(&out, key, "=", Param(value), " ");
    }
    return out + "]";
  }

 private:
  static std::string Param(const jaxpr::ParamValue& value) {
    using Kind = jaxpr::ParamValue::Kind;
    if (value.kind() == Kind::kJaxpr && value.jaxpr() != nullptr) {
      return CanonicalPrinter().Jaxpr(*value.jaxpr());
    }
    if (value.kind() == Kind::kJaxprTuple) {
      std::string out = "(";
      for (const jaxpr::ParamValue& item : value.items()) {
        absl::StrAppend(&out, Param(item), " ");
      }
      return out + ")";
    }
    // Anything else prints as JAX printed it; a jaxpr nested deeper (none
    // of the call primitives has one) keeps its printed names, which can
    // only cost a missed dedup, never a wrong one.
    return value.ToString();
  }

  std::string Bind(const jaxpr::Var* v) {
    const int id = static_cast<int>(ids_.size());
    ids_[v] = id;
    return absl::StrCat(v->is_drop ? "_" : "v", id, ":", v->aval.ToString());
  }

  std::string Atom(const jaxpr::Atom& a) {
    if (a.is_literal()) {
      std::string text = jaxpr::PrintAtom(a);
      // `[...]` literals differ by which npz array holds them.
      if (a.literal->elided_index >= 0) {
        absl::StrAppend(&text, "#", a.literal->elided_index);
      }
      return text;
    }
    auto it = ids_.find(a.var);
    if (it == ids_.end()) return absl::StrCat("?", a.var->name);
    return absl::StrCat("v", it->second);
  }

  absl::flat_hash_map<const jaxpr::Var*, int> ids_;
};

jaxpr::Aval LiteralAval(const jaxpr::Literal& lit) {
  if (lit.aval.has_value()) return *lit.aval;
  return jaxpr::Aval::Static(jaxpr::LiteralDType(lit, nullptr), {});
}

// The model's function-call nodes in `graph` and its subgraphs.
void CollectCalls(const ir::Graph* graph,
                  absl::flat_hash_set<std::string>* names,
                  std::vector<std::string>* fresh) {
  for (const ir::Graph* g : ir::GraphAndSubgraphs(graph)) {
    for (const ir::Node* n : g->nodes()) {
      if (n->domain() == kFunctionDomain &&
          names->insert(n->op_type()).second) {
        fresh->push_back(n->op_type());
      }
    }
  }
}

}  // namespace

std::string CallKey(const jaxpr::Eqn& eqn, absl::string_view jax_name) {
  std::string key = absl::StrCat(jax_name, "|", eqn.primitive, "|");
  for (size_t i = 0; i < eqn.inputs.size(); ++i) {
    const jaxpr::Atom& operand = eqn.inputs[i];
    absl::StrAppend(
        &key, LoweringContext::InAval(eqn, static_cast<int>(i)).ToString());
    // A literal operand is a constant of the body: its value is part of
    // the signature.
    if (operand.is_literal()) {
      absl::StrAppend(&key, "=", jaxpr::PrintAtom(operand), "#",
                      operand.literal->elided_index);
    }
    absl::StrAppend(&key, ",");
  }
  absl::StrAppend(&key, "|", CanonicalPrinter::Params(eqn.params));
  return key;
}

std::string SanitizeFunctionName(absl::string_view name) {
  std::string out;
  for (char c : name) out.push_back(absl::ascii_isalnum(c) ? c : '_');
  if (out.empty()) return "fn";
  if (absl::ascii_isdigit(out[0])) out.insert(out.begin(), '_');
  return out;
}

absl::Status ValidateFunctionPatterns(const std::vector<std::string>& globs) {
  for (size_t i = 0; i < globs.size(); ++i) {
    if (globs[i].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "functions: pattern ", i,
          " is empty (give comma-separated globs such as gelu,_attention*)"));
    }
  }
  return absl::OkStatus();
}

FunctionTable::FunctionTable(ir::Model* model, std::vector<std::string> globs,
                             int opset,
                             const std::vector<jaxpr::Array>* elided_literals)
    : model_(model),
      globs_(std::move(globs)),
      opset_(opset),
      elided_literals_(elided_literals) {}

bool FunctionTable::Matches(absl::string_view jax_name) const {
  const std::string name(jax_name);
  for (const std::string& glob : globs_) {
    if (fnmatch(glob.c_str(), name.c_str(), 0) == 0) return true;
  }
  return false;
}

std::string FunctionTable::UniqueName(absl::string_view jax_name) {
  // Names are reserved when a build starts: a body may call another
  // function of the same JAX name (with other avals) before its own
  // function is added to the model.
  const std::string base = SanitizeFunctionName(jax_name);
  std::string name = base;
  for (int n = 1; !reserved_names_.insert(name).second; ++n) {
    name = absl::StrCat(base, "_", n);
  }
  return name;
}

absl::StatusOr<ir::Function*> FunctionTable::Build(
    const LoweringContext& caller, const jaxpr::Eqn& eqn,
    absl::string_view jax_name, const jaxpr::ClosedJaxpr& callee) {
  if (!callee.constvars.empty()) {
    return absl::UnimplementedError(absl::StrCat(
        "the jaxpr of '", jax_name, "' has ", callee.constvars.size(),
        " constvars whose values are not part of the printed program"));
  }
  auto function =
      std::make_unique<ir::Function>(kFunctionDomain, UniqueName(jax_name));
  const std::string fn_name = function->name();
  ir::Graph& body = function->body();
  body.set_name(fn_name);
  std::string doc = absl::StrCat(eqn.primitive, " '", jax_name, "'");
  if (eqn.loc.line > 0) {
    absl::StrAppend(&doc, " first called at line ", eqn.loc.line, ":",
                    eqn.loc.column);
  }
  function->set_doc_string(std::move(doc));

  LoweringContext ctx(&body, opset_, elided_literals_);
  ctx.set_functions(this);
  ctx.set_threefry_partitionable(caller.threefry_partitionable());
  ctx.set_mesh_axis_sizes(caller.mesh_axis_sizes());
  int num_inputs = 0;
  for (size_t i = 0; i < callee.invars.size(); ++i) {
    const jaxpr::Var* var = callee.invars[i];
    if (eqn.inputs[i].is_literal()) {
      // A literal operand (`pjit[...] x -inf:f32[]`) is a constant of the
      // body, not an input: the body then optimizes as if inlined (a
      // softmax's `max(-inf, ...)` folds and fuses).
      J2O_ASSIGN_OR_RETURN(ir::Value * constant,
                           ctx.ValueOf(eqn.inputs[i], &eqn));
      ctx.Bind(var, constant);
      continue;
    }
    J2O_ASSIGN_OR_RETURN(
        ir::Type type,
        LoweringContext::TypeOfAval(
            var->aval, absl::StrCat("input ", i, " (", var->name,
                                    ") of ONNX function '", fn_name, "'")));
    ir::Value* input = body.AddInput(
        body.FreshName(absl::StrCat("in_", num_inputs++)), std::move(type));
    ctx.Bind(var, input);
    // Symbolic dims are read from the function's own inputs: a body cannot
    // see the main graph's.
    for (int axis = 0; axis < var->aval.rank(); ++axis) {
      const jaxpr::DimExpr& d = var->aval.shape[axis];
      if (d.kind() == jaxpr::DimExpr::Kind::kSymbol) {
        ctx.AddDimOrigin(d.symbol(), input, axis);
      }
    }
  }
  if (absl::Status s = ctx.LowerEquations(callee); !s.ok()) {
    // Kept: the code and the payloads (the failing equation's location).
    absl::Status in_body(
        s.code(), absl::StrCat(s.message(), " (in the body of ONNX function '",
                               fn_name, "', made for --functions)"));
    s.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
      in_body.SetPayload(url, payload);
    });
    return in_body;
  }
  absl::flat_hash_set<ir::Value*> outputs;
  for (size_t i = 0; i < callee.outvars.size(); ++i) {
    const jaxpr::Atom& atom = callee.outvars[i];
    J2O_ASSIGN_OR_RETURN(ir::Value * value, ctx.ValueOf(atom, nullptr));
    const jaxpr::Aval aval =
        atom.is_literal() ? LiteralAval(*atom.literal) : atom.var->aval;
    J2O_ASSIGN_OR_RETURN(
        ir::Type type,
        LoweringContext::TypeOfAval(
            aval,
            absl::StrCat("output ", i, " of ONNX function '", fn_name, "'")));
    // Every output is a distinct value computed by a node of the body (not
    // an input, a constant, or an earlier output).
    const bool own = value->producer() != nullptr && value->graph() == &body &&
                     !outputs.contains(value);
    if (!own) value = ctx.Op("Identity", {value});
    value->SetType(std::move(type));
    outputs.insert(value);
    body.AddOutput(value);
  }

  function->opset_imports().push_back(ir::OpsetImport{"", opset_});
  absl::flat_hash_set<std::string> called;
  std::vector<std::string> fresh;
  CollectCalls(&body, &called, &fresh);
  if (!called.empty()) {
    function->opset_imports().push_back(ir::OpsetImport{kFunctionDomain, 1});
  }
  model_->SetOpsetVersion(kFunctionDomain, 1);
  return model_->AddFunction(std::move(function));
}

absl::StatusOr<std::vector<ir::Value*>> FunctionTable::Call(
    LoweringContext& caller, const jaxpr::Eqn& eqn, absl::string_view jax_name,
    const jaxpr::ClosedJaxpr& callee, absl::Span<ir::Value* const> args) {
  if (args.size() != callee.invars.size() ||
      eqn.inputs.size() != callee.invars.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("call passes ", args.size(), " operands to a jaxpr with ",
                     callee.invars.size(), " inputs"));
  }
  const std::string key = CallKey(eqn, jax_name);
  ir::Function* function = nullptr;
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    function = it->second;
  } else {
    J2O_ASSIGN_OR_RETURN(function, Build(caller, eqn, jax_name, callee));
    by_key_.emplace(key, function);
  }
  std::vector<ir::Value*> inputs;  // literal operands are in the body
  for (size_t i = 0; i < args.size(); ++i) {
    if (!eqn.inputs[i].is_literal()) inputs.push_back(args[i]);
  }
  return caller.OpInDomain(kFunctionDomain, function->name(), std::move(inputs),
                           static_cast<int>(callee.outvars.size()));
}

void PruneUnusedFunctions(ir::Model& model) {
  absl::flat_hash_set<std::string> called;
  std::vector<std::string> pending;
  CollectCalls(&model.graph(), &called, &pending);
  while (!pending.empty()) {
    const std::string name = std::move(pending.back());
    pending.pop_back();
    if (const ir::Function* f = model.FindFunction(kFunctionDomain, name)) {
      CollectCalls(&f->body(), &called, &pending);
    }
  }
  bool any_left = false;
  for (ir::Function* f : model.functions()) {
    if (f->domain() != kFunctionDomain) continue;
    if (called.contains(f->name())) {
      any_left = true;
    } else {
      model.RemoveFunction(kFunctionDomain, f->name());
    }
  }
  if (!any_left) {
    auto& imports = model.opset_imports();
    for (auto it = imports.begin(); it != imports.end(); ++it) {
      if (it->domain == kFunctionDomain) {
        imports.erase(it);
        break;
      }
    }
  }
}

}  // namespace jax2onnx::converter2
