// Pipeline-independent lowerings of the window primitives that gradients of
// max/min pooling produce: select_and_scatter_add (the pooling VJP) and
// select_and_gather_add (the pooling JVP), written once against the emitter
// interface of plugin/emit.h.
//
// The dims a window spans (window, stride, padding or dilation other than
// trivial) are transposed to the front, so the window offsets are a static
// list: offset t reads the strided Slice of the (zero-)padded, base-dilated
// operand at t, and a mask says which of those reads are real elements
// (padding and base-dilation holes are never selected). Windowed dims may
// be symbolic (shape-polymorphic images): their Slices end relative to the
// dim's end and their masks and scatter positions are computed at run time
// from Range; base-dilated dims must be static. The selection is XLA's
// sequential fold over the window in row-major order: the running choice is
// replaced whenever select_prim(choice, candidate) is false, so `ge` keeps
// the first maximum and NaN behaves as in XLA's comparator.
//   select_and_scatter_add: the chosen offset of each window routes its
//     source value to that element; one ScatterND (reduction add) over
//     the positions of every (offset, window) adds them, overlaps
//     accumulate. (JAX gives it no dilation params.)
//   select_and_gather_add: the fold starts from (-inf or the lowest value,
//     tangent 0) like JAX's pair reduction and carries the tangent; holes of
//     base_dilation are skipped like padding (XLA's ReduceWindow emitters).
// Keys compare in a dtype ORT's comparisons accept (narrow ints widened,
// f16/bf16 in f32); values move in f32/f64/i64 and are cast back (exact for
// selection; integer sums wrap like XLA). u64 keys, bool and complex are
// refused.
#ifndef JAX2ONNX_PLUGIN_SELECT_WINDOW_PLAN_H_
#define JAX2ONNX_PLUGIN_SELECT_WINDOW_PLAN_H_

#include <algorithm>
#include <cstdint>
#include <limits>
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

