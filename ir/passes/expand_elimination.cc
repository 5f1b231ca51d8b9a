// expand-elimination: an operand Expand(b, shape) of a broadcasting
// elementwise op (Add, Sub, Mul, Div, Pow, Max, Min, Mod, comparisons,
// logical ops) is replaced by b when broadcasting b against the op's
// other operands already gives the op's output shape: ONNX multidirectional
// broadcasting then reads the same element of b for every output element,
// which is what the materialized Expand held. The same holds for an
// Unsqueeze that only prepends unit axes (broadcasting aligns trailing
// axes and pads leading ones with 1). JAX programs broadcast explicitly
// (broadcast_in_dim before every binary op), so this removes the Expand
// and the Unsqueeze of a bias add or scale.
//
// Refuses: Where (the project's Where rule, DESIGN.md / seed 000: every
// Where gets three inputs of one rank, never relying on ONNX broadcasting,
// tests/api/control_flow_guardrails_test.cc), unknown shapes or unknown dims of
// any operand or the output, symbolic dims that would need broadcasting against
// each other (only equal names or a static 1 combine), Expands whose output is
// a graph output.
#include <algorithm>
#include <vector>

#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

bool IsBroadcastingElementwise(const Node* n) {
  static constexpr absl::string_view kOps[] = {"Add",
                                               "Sub",
                                               "Mul",
                                               "Div",
                                               "Pow",
                                               "Max",
                                               "Min",
                                               "Mod",
                                               "Equal",
                                               "Less",
                                               "LessOrEqual",
                                               "Greater",
                                               "GreaterOrEqual",
                                               "And",
                                               "Or",
                                               "Xor",
                                               "BitwiseAnd",
                                               "BitwiseOr",
                                               "BitwiseXor",
                                               "BitShift"};
  if (n == nullptr || n->num_outputs() != 1 || n->num_inputs() < 2) {
    return false;
  }
  for (absl::string_view op : kOps) {
    if (IsOp(n, op)) return true;
  }
  return false;
}

// The producer of input i when it is an Unsqueeze inserting only leading
// axes 0..k-1.
Node* LeadingUnsqueeze(const Node* node, int i) {
  Node* u = ProducerIf(node, i, "Unsqueeze");
  if (u == nullptr || u->input(0) == nullptr) return nullptr;
  const Shape* out = u->output(0)->shape();
  if (out == nullptr) return nullptr;
  std::optional<std::vector<int64_t>> axes =
      u->num_inputs() >= 2 ? ConstInts(u->input(1)) : IntsAttr(u, "axes");
  if (!axes.has_value()) return nullptr;
  axes = NormalizeAxes(*axes, static_cast<int64_t>(out->rank()));
  if (!axes.has_value()) return nullptr;
  for (size_t k = 0; k < axes->size(); ++k) {
    if ((*axes)[k] != static_cast<int64_t>(k)) return nullptr;
  }
  return u;
}

class ExpandElimination : public Pass {
 public:
  absl::string_view name() const override { return "expand-elimination"; }
  std::vector<absl::string_view> AnchorOps() const override {
    return {"Expand", "Unsqueeze"};
  }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      for (Node* node : g->nodes()) {
        if (!IsBroadcastingElementwise(node)) continue;
        const Shape* out_shape = node->output(0)->shape();
        if (out_shape == nullptr) continue;
        for (int i = 0; i < node->num_inputs(); ++i) {
          Node* expand = ProducerIf(node, i, "Expand");
          if (expand == nullptr) expand = LeadingUnsqueeze(node, i);
          if (expand == nullptr || expand->input(0) == nullptr) continue;
          // The shape every operand but this one broadcasts to, with the
          // Expand's input in its place.
          std::optional<std::vector<Dim>> dims = std::vector<Dim>{};
          bool known = true;
          for (int j = 0; j < node->num_inputs() && dims.has_value(); ++j) {
            const Value* v = j == i ? expand->input(0) : node->input(j);
            const Shape* s = v == nullptr ? nullptr : v->shape();
            if (s == nullptr) {
              known = false;
              break;
            }
            dims = BroadcastDims(*dims, s->dims());
          }
          if (!known || !dims.has_value() || *dims != out_shape->dims()) {
            continue;
          }
          node->ReplaceInputWith(i, expand->input(0));
          changed = true;
        }
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateExpandEliminationPass() {
  return std::make_unique<ExpandElimination>();
}

}  // namespace jax2onnx::ir
