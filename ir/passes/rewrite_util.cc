#include "ir/passes/rewrite_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace jax2onnx::ir {

std::optional<std::vector<int64_t>> ConstInts(const Value* v) {
  if (v == nullptr || v->const_value() == nullptr) return std::nullopt;
  const Tensor& t = *v->const_value();
  if (t.is_external()) return std::nullopt;
  std::vector<int64_t> out;
  if (t.dtype() == onnx::TensorProto::INT64) {
    for (int64_t x : t.data<int64_t>()) out.push_back(x);
  } else if (t.dtype() == onnx::TensorProto::INT32) {
    for (int32_t x : t.data<int32_t>()) out.push_back(x);
  } else {
    return std::nullopt;
  }
  return out;
}

int64_t IntAttr(const Node* node, absl::string_view name, int64_t fallback) {
  const Attr* a = node->attr(name);
  if (a == nullptr || a->is_ref() || a->type() != onnx::AttributeProto::INT) {
    return fallback;
  }
  return a->i();
}

std::optional<std::vector<int64_t>> IntsAttr(const Node* node,
                                             absl::string_view name) {
  const Attr* a = node->attr(name);
  if (a == nullptr || a->is_ref() || a->type() != onnx::AttributeProto::INTS) {
    return std::nullopt;
  }
  return a->ints();
}

std::optional<std::vector<int64_t>> StaticDims(const Value* v) {
  const Shape* s = v->shape();
  if (s == nullptr || !s->IsStatic()) return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim& d : s->dims()) out.push_back(d.value());
  return out;
}

std::string DerivedNodeName(const Node* from, absl::string_view op_type) {
  const std::string& name = from->name();
  const size_t slash = name.rfind('/');
  if (slash == std::string::npos) return std::string(op_type);
  return absl::StrCat(name.substr(0, slash + 1), op_type);
}

Node* InsertNodeBefore(Node* anchor, absl::string_view op_type,
                       std::vector<Value*> inputs, std::vector<Attr> attrs,
                       std::optional<Type> type) {
  Graph* graph = anchor->graph();
  Graph* root = graph->root();
  std::vector<std::string> names = {root->FreshName(op_type)};
  Node* node = graph->InsertBefore(
      anchor, Node::Create("", op_type, inputs, std::move(names),
                           std::move(attrs), DerivedNodeName(anchor, op_type)));
  node->set_doc_string(anchor->doc_string());
  if (type.has_value()) node->output(0)->SetType(std::move(type));
  return node;
}

Value* AddI64Initializer(Graph* graph, absl::string_view hint,
                         const std::vector<int64_t>& values) {
  Graph* root = graph->root();
  Tensor t = Tensor::FromVector<int64_t>(
      onnx::TensorProto::INT64, {static_cast<int64_t>(values.size())}, values);
  absl::StatusOr<Value*> v =
      root->AddInitializer(root->FreshName(hint), std::move(t));
  CHECK(v.ok()) << v.status();
  (*v)->SetType(Type::Tensor(onnx::TensorProto::INT64,
                             Shape({static_cast<int64_t>(values.size())})));
  return *v;
}

std::optional<std::vector<int64_t>> NormalizeAxes(std::vector<int64_t> axes,
                                                  int64_t rank) {
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) return std::nullopt;
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    return std::nullopt;
  }
  return axes;
}

std::optional<std::vector<Dim>> BroadcastDims(const std::vector<Dim>& a,
                                              const std::vector<Dim>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<Dim> out(rank);
  const Dim one(1);
  for (size_t i = 0; i < rank; ++i) {
    const Dim& da = i + a.size() >= rank ? a[i + a.size() - rank] : one;
    const Dim& db = i + b.size() >= rank ? b[i + b.size() - rank] : one;
    if (da.is_unknown() || db.is_unknown()) return std::nullopt;
    if (da == db) {
      out[i] = da;
    } else if (da.is_value() && da.value() == 1) {
      out[i] = db;
    } else if (db.is_value() && db.value() == 1) {
      out[i] = da;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace jax2onnx::ir
