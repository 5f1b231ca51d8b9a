// common-subexpression-elimination: within each graph (main, subgraphs,
// function bodies), a node with the same domain, op type, inputs (the same
// values), attributes and output count as an earlier node is dropped: its
// consumers read the earlier node's outputs. Initializers of the main graph
// with equal dtype, dims and bytes are merged first, so that nodes reading
// equal constants become equal too.
//
// Refuses: nodes with random results (RandomNormal, RandomUniform, their
// *Like forms, Bernoulli, Multinomial), nodes with tensor, graph, sparse or
// type attributes or attribute references, nodes whose outputs are graph
// outputs (the names are the interface), initializers that are graph inputs
// or outputs, string and external initializers.
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

bool IsRandom(const Node* n) {
  // Views, not C strings: a comparison checks the length first instead of
  // measuring each name (this runs for every node, every round).
  static constexpr absl::string_view kOps[] = {
      "RandomNormal",      "RandomUniform", "RandomNormalLike",
      "RandomUniformLike", "Bernoulli",     "Multinomial"};
  for (absl::string_view op : kOps) {
    if (n->op_type() == op) return true;
  }
  return false;
}

std::string FloatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return absl::StrCat(bits);
}

// An exact text key of the node's attributes (sorted by name), or nullopt
// when one cannot be compared cheaply and exactly.
std::optional<std::string> AttrKey(const Node* n) {
  std::map<std::string, std::string> parts;
  for (const Attr& a : n->attributes()) {
    if (a.is_ref()) return std::nullopt;
    std::string v;
    switch (a.type()) {
      case onnx::AttributeProto::INT:
        v = absl::StrCat("i", a.i());
        break;
      case onnx::AttributeProto::FLOAT:
        v = "f" + FloatBits(a.f());
        break;
      case onnx::AttributeProto::STRING:
        v = absl::StrCat("s", a.s().size(), ":", a.s());
        break;
      case onnx::AttributeProto::INTS:
        v = "I";
        for (int64_t x : a.ints()) absl::StrAppend(&v, x, ",");
        break;
      case onnx::AttributeProto::FLOATS:
        v = "F";
        for (float x : a.floats()) absl::StrAppend(&v, FloatBits(x), ",");
        break;
      case onnx::AttributeProto::STRINGS:
        v = "S";
        for (const std::string& x : a.strings()) {
          absl::StrAppend(&v, x.size(), ":", x);
        }
        break;
      default:
        return std::nullopt;
    }
    parts[a.name()] = std::move(v);
  }
  std::string key;
  for (const auto& [name, v] : parts) absl::StrAppend(&key, name, "=", v, ";");
  return key;
}

// A cheap hash of a tensor's bytes for bucketing: its size and its first and
// last 64 bytes. Hashing every weight in full cost more than the rest of a
// ViT-B conversion; equal buckets are still compared byte for byte, and
// weights of one shape almost always differ within their first bytes.
size_t Fingerprint(absl::string_view bytes) {
  constexpr size_t kEdge = 64;
  if (bytes.size() <= 2 * kEdge) return absl::HashOf(bytes);
  return absl::HashOf(bytes.size(), bytes.substr(0, kEdge),
                      bytes.substr(bytes.size() - kEdge));
}

bool MergeInitializers(Graph& g) {
  bool changed = false;
  // hash of (dtype, dims, byte fingerprint) -> initializers, in order.
  absl::flat_hash_map<size_t, absl::InlinedVector<Value*, 1>> seen;
  seen.reserve(g.num_initializers());
  for (Value* v : g.initializers()) {
    const Tensor* t = v->const_value();
    if (t == nullptr || v->is_graph_input() || v->is_graph_output() ||
        t->is_string() || t->is_external() || v->num_uses() == 0) {
      continue;
    }
    const size_t key =
        absl::HashOf(t->dtype(), t->dims(), Fingerprint(t->bytes()));
    absl::InlinedVector<Value*, 1>& same = seen[key];
    Value* match = nullptr;
    for (Value* earlier : same) {
      const Tensor* e = earlier->const_value();
      if (e->dtype() == t->dtype() && e->dims() == t->dims() &&
          e->bytes() == t->bytes()) {
        match = earlier;
        break;
      }
    }
    if (match == nullptr) {
      same.push_back(v);
      continue;
    }
    ReplaceAllUsesWith(v, match);
    changed = true;
  }
  return changed;
}

