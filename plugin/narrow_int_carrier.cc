#include "plugin/narrow_int_carrier.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "plugin/onnx_narrow_codes.h"

namespace jax2onnx::plugin {
namespace {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::NodeProto;
using onnx::TensorProto;
using onnx::ValueInfoProto;

using onnx_codes::kInt2;
using onnx_codes::kInt4;
using onnx_codes::kUInt2;
using onnx_codes::kUInt4;

bool IsSignedNarrow(int t) { return t == kInt4 || t == kInt2; }
int NarrowBits(int t) { return t == kInt2 || t == kUInt2 ? 2 : 4; }
int CarrierType(int t) {
  return IsSignedNarrow(t) ? TensorProto::INT8 : TensorProto::UINT8;
}

// An INT32 tensor of one element (scalar or [1]): its value.
bool Int32Scalar(const TensorProto& t, int64_t* value) {
  if (t.data_type() != TensorProto::INT32) return false;
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  if (n != 1) return false;
  if (t.int32_data_size() == 1) {
    *value = t.int32_data(0);
    return true;
  }
  if (t.raw_data().size() == 4) {
    const auto* b = reinterpret_cast<const uint8_t*>(t.raw_data().data());
    *value = static_cast<int32_t>(b[0] | (b[1] << 8) | (b[2] << 16) |
                                  (static_cast<uint32_t>(b[3]) << 24));
    return true;
  }
  return false;
}

class Carrier {
 public:
  explicit Carrier(int opset) : opset_(opset) {}

  bool Retypes(int elem_type) const {
    const int first = NarrowIntFirstOpset(elem_type);
    return first != 0 && opset_ < first;
  }
  bool changed() const { return changed_; }
  // A `to`/`dtype` attribute (Cast, ...) naming a type this opset lacks.
  bool RetypesDTypeAttr(const AttributeProto& a) const {
    return a.type() == AttributeProto::INT &&
           (a.name() == "to" || a.name() == "dtype") &&
           Retypes(static_cast<int>(a.i()));
  }

  // Whether Retype would change anything in `g` or its subgraphs: a value,
  // tensor or `to`/`dtype` attribute of a type this opset lacks. Most
  // models have none; the scan allocates nothing, so they skip the name
  // collection and the node-by-node rewrite.
  bool NeedsRetype(const GraphProto& g) const {
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()}) {
      for (const ValueInfoProto& v : *list) {
        if (v.type().has_tensor_type() &&
            Retypes(v.type().tensor_type().elem_type())) {
          return true;
        }
      }
    }
    for (const TensorProto& t : g.initializer()) {
      if (Retypes(t.data_type())) return true;
    }
    for (const NodeProto& n : g.node()) {
      if (NeedsRetype(n)) return true;
    }
    return false;
  }
  bool NeedsRetype(const NodeProto& n) const {
    for (const AttributeProto& a : n.attribute()) {
      if (a.has_g() && NeedsRetype(a.g())) return true;
      for (const GraphProto& sub : a.graphs()) {
        if (NeedsRetype(sub)) return true;
      }
      if (a.has_t() && Retypes(a.t().data_type())) return true;
      if (RetypesDTypeAttr(a)) return true;
    }
    return false;
  }

