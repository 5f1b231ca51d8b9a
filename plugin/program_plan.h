// Pipeline-independent lowering recipes for the primitives current JAX emits
// for ordinary code (their params and type rules: jaxpr/typecheck/
// rules_program.cc), instantiated by plugins/lax/program.cc and
// plugins2/lax/program.cc:
//   stack    Unsqueeze every operand at `axis`, Concat;
//   unstack  Split into size-1 pieces along `axis`, Squeeze each;
//   tile     Tile (f16/bf16/i16/u16 moved as f32/i32: ORT's Tile lacks them);
//   empty, empty2, zeros_like   a zero broadcast to the result shape (JAX
//            leaves `empty` unspecified; its CPU lowering writes zeros);
//   tie      its second operand; shard_alike, xla_metadata_value identities;
//   dce_sink, debug_print, debug_callback   nothing (no results);
//   platform_index   the constant CPU index (jaxpr/program_params.h);
//   dim_as_value     the dimension computed from the input shapes at run
//            time (Shape/Gather through the symbol's origin);
//   dimension_size   the operand's own dimension at run time (Shape);
//   shape_assertion  a check that fails the ONNX Runtime run when false (a
//            Gather out of bounds, named after the message), on which every
//            graph output is made to depend (LowerShapeAssertion).
#ifndef JAX2ONNX_PLUGIN_PROGRAM_PLAN_H_
#define JAX2ONNX_PLUGIN_PROGRAM_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/prng.h"
#include "jaxpr/program_params.h"
#include "jaxpr/status_macros.h"
#include "plugin/emit.h"
#include "plugin/lax_plan.h"
#include "plugin/onnx_types.h"

