// Pipeline-independent lowering recipes for windowed reductions
// (reduce_window_{sum,max,min}, generic reduce_window with any elementwise
// combiner) and the window helpers plugin/conv_plan.h and
// plugin/select_window_plan.h share, written once against the emitter
// interface of plugin/emit.h and instantiated by plugins/ and plugins2/.
//
// reduce_window: padding and base-dilation holes take the op's identity (XLA
// skips them), a generic reduce_window's init joins each window once; windows
// are combined explicitly (one strided Slice per window offset, joined with
// Add/Max/Min) so every dtype, window_dilation and base_dilation is exact.
#ifndef JAX2ONNX_PLUGIN_WINDOW_PLAN_H_
#define JAX2ONNX_PLUGIN_WINDOW_PLAN_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
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
#include "plugin/float_extremes.h"
#include "plugin/lax_plan.h"
#include "plugin/onnx_types.h"
#include "plugin/reduce_plan.h"

namespace jax2onnx::plugin {

// ---- parameter decoding (window_plan.cc) ----
// kGeneric: a generic reduce_window whose combiner is not a single
// add/max/min (any elementwise combiner, or several operands).
enum class WindowOp { kAdd, kMax, kMin, kGeneric };
struct WindowParams {
  WindowOp op = WindowOp::kAdd;
  // True for generic reduce_window: the operands are followed by as many
  // init values, each combined once more with every window (XLA semantics).
  bool init_operand = false;
  int num_operands = 1;
  const jaxpr::ClosedJaxpr* combiner = nullptr;  // generic reduce_window
  std::vector<int64_t> window, strides, base_dilation, window_dilation;
  std::vector<std::pair<int64_t, int64_t>> padding;
};
absl::StatusOr<WindowParams> ParseWindowParams(const jaxpr::Eqn& eqn);

// Identity of `op` on `dtype` (0, lowest, highest; -inf/+inf for floats).
jaxpr::Array WindowIdentity(WindowOp op, jaxpr::DType dtype);

namespace window_internal {

inline int OnnxTypeOf(jaxpr::DType d) { return elementwise::OnnxType(d); }

template <class E>
using V = typename E::Value;

// Where(cond, a, b); on bool as (cond and a) or (not cond and b), since
// ONNX Runtime has no bool Where kernel.
template <class E>
V<E> Select(E& e, V<E> cond, V<E> a, V<E> b, jaxpr::DType dtype) {
  if (dtype != jaxpr::DType::kBool) return e.Op("Where", {cond, a, b}, dtype);
  using jaxpr::DType;
  V<E> keep_b =
      e.Op("And", {e.Op("Not", {cond}, DType::kBool), b}, DType::kBool);
  return e.Op("Or", {e.Op("And", {cond, a}, DType::kBool), keep_b},
              DType::kBool);
}

// Inserts (factor - 1) copies of `fill` between neighbours along `axis` of
// `x` (length `n`, static): Gather of row floor(i/f) and Where(i % f == 0).
template <class E>
V<E> Dilate(E& e, V<E> x, jaxpr::DType dtype, int axis, int rank, int64_t n,
            int64_t factor, V<E> fill) {
  if (factor == 1 || n == 0) return x;
  const int64_t len = (n - 1) * factor + 1;
  std::vector<int64_t> rows(len);
  std::vector<uint8_t> keep(len);
  for (int64_t i = 0; i < len; ++i) {
    rows[i] = i / factor;
    keep[i] = i % factor == 0;
  }
  std::vector<int64_t> mask_shape(rank - axis, 1);
  mask_shape[0] = len;
  jaxpr::Array mask(jaxpr::DType::kBool, mask_shape);
  for (int64_t i = 0; i < len; ++i) mask.data()[i] = keep[i];
  V<E> gathered =
      e.Op("Gather", {x, e.ConstI64(rows)}, dtype, {OpAttr::Int("axis", axis)});
  return Select(e, e.Const(mask), gathered, fill, dtype);
}

// Slices away negative padding (lo < 0 drops leading rows, hi < 0 trailing).
template <class E>
V<E> CropNegative(E& e, V<E> x, jaxpr::DType dtype,
                  const std::vector<int64_t>& axes,
                  const std::vector<std::pair<int64_t, int64_t>>& padding) {
  std::vector<int64_t> starts, ends, slice_axes;
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto [lo, hi] = padding[i];
    if (lo >= 0 && hi >= 0) continue;
    starts.push_back(lo < 0 ? -lo : 0);
    ends.push_back(hi < 0 ? hi : std::numeric_limits<int64_t>::max());
    slice_axes.push_back(axes[i]);
  }
  if (slice_axes.empty()) return x;
  return e.Op("Slice",
              {x, e.ConstI64(starts), e.ConstI64(ends), e.ConstI64(slice_axes)},
              dtype);
}

inline std::vector<int64_t> InversePerm(const std::vector<int64_t>& p) {
  std::vector<int64_t> inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<int64_t>(i);
  return inv;
}

inline bool IsIdentity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

template <class E>
V<E> Transpose(E& e, V<E> x, jaxpr::DType dtype,
               const std::vector<int64_t>& perm) {
  if (IsIdentity(perm)) return x;
  return e.Op("Transpose", {x}, dtype, {OpAttr::Ints("perm", perm)});
}

}  // namespace window_internal

