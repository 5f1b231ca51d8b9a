// Pipeline-independent planning for the shape, reduction and linalg lowering
// families: parameter decoding (padding configs, slice windows, dimension
// numbers), the Einsum equation of a dot_general, and the dtype each ONNX
// kernel family must compute in so ONNX Runtime has a kernel and the JAX
// result is reproduced exactly.
#ifndef JAX2ONNX_PLUGIN_LAX_PLAN_H_
#define JAX2ONNX_PLUGIN_LAX_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/dtype.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::plugin {

// ---- pad ----
struct PadDim {
  int64_t lo = 0;
  int64_t hi = 0;
  int64_t interior = 0;
  // lo/hi as dimensions: symbolic when the config names symbols (`(b, 0,
  // 0)`: StableHLO dynamic_pad under shape polymorphism), else lo/hi.
  jaxpr::DimExpr lo_dim, hi_dim;
  bool symbolic() const {
    return !lo_dim.is_constant() || !hi_dim.is_constant();
  }
};
// `padding_config=((lo, hi, interior), ...)`, one triple per operand dim;
// interior must be a constant >= 0; lo and hi may be symbolic.
absl::StatusOr<std::vector<PadDim>> ParsePaddingConfig(const jaxpr::Eqn& eqn,
                                                       int rank);

// ---- slice ----
// The non-trivial axes of a lax.slice as ONNX Slice inputs. An axis whose
// window is the whole (static) dimension with stride 1 is left out, so
// symbolic dimensions pass through untouched.
struct SlicePlan {
  std::vector<int64_t> starts, ends, axes, steps;
};
absl::StatusOr<SlicePlan> PlanSlice(const jaxpr::Eqn& eqn);

// ---- broadcast_in_dim ----
// The output axes not named by `broadcast_dimensions` (what Unsqueeze must
// insert); errors unless the dims are strictly increasing and in range.
absl::StatusOr<std::vector<int64_t>> BroadcastInsertedAxes(
    const std::vector<int64_t>& broadcast_dimensions, int operand_rank,
    int out_rank);

// ---- dot_general ----
struct DotPlan {
  // True when ONNX MatMul computes the dot directly: batch dims lead on both
  // sides in the same order, lhs contracts its last dim, rhs contracts the
  // dim right after its batch dims, and each side has at most the free dims
  // MatMul's broadcasting reads the JAX way.
  bool use_matmul = false;
  // Otherwise, the Einsum equation (output: batch, lhs free, rhs free).
  std::string einsum_equation;
};
absl::StatusOr<DotPlan> PlanDotGeneral(const jaxpr::Eqn& eqn);

// ---- compute dtypes ----
// How an ONNX op combines elements; it decides which wider dtype keeps the
// JAX result exact.
enum class ArithUse {
  // Sums and products (ReduceSum/Prod, CumSum, Mul, MatMul, Einsum): integer
  // results only need the low bits, so wraparound in a wider signed type
  // followed by a Cast back (which truncates) is exact.
  kWrapping,
  // Comparisons (ReduceMax/Min, ArgMax/Min, Max/Min): the wider type must
  // hold every value.
  kOrdering,
  // Elementwise Max/Min (scans): like kOrdering, but ORT's Max/Min also take
  // u32 and u64 directly.
  kElementwiseOrdering,
  // Data movement only (Pad): any type of the same values.
  kMoving,
};
// The dtype to compute `dtype` values in for `use`: f16/bf16 -> f32, narrow
// integers -> i32 or i64, bool -> i32 (for ordering and wrapping), u64 under
// ordering is an error naming `what`. Identity for types ORT's kernels take.
absl::StatusOr<jaxpr::DType> ComputeDType(jaxpr::DType dtype, ArithUse use,
                                          absl::string_view what);

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_LAX_PLAN_H_
