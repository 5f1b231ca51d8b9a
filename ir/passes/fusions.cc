#include "ir/passes/fusions.h"

#include "ir/passes/fusion_match.h"

namespace jax2onnx::ir {
namespace {

// Norms first: their chains contain Mul trees the activation matchers would
// otherwise inspect for nothing. Attention after softmax: it matches the
// Softmax node.
constexpr FusionRule kFusionRules[] = {
    {"fuse-layer-norm", 17, nullptr, &FuseLayerNormAt},
    {"fuse-rms-norm", 23, nullptr, &FuseRmsNormAt},
    {"fuse-softmax", 13, nullptr, &FuseSoftmaxAt},
    {"fuse-gelu", 20, nullptr, &FuseGeluAt},
    {"fuse-swish", 24, &FusionOptions::fuse_swish, &FuseSwishAt},
    {"fuse-attention", 23, &FusionOptions::fuse_attention, &FuseAttentionAt},
};

class FusionPass : public Pass {
 public:
  FusionPass(const FusionRule& rule, FusionOptions options)
      : rule_(rule), options_(options) {}
  absl::string_view name() const override { return rule_.name; }
  absl::StatusOr<bool> Run(Model& model) override {
    if (fusion::DefaultOpset(model) < rule_.min_opset) return false;
    return fusion::ForEachNodeBackwards(
        model, [this](Graph& g, Node* n) -> absl::StatusOr<bool> {
          // The root's output name before the rewrite moves it.
          const std::string tensor =
              options_.log != nullptr && n->num_outputs() > 0
                  ? n->output(0)->name()
                  : std::string();
          absl::StatusOr<bool> fused = rule_.fuse_at(g, n, options_);
          if (fused.ok() && *fused && options_.log != nullptr) {
            options_.log->applied.push_back(
                {std::string(rule_.name), tensor, ""});
          }
          return fused;
        });
  }

 private:
  const FusionRule& rule_;
  FusionOptions options_;
};

}  // namespace

absl::Span<const FusionRule> FusionRules() { return kFusionRules; }

std::unique_ptr<Pass> CreateFusionPass(absl::string_view name,
                                       FusionOptions options) {
  for (const FusionRule& rule : kFusionRules) {
    if (rule.name == name) return std::make_unique<FusionPass>(rule, options);
  }
  return nullptr;
}

std::vector<std::unique_ptr<Pass>> FusionPasses(int opset,
                                                FusionOptions options) {
  std::vector<std::unique_ptr<Pass>> passes;
  for (const FusionRule& rule : kFusionRules) {
    if (opset < rule.min_opset) continue;
    if (rule.enabled_by != nullptr && !(options.*rule.enabled_by)) continue;
    passes.push_back(std::make_unique<FusionPass>(rule, options));
  }
  return passes;
}

void AddFusionPasses(PassManager& manager, int opset, FusionOptions options) {
  for (std::unique_ptr<Pass>& p : FusionPasses(opset, options)) {
    manager.Add(std::move(p));
  }
}

}  // namespace jax2onnx::ir
