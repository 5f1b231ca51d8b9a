// Control flow and calls (control_flow/conditionals.py `_cond_typecheck`,
// loops.py `_while_loop_abstract_eval` / `_scan_typecheck`, pjit and the
// call primitives): nested jaxprs are type checked, and their signatures
// must match the equation's operands and results.
#include <string>

#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/dim_parser.h"
#include "jaxpr/scan_params.h"
#include "jaxpr/state/ref_state.h"
#include "jaxpr/typecheck/rules.h"

namespace jax2onnx::jaxpr::typecheck {
namespace {

std::vector<std::optional<Aval>> Optional(const std::vector<Aval>& avals) {
  return std::vector<std::optional<Aval>>(avals.begin(), avals.end());
}

std::vector<Aval> Slice(const std::vector<Aval>& v, size_t begin, size_t end) {
  return std::vector<Aval>(v.begin() + begin, v.begin() + end);
}

// pjit, jit, closed_call, core_call, remat, checkpoint, custom_jvp_call,
// custom_vjp_call(_jaxpr): the callee takes the operands and gives the
// results.
absl::Status CallRule(RuleContext& ctx) {
  const char* key = nullptr;
  for (const char* k : {"jaxpr", "call_jaxpr", "fun_jaxpr"}) {
    if (ctx.params().Has(k)) {
      key = k;
      break;
    }
  }
  if (key == nullptr) {
    return ctx.Fail("has no jaxpr, call_jaxpr or fun_jaxpr param");
  }
  J2O_ASSIGN_OR_RETURN(const ClosedJaxpr* callee, ctx.Jaxpr(key));
  J2O_RETURN_IF_ERROR(
      MatchTypes(ctx, "callee inputs", InvarAvals(*callee), ctx.ins()));
  ctx.SetResults(Optional(OutvarAvals(*callee)));
  return absl::OkStatus();
}

absl::Status CondRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.ArityRange(1, -1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kClassInt | kClassBool));
  J2O_RETURN_IF_ERROR(ctx.Rank(0, 0));
  J2O_ASSIGN_OR_RETURN(std::vector<const ClosedJaxpr*> branches,
                       ctx.Jaxprs("branches"));
  if (branches.empty()) return ctx.Fail("needs at least one branch");
  const std::vector<Aval> args = Slice(ctx.ins(), 1, ctx.num_in());
  for (size_t b = 0; b < branches.size(); ++b) {
    J2O_RETURN_IF_ERROR(MatchTypes(ctx, absl::StrCat("branch ", b, " inputs"),
                                   InvarAvals(*branches[b]), args));
    // Every branch gives the declared results (so all branches agree).
    const std::vector<Aval> out = OutvarAvals(*branches[b]);
    if (static_cast<int>(out.size()) != ctx.num_out()) {
      return ctx.Fail(absl::StrCat("cond branch ", b, " returns ", out.size(),
                                   " values, declared ", ctx.num_out()));
    }
    for (size_t i = 0; i < out.size(); ++i) {
      if (!out[i].is_shaped() || !ctx.out(i).is_shaped()) continue;
      if (!SameType(out[i], ctx.out(i))) {
        return ctx.Fail(absl::StrCat("cond branch ", b, " output ", i, " is ",
                                     out[i].ToString(), ", declared ",
                                     ctx.out(i).ToString()));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status WhileRule(RuleContext& ctx) {
  J2O_ASSIGN_OR_RETURN(int64_t cond_nconsts, ctx.Int("cond_nconsts"));
  J2O_ASSIGN_OR_RETURN(int64_t body_nconsts, ctx.Int("body_nconsts"));
  J2O_ASSIGN_OR_RETURN(const ClosedJaxpr* cond, ctx.Jaxpr("cond_jaxpr"));
  J2O_ASSIGN_OR_RETURN(const ClosedJaxpr* body, ctx.Jaxpr("body_jaxpr"));
  if (cond_nconsts < 0 || body_nconsts < 0 ||
      cond_nconsts + body_nconsts > ctx.num_in()) {
    return ctx.Fail(absl::StrCat("cond_nconsts=", cond_nconsts,
                                 " and body_nconsts=", body_nconsts,
                                 " exceed the operand count"));
  }
  const size_t n = ctx.num_in();
  const std::vector<Aval> cond_consts = Slice(ctx.ins(), 0, cond_nconsts);
  const std::vector<Aval> body_consts =
      Slice(ctx.ins(), cond_nconsts, cond_nconsts + body_nconsts);
  const std::vector<Aval> carry =
      Slice(ctx.ins(), cond_nconsts + body_nconsts, n);
  std::vector<Aval> cond_in = cond_consts;
  cond_in.insert(cond_in.end(), carry.begin(), carry.end());
  std::vector<Aval> body_in = body_consts;
  body_in.insert(body_in.end(), carry.begin(), carry.end());
  J2O_RETURN_IF_ERROR(
      MatchTypes(ctx, "cond_jaxpr inputs", InvarAvals(*cond), cond_in));
  J2O_RETURN_IF_ERROR(MatchTypes(ctx, "cond_jaxpr outputs", OutvarAvals(*cond),
                                 {MakeAval(DType::kBool, {})}));
  J2O_RETURN_IF_ERROR(
      MatchTypes(ctx, "body_jaxpr inputs", InvarAvals(*body), body_in));
  J2O_RETURN_IF_ERROR(
      MatchTypes(ctx, "body_jaxpr outputs", OutvarAvals(*body), carry));
  ctx.SetResults(Optional(carry));
  return absl::OkStatus();
}

// The scan signature for one consts/carry split: the body takes consts,
// carry and one slice of each scanned operand, and returns the carry and
// one slice of each stacked result. Results go to `results`.
absl::Status CheckScanSplit(const RuleContext& ctx, const ClosedJaxpr& body,
                            const DimExpr& length, int64_t num_consts,
                            int64_t num_carry,
                            std::vector<std::optional<Aval>>* results) {
  if (num_consts < 0 || num_carry < 0 ||
      num_consts + num_carry > ctx.num_in()) {
    return ctx.Fail(absl::StrCat("num_consts=", num_consts, " and num_carry=",
                                 num_carry, " exceed the operand count"));
  }
  std::vector<Aval> body_in = Slice(ctx.ins(), 0, num_consts + num_carry);
  for (int i = num_consts + num_carry; i < ctx.num_in(); ++i) {
    const Aval& xs = ctx.in(i);
    if (xs.rank() < 1 || !DimEqual(xs.shape[0], length)) {
      return ctx.Fail(absl::StrCat(
          "scanned operand ", i, " (", xs.ToString(),
          ") must have leading dimension length=", length.ToString()));
    }
    body_in.push_back(WithShape(
        xs, std::vector<DimExpr>(xs.shape.begin() + 1, xs.shape.end())));
  }
  J2O_RETURN_IF_ERROR(
      MatchTypes(ctx, "scan body inputs", InvarAvals(body), body_in));
  const std::vector<Aval> body_out = OutvarAvals(body);
  if (static_cast<int64_t>(body_out.size()) < num_carry) {
    return ctx.Fail("the scan body returns fewer values than num_carry");
  }
  const std::vector<Aval> carry_in =
      Slice(ctx.ins(), num_consts, num_consts + num_carry);
  J2O_RETURN_IF_ERROR(MatchTypes(ctx, "scan body carry outputs",
                                 Slice(body_out, 0, num_carry), carry_in));
  results->assign(carry_in.begin(), carry_in.end());
  for (size_t i = num_carry; i < body_out.size(); ++i) {
    std::vector<DimExpr> shape = {length};
    shape.insert(shape.end(), body_out[i].shape.begin(),
                 body_out[i].shape.end());
    results->push_back(WithShape(body_out[i], std::move(shape)));
  }
  return absl::OkStatus();
}

absl::Status ScanRule(RuleContext& ctx) {
  // Arrays, or refs (`Ref{T}` consts, carried by the state discharge).
  for (int i = 0; i < ctx.num_in(); ++i) {
    if (!IsRefAval(ctx.in(i))) J2O_RETURN_IF_ERROR(ctx.Shaped(i));
  }
  J2O_RETURN_IF_ERROR(ctx.Bool("reverse").status());
  J2O_ASSIGN_OR_RETURN(const ParamValue* length_param,
                       ctx.params().Get("length"));
  J2O_ASSIGN_OR_RETURN(const ClosedJaxpr* body, ctx.Jaxpr("jaxpr"));
  DimExpr length;
  if (length_param->kind() == ParamValue::Kind::kInt) {
    length = C(length_param->int_value());
  } else {
    std::string error;
    size_t offset = 0;
    if (!ParseDimExpr(length_param->ToString(), 64, &length, &error, &offset)) {
      return ctx.Fail(absl::StrCat("length=", length_param->ToString(),
                                   " is not a dimension"));
    }
  }
  if (DimConst(length).value_or(0) < 0) return ctx.Fail("length must be >= 0");
  std::vector<std::optional<Aval>> results;
  if (ctx.params().Has("num_consts") || ctx.params().Has("num_carry")) {
    J2O_ASSIGN_OR_RETURN(int64_t num_consts, ctx.Int("num_consts"));
    J2O_ASSIGN_OR_RETURN(int64_t num_carry, ctx.Int("num_carry"));
    J2O_RETURN_IF_ERROR(
        CheckScanSplit(ctx, *body, length, num_consts, num_carry, &results));
    ctx.SetResults(std::move(results));
    return absl::OkStatus();
  }
  // JAX 0.11 prints ft_in/ft_out flat trees instead of the counts: the
  // split is the leaf count of their groups (jaxpr/scan_params.h).
  if (ctx.params().Has("ft_in") || ctx.params().Has("ft_out")) {
    auto counts = ScanCountsFromParams(ctx.params(), ctx.num_in(),
                                       ctx.num_out());
    if (!counts.ok()) return ctx.Fail(counts.status().message());
    J2O_RETURN_IF_ERROR(CheckScanSplit(ctx, *body, length, (*counts)->first,
                                       (*counts)->second, &results));
    ctx.SetResults(std::move(results));
    return absl::OkStatus();
  }
  // Neither form printed (a hand-written program): the program is well typed
  // when some split makes the signature consistent.
  for (int64_t carry = 0; carry <= ctx.num_out(); ++carry) {
    for (int64_t consts = 0; consts + carry <= ctx.num_in(); ++consts) {
      std::vector<std::optional<Aval>> candidate;
      if (!CheckScanSplit(ctx, *body, length, consts, carry, &candidate).ok()) {
        continue;
      }
      bool matches = candidate.size() == static_cast<size_t>(ctx.num_out());
      for (size_t i = 0; matches && i < candidate.size(); ++i) {
        matches =
            !ctx.out(i).is_shaped() || SameType(*candidate[i], ctx.out(i));
      }
      if (matches) {
        ctx.SetResults(std::move(candidate));
        return absl::OkStatus();
      }
    }
  }
  return ctx.Fail(
      "no consts/carry split (num_consts/num_carry are not printed) makes the "
      "body's signature match the operands and results");
}

}  // namespace

void RegisterControlFlowRules(RuleTable& table) {
  for (const char* name : {"pjit", "jit", "closed_call", "core_call", "remat",
                           "remat2", "checkpoint", "custom_jvp_call",
                           "custom_vjp_call", "custom_vjp_call_jaxpr"}) {
    table[name] = {&CallRule};
  }
  table["cond"] = {&CondRule};
  table["while"] = {&WhileRule};
  table["scan"] = {&ScanRule};
}

}  // namespace jax2onnx::jaxpr::typecheck
