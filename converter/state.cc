// The legacy lowering state: names, shape_env, node and initializer
// emission, runtime symbolic dims, call inlining and the per-equation
// guardrail. Mirrors converter2/lowering_context.cc but builds protobufs.
#include "converter/state.h"

#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"
#include "jaxpr/literal_value.h"
#include "jaxpr/prng.h"
#include "jaxpr/status_macros.h"
#include "plugin/conversion_checks.h"
#include "plugin/onnx_raw_data.h"
#include "plugin/onnx_types.h"
#include "plugin/registry.h"

namespace jax2onnx::converter {
namespace {

std::string EqnWhere(const jaxpr::Eqn& eqn, int index) {
  std::string where = absl::StrCat("'", eqn.primitive, "'");
  if (index >= 0) where = absl::StrCat("equation #", index, " ", where);
  if (eqn.loc.line > 0) {
    absl::StrAppend(&where, " at line ", eqn.loc.line, ":", eqn.loc.column);
  }
  return where;
}

std::string AvalList(const std::vector<jaxpr::Atom>& atoms) {
  std::vector<std::string> parts;
  for (const jaxpr::Atom& a : atoms) {
    if (a.is_literal()) {
      parts.push_back(a.literal->aval ? a.literal->aval->ToString()
                                      : a.literal->text);
    } else {
      parts.push_back(a.var->aval.ToString());
    }
  }
  return absl::StrJoin(parts, ", ");
}

std::string DTypeName(int dtype) {
  if (!onnx::TensorProto::DataType_IsValid(dtype)) {
    return absl::StrCat("dtype#", dtype);
  }
  return onnx::TensorProto::DataType_Name(
      static_cast<onnx::TensorProto::DataType>(dtype));
}

onnx::AttributeProto NewAttr(absl::string_view name,
                             onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto a;
  a.set_name(std::string(name));
  a.set_type(type);
  return a;
}

// The types of the [1]-shaped tensors DimValue computes with.
ValueInfo Int64Dim() {
  return ValueInfo::Tensor(onnx::TensorProto::INT64, {1});
}
ValueInfo BoolDim() { return ValueInfo::Tensor(onnx::TensorProto::BOOL, {1}); }

// Whether a constant asked for inside a body becomes a Constant node of the
// body (State::Const): the int64 tensors ONNX shape inference reads the
// values of (axes, shapes, pads, slice bounds, repeats), small enough that
// repeating them per body costs nothing.
bool IsBodyLocalConst(const onnx::TensorProto& tensor) {
  constexpr int64_t kMaxElements = 64;
  if (tensor.data_type() != onnx::TensorProto::INT64) return false;
  int64_t elements = 1;
  for (int64_t d : tensor.dims()) elements *= d;
  return elements <= kMaxElements;
}

}  // namespace

// ---- Dim / ValueInfo ----

Dim Dim::Of(const jaxpr::DimExpr& dim) {
  if (dim.is_constant()) return Dim(dim.constant_value());
  return Dim(dim.ToString());
}

std::string Dim::ToString() const {
  if (is_static()) return absl::StrCat(size());
  if (is_symbolic()) return param();
  return "?";
}

absl::StatusOr<ValueInfo> ValueInfo::OfAval(const jaxpr::Aval& declared) {
  // PRNG keys are their key data (u32[..., W]) in ONNX.
  J2O_ASSIGN_OR_RETURN(const jaxpr::Aval aval, jaxpr::PhysicalAval(declared));
  if (!aval.is_shaped()) {
    return absl::UnimplementedError(absl::StrCat(
        "type '", aval.ToString(), "' has no ONNX tensor equivalent"));
  }
  return Of(aval.dtype, aval.shape);
}

absl::StatusOr<ValueInfo> ValueInfo::Of(
    jaxpr::DType dtype, const std::vector<jaxpr::DimExpr>& dims) {
  J2O_ASSIGN_OR_RETURN(int onnx_dtype, plugin::OnnxDType(dtype));
  ValueInfo info;
  info.dtype = onnx_dtype;
  info.dims.reserve(dims.size());
  for (const jaxpr::DimExpr& d : dims) info.dims.push_back(Dim::Of(d));
  // Complex values are real tensors with a trailing (re, im) axis.
  if (jaxpr::IsComplex(dtype)) info.dims.push_back(Dim(int64_t{2}));
  return info;
}

std::string ValueInfo::ToString() const {
  if (!has_shape) return absl::StrCat(DTypeName(dtype), "[*]");
  std::vector<std::string> parts;
  for (const Dim& d : dims) parts.push_back(d.ToString());
  return absl::StrCat(DTypeName(dtype), "[", absl::StrJoin(parts, ","), "]");
}

void ValueInfo::WriteTo(const std::string& name,
                        onnx::ValueInfoProto* proto) const {
  proto->set_name(name);
  onnx::TypeProto::Tensor* t = proto->mutable_type()->mutable_tensor_type();
  t->set_elem_type(dtype);
  if (!has_shape) return;
  onnx::TensorShapeProto* shape = t->mutable_shape();
  for (const Dim& d : dims) {
    onnx::TensorShapeProto::Dimension* dim = shape->add_dim();
    if (d.is_static()) {
      dim->set_dim_value(d.size());
    } else if (d.is_symbolic()) {
      dim->set_dim_param(d.param());
    }
  }
}

// ---- attributes ----

onnx::AttributeProto AttrInt(absl::string_view name, int64_t value) {
  onnx::AttributeProto a = NewAttr(name, onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

onnx::AttributeProto AttrInts(absl::string_view name,
                              absl::Span<const int64_t> values) {
  onnx::AttributeProto a = NewAttr(name, onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
  return a;
}

onnx::AttributeProto AttrFloat(absl::string_view name, float value) {
  onnx::AttributeProto a = NewAttr(name, onnx::AttributeProto::FLOAT);
  a.set_f(value);
  return a;
}

onnx::AttributeProto AttrFloats(absl::string_view name,
                                absl::Span<const float> values) {
  onnx::AttributeProto a = NewAttr(name, onnx::AttributeProto::FLOATS);
  for (float v : values) a.add_floats(v);
  return a;
}

onnx::AttributeProto AttrString(absl::string_view name,
                                absl::string_view value) {
  onnx::AttributeProto a = NewAttr(name, onnx::AttributeProto::STRING);
  a.set_s(std::string(value));
  return a;
}

onnx::AttributeProto AttrTensor(absl::string_view name,
                                onnx::TensorProto value) {
  onnx::AttributeProto a = NewAttr(name, onnx::AttributeProto::TENSOR);
  *a.mutable_t() = std::move(value);
  return a;
}

onnx::AttributeProto AttrGraph(absl::string_view name, onnx::GraphProto value) {
  onnx::AttributeProto a = NewAttr(name, onnx::AttributeProto::GRAPH);
  *a.mutable_g() = std::move(value);
  return a;
}

absl::StatusOr<onnx::TensorProto> TensorOf(const jaxpr::Array& array) {
  J2O_ASSIGN_OR_RETURN(int dtype, plugin::OnnxDType(array.dtype()));
  onnx::TensorProto t;
  t.set_data_type(dtype);
  for (int64_t d : plugin::OnnxDims(array.dtype(), array.shape())) {
    t.add_dims(d);
  }
  t.set_raw_data(plugin::OnnxRawData(array));
  return t;
}

// ---- State ----

State::State(onnx::GraphProto* graph, int opset,
             const std::vector<jaxpr::Array>* elided_literals)
    : main_(graph),
      current_(graph),
      opset_(opset),
      elided_literals_(elided_literals) {}

const ValueInfo* State::Info(absl::string_view name) const {
  auto it = shape_env_.find(name);
  return it == shape_env_.end() ? nullptr : &it->second;
}

void State::SetInfo(const std::string& name, ValueInfo info) {
  shape_env_[name] = std::move(info);
}

std::string State::FreshName(absl::string_view hint) {
  std::string base = hint.empty() ? std::string("v") : std::string(hint);
  if (taken_.insert(base).second) return base;
  int64_t& counter = name_counters_[base];
  while (true) {
    std::string candidate = absl::StrCat(base, "_", ++counter);
    if (taken_.insert(candidate).second) return candidate;
  }
}

void State::ReserveName(const std::string& name) { taken_.insert(name); }

const jaxpr::Aval& State::InAval(const jaxpr::Eqn& eqn, int i) {
  const jaxpr::Atom& a = eqn.inputs[i];
  if (!a.is_literal()) return a.var->aval;
  static const jaxpr::Aval* unknown = new jaxpr::Aval();
  return a.literal->aval ? *a.literal->aval : *unknown;
}

jaxpr::DType State::InDType(const jaxpr::Eqn& eqn, int i) {
  const jaxpr::Atom& a = eqn.inputs[i];
  if (!a.is_literal()) return a.var->aval.dtype;
  return jaxpr::LiteralDType(*a.literal, &eqn);
}

absl::StatusOr<ValueInfo> State::OutInfo(const jaxpr::Eqn& eqn, int i) {
  return ValueInfo::OfAval(eqn.outputs[i]->aval);
}

absl::StatusOr<std::string> State::Input(const jaxpr::Eqn& eqn, int i) {
  if (i < 0 || i >= static_cast<int>(eqn.inputs.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", eqn.primitive, "' expects at least ", i + 1,
                     " operands, got ", eqn.inputs.size()));
  }
  return ValueOf(eqn.inputs[i], &eqn);
}

absl::StatusOr<std::string> State::ValueOf(const jaxpr::Atom& atom,
                                           const jaxpr::Eqn* context) {
  if (atom.is_literal()) {
    J2O_ASSIGN_OR_RETURN(
        jaxpr::Array value,
        jaxpr::LiteralValue(*atom.literal, context, elided_literals_));
    return ConstArray(value);
  }
  auto it = env_.find(atom.var);
  if (it == env_.end()) {
    return absl::InternalError(absl::StrCat("variable '", atom.var->name,
                                            "' is used before it is bound"));
  }
  return it->second;
}

void State::Bind(const jaxpr::Var* var, const std::string& value) {
  env_[var] = value;
}

absl::Status State::SetOutput(const jaxpr::Eqn& eqn, int i,
                              const std::string& value) {
  const jaxpr::Var* var = eqn.outputs[i];
  auto it = shape_env_.find(value);
  if (it == shape_env_.end()) {
    return absl::InternalError(
        absl::StrCat("the lowering of '", eqn.primitive, "' bound output ", i,
                     " to value '", value, "', which has no shape_env entry"));
  }
  if (var->aval.is_shaped()) {
    J2O_ASSIGN_OR_RETURN(ValueInfo expected, ValueInfo::OfAval(var->aval));
    ValueInfo& have = it->second;
    if (have.dtype != expected.dtype) {
      return absl::InternalError(absl::StrCat(
          "the lowering of '", eqn.primitive, "' bound output ", i,
          " to value '", value, "' of ONNX type ", DTypeName(have.dtype),
          " but the JAX var ", var->name, " is ", var->aval.ToString()));
    }
    if (have.has_shape && have.dims.size() != expected.dims.size()) {
      return absl::InternalError(absl::StrCat(
          "the lowering of '", eqn.primitive, "' bound output ", i,
          " to value '", value, "' of shape ", have.ToString(),
          " but the JAX var ", var->name, " is ", var->aval.ToString()));
    }
    if (have.has_shape) {
      for (size_t d = 0; d < have.dims.size(); ++d) {
        if (have.dims[d].is_static() && expected.dims[d].is_static() &&
            have.dims[d].size() != expected.dims[d].size()) {
          return absl::InternalError(absl::StrCat(
              "the lowering of '", eqn.primitive, "' bound output ", i,
              " to value '", value, "' of shape ", have.ToString(),
              " but the JAX var ", var->name, " is ", var->aval.ToString()));
        }
      }
    }
    // The outvar's aval is authoritative where the lowering knew less.
    if (!have.has_shape) {
      have = std::move(expected);
    } else {
      for (size_t d = 0; d < have.dims.size(); ++d) {
        if (have.dims[d].is_unknown()) have.dims[d] = expected.dims[d];
      }
    }
  }
  env_[var] = value;
  return absl::OkStatus();
}

std::string State::AddNode(absl::string_view op_type,
                           std::vector<std::string> inputs, ValueInfo output,
                           std::vector<onnx::AttributeProto> attrs) {
  std::vector<ValueInfo> outputs;
  outputs.push_back(std::move(output));
  return AddNodeMulti(op_type, std::move(inputs), std::move(outputs),
                      std::move(attrs))[0];
}

std::vector<std::string> State::AddNodeMulti(
    absl::string_view op_type, std::vector<std::string> inputs,
    std::vector<ValueInfo> outputs, std::vector<onnx::AttributeProto> attrs) {
  onnx::NodeProto* node = current_->add_node();
  node->set_op_type(std::string(op_type));
  node->set_name(absl::StrCat("n", node_count_++, "_", op_type));
  for (std::string& in : inputs) node->add_input(std::move(in));
  std::vector<std::string> names;
  names.reserve(outputs.size());
  for (ValueInfo& info : outputs) {
    std::string name = FreshName(op_type);
    node->add_output(name);
    shape_env_[name] = std::move(info);
    names.push_back(std::move(name));
  }
  for (onnx::AttributeProto& a : attrs) *node->add_attribute() = std::move(a);
  return names;
}

std::string State::AddInitializer(absl::string_view hint,
                                  onnx::TensorProto tensor) {
  std::string name = FreshName(hint);
  tensor.set_name(name);
  ValueInfo info;
  info.dtype = tensor.data_type();
  for (int64_t d : tensor.dims()) info.dims.emplace_back(d);
  shape_env_[name] = std::move(info);
  *main_->add_initializer() = std::move(tensor);
  return name;
}

std::string State::Const(onnx::TensorProto tensor) {
  auto key = std::make_tuple(
      tensor.data_type(),
      std::vector<int64_t>(tensor.dims().begin(), tensor.dims().end()),
      tensor.raw_data());
  if (current_ != main_ && IsBodyLocalConst(tensor)) {
    auto it = body_consts_.find(key);
    if (it != body_consts_.end()) return it->second;
    ValueInfo info;
    info.dtype = tensor.data_type();
    for (int64_t d : tensor.dims()) info.dims.emplace_back(d);
    std::string name = AddNode("Constant", {}, std::move(info),
                               {AttrTensor("value", std::move(tensor))});
    body_consts_.emplace(std::move(key), name);
    return name;
  }
  auto it = consts_.find(key);
  if (it != consts_.end()) return it->second;
  std::string name = AddInitializer("c", std::move(tensor));
  consts_.emplace(std::move(key), name);
  return name;
}

absl::StatusOr<std::string> State::ConstArray(const jaxpr::Array& array) {
  J2O_ASSIGN_OR_RETURN(onnx::TensorProto t, TensorOf(array));
  return Const(std::move(t));
}

std::string State::ConstI64(absl::Span<const int64_t> values) {
  jaxpr::Array a(jaxpr::DType::kI64, {static_cast<int64_t>(values.size())});
  if (!values.empty()) {
    std::memcpy(a.data(), values.data(), values.size() * sizeof(int64_t));
  }
  auto name = ConstArray(a);
  CHECK(name.ok()) << name.status();
  return *name;
}

std::string State::ConstI64Scalar(int64_t value) {
  auto name =
      ConstArray(jaxpr::Array::ScalarFromInt64(jaxpr::DType::kI64, value));
  CHECK(name.ok()) << name.status();
  return *name;
}

absl::StatusOr<std::string> State::ConstScalar(jaxpr::DType dtype,
                                               double value) {
  return ConstArray(jaxpr::Array::ScalarFromDouble(dtype, value));
}

void State::AddDimOrigin(const std::string& symbol, const std::string& value,
                         int axis) {
  dim_origins_.try_emplace(symbol, value, axis);
}

absl::Status State::SetOutputGuard(std::string check, OutputGuard guard) {
  if (current_ != main_) {
    return absl::UnimplementedError(
        "a shape assertion inside a loop or cond body is not supported (JAX "
        "emits them at the top of the exported function)");
  }
  output_guard_check_ = std::move(check);
  output_guard_ = std::move(guard);
  return absl::OkStatus();
}

absl::StatusOr<std::string> State::DimValue(const jaxpr::DimExpr& dim) {
  using Kind = jaxpr::DimExpr::Kind;
  if (dim.is_constant()) return ConstI64({dim.constant_value()});
  const std::string key = dim.ToString();
  if (auto it = dim_values_.find(key); it != dim_values_.end()) {
    return it->second;
  }
  std::string result;
  if (dim.kind() == Kind::kSymbol) {
    auto origin = dim_origins_.find(dim.symbol());
    if (origin == dim_origins_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "symbolic dimension '", dim.symbol(),
          "' does not appear as a whole dimension of any graph input, so its "
          "runtime value cannot be computed"));
    }
    const int axis = origin->second.second;
    result = AddNode("Shape", {origin->second.first}, Int64Dim(),
                     {AttrInt("start", axis), AttrInt("end", axis + 1)});
  } else {
    std::vector<std::string> operands;
    for (const jaxpr::DimExpr& op : dim.operands()) {
      J2O_ASSIGN_OR_RETURN(std::string v, DimValue(op));
      operands.push_back(std::move(v));
    }
    auto binary = [&](absl::string_view op_type, const std::string& a,
                      const std::string& b,
                      std::vector<onnx::AttributeProto> attrs = {}) {
      return AddNode(op_type, {a, b}, Int64Dim(), std::move(attrs));
    };
    auto fold = [&](absl::string_view op_type) {
      std::string acc = operands[0];
      for (size_t i = 1; i < operands.size(); ++i) {
        acc = binary(op_type, acc, operands[i]);
      }
      return acc;
    };
    switch (dim.kind()) {
      case Kind::kSum:
        result = fold("Add");
        break;
      case Kind::kProduct:
        result = fold("Mul");
        break;
      case Kind::kPow:
        if (dim.exponent() == 0) {
          result = ConstI64({1});
          break;
        }
        result = operands[0];
        for (int64_t i = 1; i < dim.exponent(); ++i) {
          result = binary("Mul", result, operands[0]);
        }
        break;
      case Kind::kFloorDiv: {
        // ONNX Div truncates; floor division subtracts one where the signs
        // differ and the division is inexact.
        const std::string& a = operands[0];
        const std::string& b = operands[1];
        std::string q = binary("Div", a, b);
        std::string r = binary("Mod", a, b, {AttrInt("fmod", 1)});
        std::string zero = ConstI64({0});
        std::string inexact =
            AddNode("Not", {AddNode("Equal", {r, zero}, BoolDim())}, BoolDim());
        std::string signs_differ =
            AddNode("Xor",
                    {AddNode("Less", {a, zero}, BoolDim()),
                     AddNode("Less", {b, zero}, BoolDim())},
                    BoolDim());
        std::string adjust = AddNode(
            "Cast", {AddNode("And", {inexact, signs_differ}, BoolDim())},
            Int64Dim(), {AttrInt("to", onnx::TensorProto::INT64)});
        result = binary("Sub", q, adjust);
        break;
      }
      case Kind::kMod:
        result = binary("Mod", operands[0], operands[1]);  // sign of divisor
        break;
      case Kind::kMax:
        result = binary("Max", operands[0], operands[1]);
        break;
      case Kind::kMin:
        result = binary("Min", operands[0], operands[1]);
        break;
      case Kind::kNonNegative:
        result = binary("Max", operands[0], ConstI64({0}));
        break;
      default:
        return absl::InternalError(absl::StrCat(
            "unexpected kind of dimension expression '", key, "'"));
    }
  }
  dim_values_[key] = result;
  return result;
}

absl::StatusOr<std::string> State::ShapeValue(
    const std::vector<jaxpr::DimExpr>& dims) {
  std::vector<std::string> pieces;
  std::vector<int64_t> pending;
  auto flush = [&] {
    if (!pending.empty()) pieces.push_back(ConstI64(pending));
    pending.clear();
  };
  for (const jaxpr::DimExpr& d : dims) {
    if (d.is_constant()) {
      pending.push_back(d.constant_value());
      continue;
    }
    flush();
    J2O_ASSIGN_OR_RETURN(std::string v, DimValue(d));
    pieces.push_back(std::move(v));
  }
  flush();
  if (pieces.empty()) return ConstI64({});
  if (pieces.size() == 1) return pieces[0];
  return AddNode("Concat", pieces,
                 ValueInfo::Tensor(onnx::TensorProto::INT64,
                                   {static_cast<int64_t>(dims.size())}),
                 {AttrInt("axis", 0)});
}

absl::StatusOr<std::vector<std::string>> State::Inline(
    const jaxpr::ClosedJaxpr& jaxpr, absl::Span<const std::string> args) {
  if (!jaxpr.constvars.empty()) {
    return absl::UnimplementedError(absl::StrCat(
        "a nested jaxpr has ", jaxpr.constvars.size(),
        " constvars whose values are not part of the printed program"));
  }
  if (args.size() != jaxpr.invars.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("call passes ", args.size(), " operands to a jaxpr with ",
                     jaxpr.invars.size(), " inputs"));
  }
  for (size_t i = 0; i < args.size(); ++i) Bind(jaxpr.invars[i], args[i]);
  J2O_RETURN_IF_ERROR(LowerEquations(jaxpr));
  std::vector<std::string> results;
  for (const jaxpr::Atom& out : jaxpr.outvars) {
    J2O_ASSIGN_OR_RETURN(std::string v, ValueOf(out, nullptr));
    results.push_back(std::move(v));
  }
  return results;
}

