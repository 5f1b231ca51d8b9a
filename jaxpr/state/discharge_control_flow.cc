#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/scan_params.h"
#include "jaxpr/state/discharger.h"
#include "jaxpr/state/ref_state.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx::jaxpr::discharge_internal {
namespace {

// `atoms` without those at `positions` (relative to `begin`).
std::vector<Atom> RemovePositions(std::vector<Atom> atoms, size_t begin,
                                  const std::vector<int>& positions) {
  std::vector<Atom> kept;
  for (size_t i = 0; i < atoms.size(); ++i) {
    const bool drop =
        i >= begin && std::find(positions.begin(), positions.end(),
                                static_cast<int>(i - begin)) != positions.end();
    if (!drop) kept.push_back(std::move(atoms[i]));
  }
  return kept;
}

}  // namespace

// The refs among operands [begin, end): their positions relative to
// `begin`, each ref once.
absl::StatusOr<std::vector<int>> Discharger::RefPositions(const Rewrite& rw,
                                                          const Eqn& eqn,
                                                          size_t begin,
                                                          size_t end) {
  std::vector<int> positions;
  absl::flat_hash_set<const Var*> seen;
  for (size_t i = begin; i < end && i < eqn.inputs.size(); ++i) {
    const Atom& a = eqn.inputs[i];
    if (a.is_literal() || !rw.refs.contains(a.var)) continue;
    if (!seen.insert(a.var).second) {
      return Error(eqn, absl::StrCat("ref ", a.var->name,
                                     " is passed twice (aliased refs)"));
    }
    positions.push_back(static_cast<int>(i - begin));
  }
  return positions;
}

absl::StatusOr<int64_t> Discharger::IntParam(const Eqn& eqn,
                                             absl::string_view key) {
  const ParamValue* v = eqn.params.Find(key);
  if (v == nullptr) {
    return Error(
        eqn, absl::StrCat("a ref carried through it needs param '", key, "'"));
  }
  auto n = v->AsInt(key);
  if (!n.ok()) return Error(eqn, n.status().message());
  return *n;
}

const ClosedJaxpr* Discharger::JaxprParam(const Eqn& eqn,
                                          absl::string_view key) {
  const ParamValue* v = eqn.params.Find(key);
  if (v == nullptr || v->kind() != ParamValue::Kind::kJaxpr) return nullptr;
  return v->jaxpr().get();
}

// Adds the refs at `positions` (operands begin + k) to the carried ones.
absl::Status Discharger::Take(const Rewrite& rw, const Eqn& eqn,
                              const std::vector<int>& positions, size_t begin,
                              Threading& t) {
  for (int k : positions) {
    const Var* ref = eqn.inputs[begin + k].var;
    auto inner = RefInnerAval(ref->aval);
    if (!inner.ok()) return Error(eqn, inner.status().message());
    t.carried.push_back(ref);
    t.ref_values.push_back(rw.refs.at(ref));
    t.value_avals.push_back(*inner);
  }
  return absl::OkStatus();
}

// cond: the branches take the refs' values and return their final values
// as extra results (after the original ones).
absl::Status Discharger::ThreadCond(const Rewrite& rw, const Eqn& eqn,
                                    Threading& t) {
  J2O_ASSIGN_OR_RETURN(std::vector<int> positions,
                       RefPositions(rw, eqn, 1, eqn.inputs.size()));
  J2O_RETURN_IF_ERROR(Take(rw, eqn, positions, 1, t));
  const ParamValue* branches = eqn.params.Find("branches");
  if (branches == nullptr ||
      branches->kind() != ParamValue::Kind::kJaxprTuple) {
    return Error(eqn, "has no branches param");
  }
  std::vector<ParamValue> items;
  for (const ParamValue& b : branches->items()) {
    if (b.jaxpr() == nullptr) return Error(eqn, "a branch is missing");
    J2O_ASSIGN_OR_RETURN(auto nb, DischargeBody(eqn, *b.jaxpr(), positions));
    // The refs stay operands of the branches (now their values).
    items.push_back(ParamValue::Jaxpr(std::move(nb)));
  }
  t.out.params.Set("branches", ParamValue::JaxprTuple(std::move(items)));
  for (size_t i = 0; i < positions.size(); ++i) {
    t.operands[1 + positions[i]] = t.ref_values[i];
  }
  return absl::OkStatus();
}

