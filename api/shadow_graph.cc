// Shadow compare, the structural half: the canonical form of a graph and
// the diff of two canonical graphs (see shadow.h).
#include "api/shadow.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "ir/serde.h"

namespace jax2onnx::api {
namespace {

// ---------------------------------------------------------------------------
// Hashing.

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;

uint64_t Fnv(absl::string_view bytes, uint64_t h = kFnvOffset) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= kFnvPrime;
  }
  return h;
}

uint64_t FnvU64(uint64_t v, uint64_t h) {
  for (int i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xff;
    h *= kFnvPrime;
  }
  return h;
}

std::string Hex(uint64_t h) { return absl::StrFormat("%016x", h); }

std::string DataTypeName(int dtype) {
  if (onnx::TensorProto_DataType_IsValid(dtype)) {
    return absl::AsciiStrToLower(onnx::TensorProto_DataType_Name(
        static_cast<onnx::TensorProto_DataType>(dtype)));
  }
  return absl::StrCat("dtype", dtype);
}

std::string DimsText(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

std::string TensorShapeText(const onnx::TensorProto& t) {
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  return absl::StrCat(DataTypeName(t.data_type()), DimsText(dims));
}

std::string TypeText(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: {
      const auto& tt = type.tensor_type();
      std::string s = DataTypeName(tt.elem_type());
      if (!tt.has_shape()) return s + "[*]";
      std::vector<std::string> dims;
      for (const auto& d : tt.shape().dim()) {
        if (d.has_dim_value()) {
          dims.push_back(absl::StrCat(d.dim_value()));
        } else if (d.has_dim_param()) {
          dims.push_back(d.dim_param());
        } else {
          dims.push_back("?");
        }
      }
      return absl::StrCat(s, "[", absl::StrJoin(dims, ","), "]");
    }
    case onnx::TypeProto::kSequenceType:
      return absl::StrCat("seq(", TypeText(type.sequence_type().elem_type()),
                          ")");
    case onnx::TypeProto::kOptionalType:
      return absl::StrCat("opt(", TypeText(type.optional_type().elem_type()),
                          ")");
    case onnx::TypeProto::kMapType:
      return absl::StrCat("map(", DataTypeName(type.map_type().key_type()), ",",
                          TypeText(type.map_type().value_type()), ")");
    default:
      return "?";
  }
}

// ---------------------------------------------------------------------------
// Canonicalization.

// What a value name means in the graph being canonicalized.
struct ValueRef {
  std::string ref;  // printed reference
  uint64_t hash = 0;
};
using Scope = std::unordered_map<std::string, ValueRef>;

std::string FormatDouble(double v) { return absl::StrFormat("%.9g", v); }

class Canonicalizer {
 public:
  // `outer` holds the names visible from enclosing graphs.
  CanonicalGraph Run(const onnx::GraphProto& graph, const Scope* outer);

 private:
  std::string AttributeValue(const onnx::AttributeProto& a, const Scope& scope);
  std::string SubgraphValue(const onnx::GraphProto& g, const Scope& scope);
};

std::string Canonicalizer::SubgraphValue(const onnx::GraphProto& g,
                                         const Scope& scope) {
  CanonicalGraph sub = Canonicalizer().Run(g, &scope);
  return absl::StrCat("graph{", sub.nodes.size(), " nodes}#",
                      Hex(Fnv(sub.Text())));
}

std::string Canonicalizer::AttributeValue(const onnx::AttributeProto& a,
                                          const Scope& scope) {
  if (!a.ref_attr_name().empty()) return absl::StrCat("@", a.ref_attr_name());
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT:
      return FormatDouble(a.f());
    case onnx::AttributeProto::INT:
      return absl::StrCat(a.i());
    case onnx::AttributeProto::STRING:
      return absl::StrCat("\"", absl::CEscape(a.s()), "\"");
    case onnx::AttributeProto::TENSOR:
      return absl::StrCat(TensorShapeText(a.t()), "#", TensorDigest(a.t()));
    case onnx::AttributeProto::GRAPH:
      return SubgraphValue(a.g(), scope);
    case onnx::AttributeProto::FLOATS: {
      std::vector<std::string> v;
      for (float f : a.floats()) v.push_back(FormatDouble(f));
      return absl::StrCat("[", absl::StrJoin(v, ","), "]");
    }
    case onnx::AttributeProto::INTS:
      return absl::StrCat("[", absl::StrJoin(a.ints(), ","), "]");
    case onnx::AttributeProto::STRINGS: {
      std::vector<std::string> v;
      for (const auto& s : a.strings()) {
        v.push_back(absl::StrCat("\"", absl::CEscape(s), "\""));
      }
      return absl::StrCat("[", absl::StrJoin(v, ","), "]");
    }
    case onnx::AttributeProto::TENSORS: {
      std::vector<std::string> v;
      for (const auto& t : a.tensors()) {
        v.push_back(absl::StrCat(TensorShapeText(t), "#", TensorDigest(t)));
      }
      return absl::StrCat("[", absl::StrJoin(v, ","), "]");
    }
    case onnx::AttributeProto::GRAPHS: {
      std::vector<std::string> v;
      for (const auto& g : a.graphs()) v.push_back(SubgraphValue(g, scope));
      return absl::StrCat("[", absl::StrJoin(v, ","), "]");
    }
    case onnx::AttributeProto::TYPE_PROTO:
      return TypeText(a.tp());
    default:
      return absl::StrCat("<attribute type ", static_cast<int>(a.type()), ">");
  }
}

