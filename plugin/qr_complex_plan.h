// Complex (c64/c128) lowerings of qr, geqrf and householder_product: the
// Householder recipes of qr_plan.h on the real and imaginary parts (one ONNX
// Loop over the columns, static m, n for qr as in the real recipe), with
// LAPACK's zlarfg / zgeqr2 / zung2r conventions as JAX's CPU lowering
// (geqrf + householder_product) calls them:
//   alpha = R[k, k], xnorm = |R[k+1:, k]|; H = I (tau = 0) only when
//   xnorm == 0 and Im alpha == 0 (so zlarfg also reflects the last row of a
//   square matrix and every diagonal entry of R is real); else beta =
//   -sign(Re alpha) sqrt(|alpha|² + xnorm²), tau = ((beta - Re alpha) / beta,
//   -Im alpha / beta), v = (1, R[k+1:, k] / (alpha - beta)), R[k, k] = beta.
//   H = I - tau v vᴴ; geqrf applies Hᴴ = I - conj(tau) v vᴴ to R's trailing
//   columns, and Q = H_0 H_1 ... is accumulated as Q - tau (Q v) vᴴ.
// The H = I test is exact, as zlarfg's: where the exact Im alpha of the last
// row is 0 but rounding leaves a tiny one, the reflection flips the sign of
// R's last diagonal entry (docs/complex.md).
// Included by complex_plan_recipes.h only.
#ifndef JAX2ONNX_PLUGIN_QR_COMPLEX_PLAN_H_
#define JAX2ONNX_PLUGIN_QR_COMPLEX_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jaxpr/status_macros.h"
#include "plugin/complex_plan.h"
#include "plugin/linalg_complex_plan.h"
#include "plugin/linalg_plan.h"
#include "plugin/qr_plan.h"

