// Calls and control flow for the reference interpreter: pjit/jit,
// closed_call/core_call, remat2/checkpoint, custom_jvp_call,
// custom_vjp_call(_jaxpr), cond, while and scan. Each evaluates its nested
// jaxprs with EvalContext::Call; custom derivative rules are irrelevant to
// the primal value, so only the primal jaxpr runs.
#include <algorithm>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/eval/kernels.h"
#include "jaxpr/scan_params.h"

namespace jax2onnx::jaxpr {
namespace {

using Arrays = std::vector<Array>;

absl::StatusOr<Arrays> CallParamJaxpr(const EvalContext& ctx,
                                      absl::string_view key,
                                      absl::Span<const Array> args) {
  auto jaxpr = ctx.params().GetJaxpr(key);
  if (!jaxpr.ok()) return jaxpr.status();
  if (!(*jaxpr)->constvars.empty()) {
    return absl::UnimplementedError(absl::StrCat(
        "the nested jaxpr in param '", key, "' has ",
        (*jaxpr)->constvars.size(),
        " constvars whose values are not part of the printed program"));
  }
  return ctx.Call(**jaxpr, {}, args);
}

// The first key of `keys` that the equation has.
absl::string_view FirstPresentKey(
    const EvalContext& ctx, std::initializer_list<absl::string_view> keys) {
  for (absl::string_view key : keys) {
    if (ctx.params().Has(key)) return key;
  }
  return *keys.begin();
}

absl::StatusOr<Arrays> CallKernel(const EvalContext& ctx,
                                  absl::Span<const Array> inputs) {
  // jit/pjit use `jaxpr`; closed_call/core_call use `call_jaxpr`;
  // custom_vjp_call_jaxpr (<= 0.6.0) uses `fun_jaxpr`.
  const absl::string_view key =
      FirstPresentKey(ctx, {"jaxpr", "call_jaxpr", "fun_jaxpr"});
  return CallParamJaxpr(ctx, key, inputs);
}

// Row `i` (along axis 0) of `a`.
Array Row(const Array& a, int64_t i) {
  std::vector<int64_t> shape(a.shape().begin() + 1, a.shape().end());
  Array row(a.dtype(), shape);
  const size_t row_bytes = row.num_bytes();
  std::memcpy(row.data(), a.data() + i * row_bytes, row_bytes);
  return row;
}

void SetRow(Array* a, int64_t i, const Array& row) {
  const size_t row_bytes = row.num_bytes();
  std::memcpy(a->data() + i * row_bytes, row.data(), row_bytes);
}

absl::StatusOr<Arrays> CondKernel(const EvalContext& ctx,
                                  absl::Span<const Array> inputs) {
  auto branches = ctx.params().GetJaxprs("branches");
  if (!branches.ok()) return branches.status();
  if (inputs.empty() || inputs[0].num_elements() != 1) {
    return absl::InvalidArgumentError("cond needs a scalar branch index");
  }
  // lax.switch clamps the index into range before binding cond.
  const int64_t n = static_cast<int64_t>(branches->size());
  const int64_t index = std::clamp<int64_t>(inputs[0].GetAsInt64(0), 0, n - 1);
  const ClosedJaxpr& branch = *(*branches)[index];
  if (!branch.constvars.empty()) {
    return absl::UnimplementedError(
        "cond branch has constvars whose values are not part of the program");
  }
  return ctx.Call(branch, {}, inputs.subspan(1));
}

absl::StatusOr<Arrays> WhileKernel(const EvalContext& ctx,
                                   absl::Span<const Array> inputs) {
  auto cond = ctx.params().GetJaxpr("cond_jaxpr");
  if (!cond.ok()) return cond.status();
  auto body = ctx.params().GetJaxpr("body_jaxpr");
  if (!body.ok()) return body.status();
  auto cond_nconsts = ctx.params().GetInt("cond_nconsts");
  if (!cond_nconsts.ok()) return cond_nconsts.status();
  auto body_nconsts = ctx.params().GetInt("body_nconsts");
  if (!body_nconsts.ok()) return body_nconsts.status();
  const int64_t nc = *cond_nconsts, nb = *body_nconsts;
  if (nc + nb > static_cast<int64_t>(inputs.size())) {
    return absl::InvalidArgumentError("while: more consts than operands");
  }
  Arrays cond_args(inputs.begin(), inputs.begin() + nc);
  Arrays body_args(inputs.begin() + nc, inputs.begin() + nc + nb);
  Arrays carry(inputs.begin() + nc + nb, inputs.end());
  for (;;) {
    Arrays c_in = cond_args;
    c_in.insert(c_in.end(), carry.begin(), carry.end());
    auto pred = ctx.Call(**cond, {}, c_in);
    if (!pred.ok()) return pred.status();
    if (pred->size() != 1 || (*pred)[0].num_elements() != 1) {
      return absl::InvalidArgumentError("while: cond must return one scalar");
    }
    if ((*pred)[0].GetAsInt64(0) == 0) break;
    Arrays b_in = body_args;
    b_in.insert(b_in.end(), carry.begin(), carry.end());
    auto next = ctx.Call(**body, {}, b_in);
    if (!next.ok()) return next.status();
    carry = *std::move(next);
  }
  return carry;
}

// Splits scan operands into (num_consts, num_carry). Texts up to 0.10 print
// both params; 0.11 moved them into `ft_in` pytrees, so they are inferred
// from the avals: carries keep their type through the body and xs/ys gain a
// leading `length` axis.
absl::StatusOr<std::pair<int64_t, int64_t>> ScanSplit(const EvalContext& ctx,
                                                      const ClosedJaxpr& body,
                                                      int64_t length) {
  const Eqn& eqn = ctx.eqn();
  // num_consts/num_carry, or the leaf counts of 0.11's ft_in/ft_out.
  auto counts = ScanCountsFromParams(ctx.params(),
                                     static_cast<int64_t>(eqn.inputs.size()),
                                     static_cast<int64_t>(eqn.outputs.size()));
  if (!counts.ok()) return counts.status();
  if (counts->has_value()) return **counts;
  const int64_t n_in = static_cast<int64_t>(eqn.inputs.size());
  const int64_t n_out = static_cast<int64_t>(eqn.outputs.size());
  auto input_aval = [&](int64_t i) -> const Aval* {
    const Atom& a = eqn.inputs[i];
    if (a.is_literal()) return a.literal->aval ? &*a.literal->aval : nullptr;
    return &a.var->aval;
  };
  auto stacked = [&](const Aval& outer, const Aval& inner) {
    if (outer.rank() != inner.rank() + 1 || outer.dtype != inner.dtype) {
      return false;
    }
    auto lead = outer.shape[0].Evaluate(ctx.bindings());
    if (!lead.ok() || *lead != length) return false;
    return std::equal(inner.shape.begin(), inner.shape.end(),
                      outer.shape.begin() + 1);
  };
  std::vector<std::pair<int64_t, int64_t>> candidates;
  if (n_out != static_cast<int64_t>(body.outvars.size())) {
    return absl::InvalidArgumentError(
        "scan: the body's outputs do not match the equation's outputs");
  }
  for (int64_t k = 0; k <= n_out; ++k) {
    for (int64_t consts = 0; consts + k <= n_in; ++consts) {
      const int64_t xs = n_in - consts - k;
      if (consts + k + xs != static_cast<int64_t>(body.invars.size())) continue;
      bool ok = true;
      for (int64_t i = 0; i < k && ok; ++i) {
        const Aval* in = input_aval(consts + i);
        ok = in != nullptr && *in == body.invars[consts + i]->aval &&
             eqn.outputs[i]->aval == body.invars[consts + i]->aval;
      }
      for (int64_t i = consts + k; i < n_in && ok; ++i) {
        const Aval* in = input_aval(i);
        ok = in != nullptr && stacked(*in, body.invars[i]->aval);
      }
      for (int64_t i = k; i < n_out && ok; ++i) {
        const Atom& o = body.outvars[i];
        const Aval* inner =
            o.is_literal() ? (o.literal->aval ? &*o.literal->aval : nullptr)
                           : &o.var->aval;
        ok = inner != nullptr && stacked(eqn.outputs[i]->aval, *inner);
      }
      if (ok) candidates.emplace_back(consts, k);
    }
  }
  if (candidates.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scan without num_consts/num_carry: cannot infer the consts/carry "
        "split from the avals (",
        candidates.size(), " consistent splits)"));
  }
  return candidates[0];
}

