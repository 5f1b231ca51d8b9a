// float4_e2m1fn carried in f32 (see float4_e2m1.h for the policy).
//
// Why the arithmetic below is exact: f4_e2m1fn's grid has the quantum 0.5
// on [0, 2) (the subnormal 0.5 and the binade [1, 2)), 1 on [2, 4) and 2 on
// [4, 6]. Dividing |x| by the quantum of its binade is exact (a power of
// two), ONNX's Round rounds half to even, and multiplying back is exact, so
// q * Round(|x| / q) is |x| rounded to nearest-even on the grid; a tie at a
// binade's top (1.75, 3.5) rounds to the even code of the next binade's
// first value (2, 4), as ml_dtypes does; everything past 6 (7 and up round
// to 8 before the Min) saturates to 6, ml_dtypes' infinity() of the format.
#include "plugin/float4_e2m1.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace jax2onnx::plugin {
namespace {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::NodeProto;
using onnx::TensorProto;
using onnx::ValueInfoProto;

// f4_e2m1fn's values by code (sign bit 8; ml_dtypes' decoding,
// jaxpr/narrow_dtype.cc NarrowFloatToDouble).
constexpr float kFloat4Values[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,
                                     4.0f,  6.0f,  -0.0f, -0.5f, -1.0f, -1.5f,
                                     -2.0f, -3.0f, -4.0f, -6.0f};

std::string FreshIn(absl::flat_hash_set<std::string>* used,
                    const std::string& base) {
  std::string name = base;
  for (int i = 1; used->contains(name); ++i) name = absl::StrCat(base, "_", i);
  used->insert(name);
  return name;
}

// Node lists built one op at a time; every op's output is a fresh value
// named after `base`, except the one written to a given name.
class Builder {
 public:
  Builder(const UniqueNames& names, std::string base,
          std::vector<NodeProto>* nodes)
      : names_(names), base_(std::move(base)), nodes_(nodes) {}

  std::string Scalar(int elem_type, double v) {
    TensorProto t;
    t.set_data_type(elem_type);
    switch (elem_type) {
      case TensorProto::DOUBLE:
        t.add_double_data(v);
        break;
      case TensorProto::INT32:
        t.add_int32_data(static_cast<int32_t>(v));
        break;
      default:
        t.add_float_data(static_cast<float>(v));
        break;
    }
    return Constant(std::move(t));
  }
  std::string Constant(TensorProto value) {
    NodeProto c;
    c.set_op_type("Constant");
    c.set_name(names_.Node(base_ + "_f4_const"));
    const std::string out = names_.Value(base_ + "_f4_c");
    c.add_output(out);
    AttributeProto* a = c.add_attribute();
    a->set_name("value");
    a->set_type(AttributeProto::TENSOR);
    *a->mutable_t() = std::move(value);
    nodes_->push_back(std::move(c));
    return out;
  }
  // `type` on `inputs`, into `out` (a fresh value when empty).
  std::string Op(const std::string& type,
                 const std::vector<std::string>& inputs, std::string out = "") {
    if (out.empty()) out = names_.Value(base_ + "_f4");
    NodeProto n;
    n.set_op_type(type);
    n.set_name(names_.Node(base_ + "_f4"));
    for (const std::string& in : inputs) n.add_input(in);
    n.add_output(out);
    nodes_->push_back(std::move(n));
    return out;
  }
  std::string Cast(const std::string& x, int to, std::string out = "") {
    out = Op("Cast", {x}, std::move(out));
    AttributeProto* a = nodes_->back().add_attribute();
    a->set_name("to");
    a->set_type(AttributeProto::INT);
    a->set_i(to);
    return out;
  }
  // x < 0, or x is -0 (1 / -0 = -inf): the sign bit of a non-NaN x.
  std::string SignBit(const std::string& x, int elem_type) {
    return Op("Or", {Op("Less", {x, Scalar(elem_type, 0.0)}),
                     Op("Less", {Op("Div", {Scalar(elem_type, 1.0), x}),
                                 Scalar(elem_type, 0.0)})});
  }