namespace jax2onnx::plugin::complex {
namespace linalg_complex {

// One zlarfg step on column k of r ([..., m, n] parts): Hᴴ applied to the
// trailing columns, column k set to the new R[k, k] (beta, or alpha when
// H = I) above v's essential part (geqrf's compact form, `store_v`) or
// zeros (qr's R). `v` is the reflector (1 at k, 0 above), `tau` [...].
template <class E>
struct ComplexReflection {
  Z<E> r, v, tau;
};

template <class E>
ComplexReflection<E> ReflectColumn(CBuilder<E>& c, Z<E> r, V<E> k, V<E> iota_m,
                                   V<E> iota_n, int rank, bool store_v) {
  E& e = c.e;
  linalg_plan::Builder<E>& b = c.b;
  const DType d = c.d;
  const DType kB = DType::kBool;
  V<E> zero = b.Scalar(0), one = b.Scalar(1);
  V<E> below = b.Bin("Greater", iota_m, k, kB);
  V<E> at = b.Bin("Equal", iota_m, k, kB);
  Z<E> col = c.Take(r, k, rank - 1);      // [..., m]
  Z<E> alpha = c.Take(col, k, rank - 2);  // [...]
  Z<E> x = c.Where(below, col, c.Zero());
  auto sq = [&](V<E> t) { return b.Bin("Mul", t, t, d); };
  V<E> xnorm2 = e.Op("ReduceSum",
                     {b.Bin("Add", sq(x.re), sq(x.im), d), b.Axes({rank - 2})},
                     d, {OpAttr::Int("keepdims", 0)});
  V<E> norm = e.Op(
      "Sqrt",
      {b.Bin("Add", b.Bin("Add", sq(alpha.re), sq(alpha.im), d), xnorm2, d)},
      d);
  // beta = -sign(norm, Re alpha): -norm for Re alpha >= +0.
  V<E> beta = b.Where(b.Bin("Less", alpha.re, zero, kB), norm,
                      e.Op("Neg", {norm}, d), d);
  V<E> identity = e.Op(
      "And",
      {b.Bin("Equal", xnorm2, zero, kB), b.Bin("Equal", alpha.im, zero, kB)},
      kB);
  Z<E> tau = c.Where(identity, c.Zero(),
                     {b.Bin("Div", b.Bin("Sub", beta, alpha.re, d), beta, d),
                      b.Bin("Div", e.Op("Neg", {alpha.im}, d), beta, d)});
  Z<E> denom = c.Where(identity, {one, zero},
                       {b.Bin("Sub", alpha.re, beta, d), alpha.im});
  Z<E> v_below =
      c.Where(below, Div(e, col, c.Unsqueeze(denom, rank - 2), d), c.Zero());
  Z<E> v = c.Where(at, {one, zero}, v_below);  // [..., m]
  // R[:, k+1:] -= conj(tau) v (vᴴ R[:, k+1:]).
  Z<E> tau2 = c.Unsqueeze(c.Unsqueeze(tau, rank - 2), rank - 1);  // [..., 1, 1]
  Z<E> w = c.MatMul(c.Unsqueeze(c.Conj(v), rank - 2), r);         // [..., 1, n]
  Z<E> update = Mul(e, c.Conj(tau2), Mul(e, c.Unsqueeze(v, rank - 1), w, d), d);
  V<E> trailing = b.Bin("Greater", iota_n, k, kB);
  r = c.Where(trailing, c.Sub(r, update), r);
  Z<E> diag = c.Where(identity, alpha, {beta, zero});
  Z<E> new_col = c.Where(at, c.Unsqueeze(diag, rank - 2),
                         c.Where(below, store_v ? v_below : c.Zero(),
                                 c.Take(r, k, rank - 1)));  // [..., m]
  r = c.Where(b.Bin("Equal", iota_n, k, kB), c.Unsqueeze(new_col, rank - 1), r);
  return {r, v, tau};
}

// Q - tau (Q v) vᴴ for Q [..., m, m], v [..., m], tau [..., 1, 1].
template <class E>
Z<E> AccumulateReflector(CBuilder<E>& c, Z<E> q, Z<E> v, Z<E> tau2, int rank) {
  Z<E> qv = c.MatMul(q, c.Unsqueeze(v, rank - 1));  // [..., m, 1]
  Z<E> outer = Mul(c.e, qv, c.Unsqueeze(c.Conj(v), rank - 2), c.d);
  return c.Sub(q, Mul(c.e, tau2, outer, c.d));
}

}  // namespace linalg_complex

// qr on c64/c128: R from the reflections, Q accumulated; pivoting=True adds
// geqp3's column pivoting (zlaqp2: partial norms of the complex columns,
// downdated with |r_kc|, the modulus) as for reals (qr_plan::Pivots).
template <class E>
absl::Status LowerComplexQr(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_ASSIGN_OR_RETURN(QrShape shape, ReadQrShape(eqn));
  const jaxpr::Aval& aval = eqn.inputs[0].var->aval;
  const int rank = shape.rank;
  const bool full = shape.full;
  const int64_t m0 = shape.m, n0 = shape.n, k0 = shape.k;
  const DType d = ComplexPartDType(aval.dtype);
  linalg_complex::CBuilder<E> c{e, d};
  linalg_plan::Builder<E>& b = c.b;
  J2O_ASSIGN_OR_RETURN(Z<E> a, c.Operand(0));
  V<E> m = b.ScalarI64(m0);
  V<E> iota_m = b.Iota(m);
  V<E> iota_n = b.Iota(b.ScalarI64(n0));
  V<E> rows = b.Unsqueeze(iota_m, 1, DType::kI64);
  Z<E> q0 = linalg_complex::BatchedEye(c, a.re, iota_m, m, rank);
  std::vector<V<E>> init = {a.re, a.im, q0.re, q0.im};
  // R's parts keep a's shape, Q's are [..., m, m].
  std::vector<jaxpr::DimExpr> q_shape(aval.shape.begin(), aval.shape.end() - 2);
  q_shape.push_back(jaxpr::DimExpr::Constant(m0));
  q_shape.push_back(jaxpr::DimExpr::Constant(m0));
  std::vector<plugin::CarriedType> carried_types = {
      plugin::CarriedType(d, aval.shape), plugin::CarriedType(d, aval.shape),
      plugin::CarriedType(d, q_shape), plugin::CarriedType(d, q_shape)};
  if (shape.pivoting) {
    qr_plan::AppendPivotCarries(b, {a.re, a.im}, iota_n, rank, aval.shape, init,
                                carried_types);
  }
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(
          b.ScalarI64(k0), init, carried_types,
          [&](V<E> k, const std::vector<V<E>>& carried)
              -> absl::StatusOr<std::vector<V<E>>> {
            Z<E> r{carried[0], carried[1]};
            Z<E> q{carried[2], carried[3]};
            qr_plan::Pivots<E> piv;
            if (shape.pivoting) {
              piv = {carried[4], carried[5], carried[6]};
              std::vector<V<E>> parts = {r.re, r.im};
              qr_plan::SwapInPivot(b, parts, piv, k, iota_n, rank);
              r = {parts[0], parts[1]};
            }
            linalg_complex::ComplexReflection<E> h =
                linalg_complex::ReflectColumn(c, r, k, iota_m, iota_n, rank,
                                              /*store_v=*/false);
            r = h.r;
            Z<E> tau2 = c.Unsqueeze(c.Unsqueeze(h.tau, rank - 2), rank - 1);
            q = linalg_complex::AccumulateReflector(c, q, h.v, tau2, rank);
            if (!shape.pivoting) {
              return std::vector<V<E>>{r.re, r.im, q.re, q.im};
            }
            qr_plan::UpdateNorms(b, {r.re, r.im}, piv, k, iota_m, iota_n, rank);
            return std::vector<V<E>>{r.re,     r.im,    q.re,   q.im,
                                     piv.perm, piv.vn1, piv.vn2};
          }));
  Z<E> r{out[0], out[1]};
  Z<E> q{out[2], out[3]};
  V<E> upper = b.Bin("LessOrEqual", rows, iota_n, DType::kBool);
  r = c.Where(upper, r, c.Zero());
  const int64_t k_out = full ? m0 : k0;
  if (k_out != m0) {
    auto leading = [&](V<E> x, int axis) {
      return qr_plan::Leading(b, x, k_out, axis);
    };
    q = {leading(q.re, rank - 1), leading(q.im, rank - 1)};
    r = {leading(r.re, rank - 2), leading(r.im, rank - 2)};
  }
  J2O_RETURN_IF_ERROR(c.SetOut(0, q));
  J2O_RETURN_IF_ERROR(c.SetOut(1, r));
  if (!shape.pivoting) return absl::OkStatus();
  return e.SetOut(2, b.Cast(out[4], eqn.outputs[2]->aval.dtype));
}

