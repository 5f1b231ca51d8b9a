// Pipeline-independent lowering recipe of conv_general_dilated, written
// once against the emitter interface of plugin/emit.h and instantiated by
// plugins/ and plugins2/; it shares plugin/window_plan.h's helpers (Dilate,
// CropNegative, Transpose).
//
// conv_general_dilated: operands are transposed to N,C,spatial / O,I,spatial,
// lhs_dilation is built explicitly (Gather + Where on static spatial dims),
// padding is a Slice (negative parts) then Conv pads, rhs_dilation becomes
// Conv dilations, feature_group_count Conv's group, batch_group_count is
// folded into groups (lhs batch split group-major, as XLA does). ONNX
// Runtime's CPU Conv has only float kernels: f32/f16/bf16 and 8-bit integer
// convolutions (exact in f32 up to 1024 products per output) use Conv; f64
// and wider integers are computed exactly without Conv (ExactConv: strided
// Slices and grouped MatMuls in f64 or wrapping i64).
#ifndef JAX2ONNX_PLUGIN_CONV_PLAN_H_
#define JAX2ONNX_PLUGIN_CONV_PLAN_H_

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

// Decoded conv_general_dilated params (window_plan.cc).
struct ConvParams {
  std::vector<int64_t> lhs_spec, rhs_spec, out_spec;  // batch/feature first
  std::vector<int64_t> strides, lhs_dilation, rhs_dilation;
  std::vector<std::pair<int64_t, int64_t>> padding;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
};
absl::StatusOr<ConvParams> ParseConvParams(const jaxpr::Eqn& eqn);

