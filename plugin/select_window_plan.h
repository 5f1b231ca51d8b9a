// Pipeline-independent lowerings of the window primitives that gradients of
// max/min pooling produce: select_and_scatter_add (the pooling VJP) and
// select_and_gather_add (the pooling JVP), written once against the emitter
// interface of plugin/emit.h.
//
// The dims a window actually spans (window, stride, padding or dilation
// other than trivial) must be static; every other dim (batch, channels) may
// be symbolic. They are transposed to the front, so the window offsets are
// a static list: offset t reads the strided Slice of the (zero-)padded
// operand at t, and a constant mask says which of those reads are real
// elements (padding is never selected). The selection is XLA's sequential
// fold over the window in row-major order: the running choice is replaced
// whenever select_prim(choice, candidate) is false, so `ge` keeps the first
// maximum and NaN behaves as in XLA's comparator.
//   select_and_scatter_add: the chosen offset of each window routes its
//     source value to that element; one ScatterND (reduction add) over
//     constant indices adds every window's value, overlaps accumulate.
//   select_and_gather_add: the fold starts from (-inf or the lowest value,
//     tangent 0) like JAX's pair reduction and carries the tangent.
// Keys compare in a dtype ORT's comparisons accept (narrow ints widened,
// f16/bf16 in f32); values move in f32/f64/i64 and are cast back (exact for
// selection; integer sums wrap like XLA). u64 keys, bool and complex are
// refused.
#ifndef JAX2ONNX_PLUGIN_SELECT_WINDOW_PLAN_H_
#define JAX2ONNX_PLUGIN_SELECT_WINDOW_PLAN_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/elementwise_plan.h"
#include "plugin/emit.h"
#include "plugin/lax_plan.h"
#include "plugin/window_plan.h"

namespace jax2onnx::plugin {
namespace select_window {

template <class E>
using V = typename E::Value;

// The static geometry of the windowed dims, in transposed order.
struct Geometry {
  int rank = 0;
  std::vector<int64_t> perm, inverse;  // windowed dims first
  std::vector<int64_t> size, window, stride, dilation, lo, hi, out;
  int64_t offsets = 1;  // product of window
  int k() const { return static_cast<int>(size.size()); }
};

inline absl::StatusOr<std::vector<int64_t>> IntsOr(const jaxpr::Eqn& eqn,
                                                   const char* key, int rank,
                                                   int64_t fill) {
  if (!eqn.params.Has(key)) return std::vector<int64_t>(rank, fill);
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> v, eqn.params.GetIntList(key));
  if (static_cast<int>(v.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        eqn.primitive, ": param '", key, "' needs ", rank, " entries"));
  }
  return v;
}

