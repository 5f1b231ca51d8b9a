// The reference interpreter's cholesky, triangular_solve, lu, qr, geqrf,
// householder_product, eigh, svd and tridiagonal_solve on complex operands
// (jaxpr/eval/decompositions.cc, eigen_decompositions.cc), the oracle of their
// complex ONNX lowerings. Expected values are numpy's (numpy.linalg.cholesky /
// numpy.linalg.solve, the commands quoted next to them) or derived by hand in
// the comments; the triangular solves are also checked for every parameter
// combination by the residual op(A) X - B, with op(A) built here.
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/array.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::jax2onnx::jaxpr::testing::C128;
using ::jax2onnx::jaxpr::testing::EvalText;
using ::jax2onnx::jaxpr::testing::ToComplex;
using ::jax2onnx::jaxpr::testing::ToDoubles;
using ::jax2onnx::jaxpr::testing::ToInts;
using ::testing::ElementsAre;
using Complex = std::complex<double>;

std::vector<Array> Eval(const std::string& text,
                        const std::vector<Array>& inputs) {
  auto out = EvalText(text, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Array>{};
}

void ExpectNear(const std::vector<Complex>& got,
                const std::vector<Complex>& want, double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i].real(), want[i].real(), tol) << "element " << i;
    EXPECT_NEAR(got[i].imag(), want[i].imag(), tol) << "element " << i;
  }
}

TEST(ComplexCholeskyTest, HermitianFactorFromTheLowerTriangle) {
  // A = L Lᴴ for L = [[2, 0, 0], [1-1i, 3, 0], [2i, 1+1i, 1]]:
  //   A = [[4, 2+2i, -4i], [2-2i, 11, 1-5i], [4i, 1+5i, 7]]
  // (numpy: L @ L.conj().T), and numpy.linalg.cholesky(A) returns L exactly.
  // The operand holds A's lower triangle, imaginary parts 0.5i / -7i / 3i on
  // the diagonal (zpotrf reads only DBLE(A(j,j))) and noise 9, 8i, -7 in the
  // strict upper triangle, which comes back unchanged (potrf works in place;
  // JAX applies tril outside the primitive).
  auto out =
      Eval("{ lambda ; a:c128[3,3]. let b:c128[3,3] = cholesky a in (b,) }",
           {C128({3, 3}, {{4, 0.5},
                          9,
                          {0, 8},
                          {2, -2},
                          {11, -7},
                          -7,
                          {0, 4},
                          {1, 5},
                          {7, 3}})});
  ASSERT_EQ(out.size(), 1u);
  ExpectNear(ToComplex(out[0]),
             {2, 9, {0, 8}, {1, -1}, 3, -7, {0, 2}, {1, 1}, 1});
}

TEST(ComplexCholeskyTest, FailedMemberIsNaNInBothParts) {
  // Member 0 [[1, .], [2i, 1]]: L00 = 1, L10 = 2i, 1 - |2i|^2 = -3 < 0:
  // fails, every entry NaN + NaN i (JAX's _nan_like for complex). Member 1
  // [[9, .], [3i, 5]]: L00 = 3, L10 = i, L11 = sqrt(5 - 1) = 2.
  auto out =
      Eval("{ lambda ; a:c128[2,2,2]. let b:c128[2,2,2] = cholesky a in (b,) }",
           {C128({2, 2, 2}, {1, 0, {0, 2}, 1, 9, 0, {0, 3}, 5})});
  ASSERT_EQ(out.size(), 1u);
  std::vector<Complex> got = ToComplex(out[0]);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(std::isnan(got[i].real()) && std::isnan(got[i].imag()))
        << "element " << i;
  }
  ExpectNear({got.begin() + 4, got.end()}, {3, 0, {0, 1}, 2});
}

