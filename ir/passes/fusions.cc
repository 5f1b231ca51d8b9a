#include "ir/passes/fusions.h"

namespace jax2onnx::ir {

std::vector<std::unique_ptr<Pass>> FusionPasses(int opset,
                                                FusionOptions options) {
  std::vector<std::unique_ptr<Pass>> passes;
  // Norms first: their chains contain Mul trees the activation matchers
  // would otherwise inspect for nothing.
  if (opset >= 17) passes.push_back(CreateFuseLayerNormPass(options));
  if (opset >= 23) passes.push_back(CreateFuseRmsNormPass(options));
  if (opset >= 13) passes.push_back(CreateFuseSoftmaxPass(options));
  if (opset >= 20) passes.push_back(CreateFuseGeluPass(options));
  if (opset >= 24 && options.fuse_swish) {
    passes.push_back(CreateFuseSwishPass(options));
  }
  // After fuse-softmax: it matches the Softmax node.
  if (opset >= 23 && options.fuse_attention) {
    passes.push_back(CreateFuseAttentionPass(options));
  }
  return passes;
}

void AddFusionPasses(PassManager& manager, int opset, FusionOptions options) {
  for (std::unique_ptr<Pass>& p : FusionPasses(opset, options)) {
    manager.Add(std::move(p));
  }
}

}  // namespace jax2onnx::ir