// while: the refs among the cond and body consts become the first carries.
absl::Status Discharger::ThreadWhile(const Rewrite& rw, const Eqn& eqn,
                                     Threading& t) {
  J2O_ASSIGN_OR_RETURN(int64_t cn, IntParam(eqn, "cond_nconsts"));
  J2O_ASSIGN_OR_RETURN(int64_t bn, IntParam(eqn, "body_nconsts"));
  const ClosedJaxpr* cj = JaxprParam(eqn, "cond_jaxpr");
  const ClosedJaxpr* bj = JaxprParam(eqn, "body_jaxpr");
  if (cj == nullptr || bj == nullptr) return Error(eqn, "missing jaxprs");
  J2O_ASSIGN_OR_RETURN(std::vector<int> cpos, RefPositions(rw, eqn, 0, cn));
  J2O_ASSIGN_OR_RETURN(std::vector<int> bpos,
                       RefPositions(rw, eqn, cn, cn + bn));
  J2O_ASSIGN_OR_RETURN(std::vector<int> any_carry,
                       RefPositions(rw, eqn, cn + bn, eqn.inputs.size()));
  if (!any_carry.empty()) {
    return Error(eqn, "a ref in the loop carry is not supported");
  }
  // The carried refs: the body's, then those only the cond reads.
  J2O_RETURN_IF_ERROR(Take(rw, eqn, bpos, cn, t));
  std::vector<int> cond_only;
  for (int k : cpos) {
    if (std::find(t.carried.begin(), t.carried.end(), eqn.inputs[k].var) ==
        t.carried.end()) {
      cond_only.push_back(k);
    }
  }
  J2O_RETURN_IF_ERROR(Take(rw, eqn, cond_only, 0, t));
  J2O_ASSIGN_OR_RETURN(auto nc, DischargeBody(eqn, *cj, cpos));
  J2O_ASSIGN_OR_RETURN(auto nbody, DischargeBody(eqn, *bj, bpos));
  // cond may read its refs, never write them.
  for (size_t i = 0; i < cpos.size(); ++i) {
    const Atom& fin = nc->outvars[nc->outvars.size() - cpos.size() + i];
    if (fin.is_literal() || fin.var != nc->invars[cpos[i]]) {
      return Error(eqn, "the loop condition writes a ref");
    }
  }
  nc->outvars.resize(nc->outvars.size() - cpos.size());
  // Reorder invars: non-ref consts, then one value per carried ref (the
  // body's own or an unused stand-in), then the original carry.
  auto relayout = [&](ClosedJaxpr* j, int64_t nconsts,
                      const std::vector<int>& pos, size_t begin) {
    std::vector<Var*> consts, refs(t.carried.size(), nullptr), rest;
    for (int64_t i = 0; i < static_cast<int64_t>(j->invars.size()); ++i) {
      auto it = std::find(pos.begin(), pos.end(), static_cast<int>(i));
      if (it != pos.end()) {
        const Var* ref = eqn.inputs[begin + *it].var;
        const size_t slot = std::find(t.carried.begin(), t.carried.end(), ref) -
                            t.carried.begin();
        refs[slot] = j->invars[i];
      } else if (i < nconsts) {
        consts.push_back(j->invars[i]);
      } else {
        rest.push_back(j->invars[i]);
      }
    }
    for (size_t r = 0; r < refs.size(); ++r) {
      if (refs[r] == nullptr) {
        refs[r] = j->NewVar(Fresh("unused"), t.value_avals[r]);
      }
    }
    j->invars = consts;
    j->invars.insert(j->invars.end(), refs.begin(), refs.end());
    j->invars.insert(j->invars.end(), rest.begin(), rest.end());
  };
  relayout(nc.get(), cn, cpos, 0);
  // Body outvars: the carried refs' finals first, then the carry.
  std::vector<Atom> finals(t.carried.size());
  const size_t nout = nbody->outvars.size() - bpos.size();
  for (size_t i = 0; i < bpos.size(); ++i) finals[i] = nbody->outvars[nout + i];
  relayout(nbody.get(), bn, bpos, cn);
  for (size_t r = bpos.size(); r < t.carried.size(); ++r) {
    finals[r] = Atom::OfVar(nbody->invars[bn - bpos.size() + r]);
  }
  std::vector<Atom> outs = finals;
  outs.insert(outs.end(), nbody->outvars.begin(),
              nbody->outvars.begin() + nout);
  nbody->outvars = std::move(outs);
  t.out.params.Set("cond_jaxpr", ParamValue::Jaxpr(std::move(nc)));
  t.out.params.Set("body_jaxpr", ParamValue::Jaxpr(std::move(nbody)));
  t.out.params.Set("cond_nconsts",
                   ParamValue::Int(cn - static_cast<int64_t>(cpos.size())));
  t.out.params.Set("body_nconsts",
                   ParamValue::Int(bn - static_cast<int64_t>(bpos.size())));
  std::vector<Atom> operands =
      RemovePositions(RemovePositions(t.operands, cn, bpos), 0, cpos);
  const size_t carry_at = (cn - cpos.size()) + (bn - bpos.size());
  operands.insert(operands.begin() + carry_at, t.ref_values.begin(),
                  t.ref_values.end());
  t.operands = std::move(operands);
  t.extra_first = true;
  return absl::OkStatus();
}