CanonicalGraph Canonicalizer::Run(const onnx::GraphProto& graph,
                                  const Scope* outer) {
  CanonicalGraph out;
  Scope scope;
  if (outer != nullptr) {
    for (const auto& [name, v] : *outer) {
      scope[name] = {absl::StrCat("outer:", v.ref), Fnv("outer", v.hash)};
    }
  }
  std::set<std::string> initializer_names;
  std::vector<std::pair<std::string, std::string>> initializers;
  for (const auto& t : graph.initializer()) {
    const std::string digest = TensorDigest(t);
    initializer_names.insert(t.name());
    const std::string ref = absl::StrCat("init#", digest);
    scope[t.name()] = {ref, Fnv(ref)};
    initializers.emplace_back(digest, TensorShapeText(t));
  }
  std::sort(initializers.begin(), initializers.end());
  out.initializers = std::move(initializers);
  int input_index = 0;
  for (const auto& in : graph.input()) {
    // Old IR versions list initializers among the inputs too.
    if (initializer_names.count(in.name())) continue;
    const std::string ref = absl::StrCat("in", input_index++);
    scope[in.name()] = {ref, Fnv(ref)};
    out.inputs.push_back(
        absl::StrCat(ref, " ", in.name(), ": ", TypeText(in.type())));
  }

  // Kahn's algorithm; ready nodes are taken in order of their structural
  // key, so the order does not depend on the original node order.
  const int n = graph.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const auto& o : graph.node(i).output()) {
      if (!o.empty()) producer[o] = i;
    }
  }
  std::vector<int> missing(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (int i = 0; i < n; ++i) {
    std::set<int> deps;
    for (const auto& in : graph.node(i).input()) {
      auto it = producer.find(in);
      if (!in.empty() && it != producer.end() && it->second != i &&
          !scope.count(in)) {
        deps.insert(it->second);
      }
    }
    // Subgraphs may read values of this graph by name.
    std::function<void(const onnx::GraphProto&)> collect =
        [&](const onnx::GraphProto& g) {
          for (const auto& node : g.node()) {
            for (const auto& in : node.input()) {
              auto it = producer.find(in);
              if (it != producer.end() && it->second != i) {
                deps.insert(it->second);
              }
            }
            for (const auto& a : node.attribute()) {
              if (a.has_g()) collect(a.g());
              for (const auto& sg : a.graphs()) collect(sg);
            }
          }
        };
    for (const auto& a : graph.node(i).attribute()) {
      if (a.has_g()) collect(a.g());
      for (const auto& sg : a.graphs()) collect(sg);
    }
    missing[i] = static_cast<int>(deps.size());
    for (int d : deps) consumers[d].push_back(i);
  }

  struct Ready {
    std::string key;
    int index;
    bool operator>(const Ready& o) const {
      return std::tie(key, index) > std::tie(o.key, o.index);
    }
  };
  std::vector<CanonicalNode> attrs_only(n);  // op + attributes per node
  auto op_name = [](const onnx::NodeProto& node) {
    return node.domain().empty() || node.domain() == "ai.onnx"
               ? node.op_type()
               : absl::StrCat(node.domain(), "::", node.op_type());
  };
  std::vector<uint64_t> input_hashes_key;
  auto node_key = [&](int i, CanonicalNode* cn, std::vector<uint64_t>* hashes) {
    const onnx::NodeProto& node = graph.node(i);
    cn->op_type = op_name(node);
    cn->attributes.clear();
    for (const auto& a : node.attribute()) {
      cn->attributes.emplace_back(a.name(), AttributeValue(a, scope));
    }
    std::sort(cn->attributes.begin(), cn->attributes.end());
    cn->inputs.clear();
    hashes->clear();
    for (const auto& in : node.input()) {
      if (in.empty()) {
        cn->inputs.push_back("");
        hashes->push_back(0);
        continue;
      }
      auto it = scope.find(in);
      if (it == scope.end()) {
        cn->inputs.push_back(absl::StrCat("?", in));
        hashes->push_back(Fnv(absl::StrCat("?", in)));
      } else {
        cn->inputs.push_back(it->second.ref);
        hashes->push_back(it->second.hash);
      }
    }
    cn->num_outputs = node.output_size();
    std::string key = absl::StrCat(cn->op_type, "|");
    for (const auto& [k, v] : cn->attributes)
      absl::StrAppend(&key, k, "=", v, ";");
    absl::StrAppend(&key, "|");
    for (uint64_t h : *hashes) absl::StrAppend(&key, Hex(h), ",");
    absl::StrAppend(&key, "|", cn->num_outputs);
    return key;
  };

  std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready;
  std::vector<bool> done(n, false);
  auto push_ready = [&](int i) {
    CanonicalNode cn;
    std::vector<uint64_t> hashes;
    ready.push({node_key(i, &cn, &hashes), i});
  };
  for (int i = 0; i < n; ++i) {
    if (missing[i] == 0) push_ready(i);
  }
  // First canonical node index per structural output hash, so structurally
  // identical duplicates are referenced the same way whatever their order.
  std::unordered_map<uint64_t, int> first_with_hash;
  auto emit = [&](int i) {
    CanonicalNode cn;
    std::vector<uint64_t> hashes;
    const std::string key = node_key(i, &cn, &hashes);
    const uint64_t node_hash = Fnv(key);
    const int index = static_cast<int>(out.nodes.size());
    auto [it, inserted] = first_with_hash.emplace(node_hash, index);
    const int ref_index = it->second;
    const onnx::NodeProto& node = graph.node(i);
    for (int k = 0; k < node.output_size(); ++k) {
      if (node.output(k).empty()) continue;
      scope[node.output(k)] = {absl::StrCat("n", ref_index, ".", k),
                               FnvU64(static_cast<uint64_t>(k), node_hash)};
    }
    out.nodes.push_back(std::move(cn));
    done[i] = true;
  };
  while (!ready.empty()) {
    const int i = ready.top().index;
    ready.pop();
    emit(i);
    for (int c : consumers[i]) {
      if (--missing[c] == 0) push_ready(c);
    }
  }
  // Cycles (invalid graphs) keep their original order at the end.
  for (int i = 0; i < n; ++i) {
    if (!done[i]) emit(i);
  }

  for (const auto& o : graph.output()) {
    auto it = scope.find(o.name());
    out.outputs.push_back(absl::StrCat(
        o.name(), ": ", TypeText(o.type()), " = ",
        it == scope.end() ? absl::StrCat("?", o.name()) : it->second.ref));
  }
  return out;
}