// triangular_solve on c128[2,2] and b c128[2,1] (left) or [1,2] (right).
std::vector<Complex> Solve(bool left, bool lower, bool trans, bool conj,
                           bool unit, const std::vector<Complex>& a,
                           const std::vector<Complex>& b) {
  auto flag = [](bool v) { return v ? std::string("True") : "False"; };
  const std::string shape = left ? "2,1" : "1,2";
  const std::string text =
      "{ lambda ; a:c128[2,2] b:c128[" + shape + "]. let c:c128[" + shape +
      "] = triangular_solve[conjugate_a=" + flag(conj) +
      " left_side=" + flag(left) + " lower=" + flag(lower) +
      " transpose_a=" + flag(trans) + " unit_diagonal=" + flag(unit) +
      "] a b in (c,) }";
  auto out =
      Eval(text, {C128({2, 2}, a), C128(left ? std::vector<int64_t>{2, 1}
                                             : std::vector<int64_t>{1, 2},
                                        b)});
  return out.size() == 1 ? ToComplex(out[0]) : std::vector<Complex>{};
}

TEST(ComplexTriangularSolveTest, NumpyValues) {
  // a = [[1+1i, 5-2i], [2-1i, 3+2i]], b = [1, 2+3i].
  const std::vector<Complex> a = {{1, 1}, {5, -2}, {2, -1}, {3, 2}};
  const std::vector<Complex> b = {1, {2, 3}};
  // lower, transpose_a and conjugate_a: Aᴴ X = b with A = tril(a);
  // numpy.linalg.solve(np.tril(a).conj().T, b) = [2, 1i]. By hand:
  // x1 = (2+3i)/(3-2i) = i, x0 = (1 - (2+1i) i)/(1-1i) = (2-2i)/(1-1i) = 2.
  ExpectNear(Solve(true, true, true, true, false, a, b), {2, {0, 1}});
  // lower, conjugate_a only: conj(A) X = b (JAX conjugates A first);
  // numpy.linalg.solve(np.tril(a).conj(), b) = [0.5+0.5i,
  // 0.11538461538461536+0.576923076923077i].
  ExpectNear(Solve(true, true, false, true, false, a, b),
             {{0.5, 0.5}, {0.11538461538461536, 0.576923076923077}});
  // right side, upper: X triu(a) = b; numpy.linalg.solve(np.triu(a).T, b).T
  // = [0.5-0.5i, 1.1153846153846152+1.423076923076923i].
  ExpectNear(Solve(false, false, false, false, false, a, b),
             {{0.5, -0.5}, {1.1153846153846152, 1.423076923076923}});
}

TEST(ComplexTriangularSolveTest, EveryParameterCombinationSolves) {
  // The residual op(A) X - B (left) or X op(A) - B (right) vanishes, op(A)
  // built here from the named triangle (unit diagonal: 1), conjugated and/or
  // transposed. The unread triangle holds 100 + 100i, which would spoil any
  // solve that read it.
  const Complex big(100, 100);
  for (int mask = 0; mask < 32; ++mask) {
    const bool left = mask & 1, lower = mask & 2, trans = mask & 4,
               conj = mask & 8, unit = mask & 16;
    std::vector<Complex> a = {{2, 1}, big, {1, -3}, {-1, 2}};
    if (!lower) std::swap(a[1], a[2]);
    const std::vector<Complex> b = {{1, 2}, {-3, 0.5}};
    Complex op[2][2];
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        const int r = trans ? j : i, c = trans ? i : j;
        Complex v = (lower ? c > r : c < r) ? 0.0 : a[r * 2 + c];
        if (r == c && unit) v = 1;
        op[i][j] = conj ? std::conj(v) : v;
      }
    }
    const std::vector<Complex> x = Solve(left, lower, trans, conj, unit, a, b);
    ASSERT_EQ(x.size(), 2u) << "mask " << mask;
    for (int i = 0; i < 2; ++i) {
      const Complex r = left ? op[i][0] * x[0] + op[i][1] * x[1]
                             : x[0] * op[0][i] + x[1] * op[1][i];
      EXPECT_NEAR(std::abs(r - b[i]), 0, 1e-12) << "mask " << mask;
    }
  }
}

