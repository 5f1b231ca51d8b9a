// Reference kernels for the matrix factorizations and solves: cholesky,
// triangular_solve, lu, lu_pivots_to_permutation, qr, geqrf,
// householder_product, tridiagonal_solve, custom_linear_solve (eigh and svd:
// eigen_decompositions.cc). Written from the LAPACK
// routines JAX's CPU lowering calls (potrf, trsm, getrf) with plain loops in
// double, rounded once to the result dtype; leading dims are a batch.
// cholesky, triangular_solve, lu, qr, geqrf, householder_product, eigh and
// svd also take c64/c128 (computed in complex<double>, as LAPACK's z-routines);
// the other kernels are real only (f16/bf16/f32/f64) and refuse complex
// operands.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/eval/decompositions_internal.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/eval/linalg_internal.h"
#include "jaxpr/linear_solve_params.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx::jaxpr::linalg_internal {
namespace {

template <typename T>
T NaNOf() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if constexpr (std::is_same_v<T, Complex>) {
    return Complex(nan, nan);
  } else {
    return nan;
  }
}
// The pivot magnitude of getrf: |x| for real x, and for complex x LAPACK's
// cabs1 |Re x| + |Im x| (izamax, and JAX's own _lu_unblocked), not |x|.
double PivotMagnitude(double x) { return std::abs(x); }
double ImagPart(double) { return 0; }
double ImagPart(Complex x) { return x.imag(); }
double PivotMagnitude(Complex x) {
  return std::abs(x.real()) + std::abs(x.imag());
}

// potrf (lower): A = L Lᴴ from the lower triangle, column by column; the
// strict upper triangle keeps the input; a pivot that is not > 0 makes the
// whole matrix NaN (JAX replaces a failed factorization; NaN + NaN i for
// complex). The pivot is real: zpotrf reads only the real part of the
// diagonal (DBLE(A(J,J)) - ZDOTC) and stores L[j][j] with imaginary part 0.
template <typename T>
void CholeskyInPlace(int64_t n, T* m) {
  bool ok = true;
  for (int64_t j = 0; j < n && ok; ++j) {
    double s = RealPart(m[j * n + j]);
    for (int64_t p = 0; p < j; ++p) s -= AbsSquare(m[j * n + p]);
    if (!(s > 0)) {
      ok = false;
      break;
    }
    const double ljj = std::sqrt(s);
    m[j * n + j] = ljj;
    for (int64_t i = j + 1; i < n; ++i) {
      T t = m[i * n + j];
      for (int64_t p = 0; p < j; ++p) t -= m[i * n + p] * Conj(m[j * n + p]);
      m[i * n + j] = t / ljj;
    }
  }
  if (!ok) {
    for (int64_t i = 0; i < n * n; ++i) m[i] = NaNOf<T>();
  }
}

template <typename T>
Array Cholesky(const Array& in, const MatrixDims& d) {
  const int64_t n = d.rows;
  std::vector<T> a = Widen<T>(in);
  for (int64_t b = 0; b < d.batch; ++b)
    CholeskyInPlace(n, a.data() + b * n * n);
  return Narrow(a, in.dtype(), in.shape());
}

absl::StatusOr<std::vector<Array>> CholeskyKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 1) {
    return absl::InvalidArgumentError("cholesky takes 1 operand");
  }
  J2O_ASSIGN_OR_RETURN(MatrixDims d, Matrices(inputs[0], "cholesky", true));
  if (d.rows != d.cols) {
    return absl::InvalidArgumentError("cholesky: matrices must be square");
  }
  if (IsComplex(inputs[0].dtype())) {
    return std::vector<Array>{Cholesky<Complex>(inputs[0], d)};
  }
  return std::vector<Array>{Cholesky<double>(inputs[0], d)};
}

