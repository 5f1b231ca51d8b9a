// Complex (c64/c128) lowerings of cholesky, triangular_solve, lu and
// tridiagonal_solve, the counterparts of the real recipes (linalg_plan.h,
// qr_plan.h) under the complex convention of complex_plan.h (a complex value
// is a real [..., 2] tensor of (re, im)). The parts are split once, each
// recipe is the real one's Loop (one per factorization; two for gtsv) carrying
// the real and imaginary parts as two real tensors (graph size independent of
// n, static or symbolic, leading batch dims broadcast), and the results are
// packed again. Complex products are four real MatMul/Mul (XLA's (ac - bd, ad +
// bc)), complex quotients complex_plan.h's Div (XLA's Smith division).
//
// Semantics are LAPACK's z-routines as JAX's CPU lowering calls them:
//  - cholesky (zpotrf, lower): A = L Lᴴ; the pivot is real, only the real
//    part of A's diagonal is read (DBLE(A(j,j)) - ZDOTC), L's diagonal has
//    imaginary part 0; a failed member is NaN + NaN i (JAX's _nan_like).
//  - triangular_solve (ztrsm): op(A) = A, Aᵀ, conj(A) (JAX conjugates A
//    before calling trsm when conjugate_a and not transpose_a) or Aᴴ.
//  - lu (zgetrf): partial pivoting on cabs1 = |Re| + |Im| (izamax; JAX's
//    _lu_unblocked uses the same magnitude), not the modulus; a pivot is
//    zero when both parts are.
// Included by complex_plan_recipes.h only.
#ifndef JAX2ONNX_PLUGIN_LINALG_COMPLEX_PLAN_H_
#define JAX2ONNX_PLUGIN_LINALG_COMPLEX_PLAN_H_

#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jaxpr/status_macros.h"
#include "plugin/complex_plan.h"
#include "plugin/gtsv_plan.h"
#include "plugin/linalg_plan.h"

namespace jax2onnx::plugin::complex {
namespace linalg_complex {

// One helper set over the part dtype `d`: parts of packed operands, and the
// complex operations of the factorizations on pairs of real tensors.
template <class E>
struct CBuilder {
  E& e;
  DType d;
  linalg_plan::Builder<E> b{e, d};

