// fuse-layer-norm: rewrites the normalization chains JAX prints for a
// layer norm over the last axis into one LayerNormalization (opset >= 17),
// and, at opset >= 23, the root-mean-square chain into RMSNormalization.
//
// Recognised (x: float32 of static rank r and static last dim D, the axis
// always r-1, every mean a ReduceMean or a ReduceSum divided by exactly D):
//   mean     = mean(x)                         (kept or reduced axis)
//   var      = [Max(0, .)] mean(x*x) - mean*mean     flax fast variance
//            | mean((x - mean_k)^2)                  jnp.var / two-pass
//   inv      = 1 / Sqrt(var_k + eps)  (rsqrt; Reciprocal too)
//   y        = product of {x - mean_k, inv, [scale]}  in any association,
//              or (x - mean_k) / Sqrt(var_k + eps) [* scale]
//   out      = y [+ bias]
// where _k is the statistic with the axis kept (keepdims=1, or reduced then
// Unsqueeze / Reshape / Expand: the forms before and after generic
// simplification), squares are Mul(a, a) or Pow(a, 2), and scale/bias have
// static shape [1, ..., 1, D]. RMS: y = product of {x, 1/Sqrt(mean(x*x)_k +
// eps), [scale]}, x possibly written x - 0 (flax's RMSNorm subtracts
// jnp.zeros_like of its statistic).
//
// Semantics: LayerNormalization(axis=-1, epsilon=eps) computes
// (x - E[x]) / sqrt(Var[x] + eps) * scale + bias with E and Var over the
// last axis, which is the matched chain exactly; the fast variance
// E[x^2] - E[x]^2 (clamped at 0) equals Var[x] in exact arithmetic, so the
// results differ by rounding only (the clamp only acts on rounding noise;
// the native op's variance is non-negative by construction). A missing
// scale becomes ones, a missing bias is left out. RMSNormalization(axis=-1,
// epsilon=eps) is x / sqrt(E[x^2] + eps) * scale.
//
// Refuses (keeps the graph): other element types than float32 (ONNX
// Runtime's CPU kernels), an axis other than the last, a divisor other than
// the axis size, epsilon outside the square root, scale or bias that
// broadcast over other axes or are not static, any intermediate used
// outside the chain (it would have to be recomputed), opset < 17 (< 23 for
// RMSNormalization).
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/passes/fusion_match.h"
#include "ir/passes/fusions.h"

