// Complex (c64/c128) lowering of eigh: eig_plan.h's cyclic two-sided Jacobi
// on the Hermitian matrix of the named triangle (the diagonal's real part,
// as zheevd's zhetrd reads it), on the real and imaginary parts, in the same
// single ONNX Loop (graph size independent of n, symbolic n included).
//
// The pair (p, q) is rotated by the unitary W = D G Dᴴ, D = diag(1, conj(u))
// in the (p, q) plane with u = a_pq / |a_pq|: Dᴴ A D has the real entry
// |a_pq| at (p, q), and G is eig_plan.h's real rotation (c, s) for
// (a_pp, a_qq, |a_pq|). W's entries are W_pp = W_qq = c, W_pq = s u,
// W_qp = -s conj(u), so A <- Wᴴ A W updates
//   rows:    p <- c a_p - s u a_q,         q <- s conj(u) a_p + c a_q,
//   columns: p <- c a_p - s conj(u) a_q,   q <- s u a_p + c a_q,
// and V <- V W by the same column update. After eig_plan::kSweeps sweeps the
// eigenvalues are the real parts of the diagonal, sorted ascending (zheevd's
// order) with V's columns permuted alike. Eigenvectors are unique up to a
// unit complex factor per column (LAPACK's phases differ), so tests compare
// reconstructions.
// Included by complex_plan_recipes.h only.
#ifndef JAX2ONNX_PLUGIN_EIG_COMPLEX_PLAN_H_
#define JAX2ONNX_PLUGIN_EIG_COMPLEX_PLAN_H_

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

