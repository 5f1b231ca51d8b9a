// Pipeline-independent planning and emission for gather, the scatter family,
// dynamic_slice and dynamic_update_slice (DESIGN.md §6).
//
// Planning (non-template, gather_scatter_plan.cc) decodes dimension numbers,
// modes and fill values and picks the cheapest exact ONNX form:
//   gather:  one Gather on an axis (row gather), GatherND with batch_dims
//            (every indexed dim collapsed), or a full index grid + GatherND;
//   scatter: ScatterND on whole trailing slices, or a full index grid (one
//            operand index tuple per update element) + ScatterND.
// Emission (IndexingEmitter<Builder>) is written once against a small builder
// interface that each pipeline adapts (plugins/ and plugins2/), so both
// pipelines emit the same graph. Out-of-bounds scatter windows and losing
// duplicates of a plain scatter are redirected to a scratch row appended to
// axis 0 of the operand and sliced off afterwards: no out-of-range index ever
// reaches ScatterND and no real element is touched. Below opset 18 (no
// ScatterND min/max reduction, which the duplicate resolution also uses),
// scatter-min/max and non-unique plain scatter apply their index rows one at
// a time, in order, in a Loop.
#ifndef JAX2ONNX_PLUGIN_GATHER_SCATTER_PLAN_H_
#define JAX2ONNX_PLUGIN_GATHER_SCATTER_PLAN_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "jaxpr/array.h"
#include "jaxpr/dim_expr.h"
#include "jaxpr/dtype.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/emit.h"
#include "plugin/float_extremes.h"
#include "plugin/lax_plan.h"
#include "plugin/onnx_types.h"

namespace jax2onnx::plugin {

enum class IndexMode { kClip, kFillOrDrop, kPromiseInBounds };

// `mode=` of gather/scatter (None means FILL_OR_DROP, as JAX's from_any).
absl::StatusOr<IndexMode> ParseIndexMode(const jaxpr::Eqn& eqn);

// Tags of the axes of an intermediate tensor: a batch axis (an index into
// the non-vector dims of the indices) or a window axis (an index into the
// plan's window dims).
struct AxisTag {
  bool is_batch = false;
  int index = 0;
  friend bool operator==(const AxisTag& a, const AxisTag& b) {
    return a.is_batch == b.is_batch && a.index == b.index;
  }
};

struct GatherPlan {
  enum class Strategy { kAxisGather, kGatherND, kIndexGrid };
  Strategy strategy = Strategy::kIndexGrid;
  IndexMode mode = IndexMode::kFillOrDrop;
  std::vector<int64_t> offset_dims, collapsed, start_index_map,
      operand_batching, indices_batching;
  std::vector<jaxpr::DimExpr> slice_sizes;  // one per operand dim
  jaxpr::Array fill;                        // FILL_OR_DROP value (scalar)
  int operand_rank = 0;
  int num_batch = 0;  // indices rank - 1
  // Operand dims that form the window (neither collapsed nor batching),
  // ascending; window axis k of every layout is window_dims[k].
  std::vector<int64_t> window_dims;
  // The JAX output's axes as tags.
  std::vector<AxisTag> output_tags;
};
absl::StatusOr<GatherPlan> PlanGather(const jaxpr::Eqn& eqn);

enum class ScatterReduction { kNone, kAdd, kSub, kMul, kMin, kMax };

struct ScatterPlan {
  enum class Strategy { kSlices, kIndexGrid };
  Strategy strategy = Strategy::kIndexGrid;
  IndexMode mode = IndexMode::kFillOrDrop;
  ScatterReduction reduction = ScatterReduction::kNone;
  bool unique_indices = false;
  std::vector<int64_t> update_window_dims, inserted, scatter_to_operand,
      operand_batching, indices_batching;
  int operand_rank = 0;
  int num_batch = 0;  // indices rank - 1
  // Operand dims spanned by the window (ascending) and the updates dims that
  // index them (sorted update_window_dims), pairwise.
  std::vector<int64_t> window_dims, sorted_update_window_dims;
  // Updates dims that walk the indices' batch dims, in order.
  std::vector<int64_t> update_scatter_dims;
  // Window extent per operand dim (1 for inserted/batching dims).
  std::vector<jaxpr::DimExpr> window_size;
};
absl::StatusOr<ScatterPlan> PlanScatter(const jaxpr::Eqn& eqn);

// The FILL_OR_DROP fill value of gather in `dtype` (default NaN / INT_MIN /
// UINT_MAX / True, as JAX resolves fill_value=None).
absl::StatusOr<jaxpr::Array> GatherFillValue(jaxpr::DType dtype,
                                             const jaxpr::ParamValue* fill);

// slice_sizes with entries that may be symbolic (printed as the operand's
// dim expression).
absl::StatusOr<std::vector<jaxpr::DimExpr>> ParseSliceSizes(
    const jaxpr::Eqn& eqn, const std::vector<jaxpr::DimExpr>& operand_shape);

// ---------------------------------------------------------------------------
// Emission through a pipeline-neutral emitter E (plugin/emit.h) bound to the
// equation being lowered.

// The aval of operand `i` (a scalar of the literal's dtype for untyped
// literals).
jaxpr::Aval InAvalOf(const jaxpr::Eqn& eqn, int i);

template <NeutralEmitter E>
class IndexingEmitter {
 public:
  using V = typename E::Value;
  using DType = jaxpr::DType;
  using DimExpr = jaxpr::DimExpr;

  explicit IndexingEmitter(E& e) : e_(e) {}