namespace jax2onnx::ir {
namespace {

using fusion::Match;

struct Stats {
  Value* x = nullptr;
  double epsilon = 0;
  bool rms = false;
};

// inv = 1 / Sqrt(s) or Reciprocal(Sqrt(s)): returns s.
Value* MatchInvSqrt(Value* v, Match* m) {
  if (Node* d = fusion::ProducerIs(v, "Div")) {
    if (!fusion::IsFloatConstant(d->input(0), 1.0)) return nullptr;
    Node* s = fusion::ProducerIs(d->input(1), "Sqrt");
    if (s == nullptr) return nullptr;
    m->Add(d);
    m->Add(s);
    return s->input(0);
  }
  if (Node* r = fusion::ProducerIs(v, "Reciprocal")) {
    Node* s = fusion::ProducerIs(r->input(0), "Sqrt");
    if (s == nullptr) return nullptr;
    m->Add(r);
    m->Add(s);
    return s->input(0);
  }
  return nullptr;
}

// s = Add(var_k, eps): returns var_k and sets *eps.
Value* MatchPlusEpsilon(Value* s, double* eps, Match* m) {
  Node* add = fusion::ProducerIs(s, "Add");
  if (add == nullptr) return nullptr;
  for (int i = 0; i < 2; ++i) {
    std::optional<double> e = fusion::ScalarConstant(add->input(1 - i));
    if (e && *e >= 0) {
      m->Add(add);
      *eps = *e;
      return add->input(i);
    }
  }
  return nullptr;
}

// The variance of some x over `axis` (kept or reduced): returns x.
Value* MatchVariance(Value* v, int axis, int rank, bool kept, Match* m) {
  Match trial = *m;
  v = fusion::SkipIdentity(v, &trial);
  // max(0., var) lowers as Abs(Max(0, var)) (the Abs makes a -0 variance
  // +0, plugin/elementwise_plan.h): the clamp is matched with or without it.
  if (Node* abs = fusion::ProducerIs(v, "Abs")) {
    Node* inner = fusion::ProducerIs(abs->input(0), "Max");
    if (inner != nullptr && (fusion::IsFloatConstant(inner->input(0), 0.0) ||
                             fusion::IsFloatConstant(inner->input(1), 0.0))) {
      trial.Add(abs);
      v = abs->input(0);
    }
  }
  if (Node* mx = fusion::ProducerIs(v, "Max")) {
    for (int i = 0; i < 2; ++i) {
      if (fusion::IsFloatConstant(mx->input(i), 0.0)) {
        trial.Add(mx);
        v = fusion::SkipIdentity(mx->input(1 - i), &trial);
        break;
      }
    }
  }
  // Fast: mean(x*x) - mean(x)^2.
  if (Node* sub = fusion::ProducerIs(v, "Sub")) {
    Match fast = trial;
    fast.Add(sub);
    Value* sq_x = fusion::MatchMean(sub->input(0), axis, rank, kept, &fast);
    Value* x = sq_x == nullptr ? nullptr : fusion::MatchSquare(sq_x, &fast);
    Value* mean = fusion::MatchSquare(sub->input(1), &fast);
    Value* x2 = mean == nullptr
                    ? nullptr
                    : fusion::MatchMean(mean, axis, rank, kept, &fast);
    if (x != nullptr && fusion::SameValue(x, x2)) {
      *m = std::move(fast);
      return x;
    }
  }
  // Two-pass: mean((x - mean_k(x))^2).
  Value* sq = fusion::MatchMean(v, axis, rank, kept, &trial);
  Value* centered = sq == nullptr ? nullptr : fusion::MatchSquare(sq, &trial);
  Node* sub = fusion::ProducerIs(centered, "Sub");
  if (sub == nullptr) return nullptr;
  trial.Add(sub);
  Value* x = sub->input(0);
  if (!fusion::SameValue(
          fusion::MatchKeptMean(sub->input(1), axis, rank, &trial), x)) {
    return nullptr;
  }
  *m = std::move(trial);
  return x;
}

// The kept-axis statistic under the square root: variance (LayerNorm) or
// mean of squares (RMS). Returns x.
Value* MatchKeptStatistic(Value* v, int axis, int rank, bool rms, Match* m) {
  Match trial = *m;
  bool kept = false;
  Value* base = fusion::StripKeptAxis(v, axis, rank, &kept, &trial);
  if (base == nullptr) return nullptr;
  Value* x = nullptr;
  if (rms) {
    Value* sq = fusion::MatchMean(base, axis, rank, kept, &trial);
    x = sq == nullptr ? nullptr : fusion::MatchSquare(sq, &trial);
  } else {
    x = MatchVariance(base, axis, rank, kept, &trial);
  }
  if (x == nullptr) return nullptr;
  *m = std::move(trial);
  return x;
}

// Classifies the factors of y. Returns the statistics and the scale factor
// (nullptr when absent).
std::optional<Stats> MatchNormalized(Value* y, bool rms, Value** scale,
                                     Match* m) {
  Match trial = *m;
  std::vector<Value*> factors = fusion::MulFactors(y, &trial);
  if (factors.size() < 1 || factors.size() > 3) return std::nullopt;
  Value* data = nullptr;       // x - mean_k (or x for RMS)
  Value* statistic = nullptr;  // var_k
  double eps = 0;
  *scale = nullptr;
  auto take_division = [&](Value* f) -> bool {
    // (x - mean_k) / Sqrt(var_k + eps)
    Node* div = fusion::ProducerIs(f, "Div");
    if (div == nullptr) return false;
    Node* s = fusion::ProducerIs(div->input(1), "Sqrt");
    if (s == nullptr) return false;
    Match t2 = trial;
    t2.Add(div);
    t2.Add(s);
    Value* stat = MatchPlusEpsilon(s->input(0), &eps, &t2);
    if (stat == nullptr) return false;
    trial = std::move(t2);
    data = div->input(0);
    statistic = stat;
    return true;
  };
  std::vector<Value*> rest;
  for (Value* f : factors) {
    if (statistic == nullptr) {
      Match t2 = trial;
      Value* s = MatchInvSqrt(f, &t2);
      Value* stat = s == nullptr ? nullptr : MatchPlusEpsilon(s, &eps, &t2);
      if (stat != nullptr) {
        trial = std::move(t2);
        statistic = stat;
        continue;
      }
      if (factors.size() <= 2 && take_division(f)) continue;
    }
    rest.push_back(f);
  }
  if (statistic == nullptr) return std::nullopt;
  // The data factor: the one given by the division form, else each of the
  // remaining factors in turn (the other one, if any, is the scale).
  std::vector<Value*> candidates =
      data != nullptr ? std::vector<Value*>{data} : rest;
  if (data != nullptr ? rest.size() > 1 : (rest.empty() || rest.size() > 2)) {
    return std::nullopt;
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    Value* cand = candidates[i];
    int rank = fusion::RankOf(cand);
    if (rank < 1) continue;
    int axis = rank - 1;
    Match t2 = trial;
    Value* x = nullptr;
    if (rms) {
      // flax's RMSNorm subtracts a mean of zeros (jnp.zeros_like(var)).
      Node* sub = fusion::ProducerIs(cand, "Sub");
      if (sub != nullptr && fusion::IsZeros(sub->input(1))) {
        t2.Add(sub);
        x = sub->input(0);
      } else {
        x = cand;
      }
    } else {
      Node* sub = fusion::ProducerIs(cand, "Sub");
      if (sub == nullptr) continue;
      t2.Add(sub);
      x = sub->input(0);
      if (!fusion::SameValue(
              fusion::MatchKeptMean(sub->input(1), axis, rank, &t2), x)) {
        continue;
      }
    }
    if (fusion::RankOf(x) != rank) continue;
    if (!fusion::SameValue(MatchKeptStatistic(statistic, axis, rank, rms, &t2),
                           x)) {
      continue;
    }
    *scale = nullptr;
    if (data != nullptr) {
      if (!rest.empty()) *scale = rest[0];
    } else if (rest.size() == 2) {
      *scale = rest[1 - i];
    }
    *m = std::move(t2);
    return Stats{x, eps, rms};
  }
  return std::nullopt;
}

absl::StatusOr<bool> FuseAt(Graph& graph, Node* root, bool rms,
                            const FusionOptions& options) {
  Value* out = root->output(0);
  if (fusion::DtypeOf(out) != onnx::TensorProto::FLOAT) return false;
  Match m;
  Value* bias = nullptr;
  Value* y = out;
  std::optional<Stats> stats;
  Value* scale = nullptr;
  const char* rule = rms ? "fuse-rms-norm" : "fuse-layer-norm";
  if (!rms && root->op_type() == "Add" && root->domain().empty()) {
    bool normalized = false;
    for (int i = 0; i < 2 && !stats; ++i) {
      Match t2;
      t2.Add(root);
      std::optional<Stats> s =
          MatchNormalized(root->input(i), rms, &scale, &t2);
      if (!s) continue;
      normalized = true;
      int64_t d = fusion::StaticDim(s->x, fusion::RankOf(s->x) - 1);
      if (fusion::IsFeatureVectorShape(root->input(1 - i), d,
                                       fusion::RankOf(s->x))) {
        stats = s;
        bias = root->input(1 - i);
        m = std::move(t2);
      }
    }
    if (!stats) {
      if (normalized) {
        fusion::NearMiss(options, rule, root,
                         "the added bias is not a static [1, ..., 1, D] "
                         "vector over the last axis");
      }
      return false;
    }
  } else if (root->domain().empty() &&
             (root->op_type() == "Mul" || root->op_type() == "Div")) {
    stats = MatchNormalized(y, rms, &scale, &m);
    if (!stats) return false;
  } else {
    return false;
  }
  m.Add(root);
  Value* x = stats->x;
  int rank = fusion::RankOf(x);
  int64_t d = fusion::StaticDim(x, rank - 1);
  if (d <= 0) {
    fusion::NearMiss(options, rule, root,
                     "the normalized axis has no static size");
    return false;
  }
  if (fusion::DtypeOf(x) != onnx::TensorProto::FLOAT) {
    fusion::NearMiss(options, rule, root, fusion::kNotFloat32);
    return false;
  }
  if (scale != nullptr && !fusion::IsFeatureVectorShape(scale, d, rank)) {
    fusion::NearMiss(options, rule, root,
                     "the scale is not a static [1, ..., 1, D] vector over "
                     "the last axis");
    return false;
  }
  if (static_cast<float>(stats->epsilon) != stats->epsilon) {
    // float32 graphs only, so the constant is a float32 value already.
    fusion::NearMiss(options, rule, root, "epsilon is not a float32 value");
    return false;
  }
  if (!fusion::SameShape(out, x)) {
    fusion::NearMiss(options, rule, root, fusion::kShapeChanges);
    return false;
  }
  if (!fusion::UsesStayInside(m, root, options.fuse_low_precision_chains)) {
    fusion::NearMiss(options, rule, root, fusion::kUsedOutside);
    return false;
  }

  // Rewrite.
  Value* scale_1d = nullptr;
  if (scale != nullptr) {
    absl::StatusOr<Value*> s =
        fusion::AsFeatureVector(graph, root, scale, d, rank);
    if (!s.ok()) return s.status();
    scale_1d = *s;
  } else {
    std::vector<float> ones(d, 1.0f);
    absl::StatusOr<Value*> s = graph.AddInitializer(
        graph.FreshName("fused_norm_ones"),
        Tensor::FromVector<float>(onnx::TensorProto::FLOAT, {d},
                                  absl::MakeConstSpan(ones)));
    if (!s.ok()) return s.status();
    (*s)->SetType(Type::Tensor(onnx::TensorProto::FLOAT, Shape({d})));
    scale_1d = *s;
  }
  Value* bias_1d = nullptr;
  if (bias != nullptr) {
    absl::StatusOr<Value*> b =
        fusion::AsFeatureVector(graph, root, bias, d, rank);
    if (!b.ok()) return b.status();
    bias_1d = *b;
  }
  std::vector<Value*> inputs = {x, scale_1d};
  if (bias_1d != nullptr) inputs.push_back(bias_1d);
  std::vector<Attr> attrs;
  attrs.push_back(Attr::Int("axis", -1));
  attrs.push_back(Attr::Float("epsilon", static_cast<float>(stats->epsilon)));
  Node* fused = graph.InsertBefore(
      root,
      Node::Create("", rms ? "RMSNormalization" : "LayerNormalization", inputs,
                   {graph.FreshName("fused_norm")}, std::move(attrs)));
  fused->output(0)->SetType(fusion::FusedType(out, x));
  if (absl::Status s =
          fusion::ReplaceAndErase(graph, root, fused->output(0), m);
      !s.ok()) {
    return s;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> FuseLayerNormAt(Graph& graph, Node* root,
                                     const FusionOptions& options) {
  return FuseAt(graph, root, /*rms=*/false, options);
}
absl::StatusOr<bool> FuseRmsNormAt(Graph& graph, Node* root,
                                   const FusionOptions& options) {
  return FuseAt(graph, root, /*rms=*/true, options);
}

}  // namespace jax2onnx::ir
