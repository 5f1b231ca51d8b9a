// Reference kernels for eigh and svd (split from decompositions.cc): cyclic
// Jacobi to convergence in double (symmetric) or complex<double> (Hermitian),
// and svd from the eigen decomposition of the Gram matrix. Leading dims are a
// batch; results are rounded once to the result dtype.
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
#include "jaxpr/status_macros.h"

namespace jax2onnx::jaxpr::linalg_internal {
namespace {

inline double Re(double x) { return x; }
inline double Re(Complex x) { return x.real(); }
inline bool HasNaN(double x) { return std::isnan(x); }
inline bool HasNaN(Complex x) {
  return std::isnan(x.real()) || std::isnan(x.imag());
}
// NaN, or NaN + NaN i (JAX's _nan_like_hlo).
template <typename T>
T AllNaN() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if constexpr (std::is_same_v<T, Complex>) {
    return Complex(nan, nan);
  } else {
    return nan;
  }
}

// The rotation of the pair (p, q) in cyclic Jacobi: rows p, q of A become
// c a_p - su a_q and su_conj a_p + c a_q, columns p, q (of A and V)
// c a_p - su_conj a_q and su a_p + c a_q. False when a_pq == 0 (no
// rotation).
template <typename T>
struct PairRotation {
  double c;
  T su, su_conj;
};

// Symmetric: Golub & Van Loan's sym.schur2 on (a_pp, a_qq, a_pq), the signed
// a_pq in tau; su = su_conj = s.
bool RotationOf(double app, double aqq, double apq, PairRotation<double>& rot) {
  if (apq == 0) return false;
  const double tau = (aqq - app) / (2 * apq);
  const double t =
      (tau >= 0 ? 1.0 : -1.0) / (std::abs(tau) + std::sqrt(1 + tau * tau));
  const double c = 1 / std::sqrt(1 + t * t), s = t * c;
  rot = {c, s, s};
  return true;
}

// Hermitian: W = D G Dᴴ, D = diag(1, conj(u)) in the (p, q) plane, u =
// a_pq / |a_pq|, G the real rotation of (a_pp, a_qq, |a_pq|) (Dᴴ A D has
// the real entry |a_pq| at (p, q)); su = s u.
bool RotationOf(Complex app, Complex aqq, Complex apq,
                PairRotation<Complex>& rot) {
  const double r = std::abs(apq);
  if (r == 0) return false;
  const Complex u = apq / r;
  const double tau = (aqq.real() - app.real()) / (2 * r);
  const double t =
      (tau >= 0 ? 1.0 : -1.0) / (std::abs(tau) + std::sqrt(1 + tau * tau));
  const double c = 1 / std::sqrt(1 + t * t), s = t * c;
  const Complex su = s * u;
  rot = {c, su, std::conj(su)};
  return true;
}

// Cyclic two-sided Jacobi on the symmetric (T = double) or Hermitian (T =
// Complex) n x n matrix `a` (row-major), to convergence (the rotation per
// pair: RotationOf); returns the eigenvalues ascending (the real parts of
// the diagonal) and the eigenvector columns in `v` permuted alike (stable
// order for ties).
template <typename T>
void JacobiEigen(int64_t n, std::vector<T>& a, std::vector<double>& w,
                 std::vector<T>& v) {
  v.assign(n * n, T(0));
  for (int64_t i = 0; i < n; ++i) v[i * n + i] = 1;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, total = 0;
    for (int64_t i = 0; i < n * n; ++i) total += std::norm(a[i]);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (i != j) off += std::norm(a[i * n + j]);
      }
    }
    if (off <= 1e-32 * total || off == 0) break;
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        PairRotation<T> rot;
        if (!RotationOf(a[p * n + p], a[q * n + q], a[p * n + q], rot)) {
          continue;
        }
        const double c = rot.c;
        const T su = rot.su, su_conj = rot.su_conj;
        for (int64_t k = 0; k < n; ++k) {  // rows p, q: Wᴴ A
          const T x = a[p * n + k], y = a[q * n + k];
          a[p * n + k] = c * x - su * y;
          a[q * n + k] = su_conj * x + c * y;
        }
        for (int64_t k = 0; k < n; ++k) {  // columns p, q: (Wᴴ A) W, V W
          const T x = a[k * n + p], y = a[k * n + q];
          a[k * n + p] = c * x - su_conj * y;
          a[k * n + q] = su * x + c * y;
          const T vx = v[k * n + p], vy = v[k * n + q];
          v[k * n + p] = c * vx - su_conj * vy;
          v[k * n + q] = su * vx + c * vy;
        }
      }
    }
  }
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return Re(a[x * n + x]) < Re(a[y * n + y]);
  });
  w.resize(n);
  std::vector<T> sorted(n * n);
  for (int64_t j = 0; j < n; ++j) {
    w[j] = Re(a[order[j] * n + order[j]]);
    for (int64_t k = 0; k < n; ++k) sorted[k * n + j] = v[k * n + order[j]];
  }
  v = std::move(sorted);
}

