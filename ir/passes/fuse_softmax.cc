// fuse-softmax: rewrites the max-subtracted exponential chains of
// jax.nn.softmax and jax.nn.log_softmax (inside or outside their
// custom_jvp_call / jit wrappers, which the IR pipeline inlines) into
// Softmax / LogSoftmax (opset >= 13 semantics: one axis).
//
// Recognised (x float32 of static rank r, one axis a, "kept" meaning the
// reduced axis re-inserted as size 1 by keepdims=1 or Unsqueeze / Reshape /
// Expand, Identity nodes from stop_gradient skipped anywhere):
//   m   = ReduceMax(x, [a])  [then Max(-inf, .): jnp.max's initial=-inf]
//         (possibly wrapped in the exact NaN / signed-zero fix-up of
//         plugin/float_extremes.h: SkipExactMaxFixup)
//   s   = x - m_kept
//   e   = Exp(s)
//   softmax     = e / ReduceSum(e, [a])_kept
//   log_softmax = s - Log(ReduceSum(Exp(s), [a])_kept)
//
// Semantics: Softmax(axis=a) is exp(x - max) / sum(exp(x - max)) along a,
// LogSoftmax(axis=a) is (x - max) - log(sum(exp(x - max))): the matched
// chains exactly, up to rounding. max(-inf, m) = m for every m (a NaN m
// stays NaN, and the row is NaN in both forms).
//
// Refuses: element types other than float32, several or non-constant axes,
// a different x feeding the max and the subtraction, a Max with anything
// but -inf, intermediates used outside the chain (e.g. the row max reused).
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "ir/passes/fusion_match.h"
#include "ir/passes/fusions.h"

