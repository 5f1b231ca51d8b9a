// tridiagonal_solve as JAX's CPU lowering computes it: LAPACK gtsv (Gaussian
// elimination with partial pivoting, a second superdiagonal filled by the
// row interchanges), then JAX's replacement of every member whose info is
// not 0 by NaN (linalg.py, _tridiagonal_solve_cpu_lowering). JAX passes its
// length-m dl from index 1 (jaxlib lapack_kernels.cc: `dl + 1`), so LAPACK's
// DL(k) is dl[k] of the row below. One recipe for real and complex operands
// over an algebra A (below: RealGtsv; linalg_complex_plan.h: ComplexGtsv):
//
//   forward, k = 0 .. m-2 (one ONNX Loop):
//     real (dgtsv):    interchange rows k, k+1 iff NOT |d_k| >= |dl_{k+1}|
//     complex (zgtsv): dl == 0 skips the step; else interchange iff NOT
//                      cabs1(d_k) >= cabs1(dl_{k+1}) (cabs1 = |re| + |im|)
//     no interchange: f = dl/d_k; d_{k+1} -= f du_k; b_{k+1} -= f b_k;
//                     a zero d_k is singular (info = k + 1)
//     interchange:    f = d_k/dl; d_k = dl; (d_{k+1}, du_k) =
//                     (du_k - f d_{k+1}, d_{k+1}); below the last step also
//                     du2_k = du_{k+1}, du_{k+1} = -f du2_k;
//                     (b_k, b_{k+1}) = (b_{k+1}, b_k - f b_{k+1})
//   a zero d_{m-1} is singular (info = m);
//   backward, i = m-1 .. 0 (one ONNX Loop):
//     x_i = (b_i - du_i x_{i+1} - du2_i x_{i+2}) / d_i, the terms that
//     LAPACK does not form (past the last row) left out, not multiplied by 0.
//
// Sources: LAPACK 3.12 dgtsv.f / zgtsv.f (the reference routines OpenBLAS
// ships and jaxlib calls through scipy). A member with info != 0 is all NaN
// (NaN + NaN i for complex), as JAX substitutes. Known difference: a zero
// result selected through ONNX Runtime's Where true branch may lose a -0
// sign (plugin/float_extremes.h).
#ifndef JAX2ONNX_PLUGIN_GTSV_PLAN_H_
#define JAX2ONNX_PLUGIN_GTSV_PLAN_H_

#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/emit.h"
#include "plugin/linalg_plan.h"

namespace jax2onnx::plugin::gtsv {

template <class E>
using V = typename E::Value;

// The real algebra (sgtsv/dgtsv): values are one real tensor.
template <class E>
struct RealGtsv {
  using T = V<E>;
  static constexpr int kParts = 1;
  static constexpr bool kZeroSubdiagonalSkips = false;
  linalg_plan::Builder<E>& b;

