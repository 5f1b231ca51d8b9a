// Pipeline-independent lowerings of the window primitives that gradients of
// max/min pooling produce: select_and_scatter_add (the pooling VJP) and
// select_and_gather_add (the pooling JVP), written once against the emitter
// interface of plugin/emit.h.
//
// The dims a window actually spans (window, stride, padding or dilation
// other than trivial) are transposed to the front, static or symbolic, so
// the window offsets are a static list: offset t reads the strided Slice of
// the base-dilated, (zero-)padded operand at t (window_plan's DilateAndPad;
// a symbolic dim's Slice end counts from its end, WindowSliceEnd), and a
// mask says which of those reads are operand elements: padding and
// base-dilation holes are skipped, as XLA's emitters do (window_plan's
// ReadMasks: constants on static dims, Range at run time on symbolic padded
// ones; base_dilation needs a static dim). The selection is XLA's sequential
// fold over the window in row-major order: the running choice is replaced
// whenever select_prim(choice, candidate) is false, so `ge` keeps the first
// maximum and NaN behaves as in XLA's comparator.
//   select_and_scatter_add: the chosen offset of each window routes its
//     source value to that element; one ScatterND (reduction add) adds every
//     window's value, overlaps accumulate. Its indices are constants for a
//     static window output, built from Range for a symbolic one. JAX gives
//     it no dilation params.
//   select_and_gather_add: the fold starts from (-inf or the lowest value,
//     tangent 0) like JAX's pair reduction and carries the tangent; a window
//     of only pads and holes keeps tangent 0.
// Keys compare in a dtype ORT's comparisons accept (narrow ints widened,
// f16/bf16 in f32); values move in f32/f64/i64 and are cast back (exact for
// selection; integer sums wrap like XLA). u64 keys, bool and complex are
// refused.
#ifndef JAX2ONNX_PLUGIN_SELECT_WINDOW_PLAN_H_
#define JAX2ONNX_PLUGIN_SELECT_WINDOW_PLAN_H_

#include <algorithm>
#include <cstdint>
#include <optional>
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

