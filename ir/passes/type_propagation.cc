// type-propagation: gives a type to node outputs that have none, where the
// ONNX operator's type rule makes it a function of the input types alone,
// so every intermediate value carries its dtype and full shape in
// value_info (what Netron shows on each edge). Covered: unary elementwise
// ops (same type; IsNaN/IsInf give bool), Cast (its `to`, same shape),
// broadcasting binary ops and Where (numpy broadcast of the input shapes;
// comparisons give bool), Transpose (permuted shape), Shape (1-D int64).
// Runs to a fixpoint within one pass by walking the (sorted) graph in order.
//
// Refuses: values that already have a type (never changed), inputs of
// unknown type, shapes whose broadcast is not decidable statically
// (different symbols), every other op.
#include <algorithm>
#include <string>
#include <vector>

#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

bool OneOf(const Node* n, std::initializer_list<const char*> ops) {
  for (const char* op : ops) {
    if (IsOp(n, op)) return true;
  }
  return false;
}

std::optional<Type> Infer(const Node* n) {
  auto in_type = [&](int i) -> const Type* {
    if (i >= n->num_inputs() || n->input(i) == nullptr) return nullptr;
    const Type* t = n->input(i)->type();
    return t != nullptr && t->is_tensor() && t->shape().has_value() &&
                   t->elem_type() != onnx::TensorProto::UNDEFINED
               ? t
               : nullptr;
  };
  if (OneOf(
          n,
          {"Abs",       "Acos",      "Acosh",      "Asin",        "Asinh",
           "Atan",      "Atanh",     "Ceil",       "Cos",         "Cosh",
           "Erf",       "Exp",       "Floor",      "Identity",    "Log",
           "Neg",       "Not",       "Reciprocal", "Relu",        "Round",
           "Sigmoid",   "Sign",      "Sin",        "Sinh",        "Sqrt",
           "Tan",       "Tanh",      "Softplus",   "Softsign",    "BitwiseNot",
           "LeakyRelu", "Elu",       "Selu",       "HardSigmoid", "Celu",
           "Mish",      "HardSwish", "Gelu"})) {
    if (const Type* t = in_type(0)) return *t;
    return std::nullopt;
  }
  if (OneOf(n, {"IsNaN", "IsInf"})) {
    if (const Type* t = in_type(0)) {
      return Type::Tensor(onnx::TensorProto::BOOL, t->shape());
    }
    return std::nullopt;
  }
  if (IsOp(n, "Cast")) {
    const Type* t = in_type(0);
    const int64_t to = IntAttr(n, "to", 0);
    if (t == nullptr || to == 0) return std::nullopt;
    return Type::Tensor(static_cast<int>(to), t->shape());
  }
  const bool comparison =
      OneOf(n, {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"});
  const bool arithmetic = OneOf(
      n, {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "And", "Or",
          "Xor", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitShift"});
  const bool where = IsOp(n, "Where");
  if (comparison || arithmetic || where) {
    std::vector<Dim> dims;
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Type* t = in_type(i);
      if (t == nullptr) return std::nullopt;
      std::optional<std::vector<Dim>> b =
          BroadcastDims(dims, t->shape()->dims());
      if (!b.has_value()) return std::nullopt;
      dims = std::move(*b);
    }
    const int dtype = comparison ? onnx::TensorProto::BOOL
                                 : in_type(where ? 1 : 0)->elem_type();
    return Type::Tensor(dtype, Shape(std::move(dims)));
  }
  if (IsOp(n, "Transpose")) {
    const Type* t = in_type(0);
    if (t == nullptr) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(t->shape()->rank());
    std::vector<int64_t> perm;
    if (auto p = IntsAttr(n, "perm")) {
      perm = *p;
    } else {
      for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
    }
    if (static_cast<int64_t>(perm.size()) != rank) return std::nullopt;
    std::vector<Dim> dims;
    for (int64_t p : perm) {
      if (p < 0 || p >= rank) return std::nullopt;
      dims.push_back((*t->shape())[p]);
    }
    return Type::Tensor(t->elem_type(), Shape(std::move(dims)));
  }
  if (IsOp(n, "Shape")) {
    const Type* t = in_type(0);
    if (t == nullptr) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(t->shape()->rank());
    int64_t start = IntAttr(n, "start", 0);
    int64_t end = IntAttr(n, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
    return Type::Tensor(onnx::TensorProto::INT64,
                        Shape({std::max<int64_t>(end - start, 0)}));
  }
  return std::nullopt;
}

class TypePropagation : public Pass {
 public:
  absl::string_view name() const override { return "type-propagation"; }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      for (Node* node : g->nodes()) {
        if (node->num_outputs() != 1 || node->output(0)->type() != nullptr ||
            node->output(0)->name().empty()) {
          continue;
        }
        std::optional<Type> t = Infer(node);
        if (!t.has_value()) continue;
        node->output(0)->SetType(std::move(t));
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateTypePropagationPass() {
  return std::make_unique<TypePropagation>();
}

}  // namespace jax2onnx::ir
