// Shadow compare: canonical graph form, structural diff, numeric errors and
// the verdict of legacy vs IR on one bundle (see shadow.h).
#include "api/shadow.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "api/convert_internal.h"
#include "api/expect_graph.h"
#include "api/output_compare.h"
#include "ir/serde.h"
#include "jaxpr/dtype.h"
#include "jaxpr/io/compare.h"
#include "jaxpr/status_macros.h"

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

std::string FirstLine(absl::string_view text) {
  const size_t nl = text.find('\n');
  return std::string(nl == absl::string_view::npos ? text : text.substr(0, nl));
}

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

// ---------------------------------------------------------------------------
// Numbers.

// Element values as doubles, complex numbers as two parts each.
std::vector<double> Components(const jaxpr::Array& a) {
  std::vector<double> v;
  if (jaxpr::IsComplex(a.dtype())) {
    const int64_t n = a.num_elements() * 2;
    v.reserve(n);
    if (a.dtype() == jaxpr::DType::kC64) {
      const float* p = a.typed_data<float>();
      for (int64_t i = 0; i < n; ++i) v.push_back(p[i]);
    } else {
      const double* p = a.typed_data<double>();
      for (int64_t i = 0; i < n; ++i) v.push_back(p[i]);
    }
    return v;
  }
  v.reserve(a.num_elements());
  for (int64_t i = 0; i < a.num_elements(); ++i) v.push_back(a.GetAsDouble(i));
  return v;
}

nlohmann::json Number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return v;
}

nlohmann::json ErrorsJson(const ErrorStats& e) {
  if (!e.compared) return {{"compared", false}, {"summary", e.summary}};
  return {{"compared", true},
          {"ok", e.ok},
          {"max_abs", Number(e.max_abs)},
          {"max_rel", Number(e.max_rel)},
          {"summary", e.summary}};
}

nlohmann::json RunJson(const PipelineRun& r) {
  return {{"converted", r.converted},
          {"ran", r.ran},
          {"passed", r.passed},
          {"stage", r.stage},
          {"error", r.error},
          {"nodes", r.nodes},
          {"initializers", r.initializers},
          {"convert_seconds", r.convert_seconds}};
}

std::string ErrorText(const ErrorStats& e) {
  if (!e.compared) return "-";
  return absl::StrFormat("%s max_abs %.3g max_rel %.3g", e.ok ? "ok" : "FAIL",
                         e.max_abs, e.max_rel);
}

}  // namespace

// ---------------------------------------------------------------------------

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kIdentical:
      return "IDENTICAL";
    case Verdict::kEquivalent:
      return "EQUIVALENT";
    case Verdict::kDifferent:
      return "DIFFERENT";
    case Verdict::kLegacyFailed:
      return "LEGACY_FAILED";
    case Verdict::kIrFailed:
      return "IR_FAILED";
    case Verdict::kBothFailed:
      return "BOTH_FAILED";
    case Verdict::kNotRun:
      return "NOT_RUN";
  }
  return "?";
}

const char* NodeDiffKindName(NodeDiff::Kind kind) {
  switch (kind) {
    case NodeDiff::Kind::kChanged:
      return "changed";
    case NodeDiff::Kind::kLegacyOnly:
      return "legacy_only";
    case NodeDiff::Kind::kIrOnly:
      return "ir_only";
  }
  return "?";
}

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

ErrorStats CompareForShadow(const jaxpr::Array& reference,
                            const jaxpr::Array& got, std::optional<double> rtol,
                            std::optional<double> atol) {
  ErrorStats e;
  e.compared = true;
  jaxpr::CompareResult cmp = jaxpr::CompareArrays(reference, got, rtol, atol);
  e.ok = cmp.ok;
  e.summary = cmp.Summary();
  if (!cmp.structural_error.empty()) {
    e.max_abs = e.max_rel = std::numeric_limits<double>::infinity();
    return e;
  }
  const std::vector<double> r = Components(reference);
  const std::vector<double> g = Components(got);
  for (size_t i = 0; i < r.size() && i < g.size(); ++i) {
    const double x = r[i], y = g[i];
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;
    const double diff = std::fabs(x - y);
    if (std::isnan(diff) || std::isinf(diff)) {
      e.max_abs = e.max_rel = std::numeric_limits<double>::infinity();
      continue;
    }
    e.max_abs = std::max(e.max_abs, diff);
    if (x != 0) e.max_rel = std::max(e.max_rel, diff / std::fabs(x));
  }
  return e;
}

