// Reference kernel for eig (the nonsymmetric eigendecomposition, LAPACK
// ?geev on JAX's CPU backend), in complex<double> for every operand dtype:
//   1. Householder reduction to upper Hessenberg form, A = Q H Qᴴ;
//   2. single-shift complex QR (Givens rotations, Wilkinson shift,
//      zlahqr's exceptional shift every 10th stalled sweep): the
//      bottom eigenvalue T(hi, hi) deflates when its subdiagonal is
//      negligible, else a sweep spans rows 0..hi; H = Z' T Z'ᴴ, T upper
//      triangular (the Schur form); the eigenvalues are T's diagonal in the
//      order the iteration leaves them, as geev returns them;
//   3. eigenvectors of T by back-substitution (right) and forward
//      substitution (left) as ztrevc, near-zero pivots replaced by
//      max(eps |λ|, smallest normal), transformed back by Z = Q Z';
//   4. each vector scaled to Euclidean norm 1 and multiplied by the unit
//      factor that makes its largest-magnitude component real and positive
//      (zgeev's normalization).
// Differences from LAPACK, all within the values' rounding: no balancing;
// for real operands the iteration is complex (geev uses the real
// double-shift Schur form), so a real eigenvalue can carry an imaginary
// part of order eps ‖A‖ and a conjugate pair is conjugate only to rounding;
// the order of the eigenvalues can differ from LAPACK's. Eigenvectors are
// unique only up to a unit factor (geev's normalization fixes it only when
// the largest component is unique) and, for repeated eigenvalues, only as a
// subspace: compare them phase-free (tests/eval/eig_test.cc).
// Convergence: at most 30 max(10, n) sweeps per matrix (zlahqr's ITMAX);
// a matrix that does not converge, or that holds a NaN or an infinity, gets
// NaN + NaN i in every output (JAX replaces the outputs of a batch member
// whose geev INFO != 0 with NaN).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/eval/decompositions_internal.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/eval/linalg_internal.h"
#include "jaxpr/eval/real_schur.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx::jaxpr::linalg_internal {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon() / 2;
constexpr double kSmallNormal = std::numeric_limits<double>::min();

// LAPACK's CABS1: |re| + |im|.
double Abs1(Complex x) { return std::abs(x.real()) + std::abs(x.imag()); }

// The n x n row-major matrix and the accumulated unitary transform.
struct Schur {
  int64_t n;
  std::vector<Complex> t;  // becomes upper triangular
  std::vector<Complex> z;  // A = Z T Zᴴ
  Complex& T(int64_t i, int64_t j) { return t[i * n + j]; }
  Complex& Z(int64_t i, int64_t j) { return z[i * n + j]; }
};

// Step 1: for each column k, the Hermitian reflector P = I - 2 v vᴴ / vᴴv
// with v = x + e^{i arg x_0} ‖x‖ e_0 (x = column k below the diagonal)
// zeroes x past its first entry; A <- P A P, Z <- Z P.
void ReduceToHessenberg(Schur& s) {
  const int64_t n = s.n;
  std::vector<Complex> v(n);
  for (int64_t k = 0; k + 2 < n; ++k) {
    double norm = 0;
    for (int64_t i = k + 1; i < n; ++i)
      norm = std::hypot(norm, std::abs(s.T(i, k)));
    if (norm == 0) continue;
    const Complex x0 = s.T(k + 1, k);
    const Complex phase = std::abs(x0) == 0 ? Complex(1) : x0 / std::abs(x0);
    std::fill(v.begin(), v.end(), Complex(0));
    for (int64_t i = k + 1; i < n; ++i) v[i] = s.T(i, k);
    v[k + 1] += phase * norm;
    double vv = 0;
    for (int64_t i = k + 1; i < n; ++i) vv += std::norm(v[i]);
    if (vv == 0) continue;
    const double beta = 2 / vv;
    for (int64_t j = 0; j < n; ++j) {  // rows: A <- P A
      Complex dot = 0;
      for (int64_t i = k + 1; i < n; ++i) dot += std::conj(v[i]) * s.T(i, j);
      for (int64_t i = k + 1; i < n; ++i) s.T(i, j) -= beta * v[i] * dot;
    }
    for (int64_t i = 0; i < n; ++i) {  // columns: A <- A P, Z <- Z P
      Complex dot = 0, zdot = 0;
      for (int64_t j = k + 1; j < n; ++j) {
        dot += s.T(i, j) * v[j];
        zdot += s.Z(i, j) * v[j];
      }
      for (int64_t j = k + 1; j < n; ++j) {
        s.T(i, j) -= beta * dot * std::conj(v[j]);
        s.Z(i, j) -= beta * zdot * std::conj(v[j]);
      }
    }
    for (int64_t i = k + 2; i < n; ++i) s.T(i, k) = 0;
  }
}

