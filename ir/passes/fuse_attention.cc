// fuse-attention: rewrites scaled dot-product attention, as the IR pipeline
// emits it for Flax's dot_product_attention and hand-written
// softmax(q k^T / sqrt(d) + mask) v, into ONNX Attention (opset >= 23), 4-D
// layout. It runs after fuse-softmax and the generic rewrites (Einsum ->
// MatMul + Transposes), so it reads:
//
//   scores = MatMul(Q, Kt)              Q [B,H,T,D], Kt [B,H,D,S]
//   scaled = scores * c | scores / c    (optional; or the scale applied to
//                                        the query before the MatMul, also
//                                        under one Transpose: Flax's
//                                        q / sqrt(d) in [B,T,H,D] layout)
//   logits = scaled + bias              (optional float additive mask), or
//          = Where(m, scaled, fill)     (optional boolean mask, jnp.where:
//                                        fill <= -2^127 or -inf, i.e.
//                                        finfo(f32).min as Flax writes it,
//                                        -0.7 * finfo.max as
//                                        jax.nn.dot_product_attention does;
//                                        or Where(m, fill, scaled))
//   P      = Softmax(logits, axis=-1)
//   Y      = MatMul(P, V)               V [B,H,S,Dv], Y [B,H,T,Dv]
//
// and writes Y = Attention(Q, Transpose(Kt, [0,1,3,2]), V[, mask]) with
// scale = c or 1/c (1 without a scale) and as attn_mask the bias, or the
// boolean m (Not(m) for the second Where form), its broadcasts skipped
// (transpose-folding then merges the key Transposes).
//
// Semantics: Attention computes softmax(scale * Q K^T + mask) V, a False
// of a boolean mask adding -inf. That is the chain up to rounding: the
// scale applied to the product instead of the query (and a divisor's
// reciprocal) moves results by float32 roundings. A masked key gets weight
// exactly 0 from Attention and exp(fill - M) / Z from JAX, M the row's
// largest unmasked logit: also 0 in float32 since fill <= -2^127 and
// M > fill + 104 for every logit of magnitude below 2^126. Rows where every
// key is masked differ (JAX: the mean of V; Attention and ONNX Runtime
// 1.30: zeros, also for a float mask at finfo.min), so the mask must be a
// constant every row of which keeps a key: the boolean mask is evaluated
// here (the causal iota/ge masks are computed by Range, Expand and
// comparisons that constant folding leaves as nodes), a bias must be a
// float32 initializer with an element above -2^127 in every row.
//
// Refuses: element types other than float32 (bf16/f16 chains rounded op by
// op unless FusionOptions::fuse_low_precision_chains), ranks other than 4,
// batch or head dims that differ between Q, K and V (broadcasting MatMuls,
// grouped-query heads), a scale that is not a positive one-element constant
// (computed, per-head or negative), Softmax over another axis, a mask that
// is not additive (Mul by a 0/1 tensor), a Where fill above -2^127 (-1e9:
// masked keys keep a weight where logits reach -1e9), masks computed from
// inputs (padding masks) or with a fully masked row, a mask whose last two
// dims are not [T, S] or whose other dims are neither 1 nor the matching
// B, H (what ONNX Runtime 1.30 accepts), and intermediates used outside the
// chain (the scores or probabilities as other outputs).
// jax.nn.dot_product_attention is not matched: its vmap over key/value head
// groups keeps 5-D Einsums, which einsum-to-matmul leaves alone.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/passes/fusion_match.h"
#include "ir/passes/fusions.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

using fusion::Match;

// The largest Where fill read as "masked" (see the file comment).
constexpr double kMaxMaskFill = -1.7014118346046923e38;  // -2^127

