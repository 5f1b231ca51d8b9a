#include "jaxpr/jaxpr.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace jax2onnx::jaxpr {

Aval Aval::Shaped(DType dtype, std::vector<DimExpr> shape) {
  Aval a;
  a.kind = Kind::kShaped;
  a.dtype = dtype;
  a.dtype_name = std::string(ShortName(dtype));
  a.shape = std::move(shape);
  return a;
}

Aval Aval::Static(DType dtype, const std::vector<int64_t>& shape) {
  std::vector<DimExpr> dims;
  dims.reserve(shape.size());
  for (int64_t d : shape) dims.push_back(DimExpr::Constant(d));
  return Shaped(dtype, std::move(dims));
}

bool Aval::IsStatic() const {
  if (kind != Kind::kShaped) return false;
  for (const DimExpr& d : shape) {
    if (!d.is_constant()) return false;
  }
  return true;
}

std::optional<std::vector<int64_t>> Aval::StaticShape() const {
  if (!IsStatic()) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const DimExpr& d : shape) out.push_back(d.constant_value());
  return out;
}

absl::StatusOr<std::vector<int64_t>> Aval::ConcreteShape(
    const DimBindings& bindings) const {
  if (kind != Kind::kShaped) {
    return absl::InvalidArgumentError(
        absl::StrCat("aval '", ToString(), "' has no array shape"));
  }
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const DimExpr& d : shape) {
    auto v = d.Evaluate(bindings);
    if (!v.ok()) return v.status();
    out.push_back(*v);
  }
  return out;
}

std::string Aval::ToString() const {
  if (kind != Kind::kShaped) return opaque_text;
  std::string out =
      dtype_name.empty() ? std::string(ShortName(dtype)) : dtype_name;
  if (!memory_space.empty()) absl::StrAppend(&out, "<", memory_space, ">");
  out += "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ",";
    out += shape[i].ToString();
    if (i < dim_sharding.size() && !dim_sharding[i].empty()) {
      absl::StrAppend(&out, "@", dim_sharding[i]);
    }
  }
  out += "]";
  out += suffix;
  return out;
}

bool operator==(const Aval& a, const Aval& b) {
  return a.kind == b.kind && a.dtype == b.dtype &&
         a.dtype_name == b.dtype_name && a.shape == b.shape &&
         a.dim_sharding == b.dim_sharding && a.memory_space == b.memory_space &&
         a.suffix == b.suffix && a.opaque_text == b.opaque_text;
}

Var* ClosedJaxpr::NewVar(std::string name, Aval aval, bool is_drop) {
  auto v = std::make_unique<Var>();
  v->name = std::move(name);
  v->aval = std::move(aval);
  v->is_drop = is_drop;
  vars_.push_back(std::move(v));
  return vars_.back().get();
}

std::optional<std::string> JaxprFile::Header(absl::string_view key) const {
  for (const auto& [k, v] : header) {
    if (k == key) return v;
  }
  return std::nullopt;
}

namespace {

// For an operand of a call or control-flow equation, the aval of the nested
// jaxpr's invar that receives it: an untyped literal passed to `pjit` takes
// the callee's type, not a sibling operand's.
const Aval* CalleeInvarAval(const Eqn& eqn, const Literal& lit) {
  int index = -1;
  for (size_t i = 0; i < eqn.inputs.size(); ++i) {
    if (eqn.inputs[i].literal.get() == &lit) index = static_cast<int>(i);
  }
  if (index < 0) return nullptr;
  auto invar = [](const ClosedJaxpr* j, int i) -> const Aval* {
    if (j == nullptr || i < 0 || i >= static_cast<int>(j->invars.size())) {
      return nullptr;
    }
    return &j->invars[i]->aval;
  };
  const Params& p = eqn.params;
  if (eqn.primitive == "cond") {
    auto branches = p.GetJaxprs("branches");
    if (!branches.ok() || branches->empty()) return nullptr;
    return invar((*branches)[0], index - 1);
  }
  if (eqn.primitive == "while") {
    auto cond_nconsts = p.GetInt("cond_nconsts");
    if (!cond_nconsts.ok()) return nullptr;
    if (index < *cond_nconsts) {
      auto cond = p.GetJaxpr("cond_jaxpr");
      return cond.ok() ? invar(*cond, index) : nullptr;
    }
    auto body = p.GetJaxpr("body_jaxpr");
    return body.ok() ? invar(*body, index - static_cast<int>(*cond_nconsts))
                     : nullptr;
  }
  for (const char* key : {"jaxpr", "call_jaxpr", "fun_jaxpr"}) {
    if (p.Has(key)) {
      auto j = p.GetJaxpr(key);
      // Scan bodies see xs without the leading axis: the dtype still holds.
      return j.ok() ? invar(*j, index) : nullptr;
    }
  }
  return nullptr;
}

}  // namespace

