// Reference kernels of the LAPACK-style products and reductions JAX's
// lax.linalg exposes beside the factorizations: symmetric_product (syrk),
// cholesky_update, ormqr and hessenberg (gehrd). Plain loops in double,
// rounded once to the result dtype; real operands only (JAX's
// symmetric_product and cholesky_update take f32/f64; complex ormqr is
// refused before the interpreter by the lowerings' dtype checks and here by
// Matrices()), but hessenberg, which takes c64/c128 too (zgehd2).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/eval/decompositions_internal.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/eval/linalg_internal.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/tridiagonal.h"

namespace jax2onnx::jaxpr::linalg_internal {
namespace {

// symmetric_product(a, c) = alpha a aᵀ + beta c for a [..., n, k], c
// [..., n, n] (JAX's CPU lowering, _symmetric_product_jax_fn: the whole
// matrix, not only the lower triangle syrk would write).
absl::StatusOr<std::vector<Array>> SymmetricProductKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 2) {
    return absl::InvalidArgumentError("symmetric_product takes (a, c)");
  }
  J2O_ASSIGN_OR_RETURN(double alpha, ctx.params().GetFloat("alpha"));
  J2O_ASSIGN_OR_RETURN(double beta, ctx.params().GetFloat("beta"));
  J2O_ASSIGN_OR_RETURN(MatrixDims da, Matrices(inputs[0], "symmetric_product"));
  J2O_ASSIGN_OR_RETURN(MatrixDims dc, Matrices(inputs[1], "symmetric_product"));
  if (dc.rows != dc.cols || da.rows != dc.rows || da.batch != dc.batch) {
    return absl::InvalidArgumentError(absl::StrCat(
        "symmetric_product: a ", inputs[0].TypeString(), " and c ",
        inputs[1].TypeString(), " are not [..., n, k] and [..., n, n]"));
  }
  const int64_t n = dc.rows, k = da.cols;
  const std::vector<double> a = Widen<double>(inputs[0]);
  std::vector<double> c = Widen<double>(inputs[1]);
  for (int64_t b = 0; b < dc.batch; ++b) {
    const double* am = a.data() + b * n * k;
    double* cm = c.data() + b * n * n;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int64_t l = 0; l < k; ++l) dot += am[i * k + l] * am[j * k + l];
        cm[i * n + j] = alpha * dot + beta * cm[i * n + j];
      }
    }
  }
  return std::vector<Array>{Narrow(c, inputs[1].dtype(), inputs[1].shape())};
}

// cholesky_update(r, w): JAX's _cholesky_update_jax_fn (its CPU lowering),
// step k rotates row k of r and w by the Givens rotation (c, s) of
// (r[k][k], w[k]) (drotg: (1, 0) when w[k] == 0, else both scaled by the
// larger magnitude, rh = 1 / sqrt(x² + y²), c = x rh, s = -y rh):
// row_k <- c row_k - s w, w <- c w + s row_k, whole rows.
absl::StatusOr<std::vector<Array>> CholeskyUpdateKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 2 || inputs[0].rank() != 2 || inputs[1].rank() != 1 ||
      inputs[0].shape()[0] != inputs[0].shape()[1] ||
      inputs[1].shape()[0] != inputs[0].shape()[0]) {
    return absl::InvalidArgumentError(
        "cholesky_update takes a square matrix r [n, n] and a vector w [n]");
  }
  J2O_RETURN_IF_ERROR(Matrices(inputs[0], "cholesky_update").status());
  const int64_t n = inputs[1].shape()[0];
  std::vector<double> r = Widen<double>(inputs[0]);
  std::vector<double> w = Widen<double>(inputs[1]);
  for (int64_t k = 0; k < n; ++k) {
    double c = 1, s = 0;
    if (w[k] != 0) {
      double x = r[k * n + k], y = w[k];
      const double denominator =
          std::abs(x) > std::abs(y) ? std::abs(x) : std::abs(y);
      x /= denominator;
      y /= denominator;
      const double rh = 1 / std::sqrt(x * x + y * y);
      c = x * rh;
      s = -y * rh;
    }
    for (int64_t j = 0; j < n; ++j) {
      const double row = r[k * n + j];
      r[k * n + j] = c * row - s * w[j];
      w[j] = c * w[j] + s * row;
    }
  }
  return std::vector<Array>{Narrow(r, inputs[0].dtype(), inputs[0].shape())};
}

