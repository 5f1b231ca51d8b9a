// reduce-keepdims: Unsqueeze(Reduce(x, axes, keepdims=0), axes') where the
// Unsqueeze re-inserts exactly the reduced axes (axes' on the output rank
// equal axes on the input rank) becomes Reduce(x, axes, keepdims=1): the
// same values with the unit axes kept. This is how JAX's
// reduce_* + broadcast_in_dim (jnp.mean(..., keepdims=True), norms,
// softmax) lowers literally.
//
// Refuses: reductions over all axes given implicitly (no axes input or
// attribute: the rank must be known to match), noop_with_empty_axes=1,
// reductions whose output has other uses, ArgMax/ArgMin (single axis,
// handled the same way when the Unsqueeze axis matches), Unsqueezes whose
// output is a graph output (the name is the interface), unknown ranks.
#include <vector>

#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

bool IsReduce(const Node* n) {
  static constexpr absl::string_view kOps[] = {
      "ReduceSum",       "ReduceMean",      "ReduceMax", "ReduceMin",
      "ReduceProd",      "ReduceL1",        "ReduceL2",  "ReduceLogSum",
      "ReduceLogSumExp", "ReduceSumSquare", "ArgMax",    "ArgMin"};
  for (absl::string_view op : kOps) {
    if (IsOp(n, op)) return true;
  }
  return false;
}

// The reduced axes, normalized on the input rank.
std::optional<std::vector<int64_t>> ReducedAxes(const Node* r) {
  const Shape* s = r->input(0) == nullptr ? nullptr : r->input(0)->shape();
  if (s == nullptr) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(s->rank());
  if (IsOp(r, "ArgMax") || IsOp(r, "ArgMin")) {
    return NormalizeAxes({IntAttr(r, "axis", 0)}, rank);
  }
  if (IntAttr(r, "noop_with_empty_axes", 0) != 0) return std::nullopt;
  std::optional<std::vector<int64_t>> axes;
  if (r->num_inputs() >= 2 && r->input(1) != nullptr) {
    axes = ConstInts(r->input(1));
  } else if (r->num_inputs() == 1) {
    axes = IntsAttr(r, "axes");
  }
  if (!axes.has_value()) return std::nullopt;
  if (axes->empty()) {  // all axes
    for (int64_t i = 0; i < rank; ++i) axes->push_back(i);
  }
  return NormalizeAxes(*axes, rank);
}

class ReduceKeepdims : public Pass {
 public:
  absl::string_view name() const override { return "reduce-keepdims"; }
  std::vector<absl::string_view> AnchorOps() const override {
    return {"Unsqueeze"};
  }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      for (Node* node : g->nodes()) {
        if (!IsOp(node, "Unsqueeze") || node->num_outputs() != 1 ||
            node->input(0) == nullptr) {
          continue;
        }
        Value* out = node->output(0);
        if (out->is_graph_output() || out->num_uses() == 0) continue;
        Node* reduce = node->input(0)->producer();
        if (!IsReduce(reduce) || !HasSingleUse(reduce->output(0)) ||
            IntAttr(reduce, "keepdims", 1) != 0 || reduce->num_outputs() != 1) {
          continue;
        }
        std::optional<std::vector<int64_t>> reduced = ReducedAxes(reduce);
        if (!reduced.has_value()) continue;
        std::optional<std::vector<int64_t>> inserted =
            node->num_inputs() >= 2 ? ConstInts(node->input(1))
                                    : IntsAttr(node, "axes");
        if (!inserted.has_value()) continue;
        const int64_t out_rank =
            static_cast<int64_t>(reduce->input(0)->shape()->rank());
        if (static_cast<int64_t>(inserted->size()) !=
            (int64_t)reduced->size()) {
          continue;
        }
        inserted = NormalizeAxes(*inserted, out_rank);
        if (!inserted.has_value() || *inserted != *reduced) continue;
        reduce->SetAttr(Attr::Int("keepdims", 1));
        reduce->output(0)->SetType(out->type() == nullptr
                                       ? std::nullopt
                                       : std::optional<Type>(*out->type()));
        ReplaceAllUsesWith(out, reduce->output(0));
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateReduceKeepdimsPass() {
  return std::make_unique<ReduceKeepdims>();
}

}  // namespace jax2onnx::ir
