// The translation core: scopes, regions, calls, constants, the test-suite
// format (check ops, @inputs/@expected), and dispatch to the per-family
// translators registered in the table.
#include "stablehlo/translate.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/typecheck/typecheck.h"
#include "jaxpr/var_names.h"
#include "stablehlo/mlir_parser.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {

const TranslatorTable& Table() {
  static const TranslatorTable* table = [] {
    auto* t = new TranslatorTable();
    RegisterElementwiseOps(*t);
    RegisterShapeOps(*t);
    RegisterIndexingOps(*t);
    RegisterReduceOps(*t);
    RegisterControlOps(*t);
    RegisterCustomCallOps(*t);
    RegisterChloOps(*t);
    RegisterDotConvOps(*t);
    RegisterMiscOps(*t);
    RegisterDynamicOps(*t);
    RegisterSdyOps(*t);
    RegisterParallelOps(*t);
    return t;
  }();
  return *table;
}

class Translator {
 public:
  explicit Translator(const MlirFile& file,
                      absl::flat_hash_map<std::string, std::string> names = {})
      : file_(file), symbol_names_(std::move(names)) {
    root_ = std::make_shared<jaxpr::ClosedJaxpr>();
  }

  // Symbolic dims: see translate_symbolic.cc.
  absl::flat_hash_map<const jaxpr::Var*, std::vector<jaxpr::DimExpr>>
      dim_values;
  absl::flat_hash_map<const jaxpr::Var*,
                      std::pair<jaxpr::DimExpr, jaxpr::DimExpr>>
      dim_equalities;
  absl::flat_hash_map<const jaxpr::Var*, OpContext::DimComparison>
      dim_comparisons;
  absl::flat_hash_map<const jaxpr::Var*, OpContext::IntFact> int_facts;
  // Generated `?` symbol -> the name a global constant or an assertion
  // gives it (found by this run, used by the next).
  absl::flat_hash_map<std::string, std::string> found_names;
  // The first error of an Emit whose `?` result dims could not be inferred.
  absl::Status emit_error;
  Enclosing enclosing;

  // The final name of generated symbol `s` under the previous run's
  // findings (chains followed).
  std::string FinalName(std::string s) const {
    for (int i = 0; i < 64; ++i) {
      auto it = symbol_names_.find(s);
      if (it == symbol_names_.end()) break;
      s = it->second;
    }
    return s;
  }
  int next_symbol = 0;
  // Symbols of `?` dims: no variable takes their names.
  absl::flat_hash_set<std::string> dim_symbols;

  const std::string& path() const { return file_.path; }
  const std::string& text() const { return *file_.text; }

  jaxpr::Var* NewVar(jaxpr::ClosedJaxpr* j, const Aval& aval) {
    while (true) {
      std::string name = jaxpr::JaxVarName(counter_++);
      if (name == "in" || name == "let" || name == "if" || name == "do" ||
          name == "or" || name == "and" || name == "not" ||
          dim_symbols.contains(name)) {
        continue;
      }
      return j->NewVar(std::move(name), aval);
    }
  }

  // A root constvar for `array`; returns the name it is bound under in the
  // root scope (lookups from any scope reach it, capturing as needed).
  std::string AddConstVar(const jaxpr::Array& array, bool from_pure_call) {
    Aval aval = ShapedAval(array.dtype(), array.shape());
    jaxpr::Var* v = NewVar(root_.get(), aval);
    root_->constvars.push_back(v);
    consts_.push_back(array);
    const_values_[v] = array;
    if (from_pure_call) pure_call_vars_.insert(v);
    std::string name = absl::StrCat("$const", consts_.size() - 1);
    root_scope_->Bind(name, Val{Atom::OfVar(v), aval});
    return name;
  }

  absl::StatusOr<Val> ConstantIn(Scope* scope, const jaxpr::Array& array,
                                 bool force_var, Loc loc) {
    if (!force_var && array.rank() == 0) {
      auto lit = ScalarLiteral(array);
      if (lit.has_value()) return *lit;
    }
    std::string name = AddConstVar(array, force_var);
    return scope->Lookup(name, loc);
  }

