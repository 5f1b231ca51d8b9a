#include "ir/passes/fusion_match.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace jax2onnx::ir::fusion {
namespace {

double HalfToDouble(uint16_t h) {
  int exponent = (h >> 10) & 0x1f;
  int mantissa = h & 0x3ff;
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) {
    return mantissa ? std::nan("") : sign * HUGE_VAL;
  }
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

// `x` rounded to bfloat16 / float16 (round to nearest even), as double.
double RoundToBf16(double x) {
  float f = static_cast<float>(x);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits += 0x7fff + ((bits >> 16) & 1);
  bits &= 0xffff0000u;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
double RoundToF16(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e;
  std::frexp(x, &e);  // x = m * 2^e, 0.5 <= |m| < 1
  // 11 significant bits for normals; subnormals keep the 2^-24 grid.
  int shift = std::max(e - 11, -24);
  return std::nearbyint(std::ldexp(x, -shift)) * std::ldexp(1.0, shift);
}

bool IsCastTo(const Node* n, int to) {
  if (n == nullptr || !n->domain().empty() || n->op_type() != "Cast") {
    return false;
  }
  const Attr* a = n->attr("to");
  return a != nullptr && a->i() == to;
}

bool IsLowFloat(int dtype) {
  return dtype == onnx::TensorProto::BFLOAT16 ||
         dtype == onnx::TensorProto::FLOAT16;
}

// The element type of the constant tensor behind `v` (through Cast and
// Identity), or UNDEFINED.
int ConstantSourceDtype(const Value* v);

// One element of a numeric constant tensor as double.
std::optional<double> FirstElement(const Tensor& t) {
  if (t.is_external() || t.is_string() || t.num_elements() != 1) {
    return std::nullopt;
  }
  switch (t.dtype()) {
    case onnx::TensorProto::FLOAT:
      return t.data<float>()[0];
    case onnx::TensorProto::DOUBLE:
      return t.data<double>()[0];
    case onnx::TensorProto::INT64:
      return static_cast<double>(t.data<int64_t>()[0]);
    case onnx::TensorProto::INT32:
      return static_cast<double>(t.data<int32_t>()[0]);
    case onnx::TensorProto::BFLOAT16: {
      uint32_t bits = static_cast<uint32_t>(t.data<uint16_t>()[0]) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
    case onnx::TensorProto::FLOAT16:
      return HalfToDouble(t.data<uint16_t>()[0]);
    default:
      return std::nullopt;
  }
}

const Tensor* ConstantTensor(const Value* v) {
  if (v == nullptr) return nullptr;
  if (v->const_value() != nullptr && !v->is_graph_input()) {
    return v->const_value();
  }
  Node* n = v->producer();
  if (n != nullptr && n->domain().empty() && n->op_type() == "Constant") {
    const Attr* a = n->attr("value");
    if (a != nullptr && a->type() == onnx::AttributeProto::TENSOR) {
      return &a->t();
    }
  }
  return nullptr;
}

int ConstantSourceDtype(const Value* v) {
  for (int depth = 0; v != nullptr && depth < 8; ++depth) {
    if (const Tensor* t = ConstantTensor(v)) return t->dtype();
    Node* n = v->producer();
    if (n == nullptr || !n->domain().empty() ||
        (n->op_type() != "Cast" && n->op_type() != "Identity")) {
      break;
    }
    v = n->input(0);
  }
  return onnx::TensorProto::UNDEFINED;
}

}  // namespace

Value* StripRounding(Value* v) {
  for (int depth = 0; v != nullptr && depth < 8; ++depth) {
    Node* n = v->producer();
    if (n == nullptr || !n->domain().empty() || n->op_type() != "Cast") break;
    const Attr* to = n->attr("to");
    if (to == nullptr) break;
    const int from = DtypeOf(n->input(0));
    const int dest = static_cast<int>(to->i());
    const bool widening = dest == onnx::TensorProto::FLOAT && IsLowFloat(from);
    const bool rounding = IsLowFloat(dest) && from == onnx::TensorProto::FLOAT;
    if (!widening && !rounding) break;
    v = n->input(0);
  }
  return v;
}

bool SameValue(const Value* a, const Value* b) {
  if (a == b) return a != nullptr;
  if (a == nullptr || b == nullptr) return false;
  Value* sa = StripRounding(const_cast<Value*>(a));
  Value* sb = StripRounding(const_cast<Value*>(b));
  if (sa == sb) return true;
  Node* pa = a->producer();
  Node* pb = b->producer();
  return IsCastTo(pa, onnx::TensorProto::FLOAT) &&
         IsCastTo(pb, onnx::TensorProto::FLOAT) && pa->input(0) == pb->input(0);
}

const Shape* ShapeOf(const Value* v) {
  for (int depth = 0; v != nullptr && depth < 8; ++depth) {
    if (v->shape() != nullptr) return v->shape();
    Node* n = v->producer();
    if (n != nullptr && n->domain().empty() &&
        (n->op_type() == "Cast" || n->op_type() == "Identity")) {
      v = n->input(0);
      continue;
    }
    if (v->num_uses() == 1 &&
        IsCastTo(v->uses()[0].node, onnx::TensorProto::BFLOAT16)) {
      return v->uses()[0].node->output(0)->shape();
    }
    if (v->num_uses() == 1 &&
        IsCastTo(v->uses()[0].node, onnx::TensorProto::FLOAT16)) {
      return v->uses()[0].node->output(0)->shape();
    }
    return nullptr;
  }
  return nullptr;
}

bool SameShape(const Value* a, const Value* b) {
  const Shape* sa = ShapeOf(a);
  const Shape* sb = ShapeOf(b);
  return sa != nullptr && sb != nullptr && *sa == *sb;
}

Type FusedType(const Value* out, const Value* x) {
  if (out->type() != nullptr && out->shape() != nullptr) return *out->type();
  const Shape* s = ShapeOf(x);
  return Type::Tensor(DtypeOf(x), s ? std::optional<Shape>(*s) : std::nullopt);
}

Node* ProducerIs(Value* v, absl::string_view op) {
  v = StripRounding(v);
  if (v == nullptr) return nullptr;
  Node* n = v->producer();
  if (n == nullptr || !n->domain().empty() || n->op_type() != op) {
    return nullptr;
  }
  return n;
}

Value* SkipIdentity(Value* v, Match* m) {
  while (Node* n = ProducerIs(v, "Identity")) {
    m->Add(n);
    v = n->input(0);
  }
  return v;
}

const Tensor* ConstantOf(const Value* v) { return ConstantTensor(v); }

namespace {

// How many producers one ScalarConstant query may evaluate. The constant
// subexpressions the matchers look for (jnp.var's divisor, a literal cast
// to float32, 1/sqrt(2)) have a handful of nodes; a longer chain is
// reported as not a constant. That keeps every query O(1), so a matcher
// that asks about every node of a 100k-deep arithmetic chain stays linear,
// and it is exact: the answer is either the value the graph computes or
// "not known to be a constant" (which only makes a fusion not fire).
constexpr int kMaxConstantProducers = 32;

// One ScalarConstant query: each producer is evaluated at most once (a
// value feeding both operands of an Add, as `v = add v v` prints, would
// otherwise be evaluated twice per level, 2^depth times in all).
class ScalarEvaluator {
 public:
  std::optional<double> Eval(const Value* v) {
    if (v == nullptr) return std::nullopt;
    if (const Tensor* t = ConstantTensor(v)) return FirstElement(*t);
    if (v->shape() != nullptr) {
      // A value with a known dimension other than 1 has more (or fewer)
      // than one element: no scalar, whatever computes it.
      for (const Dim& d : v->shape()->dims()) {
        if (d.is_value() && d.value() != 1) return std::nullopt;
      }
    }
    Node* n = v->producer();
    if (n == nullptr || !n->domain().empty()) return std::nullopt;
    if (auto it = memo_.find(v); it != memo_.end()) return it->second;
    if (--budget_ < 0) return std::nullopt;
    std::optional<double> r = EvalProducer(v, n);
    memo_.emplace(v, r);
    return r;
  }

 private:
  std::optional<double> EvalProducer(const Value* v, const Node* n) {
    const std::string& op = n->op_type();
    if (op == "Constant") {
      if (const Attr* f = n->attr("value_float")) return f->f();
      if (const Attr* i = n->attr("value_int")) {
        return static_cast<double>(i->i());
      }
      return std::nullopt;
    }
    if (op == "Identity" || op == "Cast") {
      std::optional<double> x = Eval(n->input(0));
      if (!x || op == "Identity") return x;
      // A Cast to float32 rounds; to other float types we do not fold.
      const Attr* to = n->attr("to");
      if (to == nullptr) return std::nullopt;
      if (to->i() == onnx::TensorProto::FLOAT) {
        return static_cast<double>(static_cast<float>(*x));
      }
      if (to->i() == onnx::TensorProto::DOUBLE) return x;
      if (to->i() == onnx::TensorProto::BFLOAT16) return RoundToBf16(*x);
      if (to->i() == onnx::TensorProto::FLOAT16) return RoundToF16(*x);
      return std::nullopt;
    }
    if (op == "Neg" && n->num_inputs() == 1) {
      std::optional<double> x = Eval(n->input(0));
      if (x) return -*x;
      return std::nullopt;
    }
    if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") &&
        n->num_inputs() == 2) {
      std::optional<double> a = Eval(n->input(0));
      if (!a) return std::nullopt;  // early exit: no need to look at b
      std::optional<double> b = Eval(n->input(1));
      if (!b) return std::nullopt;
      double r = op == "Add"   ? *a + *b
                 : op == "Sub" ? *a - *b
                 : op == "Mul" ? *a * *b
                               : *a / *b;
      // Round as the graph would (float32 graphs fold in float32).
      if (DtypeOf(v) == onnx::TensorProto::FLOAT) {
        r = static_cast<double>(static_cast<float>(r));
      }
      return r;
    }
    return std::nullopt;
  }

  absl::flat_hash_map<const Value*, std::optional<double>> memo_;
  int budget_ = kMaxConstantProducers;
};

}  // namespace

std::optional<double> ScalarConstant(const Value* v) {
  return ScalarEvaluator().Eval(v);
}

bool IsZeros(const Value* v) {
  for (int depth = 0; v != nullptr && depth < 8; ++depth) {
    if (const Tensor* t = ConstantTensor(v)) {
      if (t->is_external() || t->is_string()) return false;
      for (char byte : t->bytes()) {
        if (byte != 0) return false;  // +0.0 and integer 0 only
      }
      return true;
    }
    Node* n = v->producer();
    if (n == nullptr || !n->domain().empty()) return false;
    if (n->op_type() == "ConstantOfShape") {
      const Attr* value = n->attr("value");
      if (value == nullptr) return true;  // defaults to float32 0
      std::optional<double> x = FirstElement(value->t());
      return x && *x == 0;
    }
    if (n->op_type() != "Expand" && n->op_type() != "Unsqueeze" &&
        n->op_type() != "Reshape" && n->op_type() != "Identity" &&
        n->op_type() != "Cast") {
      return false;
    }
    v = n->input(0);
  }
  return false;
}

std::optional<std::vector<int64_t>> IntsConstant(const Value* v) {
  const Tensor* t = ConstantTensor(v);
  if (t == nullptr || t->is_external()) return std::nullopt;
  std::vector<int64_t> out;
  if (t->dtype() == onnx::TensorProto::INT64) {
    for (int64_t x : t->data<int64_t>()) out.push_back(x);
  } else if (t->dtype() == onnx::TensorProto::INT32) {
    for (int32_t x : t->data<int32_t>()) out.push_back(x);
  } else {
    return std::nullopt;
  }
  return out;
}

int RankOf(const Value* v) {
  const Shape* s = ShapeOf(v);
  return s == nullptr ? -1 : static_cast<int>(s->rank());
}

int64_t StaticDim(const Value* v, int axis) {
  const Shape* s = ShapeOf(v);
  if (s == nullptr || axis < 0 || axis >= static_cast<int>(s->rank())) {
    return -1;
  }
  return (*s)[axis].is_value() ? (*s)[axis].value() : -1;
}

int DtypeOf(const Value* v) {
  static const absl::flat_hash_set<std::string>* const kSameAsInput =
      new absl::flat_hash_set<std::string>{
          "Add",      "Sub",       "Mul",       "Div",        "Max",
          "Min",      "Neg",       "Sqrt",      "Reciprocal", "Exp",
          "Log",      "Tanh",      "Erf",       "Sigmoid",    "Pow",
          "Identity", "ReduceSum", "ReduceMax", "ReduceMean", "Unsqueeze",
          "Reshape",  "Expand",    "Abs"};
  for (int depth = 0; v != nullptr && depth < 16; ++depth) {
    if (v->dtype() != onnx::TensorProto::UNDEFINED) return v->dtype();
    Node* n = v->producer();
    if (n == nullptr || !n->domain().empty()) break;
    if (n->op_type() == "Cast") {
      const Attr* to = n->attr("to");
      return to == nullptr ? onnx::TensorProto::UNDEFINED
                           : static_cast<int>(to->i());
    }
    if (!kSameAsInput->contains(n->op_type()) || n->num_inputs() < 1) break;
    v = n->input(0);
  }
  return onnx::TensorProto::UNDEFINED;
}

Value* MatchReduce(Value* v, absl::string_view op, int axis, int rank,
                   bool keepdims, Match* m) {
  Node* n = ProducerIs(v, op);
  if (n == nullptr || n->num_inputs() < 1) return nullptr;
  Value* data = n->input(0);
  if (RankOf(data) != rank) return nullptr;
  std::vector<int64_t> axes;
  if (const Attr* a = n->attr("axes")) {
    axes = a->ints();
  } else if (n->num_inputs() >= 2 && n->input(1) != nullptr) {
    std::optional<std::vector<int64_t>> c = IntsConstant(n->input(1));
    if (!c) return nullptr;
    axes = *c;
  } else {
    return nullptr;  // all axes (or noop_with_empty_axes): not one axis
  }
  if (axes.size() != 1) return nullptr;
  int64_t a = axes[0] < 0 ? axes[0] + rank : axes[0];
  if (a != axis) return nullptr;
  const Attr* k = n->attr("keepdims");
  bool kd = k == nullptr ? true : k->i() != 0;  // ONNX default keepdims=1
  if (kd != keepdims) return nullptr;
  m->Add(n);
  return data;
}

Value* StripKeptAxis(Value* v, int axis, int rank, bool* kept, Match* m) {
  v = SkipIdentity(v, m);
  if (Node* e = ProducerIs(v, "Expand")) {
    // Broadcasting the kept axis explicitly to the full shape changes
    // nothing for the elementwise consumer that would broadcast it anyway.
    if (RankOf(e->input(0)) == rank) {
      m->Add(e);
      v = SkipIdentity(e->input(0), m);
    }
  }
  if (Node* u = ProducerIs(v, "Unsqueeze")) {
    std::optional<std::vector<int64_t>> axes;
    if (const Attr* a = u->attr("axes")) {
      axes = a->ints();
    } else if (u->num_inputs() == 2) {
      axes = IntsConstant(u->input(1));
    }
    if (axes && axes->size() == 1 &&
        ((*axes)[0] == axis || (*axes)[0] + rank == axis) &&
        RankOf(u->input(0)) == rank - 1) {
      m->Add(u);
      *kept = false;
      return SkipIdentity(u->input(0), m);
    }
    return nullptr;
  }
  if (Node* r = ProducerIs(v, "Reshape")) {
    // A reshape inserting a 1 at `axis`: the input's static shape is the
    // output's with that axis removed.
    const Shape* in = ShapeOf(r->input(0));
    const Shape* out = ShapeOf(r->output(0));
    if (in == nullptr || out == nullptr || !in->IsStatic() ||
        !out->IsStatic() || static_cast<int>(out->rank()) != rank ||
        static_cast<int>(in->rank()) != rank - 1 || (*out)[axis] != Dim(1)) {
      return nullptr;
    }
    for (int i = 0, j = 0; i < rank; ++i) {
      if (i == axis) continue;
      if ((*in)[j++] != (*out)[i]) return nullptr;
    }
    m->Add(r);
    *kept = false;
    return SkipIdentity(r->input(0), m);
  }
  *kept = true;
  return v;
}

Value* MatchMean(Value* v, int axis, int rank, bool kept, Match* m) {
  v = SkipIdentity(v, m);
  if (Value* x = MatchReduce(v, "ReduceMean", axis, rank, kept, m)) return x;
  Node* div = ProducerIs(v, "Div");
  if (div == nullptr) return nullptr;
  std::optional<double> count = ScalarConstant(div->input(1));
  if (!count) return nullptr;
  Match trial = *m;
  trial.Add(div);
  Value* x = nullptr;
  if (kept) {
    // The divide may follow the re-inserted axis (reduce_sum ->
    // broadcast_in_dim -> div, as jnp.mean(keepdims=True) prints) or a
    // keepdims=1 ReduceSum.
    bool sum_kept = false;
    Value* s = StripKeptAxis(div->input(0), axis, rank, &sum_kept, &trial);
    if (s == nullptr) return nullptr;
    x = MatchReduce(s, "ReduceSum", axis, rank, sum_kept, &trial);
  } else {
    x = MatchReduce(SkipIdentity(div->input(0), &trial), "ReduceSum", axis,
                    rank, false, &trial);
  }
  if (x == nullptr) return nullptr;
  int64_t n = StaticDim(x, axis);
  if (n <= 0 || *count != static_cast<double>(n)) return nullptr;
  *m = std::move(trial);
  return x;
}

Value* MatchKeptMean(Value* v, int axis, int rank, Match* m) {
  Match trial = *m;
  bool kept = false;
  Value* base = StripKeptAxis(v, axis, rank, &kept, &trial);
  if (base == nullptr) return nullptr;
  Value* x = MatchMean(base, axis, rank, kept, &trial);
  if (x == nullptr) return nullptr;
  *m = std::move(trial);
  return x;
}

Value* MatchSquare(Value* v, Match* m) {
  if (Node* n = ProducerIs(v, "Mul")) {
    if (SameValue(n->input(0), n->input(1))) {
      m->Add(n);
      return n->input(0);
    }
    return nullptr;
  }
  if (Node* n = ProducerIs(v, "Pow")) {
    std::optional<double> e = ScalarConstant(n->input(1));
    if (e && *e == 2.0) {
      m->Add(n);
      return n->input(0);
    }
  }
  return nullptr;
}

constexpr size_t kMaxFactors = 8;

std::vector<Value*> MulFactors(Value* v, Match* m) {
  std::vector<Value*> out;
  Node* root = ProducerIs(v, "Mul");
  if (root == nullptr) return {v};
  m->Add(root);
  std::vector<Value*> stack = {root->input(1), root->input(0)};
  while (!stack.empty()) {
    // Every walked Mul adds one factor: stop before walking a long chain
    // (the fusions want at most three factors, and a matcher asking at
    // every Mul of a 100k-deep product chain must not walk it each time).
    if (out.size() + stack.size() > kMaxFactors) return {};
    Value* f = stack.back();
    stack.pop_back();
    Node* n = ProducerIs(f, "Mul");
    Value* produced = n == nullptr ? nullptr : n->output(0);
    if (n != nullptr && produced->num_uses() == 1 &&
        !produced->is_graph_output() && !SameValue(n->input(0), n->input(1))) {
      m->Add(n);
      stack.push_back(n->input(1));
      stack.push_back(n->input(0));
      continue;
    }
    out.push_back(f);
  }
  return out;
}

bool IsFloatConstant(const Value* c, double expected) {
  std::optional<double> x = ScalarConstant(c);
  if (!x) return false;
  if (static_cast<float>(*x) == static_cast<float>(expected)) return true;
  switch (ConstantSourceDtype(c)) {
    case onnx::TensorProto::BFLOAT16:
      return *x == RoundToBf16(expected);
    case onnx::TensorProto::FLOAT16:
      return *x == RoundToF16(expected);
    default:
      return false;
  }
}

namespace {

// Adds to `s` the float-to-float Cast `c` and, recursively, the Casts its
// result feeds, when every result ends in `m`; false otherwise.
bool CollectRoundingCasts(const Match& m, Node* c, int depth,
                          absl::flat_hash_set<Node*>* s) {
  if (depth > 4 || !c->domain().empty() || c->op_type() != "Cast") {
    return false;
  }
  const Attr* to = c->attr("to");
  if (to == nullptr || (to->i() != onnx::TensorProto::FLOAT &&
                        !IsLowFloat(static_cast<int>(to->i())))) {
    return false;
  }
  Value* out = c->output(0);
  if (out->is_graph_output()) return false;
  s->insert(c);
  for (const Use& u : out->uses()) {
    if (m.nodes.contains(u.node) || s->contains(u.node)) continue;
    if (!CollectRoundingCasts(m, u.node, depth + 1, s)) return false;
  }
  return true;
}

}  // namespace

bool UsesStayInside(Match& m, const Node* root, bool allow_dropping_rounding) {
  bool drops_rounding = false;
  // Rounding casts between matched nodes first (each absorbed trip may make
  // another one absorbable).
  for (bool grew = true; grew;) {
    grew = false;
    std::vector<Node*> nodes(m.nodes.begin(), m.nodes.end());
    for (Node* n : nodes) {
      if (n == root) continue;
      for (Value* out : n->outputs()) {
        for (const Use& u : out->uses()) {
          if (m.nodes.contains(u.node)) continue;
          absl::flat_hash_set<Node*> casts;
          if (CollectRoundingCasts(m, u.node, 0, &casts)) {
            for (Node* c : casts) {
              m.Add(c);
              const Attr* to = c->attr("to");
              drops_rounding |= IsLowFloat(static_cast<int>(to->i()));
            }
            grew = true;
          }
        }
      }
    }
  }
  for (Node* n : m.nodes) {
    // A chain inside a subgraph may not swallow nodes of an enclosing graph.
    if (n->graph() != root->graph()) return false;
    if (n == root) continue;
    for (Value* out : n->outputs()) {
      if (out->is_graph_output()) return false;
      for (const Use& u : out->uses()) {
        if (!m.nodes.contains(u.node)) return false;
      }
    }
  }
  return allow_dropping_rounding || !drops_rounding;
}

namespace {

// The equation indices a converter node name starts with, outermost first
// ("eqn5/pjit/eqn2/add/Add" -> {5, 2}); empty for a name not after an
// equation.
std::vector<int64_t> EquationPath(absl::string_view name) {
  std::vector<int64_t> path;
  for (absl::string_view part : absl::StrSplit(name, '/')) {
    int64_t index = 0;
    if (absl::ConsumePrefix(&part, "eqn") && absl::SimpleAtoi(part, &index)) {
      path.push_back(index);
    }
  }
  return path;
}

// Names the fused node after its op type and the first equation it
// replaces ("LayerNormalization/eqn3/reduce_sum"), and documents the
// equations it replaces (their doc strings, in program order).
void NameFusedNode(Node* fused, const Match& m) {
  struct Replaced {
    std::vector<int64_t> path;
    std::string scope;  // the node name without its op type
    const std::string* doc;
  };
  std::vector<Replaced> replaced;
  for (const Node* n : m.nodes) {
    std::vector<int64_t> path = EquationPath(n->name());
    if (path.empty()) continue;
    const size_t slash = n->name().rfind('/');
    replaced.push_back(
        {std::move(path), n->name().substr(0, slash), &n->doc_string()});
  }
  if (replaced.empty()) return;
  std::sort(replaced.begin(), replaced.end(),
            [](const Replaced& a, const Replaced& b) {
              return std::tie(a.path, a.scope) < std::tie(b.path, b.scope);
            });
  fused->set_name(absl::StrCat(fused->op_type(), "/", replaced[0].scope));
  std::string doc = absl::StrCat(fused->op_type(), " fused from:");
  const std::string* last = nullptr;
  for (const Replaced& r : replaced) {
    // Several nodes of one equation share its doc string.
    if (r.doc->empty() || (last != nullptr && *last == *r.doc)) continue;
    absl::StrAppend(&doc, "\n", *r.doc);
    last = r.doc;
  }
  fused->set_doc_string(std::move(doc));
}

}  // namespace

absl::Status ReplaceAndErase(Graph& graph, Node* root, Value* replacement,
                             const Match& m) {
  if (Node* fused = replacement->producer();
      fused != nullptr && !m.nodes.contains(fused)) {
    NameFusedNode(fused, m);
  }
  Value* old = root->output(0);
  std::string name = old->name();
  old->SetName(graph.FreshName(absl::StrCat(name, "_unfused")));
  replacement->SetName(name);
  ReplaceAllUsesWith(old, replacement);
  // Erase from the root upwards: a node goes once its outputs lost all uses.
  // Producers outside the match that only fed it (e.g. the constant
  // arithmetic of jnp.var's divisor) go too once they lose their last use.
  bool progress = true;
  absl::flat_hash_set<Node*> left = m.nodes;
  std::vector<Value*> fed;
  for (Node* n : m.nodes) {
    for (Value* in : n->inputs()) {
      if (in != nullptr && in->producer() != nullptr &&
          !m.nodes.contains(in->producer())) {
        fed.push_back(in);
      }
    }
  }
  while (progress && !left.empty()) {
    progress = false;
    for (auto it = left.begin(); it != left.end();) {
      Node* n = *it;
      bool unused = true;
      for (Value* out : n->outputs()) {
        if (out->num_uses() > 0 || out->is_graph_output()) unused = false;
      }
      if (!unused) {
        ++it;
        continue;
      }
      if (absl::Status s = graph.Erase(n); !s.ok()) return s;
      left.erase(it++);
      progress = true;
    }
  }
  while (!fed.empty()) {
    Value* v = fed.back();
    fed.pop_back();
    Node* p = v->producer();
    if (p == nullptr || p->erased() || p->graph() != &graph ||
        !p->Subgraphs().empty()) {
      continue;
    }
    bool unused = true;
    for (Value* out : p->outputs()) {
      if (out->num_uses() > 0 || out->is_graph_output()) unused = false;
    }
    if (!unused) continue;
    for (Value* in : p->inputs()) {
      if (in != nullptr && in->producer() != nullptr) fed.push_back(in);
    }
    if (absl::Status s = graph.Erase(p); !s.ok()) return s;
  }
  if (!left.empty()) {
    return absl::InternalError(
        absl::StrCat("fusion left ", left.size(),
                     " matched nodes in use after replacing ", name));
  }
  return absl::OkStatus();
}

bool IsFeatureVectorShape(const Value* v, int64_t d, int max_rank) {
  const Shape* s = ShapeOf(v);
  if (s == nullptr || !s->IsStatic() || s->rank() == 0 ||
      static_cast<int>(s->rank()) > max_rank) {
    return false;
  }
  for (size_t i = 0; i + 1 < s->rank(); ++i) {
    if ((*s)[i].value() != 1) return false;
  }
  return (*s)[s->rank() - 1].value() == d;
}

absl::StatusOr<Value*> AsFeatureVector(Graph& graph, Node* anchor, Value* v,
                                       int64_t d, int max_rank) {
  if (!IsFeatureVectorShape(v, d, max_rank)) return nullptr;
  if (RankOf(v) == 1) return v;
  // The broadcast of a [d] parameter to [1, ..., 1, d] (broadcast_in_dim
  // lowers to Unsqueeze, jnp.reshape to Reshape): use the parameter.
  // (Only without a cast in between: the op wants its own element type.)
  for (const char* op : {"Reshape", "Unsqueeze"}) {
    Node* r = v->producer();
    if (r != nullptr && r->domain().empty() && r->op_type() == op &&
        IsFeatureVectorShape(r->input(0), d, 1) &&
        DtypeOf(r->input(0)) == DtypeOf(v)) {
      return r->input(0);
    }
  }
  std::vector<int64_t> target = {d};
  absl::StatusOr<Value*> shape = graph.AddInitializer(
      graph.FreshName("fused_feature_shape"),
      Tensor::FromVector<int64_t>(onnx::TensorProto::INT64, {1},
                                  absl::MakeConstSpan(target)));
  if (!shape.ok()) return shape.status();
  (*shape)->SetType(Type::Tensor(onnx::TensorProto::INT64, Shape({1})));
  Node* r = graph.InsertBefore(
      anchor, Node::Create("", "Reshape", {v, *shape},
                           {graph.FreshName(absl::StrCat(v->name(), "_1d"))}));
  r->output(0)->SetType(Type::Tensor(DtypeOf(v), Shape({d})));
  return r->output(0);
}

void NearMiss(const FusionOptions& options, absl::string_view rule,
              const Node* root, absl::string_view reason) {
  if (options.log == nullptr) return;
  options.log->near_misses.push_back(
      {std::string(rule),
       root->num_outputs() > 0 ? root->output(0)->name() : root->name(),
       std::string(reason)});
}

int DefaultOpset(const Model& model) {
  std::optional<int64_t> v = model.OpsetVersion("");
  return v ? static_cast<int>(*v) : 0;
}

namespace {

absl::StatusOr<bool> WalkBackwards(
    Graph& graph,
    const std::function<absl::StatusOr<bool>(Graph&, Node*)>& fuse_at) {
  bool changed = false;
  std::vector<Node*> order;
  for (Node* n : graph.nodes_reversed()) order.push_back(n);
  for (Node* n : order) {
    if (n->erased()) continue;
    for (Graph* sub : n->Subgraphs()) {
      absl::StatusOr<bool> c = WalkBackwards(*sub, fuse_at);
      if (!c.ok()) return c.status();
      changed |= *c;
    }
    absl::StatusOr<bool> c = fuse_at(graph, n);
    if (!c.ok()) return c.status();
    changed |= *c;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> ForEachNodeBackwards(
    Model& model,
    const std::function<absl::StatusOr<bool>(Graph&, Node*)>& fuse_at) {
  absl::StatusOr<bool> changed = WalkBackwards(model.graph(), fuse_at);
  if (!changed.ok()) return changed;
  bool any = *changed;
  for (Function* f : model.functions()) {
    changed = WalkBackwards(f->body(), fuse_at);
    if (!changed.ok()) return changed;
    any |= *changed;
  }
  return any;
}

}  // namespace jax2onnx::ir::fusion
