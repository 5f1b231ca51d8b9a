#include "converter2/lowering_context.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jaxpr/literal_value.h"
#include "jaxpr/prng.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/printer.h"
#include "plugin/conversion_checks.h"
#include "plugin/onnx_raw_data.h"
#include "plugin/onnx_types.h"
#include "plugin/registry.h"

namespace jax2onnx::converter2 {
namespace {

ir::Shape ToIrShape(const std::vector<jaxpr::DimExpr>& dims) {
  std::vector<ir::Dim> out;
  out.reserve(dims.size());
  for (const jaxpr::DimExpr& d : dims) {
    if (d.is_constant()) {
      out.emplace_back(d.constant_value());
    } else {
      out.emplace_back(d.ToString());
    }
  }
  return ir::Shape(std::move(out));
}

// Name scopes grow by one level (two components: "eqn5/pjit/" for nodes,
// "c/pjit/" for values) per nested call or body. Past kMaxScopeChars only the
// innermost whole levels are kept, after ".../", so a name costs O(1) instead
// of O(depth): pjit nested 100 deep wrote names of up to 1,000 characters on
// every node and value (a model 30x the size of the legacy one, which ONNX
// Runtime took twice as long to load). The equation stays findable by the
// innermost levels and the node's doc string ("line L:C: ..."); no testdata
// program nests deep enough to be cut.
constexpr size_t kMaxScopeChars = 128;

std::string BoundedScope(std::string scope) {
  if (scope.size() <= kMaxScopeChars) return scope;
  constexpr absl::string_view kCut = ".../";
  // Every second '/' from the end (the last one excluded) starts a level.
  size_t keep_from = std::string::npos;
  int slashes = 0;
  for (size_t i = scope.size() - 1; i-- > 0;) {
    if (scope[i] != '/' || ++slashes % 2 != 0) continue;
    if (keep_from != std::string::npos &&
        scope.size() - (i + 1) + kCut.size() > kMaxScopeChars) {
      break;
    }
    keep_from = i + 1;
  }
  if (keep_from == std::string::npos) return scope;
  return absl::StrCat(kCut, absl::string_view(scope).substr(keep_from));
}

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

// "line 12:5: e:f32[2,3] = add a 1.0:f32[]": the equation without its
// params (which may hold whole jaxprs), for node doc strings.
std::string EqnDoc(const jaxpr::Eqn& eqn) {
  std::string doc;
  doc.reserve(128);  // one allocation for a typical equation
  if (eqn.loc.line > 0) {
    absl::StrAppend(&doc, "line ", eqn.loc.line, ":", eqn.loc.column, ": ");
  }
  for (size_t i = 0; i < eqn.outputs.size(); ++i) {
    const jaxpr::Var* v = eqn.outputs[i];
    if (i > 0) doc += ' ';
    if (v->is_drop) {
      doc += '_';
    } else {
      absl::StrAppend(&doc, v->name, ":", v->aval.ToString());
    }
  }
  absl::StrAppend(&doc, " = ", eqn.primitive);
  for (const jaxpr::Atom& a : eqn.inputs) {
    absl::StrAppend(&doc, " ", jaxpr::PrintAtom(a));
  }
  return doc;
}

}  // namespace

LoweringContext::LoweringContext(ir::Graph* graph, int opset,
                                 const std::vector<jaxpr::Array>* elided)
    : main_(graph), graph_(graph), opset_(opset), elided_literals_(elided) {}

absl::Status LoweringContext::SetOutputGuard(ir::Value* check,
                                             OutputGuard guard) {
  if (!lowers_main_graph_ || graph_ != main_) {
    return absl::UnimplementedError(
        "a shape assertion inside a loop or cond body or an ONNX function is "
        "not supported (JAX emits them at the top of the exported function)");
  }
  output_guard_check_ = check;
  output_guard_ = std::move(guard);
  return absl::OkStatus();
}

const jaxpr::Aval& LoweringContext::InAval(const jaxpr::Eqn& eqn, int i) {
  const jaxpr::Atom& a = eqn.inputs[i];
  if (!a.is_literal()) return a.var->aval;
  static const jaxpr::Aval* unknown = new jaxpr::Aval();
  return a.literal->aval ? *a.literal->aval : *unknown;
}

absl::StatusOr<ir::Value*> LoweringContext::Input(const jaxpr::Eqn& eqn,
                                                  int i) {
  if (i < 0 || i >= static_cast<int>(eqn.inputs.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", eqn.primitive, "' expects at least ", i + 1,
                     " operands, got ", eqn.inputs.size()));
  }
  return ValueOf(eqn.inputs[i], &eqn);
}

