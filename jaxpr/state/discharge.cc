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
#include "jaxpr/scan_params.h"
#include "jaxpr/state/ref_state.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/parser.h"

namespace jax2onnx::jaxpr {
namespace {

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

class Discharger {
 public:
  explicit Discharger(std::string path) : path_(std::move(path)) {}

  absl::Status DischargeJaxpr(ClosedJaxpr* jaxpr, bool is_main) {
    if (!done_.insert(jaxpr).second) return absl::OkStatus();
    for (const auto* vars : {&jaxpr->constvars, &jaxpr->invars}) {
      for (const Var* v : *vars) {
        if (IsRefAval(v->aval)) {
          return absl::UnimplementedError(absl::StrCat(
              path_, ": error: ", is_main ? "program" : "nested jaxpr",
              " input ", v->name, ":", v->aval.ToString(),
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

 private:
  // One jaxpr being rebuilt.
  struct Rewrite {
    ClosedJaxpr* owner;
    absl::flat_hash_map<const Var*, Atom> subst;  // var -> its value now
    absl::flat_hash_map<const Var*, Atom> refs;   // ref -> current value
  };

  Atom Map(const Rewrite& rw, const Atom& a) const {
    if (a.is_literal()) return a;
    auto it = rw.subst.find(a.var);
    return it == rw.subst.end() ? a : it->second;
  }

  absl::Status Error(const Eqn& eqn, absl::string_view message) const {
    return absl::UnimplementedError(
        absl::StrCat(path_, ":", eqn.loc.line, ":", eqn.loc.column,
                     ": error: ", eqn.primitive, ": ", message));
  }

  std::string Fresh(absl::string_view hint) {
    return absl::StrCat(hint, "_st", counter_++);
  }

  // Appends `out:AVAL = HEAD inputs` where HEAD is `prim[params]` as JAX
  // prints it (parsed by the jaxpr parser, so params read exactly as
  // printed ones do); returns the output.
  absl::StatusOr<Atom> Emit(Rewrite& rw, const Eqn& at, absl::string_view head,
                            std::vector<Atom> inputs, const Aval& aval) {
    ClosedJaxpr scratch;
    auto parsed = ParseEquations(absl::StrCat("o:", aval.ToString(), " = ",
                                              head, " "),
                                 "<discharge>", &scratch);
    if (!parsed.ok() || parsed->size() != 1) {
      return absl::InternalError(absl::StrCat(
          "state discharge built an unparsable equation '", head,
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

  // An index operand as the int32 scalar JAX's discharge converts it to.
  absl::StatusOr<Atom> IndexAtom(Rewrite& rw, const Eqn& at, const Atom& a) {
    if (a.is_literal()) {
      if (a.literal->kind != Literal::Kind::kInt) {
        return Error(at, absl::StrCat("ref index literal ", a.literal->text,
                                      " is not an integer"));
      }
      return IntLiteral(a.literal->int_value);
    }
    const Aval& aval = a.var->aval;
    if (!aval.is_shaped() || aval.rank() != 0 ||
        !(IsSignedInt(aval.dtype) || IsUnsignedInt(aval.dtype))) {
      return Error(at, absl::StrCat("ref index ", a.var->name, ":",
                                    aval.ToString(),
                                    " is not an integer scalar"));
    }
    if (aval.dtype == DType::kI32) return a;
    return Emit(rw, at,
                "convert_element_type[new_dtype=int32 sharding=None "
                "weak_type=False]",
                {a}, Aval::Static(DType::kI32, {}));
  }

  struct Slicing {
    bool trivial = true;
    std::vector<Atom> starts;
    std::vector<std::string> sizes;  // printed dims, points as 1
    std::vector<DimExpr> size_dims;
    std::vector<std::string> point_dims;
  };

  absl::StatusOr<Slicing> Plan(Rewrite& rw, const Eqn& eqn,
                               const std::vector<Atom>& mapped,
                               int first_index, const Aval& value) {
    auto index = DecodeRefIndex(eqn, first_index, value);
    if (!index.ok()) return Error(eqn, index.status().message());
    // Validates the indexer (gather form, dynamic sizes, bounds).
    auto indexed = IndexedAval(eqn, *index, value);
    if (!indexed.ok()) return Error(eqn, indexed.status().message());
    Slicing s;
    for (size_t d = 0; d < index->size(); ++d) {
      const RefDimIndex& e = (*index)[d];
      if (e.is_point) {
        s.trivial = false;
        J2O_ASSIGN_OR_RETURN(Atom start, IndexAtom(rw, eqn, mapped[e.operand]));
        s.starts.push_back(std::move(start));
        s.sizes.push_back("1");
        s.size_dims.push_back(DimExpr::Constant(1));
        s.point_dims.push_back(absl::StrCat(d));
        continue;
      }
      if (e.full) {
        s.starts.push_back(IntLiteral(0));
        s.sizes.push_back(value.shape[d].ToString());
        s.size_dims.push_back(value.shape[d]);
        continue;
      }
      s.trivial = false;
      if (e.start_operand >= 0) {
        J2O_ASSIGN_OR_RETURN(Atom start,
                             IndexAtom(rw, eqn, mapped[e.start_operand]));
        s.starts.push_back(std::move(start));
      } else {
        s.starts.push_back(IntLiteral(e.start));
      }
      s.sizes.push_back(absl::StrCat(e.size));
      s.size_dims.push_back(DimExpr::Constant(e.size));
    }
    return s;
  }

  // The indexed part of `cur`, unsqueezed (points kept as size-1 dims).
  absl::StatusOr<Atom> Slice(Rewrite& rw, const Eqn& eqn, const Atom& cur,
                             const Slicing& s, const Aval& value) {
    std::vector<Atom> ins = {cur};
    ins.insert(ins.end(), s.starts.begin(), s.starts.end());
    Aval sliced = value;
    sliced.shape = s.size_dims;
    sliced.dim_sharding.clear();
    return Emit(rw, eqn,
                absl::StrCat("dynamic_slice[slice_sizes=", DimsText(s.sizes),
                             "]"),
                std::move(ins), sliced);
  }

  absl::StatusOr<Atom> Read(Rewrite& rw, const Eqn& eqn, const Atom& cur,
                            const Slicing& s, const Aval& value,
                            const Aval& result) {
    if (s.trivial) return cur;
    J2O_ASSIGN_OR_RETURN(Atom sliced, Slice(rw, eqn, cur, s, value));
    if (s.point_dims.empty()) return sliced;
    return Emit(rw, eqn,
                absl::StrCat("squeeze[dimensions=", DimsText(s.point_dims),
                             "]"),
                {sliced}, result);
  }

  // `cur` with the indexed part replaced by `update` (of the read's shape).
  absl::StatusOr<Atom> Write(Rewrite& rw, const Eqn& eqn, const Atom& cur,
                             Atom update, const Slicing& s,
                             const Aval& value) {
    if (s.trivial) return update;
    if (!s.point_dims.empty()) {
      Aval expanded = value;
      expanded.shape = s.size_dims;
      expanded.dim_sharding.clear();
      J2O_ASSIGN_OR_RETURN(
          update, Emit(rw, eqn,
                       absl::StrCat("reshape[dimensions=None new_sizes=",
                                    DimsText(s.sizes), " sharding=None]"),
                       {update}, expanded));
    }
    std::vector<Atom> ins = {cur, update};
    ins.insert(ins.end(), s.starts.begin(), s.starts.end());
    return Emit(rw, eqn, "dynamic_update_slice", std::move(ins), value);
  }

  absl::StatusOr<Atom> Zeros(Rewrite& rw, const Eqn& eqn, const Aval& aval) {
    Literal zero;
    if (IsFloat(aval.dtype)) {
      zero.kind = Literal::Kind::kFloat;
      zero.text = "0.0";
    } else if (aval.dtype == DType::kBool) {
      zero.kind = Literal::Kind::kBool;
      zero.text = "False";
    } else if (IsSignedInt(aval.dtype) || IsUnsignedInt(aval.dtype)) {
      zero.kind = Literal::Kind::kInt;
      zero.text = "0";
    } else {
      return Error(eqn, absl::StrCat("a ref of ", aval.ToString(),
                                     " cannot be created empty here"));
    }
    zero.aval = Aval::Shaped(aval.dtype, {});
    std::vector<std::string> dims;
    for (const DimExpr& d : aval.shape) dims.push_back(d.ToString());
    return Emit(rw, eqn,
                absl::StrCat("broadcast_in_dim[broadcast_dimensions=() shape=",
                             aval.rank() == 0 ? "()" : DimsText(dims),
                             " sharding=None]"),
                {Atom::OfLiteral(std::move(zero))}, aval);
  }

  // The value a ref operand holds now.
  absl::StatusOr<std::pair<const Var*, Atom>> RefOperand(const Rewrite& rw,
                                                         const Eqn& eqn) {
    const Atom& a = eqn.inputs.empty() ? Atom() : eqn.inputs[0];
    if (a.is_literal() || a.var == nullptr) {
      return Error(eqn, "the first operand must be a ref");
    }
    auto it = rw.refs.find(a.var);
    if (it == rw.refs.end()) {
      if (!IsRefAval(a.var->aval)) {
        return Error(eqn, absl::StrCat(
                              a.var->name, ":", a.var->aval.ToString(),
                              " is not a Ref{...} (Pallas MemRef kernels are "
                              "not converted)"));
      }
      return Error(eqn, absl::StrCat("ref ", a.var->name,
                                     " is not bound to a value here"));
    }
    return std::make_pair(a.var, it->second);
  }

  void Bind(Rewrite& rw, const Var* out, Atom value) {
    if (out != nullptr && !out->is_drop) rw.subst[out] = std::move(value);
  }

  absl::Status Process(Rewrite& rw, const std::vector<Eqn>& eqns,
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
        J2O_ASSIGN_OR_RETURN(auto ref, RefOperand(rw, eqn));
        auto value = RefInnerAval(ref.first->aval);
        if (!value.ok()) return Error(eqn, value.status().message());
        const int first_index = p == "get" ? 1 : 2;
        if (static_cast<int>(mapped.size()) < first_index) {
          return Error(eqn, "missing operands");
        }
        J2O_ASSIGN_OR_RETURN(Slicing s,
                             Plan(rw, eqn, mapped, first_index, *value));
        auto index = DecodeRefIndex(eqn, first_index, *value);
        auto result = IndexedAval(eqn, *index, *value);
        if (!result.ok()) return Error(eqn, result.status().message());
        if (p == "get") {
          J2O_ASSIGN_OR_RETURN(
              Atom y, Read(rw, eqn, ref.second, s, *value, *result));
          Bind(rw, out0, y);
        } else if (p == "swap") {
          if (out0 != nullptr && !out0->is_drop) {
            J2O_ASSIGN_OR_RETURN(
                Atom y, Read(rw, eqn, ref.second, s, *value, *result));
            Bind(rw, out0, y);
          }
          J2O_ASSIGN_OR_RETURN(
              Atom next, Write(rw, eqn, ref.second, mapped[1], s, *value));
          rw.refs[ref.first] = std::move(next);
        } else {
          // addupdate: read-add-write of the unsqueezed slice, as JAX's
          // _addupdate_discharge does.
          Atom old = ref.second;
          Atom update = mapped[1];
          Aval part = *value;
          if (!s.trivial) {
            J2O_ASSIGN_OR_RETURN(old, Slice(rw, eqn, ref.second, s, *value));
            part.shape = s.size_dims;
            part.dim_sharding.clear();
            if (!s.point_dims.empty()) {
              J2O_ASSIGN_OR_RETURN(
                  update,
                  Emit(rw, eqn,
                       absl::StrCat("reshape[dimensions=None new_sizes=",
                                    DimsText(s.sizes), " sharding=None]"),
                       {update}, part));
            }
          }
          J2O_ASSIGN_OR_RETURN(Atom sum,
                               Emit(rw, eqn, "add", {old, update}, part));
          Atom next = sum;
          if (!s.trivial) {
            std::vector<Atom> ins = {ref.second, sum};
            ins.insert(ins.end(), s.starts.begin(), s.starts.end());
            J2O_ASSIGN_OR_RETURN(next, Emit(rw, eqn, "dynamic_update_slice",
                                            std::move(ins), *value));
          }
          rw.refs[ref.first] = std::move(next);
        }
      } else if (p == "run_state") {
        J2O_RETURN_IF_ERROR(RunState(rw, eqn, mapped));
      } else {
        J2O_RETURN_IF_ERROR(Plain(rw, eqn, std::move(mapped), fresh_outputs));
      }
    }
    return absl::OkStatus();
  }

  absl::Status RunState(Rewrite& rw, const Eqn& eqn,
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
      return Error(eqn, absl::StrCat(
                            "expects a body `{ lambda ; refs. let ... in () }` "
                            "taking one ref per operand and one result per "
                            "operand; got ", body.invars.size(), " refs, ",
                            mapped.size(), " operands, ", eqn.outputs.size(),
                            " results"));
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
  absl::StatusOr<std::shared_ptr<ClosedJaxpr>> DischargeBody(
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

  // The refs among operands [begin, end): their positions relative to
  // `begin`, each ref once.
  absl::StatusOr<std::vector<int>> RefPositions(const Rewrite& rw,
                                                const Eqn& eqn, size_t begin,
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

  absl::StatusOr<int64_t> IntParam(const Eqn& eqn, absl::string_view key) {
    const ParamValue* v = eqn.params.Find(key);
    if (v == nullptr) {
      return Error(eqn, absl::StrCat(
                            "a ref carried through it needs param '", key,
                            "'"));
    }
    auto n = v->AsInt(key);
    if (!n.ok()) return Error(eqn, n.status().message());
    return *n;
  }

  const ClosedJaxpr* JaxprParam(const Eqn& eqn, absl::string_view key) {
    const ParamValue* v = eqn.params.Find(key);
    if (v == nullptr || v->kind() != ParamValue::Kind::kJaxpr) return nullptr;
    return v->jaxpr().get();
  }

  // Refs passed to cond/while/scan become values threaded through the
  // bodies, as JAX's discharge rules for them do: cond branches return the
  // refs' final values as extra results; while and scan carry them (refs
  // among the consts move to the front of the carry).
  absl::Status ControlFlow(Rewrite& rw, const Eqn& eqn,
                           std::vector<Atom> mapped, bool fresh_outputs) {
    const std::string& p = eqn.primitive;
    Eqn out = eqn;
    std::vector<Atom> ref_values;  // current values of the carried refs
    std::vector<const Var*> carried;
    std::vector<Aval> value_avals;  // the carried refs' value types
    absl::Status take_status;
    auto take = [&](const std::vector<int>& positions, size_t begin) {
      for (int k : positions) {
        const Var* ref = eqn.inputs[begin + k].var;
        auto inner = RefInnerAval(ref->aval);
        if (!inner.ok()) {
          take_status = Error(eqn, inner.status().message());
          return;
        }
        carried.push_back(ref);
        ref_values.push_back(rw.refs[ref]);
        value_avals.push_back(*inner);
      }
    };
    auto remove_positions = [](std::vector<Atom> atoms, size_t begin,
                               const std::vector<int>& positions) {
      std::vector<Atom> kept;
      for (size_t i = 0; i < atoms.size(); ++i) {
        const bool drop =
            i >= begin && std::find(positions.begin(), positions.end(),
                                    static_cast<int>(i - begin)) !=
                              positions.end();
        if (!drop) kept.push_back(std::move(atoms[i]));
      }
      return kept;
    };
    std::vector<Var*> extra_outputs;  // final ref values, in `carried` order
    // (take() reports a ref type it cannot read through take_status.)
    bool extra_first = false;
    if (p == "cond") {
      J2O_ASSIGN_OR_RETURN(std::vector<int> positions,
                           RefPositions(rw, eqn, 1, eqn.inputs.size()));
      take(positions, 1);
      J2O_RETURN_IF_ERROR(take_status);
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
      out.params.Set("branches", ParamValue::JaxprTuple(std::move(items)));
      for (size_t i = 0; i < positions.size(); ++i) {
        mapped[1 + positions[i]] = ref_values[i];
      }
    } else if (p == "while") {
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
      take(bpos, cn);
      std::vector<int> cond_only;
      for (int k : cpos) {
        if (std::find(carried.begin(), carried.end(), eqn.inputs[k].var) ==
            carried.end()) {
          cond_only.push_back(k);
        }
      }
      take(cond_only, 0);
      J2O_RETURN_IF_ERROR(take_status);
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
        std::vector<Var*> consts, refs(carried.size(), nullptr), rest;
        for (int64_t i = 0; i < static_cast<int64_t>(j->invars.size()); ++i) {
          auto it = std::find(pos.begin(), pos.end(), static_cast<int>(i));
          if (it != pos.end()) {
            const Var* ref = eqn.inputs[begin + *it].var;
            const size_t slot =
                std::find(carried.begin(), carried.end(), ref) -
                carried.begin();
            refs[slot] = j->invars[i];
          } else if (i < nconsts) {
            consts.push_back(j->invars[i]);
          } else {
            rest.push_back(j->invars[i]);
          }
        }
        for (size_t r = 0; r < refs.size(); ++r) {
          if (refs[r] == nullptr) {
            refs[r] = j->NewVar(Fresh("unused"), value_avals[r]);
          }
        }
        j->invars = consts;
        j->invars.insert(j->invars.end(), refs.begin(), refs.end());
        j->invars.insert(j->invars.end(), rest.begin(), rest.end());
      };
      relayout(nc.get(), cn, cpos, 0);
      // Body outvars: the carried refs' finals first, then the carry.
      std::vector<Atom> finals(carried.size());
      const size_t nout = nbody->outvars.size() - bpos.size();
      for (size_t i = 0; i < bpos.size(); ++i) finals[i] = nbody->outvars[nout + i];
      relayout(nbody.get(), bn, bpos, cn);
      for (size_t r = bpos.size(); r < carried.size(); ++r) {
        finals[r] = Atom::OfVar(nbody->invars[bn - bpos.size() + r]);
      }
      std::vector<Atom> outs = finals;
      outs.insert(outs.end(), nbody->outvars.begin(),
                  nbody->outvars.begin() + nout);
      nbody->outvars = std::move(outs);
      out.params.Set("cond_jaxpr", ParamValue::Jaxpr(std::move(nc)));
      out.params.Set("body_jaxpr", ParamValue::Jaxpr(std::move(nbody)));
      out.params.Set("cond_nconsts",
                     ParamValue::Int(cn - static_cast<int64_t>(cpos.size())));
      out.params.Set("body_nconsts",
                     ParamValue::Int(bn - static_cast<int64_t>(bpos.size())));
      std::vector<Atom> operands = remove_positions(
          remove_positions(mapped, cn, bpos), 0, cpos);
      const size_t carry_at = (cn - cpos.size()) + (bn - bpos.size());
      operands.insert(operands.begin() + carry_at, ref_values.begin(),
                      ref_values.end());
      mapped = std::move(operands);
      extra_first = true;
    } else {  // scan
      // num_consts/num_carry, or the leaf counts of JAX 0.11's ft_in/ft_out;
      // the rewritten scan states num_consts/num_carry (ft_in/ft_out are
      // dropped: their FlatTree reprs are not rebuilt).
      auto counts = ScanCountsFromParams(
          eqn.params, static_cast<int64_t>(eqn.inputs.size()),
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
      out.params = std::move(without_ft);
      const ClosedJaxpr* body = JaxprParam(eqn, "jaxpr");
      if (body == nullptr) return Error(eqn, "missing jaxpr");
      J2O_ASSIGN_OR_RETURN(std::vector<int> cpos,
                           RefPositions(rw, eqn, 0, nconsts));
      J2O_ASSIGN_OR_RETURN(std::vector<int> other,
                           RefPositions(rw, eqn, nconsts, eqn.inputs.size()));
      if (!other.empty()) {
        return Error(eqn, "a ref in the carry or scanned over is not "
                          "supported");
      }
      take(cpos, 0);
      J2O_RETURN_IF_ERROR(take_status);
      J2O_ASSIGN_OR_RETURN(auto nb, DischargeBody(eqn, *body, cpos));
      std::vector<Var*> consts, refs, rest;
      for (size_t i = 0; i < nb->invars.size(); ++i) {
        const bool is_ref = std::find(cpos.begin(), cpos.end(),
                                      static_cast<int>(i)) != cpos.end();
        (is_ref ? refs : static_cast<int64_t>(i) < nconsts ? consts : rest)
            .push_back(nb->invars[i]);
      }
      nb->invars = consts;
      nb->invars.insert(nb->invars.end(), refs.begin(), refs.end());
      nb->invars.insert(nb->invars.end(), rest.begin(), rest.end());
      const size_t nout = nb->outvars.size() - cpos.size();
      std::vector<Atom> outs(nb->outvars.begin() + nout, nb->outvars.end());
      outs.insert(outs.end(), nb->outvars.begin(), nb->outvars.begin() + nout);
      nb->outvars = std::move(outs);
      out.params.Set("jaxpr", ParamValue::Jaxpr(std::move(nb)));
      out.params.Set("num_consts",
                     ParamValue::Int(nconsts - static_cast<int64_t>(cpos.size())));
      out.params.Set("num_carry",
                     ParamValue::Int(ncarry + static_cast<int64_t>(cpos.size())));
      if (const ParamValue* linear = eqn.params.Find("linear");
          linear != nullptr && linear->kind() == ParamValue::Kind::kTuple &&
          linear->items().size() == eqn.inputs.size()) {
        std::vector<ParamValue> flags, ref_flags, rest_flags;
        for (size_t i = 0; i < eqn.inputs.size(); ++i) {
          const bool is_ref = std::find(cpos.begin(), cpos.end(),
                                        static_cast<int>(i)) != cpos.end();
          (is_ref ? ref_flags
                  : static_cast<int64_t>(i) < nconsts ? flags : rest_flags)
              .push_back(linear->items()[i]);
        }
        flags.insert(flags.end(), ref_flags.begin(), ref_flags.end());
        flags.insert(flags.end(), rest_flags.begin(), rest_flags.end());
        out.params.Set("linear", ParamValue::Tuple(std::move(flags)));
      }
      std::vector<Atom> operands = remove_positions(mapped, 0, cpos);
      operands.insert(operands.begin() + (nconsts - cpos.size()),
                      ref_values.begin(), ref_values.end());
      mapped = std::move(operands);
      extra_first = true;
    }
    out.inputs = std::move(mapped);
    for (Var*& v : out.outputs) {
      if (!fresh_outputs) continue;
      Var* fresh = rw.owner->NewVar(v->is_drop ? "_" : Fresh(v->name), v->aval,
                                    v->is_drop);
      if (!v->is_drop) rw.subst[v] = Atom::OfVar(fresh);
      v = fresh;
    }
    for (size_t r = 0; r < carried.size(); ++r) {
      extra_outputs.push_back(
          rw.owner->NewVar(Fresh(carried[r]->name), value_avals[r]));
    }
    std::vector<Var*> outputs;
    if (extra_first) outputs = extra_outputs;
    outputs.insert(outputs.end(), out.outputs.begin(), out.outputs.end());
    if (!extra_first) {
      outputs.insert(outputs.end(), extra_outputs.begin(), extra_outputs.end());
    }
    out.outputs = std::move(outputs);
    rw.owner->eqns.push_back(std::move(out));
    for (size_t r = 0; r < carried.size(); ++r) {
      rw.refs[carried[r]] = Atom::OfVar(extra_outputs[r]);
    }
    return absl::OkStatus();
  }

  absl::Status Plain(Rewrite& rw, const Eqn& eqn, std::vector<Atom> mapped,
                     bool fresh_outputs) {
    bool takes_ref = false;
    for (const Atom& a : eqn.inputs) {
      if (!a.is_literal() && rw.refs.contains(a.var)) takes_ref = true;
    }
    if (takes_ref && (eqn.primitive == "cond" || eqn.primitive == "while" ||
                      eqn.primitive == "scan")) {
      return ControlFlow(rw, eqn, std::move(mapped), fresh_outputs);
    }
    for (const Atom& a : eqn.inputs) {
      if (a.is_literal()) continue;
      if (rw.refs.contains(a.var) || IsRefAval(a.var->aval)) {
        return Error(
            eqn, absl::StrCat(
                     "ref ", a.var->name, ":", a.var->aval.ToString(),
                     " is an operand; refs are read and written by "
                     "get/swap/addupdate/freeze, and carried through "
                     "scan/while/cond bodies, but not passed to '",
                     eqn.primitive, "'"));
      }
    }
    for (const Var* v : eqn.outputs) {
      if (IsRefAval(v->aval)) {
        return Error(eqn, absl::StrCat("result ", v->name, ":",
                                       v->aval.ToString(),
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
        Var* fresh = rw.owner->NewVar(v->is_drop ? "_" : Fresh(v->name),
                                      v->aval, v->is_drop);
        if (!v->is_drop) rw.subst[v] = Atom::OfVar(fresh);
        v = fresh;
      }
    }
    rw.owner->eqns.push_back(std::move(copy));
    return absl::OkStatus();
  }

  std::string path_;
  int counter_ = 0;
  absl::flat_hash_set<const ClosedJaxpr*> done_;
};

}  // namespace

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
    if (jaxpr != nullptr) {
      J2O_RETURN_IF_ERROR(discharger.DischargeJaxpr(jaxpr.get(), false));
    }
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx::jaxpr