  jaxpr::DType part_dtype() const { return b.dt; }
  void Flatten(const T& x, std::vector<V<E>>& out) const { out.push_back(x); }
  T Unflatten(const std::vector<V<E>>& in, size_t at) const { return in[at]; }
  T Take(T x, V<E> k, int64_t axis) { return b.Take(x, k, axis, b.dt); }
  T Unsqueeze(T x, int64_t axis) { return b.Unsqueeze(x, axis, b.dt); }
  T Where(V<E> c, T x, T y) { return b.Where(c, x, y, b.dt); }
  T Sub(T x, T y) { return b.Bin("Sub", x, y, b.dt); }
  T Mul(T x, T y) { return b.Bin("Mul", x, y, b.dt); }
  T Div(T x, T y) { return b.Bin("Div", x, y, b.dt); }
  T Neg(T x) { return b.e.Op("Neg", {x}, b.dt); }
  T Zero() { return b.Scalar(0); }
  T Nan() { return b.Scalar(std::numeric_limits<double>::quiet_NaN()); }
  V<E> IsZero(T x) {
    return b.Bin("Equal", x, b.Scalar(0), jaxpr::DType::kBool);
  }
  // |d| >= |dl| (false when either is NaN: dgtsv then interchanges).
  V<E> NoInterchange(T d, T dl) {
    return b.Bin("GreaterOrEqual", b.e.Op("Abs", {d}, b.dt),
                 b.e.Op("Abs", {dl}, b.dt), jaxpr::DType::kBool);
  }
};

// x = A⁻¹ rhs for the tridiagonal A = (dl, d, du) ([..., m] each; rhs
// [..., m, n], rank `rank`), gtsv's arithmetic over algebra `a`; `diag_shape`
// and `rhs_shape` are the static shapes the Loop carries keep.
template <class E, class A>
absl::StatusOr<typename A::T> Solve(
    E& e, A& a, linalg_plan::Builder<E>& b, typename A::T dl, typename A::T d,
    typename A::T du, typename A::T rhs, V<E> m, int rank,
    const std::vector<jaxpr::DimExpr>& diag_shape,
    const std::vector<jaxpr::DimExpr>& rhs_shape) {
  using T = typename A::T;
  using jaxpr::DType;
  const int diag_axis = rank - 2;  // the m axis of diagonals and of rhs
  const std::vector<jaxpr::DimExpr> batch_shape(diag_shape.begin(),
                                                diag_shape.end() - 1);
  V<E> iota = b.Iota(m);
  V<E> rows = b.Unsqueeze(iota, 1, DType::kI64);
  V<E> one = b.ScalarI64(1);
  V<E> steps = b.Bin("Sub", m, one, DType::kI64);
  V<E> last_step = b.Bin("Sub", steps, one, DType::kI64);
  // Per-member scalars [...] broadcast against diagonals as [..., 1] and
  // against rhs rows as [..., 1] too (rows are [..., n]).
  auto put_diag = [&](T x, V<E> k, T v) {
    return a.Where(b.Bin("Equal", iota, k, DType::kBool),
                   a.Unsqueeze(v, diag_axis), x);
  };
  auto put_row = [&](T x, V<E> k, T v) {
    return a.Where(b.Bin("Equal", rows, k, DType::kBool),
                   a.Unsqueeze(v, diag_axis), x);
  };
  auto row_cond = [&](V<E> c) {
    return b.Unsqueeze(c, diag_axis, DType::kBool);
  };
  // No member is singular yet: a [...] bool of false (t xor t).
  V<E> any_member = a.IsZero(a.Take(d, b.ScalarI64(0), diag_axis));
  V<E> singular0 = b.e.Op("Xor", {any_member, any_member}, DType::kBool);

  std::vector<V<E>> init;
  std::vector<CarriedType> types;
  auto carry = [&](const T& x, const std::vector<jaxpr::DimExpr>& shape) {
    a.Flatten(x, init);
    for (int p = 0; p < A::kParts; ++p) {
      types.push_back(CarriedType(a.part_dtype(), shape));
    }
  };
  // Zeros shaped like x: a Where whose condition is false everywhere.
  V<E> never = b.Bin("Less", one, b.ScalarI64(0), DType::kBool);
  auto zeros_like = [&](T x) { return a.Where(never, x, a.Zero()); };
  T du2 = zeros_like(d);
  carry(d, diag_shape);
  carry(du, diag_shape);
  carry(du2, diag_shape);
  carry(rhs, rhs_shape);
  init.push_back(singular0);
  types.push_back(CarriedType(DType::kBool, batch_shape));
  const size_t P = A::kParts;
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> fwd,
      e.Loop(
          steps, init, types,
          [&](V<E> k,
              const std::vector<V<E>>& c) -> absl::StatusOr<std::vector<V<E>>> {
            T D = a.Unflatten(c, 0), DU = a.Unflatten(c, P);
            T DU2 = a.Unflatten(c, 2 * P), B = a.Unflatten(c, 3 * P);
            V<E> singular = c[4 * P];
            V<E> k1 = b.Bin("Add", k, one, DType::kI64);
            T dl_k = a.Take(dl, k1, diag_axis);  // LAPACK's DL(k)
            T d_k = a.Take(D, k, diag_axis), d_k1 = a.Take(D, k1, diag_axis);
            T du_k = a.Take(DU, k, diag_axis);
            T du_k1 = a.Take(DU, k1, diag_axis);
            T b_k = a.Take(B, k, diag_axis), b_k1 = a.Take(B, k1, diag_axis);
            V<E> keep = a.NoInterchange(d_k, dl_k);
            V<E> not_last = b.Bin("Less", k, last_step, DType::kBool);
            // No interchange.
            T f = a.Div(dl_k, d_k);
            T d_k1_n = a.Sub(d_k1, a.Mul(f, du_k));
            T b_k1_n = a.Sub(b_k1, a.Mul(a.Unsqueeze(f, diag_axis), b_k));
            if constexpr (A::kZeroSubdiagonalSkips) {
              V<E> skip = a.IsZero(dl_k);
              keep = b.e.Op("Or", {keep, skip}, DType::kBool);
              d_k1_n = a.Where(skip, d_k1, d_k1_n);
              b_k1_n = a.Where(row_cond(skip), b_k1, b_k1_n);
            }
            // Interchange.
            T g = a.Div(d_k, dl_k);
            T d_k1_p = a.Sub(du_k, a.Mul(g, d_k1));
            T du_k1_p = a.Where(not_last, a.Neg(a.Mul(g, du_k1)), du_k1);
            T du2_k_p = a.Where(not_last, du_k1, a.Zero());
            T b_k1_p = a.Sub(b_k, a.Mul(a.Unsqueeze(g, diag_axis), b_k1));
            V<E> keep_rows = row_cond(keep);
            D = put_diag(D, k, a.Where(keep, d_k, dl_k));
            D = put_diag(D, k1, a.Where(keep, d_k1_n, d_k1_p));
            DU = put_diag(DU, k, a.Where(keep, du_k, d_k1));
            DU = put_diag(DU, k1, a.Where(keep, du_k1, du_k1_p));
            DU2 = put_diag(DU2, k, a.Where(keep, a.Zero(), du2_k_p));
            B = put_row(B, k, a.Where(keep_rows, b_k, b_k1));
            B = put_row(B, k1, a.Where(keep_rows, b_k1_n, b_k1_p));
            singular = b.e.Op(
                "Or",
                {singular, b.e.Op("And", {keep, a.IsZero(d_k)}, DType::kBool)},
                DType::kBool);
            std::vector<V<E>> next;
            a.Flatten(D, next);
            a.Flatten(DU, next);
            a.Flatten(DU2, next);
            a.Flatten(B, next);
            next.push_back(singular);
            return next;
          }));
  T D = a.Unflatten(fwd, 0), DU = a.Unflatten(fwd, P);
  T DU2 = a.Unflatten(fwd, 2 * P), B = a.Unflatten(fwd, 3 * P);
  V<E> singular = b.e.Op(
      "Or", {fwd[4 * P], a.IsZero(a.Take(D, steps, diag_axis))}, DType::kBool);