  absl::Status Gather(const jaxpr::Eqn& eqn);
  absl::Status Scatter(const jaxpr::Eqn& eqn);
  absl::Status DynamicSlice(const jaxpr::Eqn& eqn);
  absl::Status DynamicUpdateSlice(const jaxpr::Eqn& eqn);

 private:
  // ---- small op helpers ----
  V Op(absl::string_view op, std::vector<V> ins, DType dt,
       std::vector<OpAttr> attrs = {}) {
    return e_.Op(op, std::move(ins), dt, std::move(attrs));
  }
  // ORT's ScatterND max/min is std::max/min: a NaN update is dropped when
  // the value it meets is not NaN, and -0/+0 keep whichever came first.
  // XLA's scatter with a maximum/minimum combiner is IEEE 754-2019
  // maximum/minimum (StableHLO spec): NaN wins, +0 > -0. Two more
  // ScatterNDs over the same indices fix `out` exactly: one of the NaN mask
  // (1/0, max) and one of 1/x for the zeros (identity -inf for max, +inf
  // for min), whose reciprocal is the correctly signed zero.
  absl::StatusOr<V> FixFloatScatterMinMax(V data, V indices, V upd, V out,
                                          DType d,
                                          const std::vector<OpAttr>& attrs,
                                          bool is_max) {
    auto scalar = [&](double x) {
      return ConstArray(jaxpr::Array::ScalarFromDouble(d, x));
    };
    const double inf = std::numeric_limits<double>::infinity();
    J2O_ASSIGN_OR_RETURN(V zero, scalar(0.0));
    J2O_ASSIGN_OR_RETURN(V one, scalar(1.0));
    J2O_ASSIGN_OR_RETURN(V identity, scalar(is_max ? -inf : inf));
    J2O_ASSIGN_OR_RETURN(V nan,
                         scalar(std::numeric_limits<double>::quiet_NaN()));
    auto nan_mask = [&](V v) {
      return Op("Where", {Op("IsNaN", {v}, DType::kBool), one, zero}, d);
    };
    auto zero_sign = [&](V v) {
      return Op("Where",
                {Op("Equal", {v, zero}, DType::kBool),
                 Op("Reciprocal", {v}, d), identity},
                d);
    };
    V nan_seen = Op("ScatterND", {nan_mask(data), indices, nan_mask(upd)}, d,
                    {OpAttr::String("reduction", "max")});
    // -inf exactly where a zero result must be -0.
    V scattered_sign =
        Op("ScatterND", {zero_sign(data), indices, zero_sign(upd)}, d, attrs);
    V want = Op("And",
                {Op("Equal", {out, zero}, DType::kBool),
                 Op("Less", {scattered_sign, zero}, DType::kBool)},
                DType::kBool);
    // As plugin/float_extremes.h's SelectNegativeZero (no zero's sign goes
    // through an ORT Where's true branch, no x + 0 that ORT deletes): zeros
    // made +0, then multiplied by -1 where a -0 is wanted.
    J2O_ASSIGN_OR_RETURN(V minus_one, scalar(-1.0));
    V fixed = Op(
        "Mul",
        {Op("Where", {Op("Equal", {out, zero}, DType::kBool), zero, out}, d),
         Op("Where", {want, minus_one, one}, d)},
        d);
    return Op("Where", {Op("Greater", {nan_seen, zero}, DType::kBool), nan,
                        fixed},
              d);
  }
  absl::StatusOr<V> Cast(V v, DType from, DType to) {
    if (from == to) return v;
    J2O_ASSIGN_OR_RETURN(int code, OnnxDType(to));
    return Op("Cast", {v}, to, {OpAttr::Int("to", code)});
  }
  V Transpose(V v, const std::vector<int64_t>& perm, DType dt) {
    for (size_t i = 0; i < perm.size(); ++i) {
      if (perm[i] != static_cast<int64_t>(i)) {
        return Op("Transpose", {v}, dt, {OpAttr::Ints("perm", perm)});
      }
    }
    return v;
  }
  V Unsqueeze(V v, std::vector<int64_t> axes, DType dt) {
    if (axes.empty()) return v;
    return Op("Unsqueeze", {v, e_.ConstI64(std::move(axes))}, dt);
  }
  V Squeeze(V v, std::vector<int64_t> axes, DType dt) {
    return Op("Squeeze", {v, e_.ConstI64(std::move(axes))}, dt);
  }
  V SliceAxis(V v, int64_t axis, V start, V end, DType dt) {
    return Op("Slice", {v, start, end, e_.ConstI64({axis})}, dt);
  }
  V SliceLast(V v, int64_t k, DType dt) {  // v[..., k:k+1]
    return SliceAxis(v, -1, e_.ConstI64({k}), e_.ConstI64({k + 1}), dt);
  }
  V Concat(std::vector<V> vs, int64_t axis, DType dt) {
    if (vs.size() == 1) return vs[0];
    return Op("Concat", std::move(vs), dt, {OpAttr::Int("axis", axis)});
  }
  // min over the last axis of a bool tensor, keepdims=0.
  absl::StatusOr<V> AllLast(V v) {
    J2O_ASSIGN_OR_RETURN(V i, Cast(v, DType::kBool, DType::kI64));
    V r;
    if (e_.opset() >= 18) {
      r = Op("ReduceMin", {i, e_.ConstI64({-1})}, DType::kI64,
             {OpAttr::Int("keepdims", 0)});
    } else {
      r = Op("ReduceMin", {i}, DType::kI64,
             {OpAttr::Ints("axes", {-1}), OpAttr::Int("keepdims", 0)});
    }
    return Cast(r, DType::kI64, DType::kBool);
  }
  // [n] int64 iota placed on axis `axis` of a rank-`rank` tensor.
  absl::StatusOr<V> Iota(const DimExpr& n, int axis, int rank) {
    V range;
    if (n.is_constant()) {
      std::vector<int64_t> vals(n.constant_value());
      std::iota(vals.begin(), vals.end(), 0);
      range = e_.ConstI64(std::move(vals));
    } else {
      J2O_ASSIGN_OR_RETURN(V nv, e_.DimValue(n));
      V ns = Squeeze(nv, {0}, DType::kI64);
      range = Op("Range", {e_.ConstI64Scalar(0), ns, e_.ConstI64Scalar(1)},
                 DType::kI64);
    }
    std::vector<int64_t> axes;
    for (int i = 0; i < rank; ++i) {
      if (i != axis) axes.push_back(i);
    }
    return Unsqueeze(range, axes, DType::kI64);
  }
  // [1] int64 holding dim - size.
  absl::StatusOr<V> DimMinus(const DimExpr& dim, const DimExpr& size) {
    if (dim.is_constant() && size.is_constant()) {
      return e_.ConstI64({dim.constant_value() - size.constant_value()});
    }
    J2O_ASSIGN_OR_RETURN(V d, e_.DimValue(dim));
    J2O_ASSIGN_OR_RETURN(V s, e_.DimValue(size));
    return Op("Sub", {d, s}, DType::kI64);
  }
  // Start indices (any integer dtype, shape [..., K]) as int64 clamped to
  // [0, hi] per component (`hi` is [K] int64), and whether every component
  // was already in range (shape [...], only when `want_mask`).
  struct Starts {
    V clamped;
    V in_bounds;  // valid when requested
  };
  absl::StatusOr<Starts> PrepareStarts(V idx, DType idx_dtype, V hi,
                                       bool want_mask) {
    J2O_ASSIGN_OR_RETURN(V i64, Cast(idx, idx_dtype, DType::kI64));
    V upper = Op("Min", {i64, hi}, DType::kI64);
    V clamped;
    if (idx_dtype == DType::kU64) {
      // u64 values >= 2^63 wrap to negatives in i64; they are above every
      // bound, so they clamp to hi, not 0.
      V neg = Op("Less", {i64, e_.ConstI64Scalar(0)}, DType::kBool);
      clamped =
          Op("Where",
             {neg,
              Op("Expand", {hi, Op("Shape", {i64}, DType::kI64)}, DType::kI64),
              upper},
             DType::kI64);
    } else {
      clamped = Op("Max", {upper, e_.ConstI64Scalar(0)}, DType::kI64);
    }
    Starts s{clamped, V()};
    if (want_mask) {
      V eq = Op("Equal", {i64, clamped}, DType::kBool);
      J2O_ASSIGN_OR_RETURN(s.in_bounds, AllLast(eq));
    }
    return s;
  }
  // [K] int64 of dim(d_k) - size(d_k) for the indexed operand dims.
  absl::StatusOr<V> Upper(const std::vector<int64_t>& dims,
                          const std::vector<DimExpr>& operand_shape,
                          const std::vector<DimExpr>& sizes) {
    bool all_static = true;
    std::vector<int64_t> vals;
    for (int64_t d : dims) {
      if (!operand_shape[d].is_constant() || !sizes[d].is_constant()) {
        all_static = false;
        break;
      }
      vals.push_back(operand_shape[d].constant_value() -
                     sizes[d].constant_value());
    }
    if (all_static) return e_.ConstI64(vals);
    std::vector<V> parts;
    for (int64_t d : dims) {
      J2O_ASSIGN_OR_RETURN(V p, DimMinus(operand_shape[d], sizes[d]));
      parts.push_back(p);
    }
    return Concat(parts, 0, DType::kI64);
  }
  // Index components (broadcastable to `shape`, rank R) stacked into a
  // [shape..., C] int64 index tensor.
  // The operand index of every element of a [batch..., window...] grid
  // (batch = the indices' leading dims, window k of size window_sizes[k]),
  // one component per operand dim d: the clamped start of the index vector
  // entry k with index_map[k] == d, plus the batch position i when d is
  // operand_batching[j] with indices_batching[j] == i, plus the window
  // offset k when d is window_dims[k]; 0 when none applies.
  absl::StatusOr<std::vector<V>> IndexGrid(
      const Starts& st, const std::vector<int64_t>& index_map,
      const std::vector<int64_t>& operand_batching,
      const std::vector<int64_t>& indices_batching,
      const std::vector<int64_t>& window_dims,
      const std::vector<DimExpr>& batch_shape,
      const std::vector<DimExpr>& window_sizes, int operand_rank) {
    const int nb = static_cast<int>(batch_shape.size());
    const int nw = static_cast<int>(window_dims.size());
    const int rank = nb + nw;
    // A start is [batch..., 1]: unsqueezed over the other window axes.
    std::vector<int64_t> other_window_axes;
    for (int k = 1; k < nw; ++k) other_window_axes.push_back(nb + k);
    std::vector<V> comps;
    for (int d = 0; d < operand_rank; ++d) {
      V c;
      bool has = false;
      auto add = [&](V v) {
        c = has ? Op("Add", {c, v}, DType::kI64) : v;
        has = true;
      };
      auto sit = std::find(index_map.begin(), index_map.end(), d);
      if (sit != index_map.end()) {
        const int k = static_cast<int>(sit - index_map.begin());
        V start = SliceLast(st.clamped, k, DType::kI64);
        add(nw == 0 ? Squeeze(start, {-1}, DType::kI64)
                    : Unsqueeze(start, other_window_axes, DType::kI64));
      }
      auto bit = std::find(operand_batching.begin(), operand_batching.end(), d);
      if (bit != operand_batching.end()) {
        const int i =
            static_cast<int>(indices_batching[bit - operand_batching.begin()]);
        J2O_ASSIGN_OR_RETURN(V io, Iota(batch_shape[i], i, rank));
        add(io);
      }
      auto wit = std::find(window_dims.begin(), window_dims.end(), d);
      if (wit != window_dims.end()) {
        const int k = static_cast<int>(wit - window_dims.begin());
        J2O_ASSIGN_OR_RETURN(V io, Iota(window_sizes[k], nb + k, rank));
        add(io);
      }
      if (!has) add(e_.ConstI64Scalar(0));
      comps.push_back(c);
    }
    return comps;
  }