// scan: the refs among the consts become the first carries.
absl::Status Discharger::ThreadScan(const Rewrite& rw, const Eqn& eqn,
                                    Threading& t) {
  // num_consts/num_carry, or the leaf counts of JAX 0.11's ft_in/ft_out;
  // the rewritten scan states num_consts/num_carry (ft_in/ft_out are
  // dropped: their FlatTree reprs are not rebuilt).
  auto counts =
      ScanCountsFromParams(eqn.params, static_cast<int64_t>(eqn.inputs.size()),
                           static_cast<int64_t>(eqn.outputs.size()));
  if (!counts.ok()) return Error(eqn, counts.status().message());
  if (!counts->has_value()) {
    return Error(eqn, "has neither num_consts/num_carry nor ft_in/ft_out");
  }
  const int64_t nconsts = (*counts)->first;
  const int64_t ncarry = (*counts)->second;
  Params without_ft;
  for (const auto& [key, value] : eqn.params.entries()) {
    if (key != "ft_in" && key != "ft_out") without_ft.Set(key, value);
  }
  t.out.params = std::move(without_ft);
  const ClosedJaxpr* body = JaxprParam(eqn, "jaxpr");
  if (body == nullptr) return Error(eqn, "missing jaxpr");
  J2O_ASSIGN_OR_RETURN(std::vector<int> cpos,
                       RefPositions(rw, eqn, 0, nconsts));
  J2O_ASSIGN_OR_RETURN(std::vector<int> other,
                       RefPositions(rw, eqn, nconsts, eqn.inputs.size()));
  if (!other.empty()) {
    return Error(eqn,
                 "a ref in the carry or scanned over is not "
                 "supported");
  }
  J2O_RETURN_IF_ERROR(Take(rw, eqn, cpos, 0, t));
  J2O_ASSIGN_OR_RETURN(auto nb, DischargeBody(eqn, *body, cpos));
  std::vector<Var*> consts, refs, rest;
  for (size_t i = 0; i < nb->invars.size(); ++i) {
    const bool is_ref =
        std::find(cpos.begin(), cpos.end(), static_cast<int>(i)) != cpos.end();
    (is_ref                              ? refs
     : static_cast<int64_t>(i) < nconsts ? consts
                                         : rest)
        .push_back(nb->invars[i]);
  }
  nb->invars = consts;
  nb->invars.insert(nb->invars.end(), refs.begin(), refs.end());
  nb->invars.insert(nb->invars.end(), rest.begin(), rest.end());
  const size_t nout = nb->outvars.size() - cpos.size();
  std::vector<Atom> outs(nb->outvars.begin() + nout, nb->outvars.end());
  outs.insert(outs.end(), nb->outvars.begin(), nb->outvars.begin() + nout);
  nb->outvars = std::move(outs);
  t.out.params.Set("jaxpr", ParamValue::Jaxpr(std::move(nb)));
  t.out.params.Set(
      "num_consts",
      ParamValue::Int(nconsts - static_cast<int64_t>(cpos.size())));
  t.out.params.Set("num_carry",
                   ParamValue::Int(ncarry + static_cast<int64_t>(cpos.size())));
  if (const ParamValue* linear = eqn.params.Find("linear");
      linear != nullptr && linear->kind() == ParamValue::Kind::kTuple &&
      linear->items().size() == eqn.inputs.size()) {
    std::vector<ParamValue> flags, ref_flags, rest_flags;
    for (size_t i = 0; i < eqn.inputs.size(); ++i) {
      const bool is_ref = std::find(cpos.begin(), cpos.end(),
                                    static_cast<int>(i)) != cpos.end();
      (is_ref                              ? ref_flags
       : static_cast<int64_t>(i) < nconsts ? flags
                                           : rest_flags)
          .push_back(linear->items()[i]);
    }
    flags.insert(flags.end(), ref_flags.begin(), ref_flags.end());
    flags.insert(flags.end(), rest_flags.begin(), rest_flags.end());
    t.out.params.Set("linear", ParamValue::Tuple(std::move(flags)));
  }
  std::vector<Atom> operands = RemovePositions(t.operands, 0, cpos);
  operands.insert(operands.begin() + (nconsts - cpos.size()),
                  t.ref_values.begin(), t.ref_values.end());
  t.operands = std::move(operands);
  t.extra_first = true;
  return absl::OkStatus();
}

