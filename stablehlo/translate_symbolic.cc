// Symbolic (dynamic) dimensions: the `?` dims of `jax.export` modules with
// symbolic shapes.
//
// Every `?` of an @main argument becomes a symbol of the data model (an
// ONNX dim_param). JAX's @main computes each dimension variable from the
// argument shapes (`get_dimension_size`, arithmetic) and passes it to
// `@_wrapped_jax_export_main` as an argument marked `jax.global_constant =
// "b"`; the translation tracks, for every small integer tensor, the
// dimension expressions it holds ("dim values"), so that
// - a `?` bound to a global constant is named after it (`b`), and a `?`
//   that a `shape_assertion` states equal to another symbol shares its name
//   (translate.cc runs the translation a second time with those names);
// - `dynamic_broadcast_in_dim`, `dynamic_reshape`, `dynamic_iota` and
//   `real_dynamic_slice` get symbolic shapes from their shape operands;
// - any other `?` result dim is inferred by the type checker's rule for the
//   emitted primitive (OpContext::Emit), or the op is refused.
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/typecheck/rules.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {

using jaxpr::DimExpr;
namespace tc = jaxpr::typecheck;

bool IsUnknownDim(const DimExpr& d) {
  return d.kind() == DimExpr::Kind::kSymbol && d.symbol() == kUnknownDim;
}
bool HasUnknownDim(const Aval& aval) {
  if (!aval.is_shaped()) return false;
  for (const DimExpr& d : aval.shape) {
    if (!d.is_constant()) {
      std::vector<std::string> syms;
      d.CollectSymbols(&syms);
      for (const std::string& s : syms) {
        if (s == kUnknownDim) return true;
      }
    }
  }
  return false;
}

absl::StatusOr<std::vector<DimExpr>> DimOperand(OpContext& ctx, int operand,
                                                absl::string_view what) {
  J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(operand));
  if (auto a = ctx.ConstValue(v)) {
    std::vector<DimExpr> out;
    for (int64_t i = 0; i < a->num_elements(); ++i) {
      out.push_back(DimExpr::Constant(a->GetAsInt64(i)));
    }
    return out;
  }
  if (auto dims = ctx.DimValues(v)) return *dims;
  return ctx.Unsupported(absl::StrCat(
      "operand #", operand, " (", what,
      ") is neither a constant nor computed from the argument shapes "
      "(data-dependent ",
      what, ")"));
}

ParamValue DimsParam(const std::vector<DimExpr>& dims) {
  // An expression is an opaque item (`(4*b,)`: Tuple[Opaque "4*b"]), which
  // the interpreter and both lowerings read, and which the jaxpr parser
  // reads back from the printed program (a fixed point).
  std::vector<ParamValue> items;
  for (const DimExpr& d : dims) {
    if (d.is_constant()) {
      items.push_back(ParamValue::Int(d.constant_value()));
    } else if (d.kind() == DimExpr::Kind::kSymbol) {
      items.push_back(ParamValue::Name(d.symbol()));
    } else {
      items.push_back(ParamValue::Opaque(d.ToString()));
    }
  }
  return ParamValue::Tuple(std::move(items));
}