ShadowResult CompareModels(
    const absl::StatusOr<onnx::ModelProto>& legacy,
    const absl::StatusOr<onnx::ModelProto>& ir,
    const absl::StatusOr<std::vector<jaxpr::Array>>& inputs,
    const absl::StatusOr<std::vector<jaxpr::Array>>& oracle,
    std::optional<double> rtol, std::optional<double> atol, OrtRunner* runner,
    const OracleJudge& oracle_judge) {
  ShadowResult result;
  auto take = [](const absl::StatusOr<onnx::ModelProto>& m, PipelineRun* run,
                 onnx::ModelProto* model) {
    if (!m.ok()) {
      run->stage = "convert";
      run->error = FirstLine(m.status().message());
      return;
    }
    run->converted = true;
    run->nodes = m->graph().node_size();
    run->initializers = m->graph().initializer_size();
    *model = *m;
  };
  take(legacy, &result.legacy, &result.legacy_model);
  take(ir, &result.ir, &result.ir_model);
  if (result.legacy.converted && result.ir.converted) {
    result.diff = DiffGraphs(Canonicalize(result.legacy_model),
                             Canonicalize(result.ir_model));
  }

  std::vector<jaxpr::Array> legacy_out, ir_out;
  const bool have_oracle = oracle.ok();
  if (!have_oracle) result.oracle_error = FirstLine(oracle.status().message());
  const bool can_run = runner != nullptr;
  if (!can_run) {
    for (PipelineRun* r : {&result.legacy, &result.ir}) {
      if (r->converted) {
        r->stage = "run";
        r->error = "not run (no ONNX Runtime)";
      }
    }
  } else if (!inputs.ok()) {
    for (PipelineRun* r : {&result.legacy, &result.ir}) {
      if (!r->converted) continue;
      r->stage = "inputs";
      r->error = FirstLine(inputs.status().message());
    }
  } else {
    auto run = [&](const onnx::ModelProto& model, PipelineRun* r,
                   std::vector<jaxpr::Array>* out) {
      if (!r->converted) return;
      auto got = RunModel(model, *inputs, *runner);
      if (!got.ok()) {
        r->stage = "run";
        r->error = FirstLine(got.status().message());
        return;
      }
      r->ran = true;
      *out = *std::move(got);
    };
    run(result.legacy_model, &result.legacy, &legacy_out);
    run(result.ir_model, &result.ir, &ir_out);
  }
  static const std::vector<jaxpr::Array> kNone;
  const std::vector<jaxpr::Array>& oracle_out = have_oracle ? *oracle : kNone;

  // Per-output errors.
  const size_t num_outputs =
      std::max({legacy_out.size(), ir_out.size(), oracle_out.size()});
  for (size_t i = 0; i < num_outputs; ++i) {
    OutputErrors oe;
    oe.index = static_cast<int>(i);
    const bool has_l = i < legacy_out.size(), has_i = i < ir_out.size(),
               has_o = i < oracle_out.size();
    auto missing = [](ErrorStats* e, absl::string_view why) {
      e->compared = false;
      e->summary = std::string(why);
    };
    if (has_l && has_i) {
      oe.legacy_vs_ir = CompareForShadow(ir_out[i], legacy_out[i], rtol, atol);
    } else {
      missing(&oe.legacy_vs_ir, "an output is missing");
    }
    if (has_l && has_o) {
      oe.legacy_vs_oracle =
          CompareForShadow(oracle_out[i], legacy_out[i], rtol, atol);
    } else {
      missing(&oe.legacy_vs_oracle, "no legacy output or no oracle");
    }
    if (has_i && has_o) {
      oe.ir_vs_oracle = CompareForShadow(oracle_out[i], ir_out[i], rtol, atol);
    } else {
      missing(&oe.ir_vs_oracle, "no IR output or no oracle");
    }
    result.outputs.push_back(std::move(oe));
  }
  if (oracle_judge && have_oracle) {
    auto rejudge = [&](const std::vector<jaxpr::Array>& out,
                       ErrorStats OutputErrors::*side) {
      if (out.size() != oracle_out.size() || out.empty()) return;
      const std::vector<OutputCheck> checks = oracle_judge(out);
      for (size_t i = 0; i < checks.size() && i < result.outputs.size(); ++i) {
        ErrorStats& e = result.outputs[i].*side;
        e.ok = checks[i].ok;
        e.summary = checks[i].summary;
      }
    };
    rejudge(legacy_out, &OutputErrors::legacy_vs_oracle);
    rejudge(ir_out, &OutputErrors::ir_vs_oracle);
  }

  auto judge = [&](PipelineRun* r, const std::vector<jaxpr::Array>& out,
                   bool is_legacy) {
    if (!r->ran) return;
    if (!have_oracle) {
      r->stage = "oracle";
      r->error = result.oracle_error;
      return;
    }
    if (out.size() != oracle_out.size()) {
      r->stage = "compare";
      r->error = absl::StrCat("the model returned ", out.size(),
                              " outputs, expected ", oracle_out.size());
      return;
    }
    for (const OutputErrors& oe : result.outputs) {
      const ErrorStats& e = is_legacy ? oe.legacy_vs_oracle : oe.ir_vs_oracle;
      if (!e.ok) {
        r->stage = "compare";
        r->error = absl::StrCat("output ", oe.index, ": ", e.summary);
        return;
      }
    }
    r->passed = true;
  };
  judge(&result.legacy, legacy_out, true);
  judge(&result.ir, ir_out, false);

  // The verdict.
  auto failed = [](bool legacy_failed, bool ir_failed) {
    return legacy_failed && ir_failed ? Verdict::kBothFailed
           : legacy_failed            ? Verdict::kLegacyFailed
                                      : Verdict::kIrFailed;
  };
  if (!result.legacy.converted || !result.ir.converted) {
    result.verdict = failed(!result.legacy.converted, !result.ir.converted);
    std::vector<std::string> why;
    if (!result.legacy.converted)
      why.push_back("legacy: " + result.legacy.error);
    if (!result.ir.converted) why.push_back("ir: " + result.ir.error);
    result.reason = absl::StrJoin(why, "; ");
    return result;
  }
  if (result.diff->identical) {
    result.verdict = Verdict::kIdentical;
    result.reason = "same canonical graph";
    return result;
  }
  if (!can_run) {
    result.verdict = Verdict::kNotRun;
    result.reason = "graphs differ; models not run";
    return result;
  }
  if (!result.legacy.ran || !result.ir.ran) {
    result.verdict = failed(!result.legacy.ran, !result.ir.ran);
    std::vector<std::string> why;
    if (!result.legacy.ran) {
      why.push_back(absl::StrCat("legacy ", result.legacy.stage, ": ",
                                 result.legacy.error));
    }
    if (!result.ir.ran) {
      why.push_back(
          absl::StrCat("ir ", result.ir.stage, ": ", result.ir.error));
    }
    result.reason = absl::StrJoin(why, "; ");
    return result;
  }
  if (legacy_out.size() != ir_out.size()) {
    result.verdict = Verdict::kDifferent;
    result.reason = absl::StrCat("legacy returned ", legacy_out.size(),
                                 " outputs, ir ", ir_out.size());
    return result;
  }
  for (const OutputErrors& oe : result.outputs) {
    if (!oe.legacy_vs_ir.ok) {
      result.verdict = Verdict::kDifferent;
      result.reason =
          absl::StrCat("output ", oe.index, ": ", oe.legacy_vs_ir.summary);
      return result;
    }
  }
  result.verdict = Verdict::kEquivalent;
  result.reason = absl::StrCat("graphs differ; ", result.outputs.size(),
                               " output(s) agree within tolerance");
  return result;
}

