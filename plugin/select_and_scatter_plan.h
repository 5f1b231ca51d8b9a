// Pipeline-independent lowering of the generic select_and_scatter
// (lax._select_and_scatter: operand, source, init_value with select_jaxpr /
// scatter_jaxpr bodies), written once against the emitter interface of
// plugin/emit.h.
//
// Bodies: select_jaxpr must be one comparison ge/gt/le/lt of its two
// arguments (the bodies JAX builds for max/min pooling gradients; either
// argument order), scatter_jaxpr one add/mul/max/min of its two arguments.
// Any other body, and non-empty consts, are refused naming the body's
// primitive.
//
// Semantics (XLA's SelectAndScatter, as the interpreter runs it): the output
// starts as init_value everywhere; each window selects one operand element
// by the sequential select of select_window_plan.h (padding never selected,
// a window of only padding selects nothing) and combines its source value
// into it, out[p] = scatter(source, out[p]), windows in row-major order.
//
// Lowering (windowed dims static): the windowed dims are transposed first
// and the operand padded (select_window::Geometry), the select fold gives
// each window's chosen offset. The output is folded over the window offsets
// t in the padded layout flattened to [padded windowed positions, rest]: a
// constant table maps each padded position to the window whose offset t
// lands on it (if any), and Gathers fetch that window's chosen offset and
// source value; where the chosen offset is t, out = scatter(value, out).
// Offsets go from last to first, so the windows that hit one position come
// in row-major order, as in XLA (which matters for float add). No value
// passes through Where's true branch unfixed (ORT loses a -0 there,
// plugin/float_extremes.h); f16/bf16 round after every step.
#ifndef JAX2ONNX_PLUGIN_SELECT_AND_SCATTER_PLAN_H_
#define JAX2ONNX_PLUGIN_SELECT_AND_SCATTER_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/emit.h"
#include "plugin/float_extremes.h"
#include "plugin/select_window_plan.h"