  absl::StatusOr<Z<E>> Operand(int i) {
    J2O_ASSIGN_OR_RETURN(V<E> z, e.In(i));
    return Z<E>{Part(e, z, 0, d), Part(e, z, 1, d)};
  }
  absl::Status SetOut(int i, Z<E> z) {
    return e.SetOut(i, Pack(e, z.re, z.im, d));
  }
  Z<E> Take(Z<E> z, V<E> k, int64_t axis) {
    return {b.Take(z.re, k, axis, d), b.Take(z.im, k, axis, d)};
  }
  Z<E> Unsqueeze(Z<E> z, int64_t axis) {
    return {b.Unsqueeze(z.re, axis, d), b.Unsqueeze(z.im, axis, d)};
  }
  Z<E> Squeeze(Z<E> z, int64_t axis) {
    return {b.Squeeze(z.re, axis, d), b.Squeeze(z.im, axis, d)};
  }
  Z<E> Where(V<E> c, Z<E> x, Z<E> y) {
    return {b.Where(c, x.re, y.re, d), b.Where(c, x.im, y.im, d)};
  }
  Z<E> Sub(Z<E> x, Z<E> y) {
    return {b.Bin("Sub", x.re, y.re, d), b.Bin("Sub", x.im, y.im, d)};
  }
  Z<E> Conj(Z<E> z) { return {z.re, e.Op("Neg", {z.im}, d)}; }
  Z<E> Transpose(Z<E> z, int rank) {
    return {b.TransposeLast2(z.re, rank, d), b.TransposeLast2(z.im, rank, d)};
  }
  // x @ y (MatMul broadcasting), re = xr yr - xi yi, im = xr yi + xi yr.
  Z<E> MatMul(Z<E> x, Z<E> y) {
    auto mm = [&](V<E> p, V<E> q) { return e.Op("MatMul", {p, q}, d); };
    return {b.Bin("Sub", mm(x.re, y.re), mm(x.im, y.im), d),
            b.Bin("Add", mm(x.re, y.im), mm(x.im, y.re), d)};
  }
  Z<E> Zero() { return {b.Scalar(0), b.Scalar(0)}; }
  // Re == 0 and Im == 0.
  V<E> IsZero(Z<E> z) {
    return e.Op("And",
                {b.Bin("Equal", z.re, b.Scalar(0), DType::kBool),
                 b.Bin("Equal", z.im, b.Scalar(0), DType::kBool)},
                DType::kBool);
  }
};

// The [..., m, m] identity (parts) with the batch dims of `like`.
template <class E>
Z<E> BatchedEye(CBuilder<E>& c, V<E> like, V<E> iota_m, V<E> m, int rank) {
  auto [re, shape] = linalg_plan::BatchedEye(c.b, like, iota_m, m, rank);
  return {re, c.e.Op("Expand", {c.b.Scalar(0), shape}, c.d)};
}

}  // namespace linalg_complex

// cholesky on c64/c128: linalg_plan.h's left-looking column loop with
// v = A[:, k] - L conj(L[k, :]), L[k, k] = sqrt(Re v[k]) (imaginary part
// 0), L[i, k] = v[i] / L[k, k] below; only the lower triangle of `a` is read
// (the diagonal's real part), the strict upper triangle keeps the input's
// values, and a member whose pivot is not > 0 becomes NaN + NaN i.
template <class E>
absl::Status LowerComplexCholesky(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 1 || eqn.outputs.size() != 1) {
    return absl::InvalidArgumentError("cholesky takes 1 operand, 1 result");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const int rank = aval.rank();
  if (rank < 2) {
    return absl::InvalidArgumentError("cholesky: operand rank must be >= 2");
  }
  const DType d = ComplexPartDType(aval.dtype);
  linalg_complex::CBuilder<E> c{e, d};
  linalg_plan::Builder<E>& b = c.b;
  J2O_ASSIGN_OR_RETURN(Z<E> a, c.Operand(0));
  J2O_ASSIGN_OR_RETURN(V<E> n, b.Size(aval.shape[rank - 1]));
  V<E> iota = b.Iota(n);
  V<E> l0 = b.ZerosLike(a.re, d);
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(n, {l0, l0},
             {plugin::CarriedType(d, aval.shape),
              plugin::CarriedType(d, aval.shape)},
             [&](V<E> k, const std::vector<V<E>>& carried)
                 -> absl::StatusOr<std::vector<V<E>>> {
               Z<E> l{carried[0], carried[1]};
               Z<E> a_col = c.Take(a, k, rank - 1);  // [..., n]
               Z<E> l_row = c.Take(l, k, rank - 2);  // [..., n]
               Z<E> dots =
                   c.Squeeze(c.MatMul(l, c.Unsqueeze(c.Conj(l_row), rank - 1)),
                             rank - 1);  // [..., n]
               Z<E> v = c.Sub(a_col, dots);
               V<E> diag = b.Unsqueeze(
                   e.Op("Sqrt", {b.Take(v.re, k, rank - 2, d)}, d), rank - 2,
                   d);  // [..., 1]
               V<E> below = b.Bin("Greater", iota, k, DType::kBool);
               V<E> at_k = b.Bin("Equal", iota, k, DType::kBool);
               V<E> zero = b.Scalar(0);
               Z<E> col{
                   b.Where(at_k, diag,
                           b.Where(below, b.Bin("Div", v.re, diag, d), zero, d),
                           d),
                   b.Where(below, b.Bin("Div", v.im, diag, d), zero, d)};
               Z<E> next = c.Where(at_k, c.Unsqueeze(col, rank - 1), l);
               return std::vector<V<E>>{next.re, next.im};
             }));
  Z<E> l{out[0], out[1]};
  // Lower triangle from L, strict upper triangle from the input.
  V<E> rows = b.Unsqueeze(iota, 1, DType::kI64);
  V<E> lower = b.Bin("GreaterOrEqual", rows, iota, DType::kBool);
  Z<E> result = c.Where(lower, l, a);
  // A failed member becomes all NaN + NaN i.
  auto [failed, nan] = linalg_plan::CholeskyFailed(b, l.re, rows, iota, rank);
  result = c.Where(failed, {nan, nan}, result);
  return c.SetOut(0, result);
}