namespace window_internal {

// ONNX Conv semantics (x: N,C,spatial; w: M,C/group,kernel; pads, strides,
// dilations, group) computed exactly in `dtype` (i64 or f64), where ONNX
// Runtime has no Conv kernel: after one Pad, each kernel offset contributes
// a strided Slice of x contracted with that offset's weights by a grouped
// MatMul ([N,O...,g,1,C/g] x [g,C/g,M/g]); the contributions are added. The
// kernel must be static but for its input features (see below). Returns
// N,M,spatial like Conv.
template <class E>
absl::StatusOr<V<E>> ExactConv(E& e, V<E> x, V<E> w, jaxpr::DType dtype,
                               const std::vector<jaxpr::DimExpr>& w_shape,
                               const std::vector<int64_t>& strides,
                               const std::vector<int64_t>& dilations,
                               const std::vector<int64_t>& pads,
                               int64_t group) {
  const int spatial = static_cast<int>(w_shape.size()) - 2;
  // The kernel's spatial dims and output features must be static (they
  // shape the unrolling); its input features may be symbolic without
  // feature groups (the weight gradient of a conv contracts over the
  // batch): the Reshapes then infer that dim (-1).
  for (size_t i = 0; i < w_shape.size(); ++i) {
    if (w_shape[i].is_constant() || (i == 1 && group == 1)) continue;
    return absl::UnimplementedError(absl::StrCat(
        "conv_general_dilated on ", jaxpr::ShortName(dtype),
        " with the symbolic kernel dimension '", w_shape[i].ToString(),
        "': the exact (non-Conv) path needs static kernel spatial dims and "
        "output features (and static input features with feature groups)"));
  }
  std::vector<int64_t> kernel;
  int64_t offsets = 1;
  for (int i = 0; i < spatial; ++i) {
    kernel.push_back(w_shape[2 + i].constant_value());
    offsets *= kernel.back();
  }
  if (offsets > 4096) {
    return absl::UnimplementedError(absl::StrCat(
        "conv_general_dilated on ", jaxpr::ShortName(dtype), " with ", offsets,
        " kernel offsets: the exact path unrolls at most 4096"));
  }
  const int64_t m = w_shape[0].constant_value();
  // -1: inferred by Reshape (symbolic input features, group == 1).
  const int64_t cg =
      w_shape[1].is_constant() ? w_shape[1].constant_value() : -1;
  const int64_t mg = m / group;
  const int rank = spatial + 2;
  // One Pad for all spatial axes.
  std::vector<int64_t> pad_all(2 * rank, 0);
  bool any_pad = false;
  for (int i = 0; i < spatial; ++i) {
    pad_all[2 + i] = pads[i];
    pad_all[rank + 2 + i] = pads[spatial + i];
    any_pad = any_pad || pads[i] != 0 || pads[spatial + i] != 0;
  }
  if (any_pad) {
    x = e.Op("Pad",
             {x, e.ConstI64(pad_all),
              e.Const(jaxpr::Array::ScalarFromDouble(dtype, 0))},
             dtype);
  }
  // Rows laid out N,O...,C for the contraction.
  std::vector<int64_t> to_last = {0};
  for (int i = 0; i < spatial; ++i) to_last.push_back(2 + i);
  to_last.push_back(1);
  // Reshape's 0 copies N and O... (which may be symbolic).
  std::vector<int64_t> split_channels(spatial + 1, 0);
  split_channels.insert(split_channels.end(), {group, 1, cg});
  std::vector<int64_t> merge_channels(spatial + 1, 0);
  merge_channels.push_back(m);
  std::vector<int64_t> spatial_axes;
  for (int i = 0; i < spatial; ++i) spatial_axes.push_back(2 + i);
  std::optional<V<E>> sum;
  std::vector<int64_t> k(spatial, 0);
  for (int64_t n = 0; n < offsets; ++n) {
    std::vector<int64_t> starts, ends, w_starts, w_ends;
    for (int i = 0; i < spatial; ++i) {
      starts.push_back(k[i] * dilations[i]);
      const int64_t tail = (kernel[i] - 1 - k[i]) * dilations[i];
      ends.push_back(tail == 0 ? std::numeric_limits<int64_t>::max() : -tail);
      w_starts.push_back(k[i]);
      w_ends.push_back(k[i] + 1);
    }
    V<E> xk = e.Op("Slice",
                   {x, e.ConstI64(starts), e.ConstI64(ends),
                    e.ConstI64(spatial_axes), e.ConstI64(strides)},
                   dtype);
    xk = Transpose(e, xk, dtype, to_last);
    xk = e.Op("Reshape", {xk, e.ConstI64(split_channels)}, dtype);
    V<E> wk = e.Op(
        "Slice",
        {w, e.ConstI64(w_starts), e.ConstI64(w_ends), e.ConstI64(spatial_axes)},
        dtype);
    wk = e.Op("Reshape", {wk, e.ConstI64({group, mg, cg})}, dtype);
    wk = e.Op("Transpose", {wk}, dtype, {OpAttr::Ints("perm", {0, 2, 1})});
    V<E> yk = e.Op("MatMul", {xk, wk}, dtype);
    sum = sum ? e.Op("Add", {*sum, yk}, dtype) : yk;
    for (int i = spatial - 1; i >= 0; --i) {
      if (++k[i] < kernel[i]) break;
      k[i] = 0;
    }
  }
  V<E> y = e.Op("Reshape", {*sum, e.ConstI64(merge_channels)}, dtype);
  return Transpose(e, y, dtype, InversePerm(to_last));
}

}  // namespace window_internal