namespace jax2onnx::plugin {

namespace program_internal {

template <class E>
using V = typename E::Value;

template <class E>
absl::StatusOr<V<E>> Cast(E& e, V<E> v, jaxpr::DType from, jaxpr::DType to) {
  if (from == to) return v;
  J2O_ASSIGN_OR_RETURN(int code, OnnxDType(to));
  return e.Op("Cast", {v}, to, {OpAttr::Int("to", code)});
}

inline absl::Status RefuseNonArray(const jaxpr::Aval& aval,
                                   absl::string_view what) {
  if (aval.dtype == jaxpr::DType::kOther || jaxpr::IsComplex(aval.dtype)) {
    return absl::UnimplementedError(
        absl::StrCat(what, " of ", aval.ToString(),
                     ": only real, integer and bool arrays are supported"));
  }
  return absl::OkStatus();
}

}  // namespace program_internal

template <class E>
absl::Status LowerStack(E& e) {
  namespace pi = program_internal;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval& out = eqn.outputs[0]->aval;
  J2O_RETURN_IF_ERROR(pi::RefuseNonArray(out, "stack"));
  J2O_ASSIGN_OR_RETURN(int64_t axis, eqn.params.GetInt("axis"));
  std::vector<pi::V<E>> parts;
  for (size_t i = 0; i < eqn.inputs.size(); ++i) {
    J2O_ASSIGN_OR_RETURN(auto v, e.In(static_cast<int>(i)));
    parts.push_back(e.Op("Unsqueeze", {v, e.ConstI64({axis})}, out.dtype));
  }
  if (parts.empty()) return absl::InvalidArgumentError("stack of nothing");
  if (parts.size() == 1) return e.SetOut(0, parts[0]);
  return e.SetOut(
      0, e.Op("Concat", parts, out.dtype, {OpAttr::Int("axis", axis)}));
}

template <class E>
absl::Status LowerUnstack(E& e) {
  namespace pi = program_internal;
  const jaxpr::Eqn& eqn = e.eqn();
  const int n = static_cast<int>(eqn.outputs.size());
  J2O_ASSIGN_OR_RETURN(int64_t axis, eqn.params.GetInt("axis"));
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  if (n == 0) return absl::OkStatus();
  const jaxpr::DType dtype = eqn.outputs[0]->aval.dtype;
  J2O_RETURN_IF_ERROR(pi::RefuseNonArray(eqn.outputs[0]->aval, "unstack"));
  std::vector<pi::V<E>> pieces{x};
  if (n > 1) {
    pieces = e.OpMulti("Split", {x, e.ConstI64(std::vector<int64_t>(n, 1))},
                       std::vector<jaxpr::DType>(n, dtype),
                       {OpAttr::Int("axis", axis)});
  }
  for (int i = 0; i < n; ++i) {
    if (eqn.outputs[i]->is_drop) continue;
    J2O_RETURN_IF_ERROR(
        e.SetOut(i, e.Op("Squeeze", {pieces[i], e.ConstI64({axis})}, dtype)));
  }
  return absl::OkStatus();
}

template <class E>
absl::Status LowerTile(E& e) {
  namespace pi = program_internal;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval& out = eqn.outputs[0]->aval;
  J2O_RETURN_IF_ERROR(pi::RefuseNonArray(out, "tile"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> reps,
                       eqn.params.GetIntList("reps"));
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  bool trivial = true;
  for (int64_t r : reps) trivial &= r == 1;
  if (trivial) return e.SetOut(0, x);
  J2O_ASSIGN_OR_RETURN(jaxpr::DType work,
                       ComputeDType(out.dtype, ArithUse::kMoving, "tile"));
  J2O_ASSIGN_OR_RETURN(x, pi::Cast(e, x, out.dtype, work));
  x = e.Op("Tile", {x, e.ConstI64(reps)}, work);
  J2O_ASSIGN_OR_RETURN(x, pi::Cast(e, x, work, out.dtype));
  return e.SetOut(0, x);
}

// empty, empty2, zeros_like: zeros of the result type.
template <class E>
absl::Status LowerZeros(E& e) {
  namespace pi = program_internal;
  const jaxpr::Aval& out = e.eqn().outputs[0]->aval;
  J2O_RETURN_IF_ERROR(pi::RefuseNonArray(out, e.eqn().primitive));
  J2O_ASSIGN_OR_RETURN(jaxpr::DType work,
                       ComputeDType(out.dtype, ArithUse::kMoving, "zeros"));
  pi::V<E> zero = e.Const(jaxpr::Array::ScalarFromInt64(work, 0));
  if (out.rank() > 0) {
    J2O_ASSIGN_OR_RETURN(auto shape, e.ShapeValue(out.shape));
    zero = e.Op("Expand", {zero, shape}, work);
  }
  J2O_ASSIGN_OR_RETURN(zero, pi::Cast(e, zero, work, out.dtype));
  return e.SetOut(0, zero);
}

// tie (x, y) -> y.
template <class E>
absl::Status LowerTie(E& e) {
  J2O_ASSIGN_OR_RETURN(auto y, e.In(1));
  return e.SetOut(0, y);
}

// Output i is operand i (shard_alike, xla_metadata_value).
template <class E>
absl::Status LowerPassThrough(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != eqn.outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", eqn.primitive, "' has ", eqn.inputs.size(),
                     " operands but ", eqn.outputs.size(), " outputs"));
  }
  for (size_t i = 0; i < eqn.inputs.size(); ++i) {
    if (eqn.outputs[i]->is_drop) continue;
    J2O_ASSIGN_OR_RETURN(auto v, e.In(static_cast<int>(i)));
    J2O_RETURN_IF_ERROR(e.SetOut(static_cast<int>(i), v));
  }
  return absl::OkStatus();
}

// dce_sink, debug_print, debug_callback: no results, no effect on any value.
template <class E>
absl::Status LowerDropped(E& e) {
  if (!e.eqn().outputs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", e.eqn().primitive, "' declares ",
                     e.eqn().outputs.size(), " results; it has none"));
  }
  return absl::OkStatus();
}

template <class E>
absl::Status LowerPlatformIndex(E& e) {
  J2O_ASSIGN_OR_RETURN(int32_t index, jaxpr::PlatformIndexForCpu(e.eqn()));
  return e.SetOut(
      0, e.Const(jaxpr::Array::ScalarFromInt64(jaxpr::DType::kI32, index)));
}

namespace program_internal {

// Binds output 0 to the value of `dim`: a constant when it is static, else
// the int64 [1] that `runtime` computes, squeezed; cast to the outvar's
// dtype (i32, or i64 under x64).
template <class E, class F>
absl::Status SetDimensionOut(E& e, const jaxpr::DimExpr& dim, F runtime) {
  V<E> v;
  if (dim.is_constant()) {
    v = e.Const(jaxpr::Array::ScalarFromInt64(jaxpr::DType::kI64,
                                              dim.constant_value()));
  } else {
    J2O_ASSIGN_OR_RETURN(auto d, runtime());  // int64 [1]
    v = e.Op("Squeeze", {d, e.ConstI64({0})}, jaxpr::DType::kI64);
  }
  J2O_ASSIGN_OR_RETURN(
      v, Cast(e, v, jaxpr::DType::kI64, e.eqn().outputs[0]->aval.dtype));
  return e.SetOut(0, v);
}

}  // namespace program_internal