ShadowResult ShadowCompare(const Bundle& bundle, const ShadowOptions& options,
                           OrtRunner* runner) {
  auto convert = [&](Pipeline p, double* seconds) {
    const auto start = std::chrono::steady_clock::now();
    // ONNX functions are an IR-only structure: the legacy side converts the
    // same program inlined, and the outputs must still agree.
    ConvertOptions convert_options = options.check.convert;
    if (p == Pipeline::kLegacy) convert_options.functions.clear();
    auto m = ConvertWithPipeline(p, bundle, convert_options);
    *seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return m;
  };
  double legacy_seconds = 0, ir_seconds = 0;
  auto legacy = convert(Pipeline::kLegacy, &legacy_seconds);
  auto ir = convert(Pipeline::kIr, &ir_seconds);
  if (!options.run_models) runner = nullptr;

  absl::StatusOr<std::vector<jaxpr::Array>> inputs =
      absl::FailedPreconditionError("not run");
  absl::StatusOr<std::vector<jaxpr::Array>> oracle =
      absl::FailedPreconditionError("not run");
  std::string oracle_name;
  if (runner != nullptr && (legacy.ok() || ir.ok())) {
    inputs = InputsFor(bundle, options.check);
    if (inputs.ok()) {
      oracle =
          OracleOutputs(bundle, *inputs, &oracle_name, options.check.convert);
    } else {
      oracle = inputs.status();
    }
  }
  // Pass/fail against the oracle by `check`'s rule (fixed tolerance, then
  // the f32 noise bound for bundles without a tolerance header).
  OracleJudge judge;
  if (inputs.ok() && oracle.ok()) {
    judge = [&](const std::vector<jaxpr::Array>& got) {
      std::string first_failure;
      return CompareOutputs(bundle, *inputs, *oracle, got,
                            oracle_name == "expected", &first_failure);
    };
  }
  ShadowResult result = CompareModels(legacy, ir, inputs, oracle, bundle.rtol,
                                      bundle.atol, runner, judge);
  result.bundle = bundle.jaxpr_path;
  result.name = bundle.jaxpr_path.empty() ? bundle.name : bundle.jaxpr_path;
  if (oracle.ok()) result.oracle = oracle_name;
  result.legacy.convert_seconds = legacy_seconds;
  result.ir.convert_seconds = ir_seconds;

  auto expect = [&](PipelineRun* r, const onnx::ModelProto& model,
                    const std::vector<std::string>& lines) {
    if (!r->passed || lines.empty()) return;
    absl::Status s = CheckGraphExpectations(model, lines);
    if (!s.ok()) {
      r->passed = false;
      r->stage = "expect_graph";
      r->error = FirstLine(s.message());
    }
  };
  expect(&result.legacy, result.legacy_model, options.expect_graph_legacy);
  expect(&result.ir, result.ir_model, options.expect_graph_ir);
  return result;
}