// The rotation G = [[c, s], [-conj(s), c]] (c real) with G [a; b] = [r; 0].
struct Givens {
  double c;
  Complex s;
};
Givens RotationOf(Complex a, Complex b) {
  const double r = std::hypot(std::abs(a), std::abs(b));
  if (r == 0) return {1, 0};
  if (std::abs(a) == 0) return {0, 1};
  return {std::abs(a) / r, (a / std::abs(a)) * std::conj(b) / r};
}

// The eigenvalue of [[a, b], [c, d]] nearer to d (Wilkinson's shift):
// d - bc / (h ± sqrt(h² + bc)), h = (a - d) / 2, the sign making the
// denominator the larger (d itself when it is 0). The lowering
// (plugin/eig_general_plan.h) computes the same.
Complex WilkinsonShift(Complex a, Complex b, Complex c, Complex d) {
  const Complex half = (a - d) / 2.0, bc = b * c;
  const Complex root = std::sqrt(half * half + bc);
  const Complex den =
      (std::conj(half) * root).real() >= 0 ? half + root : half - root;
  return std::abs(den) == 0 ? d : d - bc / den;
}

// Step 2: the Hessenberg T to upper triangular; false when the sweep
// budget runs out.
bool ShiftedQr(Schur& s) {
  const int64_t n = s.n;
  double frobenius = 0;
  for (const Complex& x : s.t) frobenius = std::hypot(frobenius, std::abs(x));
  const int64_t max_sweeps = 30 * std::max<int64_t>(10, n);
  int64_t sweeps = 0, stalled = 0;
  std::vector<Givens> rotations(n);
  int64_t hi = n - 1;
  while (hi > 0) {
    // Deflate T(hi, hi) when the subdiagonal next to it is negligible.
    // Only that one is tested and the sweep spans rows 0..hi (a negligible
    // subdiagonal higher up is not split off: the QR step keeps the blocks
    // apart where it is exactly zero and converges regardless), the
    // schedule the lowering's single Loop follows.
    double scale = Abs1(s.T(hi - 1, hi - 1)) + Abs1(s.T(hi, hi));
    if (scale == 0) scale = frobenius;
    if (Abs1(s.T(hi, hi - 1)) <= std::max(kSmallNormal, kEps * scale)) {
      s.T(hi, hi - 1) = 0;
      --hi;
      stalled = 0;
      continue;
    }
    const int64_t lo = 0;
    if (sweeps++ >= max_sweeps) return false;
    ++stalled;
    Complex shift;
    if (stalled % 10 == 0) {  // exceptional shift (zlahqr's DAT1 = 3/4)
      shift = s.T(hi, hi) + 0.75 * std::abs(s.T(hi, hi - 1).real());
    } else {
      shift = WilkinsonShift(s.T(hi - 1, hi - 1), s.T(hi - 1, hi),
                             s.T(hi, hi - 1), s.T(hi, hi));
    }
    // T - shift I = G R on the window, then R Gᴴ + shift I; the rotations
    // act on whole rows / columns so that T stays the Schur form of A.
    for (int64_t k = lo; k <= hi; ++k) s.T(k, k) -= shift;
    for (int64_t k = lo; k < hi; ++k) {
      const Givens g = RotationOf(s.T(k, k), s.T(k + 1, k));
      rotations[k] = g;
      for (int64_t j = k; j < n; ++j) {
        const Complex x = s.T(k, j), y = s.T(k + 1, j);
        s.T(k, j) = g.c * x + g.s * y;
        s.T(k + 1, j) = -std::conj(g.s) * x + g.c * y;
      }
      s.T(k + 1, k) = 0;
    }
    for (int64_t k = lo; k < hi; ++k) {
      const Givens g = rotations[k];
      for (int64_t i = 0; i <= std::min(k + 1, hi); ++i) {
        const Complex x = s.T(i, k), y = s.T(i, k + 1);
        s.T(i, k) = x * g.c + y * std::conj(g.s);
        s.T(i, k + 1) = -x * g.s + y * g.c;
      }
      for (int64_t i = 0; i < n; ++i) {
        const Complex x = s.Z(i, k), y = s.Z(i, k + 1);
        s.Z(i, k) = x * g.c + y * std::conj(g.s);
        s.Z(i, k + 1) = -x * g.s + y * g.c;
      }
    }
    for (int64_t k = lo; k <= hi; ++k) s.T(k, k) += shift;
  }
  return true;
}

