// LAPACK dlahqr and dlanv2 transcribed (0-based), for schur's real operands:
// see real_schur.h. Differences from LAPACK, all in corner cases of the
// floating-point range: dlarfg's and dlanv2's rescaling of entries near
// underflow/overflow is not done, and the iteration runs in double for
// every operand dtype with the deflation constants of the operand's own
// precision (`ulp`, `safmin`), as sgees/dgees would decide.
#include "jaxpr/eval/real_schur.h"

#include <algorithm>
#include <cmath>

namespace jax2onnx::jaxpr::linalg_internal {
namespace {

// Fortran's SIGN(a, b): |a| with b's sign.
double Sign(double a, double b) { return std::copysign(std::abs(a), b); }

// dlarfg on (alpha, x[0..count-2]): the reflector I - tau (1, v)(1, v)ᵀ
// mapping (alpha, x) to (beta, 0); on return x holds v and alpha beta.
double Larfg(int count, double& alpha, double* x) {
  if (count <= 1) return 0;
  double xnorm = 0;
  for (int i = 0; i < count - 1; ++i) xnorm = std::hypot(xnorm, x[i]);
  if (xnorm == 0) return 0;
  const double beta = -Sign(std::hypot(alpha, xnorm), alpha);
  const double tau = (beta - alpha) / beta;
  const double scale = 1 / (alpha - beta);
  for (int i = 0; i < count - 1; ++i) x[i] *= scale;
  alpha = beta;
  return tau;
}

}  // namespace

Standardized Lanv2(double a, double b, double c, double d, double ulp) {
  double cs = 1, sn = 0;
  if (c == 0) {
  } else if (b == 0) {  // swap rows and columns
    cs = 0;
    sn = 1;
    std::swap(a, d);
    b = -c;
    c = 0;
  } else if (a - d == 0 && Sign(1, b) != Sign(1, c)) {
  } else {
    double temp = a - d;
    double p = 0.5 * temp;
    const double bcmax = std::max(std::abs(b), std::abs(c));
    const double bcmis =
        std::min(std::abs(b), std::abs(c)) * Sign(1, b) * Sign(1, c);
    double scale = std::max(std::abs(p), bcmax);
    double z = (p / scale) * p + (bcmax / scale) * bcmis;
    if (z >= 4 * ulp) {  // real eigenvalues: compute a and d
      z = p + Sign(std::sqrt(scale) * std::sqrt(z), p);
      a = d + z;
      d = d - (bcmax / z) * bcmis;
      const double tau = std::hypot(c, z);
      cs = z / tau;
      sn = c / tau;
      b = b - c;
      c = 0;
    } else {  // complex or (almost) equal real eigenvalues: equal diagonal
      const double sigma = b + c;
      const double tau = std::hypot(sigma, temp);
      cs = std::sqrt(0.5 * (1 + std::abs(sigma) / tau));
      sn = -(p / (tau * cs)) * Sign(1, sigma);
      const double aa = a * cs + b * sn, bb = -a * sn + b * cs;
      const double cc = c * cs + d * sn, dd = -c * sn + d * cs;
      a = aa * cs + cc * sn;
      b = bb * cs + dd * sn;
      c = -aa * sn + cc * cs;
      d = -bb * sn + dd * cs;
      temp = 0.5 * (a + d);
      a = temp;
      d = temp;
      if (c != 0) {
        if (b != 0) {
          if (Sign(1, b) == Sign(1, c)) {  // real: upper triangular
            const double sab = std::sqrt(std::abs(b));
            const double sac = std::sqrt(std::abs(c));
            p = Sign(sab * sac, c);
            const double t = 1 / std::sqrt(std::abs(b + c));
            a = temp + p;
            d = temp - p;
            b = b - c;
            c = 0;
            const double cs1 = sab * t, sn1 = sac * t;
            temp = cs * cs1 - sn * sn1;
            sn = cs * sn1 + sn * cs1;
            cs = temp;
          }
        } else {
          b = -c;
          c = 0;
          temp = cs;
          cs = -sn;
          sn = temp;
        }
      }
    }
  }
  return {a, b, c, d, cs, sn};
}

bool RealSchurQr(int64_t n, std::vector<double>& h, std::vector<double>& z,
                 double ulp, double safmin) {
  auto H = [&](int64_t i, int64_t j) -> double& { return h[i * n + j]; };
  auto Z = [&](int64_t i, int64_t j) -> double& { return z[i * n + j]; };
  if (n <= 1) return true;
  for (int64_t j = 0; j + 3 < n; ++j) {  // clear out the trash
    H(j + 2, j) = 0;
    H(j + 3, j) = 0;
  }
  if (n >= 3) H(n - 1, n - 3) = 0;
  const double smlnum = safmin * (static_cast<double>(n) / ulp);
  const int64_t itmax = 30 * std::max<int64_t>(10, n);
  const int64_t kexsh = 10;
  int64_t kdefl = 0;
  // Applies the reflector I - t1 (1, v2, v3)(1, v2, v3)ᵀ (v3 unused when
  // nr = 2) to rows k.. of H in columns k..n-1, to its columns in rows
  // 0..last, and to Z's columns.
  auto reflect = [&](int64_t k, int nr, double t1, double v2, double v3,
                     int64_t last) {
    const double t2 = t1 * v2, t3 = t1 * v3;
    for (int64_t j = k; j < n; ++j) {
      double sum = H(k, j) + v2 * H(k + 1, j);
      if (nr == 3) sum += v3 * H(k + 2, j);
      H(k, j) -= sum * t1;
      H(k + 1, j) -= sum * t2;
      if (nr == 3) H(k + 2, j) -= sum * t3;
    }
    for (int64_t j = 0; j <= last; ++j) {
      double sum = H(j, k) + v2 * H(j, k + 1);
      if (nr == 3) sum += v3 * H(j, k + 2);
      H(j, k) -= sum * t1;
      H(j, k + 1) -= sum * t2;
      if (nr == 3) H(j, k + 2) -= sum * t3;
    }
    for (int64_t j = 0; j < n; ++j) {
      double sum = Z(j, k) + v2 * Z(j, k + 1);
      if (nr == 3) sum += v3 * Z(j, k + 2);
      Z(j, k) -= sum * t1;
      Z(j, k + 1) -= sum * t2;
      if (nr == 3) Z(j, k + 2) -= sum * t3;
    }
  };
  int64_t i = n - 1;
  while (i >= 0) {
    int64_t l = 0;
    bool converged = false;
    for (int64_t its = 0; its <= itmax; ++its) {
      // Look for a single small subdiagonal element (Ahues & Tisseur).
      int64_t k = i;
      for (; k > l; --k) {
        const double sub = std::abs(H(k, k - 1));
        if (sub <= smlnum) break;
        double tst = std::abs(H(k - 1, k - 1)) + std::abs(H(k, k));
        if (tst == 0) {
          if (k - 2 >= 0) tst += std::abs(H(k - 1, k - 2));
          if (k + 1 <= n - 1) tst += std::abs(H(k + 1, k));
        }
        if (sub <= ulp * tst) {
          const double up = std::abs(H(k - 1, k));
          const double ab = std::max(sub, up), ba = std::min(sub, up);
          const double dk = std::abs(H(k, k));
          const double diff = std::abs(H(k - 1, k - 1) - H(k, k));
          const double aa = std::max(dk, diff), bb = std::min(dk, diff);
          const double s = aa + ab;
          if (ba * (ab / s) <= std::max(smlnum, ulp * (bb * (aa / s)))) break;
        }
      }
      l = k;
      if (l > 0) H(l, l - 1) = 0;
      if (l >= i - 1) {
        converged = true;
        break;
      }
      ++kdefl;
      double h11, h12, h21, h22;
      if (kdefl % (2 * kexsh) == 0) {  // exceptional shift at the bottom
        const double s = std::abs(H(i, i - 1)) + std::abs(H(i - 1, i - 2));
        h11 = 0.75 * s + H(i, i);
        h12 = -0.4375 * s;
        h21 = s;
        h22 = h11;
      } else if (kdefl % kexsh == 0) {  // exceptional shift at the top
        const double s = std::abs(H(l + 1, l)) + std::abs(H(l + 2, l + 1));
        h11 = 0.75 * s + H(l, l);
        h12 = -0.4375 * s;
        h21 = s;
        h22 = h11;
      } else {  // Francis' double shift
        h11 = H(i - 1, i - 1);
        h21 = H(i, i - 1);
        h12 = H(i - 1, i);
        h22 = H(i, i);
      }
      double rt1r = 0, rt1i = 0, rt2r = 0, rt2i = 0;
      const double s =
          std::abs(h11) + std::abs(h12) + std::abs(h21) + std::abs(h22);
      if (s != 0) {
        h11 /= s;
        h21 /= s;
        h12 /= s;
        h22 /= s;
        const double tr = (h11 + h22) / 2;
        const double det = (h11 - tr) * (h22 - tr) - h12 * h21;
        const double rtdisc = std::sqrt(std::abs(det));
        if (det >= 0) {  // complex conjugate shifts
          rt1r = tr * s;
          rt2r = rt1r;
          rt1i = rtdisc * s;
          rt2i = -rt1i;
        } else {  // real shifts: only the one nearer h22
          rt1r = tr + rtdisc;
          rt2r = tr - rtdisc;
          if (std::abs(rt1r - h22) <= std::abs(rt2r - h22)) {
            rt1r = rt1r * s;
            rt2r = rt1r;
          } else {
            rt2r = rt2r * s;
            rt1r = rt2r;
          }
        }
      }
      // Look for two consecutive small subdiagonal elements.
      double v[3] = {0, 0, 0};
      int64_t m = i - 2;
      for (; m >= l; --m) {
        double h21s = H(m + 1, m);
        double sm = std::abs(H(m, m) - rt2r) + std::abs(rt2i) + std::abs(h21s);
        h21s = H(m + 1, m) / sm;
        v[0] = h21s * H(m, m + 1) + (H(m, m) - rt1r) * ((H(m, m) - rt2r) / sm) -
               rt1i * (rt2i / sm);
        v[1] = h21s * (H(m, m) + H(m + 1, m + 1) - rt1r - rt2r);
        v[2] = h21s * H(m + 2, m + 1);
        sm = std::abs(v[0]) + std::abs(v[1]) + std::abs(v[2]);
        v[0] /= sm;
        v[1] /= sm;
        v[2] /= sm;
        if (m == l) break;
        const double h00 =
            std::abs(H(m, m - 1)) * (std::abs(v[1]) + std::abs(v[2]));
        const double h01 = ulp * std::abs(v[0]) *
                           (std::abs(H(m - 1, m - 1)) + std::abs(H(m, m)) +
                            std::abs(H(m + 1, m + 1)));
        if (h00 <= h01) break;
      }
      // The double-shift QR step: a bulge from v chased down to row i.
      for (int64_t kk = m; kk <= i - 1; ++kk) {
        const int nr = static_cast<int>(std::min<int64_t>(3, i - kk + 1));
        if (kk > m) {
          for (int r = 0; r < nr; ++r) v[r] = H(kk + r, kk - 1);
        }
        const double t1 = Larfg(nr, v[0], v + 1);
        if (kk > m) {
          H(kk, kk - 1) = v[0];
          H(kk + 1, kk - 1) = 0;
          if (kk < i - 1) H(kk + 2, kk - 1) = 0;
        } else if (m > l) {
          H(kk, kk - 1) *= 1 - t1;
        }
        reflect(kk, nr, t1, v[1], nr == 3 ? v[2] : 0,
                nr == 3 ? std::min(kk + 3, i) : i);
      }
    }
    if (!converged) return false;
    if (l == i - 1) {  // a 2 x 2 block: dlanv2's standard form
      const Standardized st =
          Lanv2(H(i - 1, i - 1), H(i - 1, i), H(i, i - 1), H(i, i), ulp);
      H(i - 1, i - 1) = st.a;
      H(i - 1, i) = st.b;
      H(i, i - 1) = st.c;
      H(i, i) = st.d;
      auto rot = [&](double& x, double& y) {
        const double nx = st.cs * x + st.sn * y;
        y = st.cs * y - st.sn * x;
        x = nx;
      };
      for (int64_t j = i + 1; j < n; ++j) rot(H(i - 1, j), H(i, j));
      for (int64_t j = 0; j + 1 < i; ++j) rot(H(j, i - 1), H(j, i));
      for (int64_t j = 0; j < n; ++j) rot(Z(j, i - 1), Z(j, i));
    }
    kdefl = 0;
    i = l - 1;
  }
  return true;
}

}  // namespace jax2onnx::jaxpr::linalg_internal
