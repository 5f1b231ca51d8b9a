// Complex (c64/c128) lowerings of eigh and svd. eigh: eig_plan.h's two-sided
// Jacobi (round-robin parallel ordering, early exit, Rayleigh quotients of
// the re-orthogonalized V) on the Hermitian matrix of the named triangle (the
// diagonal's real part, as zheevd's zhetrd reads it), on the real and imaginary
// parts, in the same single ONNX Loop (graph size independent of n, symbolic n
// included).
//
// The pair (p, q) is rotated by the unitary W = D G Dᴴ, D = diag(1, conj(u))
// in the (p, q) plane with u = a_pq / |a_pq|: Dᴴ A D has the real entry
// |a_pq| at (p, q), and G is eig_plan.h's real rotation (c, s) for
// (a_pp, a_qq, |a_pq|). W's entries are W_pp = W_qq = c, W_pq = s u,
// W_qp = -s conj(u), so A <- Wᴴ A W updates
//   rows:    p <- c a_p - s u a_q,         q <- s conj(u) a_p + c a_q,
//   columns: p <- c a_p - s conj(u) a_q,   q <- s u a_p + c a_q,
// and V <- V W by the same column update (a round applies its n/2 pairs at
// once: UnitaryOfRound, RotateRound). The eigenvalues Re(vᴴ A v) are
// sorted ascending (zheevd's order) with V's columns permuted alike.
// Eigenvectors are unique up to a unit complex factor per column (LAPACK's
// phases differ), so tests compare reconstructions. Included by
// complex_plan_recipes.h only.
#ifndef JAX2ONNX_PLUGIN_EIG_COMPLEX_PLAN_H_
#define JAX2ONNX_PLUGIN_EIG_COMPLEX_PLAN_H_

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jaxpr/status_macros.h"
#include "plugin/complex_plan.h"
#include "plugin/eig_plan.h"
#include "plugin/linalg_complex_plan.h"
#include "plugin/linalg_plan.h"