  // Backward: carries x (the result so far), x_{i+1} and x_{i+2} rows.
  T row0 = a.Take(B, b.ScalarI64(0), diag_axis);  // [..., n]
  T zero_row = zeros_like(row0);
  std::vector<V<E>> binit;
  std::vector<CarriedType> btypes;
  std::vector<jaxpr::DimExpr> row_shape = rhs_shape;
  row_shape.erase(row_shape.begin() + diag_axis);
  auto bcarry = [&](const T& x, const std::vector<jaxpr::DimExpr>& shape) {
    a.Flatten(x, binit);
    for (int p = 0; p < A::kParts; ++p) {
      btypes.push_back(CarriedType(a.part_dtype(), shape));
    }
  };
  bcarry(B, rhs_shape);
  bcarry(zero_row, row_shape);
  bcarry(zero_row, row_shape);
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> bwd,
      e.Loop(m, binit, btypes,
             [&](V<E> it, const std::vector<V<E>>& c)
                 -> absl::StatusOr<std::vector<V<E>>> {
               T X = a.Unflatten(c, 0), x1 = a.Unflatten(c, P);
               T x2 = a.Unflatten(c, 2 * P);
               V<E> i = b.Bin("Sub", steps, it, DType::kI64);
               auto col = [&](T v) {  // v[..., i] as [..., 1]
                 return a.Unsqueeze(a.Take(v, i, diag_axis), diag_axis);
               };
               T r = a.Take(X, i, diag_axis);  // b_i, [..., n]
               // - du_i x_{i+1} below the last row; - du2_i x_{i+2} below
               // the last two (LAPACK forms neither term past the end).
               V<E> has1 = b.Bin("Greater", it, b.ScalarI64(0), DType::kBool);
               V<E> has2 = b.Bin("Greater", it, one, DType::kBool);
               T r1 = a.Sub(r, a.Mul(col(DU), x1));
               r = a.Where(has1, r1, r);
               T r2 = a.Sub(r, a.Mul(col(DU2), x2));
               r = a.Where(has2, r2, r);
               T x_i = a.Div(r, col(D));
               std::vector<V<E>> next;
               a.Flatten(put_row(X, i, x_i), next);
               a.Flatten(x_i, next);
               a.Flatten(x1, next);
               return next;
             }));
  T X = a.Unflatten(bwd, 0);
  // info != 0: the member is NaN (JAX's _replace_not_ok_with_nan).
  V<E> bad = b.Unsqueeze(b.Unsqueeze(singular, diag_axis, DType::kBool),
                         diag_axis, DType::kBool);
  return a.Where(bad, a.Nan(), X);
}

}  // namespace jax2onnx::plugin::gtsv

#endif  // JAX2ONNX_PLUGIN_GTSV_PLAN_H_
