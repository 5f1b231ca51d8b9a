#include "jaxpr/argument_shape_checks.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace jax2onnx::jaxpr {
namespace {

// jax.export's messages (shape_poly.py, _solve_dim_equations).
constexpr char kPrefix[] =
    "Input shapes do not match the polymorphic shapes specification. ";

class Builder {
 public:
  explicit Builder(const ClosedJaxpr& main)
      : checks_(std::make_unique<ClosedJaxpr>()), loc_(main.loc) {}

  // dimension_size[dimension=axis] x, as an i64 scalar.
  Atom DimensionSize(Var* x, int axis) {
    Params p;
    p.Set("dimension", ParamValue::Int(axis));
    return Emit("dimension_size", std::move(p), {Atom::OfVar(x)}, DType::kI64);
  }
  // dim_as_value[dim=EXPR], as an i64 scalar.
  Atom DimAsValue(const DimExpr& d) {
    Params p;
    p.Set("dim", DimParam(d));
    return Emit("dim_as_value", std::move(p), {}, DType::kI64);
  }
  Atom Compare(const char* primitive, Atom a, Atom b) {
    return Emit(primitive, Params(), {std::move(a), std::move(b)},
                DType::kBool);
  }
  void Assert(Atom ok, std::vector<Atom> quoted, std::string message) {
    Eqn eqn;
    eqn.primitive = "shape_assertion";
    eqn.params.Set("error_message", ParamValue::Opaque(std::move(message)));
    eqn.inputs.push_back(std::move(ok));
    for (Atom& a : quoted) eqn.inputs.push_back(std::move(a));
    eqn.loc = loc_;
    checks_->eqns.push_back(std::move(eqn));
  }
  std::unique_ptr<ClosedJaxpr> Finish() {
    if (checks_->eqns.empty()) return nullptr;
    return std::move(checks_);
  }

 private:
  Atom Emit(std::string primitive, Params params, std::vector<Atom> inputs,
            DType dtype) {
    Eqn eqn;
    eqn.primitive = std::move(primitive);
    eqn.params = std::move(params);
    eqn.inputs = std::move(inputs);
    Var* out = checks_->NewVar(absl::StrCat("shape_check_", next_++),
                               Aval::Shaped(dtype, {}));
    eqn.outputs.push_back(out);
    eqn.loc = loc_;
    checks_->eqns.push_back(std::move(eqn));
    return Atom::OfVar(out);
  }

  std::unique_ptr<ClosedJaxpr> checks_;
  SourceLoc loc_;
  int next_ = 0;
};

std::string DimName(int input, int axis) {
  return absl::StrCat("args[", input, "].shape[", axis, "]");
}

}  // namespace

std::unique_ptr<ClosedJaxpr> ArgumentShapeChecks(const ClosedJaxpr& main) {
  for (const Eqn& eqn : main.eqns) {
    if (eqn.primitive == "shape_assertion") return nullptr;
  }
  // The first whole-dim occurrence of each symbol: where its value is read
  // (the origin dim_as_value reads).
  absl::flat_hash_set<std::string> bound;
  absl::flat_hash_set<std::pair<int, int>> is_origin;  // (input, axis)
  for (size_t i = 0; i < main.invars.size(); ++i) {
    const Aval& aval = main.invars[i]->aval;
    if (!aval.is_shaped()) continue;
    for (int axis = 0; axis < aval.rank(); ++axis) {
      const DimExpr& d = aval.shape[axis];
      if (d.kind() == DimExpr::Kind::kSymbol &&
          bound.insert(d.symbol()).second) {
        is_origin.insert({static_cast<int>(i), axis});
      }
    }
  }
  Builder b(main);
  for (size_t i = 0; i < main.invars.size(); ++i) {
    const Aval& aval = main.invars[i]->aval;
    if (!aval.is_shaped()) continue;
    for (int axis = 0; axis < aval.rank(); ++axis) {
      const DimExpr& d = aval.shape[axis];
      if (d.is_constant()) continue;
      if (is_origin.contains({static_cast<int>(i), axis})) continue;
      std::vector<std::string> symbols;
      d.CollectSymbols(&symbols);
      bool computable = true;
      for (const std::string& s : symbols) computable &= bound.contains(s);
      if (!computable) continue;
      Atom actual = b.DimensionSize(main.invars[i], axis);
      Atom specified = b.DimAsValue(d);
      b.Assert(
          b.Compare("eq", actual, specified), {actual, specified},
          absl::StrCat(kPrefix, "Found inconsistency between dimension size ",
                       DimName(static_cast<int>(i), axis),
                       " (= {0}) and the specification '", d.ToString(),
                       "' (= {1})."));
    }
  }
  return b.Finish();
}

}  // namespace jax2onnx::jaxpr