// geqrf on c64/c128: R above the diagonal, the reflectors' essential parts
// below, taus per column k < min(m, n).
template <class E>
absl::Status LowerComplexGeqrf(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 1 || eqn.outputs.size() != 2) {
    return absl::InvalidArgumentError("geqrf takes 1 operand, 2 results");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const jaxpr::Aval& tau_aval = eqn.outputs[1]->aval;
  const int rank = aval.rank();
  if (rank < 2) return absl::InvalidArgumentError("geqrf: rank must be >= 2");
  const DType d = ComplexPartDType(aval.dtype);
  linalg_complex::CBuilder<E> c{e, d};
  linalg_plan::Builder<E>& b = c.b;
  J2O_ASSIGN_OR_RETURN(Z<E> a, c.Operand(0));
  J2O_ASSIGN_OR_RETURN(
      linalg_plan::StepDims<E> dims,
      linalg_plan::ReadStepDims(b, aval, tau_aval.shape[rank - 2], rank));
  V<E> steps = dims.steps;
  V<E> iota_m = dims.iota_m, iota_n = dims.iota_n, iota_k = dims.iota_k;
  V<E> taus0 = e.Op(
      "Expand",
      {b.Scalar(0),
       b.BatchShapeThen(a.re, rank - 2, {b.Unsqueeze(steps, 0, DType::kI64)})},
      d);
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(steps, {a.re, a.im, taus0, taus0},
             {plugin::CarriedType(d, aval.shape),
              plugin::CarriedType(d, aval.shape),
              plugin::CarriedType(d, tau_aval.shape),
              plugin::CarriedType(d, tau_aval.shape)},
             [&](V<E> k, const std::vector<V<E>>& carried)
                 -> absl::StatusOr<std::vector<V<E>>> {
               Z<E> r{carried[0], carried[1]};
               Z<E> taus{carried[2], carried[3]};
               linalg_complex::ComplexReflection<E> h =
                   linalg_complex::ReflectColumn(c, r, k, iota_m, iota_n, rank,
                                                 /*store_v=*/true);
               r = h.r;
               taus = c.Where(b.Bin("Equal", iota_k, k, DType::kBool),
                              c.Unsqueeze(h.tau, rank - 2), taus);
               return std::vector<V<E>>{r.re, r.im, taus.re, taus.im};
             }));
  J2O_RETURN_IF_ERROR(c.SetOut(0, {out[0], out[1]}));
  return c.SetOut(1, {out[2], out[3]});
}