// The geometry of the windowed dims (window, stride, padding or dilation
// other than trivial), which the transposed layout puts first.
struct Geometry {
  int rank = 0;
  int k = 0;                           // windowed dims
  std::vector<int64_t> perm, inverse;  // windowed dims first
  WindowParams p;                      // in the transposed layout
  jaxpr::Aval in;                      // the operand, transposed
  std::vector<jaxpr::DimExpr> out;     // window output shape, transposed
  int64_t offsets = 1;                 // product of the windows
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

// `windowed` is the window output's aval (the source of select_and_scatter_add,
// the result of select_and_gather_add).
inline absl::StatusOr<Geometry> PlanGeometry(const jaxpr::Eqn& eqn,
                                             const jaxpr::Aval& operand,
                                             const jaxpr::Aval& windowed) {
  Geometry g;
  g.rank = operand.rank();
  const int r = g.rank;
  if (windowed.rank() != r) {
    return absl::InvalidArgumentError(absl::StrCat(
        eqn.primitive, ": the window output ", windowed.ToString(),
        " and the operand ", operand.ToString(), " differ in rank"));
  }
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
  // Positions the static lowerings enumerate (symbolic output dims count
  // once): see the limit below.
  int64_t positions = 1;
  bool huge = false;
  constexpr int64_t kMaxWindowPositions = int64_t{1} << 24;
  auto count = [&](int64_t n) {
    if (n != 0 && positions > kMaxWindowPositions / n) huge = true;
    positions *= huge ? 1 : n;
  };
  for (int d = 0; d < r; ++d) {
    if (window[d] < 1 || strides[d] < 1 || wdil[d] < 1 || base[d] < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          eqn.primitive, ": window, stride and dilations must be >= 1"));
    }
    const bool trivial = window[d] == 1 && strides[d] == 1 && base[d] == 1 &&
                         pads[d].first == 0 && pads[d].second == 0;
    if (trivial) {
      rest.push_back(d);
      continue;
    }
    if (operand.shape[d].is_constant()) {
      const int64_t n = operand.shape[d].constant_value();
      const int64_t dilated = n == 0 ? 0 : (n - 1) * base[d] + 1;
      const int64_t span = (window[d] - 1) * wdil[d] + 1;
      if (dilated + pads[d].first + pads[d].second < span) {
        return absl::UnimplementedError(
            absl::StrCat(eqn.primitive, ": an empty window output on dim ", d,
                         " is not lowered"));
      }
    }
    g.perm.push_back(d);
    g.p.window.push_back(window[d]);
    g.p.strides.push_back(strides[d]);
    g.p.base_dilation.push_back(base[d]);
    g.p.window_dilation.push_back(wdil[d]);
    g.p.padding.push_back(pads[d]);
    g.out.push_back(windowed.shape[d]);
    count(window[d]);
    const jaxpr::DimExpr& o = windowed.shape[d];
    if (o.is_constant()) count(o.constant_value());
  }
  // The lowerings unroll the window offsets and the static ones build
  // constants with an entry per (window offset, output position): refuse
  // shapes that would make them absurdly large (a well-typed program
  // declaring huge dims must not exhaust memory).
  if (huge) {
    return absl::UnimplementedError(
        absl::StrCat(eqn.primitive, " over ", operand.ToString(),
                     " needs more than ", kMaxWindowPositions,
                     " (window offset, output position) pairs, the explicit "
                     "construction's limit"));
  }
  g.k = static_cast<int>(g.perm.size());
  for (int64_t w : g.p.window) g.offsets *= w;  // bounded by the limit
  g.perm.insert(g.perm.end(), rest.begin(), rest.end());
  g.inverse = window_internal::InversePerm(g.perm);
  g.in = operand;
  for (int i = 0; i < r; ++i) g.in.shape[i] = operand.shape[g.perm[i]];
  for (int i = g.k; i < r; ++i) {
    g.p.window.push_back(1);
    g.p.strides.push_back(1);
    g.p.base_dilation.push_back(1);
    g.p.window_dilation.push_back(1);
    g.p.padding.push_back({0, 0});
    g.out.push_back(g.in.shape[i]);
  }
  return g;
}

// Multi-index (row-major over the window) of offset t, one entry per dim of
// the transposed layout.
inline std::vector<int64_t> OffsetIndex(const Geometry& g, int64_t t) {
  std::vector<int64_t> kt(g.rank, 0);
  for (int j = g.k - 1; j >= 0; --j) {
    kt[j] = t % g.p.window[j];
    t /= g.p.window[j];
  }
  return kt;
}

// Transposes windowed dims first (`inverse`: back).
template <class E>
V<E> Transposed(E& e, const Geometry& g, V<E> x, jaxpr::DType d,
                bool inverse = false) {
  return window_internal::Transpose(e, x, d, inverse ? g.inverse : g.perm);
}

// Transposes windowed dims first, base-dilates and pads them with zeros
// (crops where the padding is negative); the fold masks what no window
// reads as an element.
template <class E>
absl::StatusOr<V<E>> ToWindowLayout(E& e, const Geometry& g, V<E> x,
                                    jaxpr::DType d) {
  return window_internal::DilateAndPad(
      e, Transposed(e, g, x, d), d, e.eqn(), g.in, g.p,
      e.Const(jaxpr::Array::ScalarFromDouble(d, 0)));
}

// The elements offset t of every window reads, [out..., other dims...]. A
// symbolic output dim's Slice end counts from the end of the padded dim
// (WindowSliceEnd).
template <class E>
V<E> AtOffset(E& e, const Geometry& g, V<E> padded, jaxpr::DType d, int64_t t) {
  if (g.k == 0) return padded;
  const std::vector<int64_t> kt = OffsetIndex(g, t);
  std::vector<int64_t> starts, ends, axes, steps;
  for (int j = 0; j < g.k; ++j) {
    starts.push_back(kt[j] * g.p.window_dilation[j]);
    ends.push_back(window_internal::WindowSliceEnd(g.p, j, kt[j], g.out[j]));
    axes.push_back(j);
    steps.push_back(g.p.strides[j]);
  }
  return e.Op("Slice",
              {padded, e.ConstI64(starts), e.ConstI64(ends), e.ConstI64(axes),
               e.ConstI64(steps)},
              d);
}

