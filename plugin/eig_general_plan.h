// The lowering of eig (the nonsymmetric eigendecomposition, LAPACK geev on
// JAX's CPU backend), shared by both pipelines: the reference interpreter's
// algorithm (jaxpr/eval/eig_general.cc) on the real and imaginary parts
// (complex_plan.h's convention; a real operand gets imaginary part 0), in
// three ONNX Loops whose graph size does not depend on n:
//   1. Householder reduction to Hessenberg form, one column per step
//      (A <- P A P, Z <- Z P with P = I - 2 v vᴴ / vᴴv);
//   2. single-shift complex QR. Every batch member follows one schedule of
//      slots of 2n - 1 steps: step 0 decides (deflate T(hi, hi) when
//      |T(hi, hi-1)| <= max(tiny, eps (|T(hi-1, hi-1)| + |T(hi, hi)|)) in
//      cabs1, or start a sweep on rows 0..hi with the Wilkinson shift, or
//      zlahqr's exceptional shift every 10th stalled sweep), steps 1..n-1
//      apply the Givens rotations to rows k, k+1 of T - shift I (inactive
//      rotations past hi are the identity), steps n..2n-2 apply them to
//      columns of T and Z and add the shift back. The Loop stops once every
//      member has deflated to hi = 0, and runs at most (S + n) slots, S =
//      30 max(10, n) sweeps per member (zlahqr's ITMAX); a member that
//      would need more stops sweeping, is not converged, and returns NaN
//      + NaN i everywhere, as do members holding a NaN or an infinity (JAX
//      replaces the outputs of a member whose geev INFO != 0 by NaN);
//   3. eigenvectors of the triangular T, all at once, one row per step:
//      back-substitution (right) and forward substitution (left) with
//      ztrevc's small-pivot guard, then V = Z X, U = Z Y, each column
//      scaled to norm 1 with its largest-magnitude component (the first of
//      equals) real and positive.
// The eigenvalues are T's diagonal in the order the iteration leaves them;
// LAPACK's order, its phases and (for real operands, whose real
// eigenvalues may carry an imaginary part of rounding size here) its exact
// zeros can differ, so tests compare eigenvalues as a multiset and
// eigenvectors phase-free (docs/linalg.md). Included by
// complex_plan_recipes.h only.
#ifndef JAX2ONNX_PLUGIN_EIG_GENERAL_PLAN_H_
#define JAX2ONNX_PLUGIN_EIG_GENERAL_PLAN_H_

#include <cmath>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "plugin/complex_plan.h"
#include "plugin/linalg_complex_plan.h"
#include "plugin/linalg_plan.h"

namespace jax2onnx::plugin::complex {
namespace eig_general {

// Helpers over one part dtype and the operand's rank r: matrices are
// [..., n, n] (rank r), vectors [..., n] (rank r - 1), per-member scalars
// [...] (rank r - 2).
template <class E>
struct G {
  linalg_complex::CBuilder<E>& c;
  int r;
  V<E> n, iota, rows;  // rows: iota as [n, 1]

  E& e() { return c.e; }
  linalg_plan::Builder<E>& b() { return c.b; }
  DType d() const { return c.d; }
  V<E> I64(int64_t v) { return b().ScalarI64(v); }
  V<E> S(double v) { return b().Scalar(v); }
  V<E> Bin(const char* op, V<E> x, V<E> y) { return b().Bin(op, x, y, d()); }
  V<E> BinI(const char* op, V<E> x, V<E> y) {
    return b().Bin(op, x, y, DType::kI64);
  }
  V<E> Cmp(const char* op, V<E> x, V<E> y) {
    return b().Bin(op, x, y, DType::kBool);
  }
  V<E> And(V<E> x, V<E> y) { return e().Op("And", {x, y}, DType::kBool); }
  V<E> Or(V<E> x, V<E> y) { return e().Op("Or", {x, y}, DType::kBool); }
  V<E> Not(V<E> x) { return e().Op("Not", {x}, DType::kBool); }
  // [...] -> [..., 1, 1]; [...] -> [..., 1]; [..., n] -> [..., 1, n] or
  // [..., n, 1].
  V<E> ToMat(V<E> x, DType t) {
    return b().Unsqueeze(b().Unsqueeze(x, r - 2, t), r - 1, t);
  }
  V<E> ToVec(V<E> x, DType t) { return b().Unsqueeze(x, r - 2, t); }
  Z<E> ToMat(Z<E> z) { return {ToMat(z.re, d()), ToMat(z.im, d())}; }
  Z<E> ToVec(Z<E> z) { return {ToVec(z.re, d()), ToVec(z.im, d())}; }
  Z<E> ToRow(Z<E> z) { return c.Unsqueeze(z, r - 2); }
  Z<E> ToCol(Z<E> z) { return c.Unsqueeze(z, r - 1); }