namespace jax2onnx::plugin::complex {
namespace linalg_complex {

// The unitary pair rotation W = D G Dᴴ of the file comment for the
// Hermitian 2 x 2 [[x, z], [conj z, y]] (x, y real [...], z complex [...]):
// the real rotation (c, s) of (x, y, |z|) and su = s u, u = z / |z| (u = 1
// where z == 0), all with a trailing 1 ([..., 1]). Columns rotate as
// p <- c m_p - conj(su) m_q, q <- su m_p + c m_q.
template <class E>
struct PairRotation {
  V<E> c;
  Z<E> su;
};
template <class E>
PairRotation<E> HermitianRotation(CBuilder<E>& cb, V<E> x, V<E> y, Z<E> z,
                                  V<E> active, int rank) {
  linalg_plan::Builder<E>& b = cb.b;
  const DType d = cb.d;
  V<E> zero = b.Scalar(0), one = b.Scalar(1);
  V<E> r = Abs(cb.e, z, d);
  V<E> r_zero = b.Bin("Equal", r, zero, DType::kBool);
  V<E> r_safe = b.Where(r_zero, one, r, d);
  Z<E> u{b.Where(r_zero, one, b.Bin("Div", z.re, r_safe, d), d),
         b.Where(r_zero, zero, b.Bin("Div", z.im, r_safe, d), d)};
  auto [c, s] = eig_plan::Rotation(b, x, y, r, active, rank - 1);
  Z<E> u1 = cb.Unsqueeze(u, rank - 2);
  return {c, {b.Bin("Mul", s, u1.re, d), b.Bin("Mul", s, u1.im, d)}};
}

// A round of eig_plan::RoundOf's parallel ordering applied to complex
// rows (axis rank-2) or columns (axis rank-1): index i becomes
// c_i m_i + coef_i m_partner(i) (coef complex, c real, broadcast along the
// other axis).
template <class E>
Z<E> RotateRound(CBuilder<E>& cb, Z<E> m, V<E> partner, V<E> c, Z<E> coef,
                 int axis) {
  linalg_plan::Builder<E>& b = cb.b;
  const DType d = cb.d;
  Z<E> other = cb.Take(m, partner, axis);
  Z<E> mixed = Mul(cb.e, coef, other, d);
  return {b.Bin("Add", b.Bin("Mul", c, m.re, d), mixed.re, d),
          b.Bin("Add", b.Bin("Mul", c, m.im, d), mixed.im, d)};
}

// The unitary rotations W of a round (HermitianRotation per pair, from
// x = a_pp, y = a_qq, z = a_pq of each index's pair) as coefficients of
// RotateRound: for rows (Wᴴ A: p <- c a_p - su a_q, q <- conj(su) a_p +
// c a_q) [..., n, 1], for columns (A W: p <- c a_p - conj(su) a_q,
// q <- su a_p + c a_q) [..., 1, n].
template <class E>
struct RoundUnitary {
  V<E> c_rows, c_cols;
  Z<E> coef_rows, coef_cols;
};
template <class E>
RoundUnitary<E> UnitaryOfRound(CBuilder<E>& cb, const eig_plan::Round<E>& round,
                               V<E> self, V<E> partner_value, Z<E> z,
                               int rank) {
  linalg_plan::Builder<E>& b = cb.b;
  const DType d = cb.d;
  V<E> x = b.Where(round.first, self, partner_value, d);
  V<E> y = b.Where(round.first, partner_value, self, d);
  // [..., n, 1] coefficients: HermitianRotation's trailing 1 on [..., n].
  PairRotation<E> w = HermitianRotation(cb, x, y, z, round.active, rank + 1);
  V<E> first = b.Unsqueeze(round.first, 1, DType::kBool);
  Z<E> neg_su{cb.e.Op("Neg", {w.su.re}, d), cb.e.Op("Neg", {w.su.im}, d)};
  Z<E> coef_rows = cb.Where(first, neg_su, cb.Conj(w.su));
  Z<E> coef_cols = cb.Where(first, cb.Conj(neg_su), w.su);
  return {w.c, b.TransposeLast2(w.c, rank, d), coef_rows,
          cb.Transpose(coef_cols, rank)};
}

// eig_plan::Reorthogonalize on complex v: v (3 I - vᴴ v) / 2.
template <class E>
Z<E> Reorthogonalize(CBuilder<E>& cb, Z<E> v, V<E> eye_mask, int rank) {
  linalg_plan::Builder<E>& b = cb.b;
  const DType d = cb.d;
  Z<E> gram = cb.MatMul(cb.Conj(cb.Transpose(v, rank)), v);
  V<E> three_i = b.Bin("Mul", b.Cast(eye_mask, d), b.Scalar(3), d);
  Z<E> step = cb.MatMul(
      v, Z<E>{b.Bin("Sub", three_i, gram.re, d), cb.e.Op("Neg", {gram.im}, d)});
  return {b.Bin("Mul", step.re, b.Scalar(0.5), d),
          b.Bin("Mul", step.im, b.Scalar(0.5), d)};
}

// The last axis of real `values` [..., k] sorted (ascending or descending),
// with the matching columns of `vectors` [..., r, k] (both parts) permuted
// alike.
template <class E>
std::pair<V<E>, Z<E>> SortWithComplexColumns(CBuilder<E>& cb, V<E> values,
                                             V<E> k, Z<E> vectors, int rank,
                                             bool ascending) {
  E& e = cb.e;
  linalg_plan::Builder<E>& b = cb.b;
  const DType d = cb.d;
  std::vector<V<E>> top = e.OpMulti(
      "TopK", {values, b.Unsqueeze(k, 0, DType::kI64)}, {d, DType::kI64},
      {OpAttr::Int("axis", rank - 2), OpAttr::Int("largest", ascending ? 0 : 1),
       OpAttr::Int("sorted", 1)});
  V<E> idx = e.Op("Expand",
                  {b.Unsqueeze(top[1], rank - 2, DType::kI64),
                   e.Op("Shape", {vectors.re}, DType::kI64)},
                  DType::kI64);
  auto permute = [&](V<E> x) {
    return e.Op("GatherElements", {x, idx}, d, {OpAttr::Int("axis", rank - 1)});
  };
  return {top[0], {permute(vectors.re), permute(vectors.im)}};
}

// eig_plan::FillColumns on complex q [..., r, c]: P = I - Q Qᴴ (twice), the
// longest residual (squared modulus summed) becomes column column(it)
// where write(it) holds.
template <class E>
absl::StatusOr<Z<E>> FillColumns(
    CBuilder<E>& cb, Z<E> q0, int64_t r, V<E> trip, int rank,
    const std::function<V<E>(V<E>)>& column,
    const std::function<std::optional<V<E>>(V<E>)>& write,
    const std::vector<jaxpr::DimExpr>& q_shape) {
  E& e = cb.e;
  linalg_plan::Builder<E>& b = cb.b;
  const DType d = cb.d;
  // Named variables, not a structured binding: the loop bodies below
  // capture them, which clang before 16 refuses for bindings.
  const std::pair<V<E>, V<E>> residual = eig_plan::ResidualEye(b, r);
  const V<E> iota_r = residual.first, eye = residual.second;
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(trip, {q0.re, q0.im},
             {plugin::CarriedType(d, q_shape), plugin::CarriedType(d, q_shape)},
             [&](V<E> it, const std::vector<V<E>>& carried)
                 -> absl::StatusOr<std::vector<V<E>>> {
               Z<E> q{carried[0], carried[1]};
               Z<E> qh = cb.Conj(cb.Transpose(q, rank));
               Z<E> qqh = cb.MatMul(q, qh);
               Z<E> p{b.Bin("Sub", eye, qqh.re, d), e.Op("Neg", {qqh.im}, d)};
               p = cb.Sub(p, cb.MatMul(q, cb.MatMul(qh, p)));
               V<E> norms =
                   e.Op("ReduceSum",
                        {b.Bin("Add", b.Bin("Mul", p.re, p.re, d),
                               b.Bin("Mul", p.im, p.im, d), d),
                         b.Axes({rank - 2})},
                        d, {OpAttr::Int("keepdims", 1)});  // [..., 1, r]
               V<E> j = eig_plan::LongestResidual(b, norms, rank);
               V<E> pick = b.Bin("Equal", iota_r, j, DType::kBool);
               auto column_of = [&](V<E> part) {  // [..., r, 1]
                 return e.Op(
                     "ReduceSum",
                     {b.Where(pick, part, b.Scalar(0), d), b.Axes({rank - 1})},
                     d, {OpAttr::Int("keepdims", 1)});
               };
               Z<E> x{column_of(p.re), column_of(p.im)};
               V<E> len = e.Op("Sqrt",
                               {e.Op("ReduceSum",
                                     {b.Bin("Add", b.Bin("Mul", x.re, x.re, d),
                                            b.Bin("Mul", x.im, x.im, d), d),
                                      b.Axes({rank - 2})},
                                     d, {OpAttr::Int("keepdims", 1)})},
                               d);
               V<E> at =
                   eig_plan::FilledCells(b, q.re, it, rank, column, write);
               return std::vector<V<E>>{
                   b.Where(at, b.Bin("Div", x.re, len, d), q.re, d),
                   b.Where(at, b.Bin("Div", x.im, len, d), q.im, d)};
             }));
  return Z<E>{out[0], out[1]};
}

// eig_plan::CompleteColumns on complex u [..., r, k].
template <class E>
absl::StatusOr<Z<E>> CompleteColumns(CBuilder<E>& cb, Z<E> u, int64_t r,
                                     int64_t k, int rank,
                                     const std::vector<jaxpr::DimExpr>& batch) {
  linalg_plan::Builder<E>& b = cb.b;
  const DType d = cb.d;
  V<E> widen =
      b.Cast(b.Bin("Equal", b.Unsqueeze(b.Iota(b.ScalarI64(k)), 1, DType::kI64),
                   b.Iota(b.ScalarI64(r)), DType::kBool),
             d);  // [k, r]: u's columns first
  auto mm = [&](V<E> x) { return cb.e.Op("MatMul", {x, widen}, d); };
  return FillColumns<E>(
      cb, Z<E>{mm(u.re), mm(u.im)}, r, b.ScalarI64(r - k), rank,
      [&](V<E> it) { return b.Bin("Add", it, b.ScalarI64(k), DType::kI64); },
      [](V<E>) { return std::optional<V<E>>(); },
      eig_plan::MatrixShape(batch, r, r));
}

// eig_plan::FillZeroColumns on complex u [..., r, k] with sigma [..., k].
template <class E>
absl::StatusOr<Z<E>> FillZeroColumns(CBuilder<E>& cb, Z<E> u, V<E> sigma,
                                     int64_t r, int64_t k, int rank,
                                     const std::vector<jaxpr::DimExpr>& batch) {
  eig_plan::ZeroColumnPlan<E> plan =
      eig_plan::PlanZeroColumns(cb.b, sigma, k, rank);
  return FillColumns<E>(cb, u, r, plan.trip, rank, plan.column, plan.write,
                        eig_plan::MatrixShape(batch, r, k));
}

}  // namespace linalg_complex

