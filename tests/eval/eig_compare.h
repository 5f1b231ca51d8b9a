// Comparisons for eigendecompositions (eig) where only some things are
// unique: eigenvalues as a multiset (LAPACK geev's order is whatever its QR
// iteration produces: each value is matched to the nearest unused reference
// value), each eigenvector of a simple eigenvalue up to a unit factor
// (|vᴴ v_ref| = 1 for unit vectors), for a repeated eigenvalue only the
// eigenspace (the vectors lie in the span of the reference's); and the
// defining residuals with geev's normalization (norm 1, largest-magnitude
// component real and positive).
#ifndef JAX2ONNX_TESTS_EVAL_EIG_COMPARE_H_
#define JAX2ONNX_TESTS_EVAL_EIG_COMPARE_H_

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace jax2onnx::jaxpr::eig_compare {

using C = std::complex<double>;

// Deterministic pseudo-random entries in [-1, 1) (a 64-bit LCG's top bits).
inline std::vector<double> Entries(int64_t count, uint64_t seed) {
  std::vector<double> v(count);
  for (double& x : v) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<double>(seed >> 11) / 4503599627370496.0 - 1;
  }
  return v;
}

// n x n row-major complex matrix helpers.
inline C At(const std::vector<C>& m, int64_t n, int64_t i, int64_t j) {
  return m[i * n + j];
}
inline std::vector<C> Column(const std::vector<C>& m, int64_t n, int64_t j) {
  std::vector<C> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = At(m, n, i, j);
  return v;
}
inline C Dot(const std::vector<C>& x, const std::vector<C>& y) {  // xᴴ y
  C s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += std::conj(x[i]) * y[i];
  return s;
}
inline double Norm(const std::vector<C>& x) {
  return std::sqrt(Dot(x, x).real());
}

struct Eig {
  std::vector<C> w, vl, vr;
};

// Right: ‖A v - λ v‖ <= tol for each column; left: ‖uᴴ A - λ uᴴ‖ <= tol;
// every vector has norm 1 and its largest-magnitude component real > 0.
inline void ExpectEigenpairs(const std::vector<C>& a, const Eig& e, int64_t n,
                             double tol) {
  for (int64_t k = 0; k < n; ++k) {
    const std::vector<C> v = Column(e.vr, n, k), u = Column(e.vl, n, k);
    double right = 0, left = 0;
    for (int64_t i = 0; i < n; ++i) {
      C av = 0, ua = 0;
      for (int64_t j = 0; j < n; ++j) {
        av += At(a, n, i, j) * v[j];
        ua += std::conj(u[j]) * At(a, n, j, i);
      }
      right = std::hypot(right, std::abs(av - e.w[k] * v[i]));
      left = std::hypot(left, std::abs(ua - e.w[k] * std::conj(u[i])));
    }
    EXPECT_LE(right, tol) << "right eigenpair " << k;
    EXPECT_LE(left, tol) << "left eigenpair " << k;
    for (const std::vector<C>* x : {&v, &u}) {
      EXPECT_NEAR(Norm(*x), 1, tol) << "vector " << k;
      const auto largest = std::max_element(x->begin(), x->end(), [](C p, C q) {
        return std::norm(p) < std::norm(q);
      });
      EXPECT_EQ(largest->imag(), 0) << "vector " << k;
      EXPECT_GT(largest->real(), 0) << "vector " << k;
    }
  }
}

// Matches each of our eigenvalues to the nearest unused one of `want`;
// returns want's index per ours.
inline std::vector<int64_t> MatchValues(const std::vector<C>& got,
                                        const std::vector<C>& want,
                                        double tol) {
  std::vector<int64_t> match(got.size(), -1);
  std::vector<bool> used(want.size(), false);
  for (size_t k = 0; k < got.size(); ++k) {
    double best = std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < want.size(); ++j) {
      if (!used[j] && std::abs(got[k] - want[j]) < best) {
        best = std::abs(got[k] - want[j]);
        match[k] = static_cast<int64_t>(j);
      }
    }
    EXPECT_LE(best, tol) << "eigenvalue " << got[k];
    if (match[k] >= 0) used[match[k]] = true;
  }
  return match;
}

// Our vector k against `want`'s vectors: phase-free equality when its
// eigenvalue is simple (no other of `want`'s values within `gap`), else
// membership in the span of want's vectors of the cluster.
inline void ExpectSameVectors(const std::vector<C>& got,
                              const std::vector<C>& want,
                              const std::vector<C>& want_w,
                              const std::vector<int64_t>& match, int64_t n,
                              double gap, double tol, const std::string& what) {
  for (int64_t k = 0; k < n; ++k) {
    const std::vector<C> v = Column(got, n, k);
    // Orthonormal basis of want's vectors whose values cluster with ours.
    std::vector<std::vector<C>> basis;
    for (int64_t j = 0; j < n; ++j) {
      if (std::abs(want_w[j] - want_w[match[k]]) > gap) continue;
      std::vector<C> b = Column(want, n, j);
      for (int pass = 0; pass < 2; ++pass) {
        for (const auto& q : basis) {
          const C d = Dot(q, b);
          for (int64_t i = 0; i < n; ++i) b[i] -= d * q[i];
        }
      }
      const double norm = Norm(b);
      if (norm < 1e-3) continue;
      for (C& x : b) x /= norm;
      basis.push_back(b);
    }
    std::vector<C> rest = v;
    for (const auto& q : basis) {
      const C d = Dot(q, rest);
      for (int64_t i = 0; i < n; ++i) rest[i] -= d * q[i];
    }
    EXPECT_LE(Norm(rest), tol)
        << what << " vector " << k << " (cluster of " << basis.size() << ")";
  }
}