// `v` = x * c, c * x or x / c with c a one-element constant: returns x and
// multiplies *scale by c (or 1/c).
Value* MatchScale(Value* v, double* scale, Match* m) {
  Node* n = v->producer();
  if (n == nullptr || !n->domain().empty() || n->num_inputs() != 2) {
    return nullptr;
  }
  const bool mul = n->op_type() == "Mul";
  if (!mul && n->op_type() != "Div") return nullptr;
  for (int i = mul ? 0 : 1; i < 2; ++i) {
    std::optional<double> c = fusion::ScalarConstant(n->input(i));
    if (!c) continue;
    Value* x = n->input(1 - i);
    if (!fusion::SameShape(v, x)) return nullptr;  // c broadcasts x up
    *scale = mul ? *scale * *c : *scale / *c;
    m->Add(n);
    return x;
  }
  return nullptr;
}

// True when `out`'s shape is `in`'s with leading 1s: numpy broadcasting
// (right-aligned) reads both alike.
bool OnlyAddsLeadingOnes(const Value* in, const Value* out) {
  const Shape* a = fusion::ShapeOf(in);
  const Shape* b = fusion::ShapeOf(out);
  if (a == nullptr || b == nullptr || b->rank() < a->rank()) return false;
  const size_t lead = b->rank() - a->rank();
  for (size_t i = 0; i < b->rank(); ++i) {
    if (i < lead) {
      if (!(*b)[i].is_value() || (*b)[i].value() != 1) return false;
    } else if (!((*b)[i] == (*a)[i - lead])) {
      return false;
    }
  }
  return true;
}

// `v` with the producers that only broadcast it skipped (Expand, Identity,
// and Unsqueeze or Reshape adding leading 1s), as long as `keep` accepts
// the result. Under numpy broadcasting the result stands for `v`.
Value* StripBroadcasts(Value* v, const std::function<bool(Value*)>& keep) {
  for (int depth = 0; v != nullptr && depth < 8; ++depth) {
    Node* n = v->producer();
    if (n == nullptr || !n->domain().empty() || n->num_inputs() < 1) break;
    const std::string& op = n->op_type();
    if (op == "Unsqueeze" || op == "Reshape") {
      if (!OnlyAddsLeadingOnes(n->input(0), v)) break;
    } else if (op != "Expand" && op != "Identity") {
      break;
    }
    if (!keep(n->input(0))) break;
    v = n->input(0);
  }
  return v;
}

// The value of a fill broadcast (Expand, Unsqueeze, Reshape, Identity)
// from a one-element constant.
std::optional<double> FillConstant(Value* v) {
  for (int depth = 0; v != nullptr && depth < 8; ++depth) {
    if (std::optional<double> c = fusion::ScalarConstant(v)) return c;
    Node* n = v->producer();
    if (n == nullptr || !n->domain().empty() || n->num_inputs() < 1) break;
    const std::string& op = n->op_type();
    if (op != "Expand" && op != "Unsqueeze" && op != "Reshape" &&
        op != "Identity") {
      break;
    }
    v = n->input(0);
  }
  return std::nullopt;
}

// ONNX Runtime 1.30's Attention takes a mask of rank 2..4 whose last two
// dims are exactly [T, S] and whose others are 1 or the matching B, H.
bool MaskShapeFits(const Value* mask, const Shape& scores) {
  const Shape* s = fusion::ShapeOf(mask);
  if (s == nullptr || s->rank() < 2 || s->rank() > 4) return false;
  const int r = static_cast<int>(s->rank());
  for (int i = 0; i < r; ++i) {
    const Dim& d = (*s)[i];
    const Dim& want = scores[4 - r + i];
    if (d == want) continue;
    if (i >= r - 2) return false;
    if (!d.is_value() || d.value() != 1) return false;
  }
  return true;
}

// ---- Constant masks ----
//
// Whether a mask can mask every key of some query is decided on its value:
// the masks JAX programs build (causal iota/ge, constant padding) are
// computed from constants by integer and boolean ops that constant folding
// leaves as nodes (Range, Expand, comparisons), so a small evaluator runs
// them here on the (small) mask.

// An integer or boolean tensor (bools as 0/1), row-major.
struct IntTensor {
  std::vector<int64_t> dims;
  std::vector<int64_t> data;
};

constexpr int64_t kMaxMaskElements = int64_t{1} << 22;