  void CollectNames(const GraphProto& g) {
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()}) {
      for (const ValueInfoProto& v : *list) used_.insert(v.name());
    }
    for (const TensorProto& t : g.initializer()) used_.insert(t.name());
    for (const NodeProto& n : g.node()) {
      used_nodes_.insert(n.name());
      for (const std::string& s : n.input()) used_.insert(s);
      for (const std::string& s : n.output()) used_.insert(s);
      for (const AttributeProto& a : n.attribute()) {
        if (a.has_g()) CollectNames(a.g());
        for (const GraphProto& sub : a.graphs()) CollectNames(sub);
      }
    }
  }

  // Retypes one graph and its subgraphs in place.
  absl::Status Retype(GraphProto& g) {
    for (auto* list :
         {g.mutable_input(), g.mutable_output(), g.mutable_value_info()}) {
      for (ValueInfoProto& v : *list) RetypeInfo(v);
    }
    for (TensorProto& t : *g.mutable_initializer()) {
      if (auto s = RetypeTensor(t); !s.ok()) return s;
    }
    absl::flat_hash_map<std::string, const NodeProto*> producer;
    google::protobuf::RepeatedPtrField<NodeProto> rewritten;
    for (NodeProto& node : *g.mutable_node()) {
      bool cast_to_narrow = false;
      int narrow = 0;
      for (AttributeProto& a : *node.mutable_attribute()) {
        if (a.has_g()) {
          if (auto s = Retype(*a.mutable_g()); !s.ok()) return s;
        }
        for (GraphProto& sub : *a.mutable_graphs()) {
          if (auto s = Retype(sub); !s.ok()) return s;
        }
        if (a.has_t()) {
          if (auto s = RetypeTensor(*a.mutable_t()); !s.ok()) return s;
        }
        if (RetypesDTypeAttr(a)) {
          narrow = static_cast<int>(a.i());
          a.set_i(CarrierType(narrow));
          changed_ = true;
          cast_to_narrow = node.op_type() == "Cast" && node.domain().empty();
        }
      }
      if (cast_to_narrow && node.input_size() == 1) {
        // The value must be in the narrow range before the Cast to the wider
        // carrier: the widened arithmetic wraps before its Cast back (nodes
        // named "*_wrap*", plugin/low_precision.cc); any other source is
        // wrapped here.
        auto it = producer.find(node.input(0));
        const bool wrapped = it != producer.end() &&
                             (it->second->op_type() == "Sub" ||
                              it->second->op_type() == "BitwiseAnd") &&
                             absl::StrContains(it->second->name(), "_wrap");
        if (!wrapped) {
          std::vector<NodeProto> wrap =
              WrapInt32(CastTo(node.input(0), TensorProto::INT32, node.name()),
                        narrow, node.name());
          node.set_input(0, wrap.back().output(0));
          for (NodeProto& n : wrap) *rewritten.Add() = std::move(n);
        }
      }
      NodeProto* added = rewritten.Add();
      *added = std::move(node);
      for (const std::string& out : added->output()) producer[out] = added;
    }
    // `producer` points into `rewritten`, which is not read after this.
    g.mutable_node()->Swap(&rewritten);
    return absl::OkStatus();
  }

  // Opset 17 has no BitwiseAnd/BitwiseXor. The narrow wraps use them with
  // constant masks only: x & (2^k - 1) is Mod(x, 2^k) (floor modulo, exact
  // for every int32 x), and r ^ 2^(k-1) for such an r in [0, 2^k) is
  // Mod(r + 2^(k-1), 2^k). Other bitwise nodes are left for ONNX Runtime to
  // name.
  // `outer`: the constants of the enclosing graphs (subgraphs read outer
  // values by name).
  void LegalizeBitwise(
      GraphProto& g,
      const absl::flat_hash_map<std::string, int64_t>* outer = nullptr) {
    absl::flat_hash_map<std::string, int64_t> constants;
    if (outer != nullptr) constants = *outer;
    for (const TensorProto& t : g.initializer()) {
      int64_t v;
      if (Int32Scalar(t, &v)) constants[t.name()] = v;
    }
    // Output of a rewritten mask -> its modulus 2^k.
    absl::flat_hash_map<std::string, int64_t> masked;
    google::protobuf::RepeatedPtrField<NodeProto> rewritten;
    for (NodeProto& node : *g.mutable_node()) {
      for (AttributeProto& a : *node.mutable_attribute()) {
        if (a.has_g()) LegalizeBitwise(*a.mutable_g(), &constants);
        for (GraphProto& sub : *a.mutable_graphs()) {
          LegalizeBitwise(sub, &constants);
        }
      }
      if (node.op_type() == "Constant" && node.output_size() == 1) {
        for (const AttributeProto& a : node.attribute()) {
          int64_t v;
          if (a.name() == "value" && Int32Scalar(a.t(), &v)) {
            constants[node.output(0)] = v;
          }
        }
      }
      const bool is_and = node.op_type() == "BitwiseAnd";
      const bool is_xor = node.op_type() == "BitwiseXor";
      if ((is_and || is_xor) && node.domain().empty() &&
          node.input_size() == 2) {
        auto c = constants.find(node.input(1));
        if (c != constants.end()) {
          const int64_t v = c->second;
          const std::string base = node.name();
          if (is_and && v > 0 && v < (int64_t{1} << 30) && ((v + 1) & v) == 0) {
            const std::string out = node.output(0);
            std::vector<NodeProto> nodes;
            nodes.push_back(ModNode(node.input(0), v + 1, out, base, &nodes));
            for (NodeProto& n : nodes) *rewritten.Add() = std::move(n);
            masked[out] = v + 1;
            continue;
          }
          auto m = masked.find(node.input(0));
          if (is_xor && m != masked.end() && v * 2 == m->second) {
            std::vector<NodeProto> nodes;
            const std::string sum = Fresh(base + "_add");
            NodeProto add =
                Op("Add", {node.input(0), node.input(1)}, sum, base + "_add");
            nodes.push_back(std::move(add));
            nodes.push_back(
                ModNode(sum, m->second, node.output(0), base, &nodes));
            for (NodeProto& n : nodes) *rewritten.Add() = std::move(n);
            continue;
          }
        }
      }
      *rewritten.Add() = std::move(node);
    }
    g.mutable_node()->Swap(&rewritten);
  }

 private:
  void RetypeInfo(ValueInfoProto& v) {
    if (!v.type().has_tensor_type()) return;
    const int t = v.type().tensor_type().elem_type();
    if (!Retypes(t)) return;
    v.mutable_type()->mutable_tensor_type()->set_elem_type(CarrierType(t));
    changed_ = true;
  }

  // Packed codes (or one per int32_data entry) -> one value per byte.
  absl::Status RetypeTensor(TensorProto& t) {
    const int type = t.data_type();
    if (!Retypes(type)) return absl::OkStatus();
    if (t.data_location() == TensorProto::EXTERNAL) {
      return absl::UnimplementedError(absl::StrCat(
          "initializer '", t.name(),
          "' of a narrow integer type holds external data; carrying it in "
          "INT8/UINT8 below its first opset needs it inline"));
    }
    int64_t n = 1;
    for (int64_t d : t.dims()) n *= d;
    const int bits = NarrowBits(type);
    const int per_byte = 8 / bits;
    const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
    std::vector<uint8_t> codes(n);
    if (!t.raw_data().empty()) {
      const std::string& raw = t.raw_data();
      for (int64_t i = 0; i < n; ++i) {
        const size_t byte = static_cast<size_t>(i / per_byte);
        if (byte >= raw.size()) break;
        codes[i] =
            (static_cast<uint8_t>(raw[byte]) >> (bits * (i % per_byte))) & mask;
      }
    } else if (t.int32_data_size() == n) {
      for (int64_t i = 0; i < n; ++i) codes[i] = t.int32_data(i) & mask;
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const int k = static_cast<int>(i / per_byte);
        if (k >= t.int32_data_size()) break;
        codes[i] = (static_cast<uint32_t>(t.int32_data(k)) >>
                    (bits * (i % per_byte))) &
                   mask;
      }
    }
    std::string bytes(n, '\0');
    const uint8_t sign = static_cast<uint8_t>(1 << (bits - 1));
    for (int64_t i = 0; i < n; ++i) {
      int v = codes[i];
      if (IsSignedNarrow(type) && (codes[i] & sign)) v -= (1 << bits);
      bytes[i] = static_cast<char>(static_cast<uint8_t>(v));
    }
    t.clear_int32_data();
    t.set_raw_data(std::move(bytes));
    t.set_data_type(CarrierType(type));
    changed_ = true;
    return absl::OkStatus();
  }

  std::string FreshIn(absl::flat_hash_set<std::string>* used,
                      const std::string& base) {
    std::string name = base;
    for (int i = 1; used->contains(name); ++i)
      name = absl::StrCat(base, "_", i);
    used->insert(name);
    return name;
  }
  std::string Fresh(const std::string& base) { return FreshIn(&used_, base); }

  NodeProto Op(const std::string& type, const std::vector<std::string>& ins,
               const std::string& out, const std::string& node_base) {
    NodeProto n;
    n.set_op_type(type);
    n.set_name(FreshIn(&used_nodes_, node_base));
    for (const std::string& in : ins) n.add_input(in);
    n.add_output(out);
    return n;
  }

  std::string Int32Constant(int64_t v, const std::string& base,
                            std::vector<NodeProto>* nodes) {
    const std::string name = Fresh(absl::StrCat(base, "_c", v));
    NodeProto c = Op("Constant", {}, name, base + "_const");
    AttributeProto* a = c.add_attribute();
    a->set_name("value");
    a->set_type(AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(TensorProto::INT32);
    a->mutable_t()->add_int32_data(static_cast<int32_t>(v));
    nodes->push_back(std::move(c));
    return name;
  }

  // Mod(x, modulus) (floor modulo) into `out`; its constant goes to `nodes`.
  NodeProto ModNode(const std::string& x, int64_t modulus,
                    const std::string& out, const std::string& base,
                    std::vector<NodeProto>* nodes) {
    const std::string m = Int32Constant(modulus, base, nodes);
    NodeProto mod = Op("Mod", {x, m}, out, base + "_mod");
    AttributeProto* fmod = mod.add_attribute();
    fmod->set_name("fmod");
    fmod->set_type(AttributeProto::INT);
    fmod->set_i(0);
    return mod;
  }

  // Cast(x -> elem_type) queued for the wrap that follows; its output.
  std::string CastTo(const std::string& x, int elem_type,
                     const std::string& base) {
    const std::string out = Fresh(x + "_i32");
    NodeProto cast = Op("Cast", {x}, out, base + "_carrier_i32");
    AttributeProto* to = cast.add_attribute();
    to->set_name("to");
    to->set_type(AttributeProto::INT);
    to->set_i(elem_type);
    queued_cast_ = std::move(cast);
    return out;
  }

  // The Cast queued by CastTo, then i32 `x` wrapped to the range of
  // `narrow`: Mod(x, 2^bits), minus 2^bits where that is >= 2^(bits-1) for
  // the signed types (valid at every opset). The last node's output is the
  // result.
  std::vector<NodeProto> WrapInt32(const std::string& x, int narrow,
                                   const std::string& base) {
    const int bits = NarrowBits(narrow);
    const std::string b = base + "_carrier_wrap";
    std::vector<NodeProto> nodes;
    nodes.push_back(std::move(queued_cast_));
    const std::string low = Fresh(b);
    NodeProto mod = ModNode(x, int64_t{1} << bits, low, b, &nodes);
    nodes.push_back(std::move(mod));
    if (!IsSignedNarrow(narrow)) return nodes;
    const std::string sign = Int32Constant(int64_t{1} << (bits - 1), b, &nodes);
    const std::string full = Int32Constant(int64_t{1} << bits, b, &nodes);
    const std::string high = Fresh(b + "_high");
    nodes.push_back(Op("GreaterOrEqual", {low, sign}, high, b + "_ge"));
    const std::string shifted = Fresh(b + "_sub");
    nodes.push_back(Op("Sub", {low, full}, shifted, b + "_sub"));
    nodes.push_back(Op("Where", {high, shifted, low}, Fresh(b), b + "_where"));
    return nodes;
  }

  int opset_;
  bool changed_ = false;
  absl::flat_hash_set<std::string> used_;
  absl::flat_hash_set<std::string> used_nodes_;
  NodeProto queued_cast_;
};

}  // namespace

