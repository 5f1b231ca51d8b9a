// node-naming: gives every node of the model (main graph, subgraphs,
// function bodies) a unique, deterministic name. The IR pipeline names the
// nodes it lowers after their equation (eqn12/dot_general/MatMul) and the
// passes name the nodes they create after the node they replace; this pass
// names any node still unnamed by its op type and makes duplicates unique
// by a `_1`, `_2`, ... suffix, in graph order (a node keeps its name when
// no earlier node has it).
//
// Refuses: nothing; names never change values.
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/passes/passes.h"

namespace jax2onnx::ir {
namespace {

class NodeNaming : public Pass {
 public:
  absl::string_view name() const override { return "node-naming"; }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    absl::flat_hash_set<std::string> taken;
    // Next suffix to try per base name, so n duplicates cost O(n).
    absl::flat_hash_map<std::string, int> next_suffix;
    for (Graph* g : AllGraphs(model)) {
      for (Node* node : g->nodes()) {
        std::string base =
            node->name().empty() ? node->op_type() : node->name();
        std::string name = base;
        if (taken.contains(name)) {
          int& k = next_suffix[base];
          do {
            name = absl::StrCat(base, "_", ++k);
          } while (taken.contains(name));
        }
        taken.insert(name);
        if (name != node->name()) {
          node->set_name(std::move(name));
          changed = true;
        }
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateNodeNamingPass() {
  return std::make_unique<NodeNaming>();
}

}  // namespace jax2onnx::ir
