// einsum-to-matmul: rewrites a two-operand Einsum that is a (batched)
// matrix product up to operand transposes and reshapes as MatMul. The
// equation must name every axis once per operand (no ellipsis, no
// diagonal), contract at least one letter, and list the output as batch
// letters, then lhs-free letters, then rhs-free letters (the order
// dot_general produces). With K the contracted letters (in lhs order) and N
// the rhs-free letters:
//  - no batch letters: [M..., K...] x [K..., N...], MatMul broadcasting the
//    2-D rhs [prod K, prod N] (1-D [prod K] when N is empty) over the lhs's
//    leading axes; or
//  - batch letters and exactly one lhs-free letter:
//    [B..., m, K...] x [B..., K..., N...] with N not empty.
// An operand whose axes are not in that order gets a Transpose
// (constant-folding folds it into a weight; transpose-folding merges it
// with other Transposes). Several contracted letters are merged by a
// Reshape of each operand to their product, several rhs-free letters by a
// Reshape of the rhs, and the MatMul's merged last axis is split back by a
// Reshape to the Einsum's output (Flax DenseGeneral with a 3-D kernel:
// `abc,cde->abde`, `abcd,cde->abe`). A Reshape of a constant kernel is
// folded by constant-folding. Reshapes never move elements (row-major), so
// MatMul computes the same sums of products as Einsum. Reshape targets copy
// a leading axis that keeps its position with 0 (exact for symbolic batch
// axes) and give merged or moved axes as static sizes.
//
// Refuses: no contracted letter, letters summed out of one operand only,
// any other output order, ellipsis, repeated letters, unknown operand ranks
// (when a Transpose or Reshape is needed), a merged or moved axis of
// non-static or zero size, Reshapes inside function bodies (no
// initializers there), and a matrix-vector product whose matrix would need
// a Transpose (see PlanFor).
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

// The operand letter orders MatMul needs (before merging), and the groups.
struct Plan {
  std::string lhs, rhs;              // the equation's operand letters
  std::string lhs_order, rhs_order;  // letters after the operand Transposes
  std::string lhs_keep;              // leading lhs letters (batch + lhs-free)
  std::string batch, contracted, rhs_free;
  std::string output;
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
  if (contracted.empty()) return std::nullopt;
  // Batch letters keep the output's order.
  std::string out_batch = o.substr(0, batch.size());
  for (char c : out_batch) {
    if (!in(batch, c)) return std::nullopt;
  }
  if (o != out_batch + lfree + rfree) return std::nullopt;
  Plan plan;
  plan.lhs = l;
  plan.rhs = r;
  plan.batch = out_batch;
  plan.contracted = contracted;
  plan.rhs_free = rfree;
  plan.output = o;
  plan.lhs_keep = out_batch + lfree;
  plan.lhs_order = plan.lhs_keep + contracted;
  plan.rhs_order = out_batch + contracted + rfree;
  if (batch.empty()) {
    // A matrix-vector product whose matrix needs a Transpose stays an
    // Einsum: ONNX Runtime (1.30, CPU, optimizations on) gave wrong numbers
    // for Transpose -> MatMul with a 1-D rhs (testdata/linalg/gp_posterior,
    // `ab,a->b`, while the rewrite is exact), most likely in its
    // Transpose/MatMul fusion.
    if (rfree.empty() && !PermFor(l, plan.lhs_order).empty()) {
      return std::nullopt;
    }
  } else if (lfree.size() != 1 || rfree.empty()) {
    return std::nullopt;
  }
  return plan;
}

// A tensor type of `dtype` and `dims`; none (left to type-propagation) when
// the dtype is not known (an untyped operand would serialize as type 0).
std::optional<Type> TypeOf(int dtype, std::vector<Dim> dims) {
  if (dtype == onnx::TensorProto::UNDEFINED) return std::nullopt;
  return Type::Tensor(dtype, Shape(std::move(dims)));
}

std::optional<Type> PermutedType(const Value* v,
                                 const std::vector<int64_t>& perm) {
  const Shape* s = v->shape();
  if (s == nullptr || s->rank() != perm.size()) return std::nullopt;
  std::vector<Dim> dims;
  for (int64_t p : perm) dims.push_back((*s)[p]);
  return TypeOf(v->dtype(), std::move(dims));
}

// The size of each letter, from whichever operand shape knows it statically
// (the two agree at run time); unknown dims stay unknown.
std::map<char, Dim> LetterDims(const std::string& letters, const Value* v,
                               std::map<char, Dim> dims) {
  const Shape* s = v->shape();
  if (s == nullptr || s->rank() != letters.size()) return dims;
  for (size_t i = 0; i < letters.size(); ++i) {
    Dim& d = dims[letters[i]];
    if (!d.is_value()) d = (*s)[i];
  }
  return dims;
}

// A Reshape target and the dims of its result, for `groups` of letters:
// each group becomes one axis of the product of its letters' sizes. The
// first `copyable` groups are single letters at the same position in the
// Reshape's input; one whose size is symbolic (or 0) is copied with a 0
// entry. Every other group needs a static nonzero size (a 0 entry would
// copy an input dim instead).
struct ReshapeTo {
  std::vector<int64_t> target;
  std::vector<Dim> dims;
};