// ormqr(a, taus, c): JAX's reflector loop (_ormqr_lowering; LAPACK ormqr on
// CPU computes the same product): H_i = I - tau_i v_i v_iᵀ with v_i column i
// of a below the diagonal and 1 on it; Q = H_0 ... H_{k-1} applied as Q c,
// Qᵀ c, c Q or c Qᵀ (reflectors in reverse where left != transpose).
absl::StatusOr<std::vector<Array>> OrmqrKernel(const EvalContext& ctx,
                                               absl::Span<const Array> inputs) {
  if (inputs.size() != 3) {
    return absl::InvalidArgumentError("ormqr takes (a, taus, c)");
  }
  J2O_ASSIGN_OR_RETURN(bool left, ctx.params().GetBool("left"));
  J2O_ASSIGN_OR_RETURN(bool transpose, ctx.params().GetBool("transpose"));
  J2O_ASSIGN_OR_RETURN(MatrixDims da, Matrices(inputs[0], "ormqr"));
  J2O_ASSIGN_OR_RETURN(MatrixDims dc, Matrices(inputs[2], "ormqr"));
  const int64_t m = da.rows, n = da.cols;
  const int64_t k = inputs[1].rank() > 0 ? inputs[1].shape().back() : 0;
  const int64_t rows = dc.rows, cols = dc.cols;
  if (da.batch != dc.batch || inputs[1].num_elements() != da.batch * k ||
      k > n || (left ? rows : cols) != m) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ormqr: a ", inputs[0].TypeString(), ", taus ", inputs[1].TypeString(),
        " and c ", inputs[2].TypeString(), " do not fit"));
  }
  const std::vector<double> a = Widen<double>(inputs[0]);
  const std::vector<double> taus = Widen<double>(inputs[1]);
  std::vector<double> c = Widen<double>(inputs[2]);
  const bool reverse = left != transpose;
  std::vector<double> v(m), dots;
  for (int64_t b = 0; b < da.batch; ++b) {
    const double* am = a.data() + b * m * n;
    double* cm = c.data() + b * rows * cols;
    for (int64_t step = 0; step < k; ++step) {
      const int64_t i = reverse ? k - 1 - step : step;
      const double tau = taus[b * k + i];
      for (int64_t r = 0; r < m; ++r) {
        v[r] = r < i ? 0.0 : r == i ? 1.0 : am[r * n + i];
      }
      if (left) {  // c -= tau v (vᵀ c)
        dots.assign(cols, 0.0);
        for (int64_t r = 0; r < m; ++r) {
          for (int64_t j = 0; j < cols; ++j) dots[j] += v[r] * cm[r * cols + j];
        }
        for (int64_t r = 0; r < m; ++r) {
          for (int64_t j = 0; j < cols; ++j) {
            cm[r * cols + j] -= tau * v[r] * dots[j];
          }
        }
      } else {  // c -= tau (c v) vᵀ
        dots.assign(rows, 0.0);
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t j = 0; j < m; ++j) dots[r] += cm[r * cols + j] * v[j];
        }
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t j = 0; j < m; ++j) {
            cm[r * cols + j] -= tau * dots[r] * v[j];
          }
        }
      }
    }
  }
  return std::vector<Array>{Narrow(c, inputs[2].dtype(), inputs[2].shape())};
}