  std::optional<Val> ScalarLiteral(const jaxpr::Array& a) {
    jaxpr::Literal lit;
    DType d = a.dtype();
    Aval aval = ShapedAval(d, {});
    if (d == DType::kBool) {
      lit.kind = jaxpr::Literal::Kind::kBool;
      lit.bool_value = a.GetAsInt64(0) != 0;
      lit.text = lit.bool_value ? "True" : "False";
    } else if (jaxpr::IsSignedInt(d) || (jaxpr::IsUnsignedInt(d) && d != DType::kU64)) {
      lit.kind = jaxpr::Literal::Kind::kInt;
      lit.int_value = a.GetAsInt64(0);
      lit.text = absl::StrCat(lit.int_value);
    } else if (d == DType::kU64) {
      uint64_t u = a.GetAsUInt64(0);
      if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      lit.kind = jaxpr::Literal::Kind::kInt;
      lit.int_value = static_cast<int64_t>(u);
      lit.text = absl::StrCat(lit.int_value);
    } else if (jaxpr::IsFloat(d)) {
      double v = a.GetAsDouble(0);
      lit.kind = jaxpr::Literal::Kind::kFloat;
      lit.float_value = v;
      if (std::isnan(v)) {
        // Only the canonical quiet NaN prints as `nan`.
        jaxpr::Array probe = jaxpr::Array::ScalarFromDouble(d, v);
        if (!(probe == a)) return std::nullopt;
        lit.text = "nan";
      } else if (std::isinf(v)) {
        lit.text = v > 0 ? "inf" : "-inf";
      } else {
        char buf[64];
        snprintf(buf, sizeof(buf), "%.17g", v);
        std::string s = buf;
        if (s.find_first_of(".e") == std::string::npos) s += ".0";
        if (std::strtod(s.c_str(), nullptr) != v) return std::nullopt;
        lit.text = s;
      }
    } else {
      return std::nullopt;
    }
    lit.aval = aval;
    return Val{Atom::OfLiteral(std::move(lit)), aval};
  }

  absl::Status TranslateBlock(Scope* scope, const Block& block,
                              std::vector<Val>* returned);
  absl::Status TranslateOp(Scope* scope, const Operation& op);
  absl::StatusOr<RegionJaxpr> TranslateRegion(Scope* scope,
                                              const Region& region,
                                              const std::vector<Aval>* avals);
  absl::Status InlineCall(Scope* scope, const Operation& op);

  absl::StatusOr<StablehloProgram> Run();

  const std::string& path_ref() const { return file_.path; }
  absl::StatusOr<jaxpr::Array> ConstValueOf(const Val& v, Loc loc);
  int call_depth = 0;
  const Func* FindFunction(const std::string& symbol) const {
    auto it = funcs_.find(symbol);
    return it == funcs_.end() ? nullptr : it->second;
  }

 private:
  bool IsTestModule(const Module& m) const;
  // `jax.global_constant = "b"` on a parameter bound to a `?` symbol of
  // @main names that symbol `b`.
  void NoteGlobalConstant(const FuncArg& arg, const Val& v) {
    const size_t at = arg.attrs.find("jax.global_constant");
    if (at == absl::string_view::npos || v.atom.is_literal()) return;
    absl::string_view rest = arg.attrs.substr(at);
    const size_t q1 = rest.find('"');
    const size_t q2 = q1 == absl::string_view::npos ? q1 : rest.find('"', q1 + 1);
    if (q2 == absl::string_view::npos) return;
    std::string name(rest.substr(q1 + 1, q2 - q1 - 1));
    auto it = dim_values.find(v.atom.var);
    if (name.empty() || name[0] == '_' || it == dim_values.end() ||
        it->second.size() != 1 ||
        it->second[0].kind() != jaxpr::DimExpr::Kind::kSymbol) {
      return;
    }
    if (it->second[0].symbol() != name) {
      found_names.try_emplace(it->second[0].symbol(), name);
    }
  }
  absl::Status HandleCheck(Scope* scope, const Operation& op);

  const MlirFile& file_;
  absl::flat_hash_map<std::string, std::string> symbol_names_;
  std::shared_ptr<jaxpr::ClosedJaxpr> root_;
  std::unique_ptr<Scope> root_scope_;
  std::vector<jaxpr::Array> consts_;
  absl::flat_hash_map<const jaxpr::Var*, jaxpr::Array> const_values_;
  absl::flat_hash_set<const jaxpr::Var*> pure_call_vars_;
  absl::flat_hash_map<std::string, const Func*> funcs_;
  int64_t counter_ = 0;
  bool test_mode_ = false;
  std::vector<std::pair<Val, jaxpr::Array>> checks_;
  bool all_exact_ = true;
  double almost_tol_ = 0;
};

// ---- Scope ----

absl::StatusOr<Val> Scope::Lookup(const std::string& name, Loc loc) {
  auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  if (parent_ == nullptr ||
      (!captures_ && !absl::StartsWith(name, "$const"))) {
    return MlirError(tr_->path(), loc,
                     absl::StrCat("use of undefined value ", name));
  }
  J2O_ASSIGN_OR_RETURN(Val outer, parent_->Lookup(name, loc));
  if (!captures_ || outer.atom.is_literal()) {
    values_[name] = outer;
    return outer;
  }
  jaxpr::Var* v = tr_->NewVar(jaxpr_, outer.aval);
  captured_list_.emplace_back(outer, v);
  Val inner{Atom::OfVar(v), outer.aval};
  values_[name] = inner;
  return inner;
}

// ---- OpContext ----