ShadowResult ShadowCompareFile(const std::string& bundle_path,
                               const ShadowOptions& options,
                               OrtRunner* runner) {
  auto bundle = LoadBundle(bundle_path);
  if (!bundle.ok()) {
    ShadowResult r;
    r.bundle = r.name = bundle_path;
    r.verdict = Verdict::kBothFailed;
    for (PipelineRun* p : {&r.legacy, &r.ir}) {
      p->stage = "load";
      p->error = FirstLine(bundle.status().message());
    }
    r.reason = "load: " + r.legacy.error;
    return r;
  }
  return ShadowCompare(*bundle, options, runner);
}

nlohmann::json ShadowToJson(const ShadowResult& result, int max_node_diffs) {
  nlohmann::json j;
  j["schema"] = "jax2onnx.shadow/1";
  j["bundle"] = result.bundle;
  j["name"] = result.name;
  j["verdict"] = VerdictName(result.verdict);
  j["reason"] = result.reason;
  j["legacy"] = RunJson(result.legacy);
  j["ir"] = RunJson(result.ir);
  j["oracle"] = result.oracle;
  j["oracle_error"] = result.oracle_error;
  if (result.diff.has_value()) {
    const StructuralDiff& d = *result.diff;
    nlohmann::json s;
    s["identical"] = d.identical;
    nlohmann::json hist = nlohmann::json::array();
    for (const auto& h : d.op_histogram_delta) {
      hist.push_back({{"op", h.op_type}, {"legacy", h.legacy}, {"ir", h.ir}});
    }
    s["op_histogram_delta"] = hist;
    s["signature_diffs"] = d.signature_diffs;
    s["initializers"] = {{"common", d.initializers_common},
                         {"legacy_only", d.initializers_legacy_only},
                         {"ir_only", d.initializers_ir_only}};
    s["matched_nodes"] = d.matched_nodes;
    nlohmann::json nodes = nlohmann::json::array();
    for (size_t i = 0;
         i < d.nodes.size() && static_cast<int>(i) < max_node_diffs; ++i) {
      const NodeDiff& n = d.nodes[i];
      nodes.push_back({{"kind", NodeDiffKindName(n.kind)},
                       {"op", n.op_type},
                       {"legacy_index", n.legacy_index},
                       {"ir_index", n.ir_index},
                       {"details", n.details}});
    }
    s["node_diffs"] = nodes;
    s["node_diffs_truncated"] =
        std::max<int>(0, static_cast<int>(d.nodes.size()) - max_node_diffs);
    j["structure"] = s;
  } else {
    j["structure"] = nullptr;
  }
  nlohmann::json outs = nlohmann::json::array();
  for (const OutputErrors& oe : result.outputs) {
    outs.push_back({{"index", oe.index},
                    {"legacy_vs_ir", ErrorsJson(oe.legacy_vs_ir)},
                    {"legacy_vs_oracle", ErrorsJson(oe.legacy_vs_oracle)},
                    {"ir_vs_oracle", ErrorsJson(oe.ir_vs_oracle)}});
  }
  j["outputs"] = outs;
  return j;
}