// eigh(a) -> (v, w) on c64/c128: see the file comment.
template <class E>
absl::Status LowerComplexEigh(E& e) {
  namespace ep = eig_plan;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 1 || eqn.outputs.size() != 2) {
    return absl::InvalidArgumentError("eigh takes 1 operand, 2 results");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const int rank = aval.rank();
  if (rank < 2) return absl::InvalidArgumentError("eigh: rank must be >= 2");
  J2O_ASSIGN_OR_RETURN(bool lower, ep::ReadEighLower(eqn));
  const DType d = ComplexPartDType(aval.dtype);
  const DType kB = DType::kBool;
  linalg_complex::CBuilder<E> c{e, d};
  linalg_plan::Builder<E>& b = c.b;
  J2O_ASSIGN_OR_RETURN(Z<E> a, c.Operand(0));
  J2O_ASSIGN_OR_RETURN(V<E> n, b.Size(aval.shape[rank - 1]));
  V<E> iota = b.Iota(n);
  V<E> rows = b.Unsqueeze(iota, 1, DType::kI64);
  V<E> strict = b.Bin(lower ? "Greater" : "Less", rows, iota, kB);
  V<E> eye = b.Bin("Equal", rows, iota, kB);
  V<E> zero = b.Scalar(0);
  // The Hermitian matrix of the named triangle: off + offᴴ + Re(diag).
  Z<E> off = c.Where(strict, a, c.Zero());
  Z<E> off_h = c.Conj(c.Transpose(off, rank));
  Z<E> herm{b.Bin("Add", b.Bin("Add", off.re, off_h.re, d),
                  b.Where(eye, a.re, zero, d), d),
            b.Bin("Add", off.im, off_h.im, d)};
  // eig_plan.h's real eigh: rounds of n'/2 disjoint rotations, an early
  // exit after a sweep whose off-diagonal entries are all <= n eps ||A||_F,
  // Rayleigh quotients of the re-orthogonalized V.
  V<E> rounds = ep::RoundsPerSweep(b, n);
  V<E> trip = b.Bin("Mul", rounds, b.ScalarI64(ep::kMaxSweeps), DType::kI64);
  V<E> fro = ep::FrobeniusScale(b,
                                b.Bin("Add", b.Bin("Mul", herm.re, herm.re, d),
                                      b.Bin("Mul", herm.im, herm.im, d), d),
                                rank);
  V<E> tol = b.Bin("Mul", b.Cast(n, d), b.Scalar(ep::Epsilon(b)), d);
  Z<E> v0{ep::EyeLike(b, herm.re, eye), b.ZerosLike(herm.re, d)};
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(
          trip, {herm.re, herm.im, v0.re, v0.im, zero},
          {plugin::CarriedType(d, aval.shape),
           plugin::CarriedType(d, aval.shape),
           plugin::CarriedType(d, aval.shape),
           plugin::CarriedType(d, aval.shape), plugin::CarriedType(d, {})},
          [&](V<E> it, const std::vector<V<E>>& carried)
              -> absl::StatusOr<std::vector<V<E>>> {
            Z<E> m{carried[0], carried[1]};
            Z<E> v{carried[2], carried[3]};
            ep::Round<E> round = ep::RoundOf(b, it, n, iota);
            V<E> diag = e.Op("ReduceSum",
                             {b.Where(eye, m.re, zero, d), b.Axes({rank - 1})},
                             d, {OpAttr::Int("keepdims", 0)});
            // z_i = m[i, partner_i], read from the p row for both members.
            V<E> at_partner = b.Bin(
                "Equal", b.Unsqueeze(round.partner, 1, DType::kI64), iota, kB);
            auto row_pick = [&](V<E> x) {
              return e.Op("ReduceSum",
                          {b.Where(at_partner, x, zero, d), b.Axes({rank - 1})},
                          d, {OpAttr::Int("keepdims", 0)});
            };
            Z<E> z_row{row_pick(m.re), row_pick(m.im)};
            Z<E> z = c.Where(round.first, z_row,
                             c.Take(z_row, round.partner, rank - 2));
            linalg_complex::RoundUnitary<E> w = linalg_complex::UnitaryOfRound(
                c, round, diag, b.Take(diag, round.partner, rank - 2, d), z,
                rank);
            m = linalg_complex::RotateRound(c, m, round.partner, w.c_rows,
                                            w.coef_rows, rank - 2);
            m = linalg_complex::RotateRound(c, m, round.partner, w.c_cols,
                                            w.coef_cols, rank - 1);
            v = linalg_complex::RotateRound(c, v, round.partner, w.c_cols,
                                            w.coef_cols, rank - 1);
            V<E> measure = b.Where(round.active,
                                   b.Bin("Div", Abs(e, z, d), fro, d), zero, d);
            ep::SweepTest<E> test =
                ep::EndOfSweepTest(b, it, rounds, carried[4], measure, tol);
            return std::vector<V<E>>{test.keep_going, m.re, m.im, v.re, v.im,
                                     test.worst};
          },
          /*early_exit=*/true));
  // Re(v_iᴴ A v_i) of the Hermitian input.
  Z<E> v_final =
      linalg_complex::Reorthogonalize(c, {out[2], out[3]}, eye, rank);
  Z<E> av = c.MatMul(herm, v_final);
  V<E> w = e.Op("ReduceSum",
                {b.Bin("Add", b.Bin("Mul", v_final.re, av.re, d),
                       b.Bin("Mul", v_final.im, av.im, d), d),
                 b.Axes({rank - 2})},
                d, {OpAttr::Int("keepdims", 0)});
  // Ascending eigenvalues, V's columns permuted alike (both parts).
  auto [sorted_w, sorted_v] = linalg_complex::SortWithComplexColumns(
      c, w, n, v_final, rank, /*ascending=*/true);
  J2O_RETURN_IF_ERROR(c.SetOut(0, sorted_v));
  return e.SetOut(1, sorted_w);
}