absl::StatusOr<ir::Value*> LoweringContext::ValueOf(const jaxpr::Atom& atom,
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
                                            "' is used before it is "
                                            "bound"));
  }
  return it->second;
}

void LoweringContext::Bind(const jaxpr::Var* var, ir::Value* value) {
  env_[var] = value;
}

absl::Status LoweringContext::SetOutput(const jaxpr::Eqn& eqn, int i,
                                        ir::Value* value) {
  const jaxpr::Var* var = eqn.outputs[i];
  // PRNG keys are their key data (u32[..., W]) in ONNX. The aval is copied
  // only for keys: this runs for every output of every equation.
  std::optional<jaxpr::Aval> key_data;
  if (jaxpr::IsPrngKey(var->aval)) {
    J2O_ASSIGN_OR_RETURN(key_data, jaxpr::PhysicalAval(var->aval));
  }
  const jaxpr::Aval& physical = key_data ? *key_data : var->aval;
  if (physical.is_shaped()) {
    J2O_ASSIGN_OR_RETURN(int dtype, plugin::OnnxDType(physical.dtype));
    if (value->dtype() != onnx::TensorProto::UNDEFINED &&
        value->dtype() != dtype) {
      return absl::InternalError(absl::StrCat(
          "the lowering of '", eqn.primitive, "' bound output ", i,
          " to a value of ONNX type ", ir::DataTypeShortName(value->dtype()),
          " but the JAX var ", var->name, " is ", var->aval.ToString()));
    }
    // Graph inputs and initializers keep the types they were declared with.
    if (value->producer() != nullptr) {
      NameAfterEquation(value, eqn, i);
      value->SetType(ir::Type::Tensor(
          dtype, jaxpr::IsComplex(physical.dtype)
                     ? ToIrShape(plugin::RealifiedAval(physical).shape)
                     : ToIrShape(physical.shape)));
    }
  }
  env_[var] = value;
  return absl::OkStatus();
}

void LoweringContext::NameAfterEquation(ir::Value* value, const jaxpr::Eqn& eqn,
                                        int i) {
  // Only values made by this conversion's nodes, not yet an interface name.
  if (value->is_graph_output() || value->producer() == nullptr) return;
  auto [it, inserted] = named_at_depth_.try_emplace(value, depth_);
  if (!inserted) {
    if (it->second <= depth_) return;
    it->second = depth_;
  }
  value->SetName(main_->FreshName(
      absl::StrCat(value_outer_, eqn.outputs[i]->name, "/", eqn.primitive)));
}

ir::Value* LoweringContext::Op(absl::string_view op_type,
                               std::vector<ir::Value*> inputs,
                               std::vector<ir::Attr> attrs) {
  return AddOpNode(op_type, std::move(inputs), 1, std::move(attrs), "")
      ->output(0);
}

std::vector<ir::Value*> LoweringContext::OpMulti(absl::string_view op_type,
                                                 std::vector<ir::Value*> inputs,
                                                 int num_outputs,
                                                 std::vector<ir::Attr> attrs,
                                                 absl::string_view domain) {
  return AddOpNode(op_type, std::move(inputs), num_outputs, std::move(attrs),
                   domain)
      ->outputs();
}

ir::Node* LoweringContext::AddOpNode(absl::string_view op_type,
                                     std::vector<ir::Value*> inputs,
                                     int num_outputs,
                                     std::vector<ir::Attr> attrs,
                                     absl::string_view domain) {
  // Intermediate values are named after the equation being lowered and the
  // op. A body being built is detached from the model until its node
  // exists, so names always come from the main graph's table to stay unique
  // model-wide.
  const std::string base = absl::StrCat(value_scope_, op_type);
  std::vector<std::string> names;
  names.reserve(num_outputs);
  for (int i = 0; i < num_outputs; ++i) names.push_back(main_->FreshName(base));
  ir::Node* node = graph_->Append(
      ir::Node::Create(domain, op_type, inputs, std::move(names),
                       std::move(attrs), absl::StrCat(name_scope_, op_type)));
  node->set_doc_string(doc_);
  return node;
}

std::vector<ir::Value*> LoweringContext::OpInDomain(
    absl::string_view domain, absl::string_view op_type,
    std::vector<ir::Value*> inputs, int num_outputs) {
  return OpMulti(op_type, std::move(inputs), num_outputs, {}, domain);
}