// trsm: op(A) X = B (left_side) or X op(A) = B, op(A) = A, Aᵀ (transpose_a),
// conj(A) (conjugate_a; JAX conjugates A before calling trsm) or Aᴴ (both);
// only the `lower` triangle of A is read, unit_diagonal reads no diagonal.
template <typename T>
Array TriangularSolve(const Array& a_in, const Array& b_in, int64_t batch,
                      bool left_side, bool lower, bool transpose_a,
                      bool conjugate_a, bool unit_diagonal) {
  const int64_t m = a_in.shape()[a_in.rank() - 1];
  const int64_t rows = b_in.shape()[b_in.rank() - 2];
  const int64_t cols = b_in.shape()[b_in.rank() - 1];
  std::vector<T> a = Widen<T>(a_in);
  std::vector<T> x = Widen<T>(b_in);
  for (int64_t b = 0; b < batch; ++b) {
    const T* am = a.data() + b * m * m;
    T* xm = x.data() + b * rows * cols;
    // op(A)[i][j], reading only the stored triangle.
    auto op = [&](int64_t i, int64_t j) -> T {
      if (transpose_a) std::swap(i, j);
      if (i == j && unit_diagonal) return T(1);
      if (i != j && (lower ? j > i : j < i)) return T(0);
      return conjugate_a ? Conj(am[i * m + j]) : am[i * m + j];
    };
    // op(A) lower <=> lower != transpose_a. Left: rows of X in dependency
    // order; right: X op(A) = B solves columns of X.
    const bool op_lower = lower != transpose_a;
    if (left_side) {
      for (int64_t c = 0; c < cols; ++c) {
        for (int64_t t = 0; t < m; ++t) {
          const int64_t k = op_lower ? t : m - 1 - t;
          T s = xm[k * cols + c];
          for (int64_t j = 0; j < m; ++j) {
            if (j != k && (op_lower ? j < k : j > k)) {
              s -= op(k, j) * xm[j * cols + c];
            }
          }
          xm[k * cols + c] = s / op(k, k);
        }
      }
    } else {
      // x_r op(A) = b_r: column k of op(A) couples x[k] with x[j], j on the
      // side op(A)[j][k] is stored: for lower op(A), j > k (back order).
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t t = 0; t < m; ++t) {
          const int64_t k = op_lower ? m - 1 - t : t;
          T s = xm[r * cols + k];
          for (int64_t j = 0; j < m; ++j) {
            if (j != k && (op_lower ? j > k : j < k)) {
              s -= xm[r * cols + j] * op(j, k);
            }
          }
          xm[r * cols + k] = s / op(k, k);
        }
      }
    }
  }
  return Narrow(x, b_in.dtype(), b_in.shape());
}

absl::StatusOr<std::vector<Array>> TriangularSolveKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 2) {
    return absl::InvalidArgumentError("triangular_solve takes 2 operands");
  }
  J2O_ASSIGN_OR_RETURN(bool left_side, ctx.params().GetBool("left_side"));
  J2O_ASSIGN_OR_RETURN(bool lower, ctx.params().GetBool("lower"));
  J2O_ASSIGN_OR_RETURN(bool transpose_a, ctx.params().GetBool("transpose_a"));
  J2O_ASSIGN_OR_RETURN(bool conjugate_a, ctx.params().GetBool("conjugate_a"));
  J2O_ASSIGN_OR_RETURN(bool unit_diagonal,
                       ctx.params().GetBool("unit_diagonal"));
  J2O_ASSIGN_OR_RETURN(MatrixDims da,
                       Matrices(inputs[0], "triangular_solve", true));
  J2O_ASSIGN_OR_RETURN(MatrixDims db,
                       Matrices(inputs[1], "triangular_solve", true));
  const int64_t m = da.rows;
  if (da.cols != m || da.batch != db.batch ||
      (left_side ? db.rows : db.cols) != m ||
      inputs[0].dtype() != inputs[1].dtype()) {
    return absl::InvalidArgumentError(
        absl::StrCat("triangular_solve: incompatible ", inputs[0].TypeString(),
                     " and ", inputs[1].TypeString()));
  }
  if (IsComplex(inputs[0].dtype())) {
    return std::vector<Array>{TriangularSolve<Complex>(
        inputs[0], inputs[1], da.batch, left_side, lower, transpose_a,
        conjugate_a, unit_diagonal)};
  }
  return std::vector<Array>{TriangularSolve<double>(
      inputs[0], inputs[1], da.batch, left_side, lower, transpose_a,
      /*conjugate_a=*/false, unit_diagonal)};
}