// Longest common subsequence of two op-type sequences: pairs (i, j).
std::vector<std::pair<int, int>> AlignByOpType(
    const std::vector<CanonicalNode>& a, const std::vector<CanonicalNode>& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::pair<int, int>> pairs;
  // Beyond this the table gets too large: match greedily in order instead.
  if (n * m > 40'000'000ull) {
    size_t j = 0;
    for (size_t i = 0; i < n && j < m; ++i) {
      size_t k = j;
      while (k < m && b[k].op_type != a[i].op_type) ++k;
      if (k < m) {
        pairs.emplace_back(static_cast<int>(i), static_cast<int>(k));
        j = k + 1;
      }
    }
    return pairs;
  }
  std::vector<std::vector<uint32_t>> len(n + 1,
                                         std::vector<uint32_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      len[i][j] = a[i].op_type == b[j].op_type
                      ? len[i + 1][j + 1] + 1
                      : std::max(len[i + 1][j], len[i][j + 1]);
    }
  }
  size_t i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i].op_type == b[j].op_type) {
      pairs.emplace_back(static_cast<int>(i), static_cast<int>(j));
      ++i;
      ++j;
    } else if (len[i + 1][j] >= len[i][j + 1]) {
      ++i;
    } else {
      ++j;
    }
  }
  return pairs;
}

