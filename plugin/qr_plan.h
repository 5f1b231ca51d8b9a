// Pipeline-independent lowering of qr (geqrf + householder_product, as
// JAX's _qr_lowering composes them) by Householder reflections in one ONNX
// Loop over the columns k < min(m, n), with LAPACK's dlarfg conventions:
//   alpha = R[k, k], xnorm = |R[k+1:, k]|; xnorm == 0: tau = 0 (H = I);
//   else beta = -sign(alpha) hypot(alpha, xnorm), tau = (beta - alpha) /
//   beta, v = (1, R[k+1:, k] / (alpha - beta)), R[k, k] = beta.
// Each step applies H = I - tau v vᵀ to the trailing columns of R and
// accumulates Q = Q H (an [..., m, m] product; the thin Q is its first k
// columns). Same reflectors as LAPACK, so Q and R match JAX's up to
// rounding (R's diagonal may be negative, as LAPACK's is).
#ifndef JAX2ONNX_PLUGIN_QR_PLAN_H_
#define JAX2ONNX_PLUGIN_QR_PLAN_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/linalg_plan.h"

namespace jax2onnx::plugin {

// qr's operand, params and static matrix dims (the real and complex recipes
// share them): one variable operand of rank >= 2, no pivoting, 2 results,
// static nonzero m, n.
struct QrShape {
  int rank = 0;
  int64_t m = 0, n = 0, k = 0;  // k = min(m, n)
  bool full = false;            // full_matrices
};
inline absl::StatusOr<QrShape> ReadQrShape(const jaxpr::Eqn& eqn) {
  if (eqn.inputs.size() != 1 || eqn.inputs[0].is_literal()) {
    return absl::InvalidArgumentError("qr takes 1 variable operand");
  }
  const jaxpr::Aval& aval = eqn.inputs[0].var->aval;
  QrShape shape;
  shape.rank = aval.rank();
  if (shape.rank < 2) {
    return absl::InvalidArgumentError("qr: rank must be >= 2");
  }
  if (const jaxpr::ParamValue* p = eqn.params.Find("pivoting")) {
    J2O_ASSIGN_OR_RETURN(bool pivoting, p->AsBool("param 'pivoting'"));
    if (pivoting) {
      return absl::UnimplementedError(
          "qr with pivoting=True (geqp3) is not lowered");
    }
  }
  J2O_ASSIGN_OR_RETURN(shape.full, eqn.params.GetBool("full_matrices"));
  if (eqn.outputs.size() != 2) {
    return absl::InvalidArgumentError("qr without pivoting has 2 results");
  }
  const jaxpr::DimExpr& m_dim = aval.shape[shape.rank - 2];
  const jaxpr::DimExpr& n_dim = aval.shape[shape.rank - 1];
  if (!m_dim.is_constant() || !n_dim.is_constant()) {
    return absl::UnimplementedError(
        "qr needs static matrix dims (min(m, n) sizes the results)");
  }
  shape.m = m_dim.constant_value();
  shape.n = n_dim.constant_value();
  shape.k = std::min(shape.m, shape.n);
  if (shape.k == 0) return absl::UnimplementedError("qr of an empty matrix");
  return shape;
}

template <class E>
absl::Status LowerQr(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_ASSIGN_OR_RETURN(QrShape shape, ReadQrShape(eqn));
  const jaxpr::Aval& aval = eqn.inputs[0].var->aval;
  const DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "qr"));
  const int rank = shape.rank;
  const bool full = shape.full;
  const int64_t m0 = shape.m, n0 = shape.n, k0 = shape.k;
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(Val a, e.In(0));
  Val m = b.ScalarI64(m0);
  Val iota_m = b.Iota(m);
  Val iota_n = b.Iota(b.ScalarI64(n0));
  Val rows = b.Unsqueeze(iota_m, 1, DType::kI64);
  // Q starts as the identity of [..., m, m].
  Val eye = b.Bin("Equal", rows, iota_m, DType::kBool);
  Val batch = e.Op("Shape", {a}, DType::kI64, {OpAttr::Int("end", rank - 2)});
  Val q0 = e.Op("Expand",
                {b.Cast(eye, dt), e.Op("Concat", {batch, e.ConstI64({m0, m0})},
                                       DType::kI64, {OpAttr::Int("axis", 0)})},
                dt);
  Val zero = b.Scalar(0);
  Val one = b.Scalar(1);
  J2O_ASSIGN_OR_RETURN(
      std::vector<Val> out,
      e.Loop(
          b.ScalarI64(k0), {a, q0}, {dt, dt},
          [&](Val k, const std::vector<Val>& carried)
              -> absl::StatusOr<std::vector<Val>> {
            Val r = carried[0];
            Val q = carried[1];
            Val below = b.Bin("Greater", iota_m, k, DType::kBool);
            Val at = b.Bin("Equal", iota_m, k, DType::kBool);
            Val col = b.Take(r, k, rank - 1, dt);      // [..., m]
            Val alpha = b.Take(col, k, rank - 2, dt);  // [...]
            Val x = b.Where(below, col, zero, dt);
            Val xnorm = e.Op(
                "Sqrt",
                {e.Op("ReduceSum", {b.Bin("Mul", x, x, dt), b.Axes({rank - 2})},
                      dt, {OpAttr::Int("keepdims", 0)})},
                dt);
            Val norm = e.Op("Sqrt",
                            {b.Bin("Add", b.Bin("Mul", alpha, alpha, dt),
                                   b.Bin("Mul", xnorm, xnorm, dt), dt)},
                            dt);
            // beta = -sign(norm, alpha): -norm for alpha >= +0.
            Val beta = b.Where(b.Bin("Less", alpha, zero, DType::kBool), norm,
                               e.Op("Neg", {norm}, dt), dt);
            Val identity = b.Bin("Equal", xnorm, zero, DType::kBool);
            Val tau = b.Where(
                identity, zero,
                b.Bin("Div", b.Bin("Sub", beta, alpha, dt), beta, dt), dt);
            Val denom =
                b.Where(identity, one, b.Bin("Sub", alpha, beta, dt), dt);
            Val v = b.Where(
                at, one,
                b.Where(below,
                        b.Bin("Div", col, b.Unsqueeze(denom, rank - 2, dt), dt),
                        zero, dt),
                dt);  // [..., m]
            Val tau2 = b.Unsqueeze(b.Unsqueeze(tau, rank - 2, dt), rank - 1,
                                   dt);  // [..., 1, 1]
            // R[:, k+1:] -= tau v (vᵀ R[:, k+1:]).
            Val w = e.Op("MatMul", {b.Unsqueeze(v, rank - 2, dt), r},
                         dt);  // [..., 1, n]
            Val update =
                b.Bin("Mul", tau2,
                      b.Bin("Mul", b.Unsqueeze(v, rank - 1, dt), w, dt), dt);
            Val trailing = b.Bin("Greater", iota_n, k, DType::kBool);
            r = b.Where(trailing, b.Bin("Sub", r, update, dt), r, dt);
            // Column k: beta (alpha when H = I) on the diagonal, 0 below.
            Val diag = b.Where(identity, alpha, beta, dt);
            Val new_col =
                b.Where(at, b.Unsqueeze(diag, rank - 2, dt),
                        b.Where(below, zero, col, dt), dt);  // [..., m]
            r = b.Where(b.Bin("Equal", iota_n, k, DType::kBool),
                        b.Unsqueeze(new_col, rank - 1, dt), r, dt);
            // Q = Q - tau (Q v) vᵀ.
            Val qv = e.Op("MatMul", {q, b.Unsqueeze(v, rank - 1, dt)},
                          dt);  // [..., m, 1]
            q = b.Bin(
                "Sub", q,
                b.Bin("Mul", tau2,
                      b.Bin("Mul", qv, b.Unsqueeze(v, rank - 2, dt), dt), dt),
                dt);
            return std::vector<Val>{r, q};
          }));
  Val r = out[0];
  Val q = out[1];
  // R: upper triangle; the thin factors keep the first k rows / columns.
  Val upper = b.Bin("LessOrEqual", rows, iota_n, DType::kBool);
  r = b.Where(upper, r, zero, dt);
  const int64_t k_out = full ? m0 : k0;
  if (k_out != m0) {
    q = e.Op("Slice",
             {q, e.ConstI64({0}), e.ConstI64({k_out}), e.ConstI64({rank - 1})},
             dt);
    r = e.Op("Slice",
             {r, e.ConstI64({0}), e.ConstI64({k_out}), e.ConstI64({rank - 2})},
             dt);
  }
  J2O_RETURN_IF_ERROR(e.SetOut(0, q));
  return e.SetOut(1, r);
}