 private:
  const UniqueNames& names_;
  std::string base_;
  std::vector<NodeProto>* nodes_;
};

bool CastsExactlyToFloat(int elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
    case TensorProto::BOOL:
    case TensorProto::INT8:
    case TensorProto::INT16:
    case TensorProto::INT32:
    case TensorProto::INT64:
    case TensorProto::UINT8:
    case TensorProto::UINT16:
    case TensorProto::UINT32:
    case TensorProto::UINT64:
    // The other narrow types: every value is an f32 (float8, f8_e8m0fnu)
    // or a small integer (int4, int2).
    case 17:
    case 18:
    case 19:
    case 20:
    case 21:
    case 22:
    case 24:
    case 25:
    case 26:
      return true;
    default:
      return false;
  }
}

// The 16 f4 values as an f32 initializer-like Constant, indexed by code.
TensorProto Float4Table() {
  TensorProto t;
  t.set_data_type(TensorProto::FLOAT);
  t.add_dims(16);
  for (float v : kFloat4Values) t.add_float_data(v);
  return t;
}

// Codes (uint8 `codes`) -> the f32 container `out`: Gather from the value
// table at code mod 16.
void AppendDecode(const std::string& codes, const std::string& out,
                  const UniqueNames& names, std::vector<NodeProto>* nodes) {
  Builder b(names, codes, nodes);
  const std::string index = b.Op("Mod", {b.Cast(codes, TensorProto::INT32),
                                         b.Scalar(TensorProto::INT32, 16)});
  b.Op("Gather", {b.Constant(Float4Table()), index}, out);
}

// The f32 container `x` (an f4 value) -> its uint8 code `out`: magnitude
// code 2|x| on [0, 2), |x| + 2 on [2, 4), |x| / 2 + 4 on [4, 6], plus 8 for
// the sign bit.
void AppendEncode(const std::string& x, const std::string& out,
                  const UniqueNames& names, std::vector<NodeProto>* nodes) {
  Builder b(names, out, nodes);
  constexpr int kF = TensorProto::FLOAT;
  const std::string a = b.Op("Abs", {x});
  const std::string low = b.Op("Mul", {a, b.Scalar(kF, 2.0)});
  const std::string mid = b.Op("Add", {a, b.Scalar(kF, 2.0)});
  const std::string high =
      b.Op("Add", {b.Op("Mul", {a, b.Scalar(kF, 0.5)}), b.Scalar(kF, 4.0)});
  const std::string magnitude =
      b.Op("Where",
           {b.Op("Less", {a, b.Scalar(kF, 2.0)}), low,
            b.Op("Where", {b.Op("Less", {a, b.Scalar(kF, 4.0)}), mid, high})});
  const std::string code =
      b.Op("Where", {b.SignBit(x, kF),
                     b.Op("Add", {magnitude, b.Scalar(kF, 8.0)}), magnitude});
  b.Cast(code, TensorProto::UINT8, out);
}

// Decodes an f4 tensor (packed two to a byte, first element in the low
// bits) into f32 values, in place.
absl::Status DecodeTensor(TensorProto& t, absl::string_view where) {
  if (t.data_location() == TensorProto::EXTERNAL || t.external_data_size()) {
    return absl::UnimplementedError(absl::StrCat(
        "float4_e2m1fn tensor '", t.name(), "' (", where,
        ") has its data outside the model; the converter carries f4 values "
        "in f32 and must decode it (docs/dtypes.md)"));
  }
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  std::string packed = t.raw_data();
  if (packed.empty()) {
    for (int32_t v : t.int32_data()) packed.push_back(static_cast<char>(v));
  }
  if (static_cast<int64_t>(packed.size()) * 2 < n) {
    return absl::InvalidArgumentError(
        absl::StrCat("float4_e2m1fn tensor '", t.name(), "' (", where,
                     ") holds ", packed.size(), " bytes for ", n, " elements"));
  }
  std::vector<float> values;
  values.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t byte = static_cast<uint8_t>(packed[i / 2]);
    values.push_back(kFloat4Values[(i % 2 == 0 ? byte : byte >> 4) & 15]);
  }
  t.clear_raw_data();
  t.clear_int32_data();
  t.set_data_type(TensorProto::FLOAT);
  for (float v : values) t.add_float_data(v);
  return absl::OkStatus();
}

void RetypeValueInfo(ValueInfoProto& v) {
  auto* tensor = v.mutable_type()->mutable_tensor_type();
  if (v.type().has_tensor_type() && tensor->elem_type() == kOnnxFloat4E2M1) {
    tensor->set_elem_type(TensorProto::FLOAT);
  }
}