inline absl::StatusOr<Geometry> PlanGeometry(const jaxpr::Eqn& eqn,
                                             const jaxpr::Aval& operand) {
  Geometry g;
  g.rank = operand.rank();
  const int r = g.rank;
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> window,
                       IntsOr(eqn, "window_dimensions", r, 1));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                       IntsOr(eqn, "window_strides", r, 1));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> base,
                       IntsOr(eqn, "base_dilation", r, 1));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> wdil,
                       IntsOr(eqn, "window_dilation", r, 1));
  std::vector<std::pair<int64_t, int64_t>> pads(r);
  if (const jaxpr::ParamValue* p = eqn.params.Find("padding")) {
    if (p->items().size() != static_cast<size_t>(r)) {
      return absl::InvalidArgumentError(absl::StrCat(
          eqn.primitive, ": param 'padding' needs ", r, " (lo, hi) pairs"));
    }
    for (int d = 0; d < r; ++d) {
      J2O_ASSIGN_OR_RETURN(std::vector<int64_t> lohi,
                           p->items()[d].AsIntList("param 'padding' entry"));
      if (lohi.size() != 2) {
        return absl::InvalidArgumentError("padding entries are (lo, hi)");
      }
      pads[d] = {lohi[0], lohi[1]};
    }
  }
  std::vector<int64_t> rest;
  for (int d = 0; d < r; ++d) {
    if (base[d] != 1) {
      return absl::UnimplementedError(
          absl::StrCat(eqn.primitive, ": base_dilation ", base[d], " on dim ",
                       d, " is not lowered"));
    }
    if (window[d] < 1 || strides[d] < 1 || wdil[d] < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          eqn.primitive, ": window, stride and dilation must be >= 1"));
    }
    const bool trivial = window[d] == 1 && strides[d] == 1 &&
                         pads[d].first == 0 && pads[d].second == 0;
    if (trivial) {
      rest.push_back(d);
      continue;
    }
    if (!operand.shape[d].is_constant()) {
      return absl::UnimplementedError(absl::StrCat(
          eqn.primitive, ": windowed dim ", d, " of ", operand.ToString(),
          " is symbolic; only the dims a window spans must be static"));
    }
    const int64_t n = operand.shape[d].constant_value();
    const int64_t span = (window[d] - 1) * wdil[d] + 1;
    const int64_t padded = n + pads[d].first + pads[d].second;
    if (padded < span) {
      return absl::UnimplementedError(
          absl::StrCat(eqn.primitive, ": an empty window output on dim ", d,
                       " is not lowered"));
    }
    g.perm.push_back(d);
    g.size.push_back(n);
    g.window.push_back(window[d]);
    g.stride.push_back(strides[d]);
    g.dilation.push_back(wdil[d]);
    g.lo.push_back(pads[d].first);
    g.hi.push_back(pads[d].second);
    g.out.push_back((padded - span) / strides[d] + 1);
    g.offsets *= window[d];
  }
  // The lowerings build constants with one entry per (window offset,
  // output position): refuse shapes that would make them absurdly large
  // (a well-typed program declaring huge dims must not exhaust memory).
  constexpr int64_t kMaxWindowPositions = int64_t{1} << 24;
  int64_t positions = g.offsets;
  for (int64_t o : g.out) {
    if (o != 0 && positions > kMaxWindowPositions / o) {
      return absl::UnimplementedError(
          absl::StrCat(eqn.primitive, " over ", operand.ToString(),
                       " needs more than ", kMaxWindowPositions,
                       " (window offset, output position) pairs, the explicit "
                       "construction's limit"));
    }
    positions *= o;
  }
  g.perm.insert(g.perm.end(), rest.begin(), rest.end());
  g.inverse.assign(r, 0);
  for (int i = 0; i < r; ++i) g.inverse[g.perm[i]] = i;
  return g;
}

// Multi-index (row-major over the window) of offset t.
inline std::vector<int64_t> OffsetIndex(const Geometry& g, int64_t t) {
  std::vector<int64_t> kt(g.k());
  for (int j = g.k() - 1; j >= 0; --j) {
    kt[j] = t % g.window[j];
    t /= g.window[j];
  }
  return kt;
}

// Visits every output position of the windowed dims (row-major).
template <class F>
void ForEachOut(const Geometry& g, F&& f) {
  int64_t total = 1;
  for (int64_t o : g.out) total *= o;
  std::vector<int64_t> o(g.k(), 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rem = flat;
    for (int j = g.k() - 1; j >= 0; --j) {
      o[j] = rem % g.out[j];
      rem /= g.out[j];
    }
    f(flat, o);
  }
}

// Is operand offset t of each window a real element (not padding)? A bool
// constant of shape [out..., 1 per other dim].
inline jaxpr::Array ValidMask(const Geometry& g, int64_t t) {
  std::vector<int64_t> shape = g.out;
  shape.resize(g.rank, 1);
  jaxpr::Array mask(jaxpr::DType::kBool, shape);
  const std::vector<int64_t> kt = OffsetIndex(g, t);
  ForEachOut(g, [&](int64_t flat, const std::vector<int64_t>& o) {
    bool valid = true;
    for (int j = 0; j < g.k(); ++j) {
      const int64_t p = o[j] * g.stride[j] + kt[j] * g.dilation[j] - g.lo[j];
      valid = valid && p >= 0 && p < g.size[j];
    }
    mask.SetFromInt64(flat, valid ? 1 : 0);
  });
  return mask;
}

inline bool HasPadding(const Geometry& g) {
  for (int j = 0; j < g.k(); ++j) {
    if (g.lo[j] != 0 || g.hi[j] != 0) return true;
  }
  return false;
}

// Transposes windowed dims first.
template <class E>
V<E> Transposed(E& e, const Geometry& g, V<E> x, jaxpr::DType d) {
  bool identity = true;
  for (int i = 0; i < g.rank; ++i) identity = identity && g.perm[i] == i;
  if (identity) return x;
  return e.Op("Transpose", {x}, d, {OpAttr::Ints("perm", g.perm)});
}