std::optional<ReshapeTo> ReshapeFor(const std::vector<std::string>& groups,
                                    size_t copyable,
                                    const std::map<char, Dim>& dims) {
  ReshapeTo r;
  for (size_t i = 0; i < groups.size(); ++i) {
    const std::string& group = groups[i];
    if (i < copyable) {
      const Dim& d = dims.at(group[0]);
      r.target.push_back(d.is_value() ? d.value() : 0);
      r.dims.push_back(d);
      continue;
    }
    int64_t size = 1;
    for (char c : group) {
      const Dim& d = dims.at(c);
      if (!d.is_value() || d.value() == 0) return std::nullopt;
      size *= d.value();
    }
    r.target.push_back(size);
    r.dims.push_back(Dim(size));
  }
  return r;
}

std::vector<std::string> Singles(const std::string& letters) {
  std::vector<std::string> groups;
  for (char c : letters) groups.push_back(std::string(1, c));
  return groups;
}

Value* Reshaped(Node* anchor, Value* v, const ReshapeTo& to) {
  Graph* g = anchor->graph();
  Node* r = InsertNodeBefore(anchor, "Reshape",
                             {v, AddI64Initializer(g, "shape", to.target)}, {},
                             TypeOf(v->dtype(), to.dims));
  return r->output(0);
}

// Rewrites one Einsum node by its plan; false (nothing touched) when a shape
// the rewrite needs is unknown or a Reshape cannot be written exactly.
bool Rewrite(Node* node, const Plan& plan, bool can_add_constants) {
  Value* lhs = node->input(0);
  Value* rhs = node->input(1);
  const std::vector<int64_t> lhs_perm = PermFor(plan.lhs, plan.lhs_order);
  const std::vector<int64_t> rhs_perm = PermFor(plan.rhs, plan.rhs_order);
  const bool merge_k = plan.contracted.size() > 1;
  const bool merge_n = plan.rhs_free.size() > 1;
  auto rank_is = [](const Value* v, size_t rank) {
    return v->shape() != nullptr && v->shape()->rank() == rank;
  };
  if (!lhs_perm.empty() && !rank_is(lhs, lhs_perm.size())) return false;
  if (!rhs_perm.empty() && !rank_is(rhs, rhs_perm.size())) return false;
  std::optional<ReshapeTo> lhs_to, rhs_to, out_to;
  std::vector<Dim> matmul_dims;
  if (merge_k || merge_n) {
    if (!can_add_constants || !rank_is(lhs, plan.lhs.size()) ||
        !rank_is(rhs, plan.rhs.size())) {
      return false;
    }
    const std::map<char, Dim> dims =
        LetterDims(plan.rhs, rhs, LetterDims(plan.lhs, lhs, {}));
    const size_t nb = plan.batch.size();
    if (merge_k) {
      std::vector<std::string> groups = Singles(plan.lhs_keep);
      groups.push_back(plan.contracted);
      lhs_to = ReshapeFor(groups, plan.lhs_keep.size(), dims);
      if (!lhs_to.has_value()) return false;
    }
    std::vector<std::string> groups = Singles(plan.batch);
    groups.push_back(plan.contracted);
    if (!plan.rhs_free.empty()) groups.push_back(plan.rhs_free);
    rhs_to = ReshapeFor(groups, merge_k ? nb : nb + 1, dims);
    if (!rhs_to.has_value()) return false;
    if (merge_n) {
      out_to = ReshapeFor(Singles(plan.output), plan.lhs_keep.size(), dims);
      if (!out_to.has_value()) return false;
      for (char c : plan.lhs_keep) matmul_dims.push_back(dims.at(c));
      matmul_dims.push_back(rhs_to->dims.back());
    }
  }
  if (!lhs_perm.empty()) {
    Node* t = InsertNodeBefore(node, "Transpose", {lhs}, {},
                               PermutedType(lhs, lhs_perm));
    t->SetAttr(Attr::Ints("perm", lhs_perm));
    lhs = t->output(0);
  }
  if (lhs_to.has_value()) lhs = Reshaped(node, lhs, *lhs_to);
  if (!rhs_perm.empty()) {
    Node* t = InsertNodeBefore(node, "Transpose", {rhs}, {},
                               PermutedType(rhs, rhs_perm));
    t->SetAttr(Attr::Ints("perm", rhs_perm));
    rhs = t->output(0);
  }
  if (rhs_to.has_value()) rhs = Reshaped(node, rhs, *rhs_to);
  node->RemoveAttr("equation");
  if (!out_to.has_value()) {
    node->ReplaceInputWith(0, lhs);
    node->ReplaceInputWith(1, rhs);
    node->set_op_type("MatMul");
    node->set_name(DerivedNodeName(node, "MatMul"));
    return true;
  }
  // The MatMul's last axis holds the rhs-free letters merged; the Einsum
  // node becomes the Reshape splitting it, keeping the output value.
  Node* matmul = InsertNodeBefore(node, "MatMul", {lhs, rhs}, {},
                                  TypeOf(lhs->dtype(), matmul_dims));
  node->ReplaceInputWith(0, matmul->output(0));
  node->ReplaceInputWith(
      1, AddI64Initializer(node->graph(), "shape", out_to->target));
  node->set_op_type("Reshape");
  node->set_name(DerivedNodeName(node, "Reshape"));
  return true;
}

class EinsumToMatMul : public Pass {
 public:
  absl::string_view name() const override { return "einsum-to-matmul"; }
  std::vector<absl::string_view> AnchorOps() const override {
    return {"Einsum"};
  }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      const bool can_add_constants = g->root() == &model.graph();
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
        changed |= Rewrite(node, *plan, can_add_constants);
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