  Z<E> Add(Z<E> x, Z<E> y) {
    return {Bin("Add", x.re, y.re), Bin("Add", x.im, y.im)};
  }
  Z<E> Neg(Z<E> x) {
    return {e().Op("Neg", {x.re}, d()), e().Op("Neg", {x.im}, d())};
  }
  Z<E> Mul(Z<E> x, Z<E> y) { return complex::Mul(e(), x, y, d()); }
  Z<E> Div(Z<E> x, Z<E> y) { return complex::Div(e(), x, y, d()); }
  Z<E> Scale(Z<E> x, V<E> s) {
    return {Bin("Mul", x.re, s), Bin("Mul", x.im, s)};
  }
  Z<E> Real(V<E> x) { return {x, b().ZerosLike(x, d())}; }
  V<E> Abs(Z<E> z) { return complex::Abs(e(), z, d()); }
  V<E> Abs1(Z<E> z) {
    return Bin("Add", e().Op("Abs", {z.re}, d()), e().Op("Abs", {z.im}, d()));
  }
  V<E> Norm2(Z<E> z) {
    return Bin("Add", Bin("Mul", z.re, z.re), Bin("Mul", z.im, z.im));
  }
  V<E> Sum(V<E> x, std::vector<int64_t> axes, bool keep = false) {
    return e().Op("ReduceSum", {x, b().Axes(std::move(axes))}, d(),
                  {OpAttr::Int("keepdims", keep ? 1 : 0)});
  }
  Z<E> Sum(Z<E> z, std::vector<int64_t> axes, bool keep = false) {
    return {Sum(z.re, axes, keep), Sum(z.im, axes, keep)};
  }
  // x where x != 0, else 1 (a safe divisor).
  V<E> NonZero(V<E> x) {
    return b().Where(Cmp("Equal", x, S(0)), S(1), x, d());
  }
  // T[i, j] for per-member int64 indices i, j [...] (0 when out of range).
  Z<E> At(Z<E> m, V<E> i, V<E> j) {
    V<E> mask = And(Cmp("Equal", rows, ToMat(i, DType::kI64)),
                    Cmp("Equal", iota, ToMat(j, DType::kI64)));
    return Sum(c.Where(mask, m, c.Zero()), {r - 2, r - 1});
  }
  // Principal square root: t = sqrt((|z| + |x|) / 2); x >= 0: (t, y / 2t),
  // else (|y| / 2t, copysign(t, y)); 0 at 0.
  Z<E> Sqrt(Z<E> z) {
    V<E> t = e().Op(
        "Sqrt",
        {Bin("Mul", Bin("Add", Abs(z), e().Op("Abs", {z.re}, d())), S(0.5))},
        d());
    V<E> two_t = NonZero(Bin("Mul", t, S(2)));
    V<E> y_neg =
        e().Op("Or",
               {Cmp("Less", z.im, S(0)),
                And(Cmp("Equal", z.im, S(0)),
                    e().Op("Less", {e().Op("Div", {S(1), z.im}, d()), S(0)},
                           DType::kBool))},
               DType::kBool);
    V<E> signed_t = b().Where(y_neg, e().Op("Neg", {t}, d()), t, d());
    V<E> x_pos = Cmp("GreaterOrEqual", z.re, S(0));
    Z<E> out{
        b().Where(x_pos, t, Bin("Div", e().Op("Abs", {z.im}, d()), two_t), d()),
        b().Where(x_pos, Bin("Div", z.im, two_t), signed_t, d())};
    return c.Where(Cmp("Equal", t, S(0)), c.Zero(), out);
  }
};

// Stages 1-2 of the file comment: the complex Schur form A = Z T Zᴴ of
// `a` (T upper triangular with exact zeros below the diagonal), shared by
// eig and schur.
// LAPACK's EPS (half the machine epsilon) and SFMIN of a part dtype.
inline double UnitRoundoff(DType d) {
  return d == DType::kF32 ? std::numeric_limits<float>::epsilon() / 2
                          : std::numeric_limits<double>::epsilon() / 2;
}
inline double Tiny(DType d) {
  return d == DType::kF32 ? std::numeric_limits<float>::min()
                          : std::numeric_limits<double>::min();
}
// The machine epsilon (LAPACK's dlamch('P'), the ulp dlahqr scales by).
inline double Ulp(DType d) {
  return d == DType::kF32 ? std::numeric_limits<float>::epsilon()
                          : std::numeric_limits<double>::epsilon();
}

template <class E>
struct SchurForm {
  Z<E> t, z;
  V<E> failed;  // [...]: a NaN or an infinity, or out of sweeps
  // What stage 3 reuses: the identity, its mask, n - 1 and the constant 0.
  Z<E> z0;
  V<E> eye, n1, zero;
};

// Stage 1 of the file comment: A = Q H Qᴴ with H upper Hessenberg (exact
// zeros below the subdiagonal; real when A is: every phase is then ±1).
// Members holding a NaN or an infinity (`broken`) are reduced as zeros.
template <class E>
struct HessenbergForm {
  Z<E> h, q;
  V<E> broken;  // [...]
  // What the later stages reuse: the identity, its mask and the constant 0.
  Z<E> z0;
  V<E> eye, zero;
};

template <class E>
absl::StatusOr<HessenbergForm<E>> ComplexHessenberg(E& e, G<E>& g,
                                                    const jaxpr::Aval& in,
                                                    Z<E> a) {
  namespace lc = linalg_complex;
  lc::CBuilder<E>& cb = g.c;
  linalg_plan::Builder<E>& b = cb.b;
  const DType d = g.d(), kB = DType::kBool;
  const int r = g.r;
  V<E> n = g.n, iota = g.iota;
  V<E> eye = g.Cmp("Equal", g.rows, iota);
  V<E> zero = g.S(0);
  // The carried shapes of the Loops: matrices, vectors and per-member
  // scalars of the operand's batch.
  const CarriedType mat(d, in.shape);
  // Members holding a NaN or an infinity: zeroed here, NaN at the end.
  auto bad = [&](V<E> x) {
    return e.Op("Or", {e.Op("IsNaN", {x}, kB), e.Op("IsInf", {x}, kB)}, kB);
  };
  V<E> bad_count =
      g.Sum(b.Cast(e.Op("Or", {bad(a.re), bad(a.im)}, kB), d), {r - 2, r - 1});
  V<E> broken = g.Cmp("Greater", bad_count, zero);  // [...]
  a = cb.Where(g.ToMat(broken, kB), cb.Zero(), a);
  Z<E> z0 = lc::BatchedEye(cb, a.re, iota, n, r);

  // 1. Hessenberg: column k's reflector, rows then columns, then the
  // column below the subdiagonal set to exact zeros.
  V<E> hess_trip = g.BinI("Max", g.BinI("Sub", n, g.I64(2)), g.I64(0));
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> hess,
      e.Loop(
          hess_trip, {a.re, a.im, z0.re, z0.im}, {mat, mat, mat, mat},
          [&](V<E> k,
              const std::vector<V<E>>& s) -> absl::StatusOr<std::vector<V<E>>> {
            Z<E> t{s[0], s[1]}, z{s[2], s[3]};
            V<E> k1 = g.BinI("Add", k, g.I64(1));
            Z<E> col = cb.Take(t, k, r - 1);  // [..., n]
            Z<E> x = cb.Where(g.Cmp("Greater", iota, k), col, cb.Zero());
            V<E> norm = e.Op("Sqrt", {g.Sum(g.Norm2(x), {r - 2})}, d);
            Z<E> x0 = cb.Take(col, k1, r - 2);
            V<E> ax0 = g.Abs(x0);
            V<E> x0_zero = g.Cmp("Equal", ax0, zero);
            Z<E> phase{
                b.Where(x0_zero, g.S(1), g.Bin("Div", x0.re, g.NonZero(ax0)),
                        d),
                b.Where(x0_zero, zero, g.Bin("Div", x0.im, g.NonZero(ax0)), d)};
            Z<E> lead = g.ToVec(g.Scale(phase, norm));
            Z<E> v =
                g.Add(x, cb.Where(g.Cmp("Equal", iota, k1), lead, cb.Zero()));
            V<E> vv = g.Sum(g.Norm2(v), {r - 2});
            V<E> beta = b.Where(g.Cmp("Equal", vv, zero), zero,
                                g.Bin("Div", g.S(2), g.NonZero(vv)), d);
            V<E> beta_m = g.ToMat(beta, d);
            Z<E> v_col = g.ToCol(v), vh_row = g.ToRow(cb.Conj(v));
            // A <- A - beta v (vᴴ A); A <- A - beta (A v) vᴴ; Z alike.
            t = cb.Sub(t,
                       g.Scale(cb.MatMul(v_col, cb.MatMul(vh_row, t)), beta_m));
            t = cb.Sub(t,
                       g.Scale(cb.MatMul(cb.MatMul(t, v_col), vh_row), beta_m));
            z = cb.Sub(z,
                       g.Scale(cb.MatMul(cb.MatMul(z, v_col), vh_row), beta_m));
            V<E> below = g.And(
                g.Cmp("GreaterOrEqual", g.rows, g.BinI("Add", k, g.I64(2))),
                g.Cmp("Equal", iota, k));
            t = cb.Where(below, cb.Zero(), t);
            return std::vector<V<E>>{t.re, t.im, z.re, z.im};
          }));
  return HessenbergForm<E>{
      {hess[0], hess[1]}, {hess[2], hess[3]}, broken, z0, eye, zero};
}

template <class E>
absl::StatusOr<SchurForm<E>> ComplexSchurForm(E& e, G<E>& g,
                                              const jaxpr::Aval& in, Z<E> a,
                                              double eps, double tiny) {
  J2O_ASSIGN_OR_RETURN(HessenbergForm<E> hf, ComplexHessenberg(e, g, in, a));
  namespace lc = linalg_complex;
  lc::CBuilder<E>& cb = g.c;
  linalg_plan::Builder<E>& b = cb.b;
  const DType d = g.d(), kB = DType::kBool, kI = DType::kI64;
  const int r = g.r;
  V<E> n = g.n, iota = g.iota;
  V<E> eye = hf.eye, zero = hf.zero, broken = hf.broken;
  Z<E> z0 = hf.z0, h = hf.h, zh = hf.q;
  // The carried shapes of the Loop: matrices, vectors and per-member
  // scalars of the operand's batch.
  const std::vector<jaxpr::DimExpr> vec_shape(in.shape.begin(),
                                              in.shape.end() - 1);
  const std::vector<jaxpr::DimExpr> batch_shape(in.shape.begin(),
                                                in.shape.end() - 2);
  const CarriedType mat(d, in.shape), vec_carry(d, vec_shape),
      member(d, batch_shape), member_i(kI, batch_shape);
  V<E> frobenius = e.Op("Sqrt", {g.Sum(g.Norm2(h), {r - 2, r - 1})}, d);

  // 2. Shifted QR in slots of 2n - 1 steps (file comment).
  V<E> n1 = g.BinI("Sub", n, g.I64(1));
  V<E> slot = g.BinI("Sub", g.BinI("Mul", n, g.I64(2)), g.I64(1));
  V<E> max_sweeps = g.BinI("Mul", g.I64(30), g.BinI("Max", n, g.I64(10)));
  V<E> qr_trip = g.BinI("Mul", g.BinI("Add", max_sweeps, n), slot);
  V<E> zeros_m = b.ZerosLike(frobenius, d);  // [...]
  V<E> zeros_i = b.Cast(zeros_m, kI);
  V<E> hi0 = b.Where(broken, zeros_i, g.BinI("Add", zeros_i, n1), kI);
  V<E> diag0 = g.Sum(b.Where(eye, h.re, zero, d), {r - 1});  // [..., n]
  V<E> zeros_v = b.ZerosLike(diag0, d);
  V<E> nm2 = g.BinI("Max", g.BinI("Sub", n, g.I64(2)), g.I64(0));
  auto clamp = [&](V<E> k) {
    return g.BinI("Min", g.BinI("Max", k, g.I64(0)), nm2);
  };
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> qr,
      e.Loop(
          qr_trip,
          {h.re, h.im, zh.re, zh.im, hi0, zeros_i, zeros_i, zeros_m, zeros_m,
           zeros_v, zeros_v, zeros_v, zeros_i},
          {mat, mat, mat, mat, member_i, member_i, member_i, member, member,
           vec_carry, vec_carry, vec_carry, member_i},
          [&](V<E> it,
              const std::vector<V<E>>& s) -> absl::StatusOr<std::vector<V<E>>> {
            Z<E> t{s[0], s[1]}, z{s[2], s[3]};
            V<E> hi = s[4], stalled = s[5], sweeps = s[6];
            Z<E> mu{s[7], s[8]};
            V<E> cs = s[9];
            Z<E> sn{s[10], s[11]};
            V<E> sweeping = g.Cmp("Greater", s[12], g.I64(0));
            V<E> phase = g.BinI("Mod", it, slot);
            V<E> is_decide = g.Cmp("Equal", phase, g.I64(0));
            V<E> is_row = g.Cmp("LessOrEqual", phase, n1);
            V<E> last_col =
                g.Cmp("Equal", phase, g.BinI("Sub", slot, g.I64(1)));
            V<E> hi_m = g.ToMat(hi, kI);
            V<E> diag_mask = g.And(eye, g.Cmp("LessOrEqual", g.rows, hi_m));

            // Decide: deflate, or start a sweep with its shift.
            V<E> hi_1 = g.BinI("Sub", hi, g.I64(1));
            Z<E> sub = g.At(t, hi, hi_1), dlo = g.At(t, hi_1, hi_1);
            Z<E> dhi = g.At(t, hi, hi), up = g.At(t, hi_1, hi);
            V<E> active = g.Cmp("Greater", hi, g.I64(0));
            V<E> scale = g.Bin("Add", g.Abs1(dlo), g.Abs1(dhi));
            scale = b.Where(g.Cmp("Equal", scale, zero), frobenius, scale, d);
            V<E> negligible =
                g.Cmp("LessOrEqual", g.Abs1(sub),
                      g.Bin("Max", g.S(tiny), g.Bin("Mul", g.S(eps), scale)));
            V<E> deflate = g.And(active, negligible);
            V<E> start = g.And(g.And(active, g.Not(negligible)),
                               g.Cmp("Less", sweeps, max_sweeps));
            V<E> stalled_next = g.BinI("Add", stalled, g.I64(1));
            V<E> exceptional = g.Cmp(
                "Equal", g.BinI("Mod", stalled_next, g.I64(10)), g.I64(0));
            // Wilkinson: d - bc / (h ± sqrt(h² + bc)), h = (a - d) / 2.
            Z<E> half = g.Scale(cb.Sub(dlo, dhi), g.S(0.5));
            Z<E> bc = g.Mul(up, sub);
            Z<E> root = g.Sqrt(g.Add(g.Mul(half, half), bc));
            V<E> plus =
                g.Cmp("GreaterOrEqual", g.Mul(cb.Conj(half), root).re, zero);
            Z<E> den = cb.Where(plus, g.Add(half, root), cb.Sub(half, root));
            V<E> den_zero = g.Cmp("Equal", g.Abs(den), zero);
            Z<E> wilkinson = cb.Where(
                den_zero, dhi,
                cb.Sub(dhi,
                       g.Div(bc, cb.Where(den_zero, g.Real(g.S(1)), den))));
            Z<E> exc{g.Bin("Add", dhi.re,
                           g.Bin("Mul", g.S(0.75), e.Op("Abs", {sub.re}, d))),
                     dhi.im};
            Z<E> mu_dec = cb.Where(start, cb.Where(exceptional, exc, wilkinson),
                                   {zeros_m, zeros_m});
            V<E> at_sub = g.And(g.ToMat(deflate, kB),
                                g.And(g.Cmp("Equal", g.rows, hi_m),
                                      g.Cmp("Equal", iota, g.ToMat(hi_1, kI))));
            Z<E> t_dec = cb.Where(at_sub, cb.Zero(), t);
            t_dec =
                cb.Sub(t_dec, cb.Where(diag_mask, g.ToMat(mu_dec), cb.Zero()));
            V<E> hi_dec = g.BinI("Sub", hi, b.Cast(deflate, kI));
            V<E> stalled_dec =
                b.Where(deflate, zeros_i,
                        b.Where(start, stalled_next, stalled, kI), kI);
            V<E> sweeps_dec = g.BinI("Add", sweeps, b.Cast(start, kI));

            // Row step k: the rotation of (T[k, k], T[k+1, k]) on rows k,
            // k+1; the identity past hi and for members not sweeping.
            V<E> kr = clamp(g.BinI("Sub", phase, g.I64(1)));
            V<E> kr1 = g.BinI("Min", g.BinI("Add", kr, g.I64(1)), n1);
            Z<E> row_k = cb.Take(t, kr, r - 2), row_k1 = cb.Take(t, kr1, r - 2);
            Z<E> ra = cb.Take(row_k, kr, r - 2),
                 rb = cb.Take(row_k1, kr, r - 2);
            V<E> act = g.And(sweeping, g.Cmp("Less", kr, hi));
            V<E> abs_a = g.Abs(ra), abs_b = g.Abs(rb);
            V<E> rr = e.Op("Sqrt",
                           {g.Bin("Add", g.Bin("Mul", abs_a, abs_a),
                                  g.Bin("Mul", abs_b, abs_b))},
                           d);
            V<E> a_zero = g.Cmp("Equal", abs_a, zero);
            V<E> r_zero = g.Cmp("Equal", rr, zero);
            V<E> c_rot = g.Bin("Div", abs_a, g.NonZero(rr));
            Z<E> unit_a{g.Bin("Div", ra.re, g.NonZero(abs_a)),
                        g.Bin("Div", ra.im, g.NonZero(abs_a))};
            Z<E> s_rot = g.Scale(g.Mul(unit_a, cb.Conj(rb)),
                                 g.Bin("Div", g.S(1), g.NonZero(rr)));
            // r == 0 or inactive: (1, 0); a == 0: (0, 1).
            V<E> identity = g.Not(g.And(act, g.Not(r_zero)));
            c_rot =
                b.Where(identity, g.S(1), b.Where(a_zero, zero, c_rot, d), d);
            s_rot = cb.Where(identity, cb.Zero(),
                             cb.Where(a_zero, g.Real(g.S(1)), s_rot));
            Z<E> c_v = g.ToVec(g.Real(c_rot)), s_v = g.ToVec(s_rot);
            Z<E> new_k = g.Add(g.Mul(c_v, row_k), g.Mul(s_v, row_k1));
            Z<E> new_k1 =
                g.Add(g.Mul(g.Neg(cb.Conj(s_v)), row_k), g.Mul(c_v, row_k1));
            new_k1 = cb.Where(g.And(g.ToVec(act, kB), g.Cmp("Equal", iota, kr)),
                              cb.Zero(), new_k1);
            Z<E> t_row = cb.Where(
                g.Cmp("Equal", g.rows, kr), g.ToRow(new_k),
                cb.Where(g.Cmp("Equal", g.rows, kr1), g.ToRow(new_k1), t));
            V<E> at_kr = g.Cmp("Equal", iota, kr);
            V<E> cs_row = b.Where(at_kr, g.ToVec(c_rot, d), cs, d);
            Z<E> sn_row = cb.Where(at_kr, s_v, sn);

            // Column step k: the stored rotation on columns k, k+1 of T
            // and Z; the last one adds the shift back.
            V<E> kc = clamp(g.BinI("Sub", phase, n));
            V<E> kc1 = g.BinI("Min", g.BinI("Add", kc, g.I64(1)), n1);
            Z<E> cc = g.ToVec(g.Real(b.Take(cs, kc, r - 2, d)));
            Z<E> ss = g.ToVec(cb.Take(sn, kc, r - 2));
            auto rotate_cols = [&](Z<E> m) {
              Z<E> col_k = cb.Take(m, kc, r - 1),
                   col_k1 = cb.Take(m, kc1, r - 1);
              Z<E> nk = g.Add(g.Mul(col_k, cc), g.Mul(col_k1, cb.Conj(ss)));
              Z<E> nk1 = g.Add(g.Mul(g.Neg(col_k), ss), g.Mul(col_k1, cc));
              return cb.Where(
                  g.Cmp("Equal", iota, kc), g.ToCol(nk),
                  cb.Where(g.Cmp("Equal", iota, kc1), g.ToCol(nk1), m));
            };
            Z<E> t_col = rotate_cols(t);
            Z<E> z_col = rotate_cols(z);
            t_col = g.Add(t_col, cb.Where(g.And(diag_mask, last_col),
                                          g.ToMat(mu), cb.Zero()));
            V<E> sweeping_i = s[12];
            V<E> sweeping_col = b.Where(last_col, zeros_i, sweeping_i, kI);

            Z<E> t_next =
                cb.Where(is_decide, t_dec, cb.Where(is_row, t_row, t_col));
            Z<E> z_next = cb.Where(g.Or(is_decide, is_row), z, z_col);
            V<E> hi_next = b.Where(is_decide, hi_dec, hi, kI);
            V<E> keep =
                g.Cmp("Greater",
                      e.Op("ReduceSum",
                           {b.Cast(g.Cmp("Greater", hi_next, g.I64(0)), d)}, d,
                           {OpAttr::Int("keepdims", 0)}),
                      zero);
            Z<E> mu_next = cb.Where(is_decide, mu_dec, mu);
            return std::vector<V<E>>{
                keep,
                t_next.re,
                t_next.im,
                z_next.re,
                z_next.im,
                hi_next,
                b.Where(is_decide, stalled_dec, stalled, kI),
                b.Where(is_decide, sweeps_dec, sweeps, kI),
                mu_next.re,
                mu_next.im,
                b.Where(is_row, cs_row, cs, d),
                cb.Where(is_row, sn_row, sn).re,
                cb.Where(is_row, sn_row, sn).im,
                b.Where(is_decide, b.Cast(start, kI),
                        b.Where(is_row, sweeping_i, sweeping_col, kI), kI)};
          },
          /*early_exit=*/true));
  V<E> failed = g.Or(broken, g.Cmp("Greater", qr[4], g.I64(0)));  // [...]
  return SchurForm<E>{
      {qr[0], qr[1]}, {qr[2], qr[3]}, failed, z0, eye, n1, zero};
}

}  // namespace eig_general