  absl::StatusOr<V> Stack(const std::vector<V>& comps,
                          const std::vector<DimExpr>& shape) {
    J2O_ASSIGN_OR_RETURN(V sv, e_.ShapeValue(shape));
    const int64_t rank = static_cast<int64_t>(shape.size());
    std::vector<V> parts;
    for (V c : comps) {
      V e = Op("Expand", {c, sv}, DType::kI64);
      parts.push_back(Unsqueeze(e, {rank}, DType::kI64));
    }
    return Concat(parts, rank, DType::kI64);
  }
  static std::vector<int64_t> PermFromTags(const std::vector<AxisTag>& have,
                                           const std::vector<AxisTag>& want) {
    std::vector<int64_t> perm;
    for (const AxisTag& t : want) {
      for (size_t j = 0; j < have.size(); ++j) {
        if (have[j] == t) perm.push_back(static_cast<int64_t>(j));
      }
    }
    return perm;
  }

  // Where(mask, x, fill) for any dtype: ONNX Runtime's Where has no kernel
  // for bool and several integer types, so those go through And/Or or an
  // exact round trip through a wider type.
  absl::StatusOr<V> SelectFill(V mask, V x, const jaxpr::Array& fill) {
    const DType dt = fill.dtype();
    if (dt == DType::kBool) {
      if (fill.GetAsInt64(0) != 0) {
        return Op("Or", {x, Op("Not", {mask}, DType::kBool)}, DType::kBool);
      }
      return Op("And", {x, mask}, DType::kBool);
    }
    DType wd = dt;
    switch (dt) {
      case DType::kF32:
      case DType::kF64:
      case DType::kI32:
      case DType::kI64:
      case DType::kU8:
        break;
      case DType::kF16:
      case DType::kBF16:
        wd = DType::kF32;
        break;
      default:
        wd = DType::kI64;  // integer casts wrap, so the round trip is exact
        break;
    }
    J2O_ASSIGN_OR_RETURN(V fv, ConstArray(fill));
    J2O_ASSIGN_OR_RETURN(V xw, Cast(x, dt, wd));
    J2O_ASSIGN_OR_RETURN(V fw, Cast(fv, dt, wd));
    return Cast(Op("Where", {mask, xw, fw}, wd), wd, dt);
  }