// Offset t of XLA's sequential select over every window: the candidate (the
// keys at offset t) replaces the running choice `chosen_key` where it is an
// operand element (not padding or a hole) and select(choice, candidate)
// fails, or where the window has shown no element yet. `seen` tracks that
// for a fold that starts from offset 0 (nullopt inside: every window has an
// element); nullptr for a fold that starts from an init key. Returns where
// the candidate was taken. `masks` builds the read masks.
template <class E>
absl::StatusOr<V<E>> SelectStep(E& e, const Geometry& g,
                                window_internal::ReadMasks<E>* masks,
                                const std::string& select, V<E> keys,
                                jaxpr::DType kc, int64_t t, V<E>* chosen_key,
                                std::optional<V<E>>* seen) {
  using jaxpr::DType;
  V<E> candidate = AtOffset(e, g, keys, kc, t);
  J2O_ASSIGN_OR_RETURN(std::optional<V<E>> valid,
                       masks->At(e, OffsetIndex(g, t)));
  V<E> take =
      e.Op("Not", {e.Op(select, {*chosen_key, candidate}, DType::kBool)},
           DType::kBool);
  const bool unseen = seen != nullptr && seen->has_value();
  if (unseen) {
    take =
        e.Op("Or", {e.Op("Not", {**seen}, DType::kBool), take}, DType::kBool);
  }
  if (valid) take = e.Op("And", {*valid, take}, DType::kBool);
  *chosen_key = e.Op("Where", {take, candidate, *chosen_key}, kc);
  if (unseen) {
    *seen =
        valid ? std::optional<V<E>>(e.Op("Or", {**seen, *valid}, DType::kBool))
              : std::nullopt;
  }
  return take;
}

