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
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

bool IsRandom(const Node* n) {
  static const char* const kOps[] = {"RandomNormal",     "RandomUniform",
                                     "RandomNormalLike", "RandomUniformLike",
                                     "Bernoulli",        "Multinomial"};
  for (const char* op : kOps) {
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

bool MergeInitializers(Graph& g) {
  bool changed = false;
  // (dtype, dims, byte hash) -> initializers with that key, in order.
  absl::flat_hash_map<std::string, std::vector<Value*>> seen;
  for (Value* v : g.initializers()) {
    const Tensor* t = v->const_value();
    if (t == nullptr || v->is_graph_input() || v->is_graph_output() ||
        t->is_string() || t->is_external() || v->num_uses() == 0) {
      continue;
    }
    std::string key = absl::StrCat(t->dtype(), "|");
    for (int64_t d : t->dims()) absl::StrAppend(&key, d, ",");
    absl::StrAppend(&key, "|", absl::HashOf(t->bytes()));
    std::vector<Value*>& same = seen[key];
    Value* match = nullptr;
    for (Value* earlier : same) {
      if (earlier->const_value()->bytes() == t->bytes()) {
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

bool EliminateIn(Graph& g) {
  bool changed = false;
  absl::flat_hash_map<std::string, Node*> seen;
  for (Node* node : g.nodes()) {
    if (IsRandom(node) || !node->Subgraphs().empty()) continue;
    std::optional<std::string> attrs = AttrKey(node);
    if (!attrs.has_value()) continue;
    std::string key = absl::StrCat(node->domain(), "|", node->op_type(), "|",
                                   node->num_outputs(), "|", *attrs, "|");
    for (const Value* in : node->inputs()) {
      absl::StrAppend(&key, reinterpret_cast<uintptr_t>(in), ",");
    }
    auto [it, inserted] = seen.try_emplace(key, node);
    if (inserted) continue;
    Node* earlier = it->second;
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
