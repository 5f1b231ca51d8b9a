// The lowering of schur for real operands (LAPACK dgees on JAX's CPU
// backend), shared by both pipelines: the reference interpreter's steps
// (jaxpr/eval/real_schur.cc, LAPACK dlahqr and dlanv2 transcribed) in two
// ONNX Loops whose graph size does not depend on n:
//   1. eig's Householder reduction to Hessenberg form on the operand with a
//      zero imaginary part (eig_general_plan.h; every phase is ±1, so the
//      result is real);
//   2. dlahqr's double-shift QR, every batch member its own state machine
//      run in lockstep, one step per Loop iteration: a *decide* step (the
//      Ahues & Tisseur deflation search over the active block l..i; a 1 x 1
//      block deflates, a 2 x 2 block is put in dlanv2's standard form by a
//      rotation of its rows, columns and Z; otherwise the Francis double
//      shift, or the exceptional shift every 10th iteration without
//      deflation, and the search for two small consecutive subdiagonals
//      that picks the sweep's first row m), or one *bulge-chasing* step k of
//      the sweep m..i-1 (dlarfg's reflector of order min(3, i - k + 1)
//      applied to rows k.. in columns k..n-1, to columns k.. in rows
//      0..min(k + 3, i), and to Z's columns). A member stops when every
//      eigenvalue has deflated; one that needs more than 30 max(10, n) + 1
//      sweeps for an eigenvalue fails (dlahqr's INFO > 0) and, like a
//      member holding a NaN or an infinity, is NaN in T and Z (JAX's result
//      when gees reports failure).
// T is quasi-triangular (zero below the subdiagonal, a nonzero subdiagonal
// entry opening a 2 x 2 block with equal diagonal entries and b c < 0 for a
// complex pair) and A = Z T Zᵀ. The steps are LAPACK's, so T and Z equal
// dgees' up to rounding where the Schur form is well conditioned; the
// float32 lowering can still deflate in another order than the interpreter
// (which computes in float64), so tests compare T's eigenvalues as a
// multiset and the Schur vectors phase-free (docs/linalg.md). Included by
// complex_plan_recipes.h only.
#ifndef JAX2ONNX_PLUGIN_REAL_SCHUR_PLAN_H_
#define JAX2ONNX_PLUGIN_REAL_SCHUR_PLAN_H_

#include <cmath>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jaxpr/status_macros.h"
#include "plugin/eig_general_plan.h"

namespace jax2onnx::plugin::complex {
namespace real_schur {

// Real helpers over eig_general::G: matrices [..., n, n], vectors [..., n],
// per-member scalars [...].
template <class E>
struct RS {
  eig_general::G<E>& g;
  V<E> sub_mask, super_mask;  // [n, n]: (k, k-1) and (k-1, k)

