// identity-elimination: removes Identity nodes by pointing every consumer
// of the Identity's output at its input, in the main graph, subgraphs and
// function bodies. The node itself is left for dead-node-elimination.
//
// Refuses (keeps): an Identity whose output is a graph output (its name is
// part of the model's or the body's interface, and a graph output may not
// be a graph input or an outer value under another name); an Identity whose
// input is absent; non-tensor inputs are handled like tensors (Identity is
// the same for every type).
#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

class IdentityElimination : public Pass {
 public:
  absl::string_view name() const override { return "identity-elimination"; }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      for (Node* node : g->nodes()) {
        if (!IsOp(node, "Identity") || node->num_inputs() != 1 ||
            node->input(0) == nullptr || node->num_outputs() != 1) {
          continue;
        }
        Value* out = node->output(0);
        if (out->is_graph_output() || out->num_uses() == 0) continue;
        ReplaceAllUsesWith(out, node->input(0));
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateIdentityEliminationPass() {
  return std::make_unique<IdentityElimination>();
}

}  // namespace jax2onnx::ir
