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

#include "ir/pass.h"

namespace jax2onnx::ir {

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
};

// "fuse-layer-norm": LayerNormalization (opset >= 17).
std::unique_ptr<Pass> CreateFuseLayerNormPass(FusionOptions options = {});
// "fuse-rms-norm": RMSNormalization (opset >= 23).
std::unique_ptr<Pass> CreateFuseRmsNormPass(FusionOptions options = {});
// "fuse-softmax": Softmax and LogSoftmax (opset >= 13).
std::unique_ptr<Pass> CreateFuseSoftmaxPass(FusionOptions options = {});
// "fuse-gelu": Gelu, tanh and erf forms (opset >= 20).
std::unique_ptr<Pass> CreateFuseGeluPass(FusionOptions options = {});
// "fuse-swish": Swish (opset >= 24).
std::unique_ptr<Pass> CreateFuseSwishPass(FusionOptions options = {});
// "fuse-attention": Attention (opset >= 23); needs Softmax fused first.
std::unique_ptr<Pass> CreateFuseAttentionPass(FusionOptions options = {});

// The fusion passes available at `opset`, in the order they should run
// (each also checks the model's imported opset, so a pass given a model of
// a lower opset does nothing). The passes erase the chains they replace.
std::vector<std::unique_ptr<Pass>> FusionPasses(int opset,
                                                FusionOptions options = {});
void AddFusionPasses(PassManager& manager, int opset,
                     FusionOptions options = {});

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_PASSES_FUSIONS_H_