// triangular_solve on c64/c128: linalg_plan.h's row substitution with
// op(A) = conj?(A) transposed or not (transpose_a and conjugate_a together:
// Aᴴ); the right side is op(A)ᵀ Xᵀ = Bᵀ (a plain transpose, the
// conjugation stays with op(A)); x_k = (b_k - op(A)[k, :] X) / op(A)[k, k].
template <class E>
absl::Status LowerComplexTriangularSolve(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 2 || eqn.outputs.size() != 1) {
    return absl::InvalidArgumentError(
        "triangular_solve takes 2 operands, 1 result");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const int rank = aval.rank();
  if (rank < 2) {
    return absl::InvalidArgumentError(
        "triangular_solve: operand rank must be >= 2");
  }
  if (!jaxpr::IsComplex(OperandAval(eqn, 0).dtype) ||
      !jaxpr::IsComplex(aval.dtype)) {
    return absl::InvalidArgumentError(
        "triangular_solve: a and b must both be complex");
  }
  J2O_ASSIGN_OR_RETURN(linalg_plan::TriangularSolveParams params,
                       linalg_plan::ReadTriangularSolveParams(eqn));
  // Not a no-op here, unlike on real dtypes.
  J2O_ASSIGN_OR_RETURN(bool conjugate_a, eqn.params.GetBool("conjugate_a"));
  const bool left_side = params.left_side;
  const DType d = ComplexPartDType(aval.dtype);
  linalg_complex::CBuilder<E> c{e, d};
  linalg_plan::Builder<E>& b = c.b;
  J2O_ASSIGN_OR_RETURN(Z<E> a, c.Operand(0));
  J2O_ASSIGN_OR_RETURN(Z<E> rhs, c.Operand(1));
  J2O_ASSIGN_OR_RETURN(
      linalg_plan::TriangularSolveIndex<E> ix,
      linalg_plan::TriangularSolveIndices(b, aval, params, rank));
  V<E> m = ix.m, iota = ix.iota, rows = ix.rows;
  // Keep the named triangle of A, set a unit diagonal, conjugate, then form
  // op(A) (transposed for the right side as in the real recipe).
  Z<E> mat = c.Where(ix.tri, a, c.Zero());
  if (params.unit_diagonal) {
    mat = c.Where(b.Bin("Equal", rows, iota, DType::kBool),
                  {b.Scalar(1), b.Scalar(0)}, mat);
  }
  if (conjugate_a) mat = c.Conj(mat);
  const bool eff_lower = params.eff_lower;
  if (params.transpose) mat = c.Transpose(mat, rank);
  if (!left_side) rhs = c.Transpose(rhs, rank);
  V<E> last = b.Bin("Sub", m, b.ScalarI64(1), DType::kI64);
  V<E> x0 = b.ZerosLike(rhs.re, d);
  const plugin::CarriedType x_type(
      d, left_side ? aval.shape : plugin::SwapLast2(aval.shape));
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(m, {x0, x0}, {x_type, x_type},
             [&](V<E> it, const std::vector<V<E>>& carried)
                 -> absl::StatusOr<std::vector<V<E>>> {
               Z<E> x{carried[0], carried[1]};
               V<E> k = eff_lower ? it : b.Bin("Sub", last, it, DType::kI64);
               Z<E> a_row = c.Take(mat, k, rank - 2);  // [..., m]
               Z<E> b_row = c.Take(rhs, k, rank - 2);  // [..., n]
               Z<E> dots =
                   c.MatMul(c.Unsqueeze(a_row, rank - 2), x);  // [..., 1, n]
               Z<E> diag = c.Unsqueeze(
                   c.Unsqueeze(c.Take(a_row, k, rank - 2), rank - 2),
                   rank - 1);  // [..., 1, 1]
               Z<E> x_row =
                   Div(e, c.Sub(c.Unsqueeze(b_row, rank - 2), dots), diag, d);
               Z<E> next =
                   c.Where(b.Bin("Equal", rows, k, DType::kBool), x_row, x);
               return std::vector<V<E>>{next.re, next.im};
             }));
  Z<E> x{out[0], out[1]};
  if (!left_side) x = c.Transpose(x, rank);
  return c.SetOut(0, x);
}

