#include "converter2/finalize.h"

#include "ir/pass.h"
#include "ir/passes/passes.h"
#include "ir/verifier.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx::converter2 {

absl::Status Finalize(
    ir::Model& model,
    const std::function<void(const std::string&, const ir::Model&)>& dump) {
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
  std::vector<std::unique_ptr<ir::Pass>> cleanup;
  cleanup.push_back(ir::CreateDeadNodeEliminationPass());
  cleanup.push_back(ir::CreateUnusedInitializerPruningPass());
  manager.AddFixpoint("cleanup", std::move(cleanup));
  manager.Add(ir::CreateTopologicalSortPass());
  J2O_RETURN_IF_ERROR(manager.Run(model).status());
  // The finished model is always verified, in every build type.
  return ir::Verify(model);
}

}  // namespace jax2onnx::converter2