// Translates a legacy reference "nA.k" to the IR node it is aligned with.
std::string TranslateRef(const std::string& ref,
                         const std::unordered_map<int, int>& legacy_to_ir) {
  std::string prefix;
  absl::string_view r = ref;
  if (absl::ConsumePrefix(&r, "outer:")) prefix = "outer:";
  if (!absl::ConsumePrefix(&r, "n")) return ref;
  const size_t dot = r.find('.');
  int index;
  if (dot == absl::string_view::npos ||
      !absl::SimpleAtoi(r.substr(0, dot), &index)) {
    return ref;
  }
  auto it = legacy_to_ir.find(index);
  if (it == legacy_to_ir.end()) return absl::StrCat(ref, "(unmatched)");
  return absl::StrCat(prefix, "n", it->second, r.substr(dot));
}

// Compares two signature lists element by element.
void DiffLists(absl::string_view what, const std::vector<std::string>& a,
               const std::vector<std::string>& b,
               std::vector<std::string>* diffs) {
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const std::string la = i < a.size() ? a[i] : "(none)";
    const std::string lb = i < b.size() ? b[i] : "(none)";
    if (la != lb) {
      diffs->push_back(
          absl::StrCat(what, " ", i, ": legacy ", la, ", ir ", lb));
    }
  }
}

// Signature entries without the canonical producer reference.
std::vector<std::string> StripRefs(const std::vector<std::string>& outputs) {
  std::vector<std::string> s;
  for (const std::string& o : outputs) s.push_back(o.substr(0, o.rfind(" = ")));
  return s;
}

}  // namespace

std::string TensorDigest(const onnx::TensorProto& tensor) {
  uint64_t h = Fnv(absl::StrCat(tensor.data_type(), ":"));
  for (int64_t d : tensor.dims()) h = FnvU64(static_cast<uint64_t>(d), h);
  // TensorFromProto normalizes every typed field and raw_data to one
  // row-major little-endian byte form.
  auto t = ir::TensorFromProto(tensor);
  if (!t.ok()) {
    // Unreadable: digest the serialized data fields so differing tensors
    // still differ.
    onnx::TensorProto copy = tensor;
    copy.clear_name();
    copy.clear_doc_string();
    return Hex(Fnv(copy.SerializeAsString(), Fnv("unreadable", h)));
  }
  if (t->is_string()) {
    for (const std::string& s : t->strings()) {
      h = FnvU64(s.size(), h);
      h = Fnv(s, h);
    }
  } else if (t->is_external()) {
    h = Fnv("external", h);
    for (const auto& [k, v] : t->external_data()) h = Fnv(k + "=" + v, h);
  } else {
    h = Fnv(t->bytes(), h);
  }
  return Hex(h);
}

std::string CanonicalNode::Text(int index) const {
  std::string s = absl::StrCat("n", index, " = ", op_type, "(",
                               absl::StrJoin(inputs, ", "), ")");
  if (num_outputs != 1) absl::StrAppend(&s, " ->", num_outputs);
  if (!attributes.empty()) {
    std::vector<std::string> a;
    for (const auto& [k, v] : attributes) a.push_back(absl::StrCat(k, "=", v));
    absl::StrAppend(&s, " {", absl::StrJoin(a, ", "), "}");
  }
  return s;
}

std::string CanonicalGraph::Text() const {
  std::string s;
  for (const auto& h : header) absl::StrAppend(&s, h, "\n");
  for (const auto& i : inputs) absl::StrAppend(&s, "input ", i, "\n");
  for (const auto& [digest, type] : initializers) {
    absl::StrAppend(&s, "initializer ", digest, " ", type, "\n");
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    absl::StrAppend(&s, nodes[i].Text(static_cast<int>(i)), "\n");
  }
  for (const auto& o : outputs) absl::StrAppend(&s, "output ", o, "\n");
  return s;
}

CanonicalGraph Canonicalize(const onnx::ModelProto& model) {
  CanonicalGraph g = Canonicalizer().Run(model.graph(), nullptr);
  g.header.push_back(absl::StrCat("ir_version ", model.ir_version()));
  std::vector<std::string> opsets;
  for (const auto& o : model.opset_import()) {
    opsets.push_back(absl::StrCat("opset ",
                                  o.domain().empty() ? "ai.onnx" : o.domain(),
                                  " ", o.version()));
  }
  std::sort(opsets.begin(), opsets.end());
  g.header.insert(g.header.end(), opsets.begin(), opsets.end());
  for (const auto& f : model.functions()) {
    // Functions are rare here; they count by their serialized form.
    onnx::FunctionProto copy = f;
    copy.clear_doc_string();
    g.header.push_back(absl::StrCat("function ", f.domain(), "::", f.name(),
                                    " #", Hex(Fnv(copy.SerializeAsString()))));
  }
  return g;
}

