// Pipeline-independent lowering of the generic (variadic) `reduce`
// primitive, e.g. an argmax written by hand with lax.reduce over (values,
// iota): reduce[computation=... consts=() dimensions=(..) jaxpr={ lambda ;
// acc..., x... . ... }] operands... inits...
//
// The reduced dims are transposed to the front and flattened to one axis of
// length R; one ONNX Loop over r = 0..R-1 applies the combiner from the init
// values in row-major order of the reduced dims (the interpreter's order;
// XLA leaves the order unspecified, so an associative combiner gives XLA's
// result and a non-associative one this order's). The combiner jaxpr is
// scalar; it is lowered inline in the Loop body on whole [kept dims...]
// slices after a copy with every scalar aval widened to that shape, which is
// exact for the elementwise primitives it may use (checked: others refuse).
// Complex operands (any mix with real ones) move as real [..., 2] tensors.
#ifndef JAX2ONNX_PLUGIN_REDUCE_PLAN_H_
#define JAX2ONNX_PLUGIN_REDUCE_PLAN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/elementwise_plan.h"
#include "plugin/emit.h"
#include "plugin/onnx_types.h"

namespace jax2onnx::plugin {
namespace reduce_plan {

// Elementwise primitives whose lowering is the same on scalars and on
// equal-shaped tensors.
inline bool IsElementwise(absl::string_view prim) {
  static const auto* kOk =
      new absl::flat_hash_set<std::string>{"add",
                                           "add_any",
                                           "sub",
                                           "mul",
                                           "div",
                                           "rem",
                                           "max",
                                           "min",
                                           "neg",
                                           "abs",
                                           "sign",
                                           "select_n",
                                           "eq",
                                           "ne",
                                           "lt",
                                           "le",
                                           "gt",
                                           "ge",
                                           "and",
                                           "or",
                                           "not",
                                           "xor",
                                           "convert_element_type",
                                           "exp",
                                           "log",
                                           "log1p",
                                           "expm1",
                                           "logistic",
                                           "tanh",
                                           "sqrt",
                                           "rsqrt",
                                           "pow",
                                           "integer_pow",
                                           "square",
                                           "nextafter",
                                           "is_finite",
                                           "floor",
                                           "ceil",
                                           "round",
                                           "clamp",
                                           "copy",
                                           "copy_p",
                                           "stop_gradient",
                                           "shift_left",
                                           "shift_right_logical",
                                           "shift_right_arithmetic",
                                           "population_count",
                                           "clz",
                                           "atan2",
                                           "complex",
                                           "real",
                                           "imag",
                                           "conj"};
  return kOk->contains(prim);
}

// Call-like primitives whose jaxpr is inlined when it sits in a combiner
// (jnp functions wrapped in jit print as `pjit` inside combiners), with the
// param that holds the callee.
inline const jaxpr::ClosedJaxpr* InlinableCallee(const jaxpr::Eqn& eqn) {
  static const auto* kCalls =
      new absl::flat_hash_set<std::string>{"pjit",
                                           "jit",
                                           "closed_call",
                                           "core_call",
                                           "custom_jvp_call",
                                           "custom_vjp_call",
                                           "custom_vjp_call_jaxpr",
                                           "remat",
                                           "remat2",
                                           "checkpoint"};
  if (!kCalls->contains(eqn.primitive)) return nullptr;
  for (const char* key : {"jaxpr", "call_jaxpr", "fun_jaxpr"}) {
    if (!eqn.params.Has(key)) continue;
    auto callee = eqn.params.GetJaxpr(key);
    return callee.ok() ? *callee : nullptr;
  }
  return nullptr;
}

// A copy of the scalar combiner with every aval given `shape` (scalar
// literals stay scalars and broadcast), calls in it inlined. `prim` names
// the primitive in errors.
inline absl::StatusOr<std::unique_ptr<jaxpr::ClosedJaxpr>> Widened(
    const jaxpr::ClosedJaxpr& body, const std::vector<jaxpr::DimExpr>& shape,
    absl::string_view prim = "reduce") {
  auto out = std::make_unique<jaxpr::ClosedJaxpr>();
  // What each var of the combiner (or of a callee inlined into it) stands
  // for in the copy: a widened var, or a literal passed to a call.
  absl::flat_hash_map<const jaxpr::Var*, jaxpr::Atom> map;
  auto widen = [&](const jaxpr::Var* v) -> absl::StatusOr<jaxpr::Var*> {
    if (!v->aval.is_shaped() || v->aval.rank() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(prim, ": combiner var ", v->name, " is ",
                       v->aval.ToString(), ", not a scalar"));
    }
    jaxpr::Aval aval = v->aval;
    aval.shape = shape;
    jaxpr::Var* w = out->NewVar(v->name, aval, v->is_drop);
    map[v] = jaxpr::Atom::OfVar(w);
    return w;
  };
  auto mapped = [&](const jaxpr::Atom& a,
                    absl::string_view what) -> absl::StatusOr<jaxpr::Atom> {
    if (a.is_literal()) return a;
    auto it = map.find(a.var);
    if (it == map.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          prim, ": combiner ", what, " ", a.var->name, " is unbound"));
    }
    return it->second;
  };
  // Copies the equations of `jaxpr` (whose invars are already mapped).
  std::function<absl::Status(const jaxpr::ClosedJaxpr&)> copy_eqns =
      [&](const jaxpr::ClosedJaxpr& jaxpr) -> absl::Status {
    if (!jaxpr.constvars.empty()) {
      return absl::UnimplementedError(absl::StrCat(
          prim, ": the combiner jaxpr has ", jaxpr.constvars.size(),
          " constvars whose values the printed text does not carry"));
    }
    for (const jaxpr::Eqn& eqn : jaxpr.eqns) {
      if (const jaxpr::ClosedJaxpr* callee = InlinableCallee(eqn)) {
        if (callee->invars.size() != eqn.inputs.size() ||
            callee->outvars.size() != eqn.outputs.size()) {
          return absl::InvalidArgumentError(
              absl::StrCat(prim, ": the combiner's '", eqn.primitive,
                           "' passes ", eqn.inputs.size(),
                           " operands to a callee of ", callee->invars.size()));
        }
        for (size_t i = 0; i < eqn.inputs.size(); ++i) {
          J2O_ASSIGN_OR_RETURN(map[callee->invars[i]],
                               mapped(eqn.inputs[i], "var"));
        }
        J2O_RETURN_IF_ERROR(copy_eqns(*callee));
        for (size_t i = 0; i < eqn.outputs.size(); ++i) {
          J2O_ASSIGN_OR_RETURN(map[eqn.outputs[i]],
                               mapped(callee->outvars[i], "output"));
        }
        continue;
      }
      if (!IsElementwise(eqn.primitive)) {
        return absl::UnimplementedError(absl::StrCat(
            prim, ": combiner primitive '", eqn.primitive,
            "' is not one of the elementwise primitives a combiner is "
            "lowered with"));
      }
      jaxpr::Eqn copy;
      copy.primitive = eqn.primitive;
      copy.params = eqn.params;
      copy.loc = eqn.loc;
      for (const jaxpr::Atom& a : eqn.inputs) {
        J2O_ASSIGN_OR_RETURN(jaxpr::Atom m, mapped(a, "var"));
        copy.inputs.push_back(std::move(m));
      }
      for (const jaxpr::Var* v : eqn.outputs) {
        J2O_ASSIGN_OR_RETURN(jaxpr::Var * w, widen(v));
        copy.outputs.push_back(w);
      }
      out->eqns.push_back(std::move(copy));
    }
    return absl::OkStatus();
  };
  for (const jaxpr::Var* v : body.invars) {
    J2O_ASSIGN_OR_RETURN(jaxpr::Var * w, widen(v));
    out->invars.push_back(w);
  }
  J2O_RETURN_IF_ERROR(copy_eqns(body));
  for (const jaxpr::Atom& a : body.outvars) {
    J2O_ASSIGN_OR_RETURN(jaxpr::Atom m, mapped(a, "output"));
    if (m.is_literal()) {
      return absl::UnimplementedError(absl::StrCat(
          prim, ": a combiner returning a literal is not lowered"));
    }
    out->outvars.push_back(std::move(m));
  }
  return out;
}

}  // namespace reduce_plan