  E& e() { return g.e(); }
  linalg_plan::Builder<E>& b() { return g.b(); }
  DType d() const { return g.d(); }
  int r() const { return g.r; }
  V<E> S(double v) { return g.S(v); }
  V<E> I(int64_t v) { return g.I64(v); }
  V<E> Add(V<E> x, V<E> y) { return g.Bin("Add", x, y); }
  V<E> Sub(V<E> x, V<E> y) { return g.Bin("Sub", x, y); }
  V<E> Mul(V<E> x, V<E> y) { return g.Bin("Mul", x, y); }
  V<E> Div(V<E> x, V<E> y) { return g.Bin("Div", x, y); }
  V<E> Max(V<E> x, V<E> y) { return g.Bin("Max", x, y); }
  V<E> Min(V<E> x, V<E> y) { return g.Bin("Min", x, y); }
  V<E> Abs(V<E> x) { return e().Op("Abs", {x}, d()); }
  V<E> Neg(V<E> x) { return e().Op("Neg", {x}, d()); }
  V<E> Sqrt(V<E> x) { return e().Op("Sqrt", {x}, d()); }
  V<E> Hypot(V<E> x, V<E> y) { return Sqrt(Add(Mul(x, x), Mul(y, y))); }
  V<E> AddI(V<E> x, int64_t c) { return g.BinI("Add", x, I(c)); }
  V<E> Where(V<E> c, V<E> x, V<E> y) { return b().Where(c, x, y, d()); }
  V<E> WhereI(V<E> c, V<E> x, V<E> y) {
    return b().Where(c, x, y, DType::kI64);
  }
  V<E> WhereB(V<E> c, V<E> x, V<E> y) {
    return b().Where(c, x, y, DType::kBool);
  }
  V<E> Cmp(const char* op, V<E> x, V<E> y) { return g.Cmp(op, x, y); }
  // Fortran's SIGN(1, x) < 0: x negative, or a negative zero.
  V<E> Negative(V<E> x) {
    return g.Or(Cmp("Less", x, S(0)),
                g.And(Cmp("Equal", x, S(0)), Cmp("Less", Div(S(1), x), S(0))));
  }
  // SIGN(a, s): |a| with s's sign.
  V<E> Sign(V<E> a, V<E> s) {
    V<E> m = Abs(a);
    return Where(Negative(s), Neg(m), m);
  }
  V<E> Vec(V<E> x, DType t) { return g.ToVec(x, t); }  // [...] -> [..., 1]
  V<E> Mat(V<E> x, DType t) { return g.ToMat(x, t); }  // [...] -> [..., 1, 1]
  V<E> Row(V<E> v) { return b().Unsqueeze(v, r() - 2, d()); }  // [..., 1, n]
  V<E> Col(V<E> v) { return b().Unsqueeze(v, r() - 1, d()); }  // [..., n, 1]
  V<E> RowB(V<E> v) { return b().Unsqueeze(v, r() - 2, DType::kBool); }
  V<E> ColB(V<E> v) { return b().Unsqueeze(v, r() - 1, DType::kBool); }
  // vec[idx] per member (0 when idx is out of range).
  V<E> Pick(V<E> vec, V<E> idx) {
    return g.Sum(Where(Cmp("Equal", g.iota, Vec(idx, DType::kI64)), vec, S(0)),
                 {r() - 2});
  }
  // out[k] = vec[k + delta], 0 out of range.
  V<E> Shift(V<E> vec, int64_t delta) {
    V<E> at = AddI(g.iota, delta);
    V<E> n1 = g.BinI("Sub", g.n, I(1));
    V<E> clamped = g.BinI("Min", g.BinI("Max", at, I(0)), n1);
    V<E> valid =
        g.And(Cmp("GreaterOrEqual", at, I(0)), Cmp("LessOrEqual", at, n1));
    return Where(
        valid,
        e().Op("Gather", {vec, clamped}, d(), {OpAttr::Int("axis", r() - 2)}),
        S(0));
  }
  // Row p / column q of m per member, as [..., n].
  V<E> RowOf(V<E> m, V<E> p) {
    return g.Sum(Where(Cmp("Equal", g.rows, Mat(p, DType::kI64)), m, S(0)),
                 {r() - 2});
  }
  V<E> ColOf(V<E> m, V<E> q) {
    return g.Sum(Where(Cmp("Equal", g.iota, Mat(q, DType::kI64)), m, S(0)),
                 {r() - 1});
  }
  // The entry mask (p, q) per member, [..., n, n].
  V<E> At(V<E> p, V<E> q) {
    return g.And(Cmp("Equal", g.rows, Mat(p, DType::kI64)),
                 Cmp("Equal", g.iota, Mat(q, DType::kI64)));
  }
  // The largest entry of an int64 vector [..., n], as [...] (ReduceMax
  // takes its axes as an input only from opset 18).
  V<E> MaxOf(V<E> v) {
    const int64_t axis = r() - 2;
    if (e().opset() >= 18) {
      return e().Op("ReduceMax", {v, b().Axes({axis})}, DType::kI64,
                    {OpAttr::Int("keepdims", 0)});
    }
    return e().Op("ReduceMax", {v}, DType::kI64,
                  {OpAttr::Ints("axes", {axis}), OpAttr::Int("keepdims", 0)});
  }
  V<E> Diagonal(V<E> m) {
    return g.Sum(Where(Cmp("Equal", g.rows, g.iota), m, S(0)), {r() - 1});
  }
  V<E> Subdiagonal(V<E> m) {  // [k] = m[k, k-1]
    return g.Sum(Where(sub_mask, m, S(0)), {r() - 1});
  }
  V<E> Superdiagonal(V<E> m) {  // [k] = m[k-1, k]
    return g.Sum(Where(super_mask, m, S(0)), {r() - 2});
  }
};

// dlanv2 on per-member scalars (real_schur.cc's Lanv2).
template <class E>
struct Standard {
  V<E> a, b, c, d, cs, sn;
};

template <class E>
Standard<E> Lanv2(RS<E>& x, V<E> a, V<E> b, V<E> c, V<E> d, double ulp) {
  V<E> zero = x.S(0), one = x.S(1);
  V<E> c_zero = x.Cmp("Equal", c, zero), b_zero = x.Cmp("Equal", b, zero);
  V<E> equal_opposite =
      x.g.And(x.Cmp("Equal", x.Sub(a, d), zero),
              x.g.Not(x.Cmp("Equal", x.Negative(b), x.Negative(c))));
  // The general case.
  V<E> temp = x.Sub(a, d);
  V<E> p = x.Mul(x.S(0.5), temp);
  V<E> bcmax = x.Max(x.Abs(b), x.Abs(c));
  V<E> bcmis =
      x.Mul(x.Mul(x.Min(x.Abs(b), x.Abs(c)), x.Sign(one, b)), x.Sign(one, c));
  V<E> scale = x.g.NonZero(x.Max(x.Abs(p), bcmax));
  V<E> z = x.Add(x.Mul(x.Div(p, scale), p), x.Mul(x.Div(bcmax, scale), bcmis));
  V<E> real = x.Cmp("GreaterOrEqual", z, x.S(4 * ulp));
  // Real eigenvalues.
  V<E> zr = x.Add(p, x.Sign(x.Mul(x.Sqrt(scale), x.Sqrt(x.Max(z, zero))), p));
  V<E> zr_nz = x.g.NonZero(zr);
  V<E> ar = x.Add(d, zr);
  V<E> dr = x.Sub(d, x.Mul(x.Div(bcmax, zr_nz), bcmis));
  V<E> tau_r = x.g.NonZero(x.Hypot(c, zr));
  V<E> cs_r = x.Div(zr, tau_r), sn_r = x.Div(c, tau_r);
  V<E> br = x.Sub(b, c);
  // Complex or (almost) equal eigenvalues: equal diagonal.
  V<E> sigma = x.Add(b, c);
  V<E> tau_c = x.g.NonZero(x.Hypot(sigma, temp));
  V<E> cs_c = x.Sqrt(x.Mul(x.S(0.5), x.Add(one, x.Div(x.Abs(sigma), tau_c))));
  V<E> sn_c = x.Mul(x.Neg(x.Div(p, x.g.NonZero(x.Mul(tau_c, cs_c)))),
                    x.Sign(one, sigma));
  V<E> aa = x.Add(x.Mul(a, cs_c), x.Mul(b, sn_c));
  V<E> bb = x.Add(x.Mul(x.Neg(a), sn_c), x.Mul(b, cs_c));
  V<E> cc = x.Add(x.Mul(c, cs_c), x.Mul(d, sn_c));
  V<E> dd = x.Add(x.Mul(x.Neg(c), sn_c), x.Mul(d, cs_c));
  V<E> a2 = x.Add(x.Mul(aa, cs_c), x.Mul(cc, sn_c));
  V<E> b2 = x.Add(x.Mul(bb, cs_c), x.Mul(dd, sn_c));
  V<E> c2 = x.Add(x.Mul(x.Neg(aa), sn_c), x.Mul(cc, cs_c));
  V<E> d2 = x.Add(x.Mul(x.Neg(bb), sn_c), x.Mul(dd, cs_c));
  V<E> t2 = x.Mul(x.S(0.5), x.Add(a2, d2));
  V<E> c2_nz = x.g.Not(x.Cmp("Equal", c2, zero));
  V<E> b2_nz = x.g.Not(x.Cmp("Equal", b2, zero));
  V<E> same_sign = x.Cmp("Equal", x.Negative(b2), x.Negative(c2));
  V<E> split = x.g.And(c2_nz, x.g.And(b2_nz, same_sign));  // real after all
  V<E> flip = x.g.And(c2_nz, x.g.Not(b2_nz));              // b2 = 0
  V<E> sab = x.Sqrt(x.Abs(b2)), sac = x.Sqrt(x.Abs(c2));
  V<E> ps = x.Sign(x.Mul(sab, sac), c2);
  V<E> tau_s = x.Div(one, x.g.NonZero(x.Sqrt(x.Abs(x.Add(b2, c2)))));
  V<E> cs1 = x.Mul(sab, tau_s), sn1 = x.Mul(sac, tau_s);
  Standard<E> cx{x.Where(split, x.Add(t2, ps), t2),
                 x.Where(split, x.Sub(b2, c2), x.Where(flip, x.Neg(c2), b2)),
                 x.Where(x.g.Or(split, flip), zero, c2),
                 x.Where(split, x.Sub(t2, ps), t2),
                 x.Where(split, x.Sub(x.Mul(cs_c, cs1), x.Mul(sn_c, sn1)),
                         x.Where(flip, x.Neg(sn_c), cs_c)),
                 x.Where(split, x.Add(x.Mul(cs_c, sn1), x.Mul(sn_c, cs1)),
                         x.Where(flip, cs_c, sn_c))};
  Standard<E> general{x.Where(real, ar, cx.a),    x.Where(real, br, cx.b),
                      x.Where(real, zero, cx.c),  x.Where(real, dr, cx.d),
                      x.Where(real, cs_r, cx.cs), x.Where(real, sn_r, cx.sn)};
  // c = 0 or (a = d and b, c of opposite signs): unchanged; b = 0: swap.
  V<E> keep = x.g.Or(c_zero, equal_opposite);
  V<E> swap = x.g.And(x.g.Not(c_zero), b_zero);
  auto pick = [&](V<E> unchanged, V<E> swapped, V<E> other) {
    return x.Where(keep, unchanged, x.Where(swap, swapped, other));
  };
  return {pick(a, d, general.a),       pick(b, x.Neg(c), general.b),
          pick(c, zero, general.c),    pick(d, a, general.d),
          pick(one, zero, general.cs), pick(zero, one, general.sn)};
}

}  // namespace real_schur

// schur(a) -> (T[, Z]) for real a: see the file comment.
template <class E>
absl::Status LowerRealSchur(E& e, bool want_vectors) {
  namespace lc = linalg_complex;
  namespace rs = real_schur;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::Aval in = OperandAval(eqn, 0);
  const int r = in.rank();
  const DType d = in.dtype, kB = DType::kBool, kI = DType::kI64;
  lc::CBuilder<E> cb{e, d};
  linalg_plan::Builder<E>& b = cb.b;
  J2O_ASSIGN_OR_RETURN(V<E> n, b.Size(in.shape[r - 1]));
  V<E> iota = b.Iota(n);
  eig_general::G<E> g{cb, r, n, iota, b.Unsqueeze(iota, 1, kI)};
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  J2O_ASSIGN_OR_RETURN(eig_general::HessenbergForm<E> hf,
                       eig_general::ComplexHessenberg(e, g, in, g.Real(x)));
  rs::RS<E> s{g, g.Cmp("Equal", iota, g.BinI("Sub", g.rows, g.I64(1))),
              g.Cmp("Equal", g.rows, g.BinI("Sub", iota, g.I64(1)))};
  const double ulp = eig_general::Ulp(d);
  const double safmin = eig_general::Tiny(d);  // LAPACK's SAFMIN
  V<E> zero = s.S(0);
  V<E> n_real = b.Cast(n, d);
  V<E> smlnum = s.Mul(s.S(safmin / ulp), n_real);
  V<E> itmax = g.BinI("Mul", g.I64(30), g.BinI("Max", n, g.I64(10)));
  // Every eigenvalue takes at most itmax + 1 sweeps of at most n steps
  // each, plus its deflation.
  V<E> trip = g.BinI(
      "Add",
      g.BinI("Mul", n,
             g.BinI("Add", g.BinI("Mul", g.BinI("Add", itmax, g.I64(1)), n),
                    g.I64(1))),
      g.I64(1));
  const std::vector<jaxpr::DimExpr> batch_shape(in.shape.begin(),
                                                in.shape.end() - 2);
  const CarriedType mat(d, in.shape), member(d, batch_shape),
      member_i(kI, batch_shape);
  V<E> zeros_m = b.ZerosLike(hf.broken, d);  // [...]
  V<E> zeros_i = b.Cast(zeros_m, kI);
  V<E> i0 = g.BinI("Add", zeros_i, g.BinI("Sub", n, g.I64(1)));
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> qr,
      e.Loop(
          trip,
          {hf.h.re, hf.q.re, i0, zeros_i, zeros_i, zeros_i, zeros_i, zeros_i,
           zeros_i, zeros_m, zeros_m, zeros_m, zeros_i},
          {mat, mat, member_i, member_i, member_i, member_i, member_i, member_i,
           member_i, member, member, member, member_i},
          [&](V<E>, const std::vector<V<E>>& st)
              -> absl::StatusOr<std::vector<V<E>>> {
            V<E> t = st[0], z = st[1], i = st[2], l = st[3], its = st[4],
                 kdefl = st[5], k = st[6], m = st[7], sweep = st[8];
            V<E> vs0 = st[9], vs1 = st[10], vs2 = st[11], failed = st[12];
            V<E> active = g.And(g.Cmp("GreaterOrEqual", i, g.I64(0)),
                                g.Cmp("Equal", failed, g.I64(0)));
            V<E> sweeping = g.Cmp("Equal", sweep, g.I64(1));
            V<E> is_sweep = g.And(active, sweeping);
            V<E> is_decide = g.And(active, g.Not(sweeping));
            V<E> im1 = s.AddI(i, -1);

            // Decide: the deflation search (dlahqr's loop 30).
            V<E> dg = s.Diagonal(t), sb = s.Subdiagonal(t),
                 sp = s.Superdiagonal(t);
            V<E> dgp = s.Shift(dg, -1), sbp = s.Shift(sb, -1),
                 sbn = s.Shift(sb, 1);
            V<E> sub = s.Abs(sb);
            V<E> tst = s.Add(s.Abs(dgp), s.Abs(dg));
            tst = s.Where(s.Cmp("Equal", tst, zero),
                          s.Add(tst, s.Add(s.Abs(sbp), s.Abs(sbn))), tst);
            V<E> up = s.Abs(sp);
            V<E> ab = s.Max(sub, up), ba = s.Min(sub, up);
            V<E> dk = s.Abs(dg), diff = s.Abs(s.Sub(dgp, dg));
            V<E> aa = s.Max(dk, diff), bb = s.Min(dk, diff);
            V<E> sum_ab = s.Add(aa, ab);
            V<E> smlnum_v = smlnum;
            V<E> small =
                g.Or(s.Cmp("LessOrEqual", sub, smlnum_v),
                     g.And(s.Cmp("LessOrEqual", sub, s.Mul(s.S(ulp), tst)),
                           s.Cmp("LessOrEqual", s.Mul(ba, s.Div(ab, sum_ab)),
                                 s.Max(smlnum_v,
                                       s.Mul(s.S(ulp),
                                             s.Mul(bb, s.Div(aa, sum_ab)))))));
            V<E> l_v = s.Vec(l, kI), i_v = s.Vec(i, kI);
            V<E> in_block = g.And(g.Cmp("Greater", iota, l_v),
                                  g.Cmp("LessOrEqual", iota, i_v));
            V<E> lnew = s.MaxOf(s.WhereI(g.And(small, in_block), iota, l_v));
            V<E> out_of_its = g.Cmp("Greater", its, itmax);
            V<E> deciding = g.And(is_decide, g.Not(out_of_its));
            V<E> t_d = s.Where(
                g.And(s.Mat(g.And(deciding, g.Cmp("Greater", lnew, g.I64(0))),
                            kB),
                      s.At(lnew, s.AddI(lnew, -1))),
                zero, t);
            V<E> one_block = g.And(deciding, g.Cmp("Equal", lnew, i));
            V<E> two_block = g.And(deciding, g.Cmp("Equal", lnew, im1));
            V<E> start = g.And(deciding, g.Cmp("Less", lnew, im1));

            // A 2 x 2 block: dlanv2 and its rotation of rows i-1, i
            // (columns past i), columns i-1, i (rows before i-1) and Z.
            V<E> a11 = s.Pick(dg, im1), a12 = s.Pick(sp, i),
                 a21 = s.Pick(sb, i), a22 = s.Pick(dg, i);
            rs::Standard<E> std2 = rs::Lanv2(s, a11, a12, a21, a22, ulp);
            V<E> two_m = s.Mat(two_block, kB);
            V<E> cs_v = s.Vec(std2.cs, d), sn_v = s.Vec(std2.sn, d);
            V<E> rp = s.RowOf(t_d, im1), rq = s.RowOf(t_d, i);
            V<E> right = s.RowB(g.Cmp("Greater", iota, i_v));
            V<E> at_p = g.Cmp("Equal", g.rows, s.Mat(im1, kI));
            V<E> at_q = g.Cmp("Equal", g.rows, s.Mat(i, kI));
            V<E> t2 = s.Where(
                g.And(two_m, g.And(at_p, right)),
                s.Row(s.Add(s.Mul(cs_v, rp), s.Mul(sn_v, rq))),
                s.Where(g.And(two_m, g.And(at_q, right)),
                        s.Row(s.Sub(s.Mul(cs_v, rq), s.Mul(sn_v, rp))), t_d));
            V<E> cp = s.ColOf(t2, im1), cq = s.ColOf(t2, i);
            V<E> above = s.ColB(g.Cmp("Less", iota, s.Vec(im1, kI)));
            V<E> col_p = g.Cmp("Equal", iota, s.Mat(im1, kI));
            V<E> col_q = g.Cmp("Equal", iota, s.Mat(i, kI));
            V<E> t3 = s.Where(
                g.And(two_m, g.And(col_p, above)),
                s.Col(s.Add(s.Mul(cs_v, cp), s.Mul(sn_v, cq))),
                s.Where(g.And(two_m, g.And(col_q, above)),
                        s.Col(s.Sub(s.Mul(cs_v, cq), s.Mul(sn_v, cp))), t2));
            auto put = [&](V<E> m_in, V<E> p, V<E> q, V<E> v) {
              return s.Where(g.And(two_m, s.At(p, q)), s.Mat(v, d), m_in);
            };
            V<E> t4 = put(put(put(put(t3, im1, im1, std2.a), im1, i, std2.b), i,
                              im1, std2.c),
                          i, i, std2.d);
            V<E> zp = s.ColOf(z, im1), zq = s.ColOf(z, i);
            V<E> z2 = s.Where(
                g.And(two_m, col_p),
                s.Col(s.Add(s.Mul(cs_v, zp), s.Mul(sn_v, zq))),
                s.Where(g.And(two_m, col_q),
                        s.Col(s.Sub(s.Mul(cs_v, zq), s.Mul(sn_v, zp))), z));

            // Start a sweep: the shifts (dlahqr's exceptional shift every
            // 10th iteration without deflation), then the first row m.
            V<E> kdefl1 = s.AddI(kdefl, 1);
            V<E> exc_bottom =
                g.Cmp("Equal", g.BinI("Mod", kdefl1, g.I64(20)), g.I64(0));
            V<E> exc_top =
                g.Cmp("Equal", g.BinI("Mod", kdefl1, g.I64(10)), g.I64(0));
            V<E> exc = g.Or(exc_bottom, exc_top);
            V<E> s_bot = s.Add(s.Abs(a21), s.Abs(s.Pick(sb, im1)));
            V<E> s_top = s.Add(s.Abs(s.Pick(sb, s.AddI(lnew, 1))),
                               s.Abs(s.Pick(sb, s.AddI(lnew, 2))));
            V<E> sx = s.Where(exc_bottom, s_bot, s_top);
            V<E> base = s.Where(exc_bottom, a22, s.Pick(dg, lnew));
            V<E> he = s.Add(s.Mul(s.S(0.75), sx), base);
            V<E> h11 = s.Where(exc, he, a11);
            V<E> h12 = s.Where(exc, s.Mul(s.S(-0.4375), sx), a12);
            V<E> h21 = s.Where(exc, sx, a21);
            V<E> h22 = s.Where(exc, he, a22);
            V<E> ss = s.Add(s.Add(s.Abs(h11), s.Abs(h12)),
                            s.Add(s.Abs(h21), s.Abs(h22)));
            V<E> ss_zero = s.Cmp("Equal", ss, zero);
            V<E> ss_nz = g.NonZero(ss);
            V<E> h11s = s.Div(h11, ss_nz), h21s = s.Div(h21, ss_nz),
                 h12s = s.Div(h12, ss_nz), h22s = s.Div(h22, ss_nz);
            V<E> tr = s.Div(s.Add(h11s, h22s), s.S(2));
            V<E> det = s.Sub(s.Mul(s.Sub(h11s, tr), s.Sub(h22s, tr)),
                             s.Mul(h12s, h21s));
            V<E> rtdisc = s.Sqrt(s.Abs(det));
            V<E> complex_shift = s.Cmp("GreaterOrEqual", det, zero);
            V<E> r1 = s.Add(tr, rtdisc), r2 = s.Sub(tr, rtdisc);
            V<E> nearer1 = s.Cmp("LessOrEqual", s.Abs(s.Sub(r1, h22s)),
                                 s.Abs(s.Sub(r2, h22s)));
            V<E> real_shift = s.Where(nearer1, s.Mul(r1, ss), s.Mul(r2, ss));
            V<E> rt1r =
                s.Where(ss_zero, zero,
                        s.Where(complex_shift, s.Mul(tr, ss), real_shift));
            V<E> rt1i = s.Where(g.Or(ss_zero, g.Not(complex_shift)), zero,
                                s.Mul(rtdisc, ss));
            V<E> rt2r = rt1r, rt2i = s.Neg(rt1i);
            // Every candidate m at once (dlahqr's loop 50), as vectors.
            V<E> rt1r_v = s.Vec(rt1r, d), rt1i_v = s.Vec(rt1i, d),
                 rt2r_v = s.Vec(rt2r, d), rt2i_v = s.Vec(rt2i, d);
            V<E> dgn = s.Shift(dg, 1), spn = s.Shift(sp, 1),
                 sbnn = s.Shift(sb, 2);
            V<E> sm = s.Add(s.Add(s.Abs(s.Sub(dg, rt2r_v)), s.Abs(rt2i_v)),
                            s.Abs(sbn));
            V<E> h21v = s.Div(sbn, sm);
            V<E> w0 = s.Sub(
                s.Add(s.Mul(h21v, spn),
                      s.Mul(s.Sub(dg, rt1r_v), s.Div(s.Sub(dg, rt2r_v), sm))),
                s.Mul(rt1i_v, s.Div(rt2i_v, sm)));
            V<E> w1 = s.Mul(h21v, s.Sub(s.Sub(s.Add(dg, dgn), rt1r_v), rt2r_v));
            V<E> w2 = s.Mul(h21v, sbnn);
            V<E> sw = s.Add(s.Add(s.Abs(w0), s.Abs(w1)), s.Abs(w2));
            w0 = s.Div(w0, sw);
            w1 = s.Div(w1, sw);
            w2 = s.Div(w2, sw);
            V<E> h00 = s.Mul(s.Abs(sb), s.Add(s.Abs(w1), s.Abs(w2)));
            V<E> h01 = s.Mul(s.Mul(s.S(ulp), s.Abs(w0)),
                             s.Add(s.Add(s.Abs(dgp), s.Abs(dg)), s.Abs(dgn)));
            V<E> lnew_v = s.Vec(lnew, kI);
            V<E> m_ok = g.And(
                s.Cmp("LessOrEqual", h00, h01),
                g.And(g.Cmp("Greater", iota, lnew_v),
                      g.Cmp("LessOrEqual", iota, s.Vec(s.AddI(i, -2), kI))));
            V<E> mnew = s.MaxOf(s.WhereI(m_ok, iota, lnew_v));
            V<E> v0n = s.Pick(w0, mnew), v1n = s.Pick(w1, mnew),
                 v2n = s.Pick(w2, mnew);

            // Sweep step k: dlarfg's reflector of order min(3, i - k + 1).
            V<E> first = g.Cmp("Equal", k, m);
            V<E> kp1 = s.AddI(k, 1), kp2 = s.AddI(k, 2), km1 = s.AddI(k, -1);
            V<E> three = g.Cmp("LessOrEqual", k, s.AddI(i, -2));
            V<E> colk = s.ColOf(t, km1);
            V<E> x1 = s.Where(first, vs0, s.Pick(colk, k));
            V<E> x2 = s.Where(first, vs1, s.Pick(colk, kp1));
            V<E> x3 =
                s.Where(three, s.Where(first, vs2, s.Pick(colk, kp2)), zero);
            V<E> xnorm = s.Hypot(x2, x3);
            V<E> xnorm_zero = s.Cmp("Equal", xnorm, zero);
            V<E> beta = s.Neg(s.Sign(s.Hypot(x1, xnorm), x1));
            V<E> beta_nz = g.NonZero(beta);
            V<E> tau =
                s.Where(xnorm_zero, zero, s.Div(s.Sub(beta, x1), beta_nz));
            V<E> inv = s.Div(s.S(1), g.NonZero(s.Sub(x1, beta)));
            V<E> v2 = s.Where(xnorm_zero, x2, s.Mul(x2, inv));
            V<E> v3 = s.Where(xnorm_zero, x3, s.Mul(x3, inv));
            V<E> alpha = s.Where(xnorm_zero, x1, beta);
            V<E> sw_m = s.Mat(is_sweep, kB);
            V<E> chase = s.Mat(g.And(is_sweep, g.Not(first)), kB);
            V<E> at_k = s.At(k, km1);
            V<E> t_s = s.Where(
                g.And(chase, at_k), s.Mat(alpha, d),
                s.Where(
                    g.And(chase, g.Or(s.At(kp1, km1),
                                      g.And(s.Mat(g.Cmp("Less", k, im1), kB),
                                            s.At(kp2, km1)))),
                    zero,
                    s.Where(
                        g.And(s.Mat(g.And(is_sweep,
                                          g.And(first, g.Cmp("Greater", m, l))),
                                    kB),
                              at_k),
                        s.Mul(t, s.Mat(s.Sub(s.S(1), tau), d)), t)));
            V<E> k_v = s.Vec(k, kI);
            V<E> vvec = s.Where(
                g.Cmp("Equal", iota, k_v), s.S(1),
                s.Where(g.Cmp("Equal", iota, s.Vec(kp1, kI)), s.Vec(v2, d),
                        s.Where(g.Cmp("Equal", iota, s.Vec(kp2, kI)),
                                s.Vec(v3, d), zero)));
            V<E> tv = s.Mul(s.Vec(tau, d), vvec);  // t1, t2, t3
            // Rows k.. in columns k..n-1.
            V<E> sum_r = g.Sum(s.Mul(s.Col(vvec), t_s), {r - 2});
            V<E> cols_k = s.RowB(g.Cmp("GreaterOrEqual", iota, k_v));
            t_s = s.Where(g.And(sw_m, cols_k),
                          s.Sub(t_s, s.Mul(s.Col(tv), s.Row(sum_r))), t_s);
            // Columns k.. in rows 0..min(k + 3, i).
            V<E> last = g.BinI("Min", s.AddI(k, 3), i);
            V<E> sum_c = g.Sum(s.Mul(t_s, s.Row(vvec)), {r - 1});
            V<E> rows_last =
                s.ColB(g.Cmp("LessOrEqual", iota, s.Vec(last, kI)));
            t_s = s.Where(g.And(sw_m, rows_last),
                          s.Sub(t_s, s.Mul(s.Col(sum_c), s.Row(tv))), t_s);
            V<E> sum_z = g.Sum(s.Mul(z, s.Row(vvec)), {r - 1});
            V<E> z_s =
                s.Where(sw_m, s.Sub(z, s.Mul(s.Col(sum_z), s.Row(tv))), z);

            // Each member's next state.
            V<E> deflate = g.Or(one_block, two_block);
            V<E> dec_m = s.Mat(is_decide, kB);
            V<E> t_next = s.Where(sw_m, t_s, s.Where(dec_m, t4, t));
            V<E> z_next = s.Where(sw_m, z_s, s.Where(dec_m, z2, z));
            V<E> i_next = s.WhereI(deflate, s.AddI(lnew, -1), i);
            V<E> l_next = s.WhereI(deflate, zeros_i, s.WhereI(start, lnew, l));
            V<E> its_next = s.WhereI(deflate, zeros_i,
                                     s.WhereI(start, s.AddI(its, 1), its));
            V<E> kdefl_next =
                s.WhereI(deflate, zeros_i, s.WhereI(start, kdefl1, kdefl));
            V<E> k_next = s.WhereI(start, mnew, s.WhereI(is_sweep, kp1, k));
            V<E> m_next = s.WhereI(start, mnew, m);
            V<E> sweep_end = g.Cmp("Greater", kp1, im1);
            V<E> sweep_next = s.WhereI(
                start, g.I64(1),
                s.WhereI(is_sweep, s.WhereI(sweep_end, g.I64(0), g.I64(1)),
                         sweep));
            V<E> failed_next =
                s.WhereI(g.And(is_decide, out_of_its), g.I64(1), failed);
            V<E> go_on = g.And(g.Cmp("GreaterOrEqual", i_next, g.I64(0)),
                               g.Cmp("Equal", failed_next, g.I64(0)));
            V<E> keep = g.Cmp("Greater",
                              e.Op("ReduceSum", {b.Cast(go_on, d)}, d,
                                   {OpAttr::Int("keepdims", 0)}),
                              zero);
            return std::vector<V<E>>{keep,
                                     t_next,
                                     z_next,
                                     i_next,
                                     l_next,
                                     its_next,
                                     kdefl_next,
                                     k_next,
                                     m_next,
                                     sweep_next,
                                     s.Where(start, v0n, vs0),
                                     s.Where(start, v1n, vs1),
                                     s.Where(start, v2n, vs2),
                                     failed_next};
          },
          /*early_exit=*/true));
  // Below the subdiagonal: exact zeros, as dhseqr leaves T.
  V<E> t = s.Where(g.Cmp("Greater", g.rows, g.BinI("Add", iota, g.I64(1))),
                   zero, qr[0]);
  V<E> failed = g.Or(hf.broken, g.Cmp("Greater", qr[12], g.I64(0)));
  V<E> failed_m = s.Mat(failed, kB);
  V<E> nan = s.S(std::numeric_limits<double>::quiet_NaN());
  J2O_RETURN_IF_ERROR(e.SetOut(0, s.Where(failed_m, nan, t)));
  if (want_vectors) {
    J2O_RETURN_IF_ERROR(e.SetOut(1, s.Where(failed_m, nan, qr[1])));
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx::plugin::complex

#endif  // JAX2ONNX_PLUGIN_REAL_SCHUR_PLAN_H_