absl::StatusOr<ir::Type> LoweringContext::TypeOfAval(
    const jaxpr::Aval& declared, absl::string_view what) {
  // PRNG keys are their key data (u32[..., W]) in ONNX, complex values
  // real [..., 2] pairs.
  J2O_ASSIGN_OR_RETURN(const jaxpr::Aval physical,
                       jaxpr::PhysicalAval(declared));
  const jaxpr::Aval aval = plugin::RealifiedAval(physical);
  if (!aval.is_shaped()) {
    return absl::UnimplementedError(absl::StrCat(
        what, " has type '", aval.ToString(), "', which ONNX cannot hold"));
  }
  auto dtype = plugin::OnnxDType(aval.dtype);
  if (!dtype.ok()) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": ", dtype.status().message()));
  }
  return ir::Type::Tensor(*dtype, ToIrShape(aval.shape));
}

void LoweringContext::SetType(ir::Value* value, jaxpr::DType dtype,
                              const std::vector<jaxpr::DimExpr>& shape) {
  auto onnx_dtype = plugin::OnnxDType(dtype);
  if (!onnx_dtype.ok()) return;
  std::vector<jaxpr::DimExpr> dims = shape;
  if (jaxpr::IsComplex(dtype)) dims.push_back(jaxpr::DimExpr::Constant(2));
  value->SetType(ir::Type::Tensor(*onnx_dtype, ToIrShape(dims)));
}

ir::Value* LoweringContext::Const(ir::Tensor tensor) {
  auto key = std::make_tuple(tensor.dtype(), tensor.dims(),
                             std::string(tensor.bytes()));
  // ONNX shape inference of a subgraph does not see the values of
  // outer-scope initializers: the small int64 tensors it reads (axes,
  // shapes, slice bounds) are initializers of the body being built, so an
  // Unsqueeze/Reshape/Slice there keeps a known rank.
  const bool body_local = graph_ != main_ &&
                          tensor.dtype() == onnx::TensorProto::INT64 &&
                          tensor.num_elements() <= kMaxBodyLocalElements;
  auto& cache = body_local ? body_consts_ : consts_;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const int dtype = tensor.dtype();
  std::vector<ir::Dim> dims(tensor.dims().begin(), tensor.dims().end());
  ir::Graph* owner = body_local ? graph_ : main_;
  auto value = owner->AddInitializer(main_->FreshName("c"), std::move(tensor));
  CHECK(value.ok()) << value.status();
  (*value)->SetType(ir::Type::Tensor(dtype, ir::Shape(std::move(dims))));
  cache.emplace(std::move(key), *value);
  return *value;
}

ir::Value* LoweringContext::ConstArray(const jaxpr::Array& array) {
  if (jaxpr::IsNarrow(array.dtype())) {
    // The IR's tensors hold whole bytes per element (ir::DataTypeSize knows
    // no float8/int4 type, so no pass folds or rewrites them): a narrow
    // constant is its exact f32/i32 values Cast to the narrow type (the
    // Cast is made non-saturating and exact by plugin/low_precision.cc).
    const jaxpr::DType wide = jaxpr::IsNarrowFloat(array.dtype())
                                  ? jaxpr::DType::kF32
                                  : jaxpr::DType::kI32;
    jaxpr::Array carrier(wide, array.shape());
    for (int64_t i = 0; i < array.num_elements(); ++i) {
      carrier.SetFromDouble(i, array.GetAsDouble(i));
    }
    auto to = plugin::OnnxDType(array.dtype());
    CHECK(to.ok()) << to.status();
    std::vector<ir::Attr> attrs;
    attrs.push_back(ir::Attr::Int("to", *to));
    ir::Value* cast = Op("Cast", {ConstArray(carrier)}, std::move(attrs));
    std::vector<jaxpr::DimExpr> shape;
    for (int64_t d : array.shape()) shape.push_back(jaxpr::DimExpr::Constant(d));
    SetType(cast, array.dtype(), shape);
    return cast;
  }
  auto dtype = plugin::OnnxDType(array.dtype());
  CHECK(dtype.ok()) << dtype.status();
  return Const(ir::Tensor(*dtype,
                          plugin::OnnxDims(array.dtype(), array.shape()),
                          plugin::OnnxRawData(array)));
}

ir::Value* LoweringContext::ConstI64(std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Const(
      ir::Tensor::FromVector<int64_t>(onnx::TensorProto::INT64, {n}, values));
}

ir::Value* LoweringContext::ConstI64Scalar(int64_t value) {
  return Const(ir::Tensor::FromVector<int64_t>(
      onnx::TensorProto::INT64, {}, absl::Span<const int64_t>(&value, 1)));
}