// eig(a) -> (w[, vl][, vr]): see the file comment.
template <class E>
absl::Status LowerComplexEig(E& e) {
  namespace lc = linalg_complex;
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_ASSIGN_OR_RETURN(bool want_left,
                       eqn.params.GetBool("compute_left_eigenvectors"));
  J2O_ASSIGN_OR_RETURN(bool want_right,
                       eqn.params.GetBool("compute_right_eigenvectors"));
  if (eqn.inputs.size() != 1 ||
      eqn.outputs.size() != static_cast<size_t>(1 + want_left + want_right)) {
    return absl::InvalidArgumentError(
        "eig takes 1 operand and returns w plus the requested vectors");
  }
  const jaxpr::Aval in = OperandAval(eqn, 0);
  const int r = in.rank();
  if (r < 2) return absl::InvalidArgumentError("eig: rank must be >= 2");
  if (in.dtype != DType::kF32 && in.dtype != DType::kF64 &&
      !jaxpr::IsComplex(in.dtype)) {
    return absl::UnimplementedError(absl::StrCat(
        "eig on ", jaxpr::ShortName(in.dtype),
        ": only f32, f64, c64 and c128 are lowered (JAX's LAPACK geev "
        "kernels take those)"));
  }
  const DType d = ComplexPartDType(eqn.outputs[0]->aval.dtype);
  const DType kB = DType::kBool, kI = DType::kI64;
  lc::CBuilder<E> cb{e, d};
  linalg_plan::Builder<E>& b = cb.b;
  J2O_ASSIGN_OR_RETURN(V<E> n, b.Size(in.shape[r - 1]));
  V<E> iota = b.Iota(n);
  eig_general::G<E> g{cb, r, n, iota, b.Unsqueeze(iota, 1, kI)};
  const double eps = eig_general::UnitRoundoff(d), tiny = eig_general::Tiny(d);
  Z<E> a;
  if (jaxpr::IsComplex(in.dtype)) {
    J2O_ASSIGN_OR_RETURN(a, cb.Operand(0));
  } else {
    J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
    if (in.dtype != d) x = b.Cast(x, d);
    a = g.Real(x);
  }
  J2O_ASSIGN_OR_RETURN(eig_general::SchurForm<E> schur,
                       eig_general::ComplexSchurForm(e, g, in, a, eps, tiny));
  Z<E> t = schur.t, z = schur.z, z0 = schur.z0;
  V<E> failed = schur.failed, eye = schur.eye, n1 = schur.n1, zero = schur.zero;
  const CarriedType mat(d, in.shape);

  // 3. Eigenvectors of T: X (right) by back-substitution, row n-1-j at step
  // j; Y (left, of Tᴴ with conj(λ)) by forward substitution, row j.
  Z<E> lambda = g.Sum(cb.Where(eye, t, cb.Zero()), {r - 1});  // [..., n]
  V<E> smin = g.Bin("Max", g.Bin("Mul", g.S(eps), g.Abs1(lambda)), g.S(tiny));
  auto pivot = [&](Z<E> tjj) {  // T[j, j] - λ_k, [..., n]
    Z<E> p = cb.Sub(g.ToVec(tjj), lambda);
    return cb.Where(g.Cmp("Less", g.Abs1(p), smin), g.Real(smin), p);
  };
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> vec,
      e.Loop(
          n, {z0.re, z0.im, z0.re, z0.im}, {mat, mat, mat, mat},
          [&](V<E> it,
              const std::vector<V<E>>& s) -> absl::StatusOr<std::vector<V<E>>> {
            Z<E> x{s[0], s[1]}, y{s[2], s[3]};
            // Right: j = n - 1 - it; x_j = -Σ_{l>j} T[j, l] x_l / piv.
            V<E> j = g.BinI("Sub", n1, it);
            Z<E> row = cb.Take(t, j, r - 2);  // T[j, :]
            Z<E> tjj = cb.Take(row, j, r - 2);
            Z<E> row_after =
                cb.Where(g.Cmp("Greater", iota, j), row, cb.Zero());
            Z<E> sum_r = cb.Squeeze(cb.MatMul(g.ToRow(row_after), x), r - 2);
            Z<E> xj = g.Div(g.Neg(sum_r), pivot(tjj));
            x = cb.Where(
                g.And(g.Cmp("Equal", g.rows, j), g.Cmp("Greater", iota, j)),
                g.ToRow(xj), x);
            // Left: j = it; y_j = -Σ_{l<j} conj(T[l, j]) y_l / conj(piv).
            V<E> jl = it;
            Z<E> col = cb.Take(t, jl, r - 1);  // T[:, j]
            Z<E> tll = cb.Take(col, jl, r - 2);
            Z<E> col_before =
                cb.Where(g.Cmp("Less", iota, jl), cb.Conj(col), cb.Zero());
            Z<E> sum_l = cb.Squeeze(cb.MatMul(g.ToRow(col_before), y), r - 2);
            Z<E> yj = g.Div(g.Neg(sum_l), cb.Conj(pivot(tll)));
            y = cb.Where(
                g.And(g.Cmp("Equal", g.rows, jl), g.Cmp("Less", iota, jl)),
                g.ToRow(yj), y);
            return std::vector<V<E>>{x.re, x.im, y.re, y.im};
          }));
  // Columns to norm 1, the first largest-magnitude component real > 0.
  auto normalize = [&](Z<E> v) {
    V<E> mag2 = g.Norm2(v);
    V<E> norm = e.Op("Sqrt", {g.Sum(mag2, {r - 2}, true)}, d);  // [..., 1, n]
    V<E> at = e.Op("ArgMax", {mag2}, kI,
                   {OpAttr::Int("axis", r - 2), OpAttr::Int("keepdims", 1),
                    OpAttr::Int("select_last_index", 0)});
    V<E> pick = g.Cmp("Equal", g.rows, at);  // [..., n, n]
    Z<E> v_at = g.Sum(cb.Where(pick, v, cb.Zero()), {r - 2}, true);
    V<E> mag = g.Abs(v_at);
    V<E> mag_nz = g.NonZero(mag);
    Z<E> unit{b.Where(g.Cmp("Equal", mag, zero), g.S(1),
                      g.Bin("Div", v_at.re, mag_nz), d),
              b.Where(g.Cmp("Equal", mag, zero), zero,
                      e.Op("Neg", {g.Bin("Div", v_at.im, mag_nz)}, d), d)};
    V<E> inv = g.NonZero(norm);
    Z<E> scaled = g.Mul(v, unit);
    scaled = {g.Bin("Div", scaled.re, inv), g.Bin("Div", scaled.im, inv)};
    return cb.Where(pick, g.Real(g.Bin("Div", mag, inv)), scaled);
  };
  V<E> nan = g.S(std::numeric_limits<double>::quiet_NaN());
  Z<E> nan_z{nan, nan};
  J2O_RETURN_IF_ERROR(
      cb.SetOut(0, cb.Where(g.ToVec(failed, kB), nan_z, lambda)));
  int out = 1;
  if (want_left) {
    Z<E> u = normalize(cb.MatMul(z, Z<E>{vec[2], vec[3]}));
    J2O_RETURN_IF_ERROR(
        cb.SetOut(out++, cb.Where(g.ToMat(failed, kB), nan_z, u)));
  }
  if (want_right) {
    Z<E> v = normalize(cb.MatMul(z, Z<E>{vec[0], vec[1]}));
    J2O_RETURN_IF_ERROR(
        cb.SetOut(out++, cb.Where(g.ToMat(failed, kB), nan_z, v)));
  }
  return absl::OkStatus();
}

