// The IR text printer.
#include "ir/printer.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ir/float16.h"

namespace jax2onnx::ir {
namespace {

constexpr int64_t kMaxShownElements = 16;
constexpr int64_t kHeadElements = 8;

template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// A float element: six significant digits for reading, or enough to read
// back the same value (`exact`).
std::string Real(double v, bool exact, bool is_double) {
  if (!exact) return absl::StrCat(v);
  return is_double ? absl::StrFormat("%.17g", v) : absl::StrFormat("%.9g", v);
}

std::string Element(int dtype, const char* p, bool exact) {
  switch (dtype) {
    case onnx::TensorProto::FLOAT:
      return Real(Load<float>(p), exact, false);
    case onnx::TensorProto::DOUBLE:
      return Real(Load<double>(p), exact, true);
    case onnx::TensorProto::FLOAT16:
      return Real(HalfToFloat(Load<uint16_t>(p)), exact, false);
    case onnx::TensorProto::BFLOAT16:
      return Real(BFloat16ToFloat(Load<uint16_t>(p)), exact, false);
    case onnx::TensorProto::INT8:
      return absl::StrCat(Load<int8_t>(p));
    case onnx::TensorProto::INT16:
      return absl::StrCat(Load<int16_t>(p));
    case onnx::TensorProto::INT32:
      return absl::StrCat(Load<int32_t>(p));
    case onnx::TensorProto::INT64:
      return absl::StrCat(Load<int64_t>(p));
    case onnx::TensorProto::UINT8:
      return absl::StrCat(Load<uint8_t>(p));
    case onnx::TensorProto::UINT16:
      return absl::StrCat(Load<uint16_t>(p));
    case onnx::TensorProto::UINT32:
      return absl::StrCat(Load<uint32_t>(p));
    case onnx::TensorProto::UINT64:
      return absl::StrCat(Load<uint64_t>(p));
    case onnx::TensorProto::BOOL:
      return Load<uint8_t>(p) ? "true" : "false";
    case onnx::TensorProto::COMPLEX64:
      return absl::StrCat(Real(Load<float>(p), exact, false), "+",
                          Real(Load<float>(p + 4), exact, false), "i");
    case onnx::TensorProto::COMPLEX128:
      return absl::StrCat(Real(Load<double>(p), exact, true), "+",
                          Real(Load<double>(p + 8), exact, true), "i");
    default:
      return "?";
  }
}

// A float attribute value always reads as a float: `1.0`, not `1` (which
// would read back as an int).
std::string FloatAttr(float v, bool exact) {
  std::string s = Real(v, exact, false);
  if (s.find_first_of(".en") == std::string::npos) absl::StrAppend(&s, ".0");
  return s;
}

uint64_t Fnv1a(absl::string_view bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Quote(absl::string_view s) {
  return absl::StrCat("\"", absl::CEscape(s), "\"");
}

std::string Ref(const Value* v) {
  if (v == nullptr || v->name().empty()) return "_";
  return absl::StrCat("%", PrintName(v->name()));
}

std::string Decl(const Value* v) {
  if (v == nullptr || v->name().empty()) return "_";
  if (v->type() == nullptr) return Ref(v);
  return absl::StrCat(Ref(v), ": ", v->type()->ToString());
}

class Printer {
 public:
  explicit Printer(const PrintOptions& options) : options_(options) {}

  void GraphTo(const ir::Graph& g, int indent, absl::string_view keyword) {
    std::vector<std::string> ins, outs;
    for (const Value* v : g.inputs()) ins.push_back(Decl(v));
    for (const Value* v : g.outputs()) outs.push_back(Decl(v));
    absl::StrAppend(&out_, keyword, " ", PrintName(g.name()), "(",
                    absl::StrJoin(ins, ", "), ") -> (",
                    absl::StrJoin(outs, ", "), ") {\n");
    BodyTo(g, indent + 2);
    absl::StrAppend(&out_, std::string(indent, ' '), "}");
  }

  void BodyTo(const ir::Graph& g, int indent) {
    std::string pad(indent, ' ');
    std::vector<Value*> inits = g.initializers();
    std::sort(inits.begin(), inits.end(), [](const Value* a, const Value* b) {
      return a->name() < b->name();
    });
    for (const Value* v : inits) {
      absl::StrAppend(&out_, pad, "init ", Decl(v), " = ",
                      PrintTensor(*v->const_value(), options_), "\n");
    }
    for (const SparseTensor& s : g.sparse_initializers()) {
      absl::StrAppend(&out_, pad, "sparse_init ", Sparse(s), "\n");
    }
    for (const Node* n : g.nodes()) {
      absl::StrAppend(&out_, pad);
      NodeTo(*n, indent);
      absl::StrAppend(&out_, "\n");
    }
  }

  void NodeTo(const ir::Node& n, int indent) {
    std::vector<std::string> outs, ins;
    for (int i = 0; i < n.num_outputs(); ++i) outs.push_back(Decl(n.output(i)));
    for (const Value* v : n.inputs()) ins.push_back(Ref(v));
    if (!outs.empty()) absl::StrAppend(&out_, absl::StrJoin(outs, ", "), " = ");
    if (!n.domain().empty()) absl::StrAppend(&out_, n.domain(), "::");
    absl::StrAppend(&out_, n.op_type(), "(", absl::StrJoin(ins, ", "), ")");
    if (!n.attributes().empty()) {
      std::vector<const ir::Attr*> attrs;
      for (const ir::Attr& a : n.attributes()) attrs.push_back(&a);
      std::sort(attrs.begin(), attrs.end(),
                [](const ir::Attr* a, const ir::Attr* b) {
                  return a->name() < b->name();
                });
      absl::StrAppend(&out_, " {");
      for (size_t i = 0; i < attrs.size(); ++i) {
        if (i > 0) absl::StrAppend(&out_, ", ");
        AttrTo(*attrs[i], indent);
      }
      absl::StrAppend(&out_, "}");
    }
    if (!n.name().empty()) absl::StrAppend(&out_, "  # ", n.name());
  }

  void AttrTo(const ir::Attr& a, int indent) {
    absl::StrAppend(&out_, a.name(), "=");
    if (a.is_ref()) {
      absl::StrAppend(&out_, "@", a.ref_attr_name(), ": ",
                      AttrKindName(a.type()));
      return;
    }
    if (IsEmptyList(a)) {
      absl::StrAppend(&out_, AttrKindName(a.type()), " []");
      return;
    }
    switch (a.type()) {
      case onnx::AttributeProto::FLOAT:
        absl::StrAppend(&out_, FloatAttr(a.f(), options_.exact));
        break;
      case onnx::AttributeProto::INT:
        absl::StrAppend(&out_, a.i());
        break;
      case onnx::AttributeProto::STRING:
        absl::StrAppend(&out_, Quote(a.s()));
        break;
      case onnx::AttributeProto::TENSOR:
        absl::StrAppend(&out_, "tensor ", PrintTensor(a.t(), options_));
        break;
      case onnx::AttributeProto::GRAPH:
        GraphTo(*a.g(), indent, "graph");
        break;
      case onnx::AttributeProto::SPARSE_TENSOR:
        absl::StrAppend(&out_, Sparse(a.sparse_tensor()));
        break;
      case onnx::AttributeProto::TYPE_PROTO:
        absl::StrAppend(&out_, "type ", a.tp().ToString());
        break;
      case onnx::AttributeProto::FLOATS:
        absl::StrAppend(&out_, "[",
                        absl::StrJoin(a.floats(), ", ",
                                      [&](std::string* out, float f) {
                                        absl::StrAppend(
                                            out, FloatAttr(f, options_.exact));
                                      }),
                        "]");
        break;
      case onnx::AttributeProto::INTS:
        absl::StrAppend(&out_, "[", absl::StrJoin(a.ints(), ", "), "]");
        break;
      case onnx::AttributeProto::STRINGS: {
        std::vector<std::string> q;
        for (const std::string& s : a.strings()) q.push_back(Quote(s));
        absl::StrAppend(&out_, "[", absl::StrJoin(q, ", "), "]");
        break;
      }
      case onnx::AttributeProto::TENSORS: {
        std::vector<std::string> q;
        for (const Tensor& t : a.tensors()) {
          q.push_back(PrintTensor(t, options_));
        }
        absl::StrAppend(&out_, "tensors [", absl::StrJoin(q, ", "), "]");
        break;
      }
      case onnx::AttributeProto::GRAPHS:
        absl::StrAppend(&out_, "[");
        for (size_t i = 0; i < a.graphs().size(); ++i) {
          if (i > 0) absl::StrAppend(&out_, ", ");
          GraphTo(*a.graphs()[i], indent, "graph");
        }
        absl::StrAppend(&out_, "]");
        break;
      case onnx::AttributeProto::SPARSE_TENSORS: {
        std::vector<std::string> q;
        for (const SparseTensor& s : a.sparse_tensors()) q.push_back(Sparse(s));
        absl::StrAppend(&out_, "[", absl::StrJoin(q, ", "), "]");
        break;
      }
      case onnx::AttributeProto::TYPE_PROTOS: {
        std::vector<std::string> q;
        for (const Type& t : a.types()) q.push_back(t.ToString());
        absl::StrAppend(&out_, "types [", absl::StrJoin(q, ", "), "]");
        break;
      }
      default:
        absl::StrAppend(&out_, "<undefined>");
        break;
    }
  }

  std::string Sparse(const SparseTensor& s) const {
    return absl::StrCat("sparse[", absl::StrJoin(s.dims, ","),
                        "](values=", PrintTensor(s.values, options_),
                        ", indices=", PrintTensor(s.indices, options_), ")");
  }

  std::string& out() { return out_; }

 private:
  static bool IsEmptyList(const ir::Attr& a) {
    switch (a.type()) {
      case onnx::AttributeProto::FLOATS:
        return a.floats().empty();
      case onnx::AttributeProto::INTS:
        return a.ints().empty();
      case onnx::AttributeProto::STRINGS:
        return a.strings().empty();
      case onnx::AttributeProto::TENSORS:
        return a.tensors().empty();
      case onnx::AttributeProto::GRAPHS:
        return a.graphs().empty();
      case onnx::AttributeProto::SPARSE_TENSORS:
        return a.sparse_tensors().empty();
      case onnx::AttributeProto::TYPE_PROTOS:
        return a.types().empty();
      default:
        return false;
    }
  }

  PrintOptions options_;
  std::string out_;
};

}  // namespace

const char* AttrKindName(AttrType type) {
  switch (type) {
    case onnx::AttributeProto::FLOAT:
      return "float";
    case onnx::AttributeProto::INT:
      return "int";
    case onnx::AttributeProto::STRING:
      return "string";
    case onnx::AttributeProto::TENSOR:
      return "tensor";
    case onnx::AttributeProto::GRAPH:
      return "graph";
    case onnx::AttributeProto::SPARSE_TENSOR:
      return "sparse_tensor";
    case onnx::AttributeProto::TYPE_PROTO:
      return "type";
    case onnx::AttributeProto::FLOATS:
      return "floats";
    case onnx::AttributeProto::INTS:
      return "ints";
    case onnx::AttributeProto::STRINGS:
      return "strings";
    case onnx::AttributeProto::TENSORS:
      return "tensors";
    case onnx::AttributeProto::GRAPHS:
      return "graphs";
    case onnx::AttributeProto::SPARSE_TENSORS:
      return "sparse_tensors";
    case onnx::AttributeProto::TYPE_PROTOS:
      return "types";
    default:
      return "undefined";
  }
}

bool IsPlainName(absl::string_view name) {
  if (name.empty()) return false;
  for (unsigned char c : name) {
    if (c <= ' ' || c >= 0x7f) return false;
    if (std::strchr(",(){}[]\"=#%:@\\", c) != nullptr) return false;
  }
  return true;
}

std::string PrintName(absl::string_view name) {
  if (name.empty() || IsPlainName(name)) return std::string(name);
  return Quote(name);
}

std::string PrintTensor(const Tensor& t, const PrintOptions& options) {
  std::string head = absl::StrCat(DataTypeShortName(t.dtype()), "[",
                                  absl::StrJoin(t.dims(), ","), "]");
  if (t.is_external()) {
    std::vector<std::string> kv;
    for (const auto& [k, v] : t.external_data()) {
      kv.push_back(absl::StrCat(k, "=", Quote(v)));
    }
    return absl::StrCat(head, "{external ", absl::StrJoin(kv, ", "), "}");
  }
  int64_t n = t.num_elements();
  int64_t shown = options.exact || n <= kMaxShownElements ? n : kHeadElements;
  std::vector<std::string> elems;
  if (t.is_string()) {
    for (int64_t i = 0; i < shown; ++i) elems.push_back(Quote(t.strings()[i]));
  } else {
    int size = DataTypeSize(t.dtype());
    absl::string_view b = t.bytes();
    for (int64_t i = 0; i < shown; ++i) {
      elems.push_back(Element(t.dtype(), b.data() + i * size, options.exact));
    }
  }
  if (shown < n) {
    uint64_t digest = 0;
    if (t.is_string()) {
      for (const std::string& s : t.strings()) digest ^= Fnv1a(s) + 0x9e37;
    } else {
      digest = Fnv1a(t.bytes());
    }
    elems.push_back(
        absl::StrFormat("... (%d elements, fnv1a %016x)", n, digest));
  }
  return absl::StrCat(head, "{", absl::StrJoin(elems, ", "), "}");
}

std::string PrintAttr(const Attr& attr, const PrintOptions& options) {
  Printer p(options);
  p.AttrTo(attr, 0);
  return p.out();
}

std::string PrintNode(const Node& node, const PrintOptions& options) {
  Printer p(options);
  p.NodeTo(node, 0);
  return p.out();
}

std::string PrintGraph(const Graph& graph, const PrintOptions& options) {
  Printer p(options);
  p.GraphTo(graph, 0, "graph");
  absl::StrAppend(&p.out(), "\n");
  return p.out();
}

std::string PrintFunction(const Function& f, const PrintOptions& options) {
  Printer p(options);
  std::vector<std::string> opsets;
  for (const OpsetImport& o : f.opset_imports()) {
    opsets.push_back(absl::StrCat(Quote(o.domain), ": ", o.version));
  }
  absl::StrAppend(&p.out(), "function ", f.domain(), "::", PrintName(f.name()),
                  " attrs=[", absl::StrJoin(f.attributes(), ", "), "] opsets={",
                  absl::StrJoin(opsets, ", "), "}\n");
  p.GraphTo(f.body(), 0, "body");
  absl::StrAppend(&p.out(), "\n");
  return p.out();
}

std::string PrintModel(const Model& model, const PrintOptions& options) {
  std::vector<std::string> opsets;
  for (const OpsetImport& o : model.opset_imports()) {
    opsets.push_back(absl::StrCat(Quote(o.domain), ": ", o.version));
  }
  std::string out = absl::StrCat("model ir_version=", model.ir_version(),
                                 " opsets={", absl::StrJoin(opsets, ", "), "}");
  if (!model.producer_name().empty() || !model.producer_version().empty()) {
    absl::StrAppend(&out, " producer=",
                    Quote(absl::StrCat(model.producer_name(), " ",
                                       model.producer_version())));
  }
  absl::StrAppend(&out, "\n");
  for (const auto& [k, v] : model.metadata_props()) {
    absl::StrAppend(&out, "meta ", Quote(k), " = ", Quote(v), "\n");
  }
  absl::StrAppend(&out, PrintGraph(model.graph(), options));
  for (const Function* f : model.functions()) {
    absl::StrAppend(&out, PrintFunction(*f, options));
  }
  return out;
}

}  // namespace jax2onnx::ir