// The eigenvalues of a Schur form T (n x n row-major), in T's order: its
// diagonal, a standardized 2 x 2 block [[a, b], [c, a]] (b c < 0) of a real
// Schur form giving a ± i sqrt(|b c|).
inline std::vector<C> SchurValues(const std::vector<C>& t, int64_t n) {
  std::vector<C> w;
  for (int64_t i = 0; i < n; ++i) {
    if (i + 1 < n && At(t, n, i + 1, i) != C(0)) {
      const double a = At(t, n, i, i).real();
      const double im = std::sqrt(
          std::abs(At(t, n, i, i + 1).real() * At(t, n, i + 1, i).real()));
      w.emplace_back(a, im);
      w.emplace_back(a, -im);
      ++i;
    } else {
      w.push_back(At(t, n, i, i));
    }
  }
  return w;
}

// A Schur decomposition A = Z T Zᴴ (LAPACK ?gees), n x n row-major: T upper
// triangular with exact zeros below the diagonal (`real_form`: dgees's
// quasi-triangular form, where a nonzero subdiagonal entry opens a 2 x 2
// block in dlanv2's standard form, equal diagonal and b c < 0, never two
// in a row), Z unitary (within tol), and Z T Zᴴ = A within tol (JAX's own
// back-compat check). Against a reference (want_t, want_z), which is unique
// only up to the order of the eigenvalues and a unit factor per column:
// the eigenvalues as a multiset, and, while ours follow the reference's
// order in 1 x 1 blocks, each column of Z whose value is simple (no other
// reference value within `gap`) equals the reference's after aligning the
// phase (column k spans the invariant subspace of the first k + 1 values
// with the ones before it).
inline void ExpectSchur(const std::vector<C>& a, const std::vector<C>& t,
                        const std::vector<C>& z, int64_t n, double tol,
                        const std::vector<C>& want_t,
                        const std::vector<C>& want_z, double gap,
                        bool real_form = false) {
  ASSERT_EQ(t.size(), static_cast<size_t>(n * n));
  ASSERT_EQ(z.size(), static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < i; ++j) {
      if (real_form && j == i - 1 && At(t, n, i, j) != C(0)) {
        EXPECT_EQ(At(t, n, i - 1, i - 1), At(t, n, i, i)) << "block at " << j;
        EXPECT_LT(At(t, n, i - 1, i).real() * At(t, n, i, j).real(), 0)
            << "block at " << j;
        EXPECT_TRUE(i < 2 || At(t, n, i - 1, i - 2) == C(0))
            << "two subdiagonal entries in a row at " << j;
        continue;
      }
      EXPECT_EQ(At(t, n, i, j), C(0))
          << "T below the diagonal at " << i << ", " << j;
    }
    for (int64_t j = 0; j < n; ++j) {
      EXPECT_NEAR(
          std::abs(Dot(Column(z, n, i), Column(z, n, j)) - C(i == j ? 1 : 0)),
          0, tol)
          << "Zᴴ Z at " << i << ", " << j;
      C sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        for (int64_t l = 0; l < n; ++l) {
          sum += At(z, n, i, k) * At(t, n, k, l) * std::conj(At(z, n, j, l));
        }
      }
      EXPECT_NEAR(std::abs(sum - At(a, n, i, j)), 0, tol)
          << "Z T Zᴴ at " << i << ", " << j;
    }
  }
  const std::vector<C> w = SchurValues(t, n), want_w = SchurValues(want_t, n);
  MatchValues(w, want_w, tol);
  for (int64_t k = 0; k < n; ++k) {
    auto in_block = [&](const std::vector<C>& m) {
      return (k + 1 < n && At(m, n, k + 1, k) != C(0)) ||
             (k > 0 && At(m, n, k, k - 1) != C(0));
    };
    if (std::abs(w[k] - want_w[k]) > tol || in_block(t) || in_block(want_t)) {
      break;
    }
    bool simple = true;
    for (int64_t j = 0; j < n; ++j) {
      if (j != k && std::abs(want_w[j] - want_w[k]) <= gap) simple = false;
    }
    if (!simple) continue;
    const std::vector<C> v = Column(z, n, k), u = Column(want_z, n, k);
    const C inner = Dot(v, u);
    const C phase = std::abs(inner) == 0 ? C(1) : inner / std::abs(inner);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_NEAR(std::abs(v[i] * phase - u[i]), 0, tol)
          << "Z column " << k << " element " << i;
    }
  }
}

}  // namespace jax2onnx::jaxpr::eig_compare

#endif  // JAX2ONNX_TESTS_EVAL_EIG_COMPARE_H_
