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

// The exact float reduce_max of plugin/float_extremes.h around a plain
// ReduceMax r of x (NaN anywhere in the slice gives NaN, a zero result its
// IEEE sign):
//   w1 = Where(Equal(r, 0), Reciprocal(ReduceMax(Where(Equal(x, 0),
//              Reciprocal(x), -inf))), r)
//   w2 = Where(Greater(ReduceMax(Where(IsNaN(x), 1, 0)), 0), NaN, w1)
// Returns r with w1, w2 and their conditions added to `m` (the side
// reductions are left for dead-node pruning), or `v` itself when it is not
// that form. Softmax/LogSoftmax stay exact: a NaN row max makes the whole
// row NaN in both forms, and x - (+0) and x - (-0) have the same exp.
Value* SkipExactMaxFixup(Value* v, Match* m) {
  auto producer = [](Value* x, absl::string_view op) -> Node* {
    Node* n = x == nullptr ? nullptr : x->producer();
    return n != nullptr && n->domain().empty() && n->op_type() == op ? n
                                                                      : nullptr;
  };
  auto is_scalar = [](Value* x, double want) {
    std::optional<double> c = fusion::ScalarConstant(x);
    return c.has_value() &&
           (std::isnan(want) ? std::isnan(*c) : *c == want);
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Node* w2 = producer(v, "Where");
  if (w2 == nullptr || w2->num_inputs() != 3 || !is_scalar(w2->input(1), nan)) {
    return v;
  }
  Node* greater = producer(w2->input(0), "Greater");
  Node* w1 = producer(w2->input(2), "Where");
  if (greater == nullptr || w1 == nullptr || w1->num_inputs() != 3 ||
      !is_scalar(greater->input(1), 0.0)) {
    return v;
  }
  Value* r = w1->input(2);
  Node* reduce = producer(r, "ReduceMax");
  Node* is_zero = producer(w1->input(0), "Equal");
  if (reduce == nullptr || is_zero == nullptr ||
      !fusion::SameValue(is_zero->input(0), r) ||
      !is_scalar(is_zero->input(1), 0.0)) {
    return v;
  }
  Value* x = reduce->input(0);
  // The NaN mask: ReduceMax(Where(IsNaN(x), 1, 0)).
  Node* nan_max = producer(greater->input(0), "ReduceMax");
  Node* nan_where = nan_max ? producer(nan_max->input(0), "Where") : nullptr;
  Node* is_nan = nan_where ? producer(nan_where->input(0), "IsNaN") : nullptr;
  if (is_nan == nullptr || !fusion::SameValue(is_nan->input(0), x)) return v;
  // The signed zero: Reciprocal(ReduceMax(Where(Equal(x, 0), 1/x, -inf))).
  Node* recip = producer(w1->input(1), "Reciprocal");
  Node* zero_max = recip ? producer(recip->input(0), "ReduceMax") : nullptr;
  Node* zero_where = zero_max ? producer(zero_max->input(0), "Where") : nullptr;
  Node* x_zero = zero_where ? producer(zero_where->input(0), "Equal") : nullptr;
  if (x_zero == nullptr || !fusion::SameValue(x_zero->input(0), x) ||
      !is_scalar(zero_where->input(2), -inf)) {
    return v;
  }
  for (Node* n : {w2, greater, w1, is_zero}) m->Add(n);
  return r;
}

// The exact float max(a, b) of plugin/float_extremes.h (ExactMaxMin):
//   Where(And(Equal(a, 0), Equal(b, 0)), Add(a, b), Max(a, b))
// Returns the Max's output with the wrapper added to `m` (all of it: the
// wrapper's nodes read a and b, so they must fuse along), else `v`.
Value* SkipExactMaxOfTwo(Value* v, Match* m) {
  Node* where = fusion::ProducerIs(v, "Where");
  if (where == nullptr || where->num_inputs() != 3) return v;
  Node* both = fusion::ProducerIs(where->input(0), "And");
  Node* sum = fusion::ProducerIs(where->input(1), "Add");
  Node* max = fusion::ProducerIs(where->input(2), "Max");
  if (both == nullptr || sum == nullptr || max == nullptr ||
      max->num_inputs() != 2) {
    return v;
  }
  Node* eq0 = fusion::ProducerIs(both->input(0), "Equal");
  Node* eq1 = fusion::ProducerIs(both->input(1), "Equal");
  if (eq0 == nullptr || eq1 == nullptr) return v;
  Value* a = max->input(0);
  Value* b = max->input(1);
  auto zero = [](Value* c) {
    std::optional<double> z = fusion::ScalarConstant(c);
    return z.has_value() && *z == 0.0;
  };
  if (!fusion::SameValue(eq0->input(0), a) || !zero(eq0->input(1)) ||
      !fusion::SameValue(eq1->input(0), b) || !zero(eq1->input(1)) ||
      !fusion::SameValue(sum->input(0), a) ||
      !fusion::SameValue(sum->input(1), b)) {
    return v;
  }
  for (Node* n : {where, both, sum, eq0, eq1}) m->Add(n);
  return max->output(0);
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
  if (fusion::DtypeOf(x) != onnx::TensorProto::FLOAT) return false;
  if (!fusion::SameShape(out, x)) return false;
  if (!fusion::UsesStayInside(m, root, options.fuse_low_precision_chains)) {
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

class FuseSoftmax : public Pass {
 public:
  explicit FuseSoftmax(FusionOptions options) : options_(options) {}
  absl::string_view name() const override { return "fuse-softmax"; }
  absl::StatusOr<bool> Run(Model& model) override {
    if (fusion::DefaultOpset(model) < 13) return false;
    return fusion::ForEachNodeBackwards(
        model, [this](Graph& g, Node* n) { return FuseAt(g, n, options_); });
  }

 private:
  FusionOptions options_;
};

}  // namespace

std::unique_ptr<Pass> CreateFuseSoftmaxPass(FusionOptions options) {
  return std::make_unique<FuseSoftmax>(options);
}

}  // namespace jax2onnx::ir