// Writes the permutation produced by applying `pivots` (row swaps k <->
// pivots[k], in order) to iota(m).
std::vector<int64_t> PivotsToPermutation(const int64_t* pivots, int64_t k,
                                         int64_t m) {
  std::vector<int64_t> perm(m);
  for (int64_t i = 0; i < m; ++i) perm[i] = i;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t p = pivots[i];
    if (p >= 0 && p < m) std::swap(perm[i], perm[p]);
  }
  return perm;
}

// getrf: partial pivoting (first row of largest PivotMagnitude(a[i][k]),
// i >= k), the column below a nonzero pivot scaled by 1/pivot, rank-1
// trailing update. Fills the factors in place and `pivots` [batch, steps].
template <typename T>
Array Lu(const Array& in, const MatrixDims& d, std::vector<int64_t>& pivots) {
  const int64_t m = d.rows, n = d.cols, steps = std::min(m, n);
  std::vector<T> a = Widen<T>(in);
  pivots.assign(d.batch * steps, 0);
  for (int64_t b = 0; b < d.batch; ++b) {
    T* w = a.data() + b * m * n;
    int64_t* piv = pivots.data() + b * steps;
    for (int64_t k = 0; k < steps; ++k) {
      int64_t p = k;
      double best = PivotMagnitude(w[k * n + k]);
      for (int64_t i = k + 1; i < m; ++i) {
        if (PivotMagnitude(w[i * n + k]) > best) {
          best = PivotMagnitude(w[i * n + k]);
          p = i;
        }
      }
      piv[k] = p;
      if (p != k) {
        for (int64_t j = 0; j < n; ++j) std::swap(w[k * n + j], w[p * n + j]);
      }
      const T pivot = w[k * n + k];
      const bool nonzero = pivot != T(0);
      if (nonzero) {
        for (int64_t i = k + 1; i < m; ++i) w[i * n + k] /= pivot;
      }
      for (int64_t i = k + 1; i < m; ++i) {
        const T l = nonzero ? w[i * n + k] : T(0);
        for (int64_t j = k + 1; j < n; ++j) w[i * n + j] -= l * w[k * n + j];
      }
    }
  }
  return Narrow(a, in.dtype(), in.shape());
}

absl::StatusOr<std::vector<Array>> LuKernel(const EvalContext& ctx,
                                            absl::Span<const Array> inputs) {
  if (inputs.size() != 1 || ctx.num_outputs() != 3) {
    return absl::InvalidArgumentError("lu takes 1 operand and has 3 results");
  }
  J2O_ASSIGN_OR_RETURN(MatrixDims d, Matrices(inputs[0], "lu", true));
  const int64_t m = d.rows, steps = std::min(d.rows, d.cols);
  std::vector<int64_t> pivots;
  Array factors = IsComplex(inputs[0].dtype())
                      ? Lu<Complex>(inputs[0], d, pivots)
                      : Lu<double>(inputs[0], d, pivots);
  std::vector<int64_t> perms(d.batch * m);
  for (int64_t b = 0; b < d.batch; ++b) {
    std::vector<int64_t> perm =
        PivotsToPermutation(pivots.data() + b * steps, steps, m);
    std::copy(perm.begin(), perm.end(), perms.begin() + b * m);
  }
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> piv_shape, ctx.OutputShape(1));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> perm_shape, ctx.OutputShape(2));
  return std::vector<Array>{std::move(factors),
                            Narrow(pivots, ctx.OutputDType(1), piv_shape),
                            Narrow(perms, ctx.OutputDType(2), perm_shape)};
}

absl::StatusOr<std::vector<Array>> LuPivotsToPermutationKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 1 || inputs[0].rank() < 1) {
    return absl::InvalidArgumentError(
        "lu_pivots_to_permutation takes 1 operand of rank >= 1");
  }
  J2O_ASSIGN_OR_RETURN(int64_t m, ctx.params().GetInt("permutation_size"));
  const Array& pivots = inputs[0];
  const int64_t k = pivots.shape().back();
  const int64_t batch = k == 0 ? 0 : pivots.num_elements() / k;
  std::vector<int64_t> piv = Widen<int64_t>(pivots);
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> out_shape, ctx.OutputShape(0));
  int64_t out_batch = 1;
  for (size_t i = 0; i + 1 < out_shape.size(); ++i) out_batch *= out_shape[i];
  std::vector<int64_t> perms;
  for (int64_t b = 0; b < out_batch; ++b) {
    std::vector<int64_t> perm = PivotsToPermutation(
        b < batch ? piv.data() + b * k : nullptr, b < batch ? k : 0, m);
    perms.insert(perms.end(), perm.begin(), perm.end());
  }
  return std::vector<Array>{Narrow(perms, ctx.OutputDType(0), out_shape)};
}

