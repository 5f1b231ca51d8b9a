// Type rules for the state primitives (jax/_src/state/primitives.py,
// core.py new_ref/freeze/empty_ref/free_ref, discharge.py run_state). Refs
// print as `Ref{T}`; get reads the indexed T, swap writes a value of that
// type (and returns the old one), addupdate adds one. Pallas `MemRef<...>`
// kernels are not checked.
#include "absl/strings/str_cat.h"
#include "jaxpr/state/ref_state.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/typecheck/rules.h"

namespace jax2onnx::jaxpr::typecheck {
namespace {

// The declared ref type must be `Ref{inner}` exactly.
absl::Status CheckRefResult(RuleContext& ctx, const Aval& inner) {
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  const Aval& out = ctx.out(0);
  if (!IsRefAval(out)) {
    return ctx.Fail(absl::StrCat("result must be a Ref{...}, declared ",
                                 out.ToString()));
  }
  auto declared = RefInnerAval(out);
  if (!declared.ok()) return ctx.Fail(declared.status().message());
  if (!SameType(*declared, inner)) {
    return ctx.Fail(absl::StrCat("expected Ref{", inner.ToString(),
                                 "}, declared ", out.ToString()));
  }
  return absl::OkStatus();
}

absl::Status NewRefRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Shaped(0));
  return CheckRefResult(ctx, ctx.in(0));
}

absl::Status EmptyRefRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(0));
  const ParamValue* ty = ctx.params().Find("ty");
  if (ty == nullptr) return ctx.Fail("missing param 'ty'");
  auto inner = ParseAvalText(ty->ToString());
  if (!inner.ok() || !inner->is_shaped()) {
    return ctx.Fail(absl::StrCat("param ty=", ty->ToString(),
                                 " is not an array type"));
  }
  return CheckRefResult(ctx, *inner);
}

// The value type of ref operand 0; nullopt for refs this checker does not
// model (Pallas MemRef).
absl::StatusOr<std::optional<Aval>> RefValue(RuleContext& ctx) {
  if (ctx.num_in() < 1) return ctx.Fail("expects a ref operand");
  if (ctx.is_literal(0)) return ctx.Fail("operand 0 must be a ref");
  const Aval& ref = ctx.in(0);
  if (!IsRefAval(ref)) {
    if (ref.kind == Aval::Kind::kOpaque) return std::optional<Aval>();
    return ctx.Fail(absl::StrCat("operand 0 must be a Ref{...}, got ",
                                 ref.ToString()));
  }
  auto inner = RefInnerAval(ref);
  if (!inner.ok()) return ctx.Fail(inner.status().message());
  return std::optional<Aval>(*inner);
}

// (Arity would also demand array operands.)
absl::Status FreezeRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.ArityRange(1, 1));
  J2O_ASSIGN_OR_RETURN(std::optional<Aval> value, RefValue(ctx));
  if (value.has_value()) ctx.SetResult(*value);
  return absl::OkStatus();
}

absl::Status FreeRefRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.ArityRange(1, 1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(0));
  J2O_ASSIGN_OR_RETURN(std::optional<Aval> value, RefValue(ctx));
  (void)value;
  return absl::OkStatus();
}

// get / swap / addupdate: index operands start after the ref (and value).
absl::Status AccessRule(RuleContext& ctx) {
  const std::string& p = ctx.eqn().primitive;
  const int first_index = p == "get" ? 1 : 2;
  if (ctx.num_in() < first_index) {
    return ctx.Fail(absl::StrCat("expects at least ", first_index,
                                 " operands"));
  }
  J2O_ASSIGN_OR_RETURN(std::optional<Aval> value, RefValue(ctx));
  if (!value.has_value()) return absl::OkStatus();
  for (int i = first_index; i < ctx.num_in(); ++i) {
    if (!ctx.in(i).is_shaped() ||
        !(IsInteger(ctx.in(i).dtype) || ctx.weak(i))) {
      return ctx.Fail(absl::StrCat("index operand ", i, " must be an integer, "
                                   "got ", ctx.in(i).ToString()));
    }
  }
  auto index = DecodeRefIndex(ctx.eqn(), first_index, *value);
  if (!index.ok()) return ctx.Fail(index.status().message());
  auto indexed = IndexedAval(ctx.eqn(), *index, *value);
  if (!indexed.ok()) return ctx.Fail(indexed.status().message());
  if (p != "get") {
    const Aval& v = ctx.in(1);
    if (!v.is_shaped() || !ShapeEqual(v.shape, indexed->shape) ||
        !(SameDType(v, *indexed) || ctx.weak(1))) {
      return ctx.Fail(absl::StrCat("value must be ", indexed->ToString(),
                                   " (the indexed ref), got ", v.ToString()));
    }
  }
  if (p == "addupdate") return ctx.Outputs(0);
  if (p == "swap" && ctx.num_out() == 0) return absl::OkStatus();
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  ctx.SetResult(*indexed);
  return absl::OkStatus();
}

absl::Status RunStateRule(RuleContext& ctx) {
  J2O_ASSIGN_OR_RETURN(const ClosedJaxpr* body, ctx.Jaxpr("jaxpr"));
  if (static_cast<int>(body->invars.size()) != ctx.num_in()) {
    return ctx.Fail(absl::StrCat("body takes ", body->invars.size(),
                                 " refs for ", ctx.num_in(), " operands"));
  }
  if (!body->outvars.empty()) return ctx.Fail("body must return ()");
  std::vector<std::optional<Aval>> results;
  for (int i = 0; i < ctx.num_in(); ++i) {
    const Aval& ref = body->invars[i]->aval;
    auto inner = RefInnerAval(ref);
    if (!inner.ok() || !SameType(*inner, ctx.in(i))) {
      return ctx.Fail(absl::StrCat("body ref ", i, " is ", ref.ToString(),
                                   ", operand is ", ctx.in(i).ToString()));
    }
    results.emplace_back(ctx.in(i));
  }
  ctx.SetResults(std::move(results));
  return absl::OkStatus();
}

}  // namespace

void RegisterStateRules(RuleTable& table) {
  table["new_ref"] = {&NewRefRule};
  // new_ref's names before 0.7.1 and in 0.7.1.
  table["mutable_array"] = {&NewRefRule};
  table["array_ref"] = {&NewRefRule};
  table["empty_ref"] = {&EmptyRefRule};
  table["freeze"] = {&FreezeRule};
  table["free_ref"] = {&FreeRefRule};
  table["get"] = {&AccessRule, /*partial=*/true};
  table["swap"] = {&AccessRule, /*partial=*/true};
  table["addupdate"] = {&AccessRule};
  table["run_state"] = {&RunStateRule};
}

}  // namespace jax2onnx::jaxpr::typecheck