// geqrf(a) -> (a', taus): LAPACK's compact QR, the same reflectors as qr
// above: R in the upper triangle of a', the essential part of each v below
// the diagonal, tau per column k < min(m, n).
template <class E>
absl::Status LowerGeqrf(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 1 || eqn.outputs.size() != 2) {
    return absl::InvalidArgumentError("geqrf takes 1 operand, 2 results");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const jaxpr::Aval& tau_aval = eqn.outputs[1]->aval;
  const DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "geqrf"));
  const int rank = aval.rank();
  if (rank < 2) return absl::InvalidArgumentError("geqrf: rank must be >= 2");
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(Val a, e.In(0));
  J2O_ASSIGN_OR_RETURN(Val m, b.Size(aval.shape[rank - 2]));
  J2O_ASSIGN_OR_RETURN(Val n, b.Size(aval.shape[rank - 1]));
  J2O_ASSIGN_OR_RETURN(Val steps, b.Size(tau_aval.shape[rank - 2]));
  Val iota_m = b.Iota(m);
  Val iota_n = b.Iota(n);
  Val iota_k = b.Iota(steps);
  Val zero = b.Scalar(0);
  Val one = b.Scalar(1);
  Val batch = e.Op("Shape", {a}, DType::kI64, {OpAttr::Int("end", rank - 2)});
  Val taus0 =
      e.Op("Expand",
           {zero, e.Op("Concat", {batch, b.Unsqueeze(steps, 0, DType::kI64)},
                       DType::kI64, {OpAttr::Int("axis", 0)})},
           dt);
  J2O_ASSIGN_OR_RETURN(
      std::vector<Val> out,
      e.Loop(
          steps, {a, taus0}, {dt, dt},
          [&](Val k, const std::vector<Val>& carried)
              -> absl::StatusOr<std::vector<Val>> {
            Val r = carried[0];
            Val below = b.Bin("Greater", iota_m, k, DType::kBool);
            Val at = b.Bin("Equal", iota_m, k, DType::kBool);
            Val col = b.Take(r, k, rank - 1, dt);
            Val alpha = b.Take(col, k, rank - 2, dt);
            Val x = b.Where(below, col, zero, dt);
            Val xnorm = e.Op(
                "Sqrt",
                {e.Op("ReduceSum", {b.Bin("Mul", x, x, dt), b.Axes({rank - 2})},
                      dt, {OpAttr::Int("keepdims", 0)})},
                dt);
            Val norm = e.Op("Sqrt",
                            {b.Bin("Add", b.Bin("Mul", alpha, alpha, dt),
                                   b.Bin("Mul", xnorm, xnorm, dt), dt)},
                            dt);
            Val beta = b.Where(b.Bin("Less", alpha, zero, DType::kBool), norm,
                               e.Op("Neg", {norm}, dt), dt);
            Val identity = b.Bin("Equal", xnorm, zero, DType::kBool);
            Val tau = b.Where(
                identity, zero,
                b.Bin("Div", b.Bin("Sub", beta, alpha, dt), beta, dt), dt);
            Val denom =
                b.Where(identity, one, b.Bin("Sub", alpha, beta, dt), dt);
            Val v_below = b.Where(
                below, b.Bin("Div", col, b.Unsqueeze(denom, rank - 2, dt), dt),
                zero, dt);
            Val v = b.Where(at, one, v_below, dt);
            Val tau2 =
                b.Unsqueeze(b.Unsqueeze(tau, rank - 2, dt), rank - 1, dt);
            Val w = e.Op("MatMul", {b.Unsqueeze(v, rank - 2, dt), r}, dt);
            Val update =
                b.Bin("Mul", tau2,
                      b.Bin("Mul", b.Unsqueeze(v, rank - 1, dt), w, dt), dt);
            Val trailing = b.Bin("Greater", iota_n, k, DType::kBool);
            r = b.Where(trailing, b.Bin("Sub", r, update, dt), r, dt);
            // Column k: beta (alpha when H = I), then v's essential part.
            Val diag = b.Where(identity, alpha, beta, dt);
            Val new_col = b.Where(at, b.Unsqueeze(diag, rank - 2, dt),
                                  b.Where(below, v_below, col, dt), dt);
            r = b.Where(b.Bin("Equal", iota_n, k, DType::kBool),
                        b.Unsqueeze(new_col, rank - 1, dt), r, dt);
            Val taus = b.Where(b.Bin("Equal", iota_k, k, DType::kBool),
                               b.Unsqueeze(tau, rank - 2, dt), carried[1], dt);
            return std::vector<Val>{r, taus};
          }));
  J2O_RETURN_IF_ERROR(e.SetOut(0, out[0]));
  return e.SetOut(1, out[1]);
}

