// Shared pattern-matching helpers of the fusion passes (ir/passes/fuse_*.cc).
// They read the ONNX graph the IR pipeline emits for JAX's printed forms and
// the forms the generic simplifications leave (constant-folded scalars,
// ReduceX(keepdims=1) instead of ReduceX(keepdims=0) -> Unsqueeze, explicit
// Expand instead of implicit broadcasting, Identity for stop_gradient).
//
// A match collects every node it walked through in a Match; the rewrite only
// happens when every output of those nodes, other than the root's, is used
// by nodes of the match alone (so deleting the chain loses nothing).
#ifndef JAX2ONNX_IR_PASSES_FUSION_MATCH_H_
#define JAX2ONNX_IR_PASSES_FUSION_MATCH_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/ir.h"
#include "ir/passes/fusions.h"

namespace jax2onnx::ir::fusion {

// The nodes a pattern walked through.
struct Match {
  absl::flat_hash_set<Node*> nodes;
  void Add(Node* n) { nodes.insert(n); }
};

// `v` with float casts skipped: a Cast to float32 of a bf16/f16 value
// (exact widening) or a Cast of a float32 value to bf16/f16 (rounding).
// This is how the IR pipeline computes a bf16/f16 op in float32 and rounds
// its result (shape ops like Unsqueeze may run on the rounded value in
// between); a fused op computing the whole chain in float32 drops these
// intermediate roundings (the skipped Casts join the match in
// UsesStayInside).
Value* StripRounding(Value* v);

// The producer of StripRounding(v) when it is a default-domain `op` node,
// else nullptr.
Node* ProducerIs(Value* v, absl::string_view op);

// True when a and b are the same value up to rounding round trips
// (StripRounding), or Casts to float32 of the same value (several Cast
// nodes of one bf16 value).
bool SameValue(const Value* a, const Value* b);

// `v` with Identity producers skipped (stop_gradient, copy and
// optimization_barrier lower to Identity); skipped nodes join `m`.
Value* SkipIdentity(Value* v, Match* m);

// The tensor of a constant (an initializer that is no graph input, or a
// Constant node's `value`), else nullptr.
const Tensor* ConstantOf(const Value* v);

// The value of a constant with one element (an initializer, a Constant
// node's `value`, or a chain of Identity/Cast/Add/Sub/Mul/Div/Neg over such
// constants: folded here so the matchers need not wait for constant
// folding). Nullopt for anything else, and for chains of more than a few
// dozen producers (each query is O(1), so matchers asking about every node
// of a deep chain stay linear).
std::optional<double> ScalarConstant(const Value* v);
// True when `v` is all zeros: a zero constant (of any size), possibly
// broadcast or reshaped (Expand, Unsqueeze, Reshape, Identity, Cast), or a
// ConstantOfShape of zero (jnp.zeros_like prints broadcast_in_dim 0.0).
bool IsZeros(const Value* v);

// The elements of a constant integer tensor (initializer or Constant node).
std::optional<std::vector<int64_t>> IntsConstant(const Value* v);

// The shape of `v`: its own, else (for outputs the pipeline left untyped)
// that of the input of a shape-preserving producer (Cast, Identity) or of
// its only consumer when that is a Cast. Nullptr when none is known.
const Shape* ShapeOf(const Value* v);
// True when both shapes are known and equal.
bool SameShape(const Value* a, const Value* b);
// The type to give a fused op's output replacing `out` computed from `x`.
Type FusedType(const Value* out, const Value* x);

// The static rank of `v`, or -1 when its shape is unknown.
int RankOf(const Value* v);
// The static size of dimension `axis` of `v`, or -1.
int64_t StaticDim(const Value* v, int axis);
// Element type of `v`, inferred through Casts and float ops for outputs the
// pipeline left untyped (UNDEFINED when unknown).
int DtypeOf(const Value* v);

// A single-axis reduction `op` (ReduceSum, ReduceMax, ReduceMean) of `v`'s
// producer over `axis` of an operand of rank `rank`, with the given
// keepdims: returns the reduced operand (skipping nothing) or nullptr.
// Axes come from the attribute (opset < 18) or the constant second input.
Value* MatchReduce(Value* v, absl::string_view op, int axis, int rank,
                   bool keepdims, Match* m);

// `v` of rank `rank` holding a reduction over `axis` with the axis kept as
// size 1: strips an Expand (to the full shape), then an Unsqueeze(axes=
// [axis]) or a Reshape inserting that 1. Returns the reduced value (rank
// `rank - 1`) with *kept = false, or `v` itself with *kept = true when there
// is no such node (the keepdims=1 form).
Value* StripKeptAxis(Value* v, int axis, int rank, bool* kept, Match* m);

// The mean over `axis` of some x, kept (rank `rank`, keepdims form) or
// reduced (rank `rank - 1`): ReduceMean, or ReduceSum divided by the static
// size of that axis of x (the divide may come before or after the kept axis
// is re-inserted). Returns x or nullptr.
Value* MatchMean(Value* v, int axis, int rank, bool kept, Match* m);
// Same, for a value of full rank `rank` with the axis kept in any form
// (keepdims=1 or reduce-then-unsqueeze/reshape/expand).
Value* MatchKeptMean(Value* v, int axis, int rank, Match* m);

// v = Mul(a, a) or Pow(a, 2): returns a.
Value* MatchSquare(Value* v, Match* m);

// The factors of a product tree rooted at `v`'s producer (a Mul): walks
// through Mul nodes whose output is used once (by the parent Mul) and is
// not a graph output; the root Mul is always walked. Returns {v} when v is
// not a Mul's output, and {} when the tree has more than 8 factors (no
// fusion wants more than three; the bound keeps each call O(1)).
std::vector<Value*> MulFactors(Value* v, Match* m);

// True when `c` is a one-element constant equal to `expected` rounded to
// float32, or, for a constant stored as bfloat16/float16 (a JAX literal in a
// bf16/f16 program, cast to float32 by the pipeline), to that type.
bool IsFloatConstant(const Value* c, double expected);

// True when every node of `m` is in `root`'s graph and every output of
// every node of `m`, except `root`, is used only by nodes of `m` and is not
// a graph output. Float-to-float Casts (rounding to bf16/f16, widening back)
// consuming nodes of `m` and whose results feed only `m` join `m`; when one
// of them rounds to bf16/f16 (the chain is computed op by op in low
// precision) the answer is `allow_dropping_rounding`.
bool UsesStayInside(Match& m, const Node* root, bool allow_dropping_rounding);

// Replaces `root`'s single output by `replacement` (keeping the root
// output's name on the replacement, so graph output names survive), then
// erases the matched nodes.
absl::Status ReplaceAndErase(Graph& graph, Node* root, Value* replacement,
                             const Match& m);

// A value with the static shape [d] holding `v` (whose shape is
// [1, ..., 1, d]): `v` itself, the operand of a Reshape producing it, or a
// new Reshape inserted before `anchor`. Nullptr when `v` has another shape.
absl::StatusOr<Value*> AsFeatureVector(Graph& graph, Node* anchor, Value* v,
                                       int64_t d, int max_rank);

// True when `v`'s static shape is [1, ..., 1, d] of rank <= max_rank.
bool IsFeatureVectorShape(const Value* v, int64_t d, int max_rank);

// The refusals every rule shares, as near-miss reasons.
inline constexpr absl::string_view kUsedOutside =
    "an intermediate of the chain is used outside it (or the chain rounds "
    "to bf16/f16 between its ops and fuse_low_precision_chains is off)";
inline constexpr absl::string_view kShapeChanges =
    "the result's shape is not the input's (the chain broadcasts)";
inline constexpr absl::string_view kNotFloat32 =
    "the input is not float32 (ONNX Runtime's CPU kernels)";

// Records in options.log (when set) that `rule` matched its core at `root`
// but refuses to rewrite for `reason`.
void NearMiss(const FusionOptions& options, absl::string_view rule,
              const Node* root, absl::string_view reason);

// The default-domain opset the model imports (0 when absent).
int DefaultOpset(const Model& model);

// Calls `fuse_at(graph, node)` on every live node of the main graph, of the
// function bodies and of their subgraphs, each graph walked from its last
// node backwards (so the longest chain, ending last, is tried first) and
// skipping nodes erased meanwhile. Returns whether any call changed the
// model.
absl::StatusOr<bool> ForEachNodeBackwards(
    Model& model,
    const std::function<absl::StatusOr<bool>(Graph&, Node*)>& fuse_at);

}  // namespace jax2onnx::ir::fusion

#endif  // JAX2ONNX_IR_PASSES_FUSION_MATCH_H_