int64_t NumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::optional<IntTensor> FromConstant(const Tensor& t) {
  if (t.is_external() || t.num_elements() > kMaxMaskElements) {
    return std::nullopt;
  }
  IntTensor out;
  out.dims = t.dims();
  switch (t.dtype()) {
    case onnx::TensorProto::INT64:
      for (int64_t x : t.data<int64_t>()) out.data.push_back(x);
      break;
    case onnx::TensorProto::INT32:
      for (int32_t x : t.data<int32_t>()) out.data.push_back(x);
      break;
    case onnx::TensorProto::BOOL:
    case onnx::TensorProto::UINT8:
      for (uint8_t x : t.data<uint8_t>()) out.data.push_back(x);
      break;
    default:
      return std::nullopt;
  }
  return out;
}

// Numpy broadcasting of `a` and `b` through `f`.
std::optional<IntTensor> Broadcast2(
    const IntTensor& a, const IntTensor& b,
    const std::function<int64_t(int64_t, int64_t)>& f) {
  const size_t rank = std::max(a.dims.size(), b.dims.size());
  std::vector<int64_t> da(rank - a.dims.size(), 1), db(rank - b.dims.size(), 1);
  da.insert(da.end(), a.dims.begin(), a.dims.end());
  db.insert(db.end(), b.dims.begin(), b.dims.end());
  IntTensor out;
  for (size_t i = 0; i < rank; ++i) {
    if (da[i] != db[i] && da[i] != 1 && db[i] != 1) return std::nullopt;
    out.dims.push_back(da[i] == 1 ? db[i] : da[i]);
  }
  const int64_t n = NumElements(out.dims);
  if (n > kMaxMaskElements) return std::nullopt;
  out.data.resize(n);
  std::vector<int64_t> index(rank, 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t ia = 0, ib = 0;
    for (size_t i = 0; i < rank; ++i) {
      ia = ia * da[i] + (da[i] == 1 ? 0 : index[i]);
      ib = ib * db[i] + (db[i] == 1 ? 0 : index[i]);
    }
    out.data[flat] = f(a.data[ia], b.data[ib]);
    for (int i = static_cast<int>(rank) - 1; i >= 0; --i) {
      if (++index[i] < out.dims[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

// `budget` bounds the producers one evaluation visits (a value feeding
// both operands of an Add is visited twice per level: without a bound a
// chain of 32 such Adds would take 2^32 steps); running out is "not a
// constant", which only keeps the mask un-fused.
std::optional<IntTensor> EvaluateInts(const Value* v, int depth,
                                      int* budget) {
  if (v == nullptr || depth > 32) return std::nullopt;
  if (const Tensor* t = fusion::ConstantOf(v)) return FromConstant(*t);
  const Node* n = v->producer();
  if (n == nullptr || !n->domain().empty() || n->num_outputs() != 1) {
    return std::nullopt;
  }
  if (--*budget < 0) return std::nullopt;
  const std::string& op = n->op_type();
  std::vector<IntTensor> in;
  for (int i = 0; i < n->num_inputs(); ++i) {
    std::optional<IntTensor> x = EvaluateInts(n->input(i), depth + 1, budget);
    if (!x) return std::nullopt;
    in.push_back(*std::move(x));
  }
  if (op == "Identity" && in.size() == 1) return in[0];
  if (op == "Cast" && in.size() == 1) {
    const int64_t to = IntAttr(n, "to", 0);
    if (to == onnx::TensorProto::BOOL) {
      for (int64_t& x : in[0].data) x = x != 0;
    } else if (to != onnx::TensorProto::INT64 &&
               to != onnx::TensorProto::INT32) {
      return std::nullopt;  // ranges of these masks fit int32
    }
    return in[0];
  }
  if (op == "Range" && in.size() == 3) {
    for (const IntTensor& x : in) {
      if (x.data.size() != 1) return std::nullopt;
    }
    const int64_t start = in[0].data[0], limit = in[1].data[0],
                  delta = in[2].data[0];
    if (delta == 0) return std::nullopt;
    IntTensor out;
    for (int64_t x = start; delta > 0 ? x < limit : x > limit; x += delta) {
      if (static_cast<int64_t>(out.data.size()) >= kMaxMaskElements) {
        return std::nullopt;
      }
      out.data.push_back(x);
    }
    out.dims = {static_cast<int64_t>(out.data.size())};
    return out;
  }
  if ((op == "Unsqueeze" || op == "Reshape") && !in.empty()) {
    IntTensor out = in[0];
    std::vector<int64_t> dims;
    if (op == "Unsqueeze") {
      std::vector<int64_t> axes;
      if (in.size() == 2) {
        axes = in[1].data;
      } else if (auto a = IntsAttr(n, "axes")) {
        axes = *a;
      } else {
        return std::nullopt;
      }
      const int64_t rank = static_cast<int64_t>(out.dims.size() + axes.size());
      std::optional<std::vector<int64_t>> sorted = NormalizeAxes(axes, rank);
      if (!sorted) return std::nullopt;
      size_t next = 0, k = 0;
      for (int64_t i = 0; i < rank; ++i) {
        if (k < sorted->size() && (*sorted)[k] == i) {
          dims.push_back(1);
          ++k;
        } else {
          if (next >= out.dims.size()) return std::nullopt;
          dims.push_back(out.dims[next++]);
        }
      }
    } else {
      if (in.size() != 2 || IntAttr(n, "allowzero", 0) != 0) {
        return std::nullopt;
      }
      int64_t known = 1, infer = -1;
      for (size_t i = 0; i < in[1].data.size(); ++i) {
        int64_t d = in[1].data[i];
        if (d == 0) {
          if (i >= out.dims.size()) return std::nullopt;
          d = out.dims[i];
        }
        if (d == -1) {
          if (infer >= 0) return std::nullopt;
          infer = static_cast<int64_t>(i);
          dims.push_back(1);
          continue;
        }
        if (d < 0) return std::nullopt;
        known *= d;
        dims.push_back(d);
      }
      const int64_t total = static_cast<int64_t>(out.data.size());
      if (infer >= 0) {
        if (known == 0 || total % known != 0) return std::nullopt;
        dims[infer] = total / known;
      }
    }
    if (NumElements(dims) != static_cast<int64_t>(out.data.size())) {
      return std::nullopt;
    }
    out.dims = std::move(dims);
    return out;
  }
  if (op == "Expand" && in.size() == 2) {
    IntTensor shape;
    shape.dims = in[1].data;
    for (int64_t d : shape.dims) {
      if (d < 0) return std::nullopt;
    }
    shape.data.assign(NumElements(shape.dims), 0);
    if (static_cast<int64_t>(shape.data.size()) > kMaxMaskElements) {
      return std::nullopt;
    }
    return Broadcast2(in[0], shape, [](int64_t a, int64_t) { return a; });
  }
  if (op == "Not" && in.size() == 1) {
    for (int64_t& x : in[0].data) x = x == 0;
    return in[0];
  }
  if (in.size() != 2) return std::nullopt;
  std::function<int64_t(int64_t, int64_t)> f;
  if (op == "GreaterOrEqual") f = [](int64_t a, int64_t b) { return a >= b; };
  if (op == "Greater") f = [](int64_t a, int64_t b) { return a > b; };
  if (op == "LessOrEqual") f = [](int64_t a, int64_t b) { return a <= b; };
  if (op == "Less") f = [](int64_t a, int64_t b) { return a < b; };
  if (op == "Equal") f = [](int64_t a, int64_t b) { return a == b; };
  if (op == "And") f = [](int64_t a, int64_t b) { return a != 0 && b != 0; };
  if (op == "Or") f = [](int64_t a, int64_t b) { return a != 0 || b != 0; };
  if (op == "Xor")
    f = [](int64_t a, int64_t b) { return (a != 0) != (b != 0); };
  if (op == "Add") f = [](int64_t a, int64_t b) { return a + b; };
  if (op == "Sub") f = [](int64_t a, int64_t b) { return a - b; };
  if (!f) return std::nullopt;
  return Broadcast2(in[0], in[1], f);
}

// True when `mask` (boolean) is a constant in which every row (along the
// last axis) has an element equal to `selected`: no query has every key
// masked.
bool EveryRowSelectsAKey(const Value* mask, bool selected) {
  int budget = 256;
  std::optional<IntTensor> t = EvaluateInts(mask, 0, &budget);
  if (!t || t->dims.empty()) return false;
  const int64_t row = t->dims.back();
  if (row <= 0) return false;
  for (size_t start = 0; start < t->data.size(); start += row) {
    bool any = false;
    for (int64_t j = 0; j < row; ++j) {
      any |= (t->data[start + j] != 0) == selected;
    }
    if (!any) return false;
  }
  return true;
}

// True when `bias` is a float32 constant in which every row has an element
// above -2^127 (so not every key of a query is masked by it).
bool EveryRowKeepsAKey(const Value* bias) {
  const Tensor* t = fusion::ConstantOf(bias);
  if (t == nullptr || t->is_external() ||
      t->dtype() != onnx::TensorProto::FLOAT || t->dims().empty()) {
    return false;
  }
  const int64_t row = t->dims().back();
  if (row <= 0) return false;
  absl::Span<const float> data = t->data<float>();
  for (size_t start = 0; start < data.size(); start += row) {
    bool any = false;
    for (int64_t j = 0; j < row; ++j) any |= data[start + j] > kMaxMaskFill;
    if (!any) return false;
  }
  return true;
}

// A boolean mask applied with Where: the logits it selects where the
// condition is True (or False: `selected_when`), the condition (with its
// broadcasts skipped while the mask still fits) and the fill.
struct BooleanMask {
  Value* scores = nullptr;
  Value* condition = nullptr;
  bool selected_when = true;
  double fill = 0;
};

// `v` = Where(c, x, fill) or Where(c, fill, x) with fill <= kMaxMaskFill
// and a constant c every row of which keeps a key.
std::optional<BooleanMask> MatchWhereMask(Value* v, Match* m) {
  Node* n = fusion::ProducerIs(v, "Where");
  if (n == nullptr || n->num_inputs() != 3) return std::nullopt;
  const Shape* shape = fusion::ShapeOf(v);
  if (shape == nullptr || shape->rank() != 4) return std::nullopt;
  for (int side = 1; side <= 2; ++side) {
    std::optional<double> fill = FillConstant(n->input(3 - side));
    if (!fill || !(*fill <= kMaxMaskFill)) continue;
    Value* x = n->input(side);
    if (!fusion::SameShape(v, x)) return std::nullopt;
    Value* cond = n->input(0);
    if (fusion::DtypeOf(cond) != onnx::TensorProto::BOOL ||
        !MaskShapeFits(cond, *shape)) {
      return std::nullopt;
    }
    BooleanMask out;
    out.scores = x;
    // Broadcasting copies rows (the last axis is never broadcast: it is S
    // on both sides), so the rows of the unbroadcast mask are the ones to
    // check.
    out.condition = StripBroadcasts(
        cond, [&](Value* c) { return MaskShapeFits(c, *shape); });
    if (!EveryRowSelectsAKey(out.condition, side == 1)) return std::nullopt;
    out.selected_when = side == 1;
    out.fill = *fill;
    m->Add(n);
    return out;
  }
  return std::nullopt;
}

// The attention matched at `root` (Y = MatMul(P, V)).
struct Attention {
  Value* q = nullptr;
  Value* kt = nullptr;
  Value* v = nullptr;
  Value* mask = nullptr;             // a float additive mask, or
  std::optional<BooleanMask> where;  // a Where to turn into one
  double scale = 1.0;
  // The query's scale sat under this Transpose (Flax): Q is then
  // Transpose(q, perm) with q the unscaled query.
  Node* query_transpose = nullptr;
};

bool SameBatchAndHeads(const Value* a, const Value* b) {
  const Shape* sa = fusion::ShapeOf(a);
  const Shape* sb = fusion::ShapeOf(b);
  return sa != nullptr && sb != nullptr && sa->rank() == 4 && sb->rank() == 4 &&
         (*sa)[0] == (*sb)[0] && (*sa)[1] == (*sb)[1];
}

// scores = MatMul(Q, Kt), possibly scaled (on the product or on Q).
bool MatchScores(Value* scores, Attention* a, Match* m) {
  Match trial = *m;
  double scale = 1.0;
  if (Value* x = MatchScale(scores, &scale, &trial)) scores = x;
  Node* qk = fusion::ProducerIs(scores, "MatMul");
  if (qk == nullptr || qk->input(0) == nullptr) return false;
  trial.Add(qk);
  Value* q = qk->input(0);
  Node* transpose = nullptr;
  if (Node* t = fusion::ProducerIs(q, "Transpose")) {
    Match with = trial;
    with.Add(t);
    if (Value* x = MatchScale(t->input(0), &scale, &with)) {
      transpose = t;
      trial = std::move(with);
      q = x;
    }
  } else if (Value* x = MatchScale(q, &scale, &trial)) {
    q = x;
  }
  if (!(scale > 0) || !std::isfinite(scale)) return false;
  a->q = q;
  a->kt = qk->input(1);
  a->scale = scale;
  a->query_transpose = transpose;
  *m = std::move(trial);
  return true;
}

std::optional<Attention> MatchAttention(Node* root, Match* m) {
  Attention a;
  a.v = root->input(1);
  Node* softmax = fusion::ProducerIs(root->input(0), "Softmax");
  if (softmax == nullptr) return std::nullopt;
  const int64_t axis = IntAttr(softmax, "axis", -1);
  if (axis != -1 && axis != 3) return std::nullopt;
  m->Add(softmax);
  Value* logits = softmax->input(0);
  if (fusion::RankOf(logits) != 4) return std::nullopt;
  Node* add = fusion::ProducerIs(logits, "Add");
  if (add != nullptr && add->num_inputs() == 2) {
    // A float additive mask: the side that is the scaled product.
    for (int i = 0; i < 2; ++i) {
      Match trial = *m;
      trial.Add(add);
      Attention b = a;
      Value* bias = add->input(1 - i);
      if (!fusion::SameShape(logits, add->input(i))) continue;
      if (fusion::DtypeOf(bias) != onnx::TensorProto::FLOAT) continue;
      if (!EveryRowKeepsAKey(bias)) continue;
      if (!MaskShapeFits(bias, *fusion::ShapeOf(logits))) continue;
      if (!MatchScores(add->input(i), &b, &trial)) continue;
      b.mask = bias;
      *m = std::move(trial);
      return b;
    }
    return std::nullopt;
  }
  Value* scores = logits;
  if (fusion::ProducerIs(logits, "Where") != nullptr) {
    a.where = MatchWhereMask(logits, m);
    if (!a.where) return std::nullopt;
    scores = a.where->scores;
  }
  if (!MatchScores(scores, &a, m)) return std::nullopt;
  return a;
}

// A new node before `anchor` with one fresh-named output of `type`. Unnamed,
// like the fused node: node-naming names them at the end of the pipeline
// (a name derived from `anchor` would repeat when the pass runs alone).
Node* InsertUnnamedBefore(Node* anchor, absl::string_view op_type,
                          std::vector<Value*> inputs, std::vector<Attr> attrs,
                          std::optional<Type> type) {
  Graph* graph = anchor->graph();
  Node* node = graph->InsertBefore(
      anchor,
      Node::Create("", std::string(op_type), std::move(inputs),
                   {graph->root()->FreshName(op_type)}, std::move(attrs)));
  if (type.has_value()) node->output(0)->SetType(std::move(type));
  return node;
}

std::vector<Attr> PermAttr(std::vector<int64_t> perm) {
  std::vector<Attr> attrs;
  attrs.push_back(Attr::Ints("perm", std::move(perm)));
  return attrs;
}

absl::StatusOr<bool> FuseAt(Graph& graph, Node* root,
                            const FusionOptions& options) {
  if (!root->domain().empty() || root->op_type() != "MatMul" ||
      root->num_inputs() != 2) {
    return false;
  }
  Value* out = root->output(0);
  if (fusion::DtypeOf(out) != onnx::TensorProto::FLOAT ||
      fusion::RankOf(out) != 4) {
    return false;
  }
  Match m;
  m.Add(root);
  std::optional<Attention> a = MatchAttention(root, &m);
  const char* rule = "fuse-attention";
  if (!a) {
    if (fusion::ProducerIs(root->input(0), "Softmax") != nullptr) {
      fusion::NearMiss(
          options, rule, root,
          "a MatMul of a Softmax whose logits are not a scaled Q Kᵀ of rank "
          "4 over the last axis with an accepted mask (a positive constant "
          "scale; an additive float32 or a Where mask with a fill <= "
          "-2^127, constant, keeping a key in every row, of dims [.., T, S])");
    }
    return false;
  }
  // The query as Attention reads it: [B,H,T,D].
  const Value* query = a->query_transpose != nullptr
                           ? a->query_transpose->output(0)
                           : static_cast<const Value*>(a->q);
  for (const Value* x : {query, static_cast<const Value*>(a->kt),
                         static_cast<const Value*>(a->v)}) {
    if (fusion::DtypeOf(x) != onnx::TensorProto::FLOAT ||
        fusion::RankOf(x) != 4) {
      fusion::NearMiss(options, rule, root,
                       "Q, K or V is not a float32 tensor of rank 4");
      return false;
    }
  }
  if (!SameBatchAndHeads(query, a->kt) || !SameBatchAndHeads(query, a->v)) {
    fusion::NearMiss(options, rule, root,
                     "Q, K and V differ in batch or head dims (broadcasting "
                     "MatMuls, grouped-query heads)");
    return false;
  }
  if (!fusion::UsesStayInside(m, root, options.fuse_low_precision_chains)) {
    fusion::NearMiss(options, rule, root, fusion::kUsedOutside);
    return false;
  }
  const Shape& kt_shape = *fusion::ShapeOf(a->kt);
  Value* q = a->q;
  if (a->query_transpose != nullptr) {
    std::optional<std::vector<int64_t>> perm =
        IntsAttr(a->query_transpose, "perm");
    if (!perm) return false;
    const Type* type = a->query_transpose->output(0)->type();
    q = InsertUnnamedBefore(
            root, "Transpose", {a->q}, PermAttr(*perm),
            type != nullptr ? std::optional<Type>(*type) : std::nullopt)
            ->output(0);
  }
  Type k_type =
      Type::Tensor(onnx::TensorProto::FLOAT,
                   Shape({kt_shape[0], kt_shape[1], kt_shape[3], kt_shape[2]}));
  Value* k = InsertUnnamedBefore(root, "Transpose", {a->kt},
                                 PermAttr({0, 1, 3, 2}), k_type)
                 ->output(0);
  Value* mask = a->mask;
  if (a->where) {
    // Attention's boolean mask keeps the keys where it is True.
    mask = a->where->condition;
    if (!a->where->selected_when) {
      mask = InsertUnnamedBefore(
                 root, "Not", {mask}, {},
                 Type::Tensor(onnx::TensorProto::BOOL, *fusion::ShapeOf(mask)))
                 ->output(0);
    }
  }
  std::vector<Value*> inputs = {q, k, a->v};
  if (mask != nullptr) inputs.push_back(mask);
  std::vector<Attr> attrs;
  attrs.push_back(Attr::Float("scale", static_cast<float>(a->scale)));
  Node* fused = graph.InsertBefore(
      root,
      Node::Create("", "Attention", std::move(inputs),
                   {graph.FreshName("fused_attention")}, std::move(attrs)));
  fused->output(0)->SetType(fusion::FusedType(out, a->v));
  if (absl::Status s =
          fusion::ReplaceAndErase(graph, root, fused->output(0), m);
      !s.ok()) {
    return s;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> FuseAttentionAt(Graph& graph, Node* root,
                                     const FusionOptions& options) {
  return FuseAt(graph, root, options);
}

}  // namespace jax2onnx::ir