// hessenberg(a) on c64/c128: LAPACK zgehd2 (ilo = 1, ihi = n), one Loop
// over the n - 1 columns: zlarfg on a[i+1:, i] (alpha = a[i+1, i]; H = I,
// tau = 0 only when a[i+2:, i] == 0 and Im alpha == 0, so the last step
// still reflects a complex alpha and every subdiagonal entry is real; else
// beta = -sign(Re alpha) sqrt(|alpha|² + ||x||²), tau = ((beta - Re alpha) /
// beta, -Im alpha / beta), v = (1, x / (alpha - beta))), then a <- a H
// (H = I - tau v vᴴ, on the columns after i: v is 0 up to row i) and
// a <- Hᴴ a on the columns after i, and column i <- (beta, v's essential
// part) below the diagonal; taus [..., n - 1].
template <class E>
absl::Status LowerComplexHessenberg(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 1 || eqn.outputs.size() != 2) {
    return absl::InvalidArgumentError("hessenberg takes 1 operand, 2 results");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const jaxpr::Aval& tau_aval = eqn.outputs[1]->aval;
  const int rank = aval.rank();
  if (rank < 2) {
    return absl::InvalidArgumentError("hessenberg: rank must be >= 2");
  }
  const DType d = ComplexPartDType(aval.dtype);
  const DType kB = DType::kBool;
  linalg_complex::CBuilder<E> c{e, d};
  linalg_plan::Builder<E>& b = c.b;
  J2O_ASSIGN_OR_RETURN(Z<E> a, c.Operand(0));
  J2O_ASSIGN_OR_RETURN(V<E> n, b.Size(aval.shape[rank - 1]));
  V<E> steps = e.Op(
      "Max", {b.Bin("Sub", n, b.ScalarI64(1), DType::kI64), b.ScalarI64(0)},
      DType::kI64);
  V<E> iota = b.Iota(n);
  V<E> iota_k = b.Iota(steps);
  V<E> zero = b.Scalar(0), one = b.Scalar(1);
  V<E> taus0 = e.Op(
      "Expand",
      {zero,
       b.BatchShapeThen(a.re, rank - 2, {b.Unsqueeze(steps, 0, DType::kI64)})},
      d);
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(
          steps, {a.re, a.im, taus0, taus0},
          {plugin::CarriedType(d, aval.shape),
           plugin::CarriedType(d, aval.shape),
           plugin::CarriedType(d, tau_aval.shape),
           plugin::CarriedType(d, tau_aval.shape)},
          [&](V<E> i, const std::vector<V<E>>& carried)
              -> absl::StatusOr<std::vector<V<E>>> {
            Z<E> m{carried[0], carried[1]};
            Z<E> taus{carried[2], carried[3]};
            V<E> i1 = b.Bin("Add", i, b.ScalarI64(1), DType::kI64);
            V<E> below = b.Bin("Greater", iota, i1, kB);
            V<E> at = b.Bin("Equal", iota, i1, kB);
            Z<E> col = c.Take(m, i, rank - 1);       // [..., n]
            Z<E> alpha = c.Take(col, i1, rank - 2);  // [...]
            Z<E> x = c.Where(below, col, c.Zero());
            auto sq = [&](V<E> t) { return b.Bin("Mul", t, t, d); };
            V<E> xnorm2 =
                e.Op("ReduceSum",
                     {b.Bin("Add", sq(x.re), sq(x.im), d), b.Axes({rank - 2})},
                     d, {OpAttr::Int("keepdims", 0)});
            V<E> norm =
                e.Op("Sqrt",
                     {b.Bin("Add", b.Bin("Add", sq(alpha.re), sq(alpha.im), d),
                            xnorm2, d)},
                     d);
            // beta = -sign(norm, Re alpha): -norm for Re alpha >= +0.
            V<E> beta = b.Where(b.Bin("Less", alpha.re, zero, kB), norm,
                                e.Op("Neg", {norm}, d), d);
            V<E> identity = e.Op("And",
                                 {b.Bin("Equal", xnorm2, zero, kB),
                                  b.Bin("Equal", alpha.im, zero, kB)},
                                 kB);
            Z<E> tau =
                c.Where(identity, c.Zero(),
                        {b.Bin("Div", b.Bin("Sub", beta, alpha.re, d), beta, d),
                         b.Bin("Div", e.Op("Neg", {alpha.im}, d), beta, d)});
            Z<E> denom = c.Where(identity, {one, zero},
                                 {b.Bin("Sub", alpha.re, beta, d), alpha.im});
            Z<E> v_below = c.Where(
                below, Div(e, col, c.Unsqueeze(denom, rank - 2), d), c.Zero());
            Z<E> v = c.Where(at, {one, zero}, v_below);  // [..., n]
            Z<E> tau2 = c.Unsqueeze(c.Unsqueeze(tau, rank - 2), rank - 1);
            Z<E> v_col = c.Unsqueeze(v, rank - 1);           // [..., n, 1]
            Z<E> vh_row = c.Unsqueeze(c.Conj(v), rank - 2);  // [..., 1, n]
            // a <- a - tau (a v) vᴴ: only the columns after i change.
            m = c.Sub(m, Mul(e, tau2, c.MatMul(c.MatMul(m, v_col), vh_row), d));
            // a <- a - conj(tau) v (vᴴ a) on the columns after i.
            Z<E> left =
                Mul(e, c.Conj(tau2), c.MatMul(v_col, c.MatMul(vh_row, m)), d);
            V<E> trailing = b.Bin("Greater", iota, i, kB);
            m = c.Where(trailing, c.Sub(m, left), m);
            // Column i: beta (alpha when H = I) below the diagonal, then
            // v's essential part.
            Z<E> sub = c.Where(identity, alpha, {beta, zero});
            Z<E> new_col =
                c.Where(at, c.Unsqueeze(sub, rank - 2),
                        c.Where(below, v_below, c.Take(m, i, rank - 1)));
            m = c.Where(b.Bin("Equal", iota, i, kB),
                        c.Unsqueeze(new_col, rank - 1), m);
            taus = c.Where(b.Bin("Equal", iota_k, i, kB),
                           c.Unsqueeze(tau, rank - 2), taus);
            return std::vector<V<E>>{m.re, m.im, taus.re, taus.im};
          }));
  J2O_RETURN_IF_ERROR(c.SetOut(0, {out[0], out[1]}));
  return c.SetOut(1, {out[2], out[3]});
}

