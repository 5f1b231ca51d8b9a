// topological-sort: reorders the nodes of every graph (main, subgraphs,
// function bodies) so each node comes after the producers of its inputs,
// including the implicit inputs its subgraphs read from this graph. Stable:
// a depth-first walk in the current order emits each node right after its
// not-yet-emitted dependencies, so an already valid order is kept as is and
// an invalid one moves the fewest nodes earlier. O(V + E).
//
// Refuses: graphs with a dependency cycle (error naming a node on it).
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/passes/passes.h"

namespace jax2onnx::ir {
namespace {

// Producers in `graph` of the values `node` reads, directly or from inside
// its subgraphs.
void CollectDeps(const Node* node, const Graph* graph,
                 std::vector<Node*>* deps) {
  auto add = [&](const Value* v) {
    if (v != nullptr && v->producer() != nullptr &&
        v->producer()->graph() == graph) {
      deps->push_back(v->producer());
    }
  };
  for (const Value* v : node->inputs()) add(v);
  for (Graph* sub : node->Subgraphs()) {
    for (const Graph* g : GraphAndSubgraphs(static_cast<const Graph*>(sub))) {
      for (const Node* inner : g->nodes()) {
        for (const Value* v : inner->inputs()) add(v);
      }
      for (const Value* v : g->outputs()) add(v);
    }
  }
}

absl::StatusOr<bool> SortGraph(Graph& graph) {
  std::vector<Node*> original;
  original.reserve(graph.num_nodes());
  absl::flat_hash_map<const Node*, int> index;
  for (Node* n : graph.nodes()) {
    index.emplace(n, static_cast<int>(original.size()));
    original.push_back(n);
  }
  enum State : uint8_t { kNew, kOnStack, kDone };
  std::vector<State> state(original.size(), kNew);
  std::vector<Node*> order;
  order.reserve(original.size());
  struct Frame {
    int node;
    std::vector<Node*> deps;
    size_t next = 0;
  };
  std::vector<Frame> stack;
  for (int root = 0; root < static_cast<int>(original.size()); ++root) {
    if (state[root] != kNew) continue;
    stack.push_back(Frame{root, {}});
    CollectDeps(original[root], &graph, &stack.back().deps);
    state[root] = kOnStack;
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next < top.deps.size()) {
        int dep = index.at(top.deps[top.next++]);
        if (state[dep] == kDone) continue;
        if (state[dep] == kOnStack) {
          const Node* n = original[dep];
          return absl::FailedPreconditionError(
              absl::StrCat("graph '", graph.name(),
                           "' has a dependency cycle through node '", n->name(),
                           "' (", n->op_type(), ")"));
        }
        state[dep] = kOnStack;
        Frame frame{dep, {}};
        CollectDeps(original[dep], &graph, &frame.deps);
        stack.push_back(std::move(frame));
        continue;
      }
      state[top.node] = kDone;
      order.push_back(original[top.node]);
      stack.pop_back();
    }
  }
  bool changed = order != original;
  if (changed) graph.Reorder(order);
  return changed;
}

class TopologicalSort : public Pass {
 public:
  absl::string_view name() const override { return "topological-sort"; }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      absl::StatusOr<bool> c = SortGraph(*g);
      if (!c.ok()) return c;
      changed |= *c;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateTopologicalSortPass() {
  return std::make_unique<TopologicalSort>();
}

}  // namespace jax2onnx::ir
