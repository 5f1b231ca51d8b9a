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
#include "absl/types/span.h"
#include "ir/passes/passes.h"

namespace jax2onnx::ir {
namespace {

// For every node with subgraphs, the producers in the node's own graph of
// the values its subgraphs read from there (directly or from deeper
// subgraphs). Found from each read by climbing from the reading graph to
// the graph defining the value, so the whole model costs O(reads x levels
// climbed); walking each node's whole subtree instead cost O(nodes x depth)
// (cond nested 40 deep: 15% of a conversion).
using CaptureDeps = absl::flat_hash_map<const Node*, std::vector<Node*>>;

CaptureDeps CollectCaptureDeps(absl::Span<Graph* const> graphs) {
  CaptureDeps deps;
  for (const Graph* g : graphs) {
    if (g->parent_node() == nullptr) continue;
    auto read = [&](const Value* v) {
      if (v == nullptr || v->producer() == nullptr) return;
      const Graph* home = v->producer()->graph();
      if (home == g) return;
      const Node* holder = g->parent_node();
      while (holder != nullptr && holder->graph() != home) {
        holder = holder->graph() != nullptr ? holder->graph()->parent_node()
                                            : nullptr;
      }
      if (holder != nullptr) deps[holder].push_back(v->producer());
    };
    for (const Node* inner : g->nodes()) {
      for (const Value* v : inner->inputs()) read(v);
    }
    for (const Value* v : g->outputs()) read(v);
  }
  return deps;
}

// Producers in `graph` of the values `node` reads, directly or from inside
// its subgraphs.
void CollectDeps(const Node* node, const Graph* graph,
                 const CaptureDeps& capture_deps, std::vector<Node*>* deps) {
  for (const Value* v : node->inputs()) {
    if (v != nullptr && v->producer() != nullptr &&
        v->producer()->graph() == graph) {
      deps->push_back(v->producer());
    }
  }
  if (!node->has_subgraphs()) return;
  auto it = capture_deps.find(node);
  if (it != capture_deps.end()) {
    deps->insert(deps->end(), it->second.begin(), it->second.end());
  }
}

absl::StatusOr<bool> SortGraph(Graph& graph, const CaptureDeps& capture_deps) {
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
    CollectDeps(original[root], &graph, capture_deps, &stack.back().deps);
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
        CollectDeps(original[dep], &graph, capture_deps, &frame.deps);
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
    const std::vector<Graph*> graphs = AllGraphs(model);
    const CaptureDeps capture_deps = CollectCaptureDeps(graphs);
    for (Graph* g : graphs) {
      absl::StatusOr<bool> c = SortGraph(*g, capture_deps);
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
