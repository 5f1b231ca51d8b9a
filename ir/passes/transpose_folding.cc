// transpose-folding: removes and merges Transposes without changing any
// value (Transpose only moves elements).
//  - Transpose with the identity perm: consumers read its input.
//  - Transpose(Transpose(x, p1), p2) = Transpose(x, p1[p2[i]]), or x when
//    that is the identity.
//  - Transpose(f(Transpose(x, p1)), p2) for a layout-invariant unary
//    elementwise f (Relu, Neg, Exp, Cast, ...) whose input Transpose has no
//    other use: f(Transpose(x, p1[p2[i]])), the pair then cancels or merges.
//  - The same through a chain of such ops and broadcasting binary ops
//    (Add, Sub, Mul, Div, Max, Min, Pow) whose other operand is an
//    initializer, each result used once: Transpose(Max(Add(Transpose(x),
//    b), 0)) (a channels-last Conv's bias and relu between its layout
//    Transposes) becomes Max(Add(Transpose(x, merged), b'), 0) with b'
//    the initializer brought to the full rank (leading 1s, numpy
//    alignment) and permuted by the outer perm (a Reshape and a Transpose
//    that constant-folding folds; none for a one-element constant).
//    Elementwise ops and broadcasting commute with a permutation of axes.
//    A graph-output Transpose moves too (it becomes an Identity of the
//    chain, keeping the output's name): an NCHW output adapter after a
//    channels-last Conv's bias Add cancels against the Conv's layout
//    Transpose.
//  - MatMul/Gemm: a rank-2 operand Transpose(a, [1, 0]) becomes Gemm's
//    transA/transB (a MatMul with two rank-2 f32 operands becomes a Gemm
//    with alpha = 1 and no C: ORT runs both on MLAS's SGEMM, which packs a
//    transposed operand into the same panels, so the sums are the same).
//    A MatMul + Add is never turned into a Gemm with C: MLAS accumulates
//    K blocks into C, which reassociates the bias add.
//
// A Transpose whose output is a graph output keeps that value (the name is
// the interface): where it would vanish or move it becomes an Identity
// instead.
//
// Refuses: Transposes without a perm attribute of known rank, chains that
// do not end at a Transpose or pass a value used elsewhere, chain
// constants of unknown shape or higher rank, a chain constant that needs a
// Reshape inside a function body (no initializers there), MatMul of rank
// other than 2 or dtypes other than f32, Gemm with transA/transB already
// set on that operand.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

// Ops whose result element i depends only on input element i, for any
// layout, with one input and one output.
bool IsLayoutInvariantUnary(const Node* n) {
  static constexpr absl::string_view kOps[] = {"Abs",
                                               "Acos",
                                               "Acosh",
                                               "Asin",
                                               "Asinh",
                                               "Atan",
                                               "Atanh",
                                               "Ceil",
                                               "Cos",
                                               "Cosh",
                                               "Erf",
                                               "Exp",
                                               "Floor",
                                               "Identity",
                                               "IsInf",
                                               "IsNaN",
                                               "Log",
                                               "Neg",
                                               "Not",
                                               "Reciprocal",
                                               "Relu",
                                               "Round",
                                               "Sigmoid",
                                               "Sign",
                                               "Sin",
                                               "Sinh",
                                               "Sqrt",
                                               "Tan",
                                               "Tanh",
                                               "Cast",
                                               "Softplus",
                                               "Softsign",
                                               "HardSigmoid",
                                               "Elu",
                                               "Selu",
                                               "LeakyRelu",
                                               "ThresholdedRelu",
                                               "Celu",
                                               "Mish",
                                               "HardSwish",
                                               "BitwiseNot"};
  if (n == nullptr || n->num_inputs() != 1 || n->num_outputs() != 1) {
    return false;
  }
  for (absl::string_view op : kOps) {
    if (IsOp(n, op)) return true;
  }
  return false;
}

bool IsBroadcastBinary(const Node* n) {
  static constexpr absl::string_view kOps[] = {"Add", "Sub", "Mul", "Div",
                                               "Max", "Min", "Pow"};
  if (n == nullptr || n->num_inputs() != 2 || n->num_outputs() != 1 ||
      n->input(0) == nullptr || n->input(1) == nullptr) {
    return false;
  }
  for (absl::string_view op : kOps) {
    if (IsOp(n, op)) return true;
  }
  return false;
}

bool IsConstOperand(const Value* v) {
  return v != nullptr && v->is_initializer() && v->const_value() != nullptr &&
         v->shape() != nullptr;
}

// One step of a chain: the elementwise op and which input continues it.
struct ChainStep {
  Node* node;
  int through;  // the non-constant input
};

std::optional<std::vector<int64_t>> PermOf(const Node* t);

