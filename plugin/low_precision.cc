// Widening of bf16/f16 nodes for ONNX Runtime's CPU provider (see
// low_precision.h for the policy and its accuracy).
//
// Which ops ORT 1.30's CPU provider runs on bf16 was probed with
// onnxruntime-node 1.30 on one-node models at opsets 17..26 (f32 graph I/O
// Cast at the boundary): only Identity, Cast, Reshape, Transpose, Concat,
// Slice, Gather, GatherND, GatherElements, Unsqueeze, Squeeze, Split,
// ScatterND, ScatterElements, Shape, Flatten load for every opset (plus Sign,
// IsNaN/IsInf from 20 and LayerNormalization, which are widened anyway);
// Add, Sub, Mul, Div, Pow, Max, Min, Mod, comparisons, every unary math op,
// Where, Clip, Expand, Pad, Tile, Size, reductions, ArgMax/ArgMin, CumSum,
// MatMul, Gemm, Conv and Softmax fail with "Could not find an
// implementation", and TopK, Einsum and Range reject bf16 in their schema.
// This matches onnxruntime/core/providers/cpu/cpu_execution_provider.cc,
// where the arithmetic kernels are registered typed for float, double and
// integers (the few MLFloat16 ones, Relu/LeakyRelu/Gemm/MaxPool, only under
// MLAS_F16VEC_INTRINSICS_SUPPORTED) and the data-movement kernels are
// type-generic. For f16 every op loads, but a node without an f16 kernel is
// wrapped in Casts by InsertCastTransformer (onnxruntime/core/optimizer/
// insert_cast_transformer.cc), whose RemoveDuplicateCastTransformer then
// removes the Cast pairs between such nodes and with them the f16 rounding
// (probed: Cast(f16) -> Exp -> Log -> Cast(f32) returns its input
// unrounded), so f16 is widened on the same list. tests/api/
// low_precision_test.cc re-runs the list against the installed ORT.
#include "plugin/low_precision.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "plugin/float4_e2m1.h"
#include "plugin/onnx_narrow_codes.h"

namespace jax2onnx::plugin {
namespace {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::NodeProto;
using onnx::TensorProto;
using onnx::ValueInfoProto;

constexpr int kUnknown = TensorProto::UNDEFINED;

using onnx_codes::kFloat4E2M1;
using onnx_codes::kFloat8E4M3FN;
using onnx_codes::kFloat8E4M3FNUZ;
using onnx_codes::kFloat8E5M2;
using onnx_codes::kFloat8E5M2FNUZ;
using onnx_codes::kFloat8E8M0;
using onnx_codes::kInt2;
using onnx_codes::kInt4;
using onnx_codes::kUInt2;
using onnx_codes::kUInt4;

bool IsNarrowFloat8(int elem_type) {
  return elem_type == kFloat8E4M3FN || elem_type == kFloat8E4M3FNUZ ||
         elem_type == kFloat8E5M2 || elem_type == kFloat8E5M2FNUZ;
}

bool IsNarrowInt(int elem_type) {
  return elem_type == kInt4 || elem_type == kUInt4 || elem_type == kInt2 ||
         elem_type == kUInt2;
}

// bf16/f16 and JAX's narrow types (float8, float4, int4; docs/dtypes.md):
// ORT's CPU provider has Cast for them but no arithmetic.
bool IsLowPrecision(int elem_type) {
  return elem_type == TensorProto::BFLOAT16 ||
         elem_type == TensorProto::FLOAT16 || IsNarrowFloat8(elem_type) ||
         elem_type == kFloat4E2M1 || elem_type == kFloat8E8M0 ||
         IsNarrowInt(elem_type);
}

bool IsWideInt(int elem_type) {
  switch (elem_type) {
    case TensorProto::INT8:
    case TensorProto::INT16:
    case TensorProto::INT32:
    case TensorProto::INT64:
    case TensorProto::UINT8:
    case TensorProto::UINT16:
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      return true;
    default:
      return false;
  }
}

// What a low-precision value widens to: f32, or i32 for int4/uint4 (every
// value exact in both).
int WideType(int elem_type) {
  return IsNarrowInt(elem_type) ? TensorProto::INT32 : TensorProto::FLOAT;
}

// The suffix a widened value's name takes, after its wide type.
const char* WideSuffix(int wide_type) {
  return wide_type == TensorProto::INT32 ? "_i32" : "_f32";
}

// Element types of the values visible in one graph, falling back to the
// enclosing graphs (subgraphs capture outer values by name).
class TypeScope {
 public:
  explicit TypeScope(const TypeScope* parent) : parent_(parent) {}