// Whether AttrKey can describe every attribute of `n` (no references, no
// tensor/graph/sparse/type payloads), without building the key.
bool AttrsComparable(const Node* n) {
  for (const Attr& a : n->attributes()) {
    if (a.is_ref()) return false;
    switch (a.type()) {
      case onnx::AttributeProto::INT:
      case onnx::AttributeProto::FLOAT:
      case onnx::AttributeProto::STRING:
      case onnx::AttributeProto::INTS:
      case onnx::AttributeProto::FLOATS:
      case onnx::AttributeProto::STRINGS:
        break;
      default:
        return false;
    }
  }
  return true;
}

// Hash of what makes two nodes equal except the attribute values (those
// are compared exactly, through AttrKey, only between nodes whose hashes
// match: building the text key for every node dominated the pass).
size_t StructuralHash(const Node* n) {
  size_t h = absl::HashOf(n->domain(), n->op_type(), n->num_outputs(),
                          n->attributes().size());
  for (const Value* in : n->inputs()) h = absl::HashOf(h, in);
  return h;
}

bool SameComputation(const Node* a, const Node* b) {
  if (a->domain() != b->domain() || a->op_type() != b->op_type() ||
      a->num_outputs() != b->num_outputs() || a->inputs() != b->inputs() ||
      a->attributes().size() != b->attributes().size()) {
    return false;
  }
  return AttrKey(a) == AttrKey(b);
}

bool EliminateIn(Graph& g) {
  bool changed = false;
  // Buckets almost always hold one node: inline, so that a node costs no
  // allocation.
  absl::flat_hash_map<size_t, absl::InlinedVector<Node*, 1>> seen;
  seen.reserve(g.num_nodes());
  for (Node* node : g.nodes()) {
    if (IsRandom(node) || node->has_subgraphs() || !AttrsComparable(node)) {
      continue;
    }
    absl::InlinedVector<Node*, 1>& bucket = seen[StructuralHash(node)];
    Node* earlier = nullptr;
    for (Node* candidate : bucket) {
      if (SameComputation(candidate, node)) {
        earlier = candidate;
        break;
      }
    }
    if (earlier == nullptr) {
      bucket.push_back(node);
      continue;
    }
    bool interface = false;
    for (int i = 0; i < node->num_outputs(); ++i) {
      interface |= node->output(i)->is_graph_output();
    }
    if (interface) continue;
    for (int i = 0; i < node->num_outputs(); ++i) {
      if (node->output(i)->num_uses() == 0) continue;
      if (earlier->output(i)->name().empty()) {
        interface = true;  // an absent output of the earlier node
      }
    }
    if (interface) continue;
    for (int i = 0; i < node->num_outputs(); ++i) {
      if (node->output(i)->num_uses() > 0) {
        ReplaceAllUsesWith(node->output(i), earlier->output(i));
        changed = true;
      }
    }
  }
  return changed;
}

class CommonSubexpressionElimination : public Pass {
 public:
  absl::string_view name() const override {
    return "common-subexpression-elimination";
  }
  absl::StatusOr<bool> Run(Model& model) override {
    bool changed = MergeInitializers(model.graph());
    for (Graph* g : AllGraphs(model)) changed |= EliminateIn(*g);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateCommonSubexpressionEliminationPass() {
  return std::make_unique<CommonSubexpressionElimination>();
}

}  // namespace jax2onnx::ir
