#include "converter2/finalize.h"

#include "ir/pass.h"
#include "ir/passes/fusions.h"
#include "ir/passes/passes.h"
#include "ir/passes/shape_folding.h"
#include "ir/verifier.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx::converter2 {
namespace {

std::vector<std::unique_ptr<ir::Pass>> CleanupPasses() {
  std::vector<std::unique_ptr<ir::Pass>> passes;
  passes.push_back(ir::CreateDeadNodeEliminationPass());
  passes.push_back(ir::CreateUnusedInitializerPruningPass());
  return passes;
}

// The generic exact rewrites (--optimize >= 1), run together to a fixpoint:
// one rewrite exposes another (Einsum -> MatMul makes a weight Transpose
// that constant folding absorbs; CSE merges what folding made equal).
std::vector<std::unique_ptr<ir::Pass>> GenericPasses() {
  std::vector<std::unique_ptr<ir::Pass>> passes;
  // Types first: several rewrites need the shapes of intermediate values.
  passes.push_back(ir::CreateTypePropagationPass());
  passes.push_back(ir::CreateIdentityEliminationPass());
  passes.push_back(ir::CreateCastEliminationPass());
  passes.push_back(ir::CreateEinsumToMatMulPass());
  passes.push_back(ir::CreateTransposeFoldingPass());
  passes.push_back(ir::CreateGemmBiasFoldingPass());
  passes.push_back(ir::CreateShapeFoldingPass());
  passes.push_back(ir::CreateReshapeFoldingPass());
  passes.push_back(ir::CreateReduceKeepdimsPass());
  passes.push_back(ir::CreateExpandEliminationPass());
  passes.push_back(ir::CreateSlicesToSplitPass());
  passes.push_back(ir::CreateSqueezeSinkingPass());
  passes.push_back(ir::CreateConstantFoldingPass());
  passes.push_back(ir::CreateCommonSubexpressionEliminationPass());
  passes.push_back(ir::CreateDeadNodeEliminationPass());
  passes.push_back(ir::CreateUnusedInitializerPruningPass());
  return passes;
}

}  // namespace

absl::Status Finalize(
    ir::Model& model, int optimize, int opset,
    const std::function<void(const std::string&, const ir::Model&)>& dump,
    const ir::FusionOptions& fusions) {
  ir::PassManagerOptions options;
  if (dump) {
    options.dump = [&dump](int, absl::string_view pass_name,
                           const ir::Model& m) {
      dump(std::string(pass_name), m);
    };
  }
  ir::PassManager manager(std::move(options));
  // Cleanup runs to a fixpoint: pruning a node can orphan an initializer
  // and vice versa.
  manager.AddFixpoint("cleanup", CleanupPasses());
  if (optimize >= 1) manager.AddFixpoint("generic", GenericPasses());
  if (optimize >= 2) {
    // Level 2: pattern fusions to native ONNX ops the opset has
    // (LayerNormalization, RMSNormalization, Softmax/LogSoftmax, Gelu;
    // Swish and Attention when `fusions` asks; ir/passes/fuse_*.cc), then
    // the generic rewrites again to clean up what they leave (unused
    // initializers, new folding chances, Transposes to merge).
    ir::AddFusionPasses(manager, opset, fusions);
    manager.AddFixpoint("generic-after-fusion", GenericPasses());
  }
  manager.Add(ir::CreateTopologicalSortPass());
  manager.Add(ir::CreateNodeNamingPass());
  manager.Add(ir::CreateTypePropagationPass());
  J2O_RETURN_IF_ERROR(manager.Run(model).status());
  // The finished model is always verified, in every build type.
  return ir::Verify(model);
}

}  // namespace jax2onnx::converter2
