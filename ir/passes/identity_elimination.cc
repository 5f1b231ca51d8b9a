// identity-elimination: removes Identity nodes by pointing every consumer
// of the Identity's output at its input, in the main graph, subgraphs and
// function bodies. The node itself is left for dead-node-elimination.
//
// An Identity whose output is a graph output is folded only by renaming:
// when its input is produced by a node of the same graph and read by
// nothing else, that value takes the output's name and place.
//
// Refuses (keeps): other Identities whose output is a graph output (its
// name is part of the model's or the body's interface, and a graph output
// may not be a graph input or an outer value under another name); an
// Identity whose input is absent; non-tensor inputs are handled like
// tensors (Identity is the same for every type).
#include <string>

#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

// y = Identity(x) with y a graph output, x produced by a node of the same
// graph and read only by this Identity: x takes y's name and place as the
// graph output (same value, same name on the interface).
bool MoveOutputNameToProducer(Node* node) {
  Value* out = node->output(0);
  Value* in = node->input(0);
  if (in->producer() == nullptr || in->producer()->graph() != node->graph() ||
      in->is_graph_output() || in->num_uses() != 1 || out->num_uses() != 0 ||
      out->type() == nullptr) {
    return false;
  }
  Graph* root = node->graph()->root();
  const std::string name = out->name();
  ReplaceAllUsesWith(out, in);  // the graph-output slots
  out->SetName(root->FreshName(name + "_unused"));
  in->SetName(name);
  in->SetType(*out->type());
  return true;
}

class IdentityElimination : public Pass {
 public:
  absl::string_view name() const override { return "identity-elimination"; }
  std::vector<absl::string_view> AnchorOps() const override {
    return {"Identity"};
  }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      for (Node* node : g->nodes()) {
        if (!IsOp(node, "Identity") || node->num_inputs() != 1 ||
            node->input(0) == nullptr || node->num_outputs() != 1) {
          continue;
        }
        Value* out = node->output(0);
        Value* in = node->input(0);
        if (out->is_graph_output()) {
          changed |= MoveOutputNameToProducer(node);
          continue;
        }
        if (out->num_uses() == 0) continue;
        ReplaceAllUsesWith(out, in);
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