// Batch member b of `all` (n x n matrices) through step 1 and then `qr`
// (step 2) into `s`: false when it holds a NaN or an infinity or `qr` does
// not converge.
template <class Qr>
bool SchurOfMember(const std::vector<Complex>& all, int64_t b, int64_t n, Qr qr,
                   Schur& s) {
  s = Schur{n,
            std::vector<Complex>(all.begin() + b * n * n,
                                 all.begin() + (b + 1) * n * n),
            std::vector<Complex>(n * n, 0)};
  for (int64_t i = 0; i < n; ++i) s.Z(i, i) = 1;
  if (!std::all_of(s.t.begin(), s.t.end(), [](Complex x) {
        return std::isfinite(x.real()) && std::isfinite(x.imag());
      })) {
    return false;
  }
  ReduceToHessenberg(s);
  return qr(s);
}

// Scales v to norm 1 with its largest-magnitude component (the first of
// equals) real and positive.
void Normalize(std::vector<Complex>& v) {
  double norm = 0, largest = -1;
  int64_t at = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    norm = std::hypot(norm, std::abs(v[i]));
    if (std::norm(v[i]) > largest) {
      largest = std::norm(v[i]);
      at = static_cast<int64_t>(i);
    }
  }
  if (norm == 0) return;
  const Complex unit =
      std::abs(v[at]) == 0 ? Complex(1) : std::conj(v[at]) / std::abs(v[at]);
  const double magnitude = std::abs(v[at]);
  for (Complex& x : v) x = x * unit / norm;
  v[at] = Complex(magnitude / norm, 0);
}

// The denominator T(j, j) - λ, kept away from zero as ztrevc's SMIN.
Complex Pivot(Complex diagonal, Complex lambda) {
  const double smin = std::max(kEps * Abs1(lambda), kSmallNormal);
  const Complex d = diagonal - lambda;
  return Abs1(d) < smin ? Complex(smin, 0) : d;
}

// Step 3/4: column k of `right` (A v = λ v) and of `left` (uᴴ A = λ uᴴ).
void Eigenvectors(Schur& s, std::vector<Complex>& right,
                  std::vector<Complex>& left) {
  const int64_t n = s.n;
  right.assign(n * n, 0);
  left.assign(n * n, 0);
  std::vector<Complex> x(n), v(n);
  for (int64_t k = 0; k < n; ++k) {
    const Complex lambda = s.T(k, k);
    // (T - λ I) x = 0 with x_k = 1, x_j = 0 past k.
    std::fill(x.begin(), x.end(), Complex(0));
    x[k] = 1;
    for (int64_t j = k - 1; j >= 0; --j) {
      Complex sum = 0;
      for (int64_t l = j + 1; l <= k; ++l) sum += s.T(j, l) * x[l];
      x[j] = -sum / Pivot(s.T(j, j), lambda);
    }
    for (int64_t i = 0; i < n; ++i) {
      v[i] = 0;
      for (int64_t l = 0; l <= k; ++l) v[i] += s.Z(i, l) * x[l];
    }
    Normalize(v);
    for (int64_t i = 0; i < n; ++i) right[i * n + k] = v[i];
    // (T - λ I)ᴴ y = 0 with y_k = 1, y_j = 0 before k; u = Z y.
    std::fill(x.begin(), x.end(), Complex(0));
    x[k] = 1;
    for (int64_t j = k + 1; j < n; ++j) {
      Complex sum = 0;
      for (int64_t l = k; l < j; ++l) sum += std::conj(s.T(l, j)) * x[l];
      x[j] = -sum / std::conj(Pivot(s.T(j, j), lambda));
    }
    for (int64_t i = 0; i < n; ++i) {
      v[i] = 0;
      for (int64_t l = k; l < n; ++l) v[i] += s.Z(i, l) * x[l];
    }
    Normalize(v);
    for (int64_t i = 0; i < n; ++i) left[i * n + k] = v[i];
  }
}