ir::Value* LoweringContext::ConstScalar(jaxpr::DType dtype, double value) {
  return ConstArray(jaxpr::Array::ScalarFromDouble(dtype, value));
}

void LoweringContext::AddDimOrigin(const std::string& symbol, ir::Value* value,
                                   int axis) {
  dim_origins_.try_emplace(symbol, value, axis);
}

absl::StatusOr<ir::Value*> LoweringContext::DimValue(
    const jaxpr::DimExpr& dim) {
  using Kind = jaxpr::DimExpr::Kind;
  if (dim.is_constant()) return ConstI64({dim.constant_value()});
  const std::string key = dim.ToString();
  if (auto it = dim_values_.find(key); it != dim_values_.end()) {
    return it->second;
  }
  ir::Value* result = nullptr;
  if (dim.kind() == Kind::kSymbol) {
    auto origin = dim_origins_.find(dim.symbol());
    if (origin == dim_origins_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "symbolic dimension '", dim.symbol(),
          "' does not appear as a whole dimension of any graph input, so its "
          "runtime value cannot be computed"));
    }
    const int axis = origin->second.second;
    result =
        Op("Shape", {origin->second.first},
           Attrs(ir::Attr::Int("start", axis), ir::Attr::Int("end", axis + 1)));
  } else {
    std::vector<ir::Value*> operands;
    for (const jaxpr::DimExpr& op : dim.operands()) {
      J2O_ASSIGN_OR_RETURN(ir::Value * v, DimValue(op));
      operands.push_back(v);
    }
    auto fold = [&](absl::string_view op_type) {
      ir::Value* acc = operands[0];
      for (size_t i = 1; i < operands.size(); ++i) {
        acc = Op(op_type, {acc, operands[i]});
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
        result = operands[0];
        for (int64_t i = 1; i < dim.exponent(); ++i) {
          result = Op("Mul", {result, operands[0]});
        }
        if (dim.exponent() == 0) result = ConstI64({1});
        break;
      case Kind::kFloorDiv: {
        // ONNX Div truncates; floor division subtracts one where the signs
        // differ and the division is inexact.
        ir::Value* q = Op("Div", {operands[0], operands[1]});
        ir::Value* r = Op("Mod", {operands[0], operands[1]},
                          Attrs(ir::Attr::Int("fmod", 1)));
        ir::Value* zero = ConstI64({0});
        ir::Value* inexact = Op("Not", {Op("Equal", {r, zero})});
        ir::Value* signs_differ = Op("Xor", {Op("Less", {operands[0], zero}),
                                             Op("Less", {operands[1], zero})});
        ir::Value* adjust =
            Op("Cast", {Op("And", {inexact, signs_differ})},
               Attrs(ir::Attr::Int("to", onnx::TensorProto::INT64)));
        result = Op("Sub", {q, adjust});
        break;
      }
      case Kind::kMod:
        result = Op("Mod", {operands[0], operands[1]});  // sign of divisor
        break;
      case Kind::kMax:
        result = Op("Max", {operands[0], operands[1]});
        break;
      case Kind::kMin:
        result = Op("Min", {operands[0], operands[1]});
        break;
      case Kind::kNonNegative:
        result = Op("Max", {operands[0], ConstI64({0})});
        break;
      default:
        return absl::InternalError("unexpected DimExpr kind");
    }
  }
  dim_values_[key] = result;
  return result;
}

absl::StatusOr<ir::Value*> LoweringContext::ShapeValue(
    const std::vector<jaxpr::DimExpr>& dims) {
  std::vector<ir::Value*> pieces;
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
    J2O_ASSIGN_OR_RETURN(ir::Value * v, DimValue(d));
    pieces.push_back(v);
  }
  flush();
  if (pieces.empty()) return ConstI64({});
  if (pieces.size() == 1) return pieces[0];
  return Op("Concat", pieces, Attrs(ir::Attr::Int("axis", 0)));
}

absl::StatusOr<std::vector<ir::Value*>> LoweringContext::Inline(
    const jaxpr::ClosedJaxpr& jaxpr, absl::Span<ir::Value* const> args) {
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
  std::vector<ir::Value*> results;
  for (const jaxpr::Atom& out : jaxpr.outvars) {
    J2O_ASSIGN_OR_RETURN(ir::Value * v, ValueOf(out, nullptr));
    results.push_back(v);
  }
  return results;
}