template <class E>
absl::Status LowerDimAsValue(E& e) {
  J2O_ASSIGN_OR_RETURN(jaxpr::DimExpr dim, jaxpr::DimAsValueExpr(e.eqn()));
  return program_internal::SetDimensionOut(e, dim,
                                           [&] { return e.DimValue(dim); });
}

// jax.export's dimension_size[dimension=k] x: x's size along k, read from
// x itself (not from the symbol's first input, as dim_as_value does), so
// that a shape_assertion can compare the dims that one symbol names.
template <class E>
absl::Status LowerDimensionSize(E& e) {
  J2O_ASSIGN_OR_RETURN(int64_t k, e.eqn().params.GetInt("dimension"));
  return program_internal::SetDimensionOut(
      e, e.eqn().inputs[0].var->aval.shape[k],
      [&]() -> absl::StatusOr<program_internal::V<E>> {
        J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
        return e.Op("Shape", {x}, jaxpr::DType::kI64,
                    {OpAttr::Int("start", k), OpAttr::Int("end", k + 1)});
      });
}

// jax.export's shape_assertion[error_message] ok *inputs: the exported
// function fails when `ok` is false. ONNX has no assertion op, so the check
// is a Gather from [1] at index Where(ok, 0, 1): out of bounds when the
// assertion fails, which ONNX Runtime reports as an error naming the node,
// and the node is named after the message. The check's scalar result (one)
// chains the checks of one program, and every graph output is made to
// depend on the newest through Reshape(out, Shape(out) * check), so that no
// output is computed without the checks (the emitter's SetOutputGuard). A
// literal `ok` is decided now. The message's {k} placeholders stay
// unformatted in the node name.
template <class E>
absl::Status LowerShapeAssertion(E& e) {
  namespace pi = program_internal;
  using V = pi::V<E>;
  const jaxpr::Eqn& eqn = e.eqn();
  const std::string message = jaxpr::ShapeAssertionMessage(eqn);
  if (eqn.inputs[0].is_literal()) {
    const jaxpr::Literal& lit = *eqn.inputs[0].literal;
    const bool holds = lit.kind == jaxpr::Literal::Kind::kBool
                           ? lit.bool_value
                           : lit.int_value != 0;
    if (holds) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("shape assertion is false: ", message));
  }
  J2O_ASSIGN_OR_RETURN(V ok, e.In(0));
  const jaxpr::DType i64 = jaxpr::DType::kI64;
  auto scalar = [&](int64_t v) {
    return e.Const(jaxpr::Array::ScalarFromInt64(i64, v));
  };
  V index = e.Op("Where", {ok, scalar(0), scalar(1)}, i64);
  // The previous check is 1 (or failed the run): multiplying by it only
  // orders the checks.
  if (std::optional<V> previous = e.OutputGuardToken()) {
    index = e.Op("Mul", {index, *previous}, i64);
  }
  V check =
      e.Op("Gather", {e.ConstI64({1}), index}, i64, {OpAttr::Int("axis", 0)});
  e.NameNode(check, absl::StrCat("shape_assertion: ", message));
  E emitter = e;
  return e.SetOutputGuard(
      check,
      [emitter, check](V out,
                       const jaxpr::Aval& aval) mutable -> absl::StatusOr<V> {
        // The element type the output is held in (a key as its u32 data;
        // complex as its part dtype, OnnxDType).
        J2O_ASSIGN_OR_RETURN(jaxpr::Aval physical, jaxpr::PhysicalAval(aval));
        J2O_RETURN_IF_ERROR(OnnxDType(physical.dtype).status());
        V shape = emitter.Op("Shape", {out}, jaxpr::DType::kI64);
        V guarded = emitter.Op("Mul", {shape, check}, jaxpr::DType::kI64);
        return emitter.Op("Reshape", {out, guarded}, physical.dtype);
      });
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_PROGRAM_PLAN_H_