absl::Status RetypeNodes(google::protobuf::RepeatedPtrField<NodeProto>& nodes);

// Every FLOAT4E2M1 of `g` (and its subgraphs) to FLOAT; the main graph's
// inputs and outputs are left to the caller.
absl::Status RetypeGraph(GraphProto& g, bool is_main) {
  if (!is_main) {
    for (ValueInfoProto& v : *g.mutable_input()) RetypeValueInfo(v);
    for (ValueInfoProto& v : *g.mutable_output()) RetypeValueInfo(v);
  }
  for (ValueInfoProto& v : *g.mutable_value_info()) RetypeValueInfo(v);
  for (TensorProto& t : *g.mutable_initializer()) {
    if (t.data_type() != kOnnxFloat4E2M1) continue;
    if (absl::Status s = DecodeTensor(t, "an initializer"); !s.ok()) return s;
  }
  return RetypeNodes(*g.mutable_node());
}

absl::Status RetypeNodes(google::protobuf::RepeatedPtrField<NodeProto>& nodes) {
  for (NodeProto& n : nodes) {
    for (AttributeProto& a : *n.mutable_attribute()) {
      if (n.op_type() == "Cast" && a.name() == "to" &&
          a.i() == kOnnxFloat4E2M1) {
        return absl::InternalError(
            absl::StrCat("Cast '", n.name(),
                         "' to FLOAT4E2M1 was not replaced by the f4 "
                         "rounding (its operand type is unknown)"));
      }
      if (a.has_t() && a.t().data_type() == kOnnxFloat4E2M1) {
        if (absl::Status s = DecodeTensor(
                *a.mutable_t(), absl::StrCat("attribute of node ", n.name()));
            !s.ok()) {
          return s;
        }
      }
      if (a.has_g()) {
        if (absl::Status s = RetypeGraph(*a.mutable_g(), false); !s.ok()) {
          return s;
        }
      }
      for (GraphProto& sub : *a.mutable_graphs()) {
        if (absl::Status s = RetypeGraph(sub, false); !s.ok()) return s;
      }
    }
  }
  return absl::OkStatus();
}

// Renames the value `from` to `to` where `g`'s nodes (and subgraphs) read
// it, and, when `definitions`, where it is produced, initialized or
// described.
void Rename(GraphProto& g, const std::string& from, const std::string& to,
            bool definitions, bool subgraph = false) {
  for (NodeProto& n : *g.mutable_node()) {
    for (std::string& in : *n.mutable_input()) {
      if (in == from) in = to;
    }
    if (definitions) {
      for (std::string& out : *n.mutable_output()) {
        if (out == from) out = to;
      }
    }
    for (AttributeProto& a : *n.mutable_attribute()) {
      if (a.has_g()) Rename(*a.mutable_g(), from, to, false, true);
      for (GraphProto& sub : *a.mutable_graphs()) {
        Rename(sub, from, to, false, true);
      }
    }
  }
  if (subgraph) {
    // A subgraph's own outputs may name the captured value.
    for (ValueInfoProto& v : *g.mutable_output()) {
      if (v.name() == from) v.set_name(to);
    }
  }
  if (!definitions) return;
  for (TensorProto& t : *g.mutable_initializer()) {
    if (t.name() == from) t.set_name(to);
  }
  for (ValueInfoProto& v : *g.mutable_value_info()) {
    if (v.name() == from) v.set_name(to);
  }
}

bool IsFloat4(const ValueInfoProto& v) {
  return v.type().has_tensor_type() &&
         v.type().tensor_type().elem_type() == kOnnxFloat4E2M1;
}

void MarkCodes(ValueInfoProto& v) {
  v.mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::UINT8);
  v.set_doc_string(kFloat4CodesDoc);
}

}  // namespace

std::string UniqueNames::Value(const std::string& base) const {
  return FreshIn(values, base);
}
std::string UniqueNames::Node(const std::string& base) const {
  return FreshIn(nodes, base);
}