// jit/pjit/closed_call/core_call: as a cond branch, the body takes the refs'
// values where it took the refs and returns their final values as extra
// results (after the original ones), as JAX's pjit discharge rule does.
// Output-arity params (out_shardings, out_layouts) get an unspecified entry
// per extra result.
absl::Status Discharger::ThreadCall(const Rewrite& rw, const Eqn& eqn,
                                    Threading& t) {
  J2O_ASSIGN_OR_RETURN(std::vector<int> positions,
                       RefPositions(rw, eqn, 0, eqn.inputs.size()));
  J2O_RETURN_IF_ERROR(Take(rw, eqn, positions, 0, t));
  const char* key = eqn.params.Has("call_jaxpr") ? "call_jaxpr" : "jaxpr";
  const ClosedJaxpr* body = JaxprParam(eqn, key);
  if (body == nullptr) {
    return Error(eqn, absl::StrCat("a ref passed to it needs param '", key,
                                   "' (its body)"));
  }
  J2O_ASSIGN_OR_RETURN(auto nb, DischargeBody(eqn, *body, positions));
  t.out.params.Set(key, ParamValue::Jaxpr(std::move(nb)));
  for (const char* arity_key : {"out_shardings", "out_layouts"}) {
    const ParamValue* v = eqn.params.Find(arity_key);
    if (v == nullptr || v->kind() != ParamValue::Kind::kTuple ||
        v->items().size() != eqn.outputs.size()) {
      continue;
    }
    std::vector<ParamValue> items = v->items();
    for (size_t i = 0; i < positions.size(); ++i) {
      items.push_back(arity_key == std::string("out_shardings")
                          ? ParamValue::Name("UnspecifiedValue")
                          : ParamValue::None());
    }
    t.out.params.Set(arity_key, ParamValue::Tuple(std::move(items)));
  }
  for (size_t i = 0; i < positions.size(); ++i) {
    t.operands[positions[i]] = t.ref_values[i];
  }
  return absl::OkStatus();
}

// Refs passed to cond/while/scan/jit become values threaded through the
// bodies, as JAX's discharge rules for them do: cond branches and call
// bodies return the refs' final values as extra results; while and scan
// carry them (refs among the consts move to the front of the carry).
absl::Status Discharger::ControlFlow(Rewrite& rw, const Eqn& eqn,
                                     std::vector<Atom> mapped,
                                     bool fresh_outputs) {
  const std::string& p = eqn.primitive;
  Threading t;
  t.out = eqn;
  t.operands = std::move(mapped);
  if (p == "cond") {
    J2O_RETURN_IF_ERROR(ThreadCond(rw, eqn, t));
  } else if (p == "while") {
    J2O_RETURN_IF_ERROR(ThreadWhile(rw, eqn, t));
  } else if (IsRefCall(p)) {
    J2O_RETURN_IF_ERROR(ThreadCall(rw, eqn, t));
  } else {
    J2O_RETURN_IF_ERROR(ThreadScan(rw, eqn, t));
  }
  Eqn out = std::move(t.out);
  out.inputs = std::move(t.operands);
  const std::vector<const Var*>& carried = t.carried;
  std::vector<Var*> extra_outputs;  // final ref values, in `carried` order
  for (Var*& v : out.outputs) {
    if (!fresh_outputs) continue;
    Var* fresh = rw.owner->NewVar(v->is_drop ? "_" : Fresh(v->name), v->aval,
                                  v->is_drop);
    if (!v->is_drop) rw.subst[v] = Atom::OfVar(fresh);
    v = fresh;
  }
  for (size_t r = 0; r < carried.size(); ++r) {
    extra_outputs.push_back(
        rw.owner->NewVar(Fresh(carried[r]->name), t.value_avals[r]));
  }
  std::vector<Var*> outputs;
  if (t.extra_first) outputs = extra_outputs;
  outputs.insert(outputs.end(), out.outputs.begin(), out.outputs.end());
  if (!t.extra_first) {
    outputs.insert(outputs.end(), extra_outputs.begin(), extra_outputs.end());
  }
  out.outputs = std::move(outputs);
  rw.owner->eqns.push_back(std::move(out));
  for (size_t r = 0; r < carried.size(); ++r) {
    rw.refs[carried[r]] = Atom::OfVar(extra_outputs[r]);
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx::jaxpr::discharge_internal