absl::StatusOr<onnx::GraphProto> State::BuildSubgraph(
    absl::string_view name,
    const std::function<absl::StatusOr<std::vector<std::string>>()>& build) {
  onnx::GraphProto body;
  body.set_name(std::string(name));
  onnx::GraphProto* outer = current_;
  // Runtime dims computed inside the body are not visible outside it, nor
  // are its Constant nodes; and the body sees none of an enclosing body's.
  absl::flat_hash_map<std::string, std::string> outer_dims = dim_values_;
  auto outer_consts = std::move(body_consts_);
  body_consts_.clear();
  current_ = &body;
  absl::StatusOr<std::vector<std::string>> outputs = build();
  if (outputs.ok()) {
    absl::flat_hash_set<std::string> local;
    for (const onnx::NodeProto& n : body.node()) {
      for (const std::string& o : n.output()) local.insert(o);
    }
    for (std::string& out : *outputs) {
      const ValueInfo* info = Info(out);
      if (info == nullptr) {
        outputs = absl::InternalError(absl::StrCat(
            "body '", name, "' output '", out, "' has no shape_env entry"));
        break;
      }
      if (!local.contains(out)) out = AddNode("Identity", {out}, *info);
      shape_env_.at(out).WriteTo(out, body.add_output());
    }
  }
  current_ = outer;
  dim_values_ = std::move(outer_dims);
  body_consts_ = std::move(outer_consts);
  if (!outputs.ok()) return outputs.status();
  return body;
}