// From `v` down: unary layout-invariant ops and binary ops with an
// initializer operand, each output used once, ending at a Transpose of
// rank `rank` used once. Returns the steps (top first) and that Transpose.
std::optional<std::pair<std::vector<ChainStep>, Node*>> ChainToTranspose(
    Value* v, size_t rank) {
  std::vector<ChainStep> steps;
  for (int depth = 0; depth < 16 && v != nullptr; ++depth) {
    Node* n = v->producer();
    if (n == nullptr || !HasSingleUse(v)) return std::nullopt;
    if (IsOp(n, "Transpose")) {
      std::optional<std::vector<int64_t>> p = PermOf(n);
      if (!p.has_value() || p->size() != rank || steps.empty()) {
        return std::nullopt;
      }
      return std::make_pair(std::move(steps), n);
    }
    int through = -1;
    if (IsLayoutInvariantUnary(n)) {
      through = 0;
    } else if (IsBroadcastBinary(n)) {
      for (int i = 0; i < 2; ++i) {
        const Value* c = n->input(1 - i);
        if (IsConstOperand(c) && c->shape()->rank() <= rank &&
            !IsConstOperand(n->input(i))) {
          through = i;
        }
      }
    }
    if (through < 0) return std::nullopt;
    steps.push_back({n, through});
    v = n->input(through);
  }
  return std::nullopt;
}

std::optional<Type> PermutedTypeOf(const Value* v,
                                   const std::vector<int64_t>& perm) {
  const Type* t = v->type();
  if (t == nullptr || !t->is_tensor()) return std::nullopt;
  if (!t->shape().has_value() || t->shape()->rank() != perm.size()) {
    return Type::Tensor(t->elem_type());
  }
  std::vector<Dim> dims;
  for (int64_t p : perm) dims.push_back((*t->shape())[p]);
  return Type::Tensor(t->elem_type(), Shape(std::move(dims)));
}