absl::StatusOr<Val> OpContext::Input(int i) {
  if (i < 0 || i >= num_inputs()) {
    return Error(absl::StrCat("expects operand #", i, " but has ",
                              num_inputs()));
  }
  return scope_->Lookup(op_.operands[i], op_.loc);
}

absl::StatusOr<Aval> OpContext::ResultAval(int i) {
  const std::vector<MlirType>* types = nullptr;
  if (op_.has_arrow) {
    types = &op_.result_types;
  } else {
    types = &op_.plain_types;
  }
  const MlirType* t = nullptr;
  if (static_cast<int>(types->size()) == num_results()) {
    t = &(*types)[i];
  } else if (!types->empty() && num_results() == 1) {
    t = &types->back();
  }
  if (t == nullptr) {
    return Error(absl::StrCat("cannot tell the type of result #", i));
  }
  auto aval = AvalOfType(*t);
  if (!aval.ok()) return Error(aval.status().message());
  J2O_RETURN_IF_ERROR(ResolveResultDims(*this, &*aval));
  return *aval;
}

void OpContext::Bind(int i, Val v) {
  if (i < num_results()) scope_->Bind(op_.results[i], std::move(v));
}

std::vector<Val> OpContext::Emit(const std::string& primitive, Params params,
                                 const std::vector<Val>& inputs,
                                 const std::vector<Aval>& out_avals) {
  jaxpr::Eqn eqn;
  eqn.primitive = primitive;
  eqn.params = std::move(params);
  eqn.loc = jaxpr::SourceLoc{op_.loc.line, op_.loc.col};
  for (const Val& v : inputs) eqn.inputs.push_back(v.atom);
  std::vector<Aval> avals = out_avals;
  bool unknown = false;
  for (const Aval& a : avals) unknown = unknown || HasUnknownDim(a);
  if (unknown) {
    // `?` result dims: the type rule of the primitive computes them.
    std::vector<std::unique_ptr<jaxpr::Var>> probes;
    for (const Aval& a : avals) {
      probes.push_back(std::make_unique<jaxpr::Var>());
      probes.back()->aval = a;
      eqn.outputs.push_back(probes.back().get());
    }
    auto inferred = jaxpr::InferResultAvals(eqn);
    eqn.outputs.clear();
    for (size_t i = 0; inferred.ok() && i < avals.size(); ++i) {
      if (i < inferred->size() && (*inferred)[i].has_value() &&
          !HasUnknownDim(*(*inferred)[i])) {
        avals[i].shape = (*inferred)[i]->shape;
      }
    }
    for (const Aval& a : avals) {
      if (HasUnknownDim(a) && tr_->emit_error.ok()) {
        tr_->emit_error = Unsupported(absl::StrCat(
            "cannot tell the dynamic (`?`) result dims of ", primitive,
            inferred.ok() ? "" : absl::StrCat(": ", inferred.status().message())));
      }
    }
  }
  std::vector<Val> outs;
  for (const Aval& a : avals) {
    jaxpr::Var* v = tr_->NewVar(scope_->jaxpr(), a);
    eqn.outputs.push_back(v);
    outs.push_back(Val{Atom::OfVar(v), a});
  }
  scope_->jaxpr()->eqns.push_back(std::move(eqn));
  return outs;
}

absl::Status OpContext::CallFunction(const std::string& symbol) {
  Operation call = op_;
  call.regions.clear();
  call.symbol = symbol;
  return tr_->InlineCall(scope_, call);
}

const Func* OpContext::FindFunction(const std::string& symbol) const {
  return tr_->FindFunction(symbol);
}

absl::Status OpContext::TranslateIn(Scope* scope, const Operation& op) {
  return tr_->TranslateOp(scope, op);
}

Enclosing& OpContext::enclosing() { return tr_->enclosing; }