// LAPACK's dlarfg / zlarfg on (alpha, x[0..count) with `stride`): returns
// tau (0 for H = I: x == 0 and alpha real), scales x in place to the
// essential part of v (v[0] = 1) and sets alpha to beta, real, -sign(Re
// alpha) sqrt(|alpha|^2 + |x|^2). tau = (beta - alpha) / beta, which for
// complex alpha is zlarfg's ((beta - Re alpha) / beta, -Im alpha / beta);
// zlarfg also reflects when x is empty but alpha is not real, so a complex R
// has a real last diagonal entry.
template <typename T>
T MakeReflector(T& alpha, T* x, int64_t count, int64_t stride) {
  double xnorm2 = 0;
  for (int64_t i = 0; i < count; ++i) xnorm2 += AbsSquare(x[i * stride]);
  // dlarfg: XNORM = 0 gives TAU = 0 whatever ALPHA is (a NaN too);
  // zlarfg: XNORM = 0 and ALPHI = 0.
  if (xnorm2 == 0 && ImagPart(alpha) == 0) return T(0);
  const double norm = std::sqrt(AbsSquare(alpha) + xnorm2);
  const double beta = RealPart(alpha) < 0 ? norm : -norm;
  const T tau = (T(beta) - alpha) / beta;
  for (int64_t i = 0; i < count; ++i) x[i * stride] /= (alpha - beta);
  alpha = beta;
  return tau;
}

// H = I - tau v vᴴ applied as Hᴴ from the left to columns [c0, n) of the
// rows [j, m) of `r` (row-major, n columns), v = (1, r[j+1:, j]) read from
// column j (zgeqr2 applies ZLARF with conj(tau)).
template <typename T>
void ApplyReflectorLeft(T* r, int64_t m, int64_t n, int64_t j, const T* v,
                        T tau) {
  for (int64_t c = j + 1; c < n; ++c) {
    T dot = 0;
    for (int64_t i = j; i < m; ++i) dot += Conj(v[i]) * r[i * n + c];
    for (int64_t i = j; i < m; ++i) r[i * n + c] -= Conj(tau) * v[i] * dot;
  }
}

// Q = Q H = Q - tau (Q v) vᴴ for an m x m row-major Q, v zero above j.
template <typename T>
void ApplyReflectorRight(T* q, int64_t m, int64_t j, const T* v, T tau) {
  for (int64_t row = 0; row < m; ++row) {
    T dot = 0;
    for (int64_t i = j; i < m; ++i) dot += q[row * m + i] * v[i];
    for (int64_t i = j; i < m; ++i) q[row * m + i] -= tau * dot * Conj(v[i]);
  }
}

// Column pivoting of LAPACK's geqp3 (dlaqp2 / zlaqp2, all columns free):
// before step j the remaining column of largest partial norm vn1 (first on
// ties, idamax) is swapped into column j; after the reflection the partial
// norms of the trailing columns are downdated, vn1 *= sqrt(1 - (|r_jc| /
// vn1)²), or recomputed from rows j+1.. when the downdate has lost too much
// (temp * (vn1 / vn2)² <= tol3z = sqrt(eps), eps = dlamch('E') of the
// operand's dtype, 2^-24 or 2^-53).
struct ColumnPivots {
  std::vector<int64_t> perm;
  std::vector<double> vn1, vn2;
  double tol3z;
};

template <typename T>
ColumnPivots StartPivots(const std::vector<T>& r, int64_t m, int64_t n,
                         DType dtype) {
  ColumnPivots p;
  const bool single = dtype == DType::kF32 || dtype == DType::kC64;
  p.tol3z = std::sqrt(single ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53));
  p.perm.resize(n);
  p.vn1.assign(n, 0.0);
  for (int64_t c = 0; c < n; ++c) {
    p.perm[c] = c;
    for (int64_t i = 0; i < m; ++i) p.vn1[c] += AbsSquare(r[i * n + c]);
    p.vn1[c] = std::sqrt(p.vn1[c]);
  }
  p.vn2 = p.vn1;
  return p;
}

