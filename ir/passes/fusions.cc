#include "ir/passes/fusions.h"

namespace jax2onnx::ir {

std::vector<std::unique_ptr<Pass>> FusionPasses(int opset) {
  std::vector<std::unique_ptr<Pass>> passes;
  // Norms first: their chains contain Mul trees the activation matchers
  // would otherwise inspect for nothing.
  if (opset >= 17) passes.push_back(CreateFuseLayerNormPass());
  if (opset >= 23) passes.push_back(CreateFuseRmsNormPass());
  if (opset >= 13) passes.push_back(CreateFuseSoftmaxPass());
  if (opset >= 20) passes.push_back(CreateFuseGeluPass());
  if (opset >= 24) passes.push_back(CreateFuseSwishPass());
  return passes;
}

void AddFusionPasses(PassManager& manager, int opset) {
  for (std::unique_ptr<Pass>& p : FusionPasses(opset)) {
    manager.Add(std::move(p));
  }
}

}  // namespace jax2onnx::ir