  // A scalar start index; untyped integer literals become int64 constants
  // (their context dtype would be the operand's).
  absl::StatusOr<V> IndexInput(const jaxpr::Eqn& eqn, int i, DType* dtype) {
    const jaxpr::Atom& a = eqn.inputs[i];
    if (a.is_literal() && !a.literal->aval.has_value() &&
        a.literal->kind == jaxpr::Literal::Kind::kInt) {
      *dtype = DType::kI64;
      return e_.ConstI64Scalar(a.literal->int_value);
    }
    *dtype = InAvalOf(eqn, i).dtype;
    return e_.In(i);
  }
  // A constant of `a`'s dtype: an error, not a crash, for a dtype ONNX
  // cannot hold.
  absl::StatusOr<V> ConstArray(const jaxpr::Array& a) {
    J2O_RETURN_IF_ERROR(OnnxDType(a.dtype()).status());
    return e_.Const(a);
  }

  absl::StatusOr<V> ScatterCore(const jaxpr::Eqn& eqn, const ScatterPlan& p);
  // ScatterND(data, indices, updates) one index row at a time in a Loop
  // (kMin/kMax combine with the value already there; others overwrite).
  absl::StatusOr<V> SequentialScatter(V data,
                                      const std::vector<DimExpr>& data_shape,
                                      V indices, int64_t depth, V updates,
                                      DType dtype, ScatterReduction reduction);