// lu on c64/c128: linalg_plan.h's getf2 loop on the parts; the pivot row is
// the first of largest |Re| + |Im| (LAPACK's izamax), the column below a
// nonzero pivot is divided by it, and the rank-1 update is a complex outer
// product.
template <class E>
absl::Status LowerComplexLu(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 1 || eqn.outputs.size() != 3) {
    return absl::InvalidArgumentError("lu takes 1 operand, 3 results");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const int rank = aval.rank();
  if (rank < 2) {
    return absl::InvalidArgumentError("lu: operand rank must be >= 2");
  }
  const DType d = ComplexPartDType(aval.dtype);
  const DType piv_dt = eqn.outputs[1]->aval.dtype;
  const DType perm_dt = eqn.outputs[2]->aval.dtype;
  const jaxpr::Aval& piv_aval = eqn.outputs[1]->aval;
  linalg_complex::CBuilder<E> c{e, d};
  linalg_plan::Builder<E>& b = c.b;
  J2O_ASSIGN_OR_RETURN(Z<E> a, c.Operand(0));
  J2O_ASSIGN_OR_RETURN(
      linalg_plan::StepDims<E> dims,
      linalg_plan::ReadStepDims(b, aval, piv_aval.shape[rank - 2], rank));
  V<E> m = dims.m, steps = dims.steps;
  V<E> iota_m = dims.iota_m, iota_n = dims.iota_n, iota_k = dims.iota_k;
  V<E> rows = b.Unsqueeze(iota_m, 1, DType::kI64);
  auto [perm0, piv0] =
      linalg_plan::LuIotas(b, a.re, rank, iota_m, m, iota_k, steps);
  V<E> shape_a = e.Op("Shape", {a.re}, DType::kI64);
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(
          steps, {a.re, a.im, perm0, piv0},
          {plugin::CarriedType(d, aval.shape),
           plugin::CarriedType(d, aval.shape),
           plugin::CarriedType(DType::kI64, eqn.outputs[2]->aval.shape),
           plugin::CarriedType(DType::kI64, piv_aval.shape)},
          [&](V<E> k, const std::vector<V<E>>& carried)
              -> absl::StatusOr<std::vector<V<E>>> {
            Z<E> w{carried[0], carried[1]};
            V<E> perm = carried[2];
            V<E> pivots = carried[3];
            // Pivot row: first max |Re w[i, k]| + |Im w[i, k]| over i >= k.
            Z<E> col = c.Take(w, k, rank - 1);  // [..., m]
            V<E> cabs1 = b.Bin("Add", e.Op("Abs", {col.re}, d),
                               e.Op("Abs", {col.im}, d), d);
            auto [p, swap] = linalg_plan::LuPivotRow(b, cabs1, k, iota_m, rank);
            V<E> swap_rows = e.Op(
                "Expand", {b.Unsqueeze(swap, rank - 1, DType::kI64), shape_a},
                DType::kI64);
            auto gather_rows = [&](V<E> x) {
              return e.Op("GatherElements", {x, swap_rows}, d,
                          {OpAttr::Int("axis", rank - 2)});
            };
            w = {gather_rows(w.re), gather_rows(w.im)};
            perm = e.Op("GatherElements", {perm, swap}, DType::kI64,
                        {OpAttr::Int("axis", rank - 2)});
            pivots = b.Where(b.Bin("Equal", iota_k, k, DType::kBool), p, pivots,
                             DType::kI64);
            Z<E> row_k = c.Take(w, k, rank - 2);  // [..., n]
            Z<E> col_k = c.Take(w, k, rank - 1);  // [..., m]
            Z<E> pivot =
                c.Unsqueeze(c.Take(row_k, k, rank - 2), rank - 2);  // [..., 1]
            V<E> nonzero = e.Op("Not", {c.IsZero(pivot)}, DType::kBool);
            V<E> below = b.Bin("Greater", iota_m, k, DType::kBool);
            Z<E> l = c.Where(e.Op("And", {below, nonzero}, DType::kBool),
                             Div(e, col_k, pivot, d), c.Zero());  // [..., m]
            Z<E> u = c.Where(b.Bin("Greater", iota_n, k, DType::kBool), row_k,
                             c.Zero());  // [..., n]
            Z<E> update =
                Mul(e, c.Unsqueeze(l, rank - 1), c.Unsqueeze(u, rank - 2), d);
            w = c.Sub(w, update);
            V<E> l_cells = e.Op("And",
                                {b.Bin("Greater", rows, k, DType::kBool),
                                 b.Bin("Equal", iota_n, k, DType::kBool)},
                                DType::kBool);
            V<E> scaled = e.Op(
                "And", {l_cells, b.Unsqueeze(nonzero, rank - 1, DType::kBool)},
                DType::kBool);
            w = c.Where(scaled, c.Unsqueeze(l, rank - 1), w);
            return std::vector<V<E>>{w.re, w.im, perm, pivots};
          }));
  J2O_RETURN_IF_ERROR(c.SetOut(0, {out[0], out[1]}));
  J2O_RETURN_IF_ERROR(e.SetOut(1, b.Cast(out[3], piv_dt)));
  return e.SetOut(2, b.Cast(out[2], perm_dt));
}