std::optional<std::vector<jaxpr::DimExpr>> OpContext::DimValues(
    const Val& v) {
  // Scalars and vectors, and the [N, 2] (low, high) pairs of a
  // dynamic_conv's padding, row-major.
  if (!v.aval.is_shaped() || v.aval.rank() > 2 ||
      !jaxpr::IsInteger(v.aval.dtype)) {
    return std::nullopt;
  }
  if (!v.atom.is_literal()) {
    auto it = tr_->dim_values.find(v.atom.var);
    if (it != tr_->dim_values.end()) return it->second;
  }
  auto a = ConstValue(v);
  if (!a.has_value() || a->num_elements() > 16) return std::nullopt;
  std::vector<jaxpr::DimExpr> out;
  for (int64_t i = 0; i < a->num_elements(); ++i) {
    out.push_back(jaxpr::DimExpr::Constant(a->GetAsInt64(i)));
  }
  return out;
}
void OpContext::SetDimValues(const Val& v, std::vector<jaxpr::DimExpr> dims) {
  if (!v.atom.is_literal()) tr_->dim_values[v.atom.var] = std::move(dims);
}
void OpContext::SetDimEquality(const Val& v, jaxpr::DimExpr a,
                               jaxpr::DimExpr b) {
  if (!v.atom.is_literal()) {
    tr_->dim_equalities[v.atom.var] = {std::move(a), std::move(b)};
  }
}
void OpContext::SetIntFact(const Val& v, IntFact f) {
  if (!v.atom.is_literal()) tr_->int_facts[v.atom.var] = std::move(f);
}
std::optional<OpContext::IntFact> OpContext::GetIntFact(const Val& v) {
  if (v.atom.is_literal()) return std::nullopt;
  auto it = tr_->int_facts.find(v.atom.var);
  if (it == tr_->int_facts.end()) return std::nullopt;
  return it->second;
}
std::optional<std::pair<jaxpr::DimExpr, jaxpr::DimExpr>>
OpContext::DimEquality(const Val& v) {
  if (v.atom.is_literal()) return std::nullopt;
  auto it = tr_->dim_equalities.find(v.atom.var);
  if (it == tr_->dim_equalities.end()) return std::nullopt;
  return it->second;
}
void OpContext::SetDimComparison(const Val& v, DimComparison c) {
  if (!v.atom.is_literal()) tr_->dim_comparisons[v.atom.var] = std::move(c);
}
std::optional<OpContext::DimComparison> OpContext::GetDimComparison(
    const Val& v) {
  if (v.atom.is_literal()) return std::nullopt;
  auto it = tr_->dim_comparisons.find(v.atom.var);
  if (it == tr_->dim_comparisons.end()) return std::nullopt;
  return it->second;
}
const std::string& OpContext::FileText() const { return tr_->text(); }
void OpContext::NoteSymbolName(const std::string& from, const std::string& to) {
  if (from != to) tr_->found_names.try_emplace(from, to);
}

std::optional<jaxpr::Array> OpContext::ConstValue(const Val& v) {
  auto a = tr_->ConstValueOf(v, op_.loc);
  if (!a.ok()) return std::nullopt;
  return *a;
}

jaxpr::Var* OpContext::NewVar(jaxpr::ClosedJaxpr* j, const Aval& aval) {
  return tr_->NewVar(j, aval);
}

Val OpContext::Scalar(DType dtype, double value) {
  auto v = tr_->ScalarLiteral(jaxpr::Array::ScalarFromDouble(dtype, value));
  return *v;
}
Val OpContext::ScalarInt(DType dtype, int64_t value) {
  auto v = tr_->ScalarLiteral(jaxpr::Array::ScalarFromInt64(dtype, value));
  return *v;
}

absl::StatusOr<Val> OpContext::Constant(const jaxpr::Array& array) {
  return tr_->ConstantIn(scope_, array, false, op_.loc);
}

absl::StatusOr<RegionJaxpr> OpContext::Region(int index) {
  if (index >= static_cast<int>(op_.regions.size())) {
    return Error(absl::StrCat("expects region #", index));
  }
  return tr_->TranslateRegion(scope_, op_.regions[index], nullptr);
}
absl::StatusOr<RegionJaxpr> OpContext::RegionWithArgs(
    int index, const std::vector<std::string>& names,
    const std::vector<Aval>& avals) {
  if (index >= static_cast<int>(op_.regions.size())) {
    return Error(absl::StrCat("expects region #", index));
  }
  if (names.empty()) {
    return tr_->TranslateRegion(scope_, op_.regions[index], &avals);
  }
  stablehlo::Region r = op_.regions[index];
  if (r.blocks.size() != 1) return Error("expects single-block regions");
  r.blocks[0].args.clear();
  for (const std::string& n : names) r.blocks[0].args.emplace_back(n, MlirType());
  return tr_->TranslateRegion(scope_, r, &avals);
}

absl::StatusOr<RegionJaxpr> OpContext::RegionOf(
    const stablehlo::Region& region) {
  return tr_->TranslateRegion(scope_, region, nullptr);
}

absl::Status OpContext::Error(absl::string_view message) const {
  return MlirError(tr_->path(), op_.loc,
                   absl::StrCat(op_.name, ": ", message));
}
absl::Status OpContext::Unsupported(absl::string_view what) const {
  return absl::UnimplementedError(MlirError(tr_->path(), op_.loc,
                                            absl::StrCat(op_.name, ": ", what))
                                      .message());
}

