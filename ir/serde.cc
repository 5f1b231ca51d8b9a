// IR <-> onnx::ModelProto. Import resolves names through a stack of scopes
// (one per graph nesting level) so subgraph nodes bind to outer values;
// nodes are created first and connected second, so a proto whose nodes are
// not topologically sorted still imports (the verifier reports it).
#include "ir/serde.h"

#include <cstring>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace jax2onnx::ir {
namespace {

using onnx::AttributeProto;
using onnx::TensorProto;

// ------------------------------------------------------------ tensors

template <typename Dst, typename Field>
std::string PackAs(const Field& field, int64_t expected) {
  std::string bytes(static_cast<size_t>(expected) * sizeof(Dst), '\0');
  char* out = bytes.data();
  for (int64_t k = 0; k < expected; ++k) {
    Dst v = static_cast<Dst>(field.Get(static_cast<int>(k)));
    std::memcpy(out + k * sizeof(Dst), &v, sizeof(Dst));
  }
  return bytes;
}

template <typename Src, typename Field>
void UnpackTo(absl::string_view bytes, Field* field) {
  size_t n = bytes.size() / sizeof(Src);
  field->Reserve(static_cast<int>(n));
  for (size_t k = 0; k < n; ++k) {
    Src v;
    std::memcpy(&v, bytes.data() + k * sizeof(Src), sizeof(Src));
    field->Add(v);
  }
}

absl::StatusOr<Tensor> ImportTensor(const TensorProto& proto,
                                    std::string* steal_raw) {
  auto where = [&proto]() {
    return absl::StrCat("tensor '", proto.name(), "'");
  };
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), " has negative dim ", d));
    }
    n *= d;
  }
  int dtype = proto.data_type();
  Tensor t;
  if (proto.external_data_size() > 0 ||
      proto.data_location() == TensorProto::EXTERNAL) {
    std::vector<std::pair<std::string, std::string>> loc;
    for (const auto& e : proto.external_data()) {
      loc.emplace_back(e.key(), e.value());
    }
    t = Tensor::External(dtype, std::move(dims), std::move(loc));
  } else if (dtype == TensorProto::STRING) {
    if (proto.string_data_size() != n) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), " has ", proto.string_data_size(),
                       " strings for ", n, " elements"));
    }
    t = Tensor::Strings(std::move(dims),
                        std::vector<std::string>(proto.string_data().begin(),
                                                 proto.string_data().end()));
    t.set_encoding(Tensor::Encoding::kTyped);
  } else {
    int size = DataTypeSize(dtype);
    if (size == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), " has unsupported data_type ", dtype));
    }
    if (proto.has_raw_data()) {
      if (static_cast<int64_t>(proto.raw_data().size()) != n * size) {
        return absl::InvalidArgumentError(
            absl::StrCat(where(), " has ", proto.raw_data().size(),
                         " raw bytes, expected ", n * size, " for ",
                         DataTypeShortName(dtype), " with ", n, " elements"));
      }
      std::string bytes;
      if (steal_raw != nullptr) {
        bytes.swap(*steal_raw);
      } else {
        bytes = proto.raw_data();
      }
      t = Tensor(dtype, std::move(dims), std::move(bytes));
    } else {
      int64_t count = 0;
      std::string bytes;
      int64_t per =
          (dtype == TensorProto::COMPLEX64 || dtype == TensorProto::COMPLEX128)
              ? 2
              : 1;
      switch (dtype) {
        case TensorProto::FLOAT:
        case TensorProto::COMPLEX64:
          count = proto.float_data_size();
          if (count == n * per)
            bytes = PackAs<float>(proto.float_data(), count);
          break;
        case TensorProto::DOUBLE:
        case TensorProto::COMPLEX128:
          count = proto.double_data_size();
          if (count == n * per)
            bytes = PackAs<double>(proto.double_data(), count);
          break;
        case TensorProto::INT64:
          count = proto.int64_data_size();
          if (count == n) bytes = PackAs<int64_t>(proto.int64_data(), count);
          break;
        case TensorProto::UINT32:
          count = proto.uint64_data_size();
          if (count == n) bytes = PackAs<uint32_t>(proto.uint64_data(), count);
          break;
        case TensorProto::UINT64:
          count = proto.uint64_data_size();
          if (count == n) bytes = PackAs<uint64_t>(proto.uint64_data(), count);
          break;
        case TensorProto::INT32:
          count = proto.int32_data_size();
          if (count == n) bytes = PackAs<int32_t>(proto.int32_data(), count);
          break;
        case TensorProto::INT16:
          count = proto.int32_data_size();
          if (count == n) bytes = PackAs<int16_t>(proto.int32_data(), count);
          break;
        case TensorProto::INT8:
          count = proto.int32_data_size();
          if (count == n) bytes = PackAs<int8_t>(proto.int32_data(), count);
          break;
        case TensorProto::UINT16:
        case TensorProto::FLOAT16:
        case TensorProto::BFLOAT16:
          count = proto.int32_data_size();
          if (count == n) bytes = PackAs<uint16_t>(proto.int32_data(), count);
          break;
        case TensorProto::UINT8:
        case TensorProto::BOOL:
          count = proto.int32_data_size();
          if (count == n) bytes = PackAs<uint8_t>(proto.int32_data(), count);
          break;
        default:
          return absl::InvalidArgumentError(
              absl::StrCat(where(), " has unsupported data_type ", dtype));
      }
      if (count != n * per) {
        return absl::InvalidArgumentError(absl::StrCat(
            where(), " has ", count, " typed values, expected ", n * per,
            " for ", DataTypeShortName(dtype), " with ", n, " elements"));
      }
      t = Tensor(dtype, std::move(dims), std::move(bytes));
      t.set_encoding(Tensor::Encoding::kTyped);
    }
  }
  t.set_name(proto.name());
  t.set_write_empty_name(proto.has_name() && proto.name().empty());
  t.set_doc_string(proto.doc_string());
  if (proto.has_data_location()) t.set_data_location(proto.data_location());
  return t;
}