// eigh (LAPACK syevd / heevd): eigenvalues ascending, eigenvectors as
// columns, from the `lower` (or upper) triangle. Vectors are unique up to
// sign (a unit complex factor for complex operands).
absl::StatusOr<std::vector<Array>> EighKernel(const EvalContext& ctx,
                                              absl::Span<const Array> inputs) {
  if (inputs.size() != 1 || ctx.num_outputs() != 2) {
    return absl::InvalidArgumentError("eigh takes 1 operand, 2 results");
  }
  J2O_ASSIGN_OR_RETURN(bool lower, ctx.params().GetBool("lower"));
  J2O_ASSIGN_OR_RETURN(MatrixDims d, Matrices(inputs[0], "eigh", true));
  const int64_t n = d.rows;
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> w_shape, ctx.OutputShape(1));
  // The symmetric (Hermitian: syevd / zheevd read the diagonal's real part)
  // matrix of the stored triangle of each batch member.
  auto eigh = [&](const auto& all) -> absl::StatusOr<std::vector<Array>> {
    using T = typename std::decay_t<decltype(all)>::value_type;
    std::vector<T> vs;
    std::vector<double> ws;
    for (int64_t b = 0; b < d.batch; ++b) {
      std::vector<T> a(n * n);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          const bool stored = lower ? j < i : j > i;
          a[i * n + j] = i == j   ? T(Re(all[b * n * n + i * n + i]))
                         : stored ? all[b * n * n + i * n + j]
                                  : Conj(all[b * n * n + j * n + i]);
        }
      }
      std::vector<double> w;
      std::vector<T> v;
      JacobiEigen(n, a, w, v);
      vs.insert(vs.end(), v.begin(), v.end());
      ws.insert(ws.end(), w.begin(), w.end());
    }
    return std::vector<Array>{Narrow(vs, inputs[0].dtype(), inputs[0].shape()),
                              Narrow(ws, ctx.OutputDType(1), w_shape)};
  };
  if (IsComplex(inputs[0].dtype())) return eigh(Widen<Complex>(inputs[0]));
  return eigh(Widen<double>(inputs[0]));
}

// Replaces column c of the r x cols matrix q (row-major) by the standard
// basis vector e_j whose residual against q's columns (Gram-Schmidt,
// applied twice) is longest, first j on ties, normalized. Zero columns
// (those being filled) project nothing; with orthonormal nonzero columns
// the residuals' squared norms sum to r minus their count, so the longest
// is >= sqrt(1 / r): no cancellation. The lowering's FillColumns does the
// same in the same order.
template <typename T>
void FillColumn(std::vector<T>& q, int64_t r, int64_t cols, int64_t c) {
  std::vector<T> best;
  double best_norm = -1;
  for (int64_t j = 0; j < r; ++j) {
    std::vector<T> x(r, T(0));
    x[j] = 1;
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t l = 0; l < cols; ++l) {
        T dot = 0;  // q_lᴴ x
        for (int64_t i = 0; i < r; ++i) dot += Conj(q[i * cols + l]) * x[i];
        for (int64_t i = 0; i < r; ++i) x[i] -= q[i * cols + l] * dot;
      }
    }
    double norm = 0;
    for (int64_t i = 0; i < r; ++i) norm += std::norm(x[i]);
    if (norm > best_norm) {
      best_norm = norm;
      best = x;
    }
  }
  const double scale = 1 / std::sqrt(best_norm);
  for (int64_t i = 0; i < r; ++i) q[i * cols + c] = best[i] * scale;
}

// Extends the r x k matrix u (row-major, orthonormal columns) to r x r with
// orthonormal (unitary) columns, filling columns k .. r-1 in order. The
// completion is not unique (LAPACK's differs); only its orthonormality is
// specified.
template <typename T>
std::vector<T> CompleteColumns(const std::vector<T>& u, int64_t r, int64_t k) {
  std::vector<T> q(r * r, T(0));
  for (int64_t i = 0; i < r; ++i) {
    for (int64_t j = 0; j < k; ++j) q[i * r + j] = u[i * k + j];
  }
  for (int64_t c = k; c < r; ++c) FillColumn(q, r, r, c);
  return q;
}