template <typename T>
void SwapInPivot(ColumnPivots& p, std::vector<T>& r, int64_t m, int64_t n,
                 int64_t j) {
  int64_t pvt = j;
  for (int64_t c = j + 1; c < n; ++c) {
    if (p.vn1[c] > p.vn1[pvt]) pvt = c;
  }
  if (pvt == j) return;
  for (int64_t i = 0; i < m; ++i) std::swap(r[i * n + pvt], r[i * n + j]);
  std::swap(p.perm[pvt], p.perm[j]);
  p.vn1[pvt] = p.vn1[j];
  p.vn2[pvt] = p.vn2[j];
}

template <typename T>
void UpdateNorms(ColumnPivots& p, const std::vector<T>& r, int64_t m, int64_t n,
                 int64_t j) {
  for (int64_t c = j + 1; c < n; ++c) {
    if (p.vn1[c] == 0) continue;
    const double ratio = std::sqrt(AbsSquare(r[j * n + c])) / p.vn1[c];
    const double temp = std::max(0.0, 1 - ratio * ratio);
    const double scaled = p.vn1[c] / p.vn2[c];
    if (temp * scaled * scaled <= p.tol3z) {
      double norm2 = 0;
      for (int64_t i = j + 1; i < m; ++i) norm2 += AbsSquare(r[i * n + c]);
      p.vn1[c] = p.vn2[c] = std::sqrt(norm2);
    } else {
      p.vn1[c] *= std::sqrt(temp);
    }
  }
}

// qr (geqrf + householder_product, LAPACK's dlarfg/zlarfg reflector
// convention: beta = -sign(Re alpha) |(alpha, x)|, so R's diagonal may be
// negative, and is real); with `pivoting` geqp3's column pivoting
// (ColumnPivots) and the permutation p (0-based, A[:, p] = Q R) as a third
// result.
template <typename T>
std::vector<Array> Qr(const Array& in, const MatrixDims& d, bool full,
                      bool pivoting, const std::vector<int64_t>& q_shape,
                      const std::vector<int64_t>& r_shape,
                      const std::vector<int64_t>& p_shape, DType p_dtype) {
  const int64_t m = d.rows, n = d.cols, k = std::min(m, n);
  const int64_t kq = full ? m : k;
  std::vector<T> all = Widen<T>(in);
  std::vector<T> qs, rs;
  std::vector<int64_t> ps;
  for (int64_t b = 0; b < d.batch; ++b) {
    std::vector<T> r(all.begin() + b * m * n, all.begin() + (b + 1) * m * n);
    std::vector<T> q(m * m, T(0));
    for (int64_t i = 0; i < m; ++i) q[i * m + i] = 1;
    ColumnPivots pivots;
    if (pivoting) pivots = StartPivots(r, m, n, in.dtype());
    for (int64_t j = 0; j < k; ++j) {
      if (pivoting) SwapInPivot(pivots, r, m, n, j);
      const T tau =
          MakeReflector(r[j * n + j], r.data() + (j + 1) * n + j, m - j - 1, n);
      if (tau != T(0)) {  // else H = I
        std::vector<T> v(m, T(0));
        v[j] = 1;
        for (int64_t i = j + 1; i < m; ++i) v[i] = r[i * n + j];
        ApplyReflectorLeft(r.data(), m, n, j, v.data(), tau);
        for (int64_t i = j + 1; i < m; ++i) r[i * n + j] = 0;
        ApplyReflectorRight(q.data(), m, j, v.data(), tau);
      }
      if (pivoting) UpdateNorms(pivots, r, m, n, j);
    }
    if (pivoting) ps.insert(ps.end(), pivots.perm.begin(), pivots.perm.end());
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t c = 0; c < kq; ++c) qs.push_back(q[i * m + c]);
    }
    for (int64_t i = 0; i < kq; ++i) {
      for (int64_t c = 0; c < n; ++c) rs.push_back(c >= i ? r[i * n + c] : 0.0);
    }
  }
  std::vector<Array> out = {Narrow(qs, in.dtype(), q_shape),
                            Narrow(rs, in.dtype(), r_shape)};
  if (pivoting) out.push_back(Narrow(ps, p_dtype, p_shape));
  return out;
}

