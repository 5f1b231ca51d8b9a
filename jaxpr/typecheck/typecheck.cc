// The type-check driver: walks a jaxpr in order, applies the structural
// rules, runs each equation's primitive rule (rules_*.cc) and compares the
// result types it computes with the declared binders.
#include "jaxpr/typecheck/typecheck.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/typecheck/known_params.h"
#include "jaxpr/typecheck/rules.h"

namespace jax2onnx::jaxpr {

namespace typecheck {
// rules_program.cc (stack, unstack, tile, empty, debug_print, ...).
void RegisterProgramRules(RuleTable& table);
// rules_state.cc (new_ref, get, swap, addupdate, freeze, run_state, ...).
void RegisterStateRules(RuleTable& table);
}  // namespace typecheck
namespace {

using typecheck::RuleContext;
using typecheck::RuleEntry;
using typecheck::RuleTable;

const RuleTable& Rules() {
  static const RuleTable* table = [] {
    auto* t = new RuleTable();
    typecheck::RegisterElementwiseRules(*t);
    typecheck::RegisterShapeRules(*t);
    typecheck::RegisterReductionRules(*t);
    typecheck::RegisterLinalgRules(*t);
    typecheck::RegisterIndexingRules(*t);
    typecheck::RegisterControlFlowRules(*t);
    typecheck::RegisterMiscRules(*t);
    typecheck::RegisterCollectiveRules(*t);
    typecheck::RegisterRandomRules(*t);
    typecheck::RegisterProgramRules(*t);
    typecheck::RegisterStateRules(*t);
    return t;
  }();
  return *table;
}

std::string LocString(absl::string_view filename, const SourceLoc& loc) {
  if (loc.line <= 0) return std::string(filename);
  return absl::StrCat(filename, ":", loc.line, ":", loc.column);
}

// Why an aval cannot be a value's type, or "" when it can.
std::string AvalProblem(const Aval& aval) {
  if (aval.kind != Aval::Kind::kShaped) return "";
  if (aval.dtype == DType::kInvalid ||
      (aval.dtype == DType::kOther && !IsKnownDTypeName(aval.dtype_name))) {
    return absl::StrCat("unknown dtype '", aval.dtype_name, "'");
  }
  int64_t elements = 1;
  bool overflow = false;
  for (const DimExpr& d : aval.shape) {
    if (!d.is_constant()) continue;
    const int64_t v = d.constant_value();
    if (v < 0) return absl::StrCat("negative dimension ", v);
    if (v != 0 && elements > std::numeric_limits<int64_t>::max() / v) {
      overflow = true;
    }
    elements *= overflow ? 1 : v;
  }
  if (overflow) {
    bool has_zero = false;
    for (const DimExpr& d : aval.shape) {
      has_zero |= d.is_constant() && d.constant_value() == 0;
    }
    if (!has_zero) return "more elements than fit in a 64-bit count";
  }
  return "";
}

class Checker {
 public:
  Checker(absl::string_view filename, const TypeCheckOptions& options)
      : filename_(filename), options_(options) {}

  absl::Status Finish() const {
    if (errors_.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrJoin(errors_, "\n"));
  }

  void CheckJaxpr(const ClosedJaxpr& jaxpr) {
    if (!checked_.insert(&jaxpr).second) return;
    absl::flat_hash_set<const Var*> defined;
    // Keys view the Vars' names, which outlive this walk.
    absl::flat_hash_map<absl::string_view, SourceLoc> names;
    // About one binder per equation; sized up front rather than rehashed.
    const size_t binders =
        jaxpr.constvars.size() + jaxpr.invars.size() + jaxpr.eqns.size();
    defined.reserve(binders);
    names.reserve(binders);
    auto bind = [&](const Var* v, const SourceLoc& loc,
                    absl::string_view what) {
      if (std::string p = AvalProblem(v->aval); !p.empty()) {
        Error(loc, absl::StrCat(what, " '", v->name, "': ", p));
      }
      if (!v->is_drop) {
        auto [it, inserted] = names.emplace(v->name, loc);
        if (!inserted) {
          Error(loc,
                absl::StrCat(
                    "duplicate binder '", v->name, "'",
                    it->second.line > 0
                        ? absl::StrCat(" (first bound at ",
                                       LocString(filename_, it->second), ")")
                        : ""));
        }
      }
      defined.insert(v);
    };
    for (const Var* v : jaxpr.constvars) bind(v, jaxpr.loc, "constvar");
    for (const Var* v : jaxpr.invars) bind(v, jaxpr.loc, "invar");
    for (const Eqn& eqn : jaxpr.eqns) {
      if (TooMany()) return;
      CheckEqn(eqn, defined);
      for (const Var* v : eqn.outputs) bind(v, eqn.loc, "binder");
    }
    for (const Atom& a : jaxpr.outvars) {
      if (!a.is_literal() && !defined.contains(a.var)) {
        Error(jaxpr.loc, absl::StrCat("output '", a.var->name,
                                      "' is not defined in this jaxpr"));
      }
    }
  }