namespace jax2onnx::plugin {
namespace select_scatter {

// The single equation of a two-argument scalar body `key`, with whether its
// operands are the body's arguments in order (true) or swapped (false).
struct BodyOp {
  std::string primitive;
  bool in_order = true;
};

inline absl::StatusOr<BodyOp> ReadBody(const jaxpr::Eqn& eqn, const char* key,
                                       const char* consts_key) {
  if (const jaxpr::ParamValue* c = eqn.params.Find(consts_key);
      c != nullptr && !c->items().empty()) {
    return absl::UnimplementedError(absl::StrCat(
        eqn.primitive, ": ", consts_key, " with ", c->items().size(),
        " consts is not lowered (JAX's select/scatter bodies have none)"));
  }
  J2O_ASSIGN_OR_RETURN(const jaxpr::ClosedJaxpr* body,
                       eqn.params.GetJaxpr(key));
  auto describe = [&]() {
    std::string prims;
    for (const jaxpr::Eqn& b : body->eqns) {
      absl::StrAppend(&prims, prims.empty() ? "" : ", ", "'", b.primitive,
                      "'");
    }
    return prims.empty() ? std::string("no equation") : prims;
  };
  if (body->invars.size() != 2 || body->outvars.size() != 1 ||
      body->eqns.size() != 1 || !body->constvars.empty()) {
    return absl::UnimplementedError(absl::StrCat(
        eqn.primitive, ": ", key, " body (", describe(),
        ") is not lowered: it must be one equation of its two arguments"));
  }
  const jaxpr::Eqn& op = body->eqns[0];
  const jaxpr::Atom& out = body->outvars[0];
  const bool operands_ok =
      op.inputs.size() == 2 && !op.inputs[0].is_literal() &&
      !op.inputs[1].is_literal() && op.inputs[0].var != op.inputs[1].var &&
      (op.inputs[0].var == body->invars[0] ||
       op.inputs[0].var == body->invars[1]) &&
      (op.inputs[1].var == body->invars[0] ||
       op.inputs[1].var == body->invars[1]);
  if (!operands_ok || op.outputs.size() != 1 || out.is_literal() ||
      out.var != op.outputs[0]) {
    return absl::UnimplementedError(absl::StrCat(
        eqn.primitive, ": ", key, " body '", op.primitive,
        "' is not lowered: it must apply to the body's two arguments and be "
        "its result"));
  }
  return BodyOp{op.primitive, op.inputs[0].var == body->invars[0]};
}

// ONNX comparison of select(chosen, candidate).
inline absl::StatusOr<std::string> SelectCompare(const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(BodyOp b,
                       ReadBody(eqn, "select_jaxpr", "select_consts"));
  // cmp(b, a) is the mirrored comparison of (a, b).
  const std::string& p = b.primitive;
  if (p == "ge") return std::string(b.in_order ? "GreaterOrEqual" : "LessOrEqual");
  if (p == "le") return std::string(b.in_order ? "LessOrEqual" : "GreaterOrEqual");
  if (p == "gt") return std::string(b.in_order ? "Greater" : "Less");
  if (p == "lt") return std::string(b.in_order ? "Less" : "Greater");
  return absl::UnimplementedError(absl::StrCat(
      eqn.primitive, ": select_jaxpr body '", p,
      "' is not lowered (ge, gt, le or lt of the two arguments are)"));
}

// The scatter body's primitive (commutative, so either order).
inline absl::StatusOr<std::string> ScatterPrimitive(const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(BodyOp b,
                       ReadBody(eqn, "scatter_jaxpr", "scatter_consts"));
  const std::string& p = b.primitive;
  if (p == "add" || p == "mul" || p == "max" || p == "min") return p;
  return absl::UnimplementedError(absl::StrCat(
      eqn.primitive, ": scatter_jaxpr body '", p,
      "' is not lowered (add, mul, max or min of the two arguments are)"));
}

// Where(cond, a, b) that keeps the sign of a zero from either branch (ORT's
// Where turns a -0 from its true branch into +0): floats get the sign
// fix-up of float_extremes.h.
template <class E, class V = typename E::Value>
V SignExactWhere(E& e, V cond, V a, V b, jaxpr::DType d) {
  using jaxpr::DType;
  V r = e.Op("Where", {cond, a, b}, d);
  if (!jaxpr::IsFloat(d)) return r;
  V want = e.Op(
      "Or",
      {e.Op("And", {cond, IsSignedZero(e, a, d, /*negative=*/true)},
            DType::kBool),
       e.Op("And",
            {e.Op("Not", {cond}, DType::kBool),
             IsSignedZero(e, b, d, /*negative=*/true)},
            DType::kBool)},
      DType::kBool);
  return SelectNegativeZero(e, want, r, d);
}

}  // namespace select_scatter

template <class E>
absl::Status LowerSelectAndScatter(E& e) {
  namespace sw = select_window;
  namespace ss = select_scatter;
  using jaxpr::DType;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 3 || eqn.outputs.size() != 1) {
    return absl::InvalidArgumentError(
        "select_and_scatter takes (operand, source, init_value), one result");
  }
  J2O_ASSIGN_OR_RETURN(std::string select, ss::SelectCompare(eqn));
  J2O_ASSIGN_OR_RETURN(std::string scatter, ss::ScatterPrimitive(eqn));
  J2O_ASSIGN_OR_RETURN(jaxpr::Aval operand_aval, sw::InAval(e, 0));
  J2O_ASSIGN_OR_RETURN(jaxpr::Aval source_aval, sw::InAval(e, 1));
  const DType out_dt = eqn.outputs[0]->aval.dtype;
  if (out_dt != source_aval.dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "select_and_scatter: result ", jaxpr::ShortName(out_dt),
        " differs from the source's ", jaxpr::ShortName(source_aval.dtype)));
  }
  J2O_ASSIGN_OR_RETURN(sw::Geometry g,
                       sw::PlanGeometry(eqn, operand_aval, source_aval));
  for (int j = 0; j < g.k; ++j) {
    if (!g.in.shape[j].is_constant() || !g.out[j].is_constant()) {
      return absl::UnimplementedError(absl::StrCat(
          "select_and_scatter: the windowed dimension '",
          g.in.shape[j].ToString(),
          "' is symbolic (the lowering needs static windowed dims)"));
    }
  }
  J2O_ASSIGN_OR_RETURN(DType kc,
                       sw::KeyDType(operand_aval.dtype, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(DType vc,
                       sw::ValueDType(source_aval.dtype, eqn.primitive));
  const bool is_max_min = scatter == "max" || scatter == "min";
  if (is_max_min && source_aval.dtype == DType::kU64) {
    return absl::UnimplementedError(absl::StrCat(
        "select_and_scatter: scatter_jaxpr body '", scatter,
        "' on u64 values is not lowered"));
  }
  // Floats narrower than the carrier round after every step (one f32 add or
  // product of two f16/bf16 values rounds back exactly as XLA's f16 op);
  // integers wrap, so one cast at the end suffices.
  const bool round_each_step =
      jaxpr::IsFloat(source_aval.dtype) && vc != source_aval.dtype;

  // Windowed (padded) sizes and the windows' row-major positions.
  std::vector<int64_t> padded(g.k), out(g.k);
  int64_t padded_positions = 1, windows = 1;
  for (int j = 0; j < g.k; ++j) {
    padded[j] = g.in.shape[j].constant_value() + g.p.padding[j].first +
                g.p.padding[j].second;
    out[j] = g.out[j].constant_value();
    padded_positions *= padded[j];
    windows *= out[j];
  }
  constexpr int64_t kMaxTableEntries = int64_t{1} << 24;
  if (padded_positions > kMaxTableEntries / g.offsets) {
    return absl::UnimplementedError(absl::StrCat(
        "select_and_scatter over ", operand_aval.ToString(), " needs ",
        "more than ", kMaxTableEntries,
        " (window offset, padded position) table entries"));
  }

  J2O_ASSIGN_OR_RETURN(Val operand, e.In(0));
  J2O_ASSIGN_OR_RETURN(Val source, e.In(1));
  J2O_ASSIGN_OR_RETURN(Val init, e.In(2));
  J2O_ASSIGN_OR_RETURN(
      Val keys, sw::ToWindowLayout(
                    e, g, sw::CastTo(e, operand, operand_aval.dtype, kc), kc));
  // The select fold (as select_and_scatter_add's): each window's chosen
  // offset, -1 where the window holds no operand element.
  J2O_ASSIGN_OR_RETURN(auto fold, sw::SelectFold(e, g, select, keys, kc));
  auto [chosen, seen] = std::move(fold);
  if (seen) chosen = e.Op("Where", {*seen, chosen, e.ConstI64({-1})}, DType::kI64);
  Val src =
      sw::Transposed(e, g, sw::CastTo(e, source, source_aval.dtype, vc), vc);
  chosen = e.Op("Expand", {chosen, e.Op("Shape", {src}, DType::kI64)},
                DType::kI64);
  // [windows, rest] and [padded positions, rest] views.
  auto flat = [&](Val x, DType d) {
    return e.Op("Flatten", {x}, d, {OpAttr::Int("axis", g.k)});
  };
  Val chosen_flat = flat(chosen, DType::kI64);
  Val src_flat = flat(src, vc);
  Val keys_flat = flat(keys, kc);
  Val acc = e.Op("Expand",
                 {sw::CastTo(e, init, source_aval.dtype, vc),
                  e.Op("Shape", {keys_flat}, DType::kI64)},
                 vc);
  for (int64_t t = g.offsets - 1; t >= 0; --t) {
    // For each padded position: the window whose offset t lands on it
    // (p_j = o_j * stride_j + k_j), or none.
    const std::vector<int64_t> kt = sw::OffsetIndex(g, t);
    std::vector<int64_t> window_of(padded_positions, 0);
    jaxpr::Array hit(DType::kBool, {padded_positions, 1});
    bool any_hit = false;
    for (int64_t p = 0; p < padded_positions; ++p) {
      int64_t rem = p, o_flat = 0, scale = 1;
      bool ok = true;
      for (int j = g.k - 1; j >= 0; --j) {
        const int64_t pj = rem % padded[j];
        rem /= padded[j];
        const int64_t q = pj - kt[j] * g.p.window_dilation[j];
        const int64_t oj = q / g.p.strides[j];
        ok = ok && q >= 0 && q % g.p.strides[j] == 0 && oj < out[j];
        o_flat += (ok ? oj : 0) * scale;
        scale *= out[j];
      }
      window_of[p] = ok ? o_flat : 0;
      hit.data()[p] = ok;
      any_hit = any_hit || ok;
    }
    if (!any_hit) continue;
    Val idx = e.ConstI64(window_of);
    Val has = e.Op(
        "And",
        {e.Const(hit),
         e.Op("Equal",
              {e.Op("Gather", {chosen_flat, idx}, DType::kI64,
                    {OpAttr::Int("axis", 0)}),
               e.ConstI64({t})},
              DType::kBool)},
        DType::kBool);
    Val value =
        e.Op("Gather", {src_flat, idx}, vc, {OpAttr::Int("axis", 0)});
    Val combined;
    if (is_max_min) {
      combined = ExactMaxMin(e, value, acc, vc, scatter == "max");
    } else {
      combined = e.Op(scatter == "add" ? "Add" : "Mul", {value, acc}, vc);
    }
    if (round_each_step) {
      combined = sw::CastTo(
          e, sw::CastTo(e, combined, vc, source_aval.dtype), source_aval.dtype,
          vc);
    }
    acc = ss::SignExactWhere(e, has, combined, acc, vc);
  }
  // Back to the padded layout, then to operand coordinates: padding removed,
  // rows the negative padding cropped restored as init (no window wrote
  // them).
  acc = e.Op("Reshape", {acc, e.Op("Shape", {keys}, DType::kI64)}, vc);
  WindowParams unpad = g.p;
  for (auto& [lo, hi] : unpad.padding) {
    lo = -lo;
    hi = -hi;
  }
  J2O_ASSIGN_OR_RETURN(
      acc, window_internal::DilateAndPad(
               e, acc, vc, eqn, g.in, unpad,
               sw::CastTo(e, init, source_aval.dtype, vc)));
  acc = sw::Transposed(e, g, acc, vc, /*inverse=*/true);
  return e.SetOut(0, sw::CastTo(e, acc, vc, out_dt));
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_SELECT_AND_SCATTER_PLAN_H_