// hessenberg(a) -> (h, taus): LAPACK dgehd2 / zgehd2 (ilo = 1, ihi = n,
// what JAX's CPU gehrd computes up to rounding): for i < n - 1, dlarfg /
// zlarfg on a[i+1:, i] (alpha = a[i+1, i], x = a[i+2:, i]; H = I, tau = 0
// when x == 0 and Im alpha == 0; else beta = -sign(Re alpha)
// sqrt(|alpha|² + ||x||²), real, tau = ((beta - Re alpha) / beta,
// -Im alpha / beta), v = (1, x / (alpha - beta))), a <- a H on the columns
// after i (H = I - tau v vᴴ), a <- Hᴴ a on the rows and columns after i,
// column i <- (beta, v's essential part) below the diagonal. For complex
// input every subdiagonal entry comes out real (zlarfg reflects even an
// empty x when Im alpha != 0).
template <typename T>
std::vector<Array> Hessenberg(const Array& input, const MatrixDims& d) {
  const int64_t n = d.rows, k = std::max<int64_t>(n - 1, 0);
  auto conj = [](T z) {
    if constexpr (std::is_same_v<T, Complex>) {
      return std::conj(z);
    } else {
      return z;
    }
  };
  auto imag = [](T z) {
    if constexpr (std::is_same_v<T, Complex>) {
      return z.imag();
    } else {
      return 0.0;
    }
  };
  std::vector<T> a = Widen<T>(input);
  std::vector<T> taus(d.batch * k, T(0));
  std::vector<T> v(n);
  for (int64_t b = 0; b < d.batch; ++b) {
    T* m = a.data() + b * n * n;
    for (int64_t i = 0; i + 1 < n; ++i) {
      const T alpha = m[(i + 1) * n + i];
      double xnorm = 0;
      for (int64_t r = i + 2; r < n; ++r) {
        xnorm = std::hypot(xnorm, std::abs(m[r * n + i]));
      }
      T tau(0), beta = alpha, scale(1);
      if (xnorm != 0 || imag(alpha) != 0) {
        const double alpha_re = std::real(alpha);
        const double norm = std::hypot(std::abs(alpha), xnorm);
        const double beta_re = -std::copysign(norm, alpha_re);
        beta = T(beta_re);
        if constexpr (std::is_same_v<T, Complex>) {
          tau = T((beta_re - alpha_re) / beta_re, -imag(alpha) / beta_re);
        } else {
          tau = T((beta_re - alpha_re) / beta_re);
        }
        scale = T(1) / (alpha - beta);
      }
      std::fill(v.begin(), v.end(), T(0));
      v[i + 1] = T(1);
      for (int64_t r = i + 2; r < n; ++r) v[r] = m[r * n + i] * scale;
      // a <- a H on columns i+1..: w = a v; a -= tau w vᴴ.
      for (int64_t r = 0; r < n; ++r) {
        T dot(0);
        for (int64_t c = i + 1; c < n; ++c) dot += m[r * n + c] * v[c];
        for (int64_t c = i + 1; c < n; ++c) {
          m[r * n + c] -= tau * dot * conj(v[c]);
        }
      }
      // a <- Hᴴ a on rows i+1.., columns i+1..: w = vᴴ a; a -= conj(tau) v w.
      for (int64_t c = i + 1; c < n; ++c) {
        T dot(0);
        for (int64_t r = i + 1; r < n; ++r) dot += conj(v[r]) * m[r * n + c];
        for (int64_t r = i + 1; r < n; ++r) {
          m[r * n + c] -= conj(tau) * v[r] * dot;
        }
      }
      m[(i + 1) * n + i] = beta;
      for (int64_t r = i + 2; r < n; ++r) m[r * n + i] = v[r];
      taus[b * k + i] = tau;
    }
  }
  std::vector<int64_t> tau_shape(input.shape().begin(),
                                 input.shape().end() - 2);
  tau_shape.push_back(k);
  return {Narrow(a, input.dtype(), input.shape()),
          Narrow(taus, input.dtype(), tau_shape)};
}

absl::StatusOr<std::vector<Array>> HessenbergKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 1) {
    return absl::InvalidArgumentError("hessenberg takes 1 operand");
  }
  J2O_ASSIGN_OR_RETURN(MatrixDims d,
                       Matrices(inputs[0], "hessenberg", /*complex_ok=*/true));
  if (d.rows != d.cols) {
    return absl::InvalidArgumentError("hessenberg: matrices must be square");
  }
  if (IsComplex(inputs[0].dtype())) return Hessenberg<Complex>(inputs[0], d);
  return Hessenberg<double>(inputs[0], d);
}

// tridiagonal(a) -> (a', d, e, taus): sytrd written out as hessenberg of
// the symmetrized matrix (jaxpr/text/tridiagonal.h), evaluated by the
// kernels of its primitives.
absl::StatusOr<std::vector<Array>> TridiagonalKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 1) {
    return absl::InvalidArgumentError("tridiagonal takes 1 operand");
  }
  J2O_ASSIGN_OR_RETURN(const ClosedJaxpr* decomposition,
                       TridiagonalDecomposition(ctx.eqn()));
  return ctx.Call(*decomposition, {}, inputs);
}

}  // namespace

void RegisterLinalgProductKernels() {
  RegisterEvalKernel("symmetric_product", SymmetricProductKernel);
  RegisterEvalKernel("cholesky_update", CholeskyUpdateKernel);
  RegisterEvalKernel("ormqr", OrmqrKernel);
  RegisterEvalKernel("hessenberg", HessenbergKernel);
  RegisterEvalKernel("tridiagonal", TridiagonalKernel);
}

}  // namespace jax2onnx::jaxpr::linalg_internal