absl::StatusOr<std::unique_ptr<ir::Graph>> LoweringContext::BuildSubgraph(
    absl::string_view name,
    const std::function<absl::StatusOr<std::vector<ir::Value*>>()>& build) {
  auto body = std::make_unique<ir::Graph>(std::string(name));
  ir::Graph* outer = graph_;
  // Runtime dims computed inside the body are not visible outside it.
  absl::flat_hash_map<std::string, ir::Value*> outer_dims = dim_values_;
  // Nor are its own constants (Const), and it sees none of an enclosing
  // body's.
  auto outer_consts = std::move(body_consts_);
  body_consts_.clear();
  graph_ = body.get();
  absl::StatusOr<std::vector<ir::Value*>> outputs = build();
  if (outputs.ok()) {
    for (ir::Value* out : *outputs) {
      if (out->type() == nullptr) {
        outputs = absl::InternalError(absl::StrCat(
            "body '", name, "' output '", out->name(), "' has no type"));
        break;
      }
      // Outer values, body inputs and repeated outputs get an Identity so
      // every output is a distinct value produced inside the body.
      const bool local = out->producer() != nullptr &&
                         out->producer()->graph() == body.get() &&
                         !out->is_graph_output();
      if (!local) {
        ir::Value* id = Op("Identity", {out});
        id->SetType(*out->type());
        out = id;
      }
      body->AddOutput(out);
    }
  }
  graph_ = outer;
  dim_values_ = std::move(outer_dims);
  body_consts_ = std::move(outer_consts);
  if (!outputs.ok()) return outputs.status();
  return body;
}

ir::Value* LoweringContext::AddGraphInput(absl::string_view hint,
                                          ir::Type type) {
  return graph_->AddInput(main_->FreshName(hint), std::move(type));
}

absl::Status LoweringContext::LowerEquations(const jaxpr::ClosedJaxpr& jaxpr) {
  const plugin::Registry& registry = plugin::Registry::Global();
  // About one binding per equation: sized up front rather than rehashed.
  env_.reserve(env_.size() + jaxpr.eqns.size());
  for (size_t e = 0; e < jaxpr.eqns.size(); ++e) {
    const jaxpr::Eqn& eqn = jaxpr.eqns[e];
    const int index = static_cast<int>(e);
    const plugin::PrimitiveEntry* entry = registry.Find(eqn.primitive);
    if (entry == nullptr || entry->ir == nullptr) {
      const std::string message = plugin::MissingLoweringMessage(
          registry, eqn.primitive, plugin::kIrPipelineName,
          plugin::kLegacyPipelineName);
      return EqnError(eqn, index, absl::StatusCode::kUnimplemented, message);
    }
    if (absl::Status too_old = plugin::CheckMinOpset(
            entry->ir_info, eqn.primitive, plugin::kIrPipelineName, opset_);
        !too_old.ok()) {
      return EqnError(eqn, index, too_old.code(), too_old.message());
    }
    std::string outer_scope = std::move(name_scope_);
    std::string outer_doc = std::move(doc_);
    std::string outer_value_outer = std::move(value_outer_);
    std::string outer_value_scope = std::move(value_scope_);
    name_scope_ = BoundedScope(
        absl::StrCat(outer_scope, "eqn", index, "/", eqn.primitive, "/"));
    doc_ = EqnDoc(eqn);
    // Values: the enclosing equation's scope; this equation's after its
    // first result ("_" when every result is dropped).
    value_outer_ = outer_value_scope;
    value_scope_ = BoundedScope(absl::StrCat(
        outer_value_scope,
        eqn.outputs.empty() || eqn.outputs[0]->is_drop ? "_"
                                                       : eqn.outputs[0]->name,
        "/", eqn.primitive, "/"));
    ++depth_;
    // Structural primitives on PRNG keys run once per key word.
    absl::Status status =
        jaxpr::MovesKeys(eqn) && registry.ir_key_words() != nullptr
            ? registry.ir_key_words()(*this, eqn, entry->ir)
            : entry->ir(*this, eqn);
    name_scope_ = std::move(outer_scope);
    doc_ = std::move(outer_doc);
    value_outer_ = std::move(outer_value_outer);
    value_scope_ = std::move(outer_value_scope);
    --depth_;
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

absl::Status LoweringContext::EqnError(const jaxpr::Eqn& eqn, int index,
                                       absl::StatusCode code,
                                       absl::string_view message,
                                       const absl::Status& cause) {
  return plugin::EqnStatus(eqn, code, EqnWhere(eqn, index), message, cause);
}

}  // namespace jax2onnx::converter2
