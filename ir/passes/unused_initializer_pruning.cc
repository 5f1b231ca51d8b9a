// unused-initializer-pruning: removes initializers that no node uses (uses
// from nodes inside subgraphs count) and that are not graph outputs, in the
// main graph and its subgraphs.
//
// Refuses (keeps): initializers that are also graph inputs (they are
// caller-overridable defaults, part of the model's signature); sparse
// initializers (carried through untouched).
#include "ir/passes/passes.h"

namespace jax2onnx::ir {
namespace {

class UnusedInitializerPruning : public Pass {
 public:
  absl::string_view name() const override {
    return "unused-initializer-pruning";
  }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      absl::StatusOr<size_t> removed =
          g->RemoveInitializersIf([](const Value* v) {
            return v->num_uses() == 0 && !v->is_graph_output() &&
                   !v->is_graph_input();
          });
      if (!removed.ok()) return removed.status();
      changed |= *removed > 0;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateUnusedInitializerPruningPass() {
  return std::make_unique<UnusedInitializerPruning>();
}

}  // namespace jax2onnx::ir
