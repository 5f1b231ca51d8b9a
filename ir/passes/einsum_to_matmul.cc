// einsum-to-matmul: rewrites a two-operand Einsum that is a (batched)
// matrix product up to operand transposes as MatMul, with a Transpose on an
// operand whose axes are not already in MatMul order (constant-folding
// folds it into a weight; transpose-folding merges it with other
// Transposes). The equation must name every axis once per operand (no
// ellipsis, no diagonal), contract exactly one letter, list the output as
// batch letters, then lhs-free letters, then rhs-free letters (the order
// dot_general produces), with either
//  - no batch letters and at most one rhs-free letter: [M..., k] x [k, n]
//    (or x [k] when there is no rhs-free letter), MatMul broadcasting the
//    2-D (1-D) rhs over the lhs's leading axes; or
//  - batch letters and exactly one free letter per operand:
//    [B..., m, k] x [B..., k, n].
// MatMul computes the same sums of products as Einsum.
//
// Refuses: more or fewer than one contracted letter, letters summed out of
// one operand only, any other output order, ellipsis, repeated letters,
// unknown operand ranks, and a matrix-vector product whose matrix would
// need a Transpose (see PlanFor).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

struct Plan {
  std::vector<int64_t> lhs_perm, rhs_perm;  // empty: no Transpose needed
};

bool Unique(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.find(s[i], i + 1) != std::string::npos) return false;
  }
  return true;
}

// Permutation of `from` giving the letters of `to`; empty when the identity.
std::vector<int64_t> PermFor(const std::string& from, const std::string& to) {
  std::vector<int64_t> perm;
  bool identity = true;
  for (size_t i = 0; i < to.size(); ++i) {
    perm.push_back(static_cast<int64_t>(from.find(to[i])));
    identity &= perm.back() == static_cast<int64_t>(i);
  }
  if (identity) perm.clear();
  return perm;
}

std::optional<Plan> PlanFor(std::string equation) {
  equation.erase(std::remove(equation.begin(), equation.end(), ' '),
                 equation.end());
  if (equation.find('.') != std::string::npos) return std::nullopt;
  const size_t arrow = equation.find("->");
  if (arrow == std::string::npos) return std::nullopt;
  std::vector<std::string> ops = absl::StrSplit(equation.substr(0, arrow), ',');
  if (ops.size() != 2) return std::nullopt;
  const std::string& l = ops[0];
  const std::string& r = ops[1];
  const std::string o = equation.substr(arrow + 2);
  if (!Unique(l) || !Unique(r) || !Unique(o)) return std::nullopt;
  auto in = [](const std::string& s, char c) {
    return s.find(c) != std::string::npos;
  };
  std::string batch, lfree, rfree, contracted;
  for (char c : l) {
    if (in(r, c) && in(o, c)) {
      batch.push_back(c);
    } else if (in(r, c)) {
      contracted.push_back(c);
    } else if (in(o, c)) {
      lfree.push_back(c);
    } else {
      return std::nullopt;  // summed out of lhs alone
    }
  }
  for (char c : r) {
    if (in(l, c)) continue;
    if (!in(o, c)) return std::nullopt;
    rfree.push_back(c);
  }
  if (contracted.size() != 1) return std::nullopt;
  // Batch letters keep the output's order.
  std::string out_batch = o.substr(0, batch.size());
  for (char c : out_batch) {
    if (!in(batch, c)) return std::nullopt;
  }
  if (o != out_batch + lfree + rfree) return std::nullopt;
  const char k = contracted[0];
  std::string lt, rt;
  if (batch.empty()) {
    if (rfree.size() > 1) return std::nullopt;
    lt = lfree + k;
    rt = std::string(1, k) + rfree;
    // A matrix-vector product whose matrix needs a Transpose stays an
    // Einsum: ONNX Runtime (1.30, CPU, optimizations on) gave wrong numbers
    // for Transpose -> MatMul with a 1-D rhs (testdata/linalg/gp_posterior,
    // `ab,a->b`, while the rewrite is exact), most likely in its
    // Transpose/MatMul fusion.
    if (rfree.empty() && !PermFor(l, lt).empty()) return std::nullopt;
  } else {
    if (lfree.size() != 1 || rfree.size() != 1) return std::nullopt;
    lt = out_batch + lfree + k;
    rt = out_batch + k + rfree;
  }
  return Plan{PermFor(l, lt), PermFor(r, rt)};
}

std::optional<Type> PermutedType(const Value* v,
                                 const std::vector<int64_t>& perm) {
  const Shape* s = v->shape();
  if (s == nullptr || s->rank() != perm.size()) return std::nullopt;
  std::vector<Dim> dims;
  for (int64_t p : perm) dims.push_back((*s)[p]);
  return Type::Tensor(v->dtype(), Shape(std::move(dims)));
}

class EinsumToMatMul : public Pass {
 public:
  absl::string_view name() const override { return "einsum-to-matmul"; }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      for (Node* node : g->nodes()) {
        if (!IsOp(node, "Einsum") || node->num_inputs() != 2 ||
            node->num_outputs() != 1 || node->input(0) == nullptr ||
            node->input(1) == nullptr) {
          continue;
        }
        const Attr* eq = node->attr("equation");
        if (eq == nullptr || eq->is_ref() ||
            eq->type() != onnx::AttributeProto::STRING) {
          continue;
        }
        std::optional<Plan> plan = PlanFor(eq->s());
        if (!plan.has_value()) continue;
        Value* operands[2] = {node->input(0), node->input(1)};
        const std::vector<int64_t>* perms[2] = {&plan->lhs_perm,
                                                &plan->rhs_perm};
        bool ranks_known = true;
        for (int i = 0; i < 2; ++i) {
          if (!perms[i]->empty() &&
              (operands[i]->shape() == nullptr ||
               operands[i]->shape()->rank() != perms[i]->size())) {
            ranks_known = false;
          }
        }
        if (!ranks_known) continue;
        for (int i = 0; i < 2; ++i) {
          if (perms[i]->empty()) continue;
          Node* t = InsertNodeBefore(node, "Transpose", {operands[i]}, {},
                                     PermutedType(operands[i], *perms[i]));
          t->SetAttr(Attr::Ints("perm", *perms[i]));
          node->ReplaceInputWith(i, t->output(0));
        }
        node->set_op_type("MatMul");
        node->RemoveAttr("equation");
        node->set_name(DerivedNodeName(node, "MatMul"));
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateEinsumToMatMulPass() {
  return std::make_unique<EinsumToMatMul>();
}

}  // namespace jax2onnx::ir