// householder_product(a, taus) on c64/c128: the first n columns of
// H_0 ... H_{k-1}, H_j = I - tau_j v_j v_jᴴ, v_j = (0, ..., 1, a[j+1:, j])
// (LAPACK ungqr), accumulated from the [..., m, m] identity.
template <class E>
absl::Status LowerComplexHouseholderProduct(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 2 || eqn.outputs.size() != 1 ||
      eqn.inputs[1].is_literal()) {
    return absl::InvalidArgumentError(
        "householder_product takes (a, taus), one result");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const jaxpr::Aval& tau_aval = eqn.inputs[1].var->aval;
  const int rank = aval.rank();
  if (rank < 2) {
    return absl::InvalidArgumentError("householder_product: rank must be >= 2");
  }
  if (!jaxpr::IsComplex(OperandAval(eqn, 0).dtype) ||
      !jaxpr::IsComplex(tau_aval.dtype)) {
    return absl::InvalidArgumentError(
        "householder_product: a and taus must both be complex");
  }
  const DType d = ComplexPartDType(aval.dtype);
  linalg_complex::CBuilder<E> c{e, d};
  linalg_plan::Builder<E>& b = c.b;
  J2O_ASSIGN_OR_RETURN(Z<E> a, c.Operand(0));
  J2O_ASSIGN_OR_RETURN(Z<E> taus, c.Operand(1));
  J2O_ASSIGN_OR_RETURN(V<E> m, b.Size(aval.shape[rank - 2]));
  J2O_ASSIGN_OR_RETURN(V<E> n, b.Size(aval.shape[rank - 1]));
  J2O_ASSIGN_OR_RETURN(V<E> steps, b.Size(tau_aval.shape[rank - 2]));
  V<E> iota_m = b.Iota(m);
  Z<E> q0 = linalg_complex::BatchedEye(c, a.re, iota_m, m, rank);
  // Q is [..., m, m] (the result keeps its first n columns).
  std::vector<jaxpr::DimExpr> q_shape(aval.shape.begin(), aval.shape.end() - 1);
  q_shape.push_back(aval.shape[rank - 2]);
  const plugin::CarriedType q_type(d, q_shape);
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(steps, {q0.re, q0.im}, {q_type, q_type},
             [&](V<E> j, const std::vector<V<E>>& carried)
                 -> absl::StatusOr<std::vector<V<E>>> {
               Z<E> q{carried[0], carried[1]};
               Z<E> col = c.Take(a, j, rank - 1);  // [..., m]
               Z<E> v =
                   c.Where(b.Bin("Equal", iota_m, j, DType::kBool),
                           {b.Scalar(1), b.Scalar(0)},
                           c.Where(b.Bin("Greater", iota_m, j, DType::kBool),
                                   col, c.Zero()));
               Z<E> tau =
                   c.Unsqueeze(c.Unsqueeze(c.Take(taus, j, rank - 2), rank - 2),
                               rank - 1);  // [..., 1, 1]
               q = linalg_complex::AccumulateReflector(c, q, v, tau, rank);
               return std::vector<V<E>>{q.re, q.im};
             }));
  // A static n is a constant end, so that ONNX shape inference types the
  // Slice (it reads ends only from constants).
  const jaxpr::DimExpr& n_dim = aval.shape[rank - 1];
  V<E> ends = n_dim.is_constant() ? e.ConstI64({n_dim.constant_value()})
                                  : b.Unsqueeze(n, 0, DType::kI64);
  auto slice = [&](V<E> x) {
    return e.Op("Slice", {x, e.ConstI64({0}), ends, e.ConstI64({rank - 1})}, d);
  };
  return c.SetOut(0, {slice(out[0]), slice(out[1])});
}

}  // namespace jax2onnx::plugin::complex

#endif  // JAX2ONNX_PLUGIN_QR_COMPLEX_PLAN_H_