TEST(ComplexLuTest, PivotsOnTheCabs1MagnitudeAsLapack) {
  // Column 0 is [3, 2+2i]: |2+2i| = 2.83 < 3, but LAPACK's izamax (and JAX's
  // _lu_unblocked) compare |Re| + |Im| = 4 > 3, so row 1 is the pivot.
  // Swapped: [[2+2i, i], [3, 1]]; l = 3/(2+2i) = 0.75-0.75i;
  // u11 = 1 - l i = 0.25-0.75i. numpy: A[[1, 0]] == L @ U (allclose).
  auto out = Eval(
      "{ lambda ; a:c128[2,2]. let b:c128[2,2] c:i32[2] d:i32[2] = lu a in "
      "(b, c, d) }",
      {C128({2, 2}, {3, 1, {2, 2}, {0, 1}})});
  ASSERT_EQ(out.size(), 3u);
  ExpectNear(ToComplex(out[0]), {{2, 2}, {0, 1}, {0.75, -0.75}, {0.25, -0.75}});
  EXPECT_THAT(ToInts(out[1]), ElementsAre(1, 1));
  EXPECT_THAT(ToInts(out[2]), ElementsAre(1, 0));
}

TEST(ComplexLuTest, ZeroPivotSkipsScaling) {
  // a = [[0, 1i], [0, 2]]. Column 0 is all zero (both parts): getf2 keeps
  // pivot row 0, skips the scaling, and the trailing update uses l = 0, so
  // 2 stays 2 (no division by the zero pivot leaks a NaN). Step 1 has only
  // row 1. Factors = a, pivots [0, 1], permutation [0, 1].
  auto out = Eval(
      "{ lambda ; a:c128[2,2]. let b:c128[2,2] c:i32[2] d:i32[2] = lu a in "
      "(b, c, d) }",
      {C128({2, 2}, {0, {0, 1}, 0, 2})});
  ASSERT_EQ(out.size(), 3u);
  ExpectNear(ToComplex(out[0]), {0, {0, 1}, 0, 2});
  EXPECT_THAT(ToInts(out[1]), ElementsAre(0, 1));
  EXPECT_THAT(ToInts(out[2]), ElementsAre(0, 1));
}

TEST(ComplexQrTest, ReflectsAComplexScalarAsZlarfg) {
  // 1 x 1: zlarfg reflects when x is empty but alpha = 3+4i is not real:
  // beta = -sign(Re alpha) |alpha| = -5, tau = ((beta - 3)/beta, -4/beta) =
  // 1.6+0.8i, so R = -5 (real) and Q = 1 - tau = -0.6-0.8i;
  // Q R = 3+4i. (dlarfg would keep tau = 0 for a real alpha.)
  auto out = Eval(
      "{ lambda ; a:c128[1,1]. let b:c128[1,1] c:c128[1,1] = "
      "qr[full_matrices=False pivoting=False use_magma=None] a in (b, c) }",
      {C128({1, 1}, {{3, 4}})});
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(ToComplex(out[0]), {{-0.6, -0.8}});
  ExpectNear(ToComplex(out[1]), {-5});
}