namespace window_internal {

// The end of the strided Slice that reads window offset `k` along axis `a`
// for every output position: absolute where the output dim is static; for a
// symbolic one, counted from the end (-(window - 1 - k) * window_dilation),
// which gives every offset exactly floor((L - extent) / stride) + 1 rows of
// the padded length L (none when L < extent), i.e. the output dim.
inline int64_t WindowSliceEnd(const WindowParams& p, int64_t a, int64_t k,
                              const jaxpr::DimExpr& out_dim) {
  const int64_t start = k * p.window_dilation[a];
  if (out_dim.is_constant()) {
    return start + (out_dim.constant_value() - 1) * p.strides[a] + 1;
  }
  const int64_t tail = (p.window[a] - 1 - k) * p.window_dilation[a];
  return tail == 0 ? std::numeric_limits<int64_t>::max() : -tail;
}

// The axes a window moves over (window or stride other than 1) and the
// number of window offsets over them, refused above the explicit
// construction's limit.
inline absl::StatusOr<int64_t> WindowOffsets(const jaxpr::Eqn& eqn,
                                             const WindowParams& p,
                                             std::vector<int64_t>* axes) {
  for (int a = 0; a < static_cast<int>(p.window.size()); ++a) {
    if (p.window[a] != 1 || p.strides[a] != 1) axes->push_back(a);
  }
  int64_t offsets = 1;
  for (int64_t a : *axes) offsets *= p.window[a];
  constexpr int64_t kMaxOffsets = 4096;
  if (offsets > kMaxOffsets) {
    return absl::UnimplementedError(absl::StrCat(
        "'", eqn.primitive, "': windows of ", offsets,
        " elements exceed the explicit construction's limit of ", kMaxOffsets));
  }
  return offsets;
}

// The base-dilated, padded operand of a windowed reduction: `fill` in the
// holes and the padding, negative padding cropped. Base-dilated dims must
// be static.
template <class E>
absl::StatusOr<V<E>> DilateAndPad(E& e, V<E> x, jaxpr::DType dtype,
                                  const jaxpr::Eqn& eqn, const jaxpr::Aval& in,
                                  const WindowParams& p, V<E> fill,
                                  int trailing = 0) {
  const int rank = in.rank();
  // `x` may have `trailing` extra axes after the operand's (a complex
  // value's (re, im) axis): they are neither dilated nor padded.
  const int x_rank = rank + trailing;
  for (int a = 0; a < rank; ++a) {
    if (p.base_dilation[a] == 1) continue;
    if (!in.shape[a].is_constant()) {
      return absl::UnimplementedError(absl::StrCat(
          "'", eqn.primitive, "': base_dilation on the symbolic dimension '",
          in.shape[a].ToString(), "'"));
    }
    x = Dilate(e, x, dtype, a, x_rank, in.shape[a].constant_value(),
               p.base_dilation[a], fill);
  }
  std::vector<int64_t> all_axes(rank);
  for (int a = 0; a < rank; ++a) all_axes[a] = a;
  x = CropNegative(e, x, dtype, all_axes, p.padding);
  std::vector<int64_t> pads(2 * x_rank, 0);
  bool any_pad = false;
  for (int a = 0; a < rank; ++a) {
    pads[a] = std::max<int64_t>(0, p.padding[a].first);
    pads[x_rank + a] = std::max<int64_t>(0, p.padding[a].second);
    any_pad = any_pad || pads[a] > 0 || pads[x_rank + a] > 0;
  }
  if (!any_pad) return x;
  return e.Op("Pad", {x, e.ConstI64(pads), fill}, dtype,
              {OpAttr::String("mode", "constant")});
}

// Whether output position `o` of axis `a` reads an operand element at window
// offset `k` rather than padding or a base-dilation hole (XLA: the base index
// o*stride + k*window_dilation - pad_lo is an element where it is a multiple
// of base_dilation inside the operand, of length `n`).
inline bool ReadsElement(const WindowParams& p, int a, int64_t n, int64_t o,
                         int64_t k) {
  const int64_t b = p.base_dilation[a];
  const int64_t q =
      o * p.strides[a] + k * p.window_dilation[a] - p.padding[a].first;
  return q >= 0 && q % b == 0 && q / b < n;
}

// Which output positions of axis `a` read an operand element at window offset
// `k` (ReadsElement), as a bool mask of rank `rank` shaped [1.., out_a, ..1]
// (the axis at position `a`); nullopt where every position does. A static
// axis gives a constant; a symbolic one (base_dilation 1) compares the base
// indices Range(out_a) * stride + k*window_dilation - pad_lo with [0, n) at
// run time, and needs no mask without positive padding (the output length
// then keeps every window inside the operand).
template <class E>
absl::StatusOr<std::optional<V<E>>> AxisReadMask(E& e, const WindowParams& p,
                                                 int a, int64_t k,
                                                 const jaxpr::DimExpr& in_dim,
                                                 const jaxpr::DimExpr& out_dim,
                                                 int rank) {
  using jaxpr::DType;
  std::vector<int64_t> shape(rank, 1);
  if (in_dim.is_constant() && out_dim.is_constant()) {
    const int64_t len = out_dim.constant_value();
    shape[a] = len;
    jaxpr::Array real(DType::kBool, shape);
    bool axis_all = true;
    for (int64_t o = 0; o < len; ++o) {
      real.data()[o] = ReadsElement(p, a, in_dim.constant_value(), o, k);
      axis_all = axis_all && real.data()[o];
    }
    if (axis_all) return std::optional<V<E>>();
    return std::optional<V<E>>(e.Const(real));
  }
  if (p.base_dilation[a] != 1) {
    return absl::UnimplementedError(absl::StrCat(
        "'", e.eqn().primitive, "': base_dilation on the symbolic dimension '",
        in_dim.ToString(), "'"));
  }
  const int64_t first = k * p.window_dilation[a] - p.padding[a].first;
  const bool below = first < 0;                // leading positions read pads
  const bool above = p.padding[a].second > 0;  // trailing ones may
  if (!below && !above) return std::optional<V<E>>();
  J2O_ASSIGN_OR_RETURN(V<E> len, e.DimValue(out_dim));
  len = e.Op("Squeeze", {len, e.ConstI64({0})}, DType::kI64);
  auto scalar = [&](int64_t v) {
    return e.Const(jaxpr::Array::ScalarFromInt64(DType::kI64, v));
  };
  V<E> q = e.Op("Range", {scalar(0), len, scalar(1)}, DType::kI64);
  if (p.strides[a] != 1) {
    q = e.Op("Mul", {q, scalar(p.strides[a])}, DType::kI64);
  }
  if (first != 0) q = e.Op("Add", {q, scalar(first)}, DType::kI64);
  std::optional<V<E>> mask;
  if (below) {
    mask = e.Op("GreaterOrEqual", {q, scalar(0)}, DType::kBool);
  }
  if (above) {
    J2O_ASSIGN_OR_RETURN(V<E> n, e.DimValue(in_dim));
    V<E> inside = e.Op("Less", {q, n}, DType::kBool);
    mask = mask ? e.Op("And", {*mask, inside}, DType::kBool) : inside;
  }
  if (rank == 1) return mask;
  shape[a] = -1;
  return std::optional<V<E>>(
      e.Op("Reshape", {*mask, e.ConstI64(shape)}, DType::kBool));
}

// The positions of a windowed reduction's output that read an operand element
// at a window offset: the And of the axes' AxisReadMasks (linear in the dims,
// where one full [out...] constant would be their product), each axis mask
// built once per (axis, offset along it) and shared by the offsets that
// reuse it.
template <class E>
class ReadMasks {
 public:
  ReadMasks(const WindowParams& p, std::vector<jaxpr::DimExpr> in_shape,
            std::vector<jaxpr::DimExpr> out_shape)
      : p_(p), in_(std::move(in_shape)), out_(std::move(out_shape)) {}