// gtsv's complex algebra (cgtsv/zgtsv, plugin/gtsv_plan.h): a value is its
// (re, im) parts; a zero subdiagonal skips the elimination step; pivots
// compare cabs1 = |re| + |im|; products and quotients as complex_plan.h's
// Mul and Div.
template <class E>
struct ComplexGtsv {
  using T = Z<E>;
  static constexpr int kParts = 2;
  static constexpr bool kZeroSubdiagonalSkips = true;
  linalg_complex::CBuilder<E>& c;

  DType part_dtype() const { return c.d; }
  void Flatten(const T& x, std::vector<V<E>>& out) const {
    out.push_back(x.re);
    out.push_back(x.im);
  }
  T Unflatten(const std::vector<V<E>>& in, size_t at) const {
    return {in[at], in[at + 1]};
  }
  T Take(T x, V<E> k, int64_t axis) { return c.Take(x, k, axis); }
  T Unsqueeze(T x, int64_t axis) { return c.Unsqueeze(x, axis); }
  T Where(V<E> cond, T x, T y) { return c.Where(cond, x, y); }
  T Sub(T x, T y) { return c.Sub(x, y); }
  T Mul(T x, T y) { return complex::Mul(c.e, x, y, c.d); }
  T Div(T x, T y) { return complex::Div(c.e, x, y, c.d); }
  T Neg(T x) {
    return {c.e.Op("Neg", {x.re}, c.d), c.e.Op("Neg", {x.im}, c.d)};
  }
  T Zero() { return c.Zero(); }
  T Nan() {
    V<E> nan = c.b.Scalar(std::numeric_limits<double>::quiet_NaN());
    return {nan, nan};
  }
  V<E> IsZero(T x) { return c.IsZero(x); }
  V<E> NoInterchange(T d, T dl) {
    auto cabs1 = [&](T z) {
      return c.b.Bin("Add", c.e.Op("Abs", {z.re}, c.d),
                     c.e.Op("Abs", {z.im}, c.d), c.d);
    };
    return c.b.Bin("GreaterOrEqual", cabs1(d), cabs1(dl), DType::kBool);
  }
};

// tridiagonal_solve(dl, d, du, b) on c64/c128: zgtsv with partial pivoting,
// as JAX's CPU lowering runs it (plugin/gtsv_plan.h). perturb_singular is
// refused.
template <class E>
absl::Status LowerComplexTridiagonalSolve(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_RETURN_IF_ERROR(linalg_plan::CheckTridiagonalSolveEqn(eqn));
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;  // [..., m, n]
  const int rank = aval.rank();
  if (rank < 2) {
    return absl::InvalidArgumentError("tridiagonal_solve: b needs rank >= 2");
  }
  for (int i = 0; i < 4; ++i) {
    if (!jaxpr::IsComplex(OperandAval(eqn, i).dtype)) {
      return absl::InvalidArgumentError(
          "tridiagonal_solve: dl, d, du and b must all be complex");
    }
  }
  const DType d = ComplexPartDType(aval.dtype);
  linalg_complex::CBuilder<E> c{e, d};
  linalg_plan::Builder<E>& b = c.b;
  J2O_ASSIGN_OR_RETURN(Z<E> dl, c.Operand(0));
  J2O_ASSIGN_OR_RETURN(Z<E> diag, c.Operand(1));
  J2O_ASSIGN_OR_RETURN(Z<E> du, c.Operand(2));
  J2O_ASSIGN_OR_RETURN(Z<E> rhs, c.Operand(3));
  J2O_ASSIGN_OR_RETURN(V<E> m, b.Size(aval.shape[rank - 2]));
  const std::vector<jaxpr::DimExpr> diag_shape(aval.shape.begin(),
                                               aval.shape.end() - 1);
  ComplexGtsv<E> algebra{c};
  J2O_ASSIGN_OR_RETURN(Z<E> x, gtsv::Solve(e, algebra, b, dl, diag, du, rhs, m,
                                           rank, diag_shape, aval.shape));
  return c.SetOut(0, x);
}

}  // namespace jax2onnx::plugin::complex

#endif  // JAX2ONNX_PLUGIN_LINALG_COMPLEX_PLAN_H_
