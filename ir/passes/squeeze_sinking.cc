// squeeze-sinking: an elementwise Add/Sub/Mul/Div of two Squeezes that
// remove the same axes from operands of the same static shape becomes the
// operation on the unsqueezed operands followed by one Squeeze:
//
//   Add(Squeeze(a, axes), Squeeze(b, axes)) -> Squeeze(Add(a, b), axes)
//
// An unrolled sum over a vector's elements (`x[0] + x[1] + ...`, after
// slices-to-split one Split and then a Squeeze and an Add per element)
// becomes a chain of Adds on the Split's [1]-shaped pieces and a single
// Squeeze at its end. ONNX Runtime's `basic` and `extended` optimizers take
// time quadratic in the number of Squeeze nodes of such a graph (10,000
// Squeezes: over 100 s to create a session; docs/performance.md), while
// the Adds alone load in linear time.
//
// Exact: the operands have the same shape, so the operation broadcasts
// nothing; it combines the same elements pairwise in the same order either
// way, and a Squeeze only drops size-1 axes (no data moves).
//
// One forward walk in graph order: the new Squeeze is itself an operand
// Squeeze for the next operation of a chain, so a chain of n operations
// collapses in one run, each node visited once.
//
// Refuses (keeps the node as it is): a Squeeze output that has another
// use or is a graph output (the Squeeze would have to stay anyway);
// operands of different or not fully static shapes or different dtypes;
// axes that are not equal constants (or the attribute form with different
// axes).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

// The axes a Squeeze removes, in a comparable form: the constant axes
// input, the `axes` attribute, or empty for "every size-1 axis"; nullopt
// when the axes input is not a constant.
std::optional<std::vector<int64_t>> SqueezeAxes(const Node* squeeze) {
  if (squeeze->num_inputs() > 1 && squeeze->input(1) != nullptr) {
    return ConstInts(squeeze->input(1));
  }
  std::optional<std::vector<int64_t>> attr = IntsAttr(squeeze, "axes");
  return attr.has_value() ? *std::move(attr) : std::vector<int64_t>{};
}

// The Squeeze producing operand `i` of `node` when it can be sunk: its
// output is used only here and its input has a static shape.
Node* SinkableSqueeze(const Node* node, int i) {
  Node* squeeze = ProducerIf(node, i, "Squeeze");
  if (squeeze == nullptr || squeeze->num_outputs() != 1 ||
      squeeze->input(0) == nullptr || !HasSingleUse(squeeze->output(0))) {
    return nullptr;
  }
  return squeeze;
}

bool SinkOne(Node* node) {
  if (node->num_inputs() != 2 || node->num_outputs() != 1) return false;
  Node* left = SinkableSqueeze(node, 0);
  Node* right = SinkableSqueeze(node, 1);
  if (left == nullptr || right == nullptr) return false;
  Value* a = left->input(0);
  Value* b = right->input(0);
  if (a->type() == nullptr || b->type() == nullptr ||
      a->dtype() != b->dtype()) {
    return false;
  }
  const std::optional<std::vector<int64_t>> dims = StaticDims(a);
  if (!dims.has_value() || dims != StaticDims(b)) return false;
  const std::optional<std::vector<int64_t>> axes = SqueezeAxes(left);
  if (!axes.has_value() || axes != SqueezeAxes(right)) return false;
  if ((left->num_inputs() > 1) != (right->num_inputs() > 1)) return false;

  // Opset >= 7 binary ops carry no attributes (older ones' broadcast
  // attributes are left alone).
  if (!node->attributes().empty()) return false;

  Node* op = InsertNodeBefore(node, node->op_type(), {a, b}, {}, *a->type());
  std::vector<Value*> squeeze_inputs = {op->output(0)};
  std::vector<Attr> squeeze_attrs;
  if (left->num_inputs() > 1) {
    squeeze_inputs.push_back(left->input(1));
  } else if (left->attr("axes") != nullptr) {
    squeeze_attrs.push_back(Attr::Ints("axes", *axes));
  }
  Node* squeeze = InsertNodeBefore(node, "Squeeze", std::move(squeeze_inputs),
                                   std::move(squeeze_attrs), std::nullopt);
  // The Squeeze takes the old output's name (a graph output keeps its
  // name) and type; the old output gets the fresh one.
  Value* old = node->output(0);
  Value* sunk = squeeze->output(0);
  sunk->SetType(old->type() ? std::optional<Type>(*old->type()) : std::nullopt);
  std::string name = old->name();
  old->SetName(sunk->name());
  sunk->SetName(std::move(name));
  ReplaceAllUsesWith(old, sunk);
  return true;  // `node` and the two Squeezes are now dead
}

class SqueezeSinking : public Pass {
 public:
  absl::string_view name() const override { return "squeeze-sinking"; }
  std::vector<absl::string_view> AnchorOps() const override {
    return {"Squeeze"};
  }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      for (Node* n : g->nodes()) {
        if (IsOp(n, "Add") || IsOp(n, "Sub") || IsOp(n, "Mul") ||
            IsOp(n, "Div")) {
          changed |= SinkOne(n);
        }
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateSqueezeSinkingPass() {
  return std::make_unique<SqueezeSinking>();
}

}  // namespace jax2onnx::ir