// householder_product(a, taus) -> Q: the first n columns of H_0 ... H_{k-1}
// with v_j = (0, ..., 1, a[j+1:, j]) (LAPACK orgqr), accumulated as
// Q = Q - tau_j (Q v_j) v_jᵀ from the [..., m, m] identity.
template <class E>
absl::Status LowerHouseholderProduct(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 2 || eqn.outputs.size() != 1 ||
      eqn.inputs[1].is_literal()) {
    return absl::InvalidArgumentError(
        "householder_product takes (a, taus), one result");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const jaxpr::Aval& tau_aval = eqn.inputs[1].var->aval;
  const DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "householder_product"));
  const int rank = aval.rank();
  if (rank < 2) {
    return absl::InvalidArgumentError("householder_product: rank must be >= 2");
  }
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(Val a, e.In(0));
  J2O_ASSIGN_OR_RETURN(Val taus, e.In(1));
  J2O_ASSIGN_OR_RETURN(Val m, b.Size(aval.shape[rank - 2]));
  J2O_ASSIGN_OR_RETURN(Val n, b.Size(aval.shape[rank - 1]));
  J2O_ASSIGN_OR_RETURN(Val steps, b.Size(tau_aval.shape[rank - 2]));
  Val iota_m = b.Iota(m);
  Val rows = b.Unsqueeze(iota_m, 1, DType::kI64);
  Val eye = b.Cast(b.Bin("Equal", rows, iota_m, DType::kBool), dt);
  Val batch = e.Op("Shape", {a}, DType::kI64, {OpAttr::Int("end", rank - 2)});
  Val mm = b.Unsqueeze(m, 0, DType::kI64);
  Val q0 = e.Op("Expand",
                {eye, e.Op("Concat", {batch, mm, mm}, DType::kI64,
                           {OpAttr::Int("axis", 0)})},
                dt);
  Val zero = b.Scalar(0);
  J2O_ASSIGN_OR_RETURN(
      std::vector<Val> out,
      e.Loop(
          steps, {q0}, {dt},
          [&](Val j, const std::vector<Val>& carried)
              -> absl::StatusOr<std::vector<Val>> {
            Val q = carried[0];
            Val col = b.Take(a, j, rank - 1, dt);  // [..., m]
            Val v =
                b.Where(b.Bin("Equal", iota_m, j, DType::kBool), b.Scalar(1),
                        b.Where(b.Bin("Greater", iota_m, j, DType::kBool), col,
                                zero, dt),
                        dt);
            Val tau = b.Unsqueeze(
                b.Unsqueeze(b.Take(taus, j, rank - 2, dt), rank - 2, dt),
                rank - 1, dt);  // [..., 1, 1]
            Val qv = e.Op("MatMul", {q, b.Unsqueeze(v, rank - 1, dt)}, dt);
            return std::vector<Val>{b.Bin(
                "Sub", q,
                b.Bin("Mul", tau,
                      b.Bin("Mul", qv, b.Unsqueeze(v, rank - 2, dt), dt), dt),
                dt)};
          }));
  Val q = e.Op("Slice",
               {out[0], e.ConstI64({0}), b.Unsqueeze(n, 0, DType::kI64),
                e.ConstI64({rank - 1})},
               dt);
  return e.SetOut(0, q);
}