DType LiteralDType(const Literal& lit, const Eqn* eqn) {
  if (lit.aval.has_value() && lit.aval->is_shaped()) return lit.aval->dtype;
  if (lit.kind == Literal::Kind::kBool) return DType::kBool;
  if (eqn != nullptr) {
    if (const Aval* callee = CalleeInvarAval(*eqn, lit);
        callee != nullptr && callee->is_shaped()) {
      return callee->dtype;
    }
    DType same_kind = DType::kInvalid;
    DType any_number = DType::kInvalid;
    for (const Atom& a : eqn->inputs) {
      if (a.is_literal() || !a.var->aval.is_shaped()) continue;
      const DType d = a.var->aval.dtype;
      const bool match =
          lit.kind == Literal::Kind::kFloat ? IsFloat(d) : IsInteger(d);
      if (match && same_kind == DType::kInvalid) same_kind = d;
      if ((IsFloat(d) || IsInteger(d)) && any_number == DType::kInvalid) {
        any_number = d;
      }
    }
    if (same_kind != DType::kInvalid) return same_kind;
    if (lit.kind == Literal::Kind::kInt && any_number != DType::kInvalid) {
      return any_number;
    }
    // No operand to follow (`broadcast_in_dim[...] 1.0` in a bf16 program):
    // the result's dtype when it is of the literal's kind, as JAX's weak
    // typing gives the literal the dtype it combines into.
    if (lit.kind == Literal::Kind::kFloat && !eqn->outputs.empty() &&
        eqn->outputs[0] != nullptr && eqn->outputs[0]->aval.is_shaped() &&
        IsFloat(eqn->outputs[0]->aval.dtype)) {
      return eqn->outputs[0]->aval.dtype;
    }
    // JAX 0.4.2x printed weak-typed literals by value alone, so a Python
    // int combined into a float result shows as `x:bf16[] = neg 1`: with no
    // typed operand the literal has the declared result's numeric dtype.
    if (lit.kind == Literal::Kind::kInt && !eqn->outputs.empty() &&
        eqn->outputs[0] != nullptr && eqn->outputs[0]->aval.is_shaped() &&
        (IsFloat(eqn->outputs[0]->aval.dtype) ||
         IsInteger(eqn->outputs[0]->aval.dtype)) &&
        eqn->primitive != "convert_element_type") {
      return eqn->outputs[0]->aval.dtype;
    }
  }
  if (lit.kind == Literal::Kind::kComplex) return DType::kC64;
  return lit.kind == Literal::Kind::kFloat ? DType::kF32 : DType::kI32;
}

namespace {
void VisitParamJaxprs(const ParamValue& value,
                      const std::function<void(const Eqn&)>& fn) {
  if (value.kind() == ParamValue::Kind::kJaxpr && value.jaxpr() != nullptr) {
    ForEachEqn(*value.jaxpr(), fn);
  } else if (value.kind() == ParamValue::Kind::kJaxprTuple ||
             value.kind() == ParamValue::Kind::kTuple) {
    for (const ParamValue& item : value.items()) VisitParamJaxprs(item, fn);
  }
}
}  // namespace

void ForEachEqn(const ClosedJaxpr& jaxpr,
                const std::function<void(const Eqn&)>& fn) {
  for (const Eqn& eqn : jaxpr.eqns) {
    fn(eqn);
    for (const auto& [key, value] : eqn.params.entries()) {
      VisitParamJaxprs(value, fn);
    }
  }
}

}  // namespace jax2onnx::jaxpr