absl::Status AppendRoundToFloat4E2M1(const std::string& x, int elem_type,
                                     const std::string& out,
                                     const std::string& base,
                                     const UniqueNames& names,
                                     std::vector<NodeProto>* nodes) {
  Builder b(names, base, nodes);
  std::string v = x;
  int t = elem_type;
  if (t == kOnnxFloat4E2M1) {
    b.Op("Identity", {x}, out);  // already an f4 value in its container
    return absl::OkStatus();
  }
  if (CastsExactlyToFloat(t)) {
    v = b.Cast(x, TensorProto::FLOAT);
    t = TensorProto::FLOAT;
  }
  if (t != TensorProto::FLOAT && t != TensorProto::DOUBLE) {
    return absl::UnimplementedError(absl::StrCat(
        "conversion to float4_e2m1fn from ONNX element type ", elem_type,
        " at node '", base, "' is not implemented (docs/dtypes.md)"));
  }
  // NaN rounds like 0 and takes the sign bit: -0.
  const std::string nan = b.Op("IsNaN", {v});
  const std::string a =
      b.Op("Where", {nan, b.Scalar(t, 0.0), b.Op("Abs", {v})});
  const std::string quantum =
      b.Op("Where", {b.Op("Less", {a, b.Scalar(t, 2.0)}), b.Scalar(t, 0.5),
                     b.Op("Where", {b.Op("Less", {a, b.Scalar(t, 4.0)}),
                                    b.Scalar(t, 1.0), b.Scalar(t, 2.0)})});
  const std::string magnitude =
      b.Op("Min",
           {b.Op("Mul", {b.Op("Round", {b.Op("Div", {a, quantum})}), quantum}),
            b.Scalar(t, 6.0)});
  // The sign goes on by a product, not by selecting -magnitude: ONNX
  // Runtime 1.30's CPU Where returns +0 where it selects a -0 from its
  // second input (probed: Where(true, -0, +0) gives +0).
  const std::string sign = b.Op("Where", {b.Op("Or", {b.SignBit(v, t), nan}),
                                          b.Scalar(t, -1.0), b.Scalar(t, 1.0)});
  const std::string rounded =
      b.Op("Mul", {magnitude, sign}, t == TensorProto::FLOAT ? out : "");
  if (t == TensorProto::DOUBLE) {
    b.Cast(rounded, TensorProto::FLOAT, out);  // exact
  }
  return absl::OkStatus();
}

absl::Status CarryFloat4E2M1InFloat32(onnx::ModelProto& model,
                                      const UniqueNames& names) {
  GraphProto& g = *model.mutable_graph();
  if (absl::Status s = RetypeGraph(g, true); !s.ok()) return s;
  for (onnx::FunctionProto& f : *model.mutable_functions()) {
    if (absl::Status s = RetypeNodes(*f.mutable_node()); !s.ok()) return s;
  }
  std::vector<std::string> coded;
  absl::flat_hash_set<std::string> input_names;
  for (const ValueInfoProto& v : g.input()) input_names.insert(v.name());
  absl::flat_hash_set<std::string> encoded;
  std::vector<NodeProto> decode;
  for (ValueInfoProto& v : *g.mutable_input()) {
    if (!IsFloat4(v)) continue;
    const std::string name = v.name();
    MarkCodes(v);
    coded.push_back(name);
    const std::string inner = names.Value(name + "_f4");
    Rename(g, name, inner, /*definitions=*/false);
    AppendDecode(name, inner, names, &decode);
  }
  for (ValueInfoProto& v : *g.mutable_output()) {
    if (!IsFloat4(v)) continue;
    const std::string name = v.name();
    MarkCodes(v);
    // An input returned as it is passes its codes through; an output
    // listed twice is encoded once.
    if (input_names.contains(name) || !encoded.insert(name).second) continue;
    coded.push_back(name);
    const std::string inner = names.Value(name + "_f4");
    Rename(g, name, inner, /*definitions=*/true);
    std::vector<NodeProto> encode;
    AppendEncode(inner, name, names, &encode);
    for (NodeProto& n : encode) *g.add_node() = std::move(n);
  }
  if (!decode.empty()) {
    google::protobuf::RepeatedPtrField<NodeProto> nodes;
    for (NodeProto& n : decode) *nodes.Add() = std::move(n);
    for (NodeProto& n : *g.mutable_node()) *nodes.Add() = std::move(n);
    g.mutable_node()->Swap(&nodes);
  }
  if (!coded.empty()) {
    onnx::StringStringEntryProto* entry = model.add_metadata_props();
    entry->set_key(kFloat4CodesMetadataKey);
    entry->set_value(absl::StrJoin(coded, ","));
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx::plugin
