// reshape-folding: shortens chains of shape-only ops (Reshape, Squeeze,
// Unsqueeze, Flatten), which never change the row-major element order.
//  - A shape-only op whose output has the same shape as its input (equal
//    static sizes and equal symbolic dim names, which JAX guarantees denote
//    equal sizes): consumers read its input.
//  - A shape-only op reading another one: when the outer op's output shape
//    is fully static, it becomes Reshape(inner input, that shape); when it
//    is a Reshape with a constant target free of 0 entries (0 would copy a
//    dim of its input), it reads the inner input directly.
// The inner op is left for dead-node-elimination when nothing else reads it.
//
// Refuses: unknown shapes, symbolic output shapes of non-Reshape ops,
// Reshape targets with 0 (copy-dim) entries, outputs that are graph
// outputs (the name is the interface).
#include <algorithm>
#include <string>
#include <vector>

#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

bool IsShapeOnly(const Node* n) {
  return n != nullptr && n->num_outputs() == 1 && n->num_inputs() >= 1 &&
         n->input(0) != nullptr &&
         (IsOp(n, "Reshape") || IsOp(n, "Squeeze") || IsOp(n, "Unsqueeze") ||
          IsOp(n, "Flatten"));
}

bool SameKnownShape(const Value* a, const Value* b) {
  const Shape* sa = a->shape();
  const Shape* sb = b->shape();
  if (sa == nullptr || sb == nullptr || *sa != *sb) return false;
  for (const Dim& d : sa->dims()) {
    if (d.is_unknown()) return false;
  }
  return true;
}

class ReshapeFolding : public Pass {
 public:
  absl::string_view name() const override { return "reshape-folding"; }
  std::vector<absl::string_view> AnchorOps() const override {
    return {"Reshape", "Squeeze", "Unsqueeze", "Flatten"};
  }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      // A function body's initializers are written as Constant nodes
      // (ir::ToProto), so every graph can take a new shape constant.
      for (Node* node : g->nodes()) {
        if (!IsShapeOnly(node)) continue;
        Value* out = node->output(0);
        if (out->is_graph_output() || out->num_uses() == 0) continue;
        if (SameKnownShape(node->input(0), out)) {
          ReplaceAllUsesWith(out, node->input(0));
          changed = true;
          continue;
        }
        Node* inner = node->input(0)->producer();
        if (!IsShapeOnly(inner)) continue;
        Value* source = inner->input(0);
        if (SameKnownShape(source, out)) {
          ReplaceAllUsesWith(out, source);
          changed = true;
          continue;
        }
        if (IsOp(node, "Reshape") && node->num_inputs() == 2) {
          std::optional<std::vector<int64_t>> target =
              ConstInts(node->input(1));
          const bool has_zero =
              !target.has_value() ||
              std::find(target->begin(), target->end(), 0) != target->end();
          if (!has_zero && IntAttr(node, "allowzero", 0) == 0) {
            node->ReplaceInputWith(0, source);
            changed = true;
            continue;
          }
        }
        std::optional<std::vector<int64_t>> dims = StaticDims(out);
        if (!dims.has_value()) continue;
        Node* reshape = InsertNodeBefore(
            node, "Reshape", {source, AddI64Initializer(g, "shape", *dims)}, {},
            *out->type());
        // A 0 in the target copies the input's dim unless allowzero is set.
        if (std::find(dims->begin(), dims->end(), 0) != dims->end()) {
          reshape->SetAttr(Attr::Int("allowzero", 1));
        }
        ReplaceAllUsesWith(out, reshape->output(0));
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateReshapeFoldingPass() {
  return std::make_unique<ReshapeFolding>();
}

}  // namespace jax2onnx::ir