TEST(ComplexQrTest, HouseholderVectorIsConjugatedInQ) {
  // a = [3, 4i]ᵀ: alpha = 3, |x| = 4, beta = -5, tau = (-5 - 3)/-5 = 1.6,
  // v = (1, 4i / (3 + 5)) = (1, 0.5i). Q = I - tau v vᴴ with
  // v vᴴ = [[1, -0.5i], [0.5i, 0.25]]: Q = [[-0.6, 0.8i], [-0.8i, 0.6]];
  // the thin Q is its first column [-0.6, -0.8i], R = [-5]; Q R = a.
  // geqrf keeps v's essential part 0.5i below beta and tau = 1.6.
  auto out = Eval(
      "{ lambda ; a:c128[2,1]. let b:c128[2,1] c:c128[1,1] = "
      "qr[full_matrices=False pivoting=False use_magma=None] a\n"
      "d:c128[2,2] e:c128[2,1] = qr[full_matrices=True pivoting=False "
      "use_magma=None] a\nf:c128[2,1] g:c128[1] = geqrf a in (b, c, d, e, f, "
      "g) }",
      {C128({2, 1}, {3, {0, 4}})});
  ASSERT_EQ(out.size(), 6u);
  ExpectNear(ToComplex(out[0]), {-0.6, {0, -0.8}});
  ExpectNear(ToComplex(out[1]), {-5});
  ExpectNear(ToComplex(out[2]), {-0.6, {0, 0.8}, {0, -0.8}, 0.6});
  ExpectNear(ToComplex(out[3]), {-5, 0});
  ExpectNear(ToComplex(out[4]), {-5, {0, 0.5}});
  ExpectNear(ToComplex(out[5]), {1.6});
}

TEST(ComplexQrTest, HouseholderProductRebuildsQ) {
  // householder_product(geqrf's [-5, 0.5i], [1.6]) is the thin Q above.
  auto out = Eval(
      "{ lambda ; a:c128[2,1] b:c128[1]. let c:c128[2,1] = "
      "householder_product a b in (c,) }",
      {C128({2, 1}, {-5, {0, 0.5}}), C128({1}, {1.6})});
  ASSERT_EQ(out.size(), 1u);
  ExpectNear(ToComplex(out[0]), {-0.6, {0, -0.8}});
}

TEST(ComplexEighTest, HermitianTwoByTwoFromTheLowerTriangle) {
  // H = [[2, i], [-i, 2]] from the lower triangle (upper entry 99 and the
  // diagonal's imaginary parts are never read): eigenvalues 1 and 3
  // (numpy.linalg.eigvalsh(H) = [1, 3]; by hand det(H - x) = (2 - x)² - 1),
  // eigenvectors (1, i)/√2 and (1, -i)/√2 up to a unit complex factor per
  // column: H (1, i) = (2 + i·i, -i + 2i) = (1, i), H (1, -i) = 3 (1, -i).
  // Checked phase-free: |v_ij|² = 1/2 and v_1j / v_0j = ±i.
  auto out = Eval(
      "{ lambda ; a:c128[2,2]. let b:c128[2,2] c:f64[2] = eigh[algorithm=None "
      "lower=True sort_eigenvalues=True subset_by_index=None] a in (b, c) }",
      {C128({2, 2}, {{2, 5}, 99, {0, -1}, {2, -3}})});
  ASSERT_EQ(out.size(), 2u);
  const std::vector<double> w = ToDoubles(out[1]);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NEAR(w[0], 1, 1e-12);
  EXPECT_NEAR(w[1], 3, 1e-12);
  const std::vector<Complex> v = ToComplex(out[0]);  // row-major [2, 2]
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(std::norm(v[i]), 0.5, 1e-12);
  ExpectNear({v[2] / v[0]}, {{0, 1}});   // column 0: (1, i)
  ExpectNear({v[3] / v[1]}, {{0, -1}});  // column 1: (1, -i)
}

// U diag(s) Vᴴ for row-major u [m, k], s [k], vh [k, n].
std::vector<Complex> Reconstruct(const std::vector<Complex>& u,
                                 const std::vector<double>& s,
                                 const std::vector<Complex>& vh, int m, int n) {
  const int k = static_cast<int>(s.size());
  std::vector<Complex> a(m * n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      for (int l = 0; l < k; ++l)
        a[i * n + j] += u[i * k + l] * s[l] * vh[l * n + j];
    }
  }
  return a;
}