absl::StatusOr<Arrays> ScanKernel(const EvalContext& ctx,
                                  absl::Span<const Array> inputs) {
  auto body = ctx.params().GetJaxpr("jaxpr");
  if (!body.ok()) return body.status();
  auto length = ctx.params().GetInt("length");
  if (!length.ok()) return length.status();
  bool reverse = false;
  if (ctx.params().Has("reverse")) {
    auto r = ctx.params().GetBool("reverse");
    if (!r.ok()) return r.status();
    reverse = *r;
  }
  auto split = ScanSplit(ctx, **body, *length);
  if (!split.ok()) return split.status();
  const auto [num_consts, num_carry] = *split;
  if (!(*body)->constvars.empty()) {
    return absl::UnimplementedError("scan body with constvars");
  }
  Arrays consts(inputs.begin(), inputs.begin() + num_consts);
  Arrays carry(inputs.begin() + num_consts,
               inputs.begin() + num_consts + num_carry);
  Arrays xs(inputs.begin() + num_consts + num_carry, inputs.end());
  Arrays ys;
  for (int o = static_cast<int>(num_carry); o < ctx.num_outputs(); ++o) {
    auto y = ctx.NewOutput(o);
    if (!y.ok()) return y.status();
    ys.push_back(*std::move(y));
  }
  for (int64_t step = 0; step < *length; ++step) {
    const int64_t i = reverse ? *length - 1 - step : step;
    Arrays args = consts;
    args.insert(args.end(), carry.begin(), carry.end());
    for (const Array& x : xs) args.push_back(Row(x, i));
    auto outs = ctx.Call(**body, {}, args);
    if (!outs.ok()) return outs.status();
    for (int64_t k = 0; k < num_carry; ++k) carry[k] = std::move((*outs)[k]);
    for (size_t y = 0; y < ys.size(); ++y) {
      SetRow(&ys[y], i, (*outs)[num_carry + y]);
    }
  }
  Arrays results = std::move(carry);
  for (Array& y : ys) results.push_back(std::move(y));
  return results;
}

}  // namespace

void RegisterControlFlowKernels() {
  for (const char* name : {"pjit", "jit", "closed_call", "core_call", "remat2",
                           "remat", "checkpoint", "custom_jvp_call",
                           "custom_vjp_call", "custom_vjp_call_jaxpr"}) {
    RegisterEvalKernel(name, &CallKernel);
  }
  RegisterEvalKernel("cond", &CondKernel);
  RegisterEvalKernel("while", &WhileKernel);
  RegisterEvalKernel("scan", &ScanKernel);
}

}  // namespace jax2onnx::jaxpr