absl::StatusOr<std::vector<Array>> EigKernel(const EvalContext& ctx,
                                             absl::Span<const Array> inputs) {
  if (inputs.size() != 1) {
    return absl::InvalidArgumentError("eig takes 1 operand");
  }
  J2O_ASSIGN_OR_RETURN(bool want_left,
                       ctx.params().GetBool("compute_left_eigenvectors"));
  J2O_ASSIGN_OR_RETURN(bool want_right,
                       ctx.params().GetBool("compute_right_eigenvectors"));
  if (ctx.num_outputs() != 1 + want_left + want_right) {
    return absl::InvalidArgumentError(
        absl::StrCat("eig: ", ctx.num_outputs(), " results for ",
                     1 + want_left + want_right, " requested"));
  }
  J2O_ASSIGN_OR_RETURN(MatrixDims d, Matrices(inputs[0], "eig", true));
  if (d.rows != d.cols) {
    return absl::InvalidArgumentError("eig: matrices must be square");
  }
  const int64_t n = d.rows;
  const std::vector<Complex> all = Widen<Complex>(inputs[0]);
  std::vector<Complex> ws, vls, vrs;
  const Complex nan(std::numeric_limits<double>::quiet_NaN(),
                    std::numeric_limits<double>::quiet_NaN());
  for (int64_t b = 0; b < d.batch; ++b) {
    Schur s;
    if (!SchurOfMember(all, b, n, ShiftedQr, s)) {
      ws.insert(ws.end(), n, nan);
      vls.insert(vls.end(), n * n, nan);
      vrs.insert(vrs.end(), n * n, nan);
      continue;
    }
    for (int64_t i = 0; i < n; ++i) ws.push_back(s.T(i, i));
    std::vector<Complex> right, left;
    Eigenvectors(s, right, left);
    vls.insert(vls.end(), left.begin(), left.end());
    vrs.insert(vrs.end(), right.begin(), right.end());
  }
  std::vector<Array> out;
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> w_shape, ctx.OutputShape(0));
  out.push_back(Narrow(ws, ctx.OutputDType(0), w_shape));
  int next = 1;
  for (const auto* vs :
       {want_left ? &vls : nullptr, want_right ? &vrs : nullptr}) {
    if (vs == nullptr) continue;
    J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.OutputShape(next));
    out.push_back(Narrow(*vs, ctx.OutputDType(next), shape));
    ++next;
  }
  return out;
}

// Step 2 for a real matrix (whose Hessenberg form step 1 leaves real):
// LAPACK dlahqr's double-shift QR (real_schur.cc) with the deflation
// constants of the operand's precision; T is quasi-triangular (dgees's
// real Schur form: 2 x 2 blocks in dlanv2's standard form for complex
// pairs), zero below the subdiagonal as dhseqr leaves it.
bool RealSchur(Schur& s, DType dtype) {
  const int64_t n = s.n;
  const bool f32 = dtype == DType::kF32;
  const double ulp = f32 ? std::numeric_limits<float>::epsilon()
                         : std::numeric_limits<double>::epsilon();
  const double safmin = f32 ? std::numeric_limits<float>::min()
                            : std::numeric_limits<double>::min();
  std::vector<double> h(n * n), z(n * n);
  for (int64_t i = 0; i < n * n; ++i) {
    h[i] = s.t[i].real();
    z[i] = s.z[i].real();
  }
  if (!RealSchurQr(n, h, z, ulp, safmin)) return false;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      s.T(i, j) = i > j + 1 ? 0 : h[i * n + j];
      s.Z(i, j) = z[i * n + j];
    }
  }
  return true;
}