  E& e_;
};

// ---------------------------------------------------------------------------

template <NeutralEmitter E>
absl::Status IndexingEmitter<E>::Gather(const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(GatherPlan p, PlanGather(eqn));
  const jaxpr::Aval& op_aval = InAvalOf(eqn, 0);
  const jaxpr::Aval& idx_aval = InAvalOf(eqn, 1);
  const DType dt = op_aval.dtype;
  const int nb = p.num_batch;
  const int nw = static_cast<int>(p.window_dims.size());
  const int K = static_cast<int>(p.start_index_map.size());
  const bool fill = p.mode == IndexMode::kFillOrDrop && K > 0;
  J2O_ASSIGN_OR_RETURN(V operand, e_.In(0));
  J2O_ASSIGN_OR_RETURN(V idx, e_.In(1));
  J2O_ASSIGN_OR_RETURN(V hi,
                       Upper(p.start_index_map, op_aval.shape, p.slice_sizes));

  V produced;
  std::vector<AxisTag> tags;
  V mask;
  if (p.strategy == GatherPlan::Strategy::kAxisGather ||
      p.strategy == GatherPlan::Strategy::kGatherND) {
    const int nbd = static_cast<int>(p.operand_batching.size());
    // Indices with their batching dims first (paired with the operand's).
    std::vector<int64_t> idx_perm(p.indices_batching.begin(),
                                  p.indices_batching.end());
    for (int i = 0; i < nb; ++i) {
      if (std::find(idx_perm.begin(), idx_perm.end(), i) == idx_perm.end()) {
        idx_perm.push_back(i);
      }
    }
    std::vector<AxisTag> batch_tags;
    for (int64_t i : idx_perm) batch_tags.push_back({true, int(i)});
    idx_perm.push_back(nb);
    V idx_t = Transpose(idx, idx_perm, idx_aval.dtype);
    J2O_ASSIGN_OR_RETURN(Starts st,
                         PrepareStarts(idx_t, idx_aval.dtype, hi, fill));
    mask = st.in_bounds;
    if (p.strategy == GatherPlan::Strategy::kAxisGather) {
      const int64_t a = p.start_index_map[0];
      V flat = Squeeze(st.clamped, {-1}, DType::kI64);
      produced = Op("Gather", {operand, flat}, dt, {OpAttr::Int("axis", a)});
      for (int k = 0; k < nw && p.window_dims[k] < a; ++k) {
        tags.push_back({false, k});
      }
      tags.insert(tags.end(), batch_tags.begin(), batch_tags.end());
      for (int k = 0; k < nw; ++k) {
        if (p.window_dims[k] > a) tags.push_back({false, k});
      }
    } else {
      std::vector<int64_t> op_perm(p.operand_batching.begin(),
                                   p.operand_batching.end());
      op_perm.insert(op_perm.end(), p.start_index_map.begin(),
                     p.start_index_map.end());
      op_perm.insert(op_perm.end(), p.window_dims.begin(), p.window_dims.end());
      V data = Transpose(operand, op_perm, dt);
      produced = Op("GatherND", {data, st.clamped}, dt,
                    {OpAttr::Int("batch_dims", nbd)});
      tags = batch_tags;
      for (int k = 0; k < nw; ++k) tags.push_back({false, k});
    }
    // Window dims narrower than the operand dim: their start is 0.
    for (size_t j = 0; j < tags.size(); ++j) {
      if (tags[j].is_batch) continue;
      const int64_t d = p.window_dims[tags[j].index];
      if (p.slice_sizes[d] == op_aval.shape[d]) continue;
      J2O_ASSIGN_OR_RETURN(V end, e_.DimValue(p.slice_sizes[d]));
      produced = SliceAxis(produced, static_cast<int64_t>(j), e_.ConstI64({0}),
                           end, dt);
    }
  } else {
    // Natural layout [batch..., window...]; one operand index tuple per
    // output element.
    for (int i = 0; i < nb; ++i) tags.push_back({true, i});
    for (int k = 0; k < nw; ++k) tags.push_back({false, k});
    std::vector<DimExpr> shape(idx_aval.shape.begin(),
                               idx_aval.shape.end() - 1);
    for (int64_t d : p.window_dims) shape.push_back(p.slice_sizes[d]);
    J2O_ASSIGN_OR_RETURN(Starts st,
                         PrepareStarts(idx, idx_aval.dtype, hi, fill));
    mask = st.in_bounds;
    J2O_ASSIGN_OR_RETURN(
        std::vector<V> comps,
        IndexGrid(st, p.start_index_map, p.operand_batching, p.indices_batching,
                  p.window_dims,
                  std::vector<DimExpr>(shape.begin(), shape.begin() + nb),
                  std::vector<DimExpr>(shape.begin() + nb, shape.end()),
                  p.operand_rank));
    J2O_ASSIGN_OR_RETURN(V grid, Stack(comps, shape));
    produced = Op("GatherND", {operand, grid}, dt);
  }
  if (fill) {
    std::vector<int64_t> waxes;
    for (size_t j = 0; j < tags.size(); ++j) {
      if (!tags[j].is_batch) waxes.push_back(static_cast<int64_t>(j));
    }
    V m = Unsqueeze(mask, waxes, DType::kBool);
    J2O_ASSIGN_OR_RETURN(produced, SelectFill(m, produced, p.fill));
  }
  produced = Transpose(produced, PermFromTags(tags, p.output_tags), dt);
  return e_.SetOut(0, produced);
}

// ---------------------------------------------------------------------------

template <NeutralEmitter E>
absl::Status IndexingEmitter<E>::Scatter(const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(ScatterPlan p, PlanScatter(eqn));
  J2O_ASSIGN_OR_RETURN(V out, ScatterCore(eqn, p));
  return e_.SetOut(0, out);
}

template <NeutralEmitter E>
absl::StatusOr<typename E::Value> IndexingEmitter<E>::SequentialScatter(
    V data, const std::vector<DimExpr>& data_shape, V indices, int64_t depth,
    V updates, DType dtype, ScatterReduction reduction) {
  // Rows [R, depth] and their updates [R, data.shape[depth:]...]; the
  // static depth and the carried shape keep every value typed for ONNX
  // shape inference.
  V rows = Op("Reshape", {indices, e_.ConstI64({-1, depth})}, DType::kI64);
  const std::vector<DimExpr> window(data_shape.begin() + depth,
                                    data_shape.end());
  std::vector<int64_t> static_window;
  for (const DimExpr& d : window) {
    if (d.is_constant()) static_window.push_back(d.constant_value());
  }
  V row_shape;
  if (static_window.size() == window.size()) {
    static_window.insert(static_window.begin(), -1);
    row_shape = e_.ConstI64(static_window);
  } else {
    J2O_ASSIGN_OR_RETURN(V window_sv, e_.ShapeValue(window));
    row_shape = Concat({e_.ConstI64({-1}), window_sv}, 0, DType::kI64);
  }
  V row_updates = Op("Reshape", {updates, row_shape}, dtype);
  V trip =
      Op("Gather", {Op("Shape", {rows}, DType::kI64), e_.ConstI64Scalar(0)},
         DType::kI64, {OpAttr::Int("axis", 0)});
  J2O_ASSIGN_OR_RETURN(
      std::vector<V> outs,
      e_.Loop(trip, {data}, {CarriedType(dtype, data_shape)},
              [&](V iter, const std::vector<V>& carried)
                  -> absl::StatusOr<std::vector<V>> {
                V at = Unsqueeze(iter, {0}, DType::kI64);
                V row = Op("Gather", {rows, at}, DType::kI64,
                           {OpAttr::Int("axis", 0)});
                V upd = Op("Gather", {row_updates, at}, dtype,
                           {OpAttr::Int("axis", 0)});
                if (reduction == ScatterReduction::kMin ||
                    reduction == ScatterReduction::kMax) {
                  V current = Op("GatherND", {carried[0], row}, dtype);
                  const bool is_min = reduction == ScatterReduction::kMin;
                  // plugin/float_extremes.h's exact max/min (NaN, -0 < +0).
                  V extreme = ExactMaxMin(e_, current, upd, dtype, !is_min);
                  upd = extreme;
                }
                return std::vector<V>{
                    Op("ScatterND", {carried[0], row, upd}, dtype)};
              },
              /*early_exit=*/false, {.body = "scatter_rows", .iter = "row"}));
  return outs[0];
}

template <NeutralEmitter E>
absl::StatusOr<typename E::Value> IndexingEmitter<E>::ScatterCore(
    const jaxpr::Eqn& eqn, const ScatterPlan& p) {
  const jaxpr::Aval& op_aval = InAvalOf(eqn, 0);
  const jaxpr::Aval& idx_aval = InAvalOf(eqn, 1);
  const jaxpr::Aval& upd_aval = InAvalOf(eqn, 2);
  const DType dt = op_aval.dtype;
  const int nb = p.num_batch;
  const int nw = static_cast<int>(p.window_dims.size());
  const int K = static_cast<int>(p.scatter_to_operand.size());
  const std::string& prim = eqn.primitive;
  if (p.operand_rank == 0) {
    return absl::UnimplementedError(
        absl::StrCat(prim, ": rank-0 operand is not supported"));
  }
  const bool drop = p.mode != IndexMode::kClip && K > 0;
  const bool min_max = p.reduction == ScatterReduction::kMin ||
                       p.reduction == ScatterReduction::kMax;
  // Below opset 18 ScatterND has no min/max reduction, and making duplicate
  // indices deterministic needs reduction='max': such scatters apply their
  // index rows one at a time in a Loop instead (in order, so the last
  // duplicate wins as in XLA; min/max read the current value back).
  const bool sequential =
      e_.opset() < 18 && (min_max || (p.reduction == ScatterReduction::kNone &&
                                      !p.unique_indices));
  const bool dedup = !sequential && p.reduction == ScatterReduction::kNone &&
                     !p.unique_indices;
  // The dtype the reduction runs in.
  DType cd = dt;
  bool flip_u64 = false;
  std::string reduction = "none";
  switch (p.reduction) {
    case ScatterReduction::kNone:
      break;
    case ScatterReduction::kAdd:
    case ScatterReduction::kSub:
    case ScatterReduction::kMul: {
      if (dt == DType::kBool && p.reduction == ScatterReduction::kSub) {
        return absl::InvalidArgumentError(
            absl::StrCat(prim, ": subtraction on bool"));
      }
      J2O_ASSIGN_OR_RETURN(cd, ComputeDType(dt, ArithUse::kWrapping, prim));
      reduction = p.reduction == ScatterReduction::kMul ? "mul" : "add";
      break;
    }
    case ScatterReduction::kMin:
    case ScatterReduction::kMax:
      if (sequential) {
        // Elementwise Min/Max order every dtype ORT has them for.
        J2O_ASSIGN_OR_RETURN(
            cd, ComputeDType(dt, ArithUse::kElementwiseOrdering, prim));
      } else if (dt == DType::kU64) {
        cd = DType::kI64;
        flip_u64 = true;
      } else {
        J2O_ASSIGN_OR_RETURN(cd, ComputeDType(dt, ArithUse::kOrdering, prim));
      }
      reduction = p.reduction == ScatterReduction::kMin ? "min" : "max";
      break;
  }
  J2O_ASSIGN_OR_RETURN(V operand, e_.In(0));
  J2O_ASSIGN_OR_RETURN(V idx, e_.In(1));
  J2O_ASSIGN_OR_RETURN(V upd, e_.In(2));
  J2O_ASSIGN_OR_RETURN(upd, Cast(upd, upd_aval.dtype, dt));
  J2O_ASSIGN_OR_RETURN(operand, Cast(operand, dt, cd));
  J2O_ASSIGN_OR_RETURN(upd, Cast(upd, dt, cd));
  V sign_bit;
  if (flip_u64) {
    // x ^ 2^63 orders u64 values as i64 does.
    jaxpr::Array sb(DType::kI64, {});
    sb.SetFromInt64(0, std::numeric_limits<int64_t>::min());
    J2O_ASSIGN_OR_RETURN(sign_bit, ConstArray(sb));
    operand = Op("BitwiseXor", {operand, sign_bit}, cd);
    upd = Op("BitwiseXor", {upd, sign_bit}, cd);
  }
  if (p.reduction == ScatterReduction::kSub) upd = Op("Neg", {upd}, cd);

  // Updates in natural layout [scatter..., window...].
  std::vector<int64_t> upd_perm = p.update_scatter_dims;
  upd_perm.insert(upd_perm.end(), p.sorted_update_window_dims.begin(),
                  p.sorted_update_window_dims.end());
  upd = Transpose(upd, upd_perm, cd);

  // Operand as scattered into: indexed dims first for slices.
  std::vector<int64_t> op_perm;
  std::vector<DimExpr> data_shape;
  if (p.strategy == ScatterPlan::Strategy::kSlices) {
    op_perm = p.scatter_to_operand;
    op_perm.insert(op_perm.end(), p.window_dims.begin(), p.window_dims.end());
  } else {
    op_perm.resize(p.operand_rank);
    std::iota(op_perm.begin(), op_perm.end(), 0);
  }
  for (int64_t d : op_perm) data_shape.push_back(op_aval.shape[d]);
  V data = Transpose(operand, op_perm, cd);

  J2O_ASSIGN_OR_RETURN(
      V hi, Upper(p.scatter_to_operand, op_aval.shape, p.window_size));
  J2O_ASSIGN_OR_RETURN(Starts st, PrepareStarts(idx, idx_aval.dtype, hi, drop));

  // Index components and the shape they broadcast to.
  std::vector<V> comps;
  std::vector<DimExpr> key_shape(idx_aval.shape.begin(),
                                 idx_aval.shape.end() - 1);
  if (p.strategy == ScatterPlan::Strategy::kSlices) {
    for (int k = 0; k < K; ++k) {
      comps.push_back(
          Squeeze(SliceLast(st.clamped, k, DType::kI64), {-1}, DType::kI64));
    }
  } else {
    for (int k = 0; k < nw; ++k) {
      key_shape.push_back(upd_aval.shape[p.sorted_update_window_dims[k]]);
    }
    J2O_ASSIGN_OR_RETURN(
        comps,
        IndexGrid(
            st, p.scatter_to_operand, p.operand_batching, p.indices_batching,
            p.window_dims,
            std::vector<DimExpr>(key_shape.begin(), key_shape.begin() + nb),
            std::vector<DimExpr>(key_shape.begin() + nb, key_shape.end()),
            p.operand_rank));
  }
  const int key_rank = static_cast<int>(key_shape.size());

  const bool scratch = drop || dedup;
  V dim0;
  if (scratch) {
    // A scratch row at index dim0 of axis 0, sliced off after the scatter.
    J2O_ASSIGN_OR_RETURN(dim0, e_.DimValue(data_shape[0]));
    std::vector<DimExpr> row_shape = data_shape;
    row_shape[0] = DimExpr::Constant(1);
    J2O_ASSIGN_OR_RETURN(V row_sv, e_.ShapeValue(row_shape));
    jaxpr::Array zero(cd, {});
    J2O_ASSIGN_OR_RETURN(V zv, ConstArray(zero));
    V row = Op("Expand", {zv, row_sv}, cd);
    data = Concat({data, row}, 0, cd);
    if (drop) {
      // Valid per scatter position; broadcast over the window axes.
      std::vector<int64_t> waxes;
      for (int a = nb; a < key_rank; ++a) waxes.push_back(a);
      V valid = Unsqueeze(st.in_bounds, waxes, DType::kBool);
      V d0s = Squeeze(dim0, {0}, DType::kI64);
      comps[0] = Op("Where", {valid, comps[0], d0s}, DType::kI64);
    }
  }
  J2O_ASSIGN_OR_RETURN(V indices, Stack(comps, key_shape));
  if (dedup) {
    // Last update in index order wins: scatter each element's position with
    // max, read the winner back, send the losers to the scratch row.
    J2O_ASSIGN_OR_RETURN(V ksv, e_.ShapeValue(key_shape));
    V n = e_.opset() >= 18
              ? Op("ReduceProd", {ksv, e_.ConstI64({0})}, DType::kI64,
                   {OpAttr::Int("keepdims", 0)})
              : Op("ReduceProd", {ksv}, DType::kI64,
                   {OpAttr::Ints("axes", {0}), OpAttr::Int("keepdims", 0)});
    V pos = Op("Reshape",
               {Op("Range", {e_.ConstI64Scalar(0), n, e_.ConstI64Scalar(1)},
                   DType::kI64),
                ksv},
               DType::kI64);
    const int C = static_cast<int>(comps.size());
    V data_sv = Op("Shape", {data}, DType::kI64);
    V lead =
        SliceAxis(data_sv, 0, e_.ConstI64({0}), e_.ConstI64({C}), DType::kI64);
    V init = Op("Expand", {e_.ConstI64Scalar(-1), lead}, DType::kI64);
    V w = Op("ScatterND", {init, indices, pos}, DType::kI64,
             {OpAttr::String("reduction", "max")});
    V winner = Op("Equal", {Op("GatherND", {w, indices}, DType::kI64), pos},
                  DType::kBool);
    V d0s = Squeeze(dim0, {0}, DType::kI64);
    comps[0] = Op("Where", {winner, comps[0], d0s}, DType::kI64);
    J2O_ASSIGN_OR_RETURN(indices, Stack(comps, key_shape));
  }
  std::vector<OpAttr> attrs;
  if (reduction != "none") {
    attrs.push_back(OpAttr::String("reduction", reduction));
  }
  V out;
  if (sequential) {
    std::vector<DimExpr> carried_shape = data_shape;
    if (scratch) {
      carried_shape[0] = DimExpr::Sum({carried_shape[0], DimExpr::Constant(1)});
    }
    J2O_ASSIGN_OR_RETURN(
        out, SequentialScatter(data, carried_shape, indices,
                               static_cast<int64_t>(comps.size()), upd, cd,
                               p.reduction));
  } else {
    out = Op("ScatterND", {data, indices, upd}, cd, attrs);
    if (min_max && jaxpr::IsFloat(cd)) {
      J2O_ASSIGN_OR_RETURN(out, FixFloatScatterMinMax(data, indices, upd, out,
                                                      cd, attrs,
                                                      p.reduction ==
                                                          ScatterReduction::kMax));
    }
  }
  if (scratch) out = SliceAxis(out, 0, e_.ConstI64({0}), dim0, cd);
  std::vector<int64_t> inv(op_perm.size());
  for (size_t i = 0; i < op_perm.size(); ++i) inv[op_perm[i]] = int64_t(i);
  out = Transpose(out, inv, cd);
  if (flip_u64) out = Op("BitwiseXor", {out, sign_bit}, cd);
  return Cast(out, cd, dt);
}

// ---------------------------------------------------------------------------

template <NeutralEmitter E>
absl::Status IndexingEmitter<E>::DynamicSlice(const jaxpr::Eqn& eqn) {
  const jaxpr::Aval& op_aval = InAvalOf(eqn, 0);
  const DType dt = op_aval.dtype;
  const int r = op_aval.rank();
  if (static_cast<int>(eqn.inputs.size()) != 1 + r) {
    return absl::UnimplementedError(absl::StrCat(
        "dynamic_slice: operand ", jaxpr::ShortName(dt), " of rank ", r,
        " needs ", r, " scalar start indices, got ", eqn.inputs.size() - 1,
        " (dynamic slice sizes are not supported)"));
  }
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> sizes,
                       ParseSliceSizes(eqn, op_aval.shape));
  J2O_ASSIGN_OR_RETURN(V x, e_.In(0));
  std::vector<V> starts, ends;
  std::vector<int64_t> axes;
  for (int d = 0; d < r; ++d) {
    if (sizes[d] == op_aval.shape[d]) continue;  // start clamps to 0
    DType sdt;
    J2O_ASSIGN_OR_RETURN(V s, IndexInput(eqn, 1 + d, &sdt));
    J2O_ASSIGN_OR_RETURN(V hi, DimMinus(op_aval.shape[d], sizes[d]));
    V s1 = Unsqueeze(s, {0}, sdt);
    J2O_ASSIGN_OR_RETURN(Starts st, PrepareStarts(s1, sdt, hi, false));
    J2O_ASSIGN_OR_RETURN(V size, e_.DimValue(sizes[d]));
    starts.push_back(st.clamped);
    ends.push_back(Op("Add", {st.clamped, size}, DType::kI64));
    axes.push_back(d);
  }
  if (axes.empty()) {
    return e_.SetOut(0, Op("Identity", {x}, dt));
  }
  V out = Op("Slice",
             {x, Concat(starts, 0, DType::kI64), Concat(ends, 0, DType::kI64),
              e_.ConstI64(axes)},
             dt);
  return e_.SetOut(0, out);
}