  // At window offset `k` (one entry per axis); nullopt where every position
  // reads an element.
  absl::StatusOr<std::optional<V<E>>> At(E& e, const std::vector<int64_t>& k) {
    const int rank = static_cast<int>(in_.size());
    std::optional<V<E>> mask;
    for (int a = 0; a < rank; ++a) {
      auto it = axis_masks_.find({a, k[a]});
      if (it == axis_masks_.end()) {
        J2O_ASSIGN_OR_RETURN(
            std::optional<V<E>> m,
            AxisReadMask(e, p_, a, k[a], in_[a], out_[a], rank));
        it = axis_masks_.emplace(std::make_pair(a, k[a]), std::move(m)).first;
      }
      if (!it->second) continue;
      mask = mask ? e.Op("And", {*mask, *it->second}, jaxpr::DType::kBool)
                  : *it->second;
    }
    return mask;
  }

 private:
  const WindowParams& p_;
  std::vector<jaxpr::DimExpr> in_, out_;
  std::map<std::pair<int, int64_t>, std::optional<V<E>>> axis_masks_;
};

}  // namespace window_internal

// Generic reduce_window with any elementwise combiner (and any number of
// operands): one strided Slice per window offset in row-major order, each
// folded into the accumulators (which start as the init values) by the
// combiner jaxpr lowered inline on whole [out...] tensors, i.e. the
// interpreter's order. XLA's ReduceWindow emitters skip padding and
// base-dilation holes rather than combining a fill value (the init joins
// each window once), so where an offset reads a pad or a hole the
// accumulator is kept: a Where on a mask of the positions that read an
// element (ReadMasks: per-axis masks And-ed, constants on static dims and
// from Range on symbolic padded ones; omitted where every position reads
// an element). Base-dilated dims must be static; windowed and padded ones
// may be symbolic. Complex operands (any mix with real ones) move as real
// [..., 2] tensors.
template <class E>
absl::Status LowerGenericReduceWindow(E& e, const WindowParams& p) {
  namespace wi = window_internal;
  using jaxpr::DType;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  const int n = p.num_operands;
  const jaxpr::Aval& in = eqn.inputs[0].var->aval;
  const jaxpr::Aval& out = eqn.outputs[0]->aval;
  const int rank = in.rank();
  J2O_ASSIGN_OR_RETURN(
      std::unique_ptr<jaxpr::ClosedJaxpr> combiner,
      reduce_plan::Widened(*p.combiner, out.shape, eqn.primitive));
  if (static_cast<int>(combiner->invars.size()) != 2 * n ||
      static_cast<int>(combiner->outvars.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", eqn.primitive, "': the combiner must take ", 2 * n,
                     " values and return ", n));
  }
  // Axes the window moves over (sliced per offset; static or symbolic).
  // Positions that read padding or holes are masked (ReadMasks: constants on
  // static dims, Range at run time on symbolic padded ones; base dilation
  // needs a static dim, DilateAndPad).
  std::vector<int64_t> axes;
  J2O_ASSIGN_OR_RETURN(const int64_t offsets, wi::WindowOffsets(eqn, p, &axes));
  // A complex operand is its real [..., 2] tensor (plugin/complex_plan.h):
  // the trailing (re, im) axis rides along untouched, and the combiner's
  // complex equations are lowered by the complex recipes when inlined.
  J2O_ASSIGN_OR_RETURN(Val out_shape, e.ShapeValue(out.shape));
  std::optional<Val> out_shape_complex;
  std::vector<Val> xs, accs;
  std::vector<DType> dtypes;
  std::vector<bool> complex(n, false);
  for (int i = 0; i < n; ++i) {
    DType d = eqn.inputs[i].var->aval.dtype;
    complex[i] = jaxpr::IsComplex(d);
    if (complex[i]) {
      d = ComplexPartDType(d);
      if (!out_shape_complex) {
        out_shape_complex = e.Op("Concat", {out_shape, e.ConstI64({2})},
                                 DType::kI64, {OpAttr::Int("axis", 0)});
      }
    }
    dtypes.push_back(d);
    J2O_ASSIGN_OR_RETURN(Val x, e.In(i));
    J2O_ASSIGN_OR_RETURN(Val init, e.In(n + i));
    accs.push_back(
        e.Op("Expand", {init, complex[i] ? *out_shape_complex : out_shape}, d));
    // Pads and holes are never combined (masked below): any fill will do.
    Val fill = e.Const(jaxpr::Array::ScalarFromDouble(d, 0));
    J2O_ASSIGN_OR_RETURN(
        x, wi::DilateAndPad(e, x, d, eqn, in, p, fill, complex[i] ? 1 : 0));
    xs.push_back(x);
  }
  bool empty = false;
  for (int a = 0; a < rank; ++a) {
    empty |= out.shape[a].is_constant() && out.shape[a].constant_value() == 0;
  }
  wi::ReadMasks<E> read_masks(p, in.shape, out.shape);
  std::vector<int64_t> offset(axes.size(), 0);
  for (int64_t step = 0; !empty && step < offsets; ++step) {
    std::vector<int64_t> k(rank, 0);
    for (size_t j = 0; j < axes.size(); ++j) k[axes[j]] = offset[j];
    J2O_ASSIGN_OR_RETURN(std::optional<Val> mask, read_masks.At(e, k));
    std::vector<Val> args = accs;
    for (int i = 0; i < n; ++i) {
      if (axes.empty()) {
        args.push_back(xs[i]);
        continue;
      }
      std::vector<int64_t> starts, ends, steps;
      for (int64_t a : axes) {
        starts.push_back(k[a] * p.window_dilation[a]);
        ends.push_back(wi::WindowSliceEnd(p, a, k[a], out.shape[a]));
        steps.push_back(p.strides[a]);
      }
      args.push_back(e.Op("Slice",
                          {xs[i], e.ConstI64(starts), e.ConstI64(ends),
                           e.ConstI64(axes), e.ConstI64(steps)},
                          dtypes[i]));
    }
    J2O_ASSIGN_OR_RETURN(std::vector<Val> next, e.Inline(*combiner, args));
    if (!mask) {
      accs = std::move(next);
    } else {
      std::optional<Val> complex_mask;  // [out..., 1] for the (re, im) axis
      for (int i = 0; i < n; ++i) {
        if (complex[i] && !complex_mask) {
          complex_mask =
              e.Op("Unsqueeze", {*mask, e.ConstI64({rank})}, DType::kBool);
        }
        accs[i] = wi::Select(e, complex[i] ? *complex_mask : *mask, next[i],
                             accs[i], dtypes[i]);
      }
    }
    for (int j = static_cast<int>(axes.size()) - 1; j >= 0; --j) {
      if (++offset[j] < p.window[axes[j]]) break;
      offset[j] = 0;
    }
  }
  for (int i = 0; i < n; ++i) J2O_RETURN_IF_ERROR(e.SetOut(i, accs[i]));
  return absl::OkStatus();
}