// Everything but the data.
void ExportTensorHeader(const Tensor& t, TensorProto* proto) {
  for (int64_t d : t.dims()) proto->add_dims(d);
  proto->set_data_type(t.dtype());
  if (!t.name().empty() || t.write_empty_name()) proto->set_name(t.name());
  if (!t.doc_string().empty()) proto->set_doc_string(t.doc_string());
}

void ExportTensor(const Tensor& t, TensorProto* proto) {
  ExportTensorHeader(t, proto);
  if (t.data_location() >= 0) {
    proto->set_data_location(
        static_cast<TensorProto::DataLocation>(t.data_location()));
  }
  if (t.is_external()) {
    for (const auto& [k, v] : t.external_data()) {
      auto* e = proto->add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
    return;
  }
  if (t.is_string()) {
    for (const std::string& s : t.strings()) proto->add_string_data(s);
    return;
  }
  absl::string_view b = t.bytes();
  if (t.encoding() == Tensor::Encoding::kRaw) {
    proto->set_raw_data(b.data(), b.size());
    return;
  }
  switch (t.dtype()) {
    case TensorProto::FLOAT:
    case TensorProto::COMPLEX64:
      UnpackTo<float>(b, proto->mutable_float_data());
      break;
    case TensorProto::DOUBLE:
    case TensorProto::COMPLEX128:
      UnpackTo<double>(b, proto->mutable_double_data());
      break;
    case TensorProto::INT64:
      UnpackTo<int64_t>(b, proto->mutable_int64_data());
      break;
    case TensorProto::UINT32:
      UnpackTo<uint32_t>(b, proto->mutable_uint64_data());
      break;
    case TensorProto::UINT64:
      UnpackTo<uint64_t>(b, proto->mutable_uint64_data());
      break;
    case TensorProto::INT32:
      UnpackTo<int32_t>(b, proto->mutable_int32_data());
      break;
    case TensorProto::INT16:
      UnpackTo<int16_t>(b, proto->mutable_int32_data());
      break;
    case TensorProto::INT8:
      UnpackTo<int8_t>(b, proto->mutable_int32_data());
      break;
    case TensorProto::UINT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      UnpackTo<uint16_t>(b, proto->mutable_int32_data());
      break;
    case TensorProto::UINT8:
    case TensorProto::BOOL:
      UnpackTo<uint8_t>(b, proto->mutable_int32_data());
      break;
    default:
      proto->set_raw_data(b.data(), b.size());
      break;
  }
}

absl::StatusOr<SparseTensor> ImportSparse(const onnx::SparseTensorProto& p) {
  SparseTensor s;
  auto values = ImportTensor(p.values(), nullptr);
  if (!values.ok()) return values.status();
  auto indices = ImportTensor(p.indices(), nullptr);
  if (!indices.ok()) return indices.status();
  s.values = *std::move(values);
  s.indices = *std::move(indices);
  s.dims.assign(p.dims().begin(), p.dims().end());
  return s;
}

void ExportSparse(const SparseTensor& s, onnx::SparseTensorProto* p) {
  ExportTensor(s.values, p->mutable_values());
  ExportTensor(s.indices, p->mutable_indices());
  for (int64_t d : s.dims) p->add_dims(d);
}

// ------------------------------------------------------------ types

Shape ImportShape(const onnx::TensorShapeProto& proto) {
  std::vector<Dim> dims;
  dims.reserve(proto.dim_size());
  for (const auto& d : proto.dim()) {
    Dim dim;
    if (d.has_dim_value()) {
      dim = Dim(d.dim_value());
    } else if (d.has_dim_param()) {
      dim = Dim(d.dim_param());
    }
    if (d.has_denotation()) dim.set_denotation(d.denotation());
    dims.push_back(std::move(dim));
  }
  return Shape(std::move(dims));
}

void ExportShape(const Shape& shape, onnx::TensorShapeProto* proto) {
  for (const Dim& d : shape.dims()) {
    auto* dim = proto->add_dim();
    if (d.is_value()) {
      dim->set_dim_value(d.value());
    } else if (d.is_param()) {
      dim->set_dim_param(d.param());
    }
    if (!d.denotation().empty()) dim->set_denotation(d.denotation());
  }
}

absl::StatusOr<Type> ImportType(const onnx::TypeProto& proto) {
  Type t;
  switch (proto.value_case()) {
    case onnx::TypeProto::kTensorType: {
      const auto& tt = proto.tensor_type();
      t = Type::Tensor(tt.elem_type());
      if (tt.has_shape()) t.mutable_shape() = ImportShape(tt.shape());
      break;
    }
    case onnx::TypeProto::kSparseTensorType: {
      const auto& tt = proto.sparse_tensor_type();
      t = Type::SparseTensor(tt.elem_type());
      if (tt.has_shape()) t.mutable_shape() = ImportShape(tt.shape());
      break;
    }
    case onnx::TypeProto::kSequenceType: {
      if (!proto.sequence_type().has_elem_type()) {
        return absl::InvalidArgumentError("sequence type without elem_type");
      }
      auto elem = ImportType(proto.sequence_type().elem_type());
      if (!elem.ok()) return elem.status();
      t = Type::Sequence(*std::move(elem));
      break;
    }
    case onnx::TypeProto::kOptionalType: {
      if (!proto.optional_type().has_elem_type()) {
        return absl::InvalidArgumentError("optional type without elem_type");
      }
      auto elem = ImportType(proto.optional_type().elem_type());
      if (!elem.ok()) return elem.status();
      t = Type::Optional(*std::move(elem));
      break;
    }
    case onnx::TypeProto::kMapType: {
      if (!proto.map_type().has_value_type()) {
        return absl::InvalidArgumentError("map type without value_type");
      }
      auto value = ImportType(proto.map_type().value_type());
      if (!value.ok()) return value.status();
      t = Type::Map(proto.map_type().key_type(), *std::move(value));
      break;
    }
    default:
      t = Type::None();
      break;
  }
  if (proto.has_denotation()) t.set_denotation(proto.denotation());
  return t;
}

void ExportType(const Type& t, onnx::TypeProto* proto) {
  switch (t.kind()) {
    case Type::Kind::kTensor: {
      auto* tt = proto->mutable_tensor_type();
      if (t.elem_type() != TensorProto::UNDEFINED) {
        tt->set_elem_type(t.elem_type());
      }
      if (t.shape()) ExportShape(*t.shape(), tt->mutable_shape());
      break;
    }
    case Type::Kind::kSparseTensor: {
      auto* tt = proto->mutable_sparse_tensor_type();
      if (t.elem_type() != TensorProto::UNDEFINED) {
        tt->set_elem_type(t.elem_type());
      }
      if (t.shape()) ExportShape(*t.shape(), tt->mutable_shape());
      break;
    }
    case Type::Kind::kSequence:
      ExportType(*t.element(),
                 proto->mutable_sequence_type()->mutable_elem_type());
      break;
    case Type::Kind::kOptional:
      ExportType(*t.element(),
                 proto->mutable_optional_type()->mutable_elem_type());
      break;
    case Type::Kind::kMap:
      proto->mutable_map_type()->set_key_type(t.key_type());
      ExportType(*t.element(), proto->mutable_map_type()->mutable_value_type());
      break;
    case Type::Kind::kNone:
      break;
  }
  if (!t.denotation().empty()) proto->set_denotation(t.denotation());
}

// ------------------------------------------------------------ graphs

class Importer {
 public:
  explicit Importer(bool steal) : steal_(steal) {}

  absl::Status ImportGraph(const onnx::GraphProto& gp, Graph* g) {
    g->set_name(gp.name());
    g->set_doc_string(gp.doc_string());
    scopes_.emplace_back();
    absl::Status s = ImportGraphBody(gp, g);
    scopes_.pop_back();
    return s;
  }

  absl::Status ImportFunction(const onnx::FunctionProto& fp, Function* f) {
    f->set_doc_string(fp.doc_string());
    for (const auto& a : fp.attribute()) f->attributes().push_back(a);
    for (const auto& o : fp.opset_import()) {
      f->opset_imports().push_back(
          OpsetImport{o.domain(), o.version(), !o.has_domain()});
    }
    Graph& g = f->body();
    scopes_.emplace_back();
    absl::Status s = [&]() -> absl::Status {
      for (const std::string& in : fp.input()) {
        Value* v = g.AddInput(in);
        if (absl::Status s = Define(in, v, g); !s.ok()) return s;
      }
      if (absl::Status s = ImportNodes(fp.node(), &g); !s.ok()) return s;
      for (const std::string& out : fp.output()) {
        Value* v = Lookup(out);
        if (v == nullptr) {
          return absl::InvalidArgumentError(absl::StrCat(
              "function '", fp.name(), "': output '", out, "' is not defined"));
        }
        g.AddOutput(v);
      }
      return absl::OkStatus();
    }();
    scopes_.pop_back();
    return s;
  }

 private:
  absl::Status Define(const std::string& name, Value* v, const Graph& g) {
    if (name.empty()) return absl::OkStatus();
    if (!scopes_.back().emplace(name, v).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "graph '", g.name(), "': value '", name, "' is defined twice"));
    }
    return absl::OkStatus();
  }

  Value* Lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end()) return found->second;
    }
    return nullptr;
  }

  absl::Status ImportGraphBody(const onnx::GraphProto& gp, Graph* g) {
    for (const auto& vi : gp.input()) {
      std::optional<Type> type;
      if (vi.has_type()) {
        auto t = ImportType(vi.type());
        if (!t.ok()) return Annotate(t.status(), vi.name());
        type = *std::move(t);
      }
      Value* v = g->AddInput(vi.name(), std::move(type));
      v->set_doc_string(vi.doc_string());
      if (absl::Status s = Define(vi.name(), v, *g); !s.ok()) return s;
    }
    for (const TensorProto& tp : gp.initializer()) {
      auto t =
          ImportTensor(tp, steal_ && tp.has_raw_data()
                               ? const_cast<TensorProto&>(tp).mutable_raw_data()
                               : nullptr);
      if (!t.ok()) return t.status();
      auto tensor = std::make_shared<Tensor>(*std::move(t));
      // The initializer's name is the value's name; keep the tensor nameless
      // so there is one source of truth.
      tensor->set_name("");
      auto found = scopes_.back().find(tp.name());
      if (found != scopes_.back().end() && found->second->is_graph_input() &&
          !found->second->is_initializer()) {
        if (absl::Status s = g->SetInputDefault(found->second, tensor);
            !s.ok()) {
          return s;
        }
        continue;
      }
      auto v = g->AddInitializer(tp.name(), tensor);
      if (!v.ok()) return v.status();
      if (absl::Status s = Define(tp.name(), *v, *g); !s.ok()) return s;
    }
    for (const auto& sp : gp.sparse_initializer()) {
      auto s = ImportSparse(sp);
      if (!s.ok()) return s.status();
      g->sparse_initializers().push_back(*std::move(s));
    }
    if (absl::Status s = ImportNodes(gp.node(), g); !s.ok()) return s;
    for (const auto& vi : gp.value_info()) {
      auto found = scopes_.back().find(vi.name());
      if (found == scopes_.back().end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph '", g->name(), "': value_info '", vi.name(),
                         "' names no value of this graph"));
      }
      Value* v = found->second;
      if (v->producer() == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            "graph '", g->name(), "': value_info '", vi.name(),
            "' describes a graph input or initializer (not representable)"));
      }
      if (vi.has_type()) {
        auto t = ImportType(vi.type());
        if (!t.ok()) return Annotate(t.status(), vi.name());
        v->SetType(*std::move(t));
      }
      v->set_doc_string(vi.doc_string());
    }
    for (const auto& vi : gp.output()) {
      Value* v = Lookup(vi.name());
      if (v == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("graph '", g->name(),
                                                       "': output '", vi.name(),
                                                       "' is not defined"));
      }
      std::optional<Type> type;
      if (vi.has_type()) {
        auto t = ImportType(vi.type());
        if (!t.ok()) return Annotate(t.status(), vi.name());
        type = *std::move(t);
      }
      if (v->type() == nullptr) {
        v->SetType(std::move(type));
      } else if (!type || *type != *v->type()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "graph '", g->name(), "': output '", vi.name(),
            "' is declared with a type that differs from its definition"));
      }
      if (v->doc_string().empty()) v->set_doc_string(vi.doc_string());
      g->AddOutput(v);
    }
    return absl::OkStatus();
  }

  static absl::Status Annotate(const absl::Status& s, const std::string& name) {
    return absl::Status(s.code(),
                        absl::StrCat("value '", name, "': ", s.message()));
  }

  absl::Status ImportNodes(
      const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
      Graph* g) {
    std::vector<Node*> created;
    created.reserve(nodes.size());
    for (const auto& np : nodes) {
      Node* n = g->Append(Node::Create(
          np.domain(), np.op_type(), {},
          std::vector<std::string>(np.output().begin(), np.output().end()), {},
          np.name()));
      n->set_doc_string(np.doc_string());
      n->set_write_empty_domain(np.has_domain() && np.domain().empty());
      for (int i = 0; i < n->num_outputs(); ++i) {
        if (absl::Status s = Define(np.output(i), n->output(i), *g); !s.ok()) {
          return s;
        }
      }
      created.push_back(n);
    }
    for (int k = 0; k < nodes.size(); ++k) {
      const auto& np = nodes[k];
      Node* n = created[k];
      for (int i = 0; i < np.input_size(); ++i) {
        const std::string& name = np.input(i);
        Value* v = nullptr;
        if (!name.empty()) {
          v = Lookup(name);
          if (v == nullptr) {
            return absl::InvalidArgumentError(absl::StrCat(
                "graph '", g->name(), "': node '", np.name(), "' (",
                np.op_type(), ") input ", i, " '", name,
                "' is not defined in this graph or an enclosing one"));
          }
        }
        n->AppendInput(v);
      }
      for (const auto& ap : np.attribute()) {
        auto a = ImportAttr(ap);
        if (!a.ok()) {
          return absl::Status(
              a.status().code(),
              absl::StrCat("node '", np.name(), "' (", np.op_type(),
                           ") attribute '", ap.name(),
                           "': ", a.status().message()));
        }
        n->SetAttr(*std::move(a));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Graph>> ImportSubgraph(
      const onnx::GraphProto& gp) {
    auto g = std::make_unique<Graph>();
    if (absl::Status s = ImportGraph(gp, g.get()); !s.ok()) return s;
    return g;
  }

  absl::StatusOr<Attr> ImportAttr(const AttributeProto& ap) {
    Attr a;
    if (!ap.ref_attr_name().empty()) {
      a = Attr::Ref(ap.name(), ap.type(), ap.ref_attr_name());
    } else {
      switch (ap.type()) {
        case AttributeProto::FLOAT:
          a = Attr::Float(ap.name(), ap.f());
          break;
        case AttributeProto::INT:
          a = Attr::Int(ap.name(), ap.i());
          break;
        case AttributeProto::STRING:
          a = Attr::String(ap.name(), ap.s());
          break;
        case AttributeProto::TENSOR: {
          auto t = ImportTensor(ap.t(), nullptr);
          if (!t.ok()) return t.status();
          a = Attr::TensorValue(ap.name(), *std::move(t));
          break;
        }
        case AttributeProto::GRAPH: {
          auto g = ImportSubgraph(ap.g());
          if (!g.ok()) return g.status();
          a = Attr::GraphValue(ap.name(), *std::move(g));
          break;
        }
        case AttributeProto::SPARSE_TENSOR: {
          auto s = ImportSparse(ap.sparse_tensor());
          if (!s.ok()) return s.status();
          a = Attr::SparseTensorValue(ap.name(), *std::move(s));
          break;
        }
        case AttributeProto::TYPE_PROTO: {
          auto t = ImportType(ap.tp());
          if (!t.ok()) return t.status();
          a = Attr::TypeValue(ap.name(), *std::move(t));
          break;
        }
        case AttributeProto::FLOATS:
          a = Attr::Floats(ap.name(), std::vector<float>(ap.floats().begin(),
                                                         ap.floats().end()));
          break;
        case AttributeProto::INTS:
          a = Attr::Ints(ap.name(), std::vector<int64_t>(ap.ints().begin(),
                                                         ap.ints().end()));
          break;
        case AttributeProto::STRINGS:
          a = Attr::Strings(ap.name(),
                            std::vector<std::string>(ap.strings().begin(),
                                                     ap.strings().end()));
          break;
        case AttributeProto::TENSORS: {
          std::vector<Tensor> ts;
          for (const auto& tp : ap.tensors()) {
            auto t = ImportTensor(tp, nullptr);
            if (!t.ok()) return t.status();
            ts.push_back(*std::move(t));
          }
          a = Attr::Tensors(ap.name(), std::move(ts));
          break;
        }
        case AttributeProto::GRAPHS: {
          std::vector<std::unique_ptr<Graph>> gs;
          for (const auto& gp : ap.graphs()) {
            auto g = ImportSubgraph(gp);
            if (!g.ok()) return g.status();
            gs.push_back(*std::move(g));
          }
          a = Attr::Graphs(ap.name(), std::move(gs));
          break;
        }
        case AttributeProto::SPARSE_TENSORS: {
          std::vector<SparseTensor> ss;
          for (const auto& sp : ap.sparse_tensors()) {
            auto s = ImportSparse(sp);
            if (!s.ok()) return s.status();
            ss.push_back(*std::move(s));
          }
          a = Attr::SparseTensors(ap.name(), std::move(ss));
          break;
        }
        case AttributeProto::TYPE_PROTOS: {
          std::vector<Type> ts;
          for (const auto& tp : ap.type_protos()) {
            auto t = ImportType(tp);
            if (!t.ok()) return t.status();
            ts.push_back(*std::move(t));
          }
          a = Attr::Types(ap.name(), std::move(ts));
          break;
        }
        default:
          return absl::InvalidArgumentError(
              absl::StrCat("unsupported attribute type ", ap.type()));
      }
    }
    a.set_doc_string(ap.doc_string());
    return a;
  }

  bool steal_;
  std::vector<absl::flat_hash_map<std::string, Value*>> scopes_;
};

void ExportValueInfo(const Value& v, onnx::ValueInfoProto* vi) {
  vi->set_name(v.name());
  if (v.type() != nullptr) ExportType(*v.type(), vi->mutable_type());
  if (!v.doc_string().empty()) vi->set_doc_string(v.doc_string());
}

void ExportGraph(const Graph& g, onnx::GraphProto* gp,
                 const DeferInitializerData* defer = nullptr);

void ExportAttr(const Attr& a, AttributeProto* ap) {
  ap->set_name(a.name());
  if (!a.doc_string().empty()) ap->set_doc_string(a.doc_string());
  ap->set_type(a.type());
  if (a.is_ref()) {
    ap->set_ref_attr_name(a.ref_attr_name());
    return;
  }
  switch (a.type()) {
    case AttributeProto::FLOAT:
      ap->set_f(a.f());
      break;
    case AttributeProto::INT:
      ap->set_i(a.i());
      break;
    case AttributeProto::STRING:
      ap->set_s(a.s());
      break;
    case AttributeProto::TENSOR:
      ExportTensor(a.t(), ap->mutable_t());
      break;
    case AttributeProto::GRAPH:
      ExportGraph(*a.g(), ap->mutable_g());
      break;
    case AttributeProto::SPARSE_TENSOR:
      ExportSparse(a.sparse_tensor(), ap->mutable_sparse_tensor());
      break;
    case AttributeProto::TYPE_PROTO:
      ExportType(a.tp(), ap->mutable_tp());
      break;
    case AttributeProto::FLOATS:
      for (float f : a.floats()) ap->add_floats(f);
      break;
    case AttributeProto::INTS:
      for (int64_t i : a.ints()) ap->add_ints(i);
      break;
    case AttributeProto::STRINGS:
      for (const std::string& s : a.strings()) ap->add_strings(s);
      break;
    case AttributeProto::TENSORS:
      for (const Tensor& t : a.tensors()) ExportTensor(t, ap->add_tensors());
      break;
    case AttributeProto::GRAPHS:
      for (const auto& g : a.graphs()) ExportGraph(*g, ap->add_graphs());
      break;
    case AttributeProto::SPARSE_TENSORS:
      for (const SparseTensor& s : a.sparse_tensors()) {
        ExportSparse(s, ap->add_sparse_tensors());
      }
      break;
    case AttributeProto::TYPE_PROTOS:
      for (const Type& t : a.types()) ExportType(t, ap->add_type_protos());
      break;
    default:
      break;
  }
}

void ExportNode(const Node& n, onnx::NodeProto* np) {
  for (Value* in : n.inputs()) {
    np->add_input(in != nullptr ? in->name() : std::string());
  }
  for (int i = 0; i < n.num_outputs(); ++i) {
    np->add_output(n.output(i)->name());
  }
  if (!n.name().empty()) np->set_name(n.name());
  np->set_op_type(n.op_type());
  if (!n.domain().empty() || n.write_empty_domain()) {
    np->set_domain(n.domain());
  }
  for (const Attr& a : n.attributes()) ExportAttr(a, np->add_attribute());
  if (!n.doc_string().empty()) np->set_doc_string(n.doc_string());
}

// Intermediate values with a known type, in node order.
void ExportValueInfos(
    const Graph& g,
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* out) {
  for (const Node* n : g.nodes()) {
    for (int i = 0; i < n->num_outputs(); ++i) {
      const Value* v = n->output(i);
      if (v->name().empty()) continue;
      if (v->type() == nullptr && v->doc_string().empty()) continue;
      bool is_own_output = false;
      for (const Graph* og : v->output_of()) is_own_output |= og == &g;
      if (is_own_output) continue;
      ExportValueInfo(*v, out->Add());
    }
  }
}

void ExportGraph(const Graph& g, onnx::GraphProto* gp,
                 const DeferInitializerData* defer) {
  for (const Node* n : g.nodes()) ExportNode(*n, gp->add_node());
  if (!g.name().empty()) gp->set_name(g.name());
  for (const Value* v : g.initializers()) {
    TensorProto* tp = gp->add_initializer();
    const Tensor& t = *v->const_value();
    if (defer != nullptr && !t.is_external() && !t.is_string() &&
        t.data_location() < 0 && (*defer)(t, tp)) {
      ExportTensorHeader(t, tp);
    } else {
      ExportTensor(t, tp);
    }
    tp->set_name(v->name());
  }
  for (const SparseTensor& s : g.sparse_initializers()) {
    ExportSparse(s, gp->add_sparse_initializer());
  }
  if (!g.doc_string().empty()) gp->set_doc_string(g.doc_string());
  for (const Value* v : g.inputs()) ExportValueInfo(*v, gp->add_input());
  for (const Value* v : g.outputs()) ExportValueInfo(*v, gp->add_output());
  ExportValueInfos(g, gp->mutable_value_info());
}

void ExportFunction(const Function& f, onnx::FunctionProto* fp) {
  fp->set_name(f.name());
  for (const Value* v : f.body().inputs()) fp->add_input(v->name());
  for (const Value* v : f.body().outputs()) fp->add_output(v->name());
  for (const std::string& a : f.attributes()) fp->add_attribute(a);
  // A FunctionProto has no initializers: constants of the body (the
  // converter and the optimizer keep them as initializers of the body
  // graph) are written as Constant nodes ahead of the body's nodes.
  for (const Value* v : f.body().initializers()) {
    onnx::NodeProto* np = fp->add_node();
    np->add_output(v->name());
    np->set_op_type("Constant");
    AttributeProto* ap = np->add_attribute();
    ap->set_name("value");
    ap->set_type(AttributeProto::TENSOR);
    ExportTensor(*v->const_value(), ap->mutable_t());
  }
  for (const Node* n : f.body().nodes()) ExportNode(*n, fp->add_node());
  if (!f.doc_string().empty()) fp->set_doc_string(f.doc_string());
  for (const OpsetImport& o : f.opset_imports()) {
    auto* op = fp->add_opset_import();
    if (!o.domain.empty() || !o.omit_empty_domain) op->set_domain(o.domain);
    op->set_version(o.version);
  }
  if (!f.domain().empty()) fp->set_domain(f.domain());
}

absl::StatusOr<Model> Import(const onnx::ModelProto& proto, bool steal) {
  if (proto.training_info_size() > 0) {
    return absl::UnimplementedError(
        "ModelProto.training_info is not supported by the IR");
  }
  Model model;
  model.set_ir_version(proto.ir_version());
  for (const auto& o : proto.opset_import()) {
    model.opset_imports().push_back(
        OpsetImport{o.domain(), o.version(), !o.has_domain()});
  }
  model.set_producer_name(proto.producer_name());
  model.set_producer_version(proto.producer_version());
  model.set_domain(proto.domain());
  model.set_model_version(proto.model_version());
  model.set_doc_string(proto.doc_string());
  for (const auto& kv : proto.metadata_props()) {
    model.metadata_props().emplace_back(kv.key(), kv.value());
  }
  Importer importer(steal);
  if (absl::Status s = importer.ImportGraph(proto.graph(), &model.graph());
      !s.ok()) {
    return s;
  }
  for (const auto& fp : proto.functions()) {
    auto f = std::make_unique<Function>(fp.domain(), fp.name());
    if (absl::Status s = importer.ImportFunction(fp, f.get()); !s.ok()) {
      return s;
    }
    if (auto added = model.AddFunction(std::move(f)); !added.ok()) {
      return added.status();
    }
  }
  return model;
}

}  // namespace

onnx::ModelProto ToProto(const Model& model) {
  return ToProto(model, DeferInitializerData());
}

onnx::ModelProto ToProto(const Model& model,
                         const DeferInitializerData& defer) {
  onnx::ModelProto proto;
  if (model.ir_version() != 0) proto.set_ir_version(model.ir_version());
  for (const OpsetImport& o : model.opset_imports()) {
    auto* op = proto.add_opset_import();
    if (!o.domain.empty() || !o.omit_empty_domain) op->set_domain(o.domain);
    op->set_version(o.version);
  }
  if (!model.producer_name().empty()) {
    proto.set_producer_name(model.producer_name());
  }
  if (!model.producer_version().empty()) {
    proto.set_producer_version(model.producer_version());
  }
  if (!model.domain().empty()) proto.set_domain(model.domain());
  if (model.model_version() != 0) {
    proto.set_model_version(model.model_version());
  }
  if (!model.doc_string().empty()) proto.set_doc_string(model.doc_string());
  ExportGraph(model.graph(), proto.mutable_graph(), defer ? &defer : nullptr);
  for (const auto& [k, v] : model.metadata_props()) {
    auto* kv = proto.add_metadata_props();
    kv->set_key(k);
    kv->set_value(v);
  }
  for (const Function* f : model.functions()) {
    ExportFunction(*f, proto.add_functions());
  }
  return proto;
}

absl::StatusOr<Model> FromProto(const onnx::ModelProto& proto) {
  return Import(proto, /*steal=*/false);
}

absl::StatusOr<Model> FromProto(onnx::ModelProto&& proto) {
  return Import(proto, /*steal=*/true);
}

onnx::TensorProto TensorToProto(const Tensor& tensor) {
  onnx::TensorProto proto;
  ExportTensor(tensor, &proto);
  return proto;
}

absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto) {
  return ImportTensor(proto, nullptr);
}

onnx::TypeProto TypeToProto(const Type& type) {
  onnx::TypeProto proto;
  ExportType(type, &proto);
  return proto;
}

absl::StatusOr<Type> TypeFromProto(const onnx::TypeProto& proto) {
  return ImportType(proto);
}

std::string SerializeDeterministic(const google::protobuf::MessageLite& msg) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    msg.SerializeToCodedStream(&coded);
  }
  return out;
}

}  // namespace jax2onnx::ir
