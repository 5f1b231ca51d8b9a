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
  for (const DimExpr& d : dims) items.push_back(jaxpr::DimParam(d));
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
    } else if (op == "stablehlo.minimum") {
      out.push_back(tc::DimMin(a[i], b[i]));
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

namespace {

using IntFact = OpContext::IntFact;

// The steps of JAX's integer floor division and remainder (jnp.floor_divide
// and jnp.remainder in jax/_src/numpy/ufuncs.py, which jnp.divmod calls and
// mlir.eval_dynamic_shape reaches through Python's divmod for a symbolic
// floordiv(a, b) or mod(a, b)), as facts on scalars, assembled when the
// final select appears:
//   floordiv: q = divide(a, b); r = remainder(a, b);
//             select(and(ne(sign(a), sign(b)), ne(r, 0)), q - 1, q)
//   mod:      b' = select(eq(b, 0), 1, b); r = remainder(a, b');
//             select(and(ne(lt(r, 0), lt(b', 0)), ne(r, 0)), r + b', r)
// Returns true when `op` was such a step (its fact or dim value recorded).
bool PropagateDivisionFacts(
    OpContext& ctx, const Val& result,
    const std::vector<std::optional<std::vector<DimExpr>>>& in) {
  const std::string& name = ctx.op().name;
  if (result.aval.rank() != 0) return false;
  auto dim = [&](int k) -> std::optional<DimExpr> {
    if (k >= static_cast<int>(in.size()) || !in[k].has_value() ||
        in[k]->size() != 1) {
      return std::nullopt;
    }
    return (*in[k])[0];
  };
  auto fact = [&](int k) -> std::optional<IntFact> {
    auto v = ctx.Input(k);
    if (!v.ok()) return std::nullopt;
    return ctx.GetIntFact(*v);
  };
  auto is = [](const std::optional<IntFact>& f, const char* kind) {
    return f.has_value() && f->kind == kind;
  };
  auto constant = [&](int k) -> std::optional<int64_t> {
    std::optional<DimExpr> d = dim(k);
    if (!d.has_value() || !d->is_constant()) return std::nullopt;
    return d->constant_value();
  };
  auto set = [&](const char* kind, DimExpr a, DimExpr b) {
    ctx.SetIntFact(result, {kind, std::move(a), std::move(b)});
    return true;
  };
  const DimExpr none = DimExpr::Constant(0);
  if (name == "stablehlo.convert" || name == "stablehlo.reshape" ||
      name == "stablehlo.broadcast_in_dim") {
    if (std::optional<IntFact> f = fact(0)) {
      ctx.SetIntFact(result, *f);
      return true;
    }
    return false;
  }
  if (name == "stablehlo.divide" && dim(0) && dim(1)) {
    return set("div", *dim(0), *dim(1));
  }
  if (name == "stablehlo.remainder" && dim(0) && dim(1)) {
    return set("rem", *dim(0), *dim(1));
  }
  if (name == "stablehlo.sign" && dim(0)) return set("sign", *dim(0), none);
  if (name == "stablehlo.subtract" && is(fact(0), "div") && constant(1) == 1) {
    return set("div-1", fact(0)->a, fact(0)->b);
  }
  if (name == "stablehlo.add" && is(fact(0), "rem") && dim(1) &&
      *dim(1) == fact(0)->b) {
    return set("rem+b", fact(0)->a, fact(0)->b);
  }
  if (name == "stablehlo.compare") {
    const Operation& op = ctx.op();
    if (op.HasWord("NE") && is(fact(0), "sign") && is(fact(1), "sign")) {
      return set("signs-differ", fact(0)->a, fact(1)->a);
    }
    if (op.HasWord("NE") && is(fact(0), "rem") && constant(1) == 0) {
      return set("rem-nonzero", fact(0)->a, fact(0)->b);
    }
    if (op.HasWord("LT") && is(fact(0), "rem") && constant(1) == 0) {
      return set("rem-neg", fact(0)->a, fact(0)->b);
    }
    // These two compare dim values: the comparison is recorded as well
    // (a shape_assertion may read it), so they report false.
    if (op.HasWord("LT") && dim(0) && constant(1) == 0) {
      set("neg", *dim(0), none);
      return false;
    }
    if (op.HasWord("EQ") && dim(0) && constant(1) == 0) {
      set("is-zero", *dim(0), none);
      return false;
    }
    if (op.HasWord("NE") && is(fact(0), "rem-neg") && is(fact(1), "neg") &&
        fact(1)->a == fact(0)->b) {
      return set("mod-signs-differ", fact(0)->a, fact(0)->b);
    }
    return false;
  }
  if (name == "stablehlo.and") {
    for (int i = 0; i < 2; ++i) {
      std::optional<IntFact> x = fact(i), y = fact(1 - i);
      if (!is(y, "rem-nonzero")) continue;
      if (is(x, "signs-differ") && x->a == y->a && x->b == y->b) {
        return set("floor-adjust", y->a, y->b);
      }
      if (is(x, "mod-signs-differ") && x->a == y->a && x->b == y->b) {
        return set("mod-adjust", y->a, y->b);
      }
    }
    return false;
  }
  if (name == "stablehlo.select") {
    std::optional<IntFact> p = fact(0), x = fact(1), y = fact(2);
    if (is(p, "floor-adjust") && is(x, "div-1") && is(y, "div") &&
        x->a == p->a && x->b == p->b && y->a == p->a && y->b == p->b) {
      ctx.SetDimValues(result, {tc::DimFloorDiv(p->a, p->b)});
      return true;
    }
    if (is(p, "mod-adjust") && is(x, "rem+b") && is(y, "rem") && x->a == p->a &&
        x->b == p->b && y->a == p->a && y->b == p->b) {
      ctx.SetDimValues(result, {DimExpr::Mod(p->a, p->b)});
      return true;
    }
    // The divisor guard x2 = where(x2 == 0, 1, x2): a divisor dim is never 0.
    if (is(p, "is-zero") && constant(1) == 1 && dim(2) && *dim(2) == p->a) {
      ctx.SetDimValues(result, {p->a});
      return true;
    }
  }
  return false;
}

}  // namespace

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
           "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum",
           "stablehlo.compare", "stablehlo.negate", "stablehlo.divide",
           "stablehlo.remainder", "stablehlo.sign", "stablehlo.and",
           "stablehlo.select"});
  if (!carriers->contains(op.name)) return;
  auto result = ctx.scope()->Lookup(op.results[0], op.loc);
  if (!result.ok() || result->atom.is_literal() || !result->aval.is_shaped() ||
      result->aval.rank() > 2 || ctx.num_inputs() > 8) {
    return;
  }
  const std::string& name = op.name;
  // Rank 2 only as the [N, 2] padding of a dynamic_conv: a reshape of a
  // vector, or a concatenate of such rows along dim 0 (row-major order).
  if (result->aval.rank() == 2) {
    const bool rows =
        name == "stablehlo.reshape" ||
        (name == "stablehlo.concatenate" &&
         ctx.IntAttr("dimension").value_or(ctx.IntAttr("dim").value_or(-1)) ==
             0);
    if (!rows) return;
  }
  std::vector<std::optional<std::vector<DimExpr>>> in;
  for (int k = 0; k < ctx.num_inputs(); ++k) {
    auto v = ctx.Input(k);
    if (!v.ok()) return;
    in.push_back(ctx.DimValues(*v));
  }
  if (PropagateDivisionFacts(ctx, *result, in)) return;
  if (name == "stablehlo.negate" && in.size() == 1 && in[0].has_value()) {
    std::vector<DimExpr> out;
    for (const DimExpr& d : *in[0]) out.push_back(tc::DimMulConst(d, -1));
    ctx.SetDimValues(*result, std::move(out));
    return;
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