  int Get(const std::string& name) const {
    for (const TypeScope* s = this; s != nullptr; s = s->parent_) {
      auto it = s->types_.find(name);
      if (it != s->types_.end()) return it->second;
    }
    return kUnknown;
  }
  void Set(const std::string& name, int elem_type) {
    if (!name.empty() && elem_type != kUnknown) types_[name] = elem_type;
  }
  void SetFrom(const ValueInfoProto& v) {
    if (v.type().has_tensor_type())
      Set(v.name(), v.type().tensor_type().elem_type());
  }

 private:
  const TypeScope* parent_;
  absl::flat_hash_map<std::string, int> types_;
};

const AttributeProto* FindAttr(const NodeProto& node, absl::string_view name) {
  for (const AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int GraphOutputType(const GraphProto* g, int i) {
  if (g == nullptr || i < 0 || i >= g->output_size()) return kUnknown;
  const ValueInfoProto& v = g->output(i);
  return v.type().has_tensor_type() ? v.type().tensor_type().elem_type()
                                    : kUnknown;
}

// The element type of output `k` of `node`, derived from its op, attributes,
// input types and subgraph outputs (the value_info of the model may not list
// every intermediate value).
int InferOutputType(const NodeProto& node, const std::vector<int>& in_types,
                    int k) {
  const std::string& op = node.op_type();
  auto in = [&](size_t i) {
    return i < in_types.size() ? in_types[i] : kUnknown;
  };
  if (op == "Cast") {
    const AttributeProto* to = FindAttr(node, "to");
    return to ? static_cast<int>(to->i()) : kUnknown;
  }
  if (op == "CastLike") return in(1);
  if (op == "Shape" || op == "Size" || op == "ArgMax" || op == "ArgMin" ||
      op == "NonZero") {
    return TensorProto::INT64;
  }
  if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
      op == "GreaterOrEqual" || op == "IsNaN" || op == "IsInf" || op == "Not" ||
      op == "And" || op == "Or" || op == "Xor") {
    return TensorProto::BOOL;
  }
  if (op == "TopK") return k == 0 ? in(0) : TensorProto::INT64;
  if (op == "Where") return in(1) != kUnknown ? in(1) : in(2);
  if (op == "Constant" || op == "ConstantOfShape") {
    const AttributeProto* value = FindAttr(node, "value");
    if (value != nullptr && value->has_t()) return value->t().data_type();
    if (op == "ConstantOfShape") return TensorProto::FLOAT;
    if (FindAttr(node, "value_float") || FindAttr(node, "value_floats")) {
      return TensorProto::FLOAT;
    }
    if (FindAttr(node, "value_int") || FindAttr(node, "value_ints")) {
      return TensorProto::INT64;
    }
    return kUnknown;
  }
  if (op == "If") {
    const AttributeProto* then_branch = FindAttr(node, "then_branch");
    return GraphOutputType(then_branch ? &then_branch->g() : nullptr, k);
  }
  if (op == "Loop" || op == "Scan") {
    // Loop body outputs: cond, carried..., scan outputs...; Scan body:
    // carried..., scan outputs....
    const AttributeProto* body = FindAttr(node, "body");
    const int t =
        GraphOutputType(body ? &body->g() : nullptr, op == "Loop" ? k + 1 : k);
    if (t != kUnknown) return t;
    return op == "Loop" ? in(static_cast<size_t>(k) + 2) : kUnknown;
  }
  return in(0);
}

// Rewrites one graph (and its subgraphs) in place.
class Widener {
 public:
  Widener(absl::flat_hash_set<std::string>* used_names,
          absl::flat_hash_set<std::string>* used_node_names)
      : used_names_(used_names), used_node_names_(used_node_names) {}

  void Run(GraphProto& graph, const TypeScope* parent) {
    TypeScope scope(parent);
    absl::flat_hash_map<std::string, const ValueInfoProto*> value_infos;
    for (const ValueInfoProto& v : graph.input()) scope.SetFrom(v);
    for (const TensorProto& t : graph.initializer()) {
      scope.Set(t.name(), t.data_type());
    }
    for (const ValueInfoProto& v : graph.value_info()) {
      scope.SetFrom(v);
      value_infos[v.name()] = &v;
    }
    for (const ValueInfoProto& v : graph.output()) {
      scope.SetFrom(v);
      value_infos.emplace(v.name(), &v);
    }

    std::vector<ValueInfoProto> new_infos;
    // bf16/f16 value -> its f32 copy made earlier in this graph.
    absl::flat_hash_map<std::string, std::string> widened;
    google::protobuf::RepeatedPtrField<NodeProto> rewritten;
    for (NodeProto& node : *graph.mutable_node()) {
      for (AttributeProto& a : *node.mutable_attribute()) {
        if (a.has_g()) Run(*a.mutable_g(), &scope);
        for (GraphProto& g : *a.mutable_graphs()) Run(g, &scope);
      }
      std::vector<int> in_types;
      for (const std::string& name : node.input()) {
        in_types.push_back(name.empty() ? kUnknown : scope.Get(name));
      }
      if (!node.domain().empty()) {
        // A call of a model-local function: its body is widened later with
        // these argument types (FunctionProto inputs carry no types).
        std::vector<int>& seen = call_input_types_[absl::StrCat(
            node.domain(), "::", node.op_type())];
        seen.resize(std::max(seen.size(), in_types.size()), kUnknown);
        for (size_t i = 0; i < in_types.size(); ++i) {
          if (seen[i] == kUnknown) seen[i] = in_types[i];
        }
      }
      std::vector<int> out_types;
      for (int k = 0; k < node.output_size(); ++k) {
        if (node.output(k).empty()) {  // an optional output not produced
          out_types.push_back(kUnknown);
          continue;
        }
        int t = scope.Get(node.output(k));
        if (t == kUnknown) t = InferOutputType(node, in_types, k);
        out_types.push_back(t);
        scope.Set(node.output(k), t);
      }
      if (node.op_type() == "Cast" && node.domain().empty() &&
          !out_types.empty() && IsNarrowInt(out_types[0]) &&
          !in_types.empty() && IsWideInt(in_types[0])) {
        // XLA's integer narrowing to int4 wraps where ORT's Cast clamps:
        // keep the low 4 bits first (a no-op on values already in range).
        std::string x = node.input(0);
        if (in_types[0] != TensorProto::INT32) {
          const std::string i32 = Fresh(absl::StrCat(x, "_i32"));
          *rewritten.Add() =
              CastNode(x, i32, TensorProto::INT32,
                       FreshNodeName(absl::StrCat(node.name(), "_to_i32")));
          x = i32;
        }
        std::vector<NodeProto> wrap =
            WrapToNarrowBits(x, out_types[0], node.name());
        node.set_input(0, wrap.back().output(0));
        for (NodeProto& n : wrap) *rewritten.Add() = std::move(n);
        *rewritten.Add() = std::move(node);
        continue;
      }
      if (node.op_type() == "Cast" && node.domain().empty() &&
          !out_types.empty() && out_types[0] == kFloat4E2M1) {
        // ONNX Runtime has no FLOAT4E2M1 Cast: ml_dtypes' rounding into
        // an f32 container (plugin/float4_e2m1.h).
        std::vector<NodeProto> round;
        const absl::Status s = AppendRoundToFloat4E2M1(
            node.input(0), in_types.empty() ? kUnknown : in_types[0],
            node.output(0), node.name(), Names(), &round);
        if (!s.ok()) {
          if (status_.ok()) status_ = s;
          *rewritten.Add() = std::move(node);
          continue;
        }
        for (NodeProto& n : round) *rewritten.Add() = std::move(n);
        continue;
      }
      if (node.op_type() == "Cast" && node.domain().empty() &&
          !out_types.empty() && IsNarrowFloat8(out_types[0]) &&
          FindAttr(node, "saturate") == nullptr) {
        // A recipe's Cast to float8: XLA's conversion does not saturate.
        AttributeProto* saturate = node.add_attribute();
        saturate->set_name("saturate");
        saturate->set_type(AttributeProto::INT);
        saturate->set_i(0);
        if (!in_types.empty() && in_types[0] == TensorProto::FLOAT) {
          std::vector<NodeProto> guard =
              GuardFloat8Overflow(node.input(0), out_types[0], node.name());
          node.set_input(0, guard.back().output(0));
          for (NodeProto& n : guard) *rewritten.Add() = std::move(n);
        }
      }
      if (node.op_type() == "Cast" && node.domain().empty() &&
          !out_types.empty() && out_types[0] == kFloat8E8M0 &&
          FindAttr(node, "round_mode") == nullptr) {
        // A recipe's Cast to float8_e8m0fnu: ml_dtypes' rounding.
        SetRoundNearest(node);
        if (!in_types.empty() && in_types[0] == TensorProto::FLOAT) {
          std::vector<NodeProto> guard = GuardE8M0(node.input(0), node.name());
          node.set_input(0, guard.back().output(0));
          for (NodeProto& n : guard) *rewritten.Add() = std::move(n);
        }
      }
      if (!NeedsWidening(node, in_types, out_types)) {
        *rewritten.Add() = std::move(node);
        continue;
      }
      for (int i = 0; i < node.input_size(); ++i) {
        if (!IsLowPrecision(in_types[i])) continue;
        const std::string& name = node.input(i);
        auto it = widened.find(name);
        if (it == widened.end()) {
          const int wide = WideType(in_types[i]);
          const std::string f32 = Fresh(absl::StrCat(name, WideSuffix(wide)));
          *rewritten.Add() =
              CastNode(name, f32, wide,
                       FreshNodeName(absl::StrCat(node.name(), "_widen_in")));
          scope.Set(f32, wide);
          it = widened.emplace(name, f32).first;
        }
        node.set_input(i, it->second);
      }
      std::vector<NodeProto> casts_back;
      for (int k = 0; k < node.output_size(); ++k) {
        if (!IsLowPrecision(out_types[k])) continue;
        const std::string name = node.output(k);
        const int wide = WideType(out_types[k]);
        std::string f32 = Fresh(absl::StrCat(name, WideSuffix(wide)));
        node.set_output(k, f32);
        scope.Set(f32, wide);
        auto info = value_infos.find(name);
        if (info != value_infos.end()) {
          ValueInfoProto copy = *info->second;
          copy.set_name(f32);
          copy.mutable_type()->mutable_tensor_type()->set_elem_type(wide);
          new_infos.push_back(std::move(copy));
        }
        if (IsNarrowInt(out_types[k])) {
          // XLA wraps an int4 result modulo 16 where ORT's Cast clamps:
          // keep the low 4 bits (sign-extended for INT4) first.
          for (NodeProto& n :
               WrapToNarrowBits(f32, out_types[k], node.name())) {
            casts_back.push_back(std::move(n));
          }
          f32 = casts_back.back().output(0);
        }
        if (IsNarrowFloat8(out_types[k])) {
          for (NodeProto& n :
               GuardFloat8Overflow(f32, out_types[k], node.name())) {
            casts_back.push_back(std::move(n));
          }
          f32 = casts_back.back().output(0);
        }
        if (out_types[k] == kFloat8E8M0) {
          for (NodeProto& n : GuardE8M0(f32, node.name())) {
            casts_back.push_back(std::move(n));
          }
          f32 = casts_back.back().output(0);
        }
        if (out_types[k] == kFloat4E2M1) {
          std::vector<NodeProto> round;
          const absl::Status s = AppendRoundToFloat4E2M1(
              f32, TensorProto::FLOAT, name,
              absl::StrCat(node.name(), "_round_out"), Names(), &round);
          if (!s.ok() && status_.ok()) status_ = s;
          for (NodeProto& n : round) casts_back.push_back(std::move(n));
          continue;
        }
        casts_back.push_back(
            CastNode(f32, name, out_types[k],
                     FreshNodeName(absl::StrCat(node.name(), "_round_out"))));
      }
      *rewritten.Add() = std::move(node);
      for (NodeProto& c : casts_back) *rewritten.Add() = std::move(c);
    }
    graph.mutable_node()->Swap(&rewritten);
    for (ValueInfoProto& v : new_infos) *graph.add_value_info() = std::move(v);
  }

 private:
  static bool NeedsWidening(const NodeProto& node,
                            const std::vector<int>& in_types,
                            const std::vector<int>& out_types) {
    bool low = false;
    for (int t : in_types) low = low || IsLowPrecision(t);
    for (int t : out_types) low = low || IsLowPrecision(t);
    if (!low) return false;
    const AttributeProto* reduction = FindAttr(node, "reduction");
    if (OrtCpuMovesLowPrecision(node.op_type(),
                                reduction ? reduction->s() : "none")) {
      return false;
    }
    // Ops whose output type an attribute sets would need that attribute
    // rewritten too; ORT folds Constant into an initializer, and the
    // converters emit no other such op.
    return node.op_type() != "Constant" && node.domain().empty();
  }

  // Value and node names unique in the whole model (ORT rejects duplicate
  // node names too).
  static std::string FreshIn(absl::flat_hash_set<std::string>* used,
                             const std::string& base) {
    std::string name = base;
    for (int i = 1; used->contains(name); ++i) {
      name = absl::StrCat(base, "_", i);
    }
    used->insert(name);
    return name;
  }
  std::string Fresh(const std::string& base) {
    return FreshIn(used_names_, base);
  }
  std::string FreshNodeName(const std::string& base) {
    return FreshIn(used_node_names_, base);
  }

  static NodeProto CastNode(const std::string& from, const std::string& to,
                            int elem_type, const std::string& node_name) {
    NodeProto cast;
    cast.set_op_type("Cast");
    cast.set_name(node_name);
    cast.add_input(from);
    cast.add_output(to);
    AttributeProto* attr = cast.add_attribute();
    attr->set_name("to");
    attr->set_type(AttributeProto::INT);
    attr->set_i(elem_type);
    if (elem_type == kFloat8E8M0) SetRoundNearest(cast);
    if (IsNarrowFloat8(elem_type)) {
      // XLA's and ml_dtypes' conversion does not saturate: past the largest
      // finite value it gives inf (e5m2) or NaN (the fn/fnuz types).
      AttributeProto* saturate = cast.add_attribute();
      saturate->set_name("saturate");
      saturate->set_type(AttributeProto::INT);
      saturate->set_i(0);
    }
    return cast;
  }

  // Cast-24's round_mode for FLOAT8E8M0: "nearest" (the default "up"
  // rounds 0.3 to 0.5; probed in ONNX Runtime 1.30).
  static void SetRoundNearest(NodeProto& cast) {
    AttributeProto* mode = cast.add_attribute();
    mode->set_name("round_mode");
    mode->set_type(AttributeProto::STRING);
    mode->set_s("nearest");
  }

  // The nodes of a guard or wrap sequence, named after `base`: a scalar
  // Constant's output is a fresh `base + value_suffix` (its node
  // `base_const`), an op's output and node are fresh `base + op_suffix`.
  class NodeSequence {
   public:
    NodeSequence(Widener& widener, std::string base, std::string op_suffix)
        : widener_(widener),
          base_(std::move(base)),
          op_suffix_(std::move(op_suffix)) {}
    std::string FloatConstant(float v, absl::string_view value_suffix) {
      TensorProto t;
      t.set_data_type(TensorProto::FLOAT);
      t.add_float_data(v);
      return Constant(std::move(t), value_suffix);
    }
    std::string Int32Constant(int32_t v, absl::string_view value_suffix) {
      TensorProto t;
      t.set_data_type(TensorProto::INT32);
      t.add_int32_data(v);
      return Constant(std::move(t), value_suffix);
    }
    std::string Op(const std::string& type,
                   const std::vector<std::string>& inputs) {
      const std::string out = widener_.Fresh(base_ + op_suffix_);
      NodeProto n;
      n.set_op_type(type);
      n.set_name(widener_.FreshNodeName(base_ + op_suffix_));
      for (const std::string& in : inputs) n.add_input(in);
      n.add_output(out);
      nodes_.push_back(std::move(n));
      return out;
    }
    std::vector<NodeProto> Take() { return std::move(nodes_); }

   private:
    std::string Constant(TensorProto value, absl::string_view value_suffix) {
      const std::string name =
          widener_.Fresh(absl::StrCat(base_, value_suffix));
      NodeProto c;
      c.set_op_type("Constant");
      c.set_name(widener_.FreshNodeName(absl::StrCat(base_, "_const")));
      c.add_output(name);
      AttributeProto* a = c.add_attribute();
      a->set_name("value");
      a->set_type(AttributeProto::TENSOR);
      *a->mutable_t() = std::move(value);
      nodes_.push_back(std::move(c));
      return name;
    }
    Widener& widener_;
    std::string base_, op_suffix_;
    std::vector<NodeProto> nodes_;
  };

  // ONNX Runtime 1.30's Cast to FLOAT8E8M0 with round_mode "nearest" agrees
  // with ml_dtypes on positive finite values (halfway values round up) but
  // (probed) maps 0, -0 and negatives to 2^-127 and inf to 2^127 where
  // ml_dtypes gives NaN, and rounds (2^-127, 1.5*2^-127) down where
  // ml_dtypes gives 2^-126. So the f32 `x` becomes NaN unless x > 0 and
  // below 1.5*2^127 (which rounds past the largest value, 2^127: NaN), and
  // 2^-126 on (2^-127, 2^-126). The last node's output is the guarded value.
  std::vector<NodeProto> GuardE8M0(const std::string& x,
                                   const std::string& base) {
    NodeSequence seq(*this, base, "_guard");
    auto constant = [&](float v) { return seq.FloatConstant(v, "_limit"); };
    auto op = [&](const std::string& type, std::vector<std::string> ins) {
      return seq.Op(type, std::move(ins));
    };
    const float min_normal = std::ldexp(1.0f, -126);
    const std::string in_range = op(
        "And", {op("Greater", {x, constant(std::ldexp(1.0f, -127))}),
                op("Less", {x, constant(min_normal)})});
    const std::string lifted = op("Where", {in_range, constant(min_normal), x});
    const std::string ok =
        op("And", {op("Greater", {x, constant(0.0f)}),
                   op("Less", {x, constant(std::ldexp(1.5f, 127))})});
    op("Where", {ok, lifted,
                 constant(std::numeric_limits<float>::quiet_NaN())});
    return seq.Take();
  }

  // ONNX Runtime 1.30's non-saturating Cast to float8 rounds values near
  // the top of the range differently from XLA/ml_dtypes (probed: f32 480 ->
  // e4m3fn gives 448, not NaN; 61440 -> e5m2 gives NaN, not inf). Past the
  // format's overflow threshold (halfway between its largest finite value
  // and the next step, the tie going to the even code) the f32 `x` becomes
  // x * inf, which the Cast maps exactly (inf for e5m2, NaN for the others);
  // NaN and smaller values pass unchanged. The last node's output is the
  // guarded value.
  std::vector<NodeProto> GuardFloat8Overflow(const std::string& x,
                                             int elem_type,
                                             const std::string& base) {
    // (threshold, whether the threshold itself overflows): e4m3fn max 448
    // (code 0x7E, even: 464 rounds down); e4m3fnuz max 240 (0x7F, odd);
    // e5m2 and e5m2fnuz max 57344 (odd codes: 61440 rounds up).
    float threshold = 464.0f;
    bool inclusive = false;
    if (elem_type == kFloat8E4M3FNUZ) {
      threshold = 248.0f;
      inclusive = true;
    } else if (elem_type == kFloat8E5M2 || elem_type == kFloat8E5M2FNUZ) {
      threshold = 61440.0f;
      inclusive = true;
    }
    NodeSequence seq(*this, base, "_guard");
    auto constant = [&](float v) { return seq.FloatConstant(v, "_limit"); };
    auto op = [&](const std::string& type, std::vector<std::string> ins) {
      return seq.Op(type, std::move(ins));
    };
    const std::string abs = op("Abs", {x});
    const std::string over = op(inclusive ? "GreaterOrEqual" : "Greater",
                                {abs, constant(threshold)});
    const std::string inf =
        op("Mul", {x, constant(std::numeric_limits<float>::infinity())});
    op("Where", {over, inf, x});
    return seq.Take();
  }

  // i32 `x` -> ((x & 15) ^ 8) - 8 (signed) or x & 15: the int4 value XLA's
  // wrapping narrowing keeps; ((x & 3) ^ 2) - 2 or x & 3 for int2/uint2
  // (ORT 1.30's Cast to INT2/UINT2 wraps already, probed; kept explicit).
  // The last node's output is the result.
  std::vector<NodeProto> WrapToNarrowBits(const std::string& x, int elem_type,
                                          const std::string& base) {
    const bool is_signed = elem_type == kInt4 || elem_type == kInt2;
    const int32_t bits = elem_type == kInt2 || elem_type == kUInt2 ? 2 : 4;
    const int32_t mask = (1 << bits) - 1;
    const int32_t sign = 1 << (bits - 1);
    NodeSequence seq(*this, base, "_wrap");
    auto constant = [&](int32_t v) {
      return seq.Int32Constant(v, absl::StrCat("_c", v));
    };
    auto binary = [&](const std::string& op, const std::string& a,
                      const std::string& b) {
      return seq.Op(op, {a, b});
    };
    std::string r = binary("BitwiseAnd", x, constant(mask));
    if (is_signed)
      r = binary("Sub", binary("BitwiseXor", r, constant(sign)),
                 constant(sign));
    (void)r;
    return seq.Take();
  }

  absl::flat_hash_set<std::string>* used_names_;
  absl::flat_hash_set<std::string>* used_node_names_;

 public:
  UniqueNames Names() const { return {used_names_, used_node_names_}; }
  // The first error met (a conversion to f4 from a type it cannot round).
  absl::Status status_;

  // "domain::name" of each called function -> element types of the
  // arguments seen at its calls (all calls of one function agree: the
  // converter deduplicates functions by operand types).
  absl::flat_hash_map<std::string, std::vector<int>> call_input_types_;
};

bool DeclaresLowPrecision(const onnx::TypeProto& t) {
  return t.has_tensor_type() && IsLowPrecision(t.tensor_type().elem_type());
}

// Whether a bf16/f16 value can occur at all: every such value descends from
// a declared one (graph input, initializer, value_info, output) or from a
// Cast/Constant producing one. Keeps the pass free for f32 models.
bool MayHoldLowPrecision(const GraphProto& g) {
  for (const auto* list : {&g.input(), &g.output(), &g.value_info()}) {
    for (const ValueInfoProto& v : *list) {
      if (DeclaresLowPrecision(v.type())) return true;
    }
  }
  for (const TensorProto& t : g.initializer()) {
    if (IsLowPrecision(t.data_type())) return true;
  }
  for (const NodeProto& n : g.node()) {
    for (const AttributeProto& a : n.attribute()) {
      if (a.type() == AttributeProto::INT && a.name() == "to" &&
          IsLowPrecision(static_cast<int>(a.i()))) {
        return true;
      }
      if (a.has_t() && IsLowPrecision(a.t().data_type())) return true;
      if (a.has_g() && MayHoldLowPrecision(a.g())) return true;
      for (const GraphProto& sub : a.graphs()) {
        if (MayHoldLowPrecision(sub)) return true;
      }
    }
  }
  return false;
}

void CollectNames(const GraphProto& g, absl::flat_hash_set<std::string>* out,
                  absl::flat_hash_set<std::string>* node_names) {
  for (const ValueInfoProto& v : g.input()) out->insert(v.name());
  for (const ValueInfoProto& v : g.output()) out->insert(v.name());
  for (const ValueInfoProto& v : g.value_info()) out->insert(v.name());
  for (const TensorProto& t : g.initializer()) out->insert(t.name());
  for (const NodeProto& n : g.node()) {
    node_names->insert(n.name());
    for (const std::string& s : n.input()) out->insert(s);
    for (const std::string& s : n.output()) out->insert(s);
    for (const AttributeProto& a : n.attribute()) {
      if (a.has_g()) CollectNames(a.g(), out, node_names);
      for (const GraphProto& sub : a.graphs()) {
        CollectNames(sub, out, node_names);
      }
    }
  }
}

}  // namespace

bool OrtCpuMovesLowPrecision(absl::string_view op_type,
                             absl::string_view reduction) {
  static const auto* const kMoves = new absl::flat_hash_set<std::string>{
      "Identity", "Cast",   "Reshape",  "Transpose",      "Concat",
      "Slice",    "Gather", "GatherND", "GatherElements", "Unsqueeze",
      "Squeeze",  "Split",  "Shape",    "Flatten",        "If",
      "Loop",     "Scan"};
  if (kMoves->contains(op_type)) return true;
  // Scatters move data unless they combine values.
  return (op_type == "ScatterND" || op_type == "ScatterElements") &&
         reduction == "none";
}

absl::Status WidenLowPrecisionForOrtCpu(onnx::ModelProto& model) {
  // Model-local function bodies are widened as graphs whose nodes are
  // borrowed from the FunctionProto (and given back below), with input
  // types taken from the calls.
  std::vector<GraphProto> bodies(model.functions_size());
  bool may_hold = MayHoldLowPrecision(model.graph());
  for (int f = 0; f < model.functions_size(); ++f) {
    onnx::FunctionProto& fp = *model.mutable_functions(f);
    bodies[f].mutable_node()->Swap(fp.mutable_node());
    may_hold = may_hold || MayHoldLowPrecision(bodies[f]);
  }
  auto give_back = [&] {
    for (int f = 0; f < model.functions_size(); ++f) {
      model.mutable_functions(f)->mutable_node()->Swap(
          bodies[f].mutable_node());
    }
  };
  if (!may_hold) {
    give_back();
    return absl::OkStatus();
  }
  absl::flat_hash_set<std::string> used_names;
  absl::flat_hash_set<std::string> used_node_names;
  CollectNames(model.graph(), &used_names, &used_node_names);
  for (const GraphProto& body : bodies) {
    CollectNames(body, &used_names, &used_node_names);
  }
  Widener widener(&used_names, &used_node_names);
  widener.Run(*model.mutable_graph(), nullptr);
  // A function's calls are in the main graph or in bodies of functions
  // listed after it (jax2onnx adds a callee before its callers), so the
  // bodies are widened last to first.
  for (int f = model.functions_size() - 1; f >= 0; --f) {
    const onnx::FunctionProto& fp = model.functions(f);
    GraphProto& body = bodies[f];
    auto types = widener.call_input_types_.find(
        absl::StrCat(fp.domain(), "::", fp.name()));
    for (int i = 0; i < fp.input_size(); ++i) {
      ValueInfoProto* in = body.add_input();
      in->set_name(fp.input(i));
      if (types != widener.call_input_types_.end() &&
          static_cast<size_t>(i) < types->second.size() &&
          types->second[i] != kUnknown) {
        in->mutable_type()->mutable_tensor_type()->set_elem_type(
            types->second[i]);
      }
    }
    widener.Run(body, nullptr);
  }
  give_back();
  if (!widener.status_.ok()) return widener.status_;
  // No FLOAT4E2M1 value can run in ONNX Runtime: f4 values move into f32
  // containers, f4 graph I/O into uint8 codes (plugin/float4_e2m1.h).
  return CarryFloat4E2M1InFloat32(model, widener.Names());
}

}  // namespace jax2onnx::plugin