namespace {

// Ops whose result has the shape of their (same-rank) operands.
bool IsShapePreserving(const std::string& name) {
  static const absl::flat_hash_set<std::string>* names = [] {
    TranslatorTable t;
    RegisterElementwiseOps(t);
    RegisterChloOps(t);
    auto* s = new absl::flat_hash_set<std::string>();
    for (const auto& [n, fn] : t) s->insert(n);
    for (const char* n : {"chlo.top_k", "chlo.scan", "chlo.ragged_dot",
                          "stablehlo.bitcast_convert"}) {
      s->erase(n);
    }
    return s;
  }();
  return names->contains(name);
}

// Elementwise binary arithmetic on dim values.
std::optional<std::vector<DimExpr>> Combine(const std::string& op,
                                            const std::vector<DimExpr>& a,
                                            const std::vector<DimExpr>& b) {
  if (a.size() != b.size()) return std::nullopt;
  std::vector<DimExpr> out;
  for (size_t i = 0; i < a.size(); ++i) {
    if (op == "stablehlo.add") {
      out.push_back(tc::DimAdd(a[i], b[i]));
    } else if (op == "stablehlo.subtract") {
      out.push_back(tc::DimSub(a[i], b[i]));
    } else if (op == "stablehlo.multiply") {
      out.push_back(tc::DimMul(a[i], b[i]));
    } else if (op == "stablehlo.maximum") {
      out.push_back(tc::DimMax(a[i], b[i]));
    } else {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace

absl::Status ResolveResultDims(OpContext& ctx, Aval* aval) {
  if (!HasUnknownDim(*aval)) return absl::OkStatus();
  const std::string& name = ctx.op().name;
  int shape_operand = -1;
  if (name == "stablehlo.dynamic_broadcast_in_dim" ||
      name == "stablehlo.dynamic_reshape") {
    shape_operand = 1;
  } else if (name == "stablehlo.dynamic_iota") {
    shape_operand = 0;
  }
  if (shape_operand >= 0) {
    J2O_ASSIGN_OR_RETURN(Val s, ctx.Input(shape_operand));
    auto dims = ctx.DimValues(s);
    if (!dims.has_value() || dims->size() != aval->shape.size()) {
      return ctx.Unsupported(
          "the shape operand is not computed from the argument shapes (a "
          "data-dependent shape)");
    }
    for (size_t i = 0; i < dims->size(); ++i) {
      if (IsUnknownDim(aval->shape[i])) aval->shape[i] = (*dims)[i];
    }
    return absl::OkStatus();
  }
  if (name == "stablehlo.broadcast_in_dim") {
    // A `?` result dim that an operand dim maps to is that dim.
    auto dims = ctx.IntListAttr(ctx.op().Attr("dims") ? "dims"
                                                      : "broadcast_dimensions");
    J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
    if (dims.ok() && static_cast<int>(dims->size()) == x.aval.rank()) {
      for (int i = 0; i < x.aval.rank(); ++i) {
        const int64_t r = (*dims)[i];
        if (r >= 0 && r < aval->rank() && IsUnknownDim(aval->shape[r])) {
          aval->shape[r] = x.aval.shape[i];
        }
      }
    }
    return absl::OkStatus();
  }
  if (IsShapePreserving(name)) {
    for (int k = 0; k < ctx.num_inputs(); ++k) {
      J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(k));
      if (x.aval.rank() != aval->rank()) continue;
      for (int i = 0; i < aval->rank(); ++i) {
        if (IsUnknownDim(aval->shape[i]) && !IsUnknownDim(x.aval.shape[i])) {
          aval->shape[i] = x.aval.shape[i];
        }
      }
    }
  }
  // Otherwise the `?` stays a placeholder that Emit infers.
  return absl::OkStatus();
}

void PropagateDimValues(OpContext& ctx) {
  const Operation& op = ctx.op();
  if (op.results.size() != 1) return;
  // Only these ops carry dimension values (and looking up the operands of
  // others could capture values into a region needlessly).
  static const absl::flat_hash_set<std::string>* carriers =
      new absl::flat_hash_set<std::string>(
          {"stablehlo.convert", "stablehlo.reshape",
           "stablehlo.broadcast_in_dim", "stablehlo.concatenate",
           "stablehlo.slice", "stablehlo.add", "stablehlo.subtract",
           "stablehlo.multiply", "stablehlo.maximum", "stablehlo.compare"});
  if (!carriers->contains(op.name)) return;
  auto result = ctx.scope()->Lookup(op.results[0], op.loc);
  if (!result.ok() || result->atom.is_literal() || !result->aval.is_shaped() ||
      result->aval.rank() > 1 || ctx.num_inputs() > 8) {
    return;
  }
  const std::string& name = op.name;
  std::vector<std::optional<std::vector<DimExpr>>> in;
  for (int k = 0; k < ctx.num_inputs(); ++k) {
    auto v = ctx.Input(k);
    if (!v.ok()) return;
    in.push_back(ctx.DimValues(*v));
  }
  // `compare` of two dimension values: what a shape_assertion asserts.
  if (name == "stablehlo.compare" && in.size() == 2 && in[0].has_value() &&
      in[1].has_value() && in[0]->size() == 1 && in[1]->size() == 1) {
    if (op.HasWord("EQ")) {
      ctx.SetDimEquality(*result, (*in[0])[0], (*in[1])[0]);
    }
    for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      if (op.HasWord(dir)) {
        ctx.SetDimComparison(*result, {dir, (*in[0])[0], (*in[1])[0]});
        break;
      }
    }
    return;
  }
  if (!jaxpr::IsInteger(result->aval.dtype)) return;
  std::optional<std::vector<DimExpr>> out;
  if (name == "stablehlo.convert" || name == "stablehlo.reshape" ||
      name == "stablehlo.broadcast_in_dim") {
    if (in.size() >= 1 && in[0].has_value()) {
      out = in[0];
      auto n = result->aval.StaticShape();
      if (n.has_value() && !n->empty() && out->size() == 1 && (*n)[0] != 1) {
        out = std::vector<DimExpr>((*n)[0], (*in[0])[0]);
      }
    }
  } else if (name == "stablehlo.concatenate") {
    std::vector<DimExpr> all;
    for (const auto& v : in) {
      if (!v.has_value()) return;
      all.insert(all.end(), v->begin(), v->end());
    }
    out = all;
  } else if (name == "stablehlo.slice" && in.size() == 1 && in[0].has_value()) {
    auto start = ctx.IntListAttr("start_indices");
    auto limit = ctx.IntListAttr("limit_indices");
    if (!start.ok() && !op.positional.empty()) {
      // Pretty form `[a:b]` / `[a:b:s]`: one range for a 1-D operand.
      absl::string_view r = op.positional[0];
      std::vector<absl::string_view> parts =
          SplitTopLevel(StripSpace(r.substr(1, r.size() - 2)), ':');
      int64_t a = 0, b = 0, s = 1;
      if (parts.size() < 2 || !absl::SimpleAtoi(parts[0], &a) ||
          !absl::SimpleAtoi(parts[1], &b) ||
          (parts.size() > 2 && !absl::SimpleAtoi(parts[2], &s)) || s <= 0) {
        return;
      }
      std::vector<DimExpr> v;
      for (int64_t i = a; i < b && i < static_cast<int64_t>(in[0]->size());
           i += s) {
        v.push_back((*in[0])[i]);
      }
      out = v;
    } else if (start.ok() && limit.ok() && start->size() == 1) {
      std::vector<int64_t> strides = {1};
      if (auto s = ctx.IntListAttr("strides"); s.ok()) strides = *s;
      std::vector<DimExpr> v;
      for (int64_t i = (*start)[0];
           i < (*limit)[0] && i < static_cast<int64_t>(in[0]->size());
           i += strides[0]) {
        v.push_back((*in[0])[i]);
      }
      out = v;
    }
  } else if (in.size() == 2 && in[0].has_value() && in[1].has_value()) {
    out = Combine(name, *in[0], *in[1]);
  }
  if (out.has_value() && out->size() <= 16) {
    ctx.SetDimValues(*result, std::move(*out));
  }
}

}  // namespace jax2onnx::stablehlo