// svd(a) -> (s[, u, vh]) on c64/c128: eig_plan.h's one-sided (Hestenes)
// Jacobi on the columns of A (of Aᴴ when m < n): columns p and q are made
// orthogonal by the unitary W of the file comment for their Hermitian Gram
// block [[|a_p|², a_pᴴ a_q], [a_qᴴ a_p, |a_q|²]], A <- A W, V <- V W. The
// singular values are the column norms, sorted descending, U the normalized
// columns, vh = Vᴴ. Singular vectors are unique up to a unit complex factor
// per pair. Static m, n; full_matrices on a non-square matrix completes the
// longer side's factor (linalg_complex::CompleteColumns).
template <class E>
absl::Status LowerComplexSvd(E& e) {
  namespace ep = eig_plan;
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_ASSIGN_OR_RETURN(ep::SvdShape shape, ep::ReadSvdShape(eqn));
  const int rank = shape.rank;
  const DType d = ComplexPartDType(eqn.inputs[0].var->aval.dtype);
  linalg_complex::CBuilder<E> c{e, d};
  linalg_plan::Builder<E>& b = c.b;
  J2O_ASSIGN_OR_RETURN(Z<E> a, c.Operand(0));
  const bool wide = shape.m < shape.n;  // work on Aᴴ, tall
  if (wide) a = c.Conj(c.Transpose(a, rank));
  const int64_t cols = std::min(shape.m, shape.n);
  V<E> n = b.ScalarI64(cols);
  V<E> iota = b.Iota(n);
  // eig_plan.h's real svd: rounds of disjoint column pairs, dgesvj's early
  // exit, singular values |A v| of the re-orthogonalized V, U the rotated
  // columns normalized.
  const int64_t rounds_per_sweep = cols + cols % 2 - 1;
  V<E> rounds = b.ScalarI64(rounds_per_sweep);
  V<E> trip = b.ScalarI64(rounds_per_sweep * ep::kMaxSweeps);
  V<E> tol =
      b.Scalar(std::sqrt(static_cast<double>(std::max(shape.m, shape.n))) *
               ep::Epsilon(b));
  Z<E> v0 = linalg_complex::BatchedEye(c, a.re, iota, n, rank);
  // The tall matrix [..., max(m, n), cols] and V [..., cols, cols].
  const std::vector<jaxpr::DimExpr>& in_shape = eqn.inputs[0].var->aval.shape;
  std::vector<jaxpr::DimExpr> tall_shape(in_shape.begin(), in_shape.end() - 2);
  std::vector<jaxpr::DimExpr> gram_shape = tall_shape;
  tall_shape.push_back(jaxpr::DimExpr::Constant(std::max(shape.m, shape.n)));
  tall_shape.push_back(jaxpr::DimExpr::Constant(cols));
  gram_shape.push_back(jaxpr::DimExpr::Constant(cols));
  gram_shape.push_back(jaxpr::DimExpr::Constant(cols));
  auto sum_rows = [&](V<E> x) {
    return e.Op("ReduceSum", {x, b.Axes({rank - 2})}, d,
                {OpAttr::Int("keepdims", 0)});
  };
  auto mul = [&](V<E> x, V<E> y) { return b.Bin("Mul", x, y, d); };
  auto norm2 = [&](Z<E> x) {
    return sum_rows(b.Bin("Add", mul(x.re, x.re), mul(x.im, x.im), d));
  };
  V<E> zero = b.Scalar(0);
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(
          trip, {a.re, a.im, v0.re, v0.im, zero},
          {plugin::CarriedType(d, tall_shape),
           plugin::CarriedType(d, tall_shape),
           plugin::CarriedType(d, gram_shape),
           plugin::CarriedType(d, gram_shape), plugin::CarriedType(d, {})},
          [&](V<E> it, const std::vector<V<E>>& carried)
              -> absl::StatusOr<std::vector<V<E>>> {
            Z<E> u{carried[0], carried[1]};
            Z<E> v{carried[2], carried[3]};
            ep::Round<E> round = ep::RoundOf(b, it, n, iota);
            Z<E> u_partner = c.Take(u, round.partner, rank - 1);
            V<E> norms2 = norm2(u);
            V<E> norms2_partner = b.Take(norms2, round.partner, rank - 2, d);
            // a_iᴴ a_partner for the p member, its conjugate for q: z of
            // the pair (p, q) is a_pᴴ a_q either way.
            Z<E> dot{sum_rows(b.Bin("Add", mul(u.re, u_partner.re),
                                    mul(u.im, u_partner.im), d)),
                     sum_rows(b.Bin("Sub", mul(u.re, u_partner.im),
                                    mul(u.im, u_partner.re), d))};
            Z<E> z = c.Where(round.first, dot, c.Conj(dot));
            linalg_complex::RoundUnitary<E> w = linalg_complex::UnitaryOfRound(
                c, round, norms2, norms2_partner, z, rank);
            u = linalg_complex::RotateRound(c, u, round.partner, w.c_cols,
                                            w.coef_cols, rank - 1);
            v = linalg_complex::RotateRound(c, v, round.partner, w.c_cols,
                                            w.coef_cols, rank - 1);
            V<E> measure = ep::ColumnCosines(b, round, norms2, norms2_partner,
                                             Abs(e, dot, d));
            ep::SweepTest<E> test =
                ep::EndOfSweepTest(b, it, rounds, carried[4], measure, tol);
            return std::vector<V<E>>{test.keep_going, u.re, u.im, v.re, v.im,
                                     test.worst};
          },
          /*early_exit=*/true));
  V<E> eye =
      b.Bin("Equal", b.Unsqueeze(iota, 1, DType::kI64), iota, DType::kBool);
  Z<E> v_final =
      linalg_complex::Reorthogonalize(c, {out[2], out[3]}, eye, rank);
  Z<E> u_rotated{out[0], out[1]};
  V<E> rotated_norms = e.Op("Sqrt", {norm2(u_rotated)}, d);  // [..., cols]
  V<E> nonzero = b.Bin("Greater", rotated_norms, zero, DType::kBool);
  V<E> norms =
      b.Where(nonzero, e.Op("Sqrt", {norm2(c.MatMul(a, v_final))}, d), zero, d);
  auto [sigma, v_sorted] = linalg_complex::SortWithComplexColumns(
      c, norms, n, v_final, rank, /*ascending=*/false);
  // A member with a NaN in either part is NaN (+ NaN i) in every output, as
  // JAX on CPU gives it (linalg_plan::AnyNaNMatrix).
  V<E> nan_member =
      b.Bin("Or", linalg_plan::AnyNaNMatrix(b, a.re, rank),
            linalg_plan::AnyNaNMatrix(b, a.im, rank), DType::kBool);
  V<E> nan = b.Scalar(std::numeric_limits<double>::quiet_NaN());
  auto nan_where_bad = [&](Z<E> x) {
    return Z<E>{b.Where(nan_member, nan, x.re, d),
                b.Where(nan_member, nan, x.im, d)};
  };
  J2O_RETURN_IF_ERROR(e.SetOut(
      0,
      b.Where(b.Squeeze(nan_member, rank - 1, DType::kBool), nan, sigma, d)));
  if (!shape.compute_uv) return absl::OkStatus();
  V<E> safe =
      b.Unsqueeze(b.Where(nonzero, rotated_norms, b.Scalar(1), d), rank - 2, d);
  auto [unused, u_unit] = linalg_complex::SortWithComplexColumns(
      c, norms, n,
      {b.Bin("Div", u_rotated.re, safe, d),
       b.Bin("Div", u_rotated.im, safe, d)},
      rank, /*ascending=*/false);
  J2O_ASSIGN_OR_RETURN(u_unit, linalg_complex::FillZeroColumns(
                                   c, u_unit, sigma, std::max(shape.m, shape.n),
                                   cols, rank, shape.batch));
  if (shape.full) {
    J2O_ASSIGN_OR_RETURN(u_unit, linalg_complex::CompleteColumns(
                                     c, u_unit, std::max(shape.m, shape.n),
                                     cols, rank, shape.batch));
  }
  // A = U S Vᴴ (tall); for a wide A, Aᴴ = U' S V'ᴴ gives U = V', Vᴴ = U'ᴴ.
  auto adjoint = [&](Z<E> x) { return c.Conj(c.Transpose(x, rank)); };
  if (wide) {
    J2O_RETURN_IF_ERROR(c.SetOut(1, nan_where_bad(v_sorted)));
    return c.SetOut(2, nan_where_bad(adjoint(u_unit)));
  }
  J2O_RETURN_IF_ERROR(c.SetOut(1, nan_where_bad(u_unit)));
  return c.SetOut(2, nan_where_bad(adjoint(v_sorted)));
}

}  // namespace jax2onnx::plugin::complex

#endif  // JAX2ONNX_PLUGIN_EIG_COMPLEX_PLAN_H_