absl::StatusOr<absl::string_view> OpContext::Attr(absl::string_view key) const {
  auto v = op_.Attr(key);
  if (!v.has_value()) return Error(absl::StrCat("missing attribute `", key, "`"));
  return *v;
}
absl::StatusOr<absl::string_view> OpContext::ConstantLiteral() const {
  if (!op_.positional.empty()) return absl::string_view(op_.positional[0]);
  if (auto v = op_.Attr("value")) return *v;
  return Error("missing value");
}
absl::StatusOr<std::vector<int64_t>> OpContext::IntListAttr(
    absl::string_view key) const {
  J2O_ASSIGN_OR_RETURN(absl::string_view raw, Attr(key));
  auto v = ParseIntList(raw);
  if (!v.ok()) {
    return Error(absl::StrCat("attribute `", key, "`: ", v.status().message()));
  }
  return *v;
}
absl::StatusOr<int64_t> OpContext::IntAttr(absl::string_view key) const {
  J2O_ASSIGN_OR_RETURN(absl::string_view raw, Attr(key));
  auto v = ParseIntScalar(raw);
  if (!v.ok()) {
    return Error(absl::StrCat("attribute `", key, "`: ", v.status().message()));
  }
  return *v;
}

// ---- Translator ----

absl::StatusOr<RegionJaxpr> Translator::TranslateRegion(
    Scope* scope, const Region& region, const std::vector<Aval>* avals) {
  auto j = std::make_shared<jaxpr::ClosedJaxpr>();
  Scope inner(this, j.get(), scope, /*captures=*/true);
  if (region.blocks.size() != 1) {
    return MlirError(path(), region.loc,
                     "regions with more than one block are not supported");
  }
  const Block& block = region.blocks[0];
  std::vector<jaxpr::Var*> args;
  for (size_t i = 0; i < block.args.size(); ++i) {
    Aval aval;
    if (avals != nullptr && i < avals->size()) {
      aval = (*avals)[i];
    } else {
      auto a = AvalOfType(block.args[i].second);
      if (!a.ok()) return MlirError(path(), block.loc, a.status().message());
      aval = *a;
    }
    jaxpr::Var* v = NewVar(j.get(), aval);
    args.push_back(v);
    inner.Bind(block.args[i].first, Val{Atom::OfVar(v), aval});
  }
  std::vector<Val> returned;
  J2O_RETURN_IF_ERROR(TranslateBlock(&inner, block, &returned));
  for (const Val& v : returned) j->outvars.push_back(v.atom);
  RegionJaxpr out;
  out.jaxpr = j;
  for (const auto& [outer, var] : inner.captured()) {
    j->invars.push_back(var);
    out.captured.push_back(outer);
  }
  for (jaxpr::Var* v : args) j->invars.push_back(v);
  return out;
}

absl::Status Translator::TranslateBlock(Scope* scope, const Block& block,
                                        std::vector<Val>* returned) {
  for (const Operation& op : block.ops) {
    if (op.name == "stablehlo.return" || op.name == "func.return" ||
        op.name == "return" || op.name == "mhlo.return" ||
        op.name == "sdy.return") {
      for (const std::string& name : op.operands) {
        J2O_ASSIGN_OR_RETURN(Val v, scope->Lookup(name, op.loc));
        returned->push_back(v);
      }
      return absl::OkStatus();
    }
    J2O_RETURN_IF_ERROR(TranslateOp(scope, op));
  }
  return absl::OkStatus();
}

absl::Status Translator::InlineCall(Scope* scope, const Operation& op) {
  auto it = funcs_.find(op.symbol);
  if (it == funcs_.end()) {
    return MlirError(path(), op.loc,
                     absl::StrCat(op.name, ": unknown function @", op.symbol));
  }
  const Func& f = *it->second;
  if (f.args.size() != op.operands.size()) {
    return MlirError(path(), op.loc,
                     absl::StrCat(op.name, " @", op.symbol, ": ",
                                  op.operands.size(), " operands for ",
                                  f.args.size(), " parameters"));
  }
  if (++call_depth > 64) {
    return MlirError(path(), op.loc, "calls nested more than 64 deep");
  }
  // A test's @inputs-style function (constants only): its results are
  // program inputs, so they stay variables.
  bool pure = test_mode_ && f.args.empty() && f.body.blocks.size() == 1;
  if (pure) {
    for (const Operation& o : f.body.blocks[0].ops) {
      if (o.name != "stablehlo.constant" && o.name != "return" &&
          o.name != "func.return") {
        pure = false;
      }
    }
  }
  Scope inner(this, scope->jaxpr(), scope, /*captures=*/false);
  for (size_t i = 0; i < f.args.size(); ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, scope->Lookup(op.operands[i], op.loc));
    inner.Bind(f.args[i].name, v);
    NoteGlobalConstant(f.args[i], v);
  }
  std::vector<Val> returned;
  if (pure) {
    const Block& b = f.body.blocks[0];
    for (const Operation& o : b.ops) {
      if (o.name == "stablehlo.constant") {
        if (o.positional.empty() || o.plain_types.empty() ||
            o.results.size() != 1) {
          return MlirError(path(), o.loc, "stablehlo.constant: malformed");
        }
        auto arr = ParseDense(o.positional[0], o.plain_types.back());
        if (!arr.ok()) return MlirError(path(), o.loc, arr.status().message());
        J2O_ASSIGN_OR_RETURN(jaxpr::Array input, DecodeCarried(*arr));
        J2O_ASSIGN_OR_RETURN(Val v, ConstantIn(&inner, input, true, o.loc));
        inner.Bind(o.results[0], v);
      } else {
        for (const std::string& name : o.operands) {
          J2O_ASSIGN_OR_RETURN(Val v, inner.Lookup(name, o.loc));
          returned.push_back(v);
        }
      }
    }
  } else {
    if (f.body.blocks.size() != 1) {
      return MlirError(path(), f.loc, "functions with several blocks are not supported");
    }
    J2O_RETURN_IF_ERROR(TranslateBlock(&inner, f.body.blocks[0], &returned));
  }
  --call_depth;
  if (returned.size() != op.results.size()) {
    return MlirError(path(), op.loc,
                     absl::StrCat(op.name, " @", op.symbol, " returns ",
                                  returned.size(), " values for ",
                                  op.results.size(), " results"));
  }
  for (size_t i = 0; i < returned.size(); ++i) {
    scope->Bind(op.results[i], returned[i]);
  }
  return absl::OkStatus();
}