template <class E>
absl::Status LowerReduceWindow(E& e) {
  namespace wi = window_internal;
  using jaxpr::DType;
  using wi::OnnxTypeOf;
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_ASSIGN_OR_RETURN(WindowParams p, ParseWindowParams(eqn));
  if (p.op == WindowOp::kGeneric) return LowerGenericReduceWindow(e, p);
  const jaxpr::Aval& in = eqn.inputs[0].var->aval;
  const jaxpr::Aval& out = eqn.outputs[0]->aval;
  const int rank = in.rank();
  const DType dtype = in.dtype;
  // Max/Min take u32 and u64 directly (kElementwiseOrdering): widening u32
  // to i64 would meet ONNX Runtime's i64 Max/Min (see combine below).
  J2O_ASSIGN_OR_RETURN(
      DType compute,
      ComputeDType(dtype,
                   p.op == WindowOp::kAdd ? ArithUse::kWrapping
                                          : ArithUse::kElementwiseOrdering,
                   absl::StrCat("'", eqn.primitive, "'")));
  if (jaxpr::IsComplex(dtype)) {
    return absl::UnimplementedError(
        absl::StrCat("'", eqn.primitive, "' on complex operands"));
  }
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  if (compute != dtype) {
    x = e.Op("Cast", {x}, compute, {OpAttr::Int("to", OnnxTypeOf(compute))});
  }
  // Padding and base-dilation holes are skipped by XLA, i.e. they hold the
  // op's identity; a generic reduce_window's init joins every window once.
  auto fill = e.Const(WindowIdentity(p.op, dtype));
  if (dtype != compute) {
    fill =
        e.Op("Cast", {fill}, compute, {OpAttr::Int("to", OnnxTypeOf(compute))});
  }
  std::optional<typename E::Value> init;
  if (p.init_operand) {
    J2O_ASSIGN_OR_RETURN(init, e.In(1));
    if (dtype != compute) {
      init = e.Op("Cast", {*init}, compute,
                  {OpAttr::Int("to", OnnxTypeOf(compute))});
    }
  }
  J2O_ASSIGN_OR_RETURN(x, wi::DilateAndPad(e, x, compute, eqn, in, p, fill));
  // Axes the window actually moves over (static or symbolic:
  // WindowSliceEnd); the others pass through.
  std::vector<int64_t> axes;
  J2O_ASSIGN_OR_RETURN(const int64_t offsets, wi::WindowOffsets(eqn, p, &axes));
  // ONNX Runtime 1.30's CPU Max/Min on i64 compare the low 32-bit words as
  // signed where the high words agree (Max(6, 4294967295) = 6, Max(2^31,
  // 11) = 11), and its float Max/Min order -0 and +0 by position:
  // ExactMaxMin (plugin/float_extremes.h) picks i64 with Greater/Less and
  // Where and gives floats IEEE maximum/minimum as XLA does.
  // XLA sums f16/bf16 windows in the element type, rounding after every
  // element in window order (init first); f32 partial sums differ after
  // cancellation. Each Add in f32 is rounded back (bit-exact: f32 holds
  // more than 2p+2 bits of either type).
  const bool round_each_add =
      p.op == WindowOp::kAdd && compute != dtype &&
      (dtype == DType::kF16 || dtype == DType::kBF16);
  auto combine = [&](typename E::Value a, typename E::Value b) {
    if (p.op == WindowOp::kAdd) {
      auto sum = e.Op("Add", {a, b}, compute);
      if (!round_each_add) return sum;
      sum = e.Op("Cast", {sum}, dtype, {OpAttr::Int("to", OnnxTypeOf(dtype))});
      return e.Op("Cast", {sum}, compute,
                  {OpAttr::Int("to", OnnxTypeOf(compute))});
    }
    return ExactMaxMin(e, a, b, compute, p.op == WindowOp::kMax);
  };
  bool any_out_empty = false;
  for (int64_t a : axes) {
    any_out_empty |=
        out.shape[a].is_constant() && out.shape[a].constant_value() == 0;
  }
  std::optional<typename E::Value> acc;
  if (axes.empty()) {
    acc = x;
  } else if (any_out_empty) {
    std::vector<int64_t> zeros(axes.size(), 0);
    acc = e.Op("Slice",
               {x, e.ConstI64(zeros), e.ConstI64(zeros), e.ConstI64(axes)},
               compute);
  } else {
    std::vector<int64_t> offset(axes.size(), 0);
    for (int64_t k = 0; k < offsets; ++k) {
      std::vector<int64_t> starts, ends, steps;
      for (size_t j = 0; j < axes.size(); ++j) {
        const int64_t a = axes[j];
        starts.push_back(offset[j] * p.window_dilation[a]);
        ends.push_back(wi::WindowSliceEnd(p, a, offset[j], out.shape[a]));
        steps.push_back(p.strides[a]);
      }
      auto slice = e.Op("Slice",
                        {x, e.ConstI64(starts), e.ConstI64(ends),
                         e.ConstI64(axes), e.ConstI64(steps)},
                        compute);
      if (!acc && round_each_add && init) {
        acc = combine(*init, slice);
        init.reset();
      } else {
        acc = acc ? combine(*acc, slice) : slice;
      }
      for (int j = static_cast<int>(axes.size()) - 1; j >= 0; --j) {
        if (++offset[j] < p.window[axes[j]]) break;
        offset[j] = 0;
      }
    }
  }
  auto y = *acc;
  if (init) y = combine(y, *init);
  if (compute != dtype) {
    y = e.Op("Cast", {y}, dtype, {OpAttr::Int("to", OnnxTypeOf(dtype))});
  }
  return e.SetOut(0, y);
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_WINDOW_PLAN_H_