template <class E>
absl::Status LowerRealSchur(E& e, bool want_vectors);  // real_schur_plan.h

// schur(a) -> (T[, Z]) (LAPACK ?gees, no sorting): for complex a stages 1-2
// of the file comment, A = Z T Zᴴ, NaN where eig gives NaN; real a gets
// dgees's quasi-triangular real Schur form (real_schur_plan.h).
template <class E>
absl::Status LowerComplexSchur(E& e) {
  namespace lc = linalg_complex;
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_ASSIGN_OR_RETURN(bool want_vectors,
                       eqn.params.GetBool("compute_schur_vectors"));
  J2O_ASSIGN_OR_RETURN(bool sort, eqn.params.GetBool("sort_eig_vals"));
  if (sort) {
    return absl::UnimplementedError(
        "schur with sort_eig_vals=True (JAX itself does not implement "
        "gees's sorting)");
  }
  if (eqn.inputs.size() != 1 ||
      eqn.outputs.size() != static_cast<size_t>(1 + want_vectors)) {
    return absl::InvalidArgumentError(
        "schur takes 1 operand and returns T plus the requested vectors");
  }
  const jaxpr::Aval in = OperandAval(eqn, 0);
  const int r = in.rank();
  if (r < 2) return absl::InvalidArgumentError("schur: rank must be >= 2");
  if (in.dtype != DType::kF32 && in.dtype != DType::kF64 &&
      !jaxpr::IsComplex(in.dtype)) {
    return absl::UnimplementedError(absl::StrCat(
        "schur on ", jaxpr::ShortName(in.dtype),
        ": only f32, f64, c64 and c128 are lowered (JAX's LAPACK gees "
        "kernels take those)"));
  }
  if (!jaxpr::IsComplex(in.dtype)) return LowerRealSchur(e, want_vectors);
  const DType d = ComplexPartDType(in.dtype);
  lc::CBuilder<E> cb{e, d};
  linalg_plan::Builder<E>& b = cb.b;
  J2O_ASSIGN_OR_RETURN(V<E> n, b.Size(in.shape[r - 1]));
  V<E> iota = b.Iota(n);
  eig_general::G<E> g{cb, r, n, iota, b.Unsqueeze(iota, 1, DType::kI64)};
  J2O_ASSIGN_OR_RETURN(Z<E> a, cb.Operand(0));
  J2O_ASSIGN_OR_RETURN(
      eig_general::SchurForm<E> schur,
      eig_general::ComplexSchurForm(e, g, in, a, eig_general::UnitRoundoff(d),
                                    eig_general::Tiny(d)));
  V<E> nan = g.S(std::numeric_limits<double>::quiet_NaN());
  V<E> failed = g.ToMat(schur.failed, DType::kBool);
  J2O_RETURN_IF_ERROR(cb.SetOut(0, cb.Where(failed, Z<E>{nan, nan}, schur.t)));
  if (want_vectors) {
    J2O_RETURN_IF_ERROR(
        cb.SetOut(1, cb.Where(failed, Z<E>{nan, nan}, schur.z)));
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx::plugin::complex

#endif  // JAX2ONNX_PLUGIN_EIG_GENERAL_PLAN_H_