absl::StatusOr<jaxpr::Array> Translator::ConstValueOf(const Val& v, Loc loc) {
  if (v.atom.is_literal()) {
    const jaxpr::Literal& lit = *v.atom.literal;
    jaxpr::Array a(v.aval.dtype, {});
    if (lit.kind == jaxpr::Literal::Kind::kFloat) {
      a.SetFromDouble(0, lit.float_value);
    } else if (lit.kind == jaxpr::Literal::Kind::kBool) {
      a.SetFromInt64(0, lit.bool_value);
    } else {
      a.SetFromInt64(0, lit.int_value);
    }
    return a;
  }
  auto it = const_values_.find(v.atom.var);
  if (it == const_values_.end()) {
    return MlirError(path(), loc,
                     "check: the reference value is not a constant");
  }
  return it->second;
}

absl::Status Translator::HandleCheck(Scope* scope, const Operation& op) {
  std::string kind = op.name == "stablehlo.custom_call" ? op.symbol : op.name;
  if (kind == "check.expect_serialized_eq") return absl::OkStatus();
  bool is_const = absl::EndsWith(kind, "_const");
  if (op.operands.empty()) {
    return MlirError(path(), op.loc, absl::StrCat(kind, ": no operand"));
  }
  J2O_ASSIGN_OR_RETURN(Val actual, scope->Lookup(op.operands[0], op.loc));
  jaxpr::Array expected;
  if (is_const) {
    if (op.positional.empty() || op.plain_types.empty()) {
      return MlirError(path(), op.loc, absl::StrCat(kind, ": expects a dense constant"));
    }
    auto arr = ParseDense(op.positional[0], op.plain_types.back());
    if (!arr.ok()) return MlirError(path(), op.loc, absl::StrCat(kind, ": ", arr.status().message()));
    J2O_ASSIGN_OR_RETURN(expected, DecodeCarried(*arr));
  } else {
    if (op.operands.size() < 2) {
      return MlirError(path(), op.loc, absl::StrCat(kind, ": expects two operands"));
    }
    J2O_ASSIGN_OR_RETURN(Val ref, scope->Lookup(op.operands[1], op.loc));
    J2O_ASSIGN_OR_RETURN(expected, ConstValueOf(ref, op.loc));
  }
  if (!absl::StartsWith(kind, "check.expect_eq")) all_exact_ = false;
  if (absl::StrContains(kind, "almost_eq")) {
    // StableHLO: |actual - expected| <= tolerance (default 1e-4).
    double tol = 1e-4;
    if (auto t = op.Attr("tolerance")) {
      std::string s(StripSpace(t->substr(0, t->find(':'))));
      tol = std::strtod(s.c_str(), nullptr);
    }
    almost_tol_ = std::max(almost_tol_, tol);
  }
  checks_.emplace_back(actual, expected);
  return absl::OkStatus();
}

static bool IsTokenType(const MlirType& t) {
  if (t.kind == MlirType::Kind::kToken) return true;
  for (const MlirType& e : t.tuple) {
    if (IsTokenType(e)) return true;
  }
  return false;
}

static bool HasTokenType(const Operation& op) {
  for (const auto* types : {&op.input_types, &op.result_types, &op.plain_types}) {
    for (const MlirType& t : *types) {
      if (IsTokenType(t)) return true;
    }
  }
  return false;
}