std::string ShadowSummary(const ShadowResult& r, int max_node_diffs) {
  std::string s =
      absl::StrCat(VerdictName(r.verdict), " ", r.name, ": ", r.reason, "\n");
  auto run_line = [](absl::string_view which, const PipelineRun& p) {
    std::string line =
        absl::StrFormat("  %-6s %s", which, p.passed ? "pass" : "fail");
    if (p.converted) {
      absl::StrAppend(&line, ", ", p.nodes, " nodes, ", p.initializers,
                      " initializers");
    }
    if (!p.passed && !p.stage.empty()) {
      absl::StrAppend(&line, " (", p.stage, ": ", p.error, ")");
    }
    return line + "\n";
  };
  absl::StrAppend(&s, run_line("legacy", r.legacy), run_line("ir", r.ir));
  if (r.diff.has_value() && !r.diff->identical) {
    const StructuralDiff& d = *r.diff;
    if (!d.op_histogram_delta.empty()) {
      std::vector<std::string> parts;
      for (const auto& h : d.op_histogram_delta) {
        parts.push_back(
            absl::StrFormat("%s %d->%d", h.op_type, h.legacy, h.ir));
      }
      absl::StrAppend(&s, "  ops (legacy->ir): ", absl::StrJoin(parts, ", "),
                      "\n");
    }
    for (const auto& sd : d.signature_diffs) {
      absl::StrAppend(&s, "  signature: ", sd, "\n");
    }
    if (!d.initializers_legacy_only.empty() ||
        !d.initializers_ir_only.empty()) {
      absl::StrAppend(&s, "  initializers: ", d.initializers_common,
                      " common, ", d.initializers_legacy_only.size(),
                      " legacy-only, ", d.initializers_ir_only.size(),
                      " ir-only\n");
    }
    for (size_t i = 0;
         i < d.nodes.size() && static_cast<int>(i) < max_node_diffs; ++i) {
      const NodeDiff& n = d.nodes[i];
      absl::StrAppend(&s, "  ", NodeDiffKindName(n.kind), " ", n.op_type,
                      " [legacy ", n.legacy_index, ", ir ", n.ir_index,
                      "]: ", absl::StrJoin(n.details, "; "), "\n");
    }
    if (static_cast<int>(d.nodes.size()) > max_node_diffs) {
      absl::StrAppend(&s, "  ... ", d.nodes.size() - max_node_diffs,
                      " more node diffs (--json for all)\n");
    }
  }
  for (const OutputErrors& oe : r.outputs) {
    absl::StrAppend(&s, "  output ", oe.index, ": legacy vs ir ",
                    ErrorText(oe.legacy_vs_ir), "; legacy vs ",
                    r.oracle.empty() ? "oracle" : r.oracle, " ",
                    ErrorText(oe.legacy_vs_oracle), "; ir vs ",
                    r.oracle.empty() ? "oracle" : r.oracle, " ",
                    ErrorText(oe.ir_vs_oracle), "\n");
  }
  return s;
}

