// shape-folding: replaces a `Shape` node whose selected dims are all known
// sizes in its input's type by an int64 initializer holding them: the empty
// `Shape(x, end=0)` of a rank-2 batch computation, or the `Shape` of a
// statically shaped value a shared recipe reads at runtime. The folded value
// takes the Shape output's name (the equation that computes it). Drops the
// operands of a `Concat` that are empty along its axis (a folded empty
// shape, concatenated with the other pieces of a shape computation); a
// Concat left with one operand is replaced by it.
//
// Refuses: inputs without a shape or with a symbolic/unknown dim in the
// selected range, Shape outputs that are graph outputs (the interface);
// Concats whose operands are all empty, whose axis is not a constant in
// range, or (for the one-operand replacement) whose output is a graph
// output or of another type than the operand.
#include "ir/passes/shape_folding.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

// The dims Shape(start, end) selects, when every one is a known size.
std::optional<std::vector<int64_t>> SelectedDims(const Node* node) {
  const Value* x = node->num_inputs() == 1 ? node->input(0) : nullptr;
  const ir::Shape* shape = x == nullptr ? nullptr : x->shape();
  if (shape == nullptr) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(shape->rank());
  // ONNX Shape: negative start/end count from the back, both are clamped
  // to [0, rank].
  auto clamp = [rank](int64_t i) {
    if (i < 0) i += rank;
    return std::clamp<int64_t>(i, 0, rank);
  };
  const int64_t start = clamp(IntAttr(node, "start", 0));
  const int64_t end = clamp(IntAttr(node, "end", rank));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) {
    const Dim& d = shape->dims()[i];
    if (!d.is_value()) return std::nullopt;
    dims.push_back(d.value());
  }
  return dims;
}

// An operand of `concat` whose size along `axis` is a known 0.
bool EmptyAlong(const Value* v, int64_t axis) {
  const ir::Shape* shape = v == nullptr ? nullptr : v->shape();
  if (shape == nullptr) return false;
  const int64_t rank = static_cast<int64_t>(shape->rank());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return false;
  const Dim& d = shape->dims()[axis];
  return d.is_value() && d.value() == 0;
}

// Drops the empty operands of a Concat; true when the graph changed.
bool CompactConcat(Node* node) {
  const int64_t axis = IntAttr(node, "axis", 0);
  std::vector<Value*> kept;
  for (Value* in : node->inputs()) {
    if (in == nullptr) return false;
    if (!EmptyAlong(in, axis)) kept.push_back(in);
  }
  if (kept.empty() || kept.size() == static_cast<size_t>(node->num_inputs())) {
    return false;
  }
  Value* out = node->output(0);
  if (kept.size() == 1 && !out->is_graph_output() && out->type() != nullptr &&
      kept[0]->type() != nullptr && *out->type() == *kept[0]->type()) {
    ReplaceAllUsesWith(out, kept[0]);
    return true;
  }
  for (size_t i = 0; i < kept.size(); ++i) {
    node->ReplaceInputWith(static_cast<int>(i), kept[i]);
  }
  node->TruncateInputs(static_cast<int>(kept.size()));
  return true;
}

class ShapeFolding : public Pass {
 public:
  absl::string_view name() const override { return "shape-folding"; }
  std::vector<absl::string_view> AnchorOps() const override {
    return {"Shape", "Concat"};
  }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      for (Node* node : g->nodes()) {
        if (IsOp(node, "Concat") && node->num_outputs() == 1) {
          changed |= CompactConcat(node);
          continue;
        }
        if (!IsOp(node, "Shape") || node->num_outputs() != 1) continue;
        Value* out = node->output(0);
        if (out->is_graph_output() || out->num_uses() == 0) continue;
        std::optional<std::vector<int64_t>> dims = SelectedDims(node);
        if (!dims.has_value()) continue;
        Graph* root = g->root();
        const std::string name = out->name();
        out->SetName(root->FreshName(absl::StrCat(name, "_unfolded")));
        Value* folded = AddI64Initializer(root, "shape", *dims);
        folded->SetName(name);
        ReplaceAllUsesWith(out, folded);
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateShapeFoldingPass() {
  return std::make_unique<ShapeFolding>();
}

}  // namespace jax2onnx::ir
