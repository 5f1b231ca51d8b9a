#include "jaxpr/state/discharge.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jaxpr/state/discharger.h"
#include "jaxpr/state/ref_state.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/parser.h"

namespace jax2onnx::jaxpr {
namespace discharge_internal {

void ForEachNestedJaxpr(const ParamValue& value,
                        const std::function<void(ClosedJaxpr*)>& fn) {
  switch (value.kind()) {
    case ParamValue::Kind::kJaxpr:
      if (value.jaxpr() != nullptr) fn(value.jaxpr().get());
      return;
    case ParamValue::Kind::kJaxprTuple:
    case ParamValue::Kind::kTuple:
    case ParamValue::Kind::kList:
      for (const ParamValue& item : value.items()) ForEachNestedJaxpr(item, fn);
      return;
    case ParamValue::Kind::kCall:
      for (const auto& [name, arg] : value.call_args()) {
        ForEachNestedJaxpr(arg, fn);
      }
      return;
    default:
      return;
  }
}

bool JaxprUsesState(const ClosedJaxpr& jaxpr,
                    absl::flat_hash_set<const ClosedJaxpr*>& seen) {
  if (!seen.insert(&jaxpr).second) return false;
  for (const Eqn& eqn : jaxpr.eqns) {
    if (IsStatePrimitive(eqn.primitive)) return true;
    bool found = false;
    for (const auto& [key, value] : eqn.params.entries()) {
      ForEachNestedJaxpr(value, [&](ClosedJaxpr* inner) {
        if (!found) found = JaxprUsesState(*inner, seen);
      });
    }
    if (found) return true;
  }
  return false;
}

std::string DimsText(const std::vector<std::string>& dims) {
  if (dims.size() == 1) return absl::StrCat("(", dims[0], ",)");
  return absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

Atom IntLiteral(int64_t v) {
  Literal lit;
  lit.kind = Literal::Kind::kInt;
  lit.text = absl::StrCat(v);
  lit.int_value = v;
  lit.uint_value = static_cast<uint64_t>(v);
  lit.aval = Aval::Static(DType::kI32, {});
  return Atom::OfLiteral(std::move(lit));
}

absl::Status Discharger::DischargeJaxpr(ClosedJaxpr* jaxpr, bool is_main) {
  if (!done_.insert(jaxpr).second) return absl::OkStatus();
  for (const auto* vars : {&jaxpr->constvars, &jaxpr->invars}) {
    for (const Var* v : *vars) {
      if (IsRefAval(v->aval)) {
        return absl::UnimplementedError(absl::StrCat(
            path_, ": error: ", is_main ? "program" : "nested jaxpr", " input ",
            v->name, ":", v->aval.ToString(),
            " is a ref; refs are supported where the program creates them "
            "(new_ref, empty_ref, run_state), not as inputs or carried "
            "into scan/while/cond/jit bodies"));
      }
    }
  }
  Rewrite rw{jaxpr};
  std::vector<Eqn> old = std::move(jaxpr->eqns);
  jaxpr->eqns.clear();
  J2O_RETURN_IF_ERROR(Process(rw, old, /*fresh_outputs=*/false));
  for (Atom& out : jaxpr->outvars) {
    if (!out.is_literal() && rw.refs.contains(out.var)) {
      return absl::UnimplementedError(absl::StrCat(
          path_, ": error: ref ", out.var->name,
          " is an output of a jaxpr; a ref cannot leave the program or a "
          "body (freeze it first)"));
    }
    out = Map(rw, out);
  }
  return absl::OkStatus();
}

Atom Discharger::Map(const Rewrite& rw, const Atom& a) const {
  if (a.is_literal()) return a;
  auto it = rw.subst.find(a.var);
  return it == rw.subst.end() ? a : it->second;
}

absl::Status Discharger::Error(const Eqn& eqn,
                               absl::string_view message) const {
  return absl::UnimplementedError(
      absl::StrCat(path_, ":", eqn.loc.line, ":", eqn.loc.column,
                   ": error: ", eqn.primitive, ": ", message));
}

std::string Discharger::Fresh(absl::string_view hint) {
  return absl::StrCat(hint, "_st", counter_++);
}

// Appends `out:AVAL = HEAD inputs` where HEAD is `prim[params]` as JAX
// prints it (parsed by the jaxpr parser, so params read exactly as
// printed ones do); returns the output.
absl::StatusOr<Atom> Discharger::Emit(Rewrite& rw, const Eqn& at,
                                      absl::string_view head,
                                      std::vector<Atom> inputs,
                                      const Aval& aval) {
  ClosedJaxpr scratch;
  auto parsed =
      ParseEquations(absl::StrCat("o:", aval.ToString(), " = ", head, " "),
                     "<discharge>", &scratch);
  if (!parsed.ok() || parsed->size() != 1) {
    return absl::InternalError(
        absl::StrCat("state discharge built an unparsable equation '", head,
                     "': ", parsed.ok() ? "" : parsed.status().message()));
  }
  Eqn eqn = std::move((*parsed)[0]);
  eqn.inputs = std::move(inputs);
  Var* out = rw.owner->NewVar(Fresh("ref"), aval);
  eqn.outputs = {out};
  eqn.loc = at.loc;
  rw.owner->eqns.push_back(std::move(eqn));
  return Atom::OfVar(out);
}

void Discharger::Bind(Rewrite& rw, const Var* out, Atom value) {
  if (out != nullptr && !out->is_drop) rw.subst[out] = std::move(value);
}

absl::Status Discharger::Process(Rewrite& rw, const std::vector<Eqn>& eqns,
                                 bool fresh_outputs) {
  for (const Eqn& eqn : eqns) {
    std::vector<Atom> mapped;
    mapped.reserve(eqn.inputs.size());
    for (const Atom& a : eqn.inputs) mapped.push_back(Map(rw, a));
    const std::string& p = eqn.primitive;
    const Var* out0 = eqn.outputs.empty() ? nullptr : eqn.outputs[0];
    if (p == "new_ref" || p == "mutable_array" || p == "array_ref") {
      if (mapped.size() != 1 || out0 == nullptr) {
        return Error(eqn, "expects one operand and one result");
      }
      rw.refs[out0] = mapped[0];
    } else if (p == "empty_ref") {
      if (out0 == nullptr) return Error(eqn, "expects one result");
      auto inner = RefInnerAval(out0->aval);
      if (!inner.ok()) return Error(eqn, inner.status().message());
      J2O_ASSIGN_OR_RETURN(Atom zeros, Zeros(rw, eqn, *inner));
      rw.refs[out0] = std::move(zeros);
    } else if (p == "freeze") {
      J2O_ASSIGN_OR_RETURN(auto ref, RefOperand(rw, eqn));
      Bind(rw, out0, ref.second);
    } else if (p == "free_ref") {
      J2O_ASSIGN_OR_RETURN(auto ref, RefOperand(rw, eqn));
      (void)ref;
    } else if (p == "get" || p == "swap" || p == "addupdate") {
      J2O_RETURN_IF_ERROR(Access(rw, eqn, mapped));
    } else if (p == "run_state") {
      J2O_RETURN_IF_ERROR(RunState(rw, eqn, mapped));
    } else {
      J2O_RETURN_IF_ERROR(Plain(rw, eqn, std::move(mapped), fresh_outputs));
    }
  }
  return absl::OkStatus();
}

absl::Status Discharger::RunState(Rewrite& rw, const Eqn& eqn,
                                  const std::vector<Atom>& mapped) {
  const ParamValue* body_param = eqn.params.Find("jaxpr");
  if (body_param == nullptr || body_param->kind() != ParamValue::Kind::kJaxpr ||
      body_param->jaxpr() == nullptr) {
    return Error(eqn, "has no jaxpr param");
  }
  if (const ParamValue* init = eqn.params.Find("is_initialized");
      init != nullptr && init->ToString().find("False") != std::string::npos) {
    return Error(eqn,
                 "uninitialized refs (is_initialized with False) are not "
                 "supported: JAX's own abstract evaluation refuses them");
  }
  const ClosedJaxpr& body = *body_param->jaxpr();
  if (!body.constvars.empty() || !body.outvars.empty() ||
      body.invars.size() != mapped.size() ||
      eqn.outputs.size() != mapped.size()) {
    return Error(
        eqn, absl::StrCat("expects a body `{ lambda ; refs. let ... in () }` "
                          "taking one ref per operand and one result per "
                          "operand; got ",
                          body.invars.size(), " refs, ", mapped.size(),
                          " operands, ", eqn.outputs.size(), " results"));
  }
  for (size_t i = 0; i < mapped.size(); ++i) {
    if (!mapped[i].is_literal() && rw.refs.contains(eqn.inputs[i].var)) {
      return Error(eqn, absl::StrCat("operand ", eqn.inputs[i].var->name,
                                     " is a ref; run_state takes values"));
    }
    rw.refs[body.invars[i]] = mapped[i];
  }
  J2O_RETURN_IF_ERROR(Process(rw, body.eqns, /*fresh_outputs=*/true));
  for (size_t i = 0; i < mapped.size(); ++i) {
    Bind(rw, eqn.outputs[i], rw.refs[body.invars[i]]);
  }
  return absl::OkStatus();
}

// A copy of `body` whose invars at `ref_positions` hold the refs' values;
// the refs' final values are appended to its outvars in that order.
absl::StatusOr<std::shared_ptr<ClosedJaxpr>> Discharger::DischargeBody(
    const Eqn& at, const ClosedJaxpr& body,
    const std::vector<int>& ref_positions) {
  auto nb = std::make_shared<ClosedJaxpr>();
  Rewrite rw{nb.get()};
  for (const Var* v : body.constvars) {
    Var* nv = nb->NewVar(Fresh(v->name), v->aval);
    rw.subst[v] = Atom::OfVar(nv);
    nb->constvars.push_back(nv);
  }
  for (size_t i = 0; i < body.invars.size(); ++i) {
    const Var* v = body.invars[i];
    const bool is_ref = std::find(ref_positions.begin(), ref_positions.end(),
                                  static_cast<int>(i)) != ref_positions.end();
    Aval aval = v->aval;
    if (is_ref) {
      auto inner = RefInnerAval(v->aval);
      if (!inner.ok()) return Error(at, inner.status().message());
      aval = *inner;
    }
    Var* nv = nb->NewVar(Fresh(v->name), aval);
    (is_ref ? rw.refs : rw.subst)[v] = Atom::OfVar(nv);
    nb->invars.push_back(nv);
  }
  J2O_RETURN_IF_ERROR(Process(rw, body.eqns, /*fresh_outputs=*/true));
  for (const Atom& out : body.outvars) {
    if (!out.is_literal() && rw.refs.contains(out.var)) {
      return Error(at, absl::StrCat("a body returns ref ", out.var->name));
    }
    nb->outvars.push_back(Map(rw, out));
  }
  for (int k : ref_positions) {
    nb->outvars.push_back(rw.refs[body.invars[k]]);
  }
  return nb;
}

absl::Status Discharger::Plain(Rewrite& rw, const Eqn& eqn,
                               std::vector<Atom> mapped, bool fresh_outputs) {
  bool takes_ref = false;
  for (const Atom& a : eqn.inputs) {
    if (!a.is_literal() && rw.refs.contains(a.var)) takes_ref = true;
  }
  if (takes_ref && (eqn.primitive == "cond" || eqn.primitive == "while" ||
                    eqn.primitive == "scan" || IsRefCall(eqn.primitive))) {
    return ControlFlow(rw, eqn, std::move(mapped), fresh_outputs);
  }
  for (const Atom& a : eqn.inputs) {
    if (a.is_literal()) continue;
    if (rw.refs.contains(a.var) || IsRefAval(a.var->aval)) {
      return Error(
          eqn, absl::StrCat("ref ", a.var->name, ":", a.var->aval.ToString(),
                            " is an operand; refs are read and written by "
                            "get/swap/addupdate/freeze, and carried through "
                            "scan/while/cond/jit bodies, but not passed to '",
                            eqn.primitive, "'"));
    }
  }
  for (const Var* v : eqn.outputs) {
    if (IsRefAval(v->aval)) {
      return Error(eqn,
                   absl::StrCat("result ", v->name, ":", v->aval.ToString(),
                                " is a ref; only new_ref and empty_ref "
                                "create refs here"));
    }
  }
  for (const auto& [key, value] : eqn.params.entries()) {
    absl::Status status;
    ForEachNestedJaxpr(value, [&](ClosedJaxpr* inner) {
      absl::flat_hash_set<const ClosedJaxpr*> seen;
      if (status.ok() && JaxprUsesState(*inner, seen)) {
        status = DischargeJaxpr(inner, /*is_main=*/false);
      }
    });
    J2O_RETURN_IF_ERROR(status);
  }
  Eqn copy = eqn;
  copy.inputs = std::move(mapped);
  if (fresh_outputs) {
    for (Var*& v : copy.outputs) {
      Var* fresh = rw.owner->NewVar(v->is_drop ? "_" : Fresh(v->name), v->aval,
                                    v->is_drop);
      if (!v->is_drop) rw.subst[v] = Atom::OfVar(fresh);
      v = fresh;
    }
  }
  rw.owner->eqns.push_back(std::move(copy));
  return absl::OkStatus();
}

}  // namespace discharge_internal

using discharge_internal::Discharger;
using discharge_internal::JaxprUsesState;

bool UsesState(const JaxprFile& file) {
  absl::flat_hash_set<const ClosedJaxpr*> seen;
  if (file.main != nullptr && JaxprUsesState(*file.main, seen)) return true;
  for (const auto& [name, jaxpr] : file.shared) {
    if (jaxpr != nullptr && JaxprUsesState(*jaxpr, seen)) return true;
  }
  return false;
}

absl::Status DischargeState(JaxprFile* file) {
  if (!UsesState(*file)) return absl::OkStatus();
  Discharger discharger(file->path);
  if (file->main != nullptr) {
    J2O_RETURN_IF_ERROR(discharger.DischargeJaxpr(file->main.get(), true));
  }
  for (auto& [name, jaxpr] : file->shared) {
    if (jaxpr == nullptr) continue;
    // A shared body that takes refs is rebuilt per call (ThreadCall); only
    // its copies, with the refs' values as inputs, are converted.
    bool takes_ref = false;
    for (const Var* v : jaxpr->invars) takes_ref |= IsRefAval(v->aval);
    if (takes_ref) continue;
    J2O_RETURN_IF_ERROR(discharger.DischargeJaxpr(jaxpr.get(), false));
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx::jaxpr