template <class E>
absl::Status LowerGenericReduce(E& e) {
  using jaxpr::DType;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  const int total = static_cast<int>(eqn.inputs.size());
  const int n = total / 2;
  if (total == 0 || total % 2 != 0 ||
      static_cast<int>(eqn.outputs.size()) != n) {
    return absl::InvalidArgumentError(
        "reduce takes operands, as many init values, and as many results");
  }
  for (int i = 0; i < n; ++i) {
    if (eqn.inputs[i].is_literal()) {
      return absl::InvalidArgumentError("reduce: operands must be variables");
    }
  }
  const jaxpr::Aval& in = eqn.inputs[0].var->aval;
  const int rank = in.rank();
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                       eqn.params.GetIntList("dimensions"));
  J2O_ASSIGN_OR_RETURN(const jaxpr::ClosedJaxpr* body,
                       eqn.params.GetJaxpr("jaxpr"));
  std::vector<bool> reduced(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || reduced[d]) {
      return absl::InvalidArgumentError(
          absl::StrCat("reduce: bad dimensions for rank ", rank));
    }
    reduced[d] = true;
  }
  std::vector<int64_t> perm(dims.begin(), dims.end());
  for (int d = 0; d < rank; ++d) {
    if (!reduced[d]) perm.push_back(d);
  }
  const int k = static_cast<int>(dims.size());
  const std::vector<jaxpr::DimExpr>& out_shape = eqn.outputs[0]->aval.shape;
  J2O_ASSIGN_OR_RETURN(std::unique_ptr<jaxpr::ClosedJaxpr> widened,
                       reduce_plan::Widened(*body, out_shape));
  if (static_cast<int>(widened->invars.size()) != 2 * n ||
      static_cast<int>(widened->outvars.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("reduce: the combiner must take ", 2 * n, " and return ",
                     n, " values"));
  }
  // [R, kept...] views of the operands, R = product of the reduced dims. A
  // complex operand is its real [..., 2] tensor (plugin/complex_plan.h): the
  // trailing (re, im) axis rides along, and the combiner's complex equations
  // are lowered by the complex recipes when inlined.
  std::vector<Val> flat;
  std::vector<DType> dtypes;
  Val kept_shape;
  std::optional<Val> kept_shape_complex;
  std::vector<int64_t> perm_complex = perm;
  perm_complex.push_back(rank);
  for (int i = 0; i < n; ++i) {
    const bool complex = jaxpr::IsComplex(eqn.inputs[i].var->aval.dtype);
    const DType d = complex ? ComplexPartDType(eqn.inputs[i].var->aval.dtype)
                            : eqn.inputs[i].var->aval.dtype;
    dtypes.push_back(d);
    J2O_ASSIGN_OR_RETURN(Val x, e.In(i));
    x = e.Op("Transpose", {x}, d,
             {OpAttr::Ints("perm", complex ? perm_complex : perm)});
    if (i == 0) {
      std::vector<OpAttr> kept = {OpAttr::Int("start", k)};
      if (complex) kept.push_back(OpAttr::Int("end", rank));
      kept_shape = e.Op("Shape", {x}, DType::kI64, kept);
    }
    std::vector<Val> dims = {e.ConstI64({-1}), kept_shape};
    if (complex) dims.push_back(e.ConstI64({2}));
    x = e.Op("Reshape",
             {x, e.Op("Concat", dims, DType::kI64, {OpAttr::Int("axis", 0)})},
             d);
    flat.push_back(x);
  }
  std::vector<Val> inits;
  for (int i = 0; i < n; ++i) {
    Val target = kept_shape;
    if (jaxpr::IsComplex(eqn.outputs[i]->aval.dtype)) {
      if (!kept_shape_complex) {
        kept_shape_complex = e.Op("Concat", {kept_shape, e.ConstI64({2})},
                                  DType::kI64, {OpAttr::Int("axis", 0)});
      }
      target = *kept_shape_complex;
    }
    J2O_ASSIGN_OR_RETURN(Val init, e.In(n + i));
    inits.push_back(e.Op("Expand", {init, target}, dtypes[i]));
  }
  Val trip = e.Op("Gather",
                  {e.Op("Shape", {flat[0]}, DType::kI64),
                   e.Const(jaxpr::Array::ScalarFromInt64(DType::kI64, 0))},
                  DType::kI64, {OpAttr::Int("axis", 0)});
  const jaxpr::ClosedJaxpr& combiner = *widened;
  // The accumulators have the results' shapes (complex: [..., 2]).
  std::vector<CarriedType> carried;
  for (int i = 0; i < n; ++i) {
    std::vector<jaxpr::DimExpr> shape = eqn.outputs[i]->aval.shape;
    if (jaxpr::IsComplex(eqn.outputs[i]->aval.dtype)) {
      shape.push_back(jaxpr::DimExpr::Constant(2));
    }
    carried.emplace_back(dtypes[i], std::move(shape));
  }
  J2O_ASSIGN_OR_RETURN(
      std::vector<Val> out,
      e.Loop(trip, inits, carried,
             [&](Val r, const std::vector<Val>& accs)
                 -> absl::StatusOr<std::vector<Val>> {
               std::vector<Val> args = accs;
               for (int i = 0; i < n; ++i) {
                 args.push_back(e.Op("Gather", {flat[i], r}, dtypes[i],
                                     {OpAttr::Int("axis", 0)}));
               }
               return e.Inline(combiner, args);
             }));
  for (int i = 0; i < n; ++i) J2O_RETURN_IF_ERROR(e.SetOut(i, out[i]));
  return absl::OkStatus();
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_REDUCE_PLAN_H_