absl::StatusOr<std::vector<Array>> QrKernel(const EvalContext& ctx,
                                            absl::Span<const Array> inputs) {
  bool pivoting = false;
  if (ctx.params().Has("pivoting")) {
    J2O_ASSIGN_OR_RETURN(pivoting, ctx.params().GetBool("pivoting"));
  }
  if (inputs.size() != 1 || ctx.num_outputs() != (pivoting ? 3 : 2)) {
    return absl::InvalidArgumentError(
        "qr takes 1 operand and has 2 results (3 with pivoting)");
  }
  J2O_ASSIGN_OR_RETURN(bool full, ctx.params().GetBool("full_matrices"));
  J2O_ASSIGN_OR_RETURN(MatrixDims d, Matrices(inputs[0], "qr", true));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> q_shape, ctx.OutputShape(0));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> r_shape, ctx.OutputShape(1));
  std::vector<int64_t> p_shape;
  DType p_dtype = DType::kI32;
  if (pivoting) {
    J2O_ASSIGN_OR_RETURN(p_shape, ctx.OutputShape(2));
    p_dtype = ctx.OutputDType(2);
  }
  if (IsComplex(inputs[0].dtype())) {
    return Qr<Complex>(inputs[0], d, full, pivoting, q_shape, r_shape, p_shape,
                       p_dtype);
  }
  return Qr<double>(inputs[0], d, full, pivoting, q_shape, r_shape, p_shape,
                    p_dtype);
}

// geqrf: LAPACK's compact QR (R above the diagonal, the reflectors' essential
// parts below, taus), the reflectors of Qr.
template <typename T>
std::vector<Array> Geqrf(const Array& in, const MatrixDims& d, DType tau_dtype,
                         const std::vector<int64_t>& tau_shape) {
  const int64_t m = d.rows, n = d.cols, k = std::min(m, n);
  std::vector<T> r = Widen<T>(in);
  std::vector<T> taus(d.batch * k, T(0));
  std::vector<T> v(m);
  for (int64_t b = 0; b < d.batch; ++b) {
    T* w = r.data() + b * m * n;
    for (int64_t j = 0; j < k; ++j) {
      const T tau =
          MakeReflector(w[j * n + j], w + (j + 1) * n + j, m - j - 1, n);
      taus[b * k + j] = tau;
      if (tau == T(0)) continue;
      v[j] = 1;
      for (int64_t i = j + 1; i < m; ++i) v[i] = w[i * n + j];
      ApplyReflectorLeft(w, m, n, j, v.data(), tau);
    }
  }
  return {Narrow(r, in.dtype(), in.shape()),
          Narrow(taus, tau_dtype, tau_shape)};
}

absl::StatusOr<std::vector<Array>> GeqrfKernel(const EvalContext& ctx,
                                               absl::Span<const Array> inputs) {
  if (inputs.size() != 1 || ctx.num_outputs() != 2) {
    return absl::InvalidArgumentError("geqrf takes 1 operand, 2 results");
  }
  J2O_ASSIGN_OR_RETURN(MatrixDims d, Matrices(inputs[0], "geqrf", true));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> tau_shape, ctx.OutputShape(1));
  if (IsComplex(inputs[0].dtype())) {
    return Geqrf<Complex>(inputs[0], d, ctx.OutputDType(1), tau_shape);
  }
  return Geqrf<double>(inputs[0], d, ctx.OutputDType(1), tau_shape);
}