absl::StatusOr<ShadowMode> ParseShadowMode(const char* env_value) {
  if (env_value == nullptr) return ShadowMode::kOff;
  const std::string v =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(env_value));
  if (v.empty()) return ShadowMode::kOff;
  if (v == "strict") return ShadowMode::kStrict;
  auto on = ParseBoolSwitch(kShadowCompareEnv, env_value);
  if (!on.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kShadowCompareEnv, "='", env_value,
                     "' is not valid: use 1/true/on, 0/false/off or strict"));
  }
  return *on ? ShadowMode::kOn : ShadowMode::kOff;
}

absl::StatusOr<ShadowMode> ShadowModeFromEnvironment() {
  return ParseShadowMode(std::getenv(kShadowCompareEnv));
}

absl::Status ShadowStrictStatus(ShadowMode mode, const ShadowResult& r) {
  if (mode != ShadowMode::kStrict || r.verdict != Verdict::kDifferent) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      absl::StrCat(kShadowCompareEnv, "=strict: legacy and IR models of '",
                   r.name, "' differ: ", r.reason));
}

absl::Status AppendJsonLine(const std::string& path,
                            const nlohmann::json& line) {
  std::ofstream out(path, std::ios::app);
  if (!out) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot open shadow report '", path, "' for appending"));
  }
  out << line.dump() << "\n";
  out.close();
  if (!out) {
    return absl::InternalError(
        absl::StrCat("short write to shadow report '", path, "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<onnx::ModelProto> ConvertWithShadow(
    Pipeline routed, ShadowMode mode, const Bundle& bundle,
    const ConvertOptions& options) {
  if (routed == Pipeline::kLegacy && !options.functions.empty()) {
    // The legacy pipeline's refusal of --functions, as without shadow mode
    // (the comparison itself would convert the legacy side without them).
    return ConvertWithPipeline(routed, bundle, options);
  }
  ShadowOptions shadow;
  shadow.check.convert = options;
  OrtRunner* runner = &OrtRunner::Shared();
  std::string why_not;
  if (!runner->IsAvailable(&why_not)) runner = nullptr;
  ShadowResult r = ShadowCompare(bundle, shadow, runner);

  const char* report = std::getenv(kShadowReportEnv);
  if (report != nullptr && *report != '\0') {
    nlohmann::json line = ShadowToJson(r);
    line["routed"] = PipelineName(routed);
    line["mode"] = mode == ShadowMode::kStrict ? "strict" : "on";
    if (runner == nullptr) line["ort_unavailable"] = why_not;
    if (absl::Status s = AppendJsonLine(report, line); !s.ok()) return s;
  } else {
    std::fprintf(stderr, "jax2onnx shadow: %s %s: %s\n", VerdictName(r.verdict),
                 r.name.c_str(), r.reason.c_str());
  }
  J2O_RETURN_IF_ERROR(ShadowStrictStatus(mode, r));
  const bool ir = routed == Pipeline::kIr;
  const PipelineRun& run = ir ? r.ir : r.legacy;
  if (!run.converted) {
    // The routed pipeline's own error, exactly as without shadow mode.
    return ConvertWithPipeline(routed, bundle, options);
  }
  return ir ? std::move(r.ir_model) : std::move(r.legacy_model);
}

}  // namespace jax2onnx::api
