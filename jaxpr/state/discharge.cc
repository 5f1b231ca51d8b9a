#include "jaxpr/state/discharge.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

  absl::Status Plain(Rewrite& rw, const Eqn& eqn, std::vector<Atom> mapped,
                     bool fresh_outputs) {
    for (const Atom& a : eqn.inputs) {
      if (a.is_literal()) continue;
      if (rw.refs.contains(a.var) || IsRefAval(a.var->aval)) {
        return Error(
            eqn, absl::StrCat(
                     "ref ", a.var->name, ":", a.var->aval.ToString(),
                     " is an operand; refs are only read and written by "
                     "get/swap/addupdate/freeze here: a ref captured by a "
                     "scan/while/cond/jit body is not threaded as a carry"));
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