// householder_product (LAPACK orgqr/ungqr): the first n columns of
// H_0 ... H_{k-1}, H_j = I - tau_j v_j v_jᴴ, v_j = (0, ..., 1, a[j+1:, j]).
template <typename T>
Array HouseholderProduct(const Array& a_in, const Array& taus_in,
                         const MatrixDims& d, int64_t k) {
  const int64_t m = d.rows, n = d.cols;
  const std::vector<T> a = Widen<T>(a_in);
  const std::vector<T> taus = Widen<T>(taus_in);
  std::vector<T> out, v(m);
  for (int64_t b = 0; b < d.batch; ++b) {
    const T* w = a.data() + b * m * n;
    std::vector<T> q(m * m, T(0));
    for (int64_t i = 0; i < m; ++i) q[i * m + i] = 1;
    for (int64_t j = 0; j < k; ++j) {
      v[j] = 1;
      for (int64_t i = j + 1; i < m; ++i) v[i] = w[i * n + j];
      ApplyReflectorRight(q.data(), m, j, v.data(), taus[b * k + j]);
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t c = 0; c < n; ++c) out.push_back(q[i * m + c]);
    }
  }
  return Narrow(out, a_in.dtype(), a_in.shape());
}

absl::StatusOr<std::vector<Array>> HouseholderProductKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 2) {
    return absl::InvalidArgumentError("householder_product takes (a, taus)");
  }
  J2O_ASSIGN_OR_RETURN(MatrixDims d,
                       Matrices(inputs[0], "householder_product", true));
  const int64_t m = d.rows, n = d.cols;
  const int64_t k = inputs[1].rank() == 0 ? 0 : inputs[1].shape().back();
  if (m < n || k > n || inputs[1].num_elements() != d.batch * k ||
      inputs[0].dtype() != inputs[1].dtype()) {
    return absl::InvalidArgumentError(
        absl::StrCat("householder_product: incompatible ",
                     inputs[0].TypeString(), " and ", inputs[1].TypeString()));
  }
  if (IsComplex(inputs[0].dtype())) {
    return std::vector<Array>{
        HouseholderProduct<Complex>(inputs[0], inputs[1], d, k)};
  }
  return std::vector<Array>{
      HouseholderProduct<double>(inputs[0], inputs[1], d, k)};
}

// tridiagonal_solve(dl, d, du, b) as JAX's CPU lowering runs it: LAPACK
// gtsv (LAPACK 3.12 dgtsv.f for real, zgtsv.f for complex: Gaussian
// elimination with partial pivoting and a second superdiagonal du2), per
// batch member, with JAX's dl[k + 1] as LAPACK's DL(k) (jaxlib passes
// `dl + 1`); a member whose gtsv info is not 0 (an exactly zero pivot)
// becomes all NaN, as _tridiagonal_solve_cpu_lowering substitutes.
template <typename T>
double PivotMagnitude(T v) {
  if constexpr (std::is_same_v<T, Complex>) {
    return std::abs(v.real()) + std::abs(v.imag());  // zgtsv's CABS1
  } else {
    return std::abs(v);
  }
}

template <typename T>
Array TridiagonalSolve(absl::Span<const Array> inputs, const MatrixDims& db) {
  constexpr bool kComplex = std::is_same_v<T, Complex>;
  const int64_t m = db.rows, n = db.cols;
  const std::vector<T> dl_in = Widen<T>(inputs[0]);
  const std::vector<T> d_in = Widen<T>(inputs[1]);
  const std::vector<T> du_in = Widen<T>(inputs[2]);
  std::vector<T> x = Widen<T>(inputs[3]);
  const T zero(0);
  for (int64_t bt = 0; bt < db.batch; ++bt) {
    const int64_t o = bt * m;
    // LAPACK's arrays, 0-based: DL[k] couples rows k and k+1.
    std::vector<T> dl(m, zero), d(d_in.begin() + o, d_in.begin() + o + m),
        du(du_in.begin() + o, du_in.begin() + o + m), du2(m, zero);
    for (int64_t k = 0; k + 1 < m; ++k) dl[k] = dl_in[o + k + 1];
    auto rhs = [&](int64_t i, int64_t c) -> T& { return x[(o + i) * n + c]; };
    bool singular = false;
    for (int64_t k = 0; k + 1 < m && !singular; ++k) {
      const bool last = k + 2 == m;
      if (kComplex && dl[k] == zero) {
        singular = d[k] == zero;  // zgtsv: nothing to eliminate
      } else if (PivotMagnitude(d[k]) >= PivotMagnitude(dl[k])) {
        if (!kComplex && d[k] == zero) {
          singular = true;  // dgtsv: INFO = K
          break;
        }
        const T fact = dl[k] / d[k];
        d[k + 1] = d[k + 1] - fact * du[k];
        for (int64_t c = 0; c < n; ++c) {
          rhs(k + 1, c) = rhs(k + 1, c) - fact * rhs(k, c);
        }
        dl[k] = zero;
      } else {
        const T fact = d[k] / dl[k];
        d[k] = dl[k];
        const T temp = d[k + 1];
        d[k + 1] = du[k] - fact * temp;
        if (!last) {
          du2[k] = du[k + 1];
          du[k + 1] = -fact * du2[k];
        }
        du[k] = temp;
        for (int64_t c = 0; c < n; ++c) {
          const T t = rhs(k, c);
          rhs(k, c) = rhs(k + 1, c);
          rhs(k + 1, c) = t - fact * rhs(k + 1, c);
        }
      }
    }
    if (!singular && d[m - 1] == zero) singular = true;
    for (int64_t c = 0; c < n; ++c) {
      if (singular) {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        for (int64_t i = 0; i < m; ++i) {
          if constexpr (kComplex) {
            rhs(i, c) = T(nan, nan);
          } else {
            rhs(i, c) = nan;
          }
        }
        continue;
      }
      for (int64_t i = m - 1; i >= 0; --i) {
        T r = rhs(i, c);
        if (i + 1 < m) r = r - du[i] * rhs(i + 1, c);
        if (i + 2 < m) r = r - du2[i] * rhs(i + 2, c);
        rhs(i, c) = r / d[i];
      }
    }
  }
  return Narrow(x, inputs[3].dtype(), inputs[3].shape());
}