namespace jax2onnx::ir {
namespace {

using fusion::Match;

bool IsScalar(Value* x, double want) {
  std::optional<double> c = fusion::ScalarConstant(x);
  return c.has_value() && (std::isnan(want) ? std::isnan(*c) : *c == want);
}

// plugin/float_extremes.h's SelectNegativeZero around a value r:
//   Mul(Where(Equal(r, 0), 0, r), Where(And(Equal(r, 0), cond), -1, 1))
// equals r except for the sign of a zero, which Softmax/LogSoftmax do not
// see (x - (+0) and x - (-0) have the same exp). Returns r with the
// wrapper added to `m` (cond's nodes are left to dead-node pruning unless
// the caller collects them), or nullptr.
Value* SkipSelectNegativeZero(Value* v, Match* m, Node** and_node) {
  Node* mul = fusion::ProducerIs(v, "Mul");
  if (mul == nullptr || mul->num_inputs() != 2) return nullptr;
  Node* zeros_positive = fusion::ProducerIs(mul->input(0), "Where");
  Node* sign = fusion::ProducerIs(mul->input(1), "Where");
  if (zeros_positive == nullptr || zeros_positive->num_inputs() != 3 ||
      sign == nullptr || sign->num_inputs() != 3 ||
      !IsScalar(zeros_positive->input(1), 0.0) ||
      !IsScalar(sign->input(1), -1.0) || !IsScalar(sign->input(2), 1.0)) {
    return nullptr;
  }
  Value* r = zeros_positive->input(2);
  auto is_zero_test = [&](Node* n) {
    return n != nullptr && n->num_inputs() == 2 &&
           fusion::SameValue(n->input(0), r) && IsScalar(n->input(1), 0.0);
  };
  Node* zero_test = fusion::ProducerIs(zeros_positive->input(0), "Equal");
  Node* both = fusion::ProducerIs(sign->input(0), "And");
  Node* is_zero = both ? fusion::ProducerIs(both->input(0), "Equal") : nullptr;
  if (!is_zero_test(zero_test) || !is_zero_test(is_zero)) return nullptr;
  for (Node* n : {mul, zeros_positive, sign, zero_test, both, is_zero}) {
    m->Add(n);
  }
  *and_node = both;
  return r;
}

// The exact float reduce_max of plugin/float_extremes.h around a plain
// ReduceMax r of x:
//   Where(Greater(ReduceMax(Where(IsNaN(x), 1, 0)), 0), NaN,
//         SelectNegativeZero(..., r))
// Returns r with the wrappers added to `m`, or `v` when it is not that form.
// A NaN anywhere in a row makes the whole row NaN in both forms.
Value* SkipExactMaxFixup(Value* v, Match* m) {
  Node* nan_where = fusion::ProducerIs(v, "Where");
  if (nan_where == nullptr || nan_where->num_inputs() != 3 ||
      !IsScalar(nan_where->input(1), std::numeric_limits<double>::quiet_NaN())) {
    return v;
  }
  Node* greater = fusion::ProducerIs(nan_where->input(0), "Greater");
  Node* nan_max =
      greater ? fusion::ProducerIs(greater->input(0), "ReduceMax") : nullptr;
  Node* mask = nan_max ? fusion::ProducerIs(nan_max->input(0), "Where") : nullptr;
  Node* is_nan = mask ? fusion::ProducerIs(mask->input(0), "IsNaN") : nullptr;
  if (is_nan == nullptr || !IsScalar(greater->input(1), 0.0)) return v;
  Match trial = *m;
  Node* both = nullptr;
  Value* r = SkipSelectNegativeZero(nan_where->input(2), &trial, &both);
  Node* reduce = r ? fusion::ProducerIs(r, "ReduceMax") : nullptr;
  if (reduce == nullptr ||
      !fusion::SameValue(reduce->input(0), is_nan->input(0))) {
    return v;
  }
  trial.Add(nan_where);
  *m = std::move(trial);
  return r;
}

// True when `v` depends on constants only (initializers, Constant nodes and
// nodes over them, within `depth` producers). Such a cone is left out of a
// match: common-subexpression elimination shares it between the softmaxes of
// a model (the sign test of jnp.max's initial -inf, IsSignedZero(-inf), is
// the same nodes in every attention block), so it has users outside any one
// match, and a constant needs no fusing.
bool IsConstantCone(const Value* v, int depth) {
  if (v == nullptr) return true;  // an absent optional input
  const Node* n = v->producer();
  if (n == nullptr) return fusion::ConstantOf(v) != nullptr;
  if (n->domain().empty() && n->op_type() == "Constant") return true;
  if (depth <= 0) return false;
  for (int i = 0; i < n->num_inputs(); ++i) {
    if (!IsConstantCone(n->input(i), depth - 1)) return false;
  }
  return true;
}

// Adds to `m` the nodes computing `v` back to (not including) `stops`,
// graph inputs and constants (constant cones included); false when that
// takes more than `budget` nodes.
bool CollectCone(Value* v, const std::vector<Value*>& stops, int* budget,
                 Match* m) {
  for (Value* s : stops) {
    if (fusion::SameValue(v, s)) return true;
  }
  Node* n = v == nullptr ? nullptr : v->producer();
  if (n == nullptr || m->nodes.contains(n)) return true;
  if (fusion::ScalarConstant(v).has_value()) return true;
  if (IsConstantCone(v, 4)) return true;
  if (--*budget < 0) return false;
  m->Add(n);
  for (int i = 0; i < n->num_inputs(); ++i) {
    if (!CollectCone(n->input(i), stops, budget, m)) return false;
  }
  return true;
}

// The exact float max(a, b) of plugin/float_extremes.h (ExactMaxMin):
// SelectNegativeZero(Not(Or(a is +0, b is +0)), Max(a, b)). Returns the
// Max's output with the whole wrapper added to `m` (its sign tests read a
// and b, so they must fuse along), else `v`.
Value* SkipExactMaxOfTwo(Value* v, Match* m) {
  Match trial = *m;
  Node* both = nullptr;
  Value* r = SkipSelectNegativeZero(v, &trial, &both);
  Node* max = r ? fusion::ProducerIs(r, "Max") : nullptr;
  if (max == nullptr || max->num_inputs() != 2) return v;
  int budget = 16;
  if (!CollectCone(both->input(1), {max->input(0), max->input(1)}, &budget,
                   &trial)) {
    return v;
  }
  *m = std::move(trial);
  return r;
}

// s = x - max_kept(x) over some axis: returns x and sets *axis.
Value* MatchShifted(Value* s, int* axis, Match* m) {
  Node* sub = fusion::ProducerIs(s, "Sub");
  if (sub == nullptr) return nullptr;
  Value* x = sub->input(0);
  int rank = fusion::RankOf(x);
  if (rank < 1) return nullptr;
  for (int a = 0; a < rank; ++a) {
    Match trial = *m;
    trial.Add(sub);
    bool kept = false;
    Value* mx = fusion::StripKeptAxis(sub->input(1), a, rank, &kept, &trial);
    if (mx == nullptr) continue;
    // jnp.max(..., initial=-inf) applies max(initial, reduce_max(x)).
    mx = SkipExactMaxOfTwo(mx, &trial);
    if (Node* init = fusion::ProducerIs(mx, "Max")) {
      for (int i = 0; i < 2; ++i) {
        std::optional<double> c = fusion::ScalarConstant(init->input(i));
        if (c && *c == -std::numeric_limits<double>::infinity() &&
            init->num_inputs() == 2) {
          trial.Add(init);
          mx = fusion::SkipIdentity(init->input(1 - i), &trial);
          break;
        }
      }
    }
    mx = SkipExactMaxFixup(mx, &trial);
    if (!fusion::SameValue(
            fusion::MatchReduce(mx, "ReduceMax", a, rank, kept, &trial), x)) {
      continue;
    }
    *axis = a;
    *m = std::move(trial);
    return x;
  }
  return nullptr;
}

// The kept ReduceSum of `v` over `axis`: returns the summed value.
Value* MatchKeptSum(Value* v, int axis, int rank, Match* m) {
  Match trial = *m;
  bool kept = false;
  Value* base = fusion::StripKeptAxis(v, axis, rank, &kept, &trial);
  if (base == nullptr) return nullptr;
  Value* e = fusion::MatchReduce(base, "ReduceSum", axis, rank, kept, &trial);
  if (e == nullptr) return nullptr;
  *m = std::move(trial);
  return e;
}

absl::StatusOr<bool> FuseAt(Graph& graph, Node* root,
                            const FusionOptions& options) {
  if (!root->domain().empty() || root->num_inputs() != 2) return false;
  // Only a Div or a Sub can end the pattern: refuse the rest before
  // building a match (this runs for every node).
  if (root->op_type() != "Div" && root->op_type() != "Sub") return false;
  Value* out = root->output(0);
  if (fusion::DtypeOf(out) != onnx::TensorProto::FLOAT) return false;
  Match m;
  m.Add(root);
  Value* x = nullptr;
  int axis = -1;
  const char* fused_op = nullptr;
  if (root->op_type() == "Div") {
    Node* exp = fusion::ProducerIs(root->input(0), "Exp");
    if (exp == nullptr) return false;
    m.Add(exp);
    x = MatchShifted(exp->input(0), &axis, &m);
    if (x == nullptr) return false;
    int rank = fusion::RankOf(x);
    if (!fusion::SameValue(MatchKeptSum(root->input(1), axis, rank, &m),
                           root->input(0))) {
      fusion::NearMiss(options, "fuse-softmax", root,
                       "exp(x - max(x)) is divided by something other than "
                       "its own sum over the axis, kept");
      return false;
    }
    fused_op = "Softmax";
  } else if (root->op_type() == "Sub") {
    Value* s = root->input(0);
    x = MatchShifted(s, &axis, &m);
    if (x == nullptr) return false;
    int rank = fusion::RankOf(x);
    Match trial = m;
    bool kept = false;
    Value* lg =
        fusion::StripKeptAxis(root->input(1), axis, rank, &kept, &trial);
    Node* log = fusion::ProducerIs(lg, "Log");
    if (log == nullptr) return false;
    trial.Add(log);
    // log(sum(exp(s))) with the axis kept before or after the Log.
    Value* summed = nullptr;
    if (kept) {
      summed = MatchKeptSum(log->input(0), axis, rank, &trial);
    } else {
      summed = fusion::MatchReduce(log->input(0), "ReduceSum", axis, rank,
                                   false, &trial);
    }
    Node* exp = fusion::ProducerIs(summed, "Exp");
    if (exp == nullptr || !fusion::SameValue(exp->input(0), s)) return false;
    trial.Add(exp);
    m = std::move(trial);
    fused_op = "LogSoftmax";
  } else {
    return false;
  }
  if (fusion::DtypeOf(x) != onnx::TensorProto::FLOAT) {
    fusion::NearMiss(options, "fuse-softmax", root, fusion::kNotFloat32);
    return false;
  }
  if (!fusion::SameShape(out, x)) {
    fusion::NearMiss(options, "fuse-softmax", root, fusion::kShapeChanges);
    return false;
  }
  if (!fusion::UsesStayInside(m, root, options.fuse_low_precision_chains)) {
    fusion::NearMiss(options, "fuse-softmax", root, fusion::kUsedOutside);
    return false;
  }
  std::vector<Attr> attrs;
  attrs.push_back(Attr::Int("axis", axis));
  Node* fused = graph.InsertBefore(
      root, Node::Create("", fused_op, {x}, {graph.FreshName("fused_softmax")},
                         std::move(attrs)));
  fused->output(0)->SetType(fusion::FusedType(out, x));
  if (absl::Status s =
          fusion::ReplaceAndErase(graph, root, fused->output(0), m);
      !s.ok()) {
    return s;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> FuseSoftmaxAt(Graph& graph, Node* root,
                                   const FusionOptions& options) {
  return FuseAt(graph, root, options);
}

}  // namespace jax2onnx::ir