// Pads windowed dims j by (lo[j], hi[j]) with zeros, a negative amount
// cropping instead (XLA's negative padding).
template <class E>
V<E> PadOrCrop(E& e, const Geometry& g, V<E> x, jaxpr::DType d,
               const std::vector<int64_t>& lo, const std::vector<int64_t>& hi) {
  std::vector<int64_t> axes;
  std::vector<std::pair<int64_t, int64_t>> padding;
  std::vector<int64_t> pads(2 * g.rank, 0);
  bool pad = false;
  for (int j = 0; j < g.k(); ++j) {
    axes.push_back(j);
    padding.push_back({lo[j], hi[j]});
    pads[j] = std::max<int64_t>(0, lo[j]);
    pads[g.rank + j] = std::max<int64_t>(0, hi[j]);
    pad = pad || lo[j] > 0 || hi[j] > 0;
  }
  x = window_internal::CropNegative(e, x, d, axes, padding);
  if (!pad) return x;
  return e.Op(
      "Pad",
      {x, e.ConstI64(pads), e.Const(jaxpr::Array::ScalarFromDouble(d, 0))}, d,
      {OpAttr::String("mode", "constant")});
}

// Transposes windowed dims first, pads them with zeros (crops where the
// padding is negative).
template <class E>
V<E> ToWindowLayout(E& e, const Geometry& g, V<E> x, jaxpr::DType d) {
  x = Transposed(e, g, x, d);
  if (!HasPadding(g)) return x;
  return PadOrCrop(e, g, x, d, g.lo, g.hi);
}

// The elements offset t of every window reads, [out..., other dims...].
template <class E>
V<E> AtOffset(E& e, const Geometry& g, V<E> padded, jaxpr::DType d, int64_t t) {
  const std::vector<int64_t> kt = OffsetIndex(g, t);
  std::vector<int64_t> starts, ends, axes, steps;
  for (int j = 0; j < g.k(); ++j) {
    starts.push_back(kt[j] * g.dilation[j]);
    ends.push_back(starts.back() + (g.out[j] - 1) * g.stride[j] + 1);
    axes.push_back(j);
    steps.push_back(g.stride[j]);
  }
  return e.Op("Slice",
              {padded, e.ConstI64(starts), e.ConstI64(ends), e.ConstI64(axes),
               e.ConstI64(steps)},
              d);
}

inline absl::StatusOr<std::string> SelectOp(const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(std::string prim, eqn.params.GetName("select_prim"));
  if (prim == "ge") return std::string("GreaterOrEqual");
  if (prim == "le") return std::string("LessOrEqual");
  if (prim == "gt") return std::string("Greater");
  if (prim == "lt") return std::string("Less");
  return absl::InvalidArgumentError(
      absl::StrCat(eqn.primitive, ": unsupported select_prim '", prim, "'"));
}

// Compare dtype of the keys, value carrier of the moved values.
inline absl::StatusOr<jaxpr::DType> KeyDType(jaxpr::DType d,
                                             absl::string_view prim) {
  if (d == jaxpr::DType::kU64 || d == jaxpr::DType::kBool ||
      jaxpr::IsComplex(d)) {
    return absl::UnimplementedError(absl::StrCat(
        prim, " with ", jaxpr::ShortName(d), " operand is not lowered"));
  }
  return ComputeDType(d, ArithUse::kOrdering, prim);
}
inline absl::StatusOr<jaxpr::DType> ValueDType(jaxpr::DType d,
                                               absl::string_view prim) {
  if (jaxpr::IsFloat(d)) return elementwise::FloatCompute(d);
  if (jaxpr::IsInteger(d)) return jaxpr::DType::kI64;
  return absl::UnimplementedError(absl::StrCat(
      prim, " with ", jaxpr::ShortName(d), " values is not lowered"));
}

template <class E>
V<E> CastTo(E& e, V<E> x, jaxpr::DType from, jaxpr::DType to) {
  if (from == to) return x;
  return e.Op("Cast", {x}, to, {OpAttr::Int("to", elementwise::OnnxType(to))});
}

