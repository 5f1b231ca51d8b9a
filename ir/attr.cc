// ir::Attr: the typed constructors and payload accessors of a node attribute.
#include "ir/ir.h"

#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "glog/logging.h"

namespace jax2onnx::ir {

// ---------------------------------------------------------------- Attr

Attr Attr::Float(std::string name, float v) {
  return Attr(std::move(name), onnx::AttributeProto::FLOAT, v);
}
Attr Attr::Int(std::string name, int64_t v) {
  return Attr(std::move(name), onnx::AttributeProto::INT, v);
}
Attr Attr::String(std::string name, std::string v) {
  return Attr(std::move(name), onnx::AttributeProto::STRING, std::move(v));
}
Attr Attr::TensorValue(std::string name, Tensor v) {
  return Attr(std::move(name), onnx::AttributeProto::TENSOR,
              std::make_unique<Tensor>(std::move(v)));
}
Attr Attr::GraphValue(std::string name, std::unique_ptr<Graph> v) {
  CHECK(v != nullptr);
  return Attr(std::move(name), onnx::AttributeProto::GRAPH, std::move(v));
}
Attr Attr::SparseTensorValue(std::string name, SparseTensor v) {
  return Attr(std::move(name), onnx::AttributeProto::SPARSE_TENSOR,
              std::make_unique<SparseTensor>(std::move(v)));
}
Attr Attr::TypeValue(std::string name, Type v) {
  return Attr(std::move(name), onnx::AttributeProto::TYPE_PROTO,
              std::make_unique<Type>(std::move(v)));
}
Attr Attr::Floats(std::string name, std::vector<float> v) {
  return Attr(std::move(name), onnx::AttributeProto::FLOATS, std::move(v));
}
Attr Attr::Ints(std::string name, std::vector<int64_t> v) {
  return Attr(std::move(name), onnx::AttributeProto::INTS, std::move(v));
}
Attr Attr::Strings(std::string name, std::vector<std::string> v) {
  return Attr(std::move(name), onnx::AttributeProto::STRINGS, std::move(v));
}
Attr Attr::Tensors(std::string name, std::vector<Tensor> v) {
  return Attr(std::move(name), onnx::AttributeProto::TENSORS, std::move(v));
}
Attr Attr::Graphs(std::string name, std::vector<std::unique_ptr<Graph>> v) {
  return Attr(std::move(name), onnx::AttributeProto::GRAPHS, std::move(v));
}
Attr Attr::SparseTensors(std::string name, std::vector<SparseTensor> v) {
  return Attr(std::move(name), onnx::AttributeProto::SPARSE_TENSORS,
              std::move(v));
}
Attr Attr::Types(std::string name, std::vector<Type> v) {
  return Attr(std::move(name), onnx::AttributeProto::TYPE_PROTOS, std::move(v));
}
Attr Attr::Ref(std::string name, AttrType type, std::string ref_attr_name) {
  Attr a(std::move(name), type, std::monostate());
  a.ref_attr_name_ = std::move(ref_attr_name);
  return a;
}

namespace {
template <typename T, typename V>
const T& GetPayload(const V& v, const std::string& name, const char* kind) {
  const T* p = std::get_if<T>(&v);
  CHECK(p != nullptr) << "attribute '" << name << "' is not of kind " << kind;
  return *p;
}
}  // namespace

float Attr::f() const { return GetPayload<float>(value_, name_, "FLOAT"); }
int64_t Attr::i() const { return GetPayload<int64_t>(value_, name_, "INT"); }
const std::string& Attr::s() const {
  return GetPayload<std::string>(value_, name_, "STRING");
}
const Tensor& Attr::t() const {
  return *GetPayload<std::unique_ptr<Tensor>>(value_, name_, "TENSOR");
}
Graph* Attr::g() const {
  return GetPayload<std::unique_ptr<Graph>>(value_, name_, "GRAPH").get();
}
const SparseTensor& Attr::sparse_tensor() const {
  return *GetPayload<std::unique_ptr<SparseTensor>>(value_, name_,
                                                    "SPARSE_TENSOR");
}
const Type& Attr::tp() const {
  return *GetPayload<std::unique_ptr<Type>>(value_, name_, "TYPE_PROTO");
}
const std::vector<float>& Attr::floats() const {
  return GetPayload<std::vector<float>>(value_, name_, "FLOATS");
}
const std::vector<int64_t>& Attr::ints() const {
  return GetPayload<std::vector<int64_t>>(value_, name_, "INTS");
}
const std::vector<std::string>& Attr::strings() const {
  return GetPayload<std::vector<std::string>>(value_, name_, "STRINGS");
}
const std::vector<Tensor>& Attr::tensors() const {
  return GetPayload<std::vector<Tensor>>(value_, name_, "TENSORS");
}
const std::vector<std::unique_ptr<Graph>>& Attr::graphs() const {
  return GetPayload<std::vector<std::unique_ptr<Graph>>>(value_, name_,
                                                         "GRAPHS");
}
const std::vector<SparseTensor>& Attr::sparse_tensors() const {
  return GetPayload<std::vector<SparseTensor>>(value_, name_, "SPARSE_TENSORS");
}
const std::vector<Type>& Attr::types() const {
  return GetPayload<std::vector<Type>>(value_, name_, "TYPE_PROTOS");
}

bool Attr::holds_graphs() const {
  return std::holds_alternative<std::unique_ptr<Graph>>(value_) ||
         std::holds_alternative<std::vector<std::unique_ptr<Graph>>>(value_);
}

std::vector<Graph*> Attr::Subgraphs() const {
  std::vector<Graph*> out;
  AppendSubgraphs(&out);
  return out;
}

void Attr::AppendSubgraphs(std::vector<Graph*>* out) const {
  if (auto* g = std::get_if<std::unique_ptr<Graph>>(&value_)) {
    out->push_back(g->get());
  } else if (auto* gs =
                 std::get_if<std::vector<std::unique_ptr<Graph>>>(&value_)) {
    for (const auto& sub : *gs) out->push_back(sub.get());
  }
}

}  // namespace jax2onnx::ir
