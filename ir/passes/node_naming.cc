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
    // Names given so far. The keys view the nodes' own name strings, each
    // final once inserted (a node is renamed at most once, before), so a
    // name costs no copy.
    absl::flat_hash_set<absl::string_view> taken;
    // Next suffix to try per base name, so n duplicates cost O(n).
    absl::flat_hash_map<std::string, int> next_suffix;
    for (Graph* g : AllGraphs(model)) {
      for (Node* node : g->nodes()) {
        const absl::string_view base = node->name().empty()
                                           ? absl::string_view(node->op_type())
                                           : absl::string_view(node->name());
        if (!taken.contains(base)) {
          if (node->name().empty()) {
            node->set_name(std::string(base));
            changed = true;
          }
          taken.insert(node->name());
          continue;
        }
        int& k = next_suffix[base];
        std::string name;
        do {
          name = absl::StrCat(base, "_", ++k);
        } while (taken.contains(name));
        node->set_name(std::move(name));
        changed = true;
        taken.insert(node->name());
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