template <class E>
absl::StatusOr<jaxpr::Aval> InAval(E& e, int i) {
  const jaxpr::Atom& a = e.eqn().inputs[i];
  if (a.is_literal()) {
    return absl::InvalidArgumentError(absl::StrCat(
        e.eqn().primitive, ": operand ", i, " must be a variable"));
  }
  return a.var->aval;
}

}  // namespace select_window

template <class E>
absl::Status LowerSelectAndScatterAdd(E& e) {
  namespace sw = select_window;
  using jaxpr::DType;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 2 || eqn.outputs.size() != 1) {
    return absl::InvalidArgumentError(
        "select_and_scatter_add takes (source, operand), one result");
  }
  J2O_ASSIGN_OR_RETURN(jaxpr::Aval source_aval, sw::InAval(e, 0));
  J2O_ASSIGN_OR_RETURN(jaxpr::Aval operand_aval, sw::InAval(e, 1));
  const DType out_dt = eqn.outputs[0]->aval.dtype;
  J2O_ASSIGN_OR_RETURN(sw::Geometry g, sw::PlanGeometry(eqn, operand_aval));
  J2O_ASSIGN_OR_RETURN(std::string select, sw::SelectOp(eqn));
  J2O_ASSIGN_OR_RETURN(DType kc,
                       sw::KeyDType(operand_aval.dtype, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(DType vc,
                       sw::ValueDType(source_aval.dtype, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(Val operand, e.In(1));
  J2O_ASSIGN_OR_RETURN(Val source, e.In(0));
  Val keys = sw::ToWindowLayout(
      e, g, sw::CastTo(e, operand, operand_aval.dtype, kc), kc);
  // The fold: chosen offset, its key, and whether any real element was seen.
  Val chosen_key = sw::AtOffset(e, g, keys, kc, 0);
  Val chosen = e.ConstI64({0});
  Val seen = e.Const(sw::ValidMask(g, 0));
  for (int64_t t = 1; t < g.offsets; ++t) {
    Val candidate = sw::AtOffset(e, g, keys, kc, t);
    Val valid = e.Const(sw::ValidMask(g, t));
    Val keep = e.Op(select, {chosen_key, candidate}, DType::kBool);
    Val take = e.Op("And",
                    {valid, e.Op("Or",
                                 {e.Op("Not", {seen}, DType::kBool),
                                  e.Op("Not", {keep}, DType::kBool)},
                                 DType::kBool)},
                    DType::kBool);
    chosen_key = e.Op("Where", {take, candidate, chosen_key}, kc);
    chosen = e.Op("Where", {take, e.ConstI64({t}), chosen}, DType::kI64);
    seen = e.Op("Or", {seen, valid}, DType::kBool);
  }
  // Route each window's source value to its chosen offset.
  Val src =
      sw::Transposed(e, g, sw::CastTo(e, source, source_aval.dtype, vc), vc);
  Val zero = e.Const(jaxpr::Array::ScalarFromDouble(vc, 0));
  std::vector<Val> updates;
  std::vector<int64_t> idx_shape = {g.offsets};
  idx_shape.insert(idx_shape.end(), g.out.begin(), g.out.end());
  idx_shape.push_back(g.k());
  jaxpr::Array indices(DType::kI64, idx_shape);
  int64_t per_offset = 1;
  for (int64_t o : g.out) per_offset *= o;
  for (int64_t t = 0; t < g.offsets; ++t) {
    Val mine = e.Op(
        "And", {e.Op("Equal", {chosen, e.ConstI64({t})}, DType::kBool), seen},
        DType::kBool);
    updates.push_back(
        e.Op("Unsqueeze",
             {e.Op("Where", {mine, src, zero}, vc), e.ConstI64({0})}, vc));
    const std::vector<int64_t> kt = sw::OffsetIndex(g, t);
    sw::ForEachOut(g, [&](int64_t flat, const std::vector<int64_t>& o) {
      for (int j = 0; j < g.k(); ++j) {
        indices.SetFromInt64((t * per_offset + flat) * g.k() + j,
                             o[j] * g.stride[j] + kt[j] * g.dilation[j]);
      }
    });
  }
  Val stacked = updates.size() == 1
                    ? updates[0]
                    : e.Op("Concat", updates, vc, {OpAttr::Int("axis", 0)});
  std::vector<int64_t> padded_size;
  for (int j = 0; j < g.k(); ++j) {
    padded_size.push_back(g.size[j] + g.lo[j] + g.hi[j]);
  }
  Val operand_t = sw::Transposed(e, g, operand, operand_aval.dtype);
  Val rest_shape =
      e.Op("Shape", {operand_t}, DType::kI64, {OpAttr::Int("start", g.k())});
  Val data = e.Op("Expand",
                  {zero, e.Op("Concat", {e.ConstI64(padded_size), rest_shape},
                              DType::kI64, {OpAttr::Int("axis", 0)})},
                  vc);
  Val summed = e.Op("ScatterND", {data, e.Const(indices), stacked}, vc,
                    {OpAttr::String("reduction", "add")});
  if (sw::HasPadding(g)) {
    // Back to operand coordinates: the inverse padding (padding removed,
    // cropped rows restored as zeros: no window read them).
    std::vector<int64_t> lo, hi;
    for (int j = 0; j < g.k(); ++j) {
      lo.push_back(-g.lo[j]);
      hi.push_back(-g.hi[j]);
    }
    summed = sw::PadOrCrop(e, g, summed, vc, lo, hi);
  }
  summed = e.Op("Transpose", {summed}, vc, {OpAttr::Ints("perm", g.inverse)});
  return e.SetOut(0, sw::CastTo(e, summed, vc, out_dt));
}

template <class E>
absl::Status LowerSelectAndGatherAdd(E& e) {
  namespace sw = select_window;
  using jaxpr::DType;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 2 || eqn.outputs.size() != 1) {
    return absl::InvalidArgumentError(
        "select_and_gather_add takes (tangents, operand), one result");
  }
  J2O_ASSIGN_OR_RETURN(jaxpr::Aval tangent_aval, sw::InAval(e, 0));
  J2O_ASSIGN_OR_RETURN(jaxpr::Aval operand_aval, sw::InAval(e, 1));
  const DType out_dt = eqn.outputs[0]->aval.dtype;
  J2O_ASSIGN_OR_RETURN(sw::Geometry g, sw::PlanGeometry(eqn, operand_aval));
  J2O_ASSIGN_OR_RETURN(std::string select, sw::SelectOp(eqn));
  J2O_ASSIGN_OR_RETURN(std::string prim, eqn.params.GetName("select_prim"));
  J2O_ASSIGN_OR_RETURN(DType kc,
                       sw::KeyDType(operand_aval.dtype, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(DType vc,
                       sw::ValueDType(tangent_aval.dtype, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(Val operand, e.In(1));
  J2O_ASSIGN_OR_RETURN(Val tangents, e.In(0));
  Val keys = sw::ToWindowLayout(
      e, g, sw::CastTo(e, operand, operand_aval.dtype, kc), kc);
  Val tans = sw::ToWindowLayout(
      e, g, sw::CastTo(e, tangents, tangent_aval.dtype, vc), vc);
  // JAX's pair reduction starts from (-inf or the lowest value, 0) for a
  // max (ge/gt), (+inf or the highest value, 0) for a min.
  const bool picks_max = prim == "ge" || prim == "gt";
  Val acc_key = sw::CastTo(
      e,
      e.Const(WindowIdentity(picks_max ? WindowOp::kMax : WindowOp::kMin,
                             operand_aval.dtype)),
      operand_aval.dtype, kc);
  Val acc_tan = e.Const(jaxpr::Array::ScalarFromDouble(vc, 0));
  for (int64_t t = 0; t < g.offsets; ++t) {
    Val candidate = sw::AtOffset(e, g, keys, kc, t);
    Val keep = e.Op(select, {acc_key, candidate}, DType::kBool);
    Val take =
        e.Op("And",
             {e.Const(sw::ValidMask(g, t)), e.Op("Not", {keep}, DType::kBool)},
             DType::kBool);
    acc_key = e.Op("Where", {take, candidate, acc_key}, kc);
    acc_tan =
        e.Op("Where", {take, sw::AtOffset(e, g, tans, vc, t), acc_tan}, vc);
  }
  acc_tan = e.Op("Transpose", {acc_tan}, vc, {OpAttr::Ints("perm", g.inverse)});
  return e.SetOut(0, sw::CastTo(e, acc_tan, vc, out_dt));
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_SELECT_WINDOW_PLAN_H_
