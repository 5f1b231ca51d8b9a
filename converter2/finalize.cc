#include "converter2/finalize.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "glog/logging.h"
#include "ir/pass.h"
#include "ir/passes/fusions.h"
#include "ir/verifier.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx::converter2 {
namespace {

// The pipeline, declared by pass name (ir/pass_manager.cc's registry).
// Cleanup runs to a fixpoint: pruning a node can orphan an initializer and
// vice versa.
constexpr absl::string_view kCleanupPasses[] = {"dead-node-elimination",
                                                "unused-initializer-pruning"};

// The generic exact rewrites (--optimize >= 1), run together to a fixpoint:
// one rewrite exposes another (Einsum -> MatMul makes a weight Transpose
// that constant folding absorbs; CSE merges what folding made equal).
// Types first: several rewrites need the shapes of intermediate values.
constexpr absl::string_view kGenericPasses[] = {
    "type-propagation",
    "identity-elimination",
    "cast-elimination",
    "einsum-to-matmul",
    "transpose-folding",
    "gemm-bias-folding",
    "shape-folding",
    "reshape-folding",
    "reduce-keepdims",
    "expand-elimination",
    "slices-to-split",
    "squeeze-sinking",
    "constant-folding",
    "common-subexpression-elimination",
    "dead-node-elimination",
    "unused-initializer-pruning",
};

// Run once at the end, at every level: a valid order, unique node names,
// and types on every value the type rules reach.
constexpr absl::string_view kFinalPasses[] = {
    "topological-sort", "node-naming", "type-propagation"};

std::vector<std::unique_ptr<ir::Pass>> Passes(
    absl::Span<const absl::string_view> names) {
  std::vector<std::unique_ptr<ir::Pass>> passes;
  for (absl::string_view name : names) {
    std::unique_ptr<ir::Pass> pass = ir::CreatePass(name);
    CHECK(pass != nullptr) << "no IR pass named " << name;
    passes.push_back(std::move(pass));
  }
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
  manager.AddFixpoint("cleanup", Passes(kCleanupPasses));
  if (optimize >= 1) manager.AddFixpoint("generic", Passes(kGenericPasses));
  if (optimize >= 2) {
    // Level 2: pattern fusions to native ONNX ops the opset has
    // (LayerNormalization, RMSNormalization, Softmax/LogSoftmax, Gelu;
    // Swish and Attention when `fusions` asks; ir/passes/fuse_*.cc), then
    // the generic rewrites again to clean up what they leave (unused
    // initializers, new folding chances, Transposes to merge).
    ir::AddFusionPasses(manager, opset, fusions);
    manager.AddFixpoint("generic-after-fusion", Passes(kGenericPasses));
  }
  for (std::unique_ptr<ir::Pass>& pass : Passes(kFinalPasses)) {
    manager.Add(std::move(pass));
  }
  J2O_RETURN_IF_ERROR(manager.Run(model).status());
  // The finished model is always verified, in every build type.
  return ir::Verify(model);
}

}  // namespace jax2onnx::converter2