// schur(a) -> (T[, Z]) (LAPACK ?gees with jobvs 'V' or 'N' and no
// sorting): step 1, then step 2 for complex a (A = Z T Zᴴ, T upper
// triangular) or RealSchur for real a (A = Z T Zᵀ, T quasi-triangular).
// Not LAPACK's Hessenberg reduction (no balancing, unblocked reflectors
// equal to gehrd's up to rounding); for complex a not zlahqr's iteration
// either, so T's diagonal order and the columns' phases can differ from
// zgees'. A matrix holding a NaN or an infinity, or exceeding the
// iteration budget, is NaN everywhere (JAX's result when gees reports
// INFO != 0).
absl::StatusOr<std::vector<Array>> SchurKernel(const EvalContext& ctx,
                                               absl::Span<const Array> inputs) {
  if (inputs.size() != 1) {
    return absl::InvalidArgumentError("schur takes 1 operand");
  }
  J2O_ASSIGN_OR_RETURN(bool want_vectors,
                       ctx.params().GetBool("compute_schur_vectors"));
  J2O_ASSIGN_OR_RETURN(bool sort, ctx.params().GetBool("sort_eig_vals"));
  if (sort) {
    return absl::UnimplementedError(
        "schur: sort_eig_vals=True (JAX itself does not implement gees's "
        "sorting)");
  }
  if (ctx.num_outputs() != 1 + want_vectors) {
    return absl::InvalidArgumentError(
        absl::StrCat("schur: ", ctx.num_outputs(), " results for ",
                     1 + want_vectors, " requested"));
  }
  J2O_ASSIGN_OR_RETURN(MatrixDims d, Matrices(inputs[0], "schur", true));
  if (d.rows != d.cols) {
    return absl::InvalidArgumentError("schur: matrices must be square");
  }
  const int64_t n = d.rows;
  const bool real = !IsComplex(inputs[0].dtype());
  const std::vector<Complex> all = Widen<Complex>(inputs[0]);
  std::vector<Complex> ts, zs;
  const Complex nan(std::numeric_limits<double>::quiet_NaN(),
                    std::numeric_limits<double>::quiet_NaN());
  const DType dtype = inputs[0].dtype();
  for (int64_t b = 0; b < d.batch; ++b) {
    Schur s;
    auto qr = [&](Schur& m) {
      return real ? RealSchur(m, dtype) : ShiftedQr(m);
    };
    if (!SchurOfMember(all, b, n, qr, s)) {
      std::fill(s.t.begin(), s.t.end(), nan);
      std::fill(s.z.begin(), s.z.end(), nan);
    }
    ts.insert(ts.end(), s.t.begin(), s.t.end());
    zs.insert(zs.end(), s.z.begin(), s.z.end());
  }
  std::vector<Array> out;
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.OutputShape(0));
  auto narrow = [&](const std::vector<Complex>& v, DType dtype) {
    if (!real) return Narrow(v, dtype, shape);
    std::vector<double> re;
    re.reserve(v.size());
    for (const Complex& x : v) re.push_back(x.real());
    return Narrow(re, dtype, shape);
  };
  out.push_back(narrow(ts, ctx.OutputDType(0)));
  if (want_vectors) out.push_back(narrow(zs, ctx.OutputDType(1)));
  return out;
}

}  // namespace

void RegisterGeneralEigenKernel() {
  RegisterEvalKernel("eig", EigKernel);
  RegisterEvalKernel("schur", SchurKernel);
}

}  // namespace jax2onnx::jaxpr::linalg_internal
