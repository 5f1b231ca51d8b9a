// The one place that decides how bf16 and f16 values run in ONNX Runtime's
// CPU execution provider, applied to the finished model of both pipelines.
//
// JAX programs compute in bf16/f16 with one rounding per primitive (XLA CPU's
// FloatNormalization pass runs each bf16 HLO op in f32 and rounds its result;
// dots and reductions accumulate in f32 and round once). ONNX Runtime 1.30's
// CPU kernels (onnxruntime-node) take bf16 only for data movement and Cast;
// for f16 it has more kernels, but an f16 node without a kernel is silently
// wrapped in Casts by ORT's InsertCastTransformer, whose duplicate-Cast
// removal then drops the f16 rounding between such nodes (probed: a chain
// Cast(f16) -> Exp -> Log -> Cast(f32) returns its f32 input unrounded). So
// the model must never rely on ORT for low-precision arithmetic.
//
// WidenLowPrecisionForOrtCpu rewrites every node that reads or writes a
// bf16/f16 tensor and whose op is not in the data-movement list below: each
// bf16/f16 input is Cast to f32, the node runs in f32, and each bf16/f16
// output is Cast back under its original name. Graph inputs, outputs and
// every value's dtype stay as JAX declared them. For +, -, *, /, sqrt and
// conversions this is bit-exact (f32 has more than 2p+2 bits for p = 8 or
// 11, so double rounding is innocuous); for the transcendental ops the f32
// result rounded once is within one bf16/f16 ulp of the exact result; data
// movement, comparisons, min/max, select and sign are exact. Reductions and
// matmuls that the recipes did not already widen accumulate in f32 and round
// once, as XLA CPU does for bf16.
#ifndef JAX2ONNX_PLUGIN_LOW_PRECISION_H_
#define JAX2ONNX_PLUGIN_LOW_PRECISION_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::plugin {

// True when ORT's CPU provider runs `op_type` on bf16 and f16 tensors itself
// (pure data movement, Cast, control flow; see low_precision.cc for the
// probe), so the node needs no widening. `reduction` is the node's
// ScatterND/ScatterElements reduction attribute ("none" if absent).
bool OrtCpuMovesLowPrecision(absl::string_view op_type,
                             absl::string_view reduction = "none");

// Widens the bf16/f16 nodes of the main graph and of every subgraph (If,
// Loop, Scan bodies) as described above; a model with no bf16/f16 type is
// returned untouched. A node whose operand types cannot be derived is left
// as it is (ONNX Runtime then names it on load, nothing is silently
// changed). Model functions (the converters emit none yet) are not visited:
// their bodies carry no types.
absl::Status WidenLowPrecisionForOrtCpu(onnx::ModelProto& model);

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_LOW_PRECISION_H_