 private:
  bool TooMany() const {
    return static_cast<int>(errors_.size()) >= options_.max_errors;
  }

  void Error(const SourceLoc& loc, absl::string_view message) {
    if (TooMany()) return;
    std::string text =
        absl::StrCat(LocString(filename_, loc), ": error: ", message);
    for (auto it = enclosing_.rbegin(); it != enclosing_.rend(); ++it) {
      absl::StrAppend(&text, " (in the jaxpr of '", (*it)->primitive, "' at ",
                      LocString(filename_, (*it)->loc), ")");
    }
    errors_.push_back(std::move(text));
  }

  void CheckEqn(const Eqn& eqn,
                const absl::flat_hash_set<const Var*>& defined) {
    // Built only for error messages: this runs once per equation.
    auto prim = [&eqn] { return absl::StrCat("'", eqn.primitive, "'"); };
    std::vector<const Aval*> in;
    std::vector<bool> weak;
    in.reserve(eqn.inputs.size());
    weak.reserve(eqn.inputs.size());
    // Avals of untyped literals, which have none of their own (reserved:
    // `in` points into it).
    std::vector<Aval> literal_avals;
    literal_avals.reserve(eqn.inputs.size());
    bool bad_operand = false;
    for (size_t i = 0; i < eqn.inputs.size(); ++i) {
      const Atom& a = eqn.inputs[i];
      if (a.is_literal()) {
        const Literal& lit = *a.literal;
        if (lit.aval.has_value()) {
          if (std::string p = AvalProblem(*lit.aval); !p.empty()) {
            Error(eqn.loc,
                  absl::StrCat(prim(), ": literal operand ", i, ": ", p));
            bad_operand = true;
          }
          in.push_back(&*lit.aval);
          weak.push_back(false);
        } else {
          literal_avals.push_back(Aval::Shaped(LiteralDType(lit, &eqn), {}));
          in.push_back(&literal_avals.back());
          weak.push_back(true);
        }
        continue;
      }
      if (a.var == nullptr) {
        Error(eqn.loc, absl::StrCat(prim(), ": operand ", i, " is missing"));
        return;
      }
      if (!defined.contains(a.var)) {
        Error(eqn.loc, absl::StrCat(prim(), ": operand '", a.var->name,
                                    "' is used before its definition"));
        bad_operand = true;
      }
      in.push_back(&a.var->aval);
      weak.push_back(false);
    }
    for (const Var* v : eqn.outputs) {
      if (std::string p = AvalProblem(v->aval); !p.empty()) bad_operand = true;
    }
    if (bad_operand) return;  // the rule would only repeat the problem
    // Before the rule: a param it does not know may change what it computes.
    if (absl::Status s = typecheck::CheckKnownParams(eqn); !s.ok()) {
      Error(eqn.loc, absl::StrCat(prim(), ": ", s.message()));
      return;
    }
    auto it = Rules().find(eqn.primitive);
    if (it == Rules().end()) {
      if (options_.unknown_primitive_is_error) {
        Error(eqn.loc,
              absl::StrCat(prim(), ": no type rule for this primitive"));
      }
      return;
    }
    RuleContext ctx(
        eqn, std::move(in), std::move(weak),
        [this, &eqn](const ClosedJaxpr& inner) {
          const size_t before = errors_.size();
          enclosing_.push_back(&eqn);
          CheckJaxpr(inner);
          enclosing_.pop_back();
          return errors_.size() == before ? absl::OkStatus()
                                          : absl::CancelledError("reported");
        },
        options_.mesh_axis_sizes);
    absl::Status status = it->second.rule(ctx);
    if (absl::IsCancelled(status)) return;  // a nested jaxpr's error
    if (!status.ok()) {
      Error(eqn.loc,
            absl::StrCat(prim(), ": ", status.message(), " (operands: ",
                         typecheck::TypesString(ctx.ins()), ")"));
      return;
    }
    if (!ctx.has_results()) return;
    const auto& results = ctx.results();
    if (results.size() != eqn.outputs.size()) {
      Error(eqn.loc, absl::StrCat(prim(), ": has ", results.size(), " result",
                                  results.size() == 1 ? "" : "s", ", declared ",
                                  eqn.outputs.size(), " (operands: ",
                                  typecheck::TypesString(ctx.ins()), ")"));
      return;
    }
    for (size_t i = 0; i < results.size(); ++i) {
      if (!results[i].has_value()) continue;
      const Aval& declared = eqn.outputs[i]->aval;
      if (!declared.is_shaped() && !results[i]->is_shaped()) continue;
      // A binder kept as opaque text (a 0.4.30 named shape `f32[3;i:4]`)
      // where the rule computes an array: no lowering can type it (the
      // convert fuzzer's `i32[;B,5]` reached a CHECK), so it is an error.
      if (declared.kind == Aval::Kind::kOpaque && !results[i]->is_shaped()) {
        continue;
      }
      if (typecheck::SameType(*results[i], declared)) continue;
      Error(eqn.loc,
            absl::StrCat(
                prim(), ": ",
                results.size() > 1 ? absl::StrCat("result ", i, ": ") : "",
                "expected ", results[i]->ToString(), ", declared ",
                declared.ToString(),
                " (operands: ", typecheck::TypesString(ctx.ins()), ")"));
    }
  }