// XLA's sequential select over every window, folded from offset 0: each
// window's chosen offset (i64) and where a real element was seen (nullopt:
// in every window). Shared by select_and_scatter_add and the generic
// select_and_scatter.
template <class E>
absl::StatusOr<std::pair<V<E>, std::optional<V<E>>>> SelectFold(
    E& e, const Geometry& g, const std::string& select, V<E> keys,
    jaxpr::DType kc) {
  V<E> chosen_key = AtOffset(e, g, keys, kc, 0);
  V<E> chosen = e.ConstI64({0});
  window_internal::ReadMasks<E> masks(g.p, g.in.shape, g.out);
  J2O_ASSIGN_OR_RETURN(std::optional<V<E>> seen,
                       masks.At(e, OffsetIndex(g, 0)));
  for (int64_t t = 1; t < g.offsets; ++t) {
    J2O_ASSIGN_OR_RETURN(V<E> take, SelectStep(e, g, &masks, select, keys, kc,
                                               t, &chosen_key, &seen));
    chosen = e.Op("Where", {take, e.ConstI64({t}), chosen}, jaxpr::DType::kI64);
  }
  return std::make_pair(chosen, seen);
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

namespace select_window {

// The ScatterND indices of select_and_scatter_add: for window offset t and
// output position o, the padded position o*stride + k_t*window_dilation of
// each windowed dim, [offsets, out..., k]. A constant where the output is
// static; from Range at run time where it is symbolic.
template <class E>
absl::StatusOr<V<E>> ScatterIndices(E& e, const Geometry& g) {
  using jaxpr::DType;
  bool static_out = true;
  for (int j = 0; j < g.k; ++j) static_out &= g.out[j].is_constant();
  if (static_out) {
    std::vector<int64_t> out, idx_shape = {g.offsets};
    for (int j = 0; j < g.k; ++j) out.push_back(g.out[j].constant_value());
    idx_shape.insert(idx_shape.end(), out.begin(), out.end());
    idx_shape.push_back(g.k);
    jaxpr::Array indices(DType::kI64, idx_shape);
    int64_t per_offset = 1;
    for (int64_t o : out) per_offset *= o;
    std::vector<int64_t> o(g.k, 0);
    for (int64_t t = 0; t < g.offsets; ++t) {
      const std::vector<int64_t> kt = OffsetIndex(g, t);
      for (int64_t flat = 0; flat < per_offset; ++flat) {
        int64_t rem = flat;
        for (int j = g.k - 1; j >= 0; --j) {
          o[j] = rem % out[j];
          rem /= out[j];
        }
        for (int j = 0; j < g.k; ++j) {
          indices.SetFromInt64(
              (t * per_offset + flat) * g.k + j,
              o[j] * g.p.strides[j] + kt[j] * g.p.window_dilation[j]);
        }
      }
    }
    return e.Const(indices);
  }
  // Component j: Range(out_j) * stride_j as [1, .., out_j, .., 1] plus the
  // offsets' k_t*window_dilation_j as [offsets, 1, .., 1], expanded to the
  // full [offsets, out..., 1] and concatenated on the last axis.
  std::vector<jaxpr::DimExpr> full = {jaxpr::DimExpr::Constant(g.offsets)};
  full.insert(full.end(), g.out.begin(), g.out.begin() + g.k);
  full.push_back(jaxpr::DimExpr::Constant(1));
  J2O_ASSIGN_OR_RETURN(V<E> full_shape, e.ShapeValue(full));
  auto scalar = [&](int64_t v) {
    return e.Const(jaxpr::Array::ScalarFromInt64(DType::kI64, v));
  };
  std::vector<V<E>> components;
  for (int j = 0; j < g.k; ++j) {
    J2O_ASSIGN_OR_RETURN(V<E> len, e.DimValue(g.out[j]));
    len = e.Op("Squeeze", {len, e.ConstI64({0})}, DType::kI64);
    V<E> pos = e.Op("Range", {scalar(0), len, scalar(1)}, DType::kI64);
    if (g.p.strides[j] != 1) {
      pos = e.Op("Mul", {pos, scalar(g.p.strides[j])}, DType::kI64);
    }
    std::vector<int64_t> pos_shape(g.k + 2, 1);
    pos_shape[1 + j] = -1;
    pos = e.Op("Reshape", {pos, e.ConstI64(pos_shape)}, DType::kI64);
    std::vector<int64_t> off_shape(g.k + 2, 1);
    off_shape[0] = g.offsets;
    jaxpr::Array off(DType::kI64, off_shape);
    for (int64_t t = 0; t < g.offsets; ++t) {
      off.SetFromInt64(t, OffsetIndex(g, t)[j] * g.p.window_dilation[j]);
    }
    components.push_back(e.Op(
        "Expand", {e.Op("Add", {pos, e.Const(off)}, DType::kI64), full_shape},
        DType::kI64));
  }
  if (components.size() == 1) return components[0];
  return e.Op("Concat", components, DType::kI64,
              {OpAttr::Int("axis", g.k + 1)});
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
  J2O_ASSIGN_OR_RETURN(sw::Geometry g,
                       sw::PlanGeometry(eqn, operand_aval, source_aval));
  for (int64_t b : g.p.base_dilation) {
    if (b != 1) {
      // JAX's select_and_scatter_add has no dilation params.
      return absl::UnimplementedError(
          "select_and_scatter_add: base_dilation is not lowered");
    }
  }
  J2O_ASSIGN_OR_RETURN(std::string select, sw::SelectOp(eqn));
  J2O_ASSIGN_OR_RETURN(DType kc,
                       sw::KeyDType(operand_aval.dtype, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(DType vc,
                       sw::ValueDType(source_aval.dtype, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(Val operand, e.In(1));
  J2O_ASSIGN_OR_RETURN(Val source, e.In(0));
  J2O_ASSIGN_OR_RETURN(
      Val keys, sw::ToWindowLayout(
                    e, g, sw::CastTo(e, operand, operand_aval.dtype, kc), kc));
  // The fold from offset 0: chosen offset and where a real element was seen.
  J2O_ASSIGN_OR_RETURN(auto fold, sw::SelectFold(e, g, select, keys, kc));
  auto [chosen, seen] = std::move(fold);
  // Route each window's source value to its chosen offset: one ScatterND
  // (add) into zeros shaped like the padded keys; overlaps accumulate.
  Val src =
      sw::Transposed(e, g, sw::CastTo(e, source, source_aval.dtype, vc), vc);
  Val zero = e.Const(jaxpr::Array::ScalarFromDouble(vc, 0));
  std::vector<Val> updates;
  for (int64_t t = 0; t < g.offsets; ++t) {
    Val mine = e.Op("Equal", {chosen, e.ConstI64({t})}, DType::kBool);
    if (seen) mine = e.Op("And", {mine, *seen}, DType::kBool);
    updates.push_back(
        e.Op("Unsqueeze",
             {e.Op("Where", {mine, src, zero}, vc), e.ConstI64({0})}, vc));
  }
  Val stacked = updates.size() == 1
                    ? updates[0]
                    : e.Op("Concat", updates, vc, {OpAttr::Int("axis", 0)});
  J2O_ASSIGN_OR_RETURN(Val indices, sw::ScatterIndices(e, g));
  Val data = e.Op("Expand", {zero, e.Op("Shape", {keys}, DType::kI64)}, vc);
  Val summed = e.Op("ScatterND", {data, indices, stacked}, vc,
                    {OpAttr::String("reduction", "add")});
  // Back to operand coordinates: the inverse padding (padding removed,
  // cropped rows restored as zeros: no window read them).
  WindowParams unpad = g.p;
  for (auto& [lo, hi] : unpad.padding) {
    lo = -lo;
    hi = -hi;
  }
  J2O_ASSIGN_OR_RETURN(summed, window_internal::DilateAndPad(
                                   e, summed, vc, eqn, g.in, unpad, zero));
  summed = sw::Transposed(e, g, summed, vc, /*inverse=*/true);
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
  const jaxpr::Aval& out_aval = eqn.outputs[0]->aval;
  J2O_ASSIGN_OR_RETURN(sw::Geometry g,
                       sw::PlanGeometry(eqn, operand_aval, out_aval));
  J2O_ASSIGN_OR_RETURN(std::string select, sw::SelectOp(eqn));
  J2O_ASSIGN_OR_RETURN(std::string prim, eqn.params.GetName("select_prim"));
  J2O_ASSIGN_OR_RETURN(DType kc,
                       sw::KeyDType(operand_aval.dtype, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(DType vc,
                       sw::ValueDType(tangent_aval.dtype, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(Val operand, e.In(1));
  J2O_ASSIGN_OR_RETURN(Val tangents, e.In(0));
  J2O_ASSIGN_OR_RETURN(
      Val keys, sw::ToWindowLayout(
                    e, g, sw::CastTo(e, operand, operand_aval.dtype, kc), kc));
  J2O_ASSIGN_OR_RETURN(
      Val tans, sw::ToWindowLayout(
                    e, g, sw::CastTo(e, tangents, tangent_aval.dtype, vc), vc));
  // JAX's pair reduction starts from (-inf or the lowest value, 0) for a
  // max (ge/gt), (+inf or the highest value, 0) for a min.
  const bool picks_max = prim == "ge" || prim == "gt";
  Val acc_key = sw::CastTo(
      e,
      e.Const(WindowIdentity(picks_max ? WindowOp::kMax : WindowOp::kMin,
                             operand_aval.dtype)),
      operand_aval.dtype, kc);
  Val acc_tan = e.Const(jaxpr::Array::ScalarFromDouble(vc, 0));
  window_internal::ReadMasks<E> masks(g.p, g.in.shape, g.out);
  for (int64_t t = 0; t < g.offsets; ++t) {
    J2O_ASSIGN_OR_RETURN(
        Val take, sw::SelectStep(e, g, &masks, select, keys, kc, t, &acc_key,
                                 /*seen=*/nullptr));
    acc_tan =
        e.Op("Where", {take, sw::AtOffset(e, g, tans, vc, t), acc_tan}, vc);
  }
  acc_tan = sw::Transposed(e, g, acc_tan, vc, /*inverse=*/true);
  return e.SetOut(0, sw::CastTo(e, acc_tan, vc, out_aval.dtype));
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_SELECT_WINDOW_PLAN_H_
