// dead-node-elimination: removes nodes none of whose outputs is used by a
// node (in any graph) or listed as a graph output, in the main graph, in
// subgraphs and in function bodies. Walking each graph backwards removes
// whole dead chains in one run. Nodes without outputs are removed too.
//
// Refuses (keeps): a node with at least one used output, even if others are
// unused (outputs are not pruned individually); subgraph outputs (they are
// part of the control-flow op's contract). ONNX ops have no side effects
// observable from outside the graph; random ops (RandomNormal, Bernoulli,
// ...) whose results are unused are removed like any other.
#include "ir/passes/passes.h"

namespace jax2onnx::ir {
namespace {

bool IsDead(const Node* node) {
  for (int i = 0; i < node->num_outputs(); ++i) {
    const Value* v = node->output(i);
    if (v->num_uses() > 0 || v->is_graph_output()) return false;
  }
  return true;
}

absl::StatusOr<bool> EliminateIn(Graph& graph) {
  bool changed = false;
  for (Node* node : graph.nodes_reversed()) {
    if (IsDead(node)) {
      if (absl::Status s = graph.Erase(node); !s.ok()) return s;
      changed = true;
      continue;
    }
    // Inner removals may free outer values defined earlier in this graph;
    // the backward walk reaches their producers afterwards.
    for (Graph* sub : node->Subgraphs()) {
      absl::StatusOr<bool> sub_changed = EliminateIn(*sub);
      if (!sub_changed.ok()) return sub_changed.status();
      changed |= *sub_changed;
    }
  }
  return changed;
}

class DeadNodeElimination : public Pass {
 public:
  absl::string_view name() const override { return "dead-node-elimination"; }
  absl::StatusOr<bool> Run(Model& model) override {
    absl::StatusOr<bool> changed = EliminateIn(model.graph());
    if (!changed.ok()) return changed;
    bool any = *changed;
    for (Function* f : model.functions()) {
      changed = EliminateIn(f->body());
      if (!changed.ok()) return changed;
      any |= *changed;
    }
    return any;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateDeadNodeEliminationPass() {
  return std::make_unique<DeadNodeElimination>();
}

}  // namespace jax2onnx::ir