absl::Status Translator::TranslateOp(Scope* scope, const Operation& op) {
  if (op.name == "func.call" || op.name == "call") return InlineCall(scope, op);
  if (absl::StartsWith(op.name, "check.") ||
      (op.name == "stablehlo.custom_call" &&
       absl::StartsWith(op.symbol, "check."))) {
    if (!test_mode_) {
      return MlirError(path(), op.loc, absl::StrCat(op.name, " outside a test"));
    }
    return HandleCheck(scope, op);
  }
  if (op.name != "stablehlo.after_all" && op.name != "stablehlo.create_token" &&
      HasTokenType(op)) {
    // Tokens order side effects (host I/O: infeed, outfeed, send, recv;
    // custom_calls with effects); a program ONNX can express has none, so
    // only tokens nothing reads are dropped (translate_misc.cc).
    return absl::UnimplementedError(
        MlirError(path(), op.loc,
                  absl::StrCat(op.name,
                               ": `!stablehlo.token` operand or result: the "
                               "side effects tokens order (host I/O) have no "
                               "ONNX counterpart"))
            .message());
  }
  if (MentionsQuantizedType(op)) {
    OpContext quantized(this, scope, op);
    return TranslateQuantized(quantized, [&](const Operation& as_float) {
      return TranslateOp(scope, as_float);
    });
  }
  if (MentionsCarriedFloat(op)) {
    OpContext carried(this, scope, op);
    return TranslateCarried(carried, [&](const Operation& as_f32) {
      return TranslateOp(scope, as_f32);
    });
  }
  const TranslatorTable& table = Table();
  auto it = table.find(op.name);
  if (it == table.end()) {
    return absl::UnimplementedError(
        MlirError(path(), op.loc,
                  absl::StrCat(op.name, ": operation not supported"))
            .message());
  }
  OpContext ctx(this, scope, op);
  J2O_RETURN_IF_ERROR(it->second(ctx));
  if (!emit_error.ok()) return emit_error;
  PropagateDimValues(ctx);
  return absl::OkStatus();
}

bool Translator::IsTestModule(const Module& m) const {
  for (const Func& f : m.funcs) {
    for (const Block& b : f.body.blocks) {
      for (const Operation& op : b.ops) {
        if (absl::StartsWith(op.name, "check.") ||
            (op.name == "stablehlo.custom_call" &&
             absl::StartsWith(op.symbol, "check."))) {
          return true;
        }
      }
    }
  }
  return false;
}