// The geometry of the windowed dims, in transposed order. size and out
// are -1 where the dim is symbolic (size_dim and out_dim hold it).
struct Geometry {
  int rank = 0;
  std::vector<int64_t> perm, inverse;  // windowed dims first
  std::vector<int64_t> size, window, stride, dilation, base, lo, hi, out;
  std::vector<jaxpr::DimExpr> size_dim, out_dim;
  int64_t offsets = 1;  // product of window
  int k() const { return static_cast<int>(size.size()); }
  bool symbolic(int j) const { return size[j] < 0; }
  bool any_symbolic() const {
    for (int j = 0; j < k(); ++j) {
      if (symbolic(j)) return true;
    }
    return false;
  }
  // Whether some position of windowed dim j reads a pad or a hole.
  bool masked(int j) const { return lo[j] > 0 || hi[j] > 0 || base[j] != 1; }
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

// `windowed` is the aval shaped like the window output (select_and_scatter_
// add's source, select_and_gather_add's result).
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
    const int64_t span = (window[d] - 1) * wdil[d] + 1;
    if (operand.shape[d].is_constant()) {
      const int64_t n = operand.shape[d].constant_value();
      const int64_t dilated = n == 0 ? 0 : (n - 1) * base[d] + 1;
      const int64_t padded = dilated + pads[d].first + pads[d].second;
      if (padded < span) {
        return absl::UnimplementedError(
            absl::StrCat(eqn.primitive, ": an empty window output on dim ", d,
                         " is not lowered"));
      }
      g.size.push_back(n);
      g.out.push_back((padded - span) / strides[d] + 1);
    } else {
      // A symbolic windowed dim (shape polymorphism): Slices end relative
      // to its end, masks and positions come from Range at run time.
      if (base[d] != 1) {
        return absl::UnimplementedError(absl::StrCat(
            eqn.primitive, ": base_dilation on the symbolic dimension '",
            operand.shape[d].ToString(), "'"));
      }
      if (windowed.shape[d].is_constant()) {
        return absl::InvalidArgumentError(absl::StrCat(
            eqn.primitive, ": the window output dim ", d, " of ",
            windowed.ToString(), " is static over the symbolic operand dim '",
            operand.shape[d].ToString(), "'"));
      }
      g.size.push_back(-1);
      g.out.push_back(-1);
    }
    g.perm.push_back(d);
    g.size_dim.push_back(operand.shape[d]);
    g.out_dim.push_back(windowed.shape[d]);
    g.window.push_back(window[d]);
    g.stride.push_back(strides[d]);
    g.dilation.push_back(wdil[d]);
    g.base.push_back(base[d]);
    g.lo.push_back(pads[d].first);
    g.hi.push_back(pads[d].second);
    g.offsets *= window[d];
  }
  // The static lowering builds constants with one entry per (window
  // offset, output position): refuse shapes that would make them absurdly
  // large (a well-typed program declaring huge dims must not exhaust
  // memory).
  constexpr int64_t kMaxWindowPositions = int64_t{1} << 24;
  int64_t positions = g.offsets;
  for (int64_t o : g.out) {
    if (o > 0 && positions > kMaxWindowPositions / o) {
      return absl::UnimplementedError(
          absl::StrCat(eqn.primitive, " over ", operand.ToString(),
                       " needs more than ", kMaxWindowPositions,
                       " (window offset, output position) pairs, the explicit "
                       "construction's limit"));
    }
    if (o > 0) positions *= o;
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

// Whether offset t of each window reads a real element (not a pad or a
// hole): per masked windowed dim j, a bool [1.., out_j, ..1] (rank g.rank)
// over its output positions (a constant for a static dim, Range arithmetic
// for a symbolic one), And-ed; nullopt where every read is real. Position o
// reads base index o*stride + k*dilation - lo, an element where it is a
// multiple of base inside the operand.
template <class E>
absl::StatusOr<std::optional<V<E>>> ValidMask(E& e, const Geometry& g,
                                              int64_t t) {
  using jaxpr::DType;
  const std::vector<int64_t> kt = OffsetIndex(g, t);
  std::optional<V<E>> mask;
  for (int j = 0; j < g.k(); ++j) {
    if (!g.masked(j)) continue;
    const int64_t first = kt[j] * g.dilation[j] - g.lo[j];
    std::vector<int64_t> shape(g.rank, 1);
    std::optional<V<E>> axis_mask;
    if (!g.symbolic(j)) {
      shape[j] = g.out[j];
      jaxpr::Array valid(DType::kBool, shape);
      bool all = true;
      for (int64_t o = 0; o < g.out[j]; ++o) {
        const int64_t q = o * g.stride[j] + first;
        const bool real =
            q >= 0 && q % g.base[j] == 0 && q / g.base[j] < g.size[j];
        valid.SetFromInt64(o, real ? 1 : 0);
        all = all && real;
      }
      if (all) continue;
      axis_mask = e.Const(valid);
    } else {
      // base is 1 on symbolic dims: 0 <= o*stride + first < n.
      J2O_ASSIGN_OR_RETURN(V<E> out, e.DimValue(g.out_dim[j]));
      J2O_ASSIGN_OR_RETURN(V<E> n, e.DimValue(g.size_dim[j]));
      auto scalar = [&](int64_t v) {
        return e.Const(jaxpr::Array::ScalarFromInt64(DType::kI64, v));
      };
      V<E> q = e.Op("Add",
                    {e.Op("Mul",
                          {e.Op("Range",
                                {scalar(0), e.Op("Squeeze", {out}, DType::kI64),
                                 scalar(1)},
                                DType::kI64),
                           scalar(g.stride[j])},
                          DType::kI64),
                     scalar(first)},
                    DType::kI64);
      V<E> real = e.Op("And",
                       {e.Op("GreaterOrEqual", {q, scalar(0)}, DType::kBool),
                        e.Op("Less", {q, n}, DType::kBool)},
                       DType::kBool);
      std::vector<int64_t> axes;
      for (int a = 0; a < g.rank; ++a) {
        if (a != j) axes.push_back(a);
      }
      axis_mask = axes.empty() ? real
                               : e.Op("Unsqueeze", {real, e.ConstI64(axes)},
                                      DType::kBool);
    }
    mask = mask ? e.Op("And", {*mask, *axis_mask}, DType::kBool) : *axis_mask;
  }
  return mask;
}

inline bool HasPadding(const Geometry& g) {
  for (int j = 0; j < g.k(); ++j) {
    if (g.lo[j] != 0 || g.hi[j] != 0) return true;
  }
  return false;
}

inline bool HasBaseDilation(const Geometry& g) {
  for (int j = 0; j < g.k(); ++j) {
    if (g.base[j] != 1) return true;
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

// Transposes windowed dims first, base-dilates them (zeros in the holes)
// and pads them with zeros (crops where the padding is negative).
template <class E>
V<E> ToWindowLayout(E& e, const Geometry& g, V<E> x, jaxpr::DType d) {
  x = Transposed(e, g, x, d);
  if (HasBaseDilation(g)) {
    V<E> zero = e.Const(jaxpr::Array::ScalarFromDouble(d, 0));
    for (int j = 0; j < g.k(); ++j) {
      x = window_internal::Dilate(e, x, d, j, g.rank, g.size[j], g.base[j],
                                  zero);
    }
  }
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
    if (!g.symbolic(j)) {
      ends.push_back(starts.back() + (g.out[j] - 1) * g.stride[j] + 1);
    } else {
      // Up to the last window's element at this offset, counted from the
      // end: out_j elements whatever the size (window_plan's
      // WindowSliceEnd).
      const int64_t tail = (g.window[j] - 1 - kt[j]) * g.dilation[j];
      ends.push_back(tail == 0 ? std::numeric_limits<int64_t>::max() : -tail);
    }
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

namespace select_window {

// The operand position every (offset t, window o) reads, per windowed dim
// o*stride + k_t*dilation in the padded layout: int64 [offsets, out..., k],
// ScatterND's indices. A constant when every windowed dim is static, else
// built from Range.
template <class E>
absl::StatusOr<V<E>> ScatterPositions(E& e, const Geometry& g) {
  using jaxpr::DType;
  if (!g.any_symbolic()) {
    std::vector<int64_t> idx_shape = {g.offsets};
    idx_shape.insert(idx_shape.end(), g.out.begin(), g.out.end());
    idx_shape.push_back(g.k());
    jaxpr::Array indices(DType::kI64, idx_shape);
    int64_t per_offset = 1;
    for (int64_t o : g.out) per_offset *= o;
    for (int64_t t = 0; t < g.offsets; ++t) {
      const std::vector<int64_t> kt = OffsetIndex(g, t);
      ForEachOut(g, [&](int64_t flat, const std::vector<int64_t>& o) {
        for (int j = 0; j < g.k(); ++j) {
          indices.SetFromInt64((t * per_offset + flat) * g.k() + j,
                               o[j] * g.stride[j] + kt[j] * g.dilation[j]);
        }
      });
    }
    return e.Const(indices);
  }
  auto scalar = [&](int64_t v) {
    return e.Const(jaxpr::Array::ScalarFromInt64(DType::kI64, v));
  };
  J2O_ASSIGN_OR_RETURN(V<E> out_shape, e.ShapeValue(g.out_dim));  // [k]
  V<E> grid_shape = e.Op("Concat", {out_shape, e.ConstI64({1})}, DType::kI64,
                         {OpAttr::Int("axis", 0)});
  // Per windowed dim j: o*stride_j as [1.., out_j, ..1, 1] (rank k + 1).
  std::vector<V<E>> strided;
  for (int j = 0; j < g.k(); ++j) {
    J2O_ASSIGN_OR_RETURN(V<E> out, e.DimValue(g.out_dim[j]));
    V<E> o = e.Op("Range",
                  {scalar(0), e.Op("Squeeze", {out}, DType::kI64), scalar(1)},
                  DType::kI64);
    std::vector<int64_t> axes;
    for (int a = 0; a <= g.k(); ++a) {
      if (a != j) axes.push_back(a);
    }
    strided.push_back(e.Op(
        "Unsqueeze",
        {e.Op("Mul", {o, scalar(g.stride[j])}, DType::kI64), e.ConstI64(axes)},
        DType::kI64));
  }
  std::vector<V<E>> per_offset;
  for (int64_t t = 0; t < g.offsets; ++t) {
    const std::vector<int64_t> kt = OffsetIndex(g, t);
    std::vector<V<E>> coords;
    for (int j = 0; j < g.k(); ++j) {
      coords.push_back(
          e.Op("Expand",
               {e.Op("Add", {strided[j], scalar(kt[j] * g.dilation[j])},
                     DType::kI64),
                grid_shape},
               DType::kI64));
    }
    V<E> grid = coords.size() == 1 ? coords[0]
                                   : e.Op("Concat", coords, DType::kI64,
                                          {OpAttr::Int("axis", g.k())});
    per_offset.push_back(
        e.Op("Unsqueeze", {grid, e.ConstI64({0})}, DType::kI64));
  }
  return per_offset.size() == 1 ? per_offset[0]
                                : e.Op("Concat", per_offset, DType::kI64,
                                       {OpAttr::Int("axis", 0)});
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
  if (sw::HasBaseDilation(g)) {
    return absl::InvalidArgumentError(
        "select_and_scatter_add has no base dilation (JAX's select_and_"
        "gather_add transpose pads the operand instead)");
  }
  J2O_ASSIGN_OR_RETURN(std::string select, sw::SelectOp(eqn));
  J2O_ASSIGN_OR_RETURN(DType kc,
                       sw::KeyDType(operand_aval.dtype, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(DType vc,
                       sw::ValueDType(source_aval.dtype, eqn.primitive));
  J2O_ASSIGN_OR_RETURN(Val operand, e.In(1));
  J2O_ASSIGN_OR_RETURN(Val source, e.In(0));
  Val keys = sw::ToWindowLayout(
      e, g, sw::CastTo(e, operand, operand_aval.dtype, kc), kc);
  // The fold: chosen offset, its key, and whether any real element was
  // seen (nullopt: every read so far was real).
  Val chosen_key = sw::AtOffset(e, g, keys, kc, 0);
  Val chosen = e.ConstI64({0});
  J2O_ASSIGN_OR_RETURN(std::optional<Val> seen, sw::ValidMask(e, g, 0));
  for (int64_t t = 1; t < g.offsets; ++t) {
    Val candidate = sw::AtOffset(e, g, keys, kc, t);
    J2O_ASSIGN_OR_RETURN(std::optional<Val> valid, sw::ValidMask(e, g, t));
    Val replace =
        e.Op("Not", {e.Op(select, {chosen_key, candidate}, DType::kBool)},
             DType::kBool);
    Val take = seen ? e.Op("Or", {e.Op("Not", {*seen}, DType::kBool), replace},
                           DType::kBool)
                    : replace;
    if (valid) take = e.Op("And", {*valid, take}, DType::kBool);
    chosen_key = e.Op("Where", {take, candidate, chosen_key}, kc);
    chosen = e.Op("Where", {take, e.ConstI64({t}), chosen}, DType::kI64);
    if (seen) {
      seen = valid
                 ? std::optional<Val>(e.Op("Or", {*seen, *valid}, DType::kBool))
                 : std::nullopt;
    }
  }
  // Route each window's source value to its chosen offset.
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
  J2O_ASSIGN_OR_RETURN(Val indices, sw::ScatterPositions(e, g));
  Val padded_size;  // of the windowed dims, in the padded layout
  if (!g.any_symbolic()) {
    std::vector<int64_t> sizes;
    for (int j = 0; j < g.k(); ++j) {
      sizes.push_back(g.size[j] + g.lo[j] + g.hi[j]);
    }
    padded_size = e.ConstI64(sizes);
  } else {
    padded_size = e.Op("Shape", {keys}, DType::kI64,
                       {OpAttr::Int("start", 0), OpAttr::Int("end", g.k())});
  }
  Val operand_t = sw::Transposed(e, g, operand, operand_aval.dtype);
  Val rest_shape =
      e.Op("Shape", {operand_t}, DType::kI64, {OpAttr::Int("start", g.k())});
  Val data = e.Op("Expand",
                  {zero, e.Op("Concat", {padded_size, rest_shape}, DType::kI64,
                              {OpAttr::Int("axis", 0)})},
                  vc);
  Val summed = e.Op("ScatterND", {data, indices, stacked}, vc,
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
  J2O_ASSIGN_OR_RETURN(sw::Geometry g, sw::PlanGeometry(eqn, operand_aval,
                                                        eqn.outputs[0]->aval));
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
    Val take = e.Op("Not", {e.Op(select, {acc_key, candidate}, DType::kBool)},
                    DType::kBool);
    J2O_ASSIGN_OR_RETURN(std::optional<Val> valid, sw::ValidMask(e, g, t));
    if (valid) take = e.Op("And", {*valid, take}, DType::kBool);
    acc_key = e.Op("Where", {take, candidate, acc_key}, kc);
    acc_tan =
        e.Op("Where", {take, sw::AtOffset(e, g, tans, vc, t), acc_tan}, vc);
  }
  acc_tan = e.Op("Transpose", {acc_tan}, vc, {OpAttr::Ints("perm", g.inverse)});
  return e.SetOut(0, sw::CastTo(e, acc_tan, vc, out_dt));
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_SELECT_WINDOW_PLAN_H_