template <NeutralEmitter E>
absl::Status IndexingEmitter<E>::DynamicUpdateSlice(const jaxpr::Eqn& eqn) {
  const jaxpr::Aval& op_aval = InAvalOf(eqn, 0);
  const jaxpr::Aval& up_aval = InAvalOf(eqn, 1);
  const DType dt = op_aval.dtype;
  const int r = op_aval.rank();
  if (static_cast<int>(eqn.inputs.size()) != 2 + r || up_aval.rank() != r) {
    return absl::InvalidArgumentError(
        absl::StrCat("dynamic_update_slice: operand of rank ", r,
                     " needs an update of "
                     "the same rank and ",
                     r, " start indices"));
  }
  J2O_ASSIGN_OR_RETURN(V x, e_.In(0));
  J2O_ASSIGN_OR_RETURN(V u, e_.In(1));
  J2O_ASSIGN_OR_RETURN(u, Cast(u, up_aval.dtype, dt));
  // Dims from `k` on are covered whole by the update: ScatterND writes
  // them as slices, so the index grid spans only dims [0, k).
  int k = r;
  while (k > 0 && up_aval.shape[k - 1] == op_aval.shape[k - 1]) --k;
  if (k == 0) return e_.SetOut(0, Op("Identity", {u}, dt));
  for (const DimExpr& d : up_aval.shape) {
    // An empty update changes nothing (and an empty index grid trips
    // shape inference).
    if (d.is_constant() && d.constant_value() == 0) {
      return e_.SetOut(0, Op("Identity", {x}, dt));
    }
  }
  std::vector<DimExpr> grid_shape(up_aval.shape.begin(),
                                  up_aval.shape.begin() + k);
  std::vector<V> comps;
  for (int d = 0; d < k; ++d) {
    DType sdt;
    J2O_ASSIGN_OR_RETURN(V s, IndexInput(eqn, 2 + d, &sdt));
    J2O_ASSIGN_OR_RETURN(V hi, DimMinus(op_aval.shape[d], up_aval.shape[d]));
    J2O_ASSIGN_OR_RETURN(Starts st,
                         PrepareStarts(Unsqueeze(s, {0}, sdt), sdt, hi, false));
    J2O_ASSIGN_OR_RETURN(V io, Iota(up_aval.shape[d], d, k));
    comps.push_back(Op("Add", {io, st.clamped}, DType::kI64));
  }
  J2O_ASSIGN_OR_RETURN(V indices, Stack(comps, grid_shape));
  return e_.SetOut(0, Op("ScatterND", {x, indices, u}, dt));
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_GATHER_SCATTER_PLAN_H_