template <class E>
absl::Status LowerConv(E& e) {
  namespace wi = window_internal;
  using jaxpr::DType;
  using wi::OnnxTypeOf;
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_ASSIGN_OR_RETURN(ConvParams p, ParseConvParams(eqn));
  const jaxpr::Aval& lhs = eqn.inputs[0].var->aval;
  const jaxpr::Aval& rhs = eqn.inputs[1].var->aval;
  const DType out_dtype = eqn.outputs[0]->aval.dtype;
  const int rank = lhs.rank();
  const int spatial = rank - 2;
  if (spatial < 1) {
    return absl::UnimplementedError(
        "conv_general_dilated without spatial dimensions (ONNX Conv needs at "
        "least one)");
  }
  if (jaxpr::IsComplex(out_dtype) || jaxpr::IsComplex(lhs.dtype)) {
    return absl::UnimplementedError(
        "conv_general_dilated on complex operands: ONNX has no complex Conv");
  }
  // An empty output (window larger than the padded input): ORT's Conv
  // rejects it, and it has no elements to compute anyway.
  for (const jaxpr::DimExpr& d : eqn.outputs[0]->aval.shape) {
    if (d.is_constant() && d.constant_value() == 0) {
      J2O_ASSIGN_OR_RETURN(auto shape,
                           e.ShapeValue(eqn.outputs[0]->aval.shape));
      return e.SetOut(
          0,
          e.Op("Expand",
               {e.Const(jaxpr::Array::ScalarFromDouble(out_dtype, 0)), shape},
               out_dtype));
    }
  }
  // ONNX Runtime's CPU Conv has only f32 (and f16) kernels. f32 holds every
  // product and partial sum of 8-bit integers exactly (< 2^24 for up to 1024
  // terms per output), so those use Conv; other integers and f64 take the
  // exact path (ExactConv: Slices and MatMul in i64, whose wraparound gives
  // the low bits of any narrower integer result, or in f64).
  auto exact_in_f32 = [](DType d) {
    return d == DType::kF32 || d == DType::kF16 || d == DType::kBF16 ||
           d == DType::kBool || d == DType::kI8 || d == DType::kU8;
  };
  int64_t terms = 1;
  for (int i = 1; i < rank; ++i) {
    const jaxpr::DimExpr& d = rhs.shape[p.rhs_spec[i]];
    terms *= d.is_constant() ? d.constant_value() : 1 << 30;
  }
  bool use_conv = !(jaxpr::IsInteger(lhs.dtype) && terms > 1024);
  for (DType d : {lhs.dtype, rhs.dtype, out_dtype}) {
    // An integer output only receives the exact f32 result of 8-bit inputs.
    if (!exact_in_f32(d) &&
        !(d == out_dtype && jaxpr::IsInteger(d) &&
          jaxpr::IsInteger(lhs.dtype) && exact_in_f32(lhs.dtype))) {
      use_conv = false;
    }
  }
  DType compute = DType::kF32;
  if (!use_conv) {
    // XLA converts both operands to the result type before accumulating.
    if (jaxpr::IsFloat(out_dtype)) {
      compute = DType::kF64;
    } else if (jaxpr::IsInteger(out_dtype)) {
      compute = DType::kI64;
    } else {
      return absl::UnimplementedError(absl::StrCat(
          "conv_general_dilated producing ", jaxpr::ShortName(out_dtype),
          " from ", jaxpr::ShortName(lhs.dtype), " operands"));
    }
  }
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  J2O_ASSIGN_OR_RETURN(auto w, e.In(1));
  if (lhs.dtype != compute) {
    x = e.Op("Cast", {x}, compute, {OpAttr::Int("to", OnnxTypeOf(compute))});
  }
  if (rhs.dtype != compute) {
    w = e.Op("Cast", {w}, compute, {OpAttr::Int("to", OnnxTypeOf(compute))});
  }
  x = wi::Transpose(e, x, compute, p.lhs_spec);
  w = wi::Transpose(e, w, compute, p.rhs_spec);
  // Shapes in N,C,spatial order.
  std::vector<jaxpr::DimExpr> x_shape;
  for (int64_t a : p.lhs_spec) x_shape.push_back(lhs.shape[a]);
  std::vector<int64_t> spatial_axes;
  for (int i = 0; i < spatial; ++i) spatial_axes.push_back(2 + i);
  // lhs_dilation (zeros between input rows), static dims only.
  for (int i = 0; i < spatial; ++i) {
    if (p.lhs_dilation[i] == 1) continue;
    const jaxpr::DimExpr& d = x_shape[2 + i];
    if (!d.is_constant()) {
      return absl::UnimplementedError(absl::StrCat(
          "conv_general_dilated: lhs_dilation on the symbolic spatial "
          "dimension '",
          d.ToString(), "'"));
    }
    x = wi::Dilate(e, x, compute, 2 + i, rank, d.constant_value(),
                   p.lhs_dilation[i],
                   e.Const(jaxpr::Array::ScalarFromDouble(compute, 0)));
  }
  x = wi::CropNegative(e, x, compute, spatial_axes, p.padding);
  std::vector<int64_t> pads(2 * spatial);
  for (int i = 0; i < spatial; ++i) {
    pads[i] = std::max<int64_t>(0, p.padding[i].first);
    pads[spatial + i] = std::max<int64_t>(0, p.padding[i].second);
  }
  int64_t group = p.feature_group_count;
  if (p.batch_group_count > 1) {
    // XLA splits the lhs batch group-major: [G, N/G]. Moving G next to the
    // features turns batch groups into feature groups.
    const int64_t g = p.batch_group_count;
    if (p.feature_group_count != 1) {
      return absl::InvalidArgumentError(
          "conv_general_dilated: batch_group_count and feature_group_count "
          "both > 1");
    }
    const jaxpr::DimExpr& n = x_shape[0];
    if (!n.is_constant() || n.constant_value() % g != 0) {
      return absl::UnimplementedError(absl::StrCat(
          "conv_general_dilated: batch_group_count=", g,
          " needs a static batch divisible by it, got '", n.ToString(), "'"));
    }
    std::vector<jaxpr::DimExpr> full = {
        jaxpr::DimExpr::Constant(g),
        jaxpr::DimExpr::Constant(n.constant_value() / g)};
    for (int i = 1; i < rank; ++i) {
      jaxpr::DimExpr d = x_shape[i];
      if (i >= 2 && p.lhs_dilation[i - 2] > 1 && d.is_constant()) {
        d = jaxpr::DimExpr::Constant(
            (d.constant_value() - 1) * p.lhs_dilation[i - 2] + 1);
      }
      if (i >= 2) {
        const auto [lo, hi] = p.padding[i - 2];
        if ((lo < 0 || hi < 0) && d.is_constant()) {
          d = jaxpr::DimExpr::Constant(d.constant_value() +
                                       std::min<int64_t>(lo, 0) +
                                       std::min<int64_t>(hi, 0));
        }
      }
      full.push_back(d);
    }
    J2O_ASSIGN_OR_RETURN(auto split_value, e.ShapeValue(full));
    x = e.Op("Reshape", {x, split_value}, compute);
    std::vector<int64_t> perm = {1, 0};
    for (int i = 2; i <= rank; ++i) perm.push_back(i);
    x = e.Op("Transpose", {x}, compute, {OpAttr::Ints("perm", perm)});
    std::vector<jaxpr::DimExpr> merged_dims = {full[1]};
    jaxpr::DimExpr channels = full[2];
    if (!channels.is_constant()) {
      return absl::UnimplementedError(
          "conv_general_dilated: batch_group_count with symbolic features");
    }
    merged_dims.push_back(
        jaxpr::DimExpr::Constant(channels.constant_value() * g));
    for (int i = 0; i < spatial; ++i) merged_dims.push_back(full[3 + i]);
    J2O_ASSIGN_OR_RETURN(auto merged_value, e.ShapeValue(merged_dims));
    x = e.Op("Reshape", {x, merged_value}, compute);
    group = g;
  }
  std::vector<OpAttr> attrs = {OpAttr::Ints("strides", p.strides),
                               OpAttr::Ints("dilations", p.rhs_dilation),
                               OpAttr::Ints("pads", pads),
                               OpAttr::Int("group", group)};
  wi::V<E> y;
  if (use_conv) {
    y = e.Op("Conv", {x, w}, compute, std::move(attrs));
  } else {
    std::vector<jaxpr::DimExpr> w_shape;
    for (int64_t a : p.rhs_spec) w_shape.push_back(rhs.shape[a]);
    J2O_ASSIGN_OR_RETURN(y, wi::ExactConv(e, x, w, compute, w_shape, p.strides,
                                          p.rhs_dilation, pads, group));
  }
  if (compute != out_dtype) {
    y = e.Op("Cast", {y}, out_dtype,
             {OpAttr::Int("to", OnnxTypeOf(out_dtype))});
  }
  y = wi::Transpose(e, y, out_dtype, wi::InversePerm(p.out_spec));
  return e.SetOut(0, y);
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_CONV_PLAN_H_
