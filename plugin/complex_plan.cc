#include "plugin/complex_plan.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "jaxpr/mesh.h"

namespace jax2onnx::plugin::complex {
namespace {

bool IsComplexAtom(const jaxpr::Atom& atom, const jaxpr::Eqn& eqn) {
  if (!atom.is_literal()) {
    return atom.var->aval.is_shaped() && jaxpr::IsComplex(atom.var->aval.dtype);
  }
  return jaxpr::IsComplex(jaxpr::LiteralDType(*atom.literal, &eqn));
}

const absl::flat_hash_map<std::string, Kind>& KindTable() {
  static const auto* table = [] {
    auto* t = new absl::flat_hash_map<std::string, Kind>();
    for (const char* p :
         {"pjit", "jit", "closed_call", "core_call", "remat", "remat2",
          "checkpoint", "custom_jvp_call", "custom_vjp_call",
          "custom_vjp_call_jaxpr", "stop_gradient", "copy", "copy_p",
          "optimization_barrier", "cond", "while", "scan", "shard_map",
          "custom_linear_solve",
          // hetrd: its decomposition (jaxpr/text/tridiagonal.h) inlined.
          "tridiagonal",
          // A leading dim of the [..., 2] pairs: the complex value's dim.
          "dimension_size"}) {
      (*t)[p] = Kind::kTransparent;
    }
    // The generic reduce and reduce_window run their combiner jaxpr inline
    // on whole tensors: their lowerings carry complex operands as real
    // [..., 2] tensors and the combiner's complex equations go through
    // the complex recipes like any other equation.
    for (const char* p : {"reduce", "reduce_window"}) {
      (*t)[p] = Kind::kTransparent;
    }
    for (const std::string& p : jaxpr::ShardingMarkerPrimitives()) {
      (*t)[p] = Kind::kTransparent;
    }
    for (const char* p : {"transpose",
                          "reshape",
                          "squeeze",
                          "expand_dims",
                          "broadcast_in_dim",
                          "slice",
                          "dynamic_slice",
                          "dynamic_update_slice",
                          "concatenate",
                          "pad",
                          "rev",
                          "select_n",
                          "gather",
                          "scatter",
                          "scatter-add",
                          "scatter_add",
                          "scatter-sub",
                          "scatter_sub",
                          "reduce_sum",
                          "cumsum",
                          "reduce_window_sum",
                          "split"}) {
      (*t)[p] = Kind::kPartwise;
    }
    for (const char* p : {"complex",     "real",
                          "imag",        "conj",
                          "neg",         "add",
                          "sub",         "add_any",
                          "mul",         "div",
                          "abs",         "exp",
                          "log",         "sqrt",
                          "rsqrt",       "exp2",
                          "tan",         "expm1",
                          "log1p",       "sin",
                          "cos",         "tanh",
                          "sign",        "square",
                          "integer_pow", "eq",
                          "ne",          "convert_element_type",
                          "dot_general", "fft",
                          "pow",         "reduce_prod",
                          "cumprod",     "conv_general_dilated",
                          "sinh",        "cosh",
                          "logistic",    "sort",
                          "asin",        "acos",
                          "asinh",       "acosh",
                          "atan",        "atanh",
                          "max",         "min",
                          "reduce_max",  "reduce_min",
                          "cummax",      "cummin",
                          "clamp",       "iota"}) {
      (*t)[p] = Kind::kRecipe;
    }
    // The factorizations (linalg_complex_plan.h, qr_complex_plan.h,
    // eig_complex_plan.h; eig, always complex-valued: eig_general_plan.h).
    for (const char* p : {"cholesky", "triangular_solve", "lu", "qr", "geqrf",
                          "householder_product", "eigh", "svd",
                          "tridiagonal_solve", "eig", "hessenberg", "schur"}) {
      (*t)[p] = Kind::kRecipe;
    }
    return t;
  }();
  return *table;
}

// The part dtype named in a dtype param (complex64 -> float32).
jaxpr::ParamValue RealParam(const jaxpr::ParamValue& v) {
  if (v.kind() == jaxpr::ParamValue::Kind::kName) {
    if (v.text() == "complex64") return jaxpr::ParamValue::Name("float32");
    if (v.text() == "complex128") return jaxpr::ParamValue::Name("float64");
  }
  return v;
}

}  // namespace

bool InvolvesComplex(const jaxpr::Eqn& eqn) {
  for (const jaxpr::Atom& a : eqn.inputs) {
    if (IsComplexAtom(a, eqn)) return true;
  }
  for (const jaxpr::Var* v : eqn.outputs) {
    if (v->aval.is_shaped() && jaxpr::IsComplex(v->aval.dtype)) return true;
  }
  return false;
}

Kind ComplexKind(absl::string_view primitive) {
  auto it = KindTable().find(primitive);
  return it == KindTable().end() ? Kind::kNone : it->second;
}

bool AlsoLowersRealOperands(absl::string_view primitive) {
  return primitive == "schur";
}

absl::Status RefuseComplex(const jaxpr::Eqn& eqn) {
  // Primitives JAX traces on complex values but cannot lower or run: there
  // is no JAX result to match.
  std::string why;
  if (eqn.primitive == "argmax" || eqn.primitive == "argmin") {
    why =
        "; JAX itself cannot run it: its lowering compares with lax.gt/lax.lt, "
        "which reject complex operands";
  }
  return absl::UnimplementedError(absl::StrCat(
      "'", eqn.primitive,
      "' on complex values is not supported (complex values are lowered as "
      "real [..., 2] tensors; supported primitives: see docs/complex.md)",
      why));
}

std::vector<std::string> ComplexPrimitives(Kind kind) {
  std::vector<std::string> out;
  for (const auto& [name, k] : KindTable()) {
    if (k == kind) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

RealEqn MakeRealEqn(const jaxpr::Eqn& eqn, const std::vector<int>& parts) {
  RealEqn r;
  r.eqn.primitive = eqn.primitive;
  r.eqn.loc = eqn.loc;
  for (const auto& [key, value] : eqn.params.entries()) {
    r.eqn.params.Set(key, RealParam(value));
  }
  for (size_t i = 0; i < eqn.inputs.size(); ++i) {
    const jaxpr::Atom& a = eqn.inputs[i];
    if (!IsComplexAtom(a, eqn)) {
      r.eqn.inputs.push_back(a);
      continue;
    }
    const int part = i < parts.size() ? parts[i] : 0;
    if (a.is_literal()) {
      jaxpr::Literal lit;
      lit.kind = jaxpr::Literal::Kind::kFloat;
      lit.float_value =
          part == 0 ? a.literal->float_value : a.literal->imag_value;
      lit.text = absl::StrCat(lit.float_value);
      lit.aval = jaxpr::Aval::Static(
          ComplexPartDType(jaxpr::LiteralDType(*a.literal, &eqn)), {});
      r.eqn.inputs.push_back(jaxpr::Atom::OfLiteral(std::move(lit)));
      continue;
    }
    auto var = std::make_unique<jaxpr::Var>();
    var->name = absl::StrCat(a.var->name, part == 0 ? "_re" : "_im");
    var->aval = a.var->aval;
    var->aval.dtype = ComplexPartDType(var->aval.dtype);
    var->aval.dtype_name = std::string(jaxpr::ShortName(var->aval.dtype));
    r.eqn.inputs.push_back(jaxpr::Atom::OfVar(var.get()));
    r.replaced.push_back(static_cast<int>(i));
    r.owned.push_back(std::move(var));
  }
  for (const jaxpr::Var* out : eqn.outputs) {
    auto var = std::make_unique<jaxpr::Var>(*out);
    if (var->aval.is_shaped()) {
      var->aval.dtype = ComplexPartDType(var->aval.dtype);
      var->aval.dtype_name = std::string(jaxpr::ShortName(var->aval.dtype));
    }
    r.eqn.outputs.push_back(var.get());
    r.owned.push_back(std::move(var));
  }
  return r;
}

}  // namespace jax2onnx::plugin::complex