absl::StatusOr<std::vector<Array>> TridiagonalSolveKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 4) {
    return absl::InvalidArgumentError("tridiagonal_solve takes (dl, d, du, b)");
  }
  J2O_ASSIGN_OR_RETURN(MatrixDims db,
                       Matrices(inputs[3], "tridiagonal_solve", true));
  const int64_t m = db.rows;
  for (int i = 0; i < 3; ++i) {
    if (inputs[i].num_elements() != db.batch * m ||
        inputs[i].dtype() != inputs[3].dtype()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tridiagonal_solve: diagonal ", inputs[i].TypeString(),
                       " does not match b ", inputs[3].TypeString()));
    }
  }
  if (IsComplex(inputs[3].dtype())) {
    return std::vector<Array>{TridiagonalSolve<Complex>(inputs, db)};
  }
  return std::vector<Array>{TridiagonalSolve<double>(inputs, db)};
}

// custom_linear_solve: the solve jaxpr applied to (its consts, b).
absl::StatusOr<std::vector<Array>> CustomLinearSolveKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  J2O_ASSIGN_OR_RETURN(LinearSolveParts parts,
                       ReadLinearSolveParams(ctx.params()));
  const int64_t num_in = static_cast<int64_t>(inputs.size());
  if (parts.all_consts > num_in) {
    return absl::InvalidArgumentError(absl::StrCat(
        "custom_linear_solve: const_lengths name ", parts.all_consts,
        " consts but the equation has ", num_in, " operands"));
  }
  std::vector<Array> args(
      inputs.begin() + parts.solve_consts_begin,
      inputs.begin() + parts.solve_consts_begin + parts.solve_consts);
  args.insert(args.end(), inputs.begin() + parts.all_consts, inputs.end());
  return ctx.Call(*parts.solve, {}, args);
}

}  // namespace

void RegisterDecompositionKernels() {
  RegisterEvalKernel("custom_linear_solve", CustomLinearSolveKernel);
  RegisterEvalKernel("qr", QrKernel);
  RegisterEvalKernel("geqrf", GeqrfKernel);
  RegisterEvalKernel("householder_product", HouseholderProductKernel);
  RegisterEvalKernel("tridiagonal_solve", TridiagonalSolveKernel);
  RegisterEvalKernel("cholesky", CholeskyKernel);
  RegisterEvalKernel("triangular_solve", TriangularSolveKernel);
  RegisterEvalKernel("lu", LuKernel);
  RegisterEvalKernel("lu_pivots_to_permutation", LuPivotsToPermutationKernel);
}

}  // namespace jax2onnx::jaxpr::linalg_internal