int NarrowIntFirstOpset(int elem_type) {
  switch (elem_type) {
    case kUInt4:
    case kInt4:
      return 21;
    case kUInt2:
    case kInt2:
      return 25;
    default:
      return 0;
  }
}

absl::Status CarryNarrowIntsBelowTheirOpset(onnx::ModelProto& model) {
  int opset = 0;
  for (const onnx::OperatorSetIdProto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  }
  if (opset == 0 || opset >= 25) return absl::OkStatus();
  Carrier carrier(opset);
  bool needed = carrier.NeedsRetype(model.graph());
  for (const onnx::FunctionProto& f : model.functions()) {
    for (const NodeProto& n : f.node()) {
      needed = needed || carrier.NeedsRetype(n);
    }
  }
  if (!needed) return absl::OkStatus();
  carrier.CollectNames(model.graph());
  std::vector<GraphProto> bodies(model.functions_size());
  for (int f = 0; f < model.functions_size(); ++f) {
    bodies[f].mutable_node()->Swap(model.mutable_functions(f)->mutable_node());
    carrier.CollectNames(bodies[f]);
  }
  absl::Status status = carrier.Retype(*model.mutable_graph());
  for (int f = 0; f < model.functions_size() && status.ok(); ++f) {
    status = carrier.Retype(bodies[f]);
  }
  if (status.ok() && carrier.changed() && opset < 18) {
    carrier.LegalizeBitwise(*model.mutable_graph());
    for (GraphProto& body : bodies) carrier.LegalizeBitwise(body);
  }
  for (int f = 0; f < model.functions_size(); ++f) {
    model.mutable_functions(f)->mutable_node()->Swap(bodies[f].mutable_node());
  }
  return status;
}

}  // namespace jax2onnx::plugin