absl::StatusOr<StablehloProgram> Translator::Run() {
  root_scope_ = std::make_unique<Scope>(this, root_.get(), nullptr, false);
  StablehloProgram prog;
  for (const Module& m : file_.modules) {
    if (IsTestModule(m)) test_mode_ = true;
  }
  if (!test_mode_ && file_.modules.size() != 1) {
    return MlirError(path(), file_.modules[1].loc,
                     "several modules in a file that is not a test");
  }
  for (const Module& m : file_.modules) {
    funcs_.clear();
    for (const Func& f : m.funcs) funcs_[f.name] = &f;
    std::vector<const Func*> entries;
    if (funcs_.contains("main")) {
      entries.push_back(funcs_["main"]);
    } else {
      for (const Func& f : m.funcs) {
        if (f.is_public && (!test_mode_ || f.args.empty())) entries.push_back(&f);
        if (!test_mode_ && !entries.empty()) break;
      }
    }
    if (entries.empty()) {
      return MlirError(path(), m.loc, "no public function to translate");
    }
    for (const Func* f : entries) {
      if (f->body.blocks.size() != 1) {
        return MlirError(path(), f->loc, "functions with several blocks are not supported");
      }
      Scope scope(this, root_.get(), root_scope_.get(), false);
      if (!test_mode_) {
        for (const FuncArg& a : f->args) {
          auto aval = AvalOfType(a.type);
          if (!aval.ok()) {
            return absl::Status(aval.status().code(),
                                MlirError(path(), f->loc, absl::StrCat("argument ", a.name, ": ", aval.status().message())).message());
          }
          // Each `?` is a symbol: generated, or the name the previous run
          // found for it.
          for (jaxpr::DimExpr& d : aval->shape) {
            if (IsUnknownDim(d)) {
              std::string name = FinalName(absl::StrCat("_d", next_symbol++));
              dim_symbols.insert(name);
              d = jaxpr::DimExpr::Symbol(std::move(name));
            }
          }
          if (aval->kind == Aval::Kind::kToken) {
            return absl::UnimplementedError(
                MlirError(path(), f->loc,
                          absl::StrCat("argument ", a.name,
                                       ": a `!stablehlo.token` program "
                                       "input (ordered side effects) has no "
                                       "ONNX counterpart"))
                    .message());
          }
          // f8E4M3 / f8E3M4 inputs are f32 tensors, rounded to the format.
          const bool carried = IsCarriedType(a.type);
          if (carried) aval->dtype = DType::kF32;
          jaxpr::Var* v = NewVar(root_.get(), *aval);
          root_->invars.push_back(v);
          Val in{Atom::OfVar(v), *aval};
          if (carried) {
            Operation entry;
            entry.name = "func.func";
            entry.loc = f->loc;
            OpContext ctx(this, &scope, entry);
            in = *RoundIfCarried(ctx, in, a.type);
          }
          scope.Bind(a.name, in);
        }
      } else if (!f->args.empty()) {
        return MlirError(path(), f->loc, "a test's entry function takes no arguments");
      }
      std::vector<Val> returned;
      J2O_RETURN_IF_ERROR(TranslateBlock(&scope, f->body.blocks[0], &returned));
      if (!test_mode_) {
        for (const Val& v : returned) {
          if (IsToken(v)) {
            return absl::UnimplementedError(
                MlirError(path(), f->loc,
                          "a `!stablehlo.token` program result (ordered side "
                          "effects) has no ONNX counterpart")
                    .message());
          }
          root_->outvars.push_back(v.atom);
        }
      }
    }
  }
  // Constvars from constant-only calls that the program uses become inputs;
  // unused constvars (reference values of checks) are dropped.
  absl::flat_hash_set<const jaxpr::Var*> used;
  std::function<void(const jaxpr::ClosedJaxpr&)> mark =
      [&](const jaxpr::ClosedJaxpr& j) {
        for (const jaxpr::Eqn& e : j.eqns) {
          for (const Atom& a : e.inputs) {
            if (!a.is_literal()) used.insert(a.var);
          }
        }
        for (const Atom& a : j.outvars) {
          if (!a.is_literal()) used.insert(a.var);
        }
      };
  if (test_mode_) {
    for (auto& [actual, expected] : checks_) root_->outvars.push_back(actual.atom);
  }
  mark(*root_);
  std::vector<jaxpr::Var*> constvars;
  std::vector<jaxpr::Array> consts;
  std::vector<jaxpr::Array> inputs;
  for (size_t i = 0; i < root_->constvars.size(); ++i) {
    jaxpr::Var* v = root_->constvars[i];
    if (!used.contains(v)) continue;
    if (test_mode_ && pure_call_vars_.contains(v)) {
      root_->invars.push_back(v);
      inputs.push_back(consts_[i]);
    } else {
      constvars.push_back(v);
      consts.push_back(consts_[i]);
    }
  }
  root_->constvars = constvars;
  for (size_t i = 0; i < consts.size(); ++i) {
    prog.arrays.emplace_back(absl::StrCat("const_", i), consts[i]);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    prog.arrays.emplace_back(absl::StrCat("input_", i), inputs[i]);
  }
  if (test_mode_) {
    prog.is_test = true;
    for (size_t i = 0; i < checks_.size(); ++i) {
      prog.arrays.emplace_back(absl::StrCat("expected_", i), checks_[i].second);
    }
    if (all_exact_) {
      prog.rtol = 0;
      prog.atol = 0;
    } else if (almost_tol_ > 0) {
      // The check's absolute tolerance, but never tighter than the dtype
      // defaults of jaxpr/io/compare.h (f16/bf16 1e-2, f32/c64 1e-5,
      // f64/c128 1e-7) that expect_close files get.
      double tol = almost_tol_;
      for (const auto& [actual, expected] : checks_) {
        DType d = expected.dtype();
        if (d == DType::kF16 || d == DType::kBF16) tol = std::max(tol, 1e-2);
        if (d == DType::kF32 || d == DType::kC64) tol = std::max(tol, 1e-5);
        if (d == DType::kF64 || d == DType::kC128) tol = std::max(tol, 1e-7);
      }
      prog.rtol = tol;
      prog.atol = tol;
    }
  }
  prog.file.path = file_.path;
  prog.file.header.emplace_back("source", file_.path);
  prog.file.main = root_;
  return prog;
}

absl::StatusOr<StablehloProgram> TranslateMlir(const MlirFile& file) {
  Translator tr(file);
  absl::StatusOr<StablehloProgram> prog = tr.Run();
  if (tr.found_names.empty()) return prog;
  // The `?` dims learnt their names (translate_symbolic.cc): again, with
  // the names from the start.
  Translator named(file, tr.found_names);
  return named.Run();
}

absl::StatusOr<StablehloProgram> StablehloFromText(absl::string_view text,
                                                   const std::string& path) {
  auto owned = std::make_shared<const std::string>(text);
  J2O_ASSIGN_OR_RETURN(MlirFile file, ParseMlirText(owned, path));
  return TranslateMlir(file);
}

absl::StatusOr<StablehloProgram> LoadStablehloFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::ostringstream ss;
  ss << in.rdbuf();
  auto owned = std::make_shared<const std::string>(std::move(ss).str());
  J2O_ASSIGN_OR_RETURN(MlirFile file, ParseMlirText(owned, path));
  return TranslateMlir(file);
}

bool IsStablehloPath(absl::string_view path) {
  return absl::EndsWith(path, ".mlir") || absl::EndsWith(path, ".stablehlo");
}

}  // namespace jax2onnx::stablehlo