  std::string filename_;
  TypeCheckOptions options_;
  std::vector<std::string> errors_;
  std::vector<const Eqn*> enclosing_;
  absl::flat_hash_set<const ClosedJaxpr*> checked_;
};

}  // namespace

absl::Status TypeCheckJaxpr(const ClosedJaxpr& jaxpr,
                            absl::string_view filename,
                            const TypeCheckOptions& options) {
  Checker checker(filename, options);
  checker.CheckJaxpr(jaxpr);
  return checker.Finish();
}

absl::Status TypeCheckFile(const JaxprFile& file,
                           const TypeCheckOptions& options) {
  if (file.main == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(file.path, ": error: no main jaxpr"));
  }
  return TypeCheckJaxpr(*file.main, file.path.empty() ? "<input>" : file.path,
                        options);
}

absl::StatusOr<std::vector<std::optional<Aval>>> InferResultAvals(
    const Eqn& eqn) {
  auto it = Rules().find(eqn.primitive);
  if (it == Rules().end()) {
    return absl::UnimplementedError(
        absl::StrCat("'", eqn.primitive, "': no type rule"));
  }
  std::vector<const Aval*> in;
  std::vector<bool> weak;
  std::vector<Aval> literal_avals;
  literal_avals.reserve(eqn.inputs.size());
  for (const Atom& a : eqn.inputs) {
    if (a.is_literal()) {
      if (a.literal->aval.has_value()) {
        in.push_back(&*a.literal->aval);
        weak.push_back(false);
      } else {
        literal_avals.push_back(
            Aval::Shaped(LiteralDType(*a.literal, &eqn), {}));
        in.push_back(&literal_avals.back());
        weak.push_back(true);
      }
    } else {
      in.push_back(&a.var->aval);
      weak.push_back(false);
    }
  }
  const TypeCheckOptions options;
  Checker checker("<infer>", options);
  RuleContext ctx(
      eqn, std::move(in), std::move(weak),
      [&checker](const ClosedJaxpr& inner) {
        checker.CheckJaxpr(inner);
        return checker.Finish();
      },
      options.mesh_axis_sizes);
  J2O_RETURN_IF_ERROR(it->second.rule(ctx));
  if (!ctx.has_results()) {
    return std::vector<std::optional<Aval>>(eqn.outputs.size());
  }
  return ctx.results();
}

bool HasTypeRule(absl::string_view primitive) {
  return Rules().contains(std::string(primitive));
}

std::vector<std::string> TypeRulePrimitives() {
  std::vector<std::string> out;
  for (const auto& [name, entry] : Rules()) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> PartialTypeRulePrimitives() {
  std::vector<std::string> out;
  for (const auto& [name, entry] : Rules()) {
    if (entry.partial) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace jax2onnx::jaxpr
