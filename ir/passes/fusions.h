// The pattern fusions: chains of elementwise/reduction ops the IR pipeline
// emits for JAX's printed layer norms, softmaxes and activations, rewritten
// into the native ONNX ops, each gated on the opset that has the op. Every
// pass fires only on an exact structural match (see each file's comment)
// and otherwise leaves the graph unchanged.
#ifndef JAX2ONNX_IR_PASSES_FUSIONS_H_
#define JAX2ONNX_IR_PASSES_FUSIONS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/ir.h"
#include "ir/pass.h"

namespace jax2onnx::ir {

// What the fusion passes did, for `convert --report`: every fusion applied
// (the rule and the tensor it replaced) and every near miss, a node where a
// rule's pattern matched its core (the statistic of a norm, the exp/sum of
// a softmax, the polynomial of a gelu, ...) and a stated condition refused
// the rewrite (the reason, as each rule's file comment lists it).
struct FusionLog {
  struct Entry {
    std::string rule, tensor, reason;
  };
  std::vector<Entry> applied, near_misses;
};

struct FusionOptions {
  // Also fuse chains a bf16/f16 program computes op by op (each op in
  // float32, its result rounded to bf16/f16, as JAX's semantics require).
  // The fused op runs the whole chain in float32 and skips those roundings,
  // so results move by a few bf16 steps, and by much more where the chain
  // cancels (flax's fast variance E[x^2] - E[x]^2 in bf16): more accurate
  // than the program, but not what JAX computes. Off by default. Chains the
  // program itself computes in float32 between Casts (flax LayerNorm's
  // float32 statistics) fuse either way.
  bool fuse_low_precision_chains = false;
  // x * sigmoid(x) -> Swish (opset >= 24). Off by default: ONNX Runtime
  // 1.30 has no Swish kernel ("Could not find an implementation for
  // Swish(24)"), so a fused model would not load there.
  bool fuse_swish = false;
  // Scaled dot-product attention -> Attention (opset >= 23). Off by
  // default: ONNX Runtime 1.30's CPU kernel is no faster than the
  // MatMul/Softmax chain it replaces at 128-197 tokens, faster at 512
  // (docs/performance.md).
  bool fuse_attention = false;
  // Where applied fusions and near misses are recorded (null: nowhere). It
  // never changes what is matched.
  FusionLog* log = nullptr;
};

// A fusion rule: a matcher-and-rewriter anchored at one node (it fires
// only on an exact structural match, see its file, and returns whether it
// rewrote), the first opset that has the fused op, and the option that
// enables it (nullptr: on whenever the opset allows). One driver pass runs
// a rule over every graph of the model, backwards; the table in fusions.cc
// is the only place a fusion's name, opset and gate are stated.
struct FusionRule {
  absl::string_view name;
  int min_opset;
  bool FusionOptions::*enabled_by;
  absl::StatusOr<bool> (*fuse_at)(Graph& graph, Node* root,
                                  const FusionOptions& options);
};

// Every fusion rule, in the order they should run.
absl::Span<const FusionRule> FusionRules();

// The pass running the rule `name` ("fuse-gelu", ...) with `options`, or
// nullptr for an unknown name. The pass does nothing on a model whose
// imported opset is below the rule's; its enabling option is not consulted
// (FusionPasses applies it).
std::unique_ptr<Pass> CreateFusionPass(absl::string_view name,
                                       FusionOptions options = {});

// The fusion passes enabled at `opset` with `options`, in the order they
// should run. The passes erase the chains they replace.
std::vector<std::unique_ptr<Pass>> FusionPasses(int opset,
                                                FusionOptions options = {});
void AddFusionPasses(PassManager& manager, int opset,
                     FusionOptions options = {});

// The rules' anchors (one file each: ir/passes/fuse_*.cc).
absl::StatusOr<bool> FuseLayerNormAt(Graph& graph, Node* root,
                                     const FusionOptions& options);
absl::StatusOr<bool> FuseRmsNormAt(Graph& graph, Node* root,
                                   const FusionOptions& options);
absl::StatusOr<bool> FuseSoftmaxAt(Graph& graph, Node* root,
                                   const FusionOptions& options);
absl::StatusOr<bool> FuseGeluAt(Graph& graph, Node* root,
                                const FusionOptions& options);
absl::StatusOr<bool> FuseSwishAt(Graph& graph, Node* root,
                                 const FusionOptions& options);
absl::StatusOr<bool> FuseAttentionAt(Graph& graph, Node* root,
                                     const FusionOptions& options);

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_PASSES_FUSIONS_H_
