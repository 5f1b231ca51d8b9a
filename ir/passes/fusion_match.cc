#include "ir/passes/fusion_match.h"

#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace jax2onnx::ir::fusion {
namespace {

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

}  // namespace

Node* ProducerIs(const Value* v, absl::string_view op) {
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

std::optional<double> ScalarConstant(const Value* v) {
  if (v == nullptr) return std::nullopt;
  if (const Tensor* t = ConstantTensor(v)) return FirstElement(*t);
  Node* n = v->producer();
  if (n == nullptr || !n->domain().empty()) return std::nullopt;
  const std::string& op = n->op_type();
  if (op == "Identity" || op == "Cast") {
    std::optional<double> x = ScalarConstant(n->input(0));
    if (!x || op == "Identity") return x;
    // A Cast to float32 rounds; to other float types we do not fold.
    const Attr* to = n->attr("to");
    if (to == nullptr) return std::nullopt;
    if (to->i() == onnx::TensorProto::FLOAT) {
      return static_cast<double>(static_cast<float>(*x));
    }
    if (to->i() == onnx::TensorProto::DOUBLE) return x;
    return std::nullopt;
  }
  if (op == "Neg" && n->num_inputs() == 1) {
    std::optional<double> x = ScalarConstant(n->input(0));
    if (x) return -*x;
    return std::nullopt;
  }
  if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") &&
      n->num_inputs() == 2) {
    std::optional<double> a = ScalarConstant(n->input(0));
    std::optional<double> b = ScalarConstant(n->input(1));
    if (!a || !b) return std::nullopt;
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
  if (v == nullptr || v->shape() == nullptr) return -1;
  return static_cast<int>(v->shape()->rank());
}

int64_t StaticDim(const Value* v, int axis) {
  const Shape* s = v == nullptr ? nullptr : v->shape();
  if (s == nullptr || axis < 0 || axis >= static_cast<int>(s->rank())) {
    return -1;
  }
  return (*s)[axis].is_value() ? (*s)[axis].value() : -1;
}

int DtypeOf(const Value* v) {
  return v == nullptr ? onnx::TensorProto::UNDEFINED : v->dtype();
}

Value* MatchReduce(const Value* v, absl::string_view op, int axis, int rank,
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
    const Shape* in = r->input(0) == nullptr ? nullptr : r->input(0)->shape();
    const Shape* out = v->shape();
    if (in == nullptr || out == nullptr || !in->IsStatic() ||
        !out->IsStatic() || static_cast<int>(out->rank()) != rank ||
        static_cast<int>(in->rank()) != rank - 1 ||
        (*out)[axis] != Dim(1)) {
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

Value* MatchSquare(const Value* v, Match* m) {
  if (Node* n = ProducerIs(v, "Mul")) {
    if (n->input(0) == n->input(1)) {
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

std::vector<Value*> MulFactors(Value* v, Match* m) {
  std::vector<Value*> out;
  Node* root = ProducerIs(v, "Mul");
  if (root == nullptr) return {v};
  m->Add(root);
  std::vector<Value*> stack = {root->input(1), root->input(0)};
  while (!stack.empty()) {
    Value* f = stack.back();
    stack.pop_back();
    Node* n = ProducerIs(f, "Mul");
    if (n != nullptr && f->num_uses() == 1 && !f->is_graph_output() &&
        n->input(0) != n->input(1)) {
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
  return x && static_cast<float>(*x) == static_cast<float>(expected);
}

bool UsesStayInside(const Match& m, const Node* root) {
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
  return true;
}

absl::Status ReplaceAndErase(Graph& graph, Node* root, Value* replacement,
                             const Match& m) {
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
  const Shape* s = v == nullptr ? nullptr : v->shape();
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
  if (Node* r = ProducerIs(v, "Reshape")) {
    if (IsFeatureVectorShape(r->input(0), d, 1)) return r->input(0);
  }
  if (Node* u = ProducerIs(v, "Unsqueeze")) {
    if (IsFeatureVectorShape(u->input(0), d, 1)) return u->input(0);
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
  r->output(0)->SetType(Type::Tensor(v->dtype(), Shape({d})));
  return r->output(0);
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
