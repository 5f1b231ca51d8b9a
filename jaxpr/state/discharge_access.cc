#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/state/discharger.h"
#include "jaxpr/state/ref_state.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx::jaxpr::discharge_internal {

// An index operand as the int32 scalar JAX's discharge converts it to.
absl::StatusOr<Atom> Discharger::IndexAtom(Rewrite& rw, const Eqn& at,
                                           const Atom& a) {
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
    return Error(at,
                 absl::StrCat("ref index ", a.var->name, ":", aval.ToString(),
                              " is not an integer scalar"));
  }
  if (aval.dtype == DType::kI32) return a;
  return Emit(rw, at,
              "convert_element_type[new_dtype=int32 sharding=None "
              "weak_type=False]",
              {a}, Aval::Static(DType::kI32, {}));
}

absl::StatusOr<Discharger::Slicing> Discharger::Plan(
    Rewrite& rw, const Eqn& eqn, const std::vector<Atom>& mapped,
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
absl::StatusOr<Atom> Discharger::Slice(Rewrite& rw, const Eqn& eqn,
                                       const Atom& cur, const Slicing& s,
                                       const Aval& value) {
  std::vector<Atom> ins = {cur};
  ins.insert(ins.end(), s.starts.begin(), s.starts.end());
  Aval sliced = value;
  sliced.shape = s.size_dims;
  sliced.dim_sharding.clear();
  return Emit(
      rw, eqn,
      absl::StrCat("dynamic_slice[slice_sizes=", DimsText(s.sizes), "]"),
      std::move(ins), sliced);
}

absl::StatusOr<Atom> Discharger::Read(Rewrite& rw, const Eqn& eqn,
                                      const Atom& cur, const Slicing& s,
                                      const Aval& value, const Aval& result) {
  if (s.trivial) return cur;
  J2O_ASSIGN_OR_RETURN(Atom sliced, Slice(rw, eqn, cur, s, value));
  if (s.point_dims.empty()) return sliced;
  return Emit(rw, eqn,
              absl::StrCat("squeeze[dimensions=", DimsText(s.point_dims), "]"),
              {sliced}, result);
}

// `cur` with the indexed part replaced by `update` (of the read's shape).
absl::StatusOr<Atom> Discharger::Write(Rewrite& rw, const Eqn& eqn,
                                       const Atom& cur, Atom update,
                                       const Slicing& s, const Aval& value) {
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

absl::StatusOr<Atom> Discharger::Zeros(Rewrite& rw, const Eqn& eqn,
                                       const Aval& aval) {
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
  return Emit(
      rw, eqn,
      absl::StrCat("broadcast_in_dim[broadcast_dimensions=() shape=",
                   aval.rank() == 0 ? "()" : DimsText(dims), " sharding=None]"),
      {Atom::OfLiteral(std::move(zero))}, aval);
}

// The value a ref operand holds now.
absl::StatusOr<std::pair<const Var*, Atom>> Discharger::RefOperand(
    const Rewrite& rw, const Eqn& eqn) {
  const Atom& a = eqn.inputs.empty() ? Atom() : eqn.inputs[0];
  if (a.is_literal() || a.var == nullptr) {
    return Error(eqn, "the first operand must be a ref");
  }
  auto it = rw.refs.find(a.var);
  if (it == rw.refs.end()) {
    if (!IsRefAval(a.var->aval)) {
      return Error(eqn,
                   absl::StrCat(a.var->name, ":", a.var->aval.ToString(),
                                " is not a Ref{...} (Pallas MemRef kernels are "
                                "not converted)"));
    }
    return Error(eqn, absl::StrCat("ref ", a.var->name,
                                   " is not bound to a value here"));
  }
  return std::make_pair(a.var, it->second);
}

// get, swap, addupdate on the value the ref holds now.
absl::Status Discharger::Access(Rewrite& rw, const Eqn& eqn,
                                const std::vector<Atom>& mapped) {
  const std::string& p = eqn.primitive;
  const Var* out0 = eqn.outputs.empty() ? nullptr : eqn.outputs[0];
  J2O_ASSIGN_OR_RETURN(auto ref, RefOperand(rw, eqn));
  auto value = RefInnerAval(ref.first->aval);
  if (!value.ok()) return Error(eqn, value.status().message());
  const int first_index = p == "get" ? 1 : 2;
  if (static_cast<int>(mapped.size()) < first_index) {
    return Error(eqn, "missing operands");
  }
  J2O_ASSIGN_OR_RETURN(Slicing s, Plan(rw, eqn, mapped, first_index, *value));
  auto index = DecodeRefIndex(eqn, first_index, *value);
  auto result = IndexedAval(eqn, *index, *value);
  if (!result.ok()) return Error(eqn, result.status().message());
  if (p == "get") {
    J2O_ASSIGN_OR_RETURN(Atom y, Read(rw, eqn, ref.second, s, *value, *result));
    Bind(rw, out0, y);
  } else if (p == "swap") {
    if (out0 != nullptr && !out0->is_drop) {
      J2O_ASSIGN_OR_RETURN(Atom y,
                           Read(rw, eqn, ref.second, s, *value, *result));
      Bind(rw, out0, y);
    }
    J2O_ASSIGN_OR_RETURN(Atom next,
                         Write(rw, eqn, ref.second, mapped[1], s, *value));
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
            update, Emit(rw, eqn,
                         absl::StrCat("reshape[dimensions=None new_sizes=",
                                      DimsText(s.sizes), " sharding=None]"),
                         {update}, part));
      }
    }
    J2O_ASSIGN_OR_RETURN(Atom sum, Emit(rw, eqn, "add", {old, update}, part));
    Atom next = sum;
    if (!s.trivial) {
      std::vector<Atom> ins = {ref.second, sum};
      ins.insert(ins.end(), s.starts.begin(), s.starts.end());
      J2O_ASSIGN_OR_RETURN(
          next, Emit(rw, eqn, "dynamic_update_slice", std::move(ins), *value));
    }
    rw.refs[ref.first] = std::move(next);
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx::jaxpr::discharge_internal