std::string State::AddGraphInput(absl::string_view hint, ValueInfo info) {
  std::string name = FreshName(hint);
  info.WriteTo(name, current_->add_input());
  shape_env_[name] = std::move(info);
  return name;
}

absl::Status State::LowerEquations(const jaxpr::ClosedJaxpr& jaxpr) {
  const plugin::Registry& registry = plugin::Registry::Global();
  for (size_t e = 0; e < jaxpr.eqns.size(); ++e) {
    const jaxpr::Eqn& eqn = jaxpr.eqns[e];
    const int index = static_cast<int>(e);
    const plugin::PrimitiveEntry* entry = registry.Find(eqn.primitive);
    if (entry == nullptr || entry->legacy == nullptr) {
      const std::string message = plugin::MissingLoweringMessage(
          registry, eqn.primitive, plugin::kLegacyPipelineName,
          plugin::kIrPipelineName);
      return EqnError(eqn, index, absl::StatusCode::kUnimplemented, message);
    }
    if (absl::Status too_old =
            plugin::CheckMinOpset(entry->legacy_info, eqn.primitive,
                                  plugin::kLegacyPipelineName, opset_);
        !too_old.ok()) {
      return EqnError(eqn, index, too_old.code(), too_old.message());
    }
    // Structural primitives on PRNG keys run once per key word.
    absl::Status status =
        jaxpr::MovesKeys(eqn) && registry.legacy_key_words() != nullptr
            ? registry.legacy_key_words()(*this, eqn, entry->legacy)
            : entry->legacy(*this, eqn);
    if (!status.ok()) {
      return EqnError(eqn, index, status.code(),
                      absl::StrCat(status.message(),
                                   " (operands: ", AvalList(eqn.inputs), ")"),
                      status);
    }
    for (size_t o = 0; o < eqn.outputs.size(); ++o) {
      const jaxpr::Var* out = eqn.outputs[o];
      if (!out->is_drop && !IsBound(out)) {
        return EqnError(
            eqn, index, absl::StatusCode::kInternal,
            absl::StrCat("the lowering did not bind output ", o, " (",
                         out->name, ":", out->aval.ToString(), ")"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status State::EqnError(const jaxpr::Eqn& eqn, int index,
                             absl::StatusCode code, absl::string_view message,
                             const absl::Status& cause) {
  return plugin::EqnStatus(eqn, code, EqnWhere(eqn, index), message, cause);
}

}  // namespace jax2onnx::converter