StructuralDiff DiffGraphs(const CanonicalGraph& legacy,
                          const CanonicalGraph& ir) {
  StructuralDiff d;
  d.identical = legacy.Text() == ir.Text();

  std::map<std::string, std::pair<int, int>> hist;
  for (const auto& n : legacy.nodes) hist[n.op_type].first++;
  for (const auto& n : ir.nodes) hist[n.op_type].second++;
  for (const auto& [op, counts] : hist) {
    if (counts.first != counts.second) {
      d.op_histogram_delta.push_back({op, counts.first, counts.second});
    }
  }

  DiffLists("header", legacy.header, ir.header, &d.signature_diffs);
  DiffLists("input", legacy.inputs, ir.inputs, &d.signature_diffs);
  DiffLists("output", StripRefs(legacy.outputs), StripRefs(ir.outputs),
            &d.signature_diffs);

  std::multiset<std::pair<std::string, std::string>> li(
      legacy.initializers.begin(), legacy.initializers.end());
  for (const auto& init : ir.initializers) {
    auto it = li.find(init);
    if (it != li.end()) {
      li.erase(it);
      d.initializers_common++;
    } else {
      d.initializers_ir_only.push_back(
          absl::StrCat(init.first, " ", init.second));
    }
  }
  for (const auto& init : li) {
    d.initializers_legacy_only.push_back(
        absl::StrCat(init.first, " ", init.second));
  }

  const auto pairs = AlignByOpType(legacy.nodes, ir.nodes);
  d.matched_nodes = static_cast<int>(pairs.size());
  std::unordered_map<int, int> legacy_to_ir;
  for (const auto& [a, b] : pairs) legacy_to_ir[a] = b;

  auto changed = [&](int a, int b) {
    const CanonicalNode& x = legacy.nodes[a];
    const CanonicalNode& y = ir.nodes[b];
    NodeDiff nd;
    nd.kind = NodeDiff::Kind::kChanged;
    nd.legacy_index = a;
    nd.ir_index = b;
    nd.op_type = x.op_type;
    std::map<std::string, std::pair<std::string, std::string>> attrs;
    for (const auto& [k, v] : x.attributes) attrs[k].first = v;
    for (const auto& [k, v] : y.attributes) attrs[k].second = v;
    for (const auto& [k, v] : attrs) {
      if (v.first != v.second) {
        nd.details.push_back(absl::StrCat(
            "attribute ", k, ": legacy ", v.first.empty() ? "(none)" : v.first,
            ", ir ", v.second.empty() ? "(none)" : v.second));
      }
    }
    const size_t ni = std::max(x.inputs.size(), y.inputs.size());
    for (size_t i = 0; i < ni; ++i) {
      const std::string xa = i < x.inputs.size()
                                 ? TranslateRef(x.inputs[i], legacy_to_ir)
                                 : "(none)";
      const std::string yb = i < y.inputs.size() ? y.inputs[i] : "(none)";
      if (xa != yb) {
        nd.details.push_back(absl::StrCat(
            "input ", i, ": legacy ",
            i < x.inputs.size() ? x.inputs[i] : "(none)", ", ir ", yb));
      }
    }
    if (x.num_outputs != y.num_outputs) {
      nd.details.push_back(absl::StrCat("outputs: legacy ", x.num_outputs,
                                        ", ir ", y.num_outputs));
    }
    if (!nd.details.empty()) d.nodes.push_back(std::move(nd));
  };
  int a = 0, b = 0;
  auto only = [&](NodeDiff::Kind kind, int index, const CanonicalNode& node) {
    NodeDiff nd;
    nd.kind = kind;
    (kind == NodeDiff::Kind::kLegacyOnly ? nd.legacy_index : nd.ir_index) =
        index;
    nd.op_type = node.op_type;
    nd.details.push_back(node.Text(index));
    d.nodes.push_back(std::move(nd));
  };
  for (const auto& [pa, pb] : pairs) {
    for (; a < pa; ++a) only(NodeDiff::Kind::kLegacyOnly, a, legacy.nodes[a]);
    for (; b < pb; ++b) only(NodeDiff::Kind::kIrOnly, b, ir.nodes[b]);
    changed(pa, pb);
    a = pa + 1;
    b = pb + 1;
  }
  for (; a < static_cast<int>(legacy.nodes.size()); ++a) {
    only(NodeDiff::Kind::kLegacyOnly, a, legacy.nodes[a]);
  }
  for (; b < static_cast<int>(ir.nodes.size()); ++b) {
    only(NodeDiff::Kind::kIrOnly, b, ir.nodes[b]);
  }
  return d;
}

}  // namespace jax2onnx::api