// svd from the eigen-decomposition of the Gram matrix in double: Aᴴ A = V
// S² Vᴴ (or A Aᴴ = U S² Uᴴ when m < n), U = A V / s. Double precision
// keeps the squared condition number harmless for the well-conditioned
// matrices the tests use. With `full` and m != n the longer side's factor
// is completed to a square one by CompleteColumns. T is double or Complex
// (Hermitian Gram matrix, vh = Vᴴ).
template <typename T>
void Svd(const std::vector<T>& all, const MatrixDims& d, bool full,
         std::vector<double>& ss, std::vector<T>& us, std::vector<T>& vhs) {
  const int64_t m = d.rows, n = d.cols, k = std::min(m, n);
  const bool wide = m < n;
  for (int64_t b = 0; b < d.batch; ++b) {
    const size_t s_begin = ss.size(), u_begin = us.size(),
                 vh_begin = vhs.size();
    // Work on the tall matrix T (rows r >= cols k): A or Aᴴ.
    const int64_t r = wide ? n : m;
    auto t_at = [&](int64_t i, int64_t j) -> T {
      return wide ? Conj(all[b * m * n + j * n + i])
                  : all[b * m * n + i * n + j];
    };
    std::vector<T> gram(k * k, T(0));
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        for (int64_t l = 0; l < r; ++l)
          gram[i * k + j] += Conj(t_at(l, i)) * t_at(l, j);
      }
    }
    std::vector<double> w;
    std::vector<T> v;
    JacobiEigen(k, gram, w, v);  // ascending
    std::vector<double> s(k);
    std::vector<T> u(r * k), vh(k * k);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t src = k - 1 - j;  // descending
      s[j] = std::sqrt(std::max(w[src], 0.0));
      for (int64_t i = 0; i < k; ++i) vh[j * k + i] = Conj(v[i * k + src]);
      for (int64_t l = 0; l < r; ++l) {
        T acc = 0;
        for (int64_t i = 0; i < k; ++i) acc += t_at(l, i) * v[i * k + src];
        u[l * k + j] = s[j] > 0 ? acc / s[j] : T(0);
      }
    }
    ss.insert(ss.end(), s.begin(), s.end());
    // Zero singular values (sorted last) leave zero columns in A V / s;
    // LAPACK's are unit vectors orthogonal to the rest: filled from the
    // last backwards, as the lowering does.
    for (int64_t j = k - 1; j >= 0 && s[j] == 0; --j) FillColumn(u, r, k, j);
    if (full && r > k) {
      u = CompleteColumns(u, r, k);
    }
    const int64_t uk = full ? r : k;  // u's columns
    if (!wide) {
      us.insert(us.end(), u.begin(), u.end());
      vhs.insert(vhs.end(), vh.begin(), vh.end());
    } else {  // A = Tᴴ = V S Uᴴ: U_A = V, Vᴴ_A = Uᴴ
      for (int64_t i = 0; i < k; ++i) {
        for (int64_t j = 0; j < k; ++j) us.push_back(Conj(vh[j * k + i]));
      }
      for (int64_t j = 0; j < uk; ++j) {
        for (int64_t l = 0; l < r; ++l) vhs.push_back(Conj(u[l * uk + j]));
      }
    }
    // JAX on CPU: LAPACK ?gesdd returns INFO = -4 for a matrix with a NaN
    // (its max-abs norm ?LANGE('M') is NaN), and JAX's svd lowering sets
    // s, u and vt of every member with info != 0 to NaN.
    if (std::any_of(all.begin() + b * m * n, all.begin() + (b + 1) * m * n,
                    [](const T& x) { return HasNaN(x); })) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      std::fill(ss.begin() + s_begin, ss.end(), nan);
      std::fill(us.begin() + u_begin, us.end(), AllNaN<T>());
      std::fill(vhs.begin() + vh_begin, vhs.end(), AllNaN<T>());
    }
  }
}

absl::StatusOr<std::vector<Array>> SvdKernel(const EvalContext& ctx,
                                             absl::Span<const Array> inputs) {
  if (inputs.size() != 1) {
    return absl::InvalidArgumentError("svd takes 1 operand");
  }
  J2O_ASSIGN_OR_RETURN(bool compute_uv, ctx.params().GetBool("compute_uv"));
  J2O_ASSIGN_OR_RETURN(bool full, ctx.params().GetBool("full_matrices"));
  J2O_ASSIGN_OR_RETURN(MatrixDims d, Matrices(inputs[0], "svd", true));
  std::vector<double> ss;
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> s_shape, ctx.OutputShape(0));
  std::vector<Array> out;
  auto finish = [&](const auto& us, const auto& vhs) -> absl::Status {
    out.push_back(Narrow(ss, ctx.OutputDType(0), s_shape));
    if (compute_uv) {
      J2O_ASSIGN_OR_RETURN(std::vector<int64_t> u_shape, ctx.OutputShape(1));
      J2O_ASSIGN_OR_RETURN(std::vector<int64_t> vt_shape, ctx.OutputShape(2));
      out.push_back(Narrow(us, ctx.OutputDType(1), u_shape));
      out.push_back(Narrow(vhs, ctx.OutputDType(2), vt_shape));
    }
    return absl::OkStatus();
  };
  if (IsComplex(inputs[0].dtype())) {
    std::vector<Complex> us, vhs;
    Svd<Complex>(Widen<Complex>(inputs[0]), d, compute_uv && full, ss, us, vhs);
    J2O_RETURN_IF_ERROR(finish(us, vhs));
  } else {
    std::vector<double> us, vhs;
    Svd<double>(Widen<double>(inputs[0]), d, compute_uv && full, ss, us, vhs);
    J2O_RETURN_IF_ERROR(finish(us, vhs));
  }
  return out;
}

}  // namespace

void RegisterGeneralEigenKernel();  // eig_general.cc

void RegisterEigenKernels() {
  RegisterEvalKernel("eigh", EighKernel);
  RegisterEvalKernel("svd", SvdKernel);
  RegisterGeneralEigenKernel();
}

}  // namespace jax2onnx::jaxpr::linalg_internal