// tridiagonal_solve(dl, d, du, b): the Thomas algorithm of JAX's own
// implementation (_tridiagonal_solve_jax_impl, used off CPU): a forward
// Loop c'_i = du_i / (d_i - dl_i c'_{i-1}), d'_i = (b_i - dl_i d'_{i-1}) /
// (d_i - dl_i c'_{i-1}), then a backward Loop x_i = d'_i - c'_i x_{i+1}.
// JAX's CPU lowering calls LAPACK gtsv, which also pivots: the results agree
// up to rounding on the diagonally dominant systems Thomas is stable for; a
// zero pivot gives inf/NaN (gtsv: all NaN). perturb_singular is refused.
template <class E>
absl::Status LowerTridiagonalSolve(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 4 || eqn.outputs.size() != 1) {
    return absl::InvalidArgumentError(
        "tridiagonal_solve takes (dl, d, du, b), one result");
  }
  if (eqn.params.Has("perturb_singular")) {
    J2O_ASSIGN_OR_RETURN(bool perturb, eqn.params.GetBool("perturb_singular"));
    if (perturb) {
      return absl::UnimplementedError(
          "tridiagonal_solve with perturb_singular=True is not lowered");
    }
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;  // [..., m, n]
  const DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "tridiagonal_solve"));
  const int rank = aval.rank();
  if (rank < 2) {
    return absl::InvalidArgumentError("tridiagonal_solve: b needs rank >= 2");
  }
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(Val dl, e.In(0));
  J2O_ASSIGN_OR_RETURN(Val d, e.In(1));
  J2O_ASSIGN_OR_RETURN(Val du, e.In(2));
  J2O_ASSIGN_OR_RETURN(Val rhs, e.In(3));
  J2O_ASSIGN_OR_RETURN(Val m, b.Size(aval.shape[rank - 2]));
  Val iota = b.Iota(m);
  Val rows = b.Unsqueeze(iota, 1, DType::kI64);
  Val zero = b.Scalar(0);
  Val cp0 = b.ZerosLike(d, dt);    // [..., m]
  Val dp0 = b.ZerosLike(rhs, dt);  // [..., m, n]
  // Previous c', d' as [..., 1] and [..., 1, n] (zero before row 0).
  Val c_prev0 = e.Op("ReduceSum", {cp0, b.Axes({rank - 2})}, dt,
                     {OpAttr::Int("keepdims", 1)});
  Val d_prev0 = e.Op("ReduceSum", {dp0, b.Axes({rank - 2})}, dt,
                     {OpAttr::Int("keepdims", 1)});
  J2O_ASSIGN_OR_RETURN(
      std::vector<Val> fwd,
      e.Loop(
          m, {cp0, dp0, c_prev0, d_prev0}, {dt, dt, dt, dt},
          [&](Val i,
              const std::vector<Val>& c) -> absl::StatusOr<std::vector<Val>> {
            Val a_i = b.Unsqueeze(b.Take(dl, i, rank - 2, dt), rank - 2, dt);
            Val d_i = b.Unsqueeze(b.Take(d, i, rank - 2, dt), rank - 2, dt);
            Val u_i = b.Unsqueeze(b.Take(du, i, rank - 2, dt), rank - 2, dt);
            Val b_i = b.Unsqueeze(b.Take(rhs, i, rank - 2, dt), rank - 2,
                                  dt);  // [..., 1, n]
            // Row 0 has no dl term (dl[0] is 0 by contract; not read).
            Val first = b.Bin("Equal", i, b.ScalarI64(0), DType::kBool);
            Val a_eff = b.Where(first, zero, a_i, dt);  // [..., 1]
            Val denom = b.Bin("Sub", d_i, b.Bin("Mul", a_eff, c[2], dt), dt);
            Val c_i = b.Bin("Div", u_i, denom, dt);
            Val a2 = b.Unsqueeze(a_eff, rank - 1, dt);    // [..., 1, 1]
            Val den2 = b.Unsqueeze(denom, rank - 1, dt);  // [..., 1, 1]
            Val d_new =
                b.Bin("Div", b.Bin("Sub", b_i, b.Bin("Mul", a2, c[3], dt), dt),
                      den2, dt);
            Val at = b.Bin("Equal", iota, i, DType::kBool);
            Val at_rows = b.Bin("Equal", rows, i, DType::kBool);
            return std::vector<Val>{b.Where(at, c_i, c[0], dt),
                                    b.Where(at_rows, d_new, c[1], dt), c_i,
                                    d_new};
          }));
  Val last = b.Bin("Sub", m, b.ScalarI64(1), DType::kI64);
  J2O_ASSIGN_OR_RETURN(
      std::vector<Val> bwd,
      e.Loop(
          m, {b.ZerosLike(rhs, dt), d_prev0}, {dt, dt},
          [&](Val it,
              const std::vector<Val>& c) -> absl::StatusOr<std::vector<Val>> {
            Val i = b.Bin("Sub", last, it, DType::kI64);
            Val cp_i = b.Unsqueeze(
                b.Unsqueeze(b.Take(fwd[0], i, rank - 2, dt), rank - 2, dt),
                rank - 1, dt);  // [..., 1, 1]
            Val dp_i = b.Unsqueeze(b.Take(fwd[1], i, rank - 2, dt), rank - 2,
                                   dt);  // [..., 1, n]
            // x_{m-1} = d'_{m-1}: no c' term on the last row.
            Val is_last = b.Bin("Equal", it, b.ScalarI64(0), DType::kBool);
            Val term = b.Where(is_last, zero, b.Bin("Mul", cp_i, c[1], dt), dt);
            Val x_i = b.Bin("Sub", dp_i, term, dt);
            return std::vector<Val>{
                b.Where(b.Bin("Equal", rows, i, DType::kBool), x_i, c[0], dt),
                x_i};
          }));
  return e.SetOut(0, bwd[0]);
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_QR_PLAN_H_