TEST(ComplexSvdTest, GoldenRatioSingularValuesAndReconstruction) {
  // A = [[1, i], [0, 1]]: Aᴴ A = [[1, i], [-i, 2]], eigenvalues
  // (3 ± √5)/2 = φ² and φ⁻² (φ = (1 + √5)/2), so s = [φ, 1/φ]
  // (numpy.linalg.svd(A, compute_uv=False) = [1.6180339887, 0.6180339887]).
  // U and V are unique up to a unit complex factor per singular pair, so the
  // test checks U diag(s) Vᴴ = A and Uᴴ U = I instead.
  auto out = Eval(
      "{ lambda ; a:c128[2,2]. let b:f64[2] c:c128[2,2] d:c128[2,2] = "
      "svd[algorithm=None compute_uv=True full_matrices=False "
      "subset_by_index=None] a in (b, c, d) }",
      {C128({2, 2}, {1, {0, 1}, 0, 1})});
  ASSERT_EQ(out.size(), 3u);
  const double phi = (1 + std::sqrt(5.0)) / 2;
  const std::vector<double> s = ToDoubles(out[0]);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NEAR(s[0], phi, 1e-12);
  EXPECT_NEAR(s[1], 1 / phi, 1e-12);
  const std::vector<Complex> u = ToComplex(out[1]);
  ExpectNear(Reconstruct(u, s, ToComplex(out[2]), 2, 2), {1, {0, 1}, 0, 1});
  ExpectNear({std::conj(u[0]) * u[1] + std::conj(u[2]) * u[3]}, {0});
}

TEST(ComplexSvdTest, WideRowIsItsNormTimesAUnitVector) {
  // A = [[3, 4i]] (1 x 2, wide: the kernel works on Aᴴ): s = [|A|] = [5],
  // U a unit complex number, Vᴴ = conj(U) A / 5; U s Vᴴ = A.
  auto out = Eval(
      "{ lambda ; a:c128[1,2]. let b:f64[1] c:c128[1,1] d:c128[1,2] = "
      "svd[algorithm=None compute_uv=True full_matrices=False "
      "subset_by_index=None] a in (b, c, d) }",
      {C128({1, 2}, {3, {0, 4}})});
  ASSERT_EQ(out.size(), 3u);
  const std::vector<double> s = ToDoubles(out[0]);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_NEAR(s[0], 5, 1e-12);
  const std::vector<Complex> u = ToComplex(out[1]);
  EXPECT_NEAR(std::abs(u[0]), 1, 1e-12);
  ExpectNear(Reconstruct(u, s, ToComplex(out[2]), 1, 2), {3, {0, 4}});
}

TEST(ComplexTridiagonalSolveTest, TwoByTwoByHand) {
  // T = [[2, i], [i, 2]] (d = [2, 2], du[0] = i, dl[1] = i; dl[0] and du[1]
  // hold 99, which Thomas never reads), b = [1, 0]: det T = 4 - i² = 5,
  // T⁻¹ = [[2, -i], [-i, 2]] / 5, x = [0.4, -0.2i]. Thomas: c'0 = i/2,
  // d'0 = 1/2, denominator 2 - i·i/2 = 2.5, d'1 = -0.5i / 2.5 = -0.2i = x1,
  // x0 = 0.5 - (i/2)(-0.2i) = 0.4.
  auto out = Eval(
      "{ lambda ; a:c128[2] b:c128[2] c:c128[2] d:c128[2,1]. let e:c128[2,1] "
      "= tridiagonal_solve[perturb_singular=False] a b c d in (e,) }",
      {C128({2}, {99, {0, 1}}), C128({2}, {2, 2}), C128({2}, {{0, 1}, 99}),
       C128({2, 1}, {1, 0})});
  ASSERT_EQ(out.size(), 1u);
  ExpectNear(ToComplex(out[0]), {0.4, {0, -0.2}});
}

}  // namespace
}  // namespace jax2onnx::jaxpr