std::optional<std::vector<int64_t>> PermOf(const Node* t) {
  if (!IsOp(t, "Transpose") || t->num_inputs() != 1 || t->input(0) == nullptr) {
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> perm = IntsAttr(t, "perm");
  if (!perm.has_value()) {
    const Shape* s = t->input(0)->shape();
    if (s == nullptr) return std::nullopt;
    perm.emplace();
    for (int64_t i = static_cast<int64_t>(s->rank()) - 1; i >= 0; --i) {
      perm->push_back(i);
    }
  }
  return perm;
}

bool IsIdentityPerm(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::vector<int64_t> Compose(const std::vector<int64_t>& inner,
                             const std::vector<int64_t>& outer) {
  std::vector<int64_t> out;
  for (int64_t i : outer) out.push_back(inner[i]);
  return out;
}

bool IsRank2Float(const Value* v) {
  const Shape* s = v == nullptr ? nullptr : v->shape();
  return s != nullptr && s->rank() == 2 &&
         v->dtype() == onnx::TensorProto::FLOAT;
}

bool IsSwap2(const Node* t) {
  std::optional<std::vector<int64_t>> p = PermOf(t);
  return p.has_value() && *p == std::vector<int64_t>{1, 0};
}

class TransposeFolding : public Pass {
 public:
  absl::string_view name() const override { return "transpose-folding"; }
  std::vector<absl::string_view> AnchorOps() const override {
    return {"Transpose"};
  }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      for (Node* node : g->nodes()) {
        if (IsOp(node, "MatMul") || IsOp(node, "Gemm")) {
          changed |= FoldIntoGemm(node);
          continue;
        }
        std::optional<std::vector<int64_t>> perm = PermOf(node);
        if (!perm.has_value()) continue;
        Value* out = node->output(0);
        if (out->num_uses() == 0 && !out->is_graph_output()) continue;
        // A graph output keeps its value (its name is the interface): the
        // Transpose becomes an Identity, which identity-elimination folds
        // into the producer by renaming where it can.
        auto becomes = [&](Value* source) {
          if (out->is_graph_output()) {
            node->ReplaceInputWith(0, source);
            node->RemoveAttr("perm");
            node->set_op_type("Identity");
            node->set_name(DerivedNodeName(node, "Identity"));
          } else {
            ReplaceAllUsesWith(out, source);
          }
        };
        if (IsIdentityPerm(*perm)) {
          becomes(node->input(0));
          changed = true;
          continue;
        }
        Node* inner = node->input(0)->producer();
        if (std::optional<std::vector<int64_t>> p1 = PermOf(inner)) {
          if (p1->size() != perm->size()) continue;
          const std::vector<int64_t> merged = Compose(*p1, *perm);
          if (IsIdentityPerm(merged)) {
            becomes(inner->input(0));
          } else {
            node->ReplaceInputWith(0, inner->input(0));
            node->SetAttr(Attr::Ints("perm", merged));
          }
          changed = true;
          continue;
        }
        // Transpose(f(Transpose(x))): swap f and the outer Transpose.
        Node* first =
            IsLayoutInvariantUnary(inner) && inner->input(0) != nullptr
                ? inner->input(0)->producer()
                : nullptr;
        std::optional<std::vector<int64_t>> p1 = PermOf(first);
        if (p1.has_value() && !out->is_graph_output() &&
            HasSingleUse(inner->output(0)) && p1->size() == perm->size() &&
            HasSingleUse(first->output(0))) {
          // first: y = T(x, p1); inner: z = f(y); node: w = T(z, perm).
          // Rewrite: first' = T(x, p1 o perm) feeding f, whose output takes
          // w's place (its type becomes w's type with f's dtype).
          const std::vector<int64_t> merged = Compose(*p1, *perm);
          first->SetAttr(Attr::Ints("perm", merged));
          if (const Type* t = out->type()) {
            first->output(0)->SetType(
                Type::Tensor(first->input(0)->dtype(), t->shape()));
            inner->output(0)->SetType(*t);
          } else {
            first->output(0)->SetType(std::nullopt);
            inner->output(0)->SetType(std::nullopt);
          }
          ReplaceAllUsesWith(out, inner->output(0));
          changed = true;
          continue;
        }
        // Longer chains, binary ops with constants, graph outputs.
        if (MoveThroughChain(node, *perm, g->root() == &model.graph())) {
          changed = true;
        }
      }
    }
    return changed;
  }

 private:
  // Transpose(chain(Transpose(x))): see the top comment.
  static bool MoveThroughChain(Node* node, const std::vector<int64_t>& perm,
                               bool can_add_constants) {
    auto chain = ChainToTranspose(node->input(0), perm.size());
    if (!chain.has_value()) return false;
    auto& [steps, first] = *chain;
    for (const ChainStep& step : steps) {
      if (step.node->num_inputs() != 2) continue;
      const Value* c = step.node->input(1 - step.through);
      int64_t elements = 1;
      for (const Dim& d : c->shape()->dims()) {
        if (!d.is_value()) return false;
        elements *= d.value();
      }
      if (elements != 1 && c->shape()->rank() < perm.size() &&
          !can_add_constants) {
        return false;
      }
    }
    const std::vector<int64_t> merged = Compose(*PermOf(first), perm);
    first->SetAttr(Attr::Ints("perm", merged));
    first->output(0)->SetType(PermutedTypeOf(first->output(0), perm));
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      Node* n = it->node;
      if (n->num_inputs() == 2) {
        const int ci = 1 - it->through;
        Value* c = n->input(ci);
        const std::vector<Dim>& dims = c->shape()->dims();
        int64_t elements = 1;
        for (const Dim& d : dims) elements *= d.value();
        if (elements != 1) {
          // Full rank with leading 1s, then the outer permutation.
          Value* full = c;
          if (dims.size() < perm.size()) {
            std::vector<int64_t> shape(perm.size() - dims.size(), 1);
            std::vector<Dim> full_dims(shape.begin(), shape.end());
            for (const Dim& d : dims) {
              shape.push_back(d.value());
              full_dims.push_back(d);
            }
            full = InsertNodeBefore(
                       n, "Reshape",
                       {c, AddI64Initializer(n->graph(), "shape", shape)}, {},
                       Type::Tensor(c->dtype(), Shape(full_dims)))
                       ->output(0);
          }
          Node* t = InsertNodeBefore(n, "Transpose", {full}, {},
                                     PermutedTypeOf(full, perm));
          t->SetAttr(Attr::Ints("perm", perm));
          n->ReplaceInputWith(ci, t->output(0));
        }
      }
      n->output(0)->SetType(PermutedTypeOf(n->output(0), perm));
    }
    Value* top = steps.front().node->output(0);
    if (node->output(0)->is_graph_output()) {
      // The graph output keeps its value and name: the Transpose becomes an
      // Identity of the chain, which identity-elimination folds by renaming.
      node->ReplaceInputWith(0, top);
      node->RemoveAttr("perm");
      node->set_op_type("Identity");
      node->set_name(DerivedNodeName(node, "Identity"));
    } else {
      ReplaceAllUsesWith(node->output(0), top);
    }
    return true;
  }

  // MatMul(T(a), b) / MatMul(a, T(b)) with rank-2 operands -> Gemm with
  // transA/transB; also folds such Transposes into an existing Gemm.
  static bool FoldIntoGemm(Node* node) {
    if (node->num_inputs() < 2 || node->num_outputs() != 1) return false;
    bool changed = false;
    for (int i = 0; i < 2; ++i) {
      Value* operand = node->input(i);
      Node* t = operand == nullptr ? nullptr : operand->producer();
      if (!IsSwap2(t) || !IsRank2Float(operand) ||
          !IsRank2Float(node->output(0))) {
        continue;
      }
      const char* flag = i == 0 ? "transA" : "transB";
      if (IsOp(node, "Gemm")) {
        if (IntAttr(node, flag, 0) != 0) continue;
      } else {
        if (!IsRank2Float(node->input(1 - i))) continue;
        node->set_op_type("Gemm");
        node->set_name(DerivedNodeName(node, "Gemm"));
      }
      node->SetAttr(Attr::Int(flag, 1));
      node->ReplaceInputWith(i, t->input(0));
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateTransposeFoldingPass() {
  return std::make_unique<TransposeFolding>();
}

}  // namespace jax2onnx::ir