// Rows (axis rank-2) or columns (axis rank-1) p and q of m become
// c m_p + beta m_q and gamma m_p + c m_q (c real, beta and gamma complex,
// all with a trailing 1 for broadcasting).
template <class E>
Z<E> RotatePair(CBuilder<E>& cb, Z<E> m, V<E> p, V<E> q, V<E> c, Z<E> beta,
                Z<E> gamma, V<E> ids, int axis) {
  linalg_plan::Builder<E>& b = cb.b;
  const DType d = cb.d;
  Z<E> mp = cb.Take(m, p, axis);
  Z<E> mq = cb.Take(m, q, axis);
  auto scale = [&](Z<E> z) {
    return Z<E>{b.Bin("Mul", c, z.re, d), b.Bin("Mul", c, z.im, d)};
  };
  auto add = [&](Z<E> x, Z<E> y) {
    return Z<E>{b.Bin("Add", x.re, y.re, d), b.Bin("Add", x.im, y.im, d)};
  };
  Z<E> np = add(scale(mp), Mul(cb.e, beta, mq, d));
  Z<E> nq = add(Mul(cb.e, gamma, mp, d), scale(mq));
  return cb.Where(b.Bin("Equal", ids, p, DType::kBool), cb.Unsqueeze(np, axis),
                  cb.Where(b.Bin("Equal", ids, q, DType::kBool),
                           cb.Unsqueeze(nq, axis), m));
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
  J2O_ASSIGN_OR_RETURN(bool lower, eqn.params.GetBool("lower"));
  if (const jaxpr::ParamValue* sub = eqn.params.Find("subset_by_index");
      sub != nullptr && !sub->is_none()) {
    return absl::UnimplementedError(
        "eigh with subset_by_index is not lowered (JAX's CPU lowering "
        "rejects it too)");
  }
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
  V<E> zero = b.Scalar(0), one = b.Scalar(1);
  // The Hermitian matrix of the named triangle: off + offᴴ + Re(diag).
  Z<E> off = c.Where(strict, a, c.Zero());
  Z<E> off_h = c.Conj(c.Transpose(off, rank));
  Z<E> herm{b.Bin("Add", b.Bin("Add", off.re, off_h.re, d),
                  b.Where(eye, a.re, zero, d), d),
            b.Bin("Add", off.im, off_h.im, d)};
  V<E> nn = b.Bin("Mul", n, n, DType::kI64);
  V<E> trip = b.Bin("Mul", nn, b.ScalarI64(ep::kSweeps), DType::kI64);
  Z<E> v0{ep::EyeLike(b, herm.re, eye), b.ZerosLike(herm.re, d)};
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(trip, {herm.re, herm.im, v0.re, v0.im}, {d, d, d, d},
             [&](V<E> it, const std::vector<V<E>>& carried)
                 -> absl::StatusOr<std::vector<V<E>>> {
               Z<E> m{carried[0], carried[1]};
               Z<E> v{carried[2], carried[3]};
               ep::Pair<E> pq = ep::PairOf(b, it, n, nn);
               Z<E> row_p = c.Take(m, pq.p, rank - 2);
               V<E> app =
                   b.Take(b.Take(m.re, pq.p, rank - 2, d), pq.p, rank - 2, d);
               V<E> aqq =
                   b.Take(b.Take(m.re, pq.q, rank - 2, d), pq.q, rank - 2, d);
               Z<E> apq = c.Take(row_p, pq.q, rank - 2);
               V<E> r = Abs(e, apq, d);
               // u = a_pq / |a_pq| (1 where a_pq == 0: no rotation then).
               V<E> r_zero = b.Bin("Equal", r, zero, kB);
               V<E> r_safe = b.Where(r_zero, one, r, d);
               Z<E> u{
                   b.Where(r_zero, one, b.Bin("Div", apq.re, r_safe, d), d),
                   b.Where(r_zero, zero, b.Bin("Div", apq.im, r_safe, d), d)};
               auto [rot_c, rot_s] =
                   ep::Rotation(b, app, aqq, r, pq.active, rank - 1);
               // [..., 1] coefficients: s u and s conj(u).
               Z<E> u1 = c.Unsqueeze(u, rank - 2);
               Z<E> su{b.Bin("Mul", rot_s, u1.re, d),
                       b.Bin("Mul", rot_s, u1.im, d)};
               Z<E> su_conj = c.Conj(su);
               auto neg = [&](Z<E> z) {
                 return Z<E>{e.Op("Neg", {z.re}, d), e.Op("Neg", {z.im}, d)};
               };
               m = linalg_complex::RotatePair(c, m, pq.p, pq.q, rot_c, neg(su),
                                              su_conj, rows, rank - 2);
               m = linalg_complex::RotatePair(c, m, pq.p, pq.q, rot_c,
                                              neg(su_conj), su, iota, rank - 1);
               v = linalg_complex::RotatePair(c, v, pq.p, pq.q, rot_c,
                                              neg(su_conj), su, iota, rank - 1);
               return std::vector<V<E>>{m.re, m.im, v.re, v.im};
             }));
  V<E> w =
      e.Op("ReduceSum", {b.Where(eye, out[0], zero, d), b.Axes({rank - 1})}, d,
           {OpAttr::Int("keepdims", 0)});
  // Ascending eigenvalues, V's columns permuted alike (both parts).
  std::vector<V<E>> top =
      e.OpMulti("TopK", {w, b.Unsqueeze(n, 0, DType::kI64)}, {d, DType::kI64},
                {OpAttr::Int("axis", rank - 2), OpAttr::Int("largest", 0),
                 OpAttr::Int("sorted", 1)});
  V<E> idx = e.Op("Expand",
                  {b.Unsqueeze(top[1], rank - 2, DType::kI64),
                   e.Op("Shape", {out[2]}, DType::kI64)},
                  DType::kI64);
  auto permute = [&](V<E> x) {
    return e.Op("GatherElements", {x, idx}, d, {OpAttr::Int("axis", rank - 1)});
  };
  J2O_RETURN_IF_ERROR(c.SetOut(0, {permute(out[2]), permute(out[3])}));
  return e.SetOut(1, top[0]);
}

}  // namespace jax2onnx::plugin::complex

#endif  // JAX2ONNX_PLUGIN_EIG_COMPLEX_PLAN_H_
