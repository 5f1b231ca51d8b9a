// Hand-derived unit tests of the reference interpreter's matrix
// factorizations and solves (jaxpr/eval/decompositions.cc). Every expected
// value is derived in a comment.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::jax2onnx::jaxpr::testing::EvalText;
using ::jax2onnx::jaxpr::testing::MakeArray;
using ::jax2onnx::jaxpr::testing::MakeIntArray;
using ::jax2onnx::jaxpr::testing::ToDoubles;
using ::jax2onnx::jaxpr::testing::ToInts;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::IsNan;

std::vector<Array> Eval(const std::string& text,
                        const std::vector<Array>& inputs) {
  auto out = EvalText(text, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Array>{};
}

TEST(CholeskyTest, ThreeByThreeReadsOnlyTheLowerTriangle) {
  // A (lower triangle) = [[4, ., .], [2, 10, .], [-2, 2, 6]]:
  //   L00 = sqrt(4) = 2, L10 = 2/2 = 1, L20 = -2/2 = -1,
  //   L11 = sqrt(10 - 1*1) = 3, L21 = (2 - (-1)(1)) / 3 = 1,
  //   L22 = sqrt(6 - 1 - 1) = 2.
  // The strict upper triangle (99, 98, 97) is never read and comes back
  // unchanged (potrf works in place; JAX applies tril outside).
  auto out =
      Eval("{ lambda ; a:f64[3,3]. let b:f64[3,3] = cholesky a in (b,) }",
           {MakeArray(DType::kF64, {3, 3}, {4, 99, 98, 2, 10, 97, -2, 2, 6})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(ToDoubles(out[0]), ElementsAre(2, 99, 98, 1, 3, 97, -1, 1, 2));
}

TEST(CholeskyTest, FailedMemberOfABatchIsAllNaN) {
  // Member 0 [[1, .], [2, 1]]: L00 = 1, L10 = 2, L11^2 = 1 - 4 < 0 -> fails,
  // every entry NaN. Member 1 [[9, 0], [3, 5]]: L00 = 3, L10 = 1,
  // L11 = sqrt(5 - 1) = 2; upper entry 0 kept.
  auto out =
      Eval("{ lambda ; a:f32[2,2,2]. let b:f32[2,2,2] = cholesky a in (b,) }",
           {MakeArray(DType::kF32, {2, 2, 2}, {1, 2, 2, 1, 9, 0, 3, 5})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(ToDoubles(out[0]),
              ElementsAre(IsNan(), IsNan(), IsNan(), IsNan(), 3, 0, 1, 2));
}

constexpr char kSolveText[] =
    "{ lambda ; a:f64[2,2] b:f64[ROWS,COLS]. let c:f64[ROWS,COLS] = "
    "triangular_solve[conjugate_a=False left_side=LEFT lower=LOWER "
    "transpose_a=TRANS unit_diagonal=UNIT] a b in (c,) }";

std::vector<double> Solve(bool left, bool lower, bool trans, bool unit,
                          const std::vector<double>& a,
                          const std::vector<double>& b) {
  std::string text = kSolveText;
  auto put = [&](const std::string& key, const std::string& value) {
    for (size_t p; (p = text.find(key)) != std::string::npos;) {
      text.replace(p, key.size(), value);
    }
  };
  put("ROWS", left ? "2" : "1");
  put("COLS", left ? "1" : "2");
  put("LEFT", left ? "True" : "False");
  put("LOWER", lower ? "True" : "False");
  put("TRANS", trans ? "True" : "False");
  put("UNIT", unit ? "True" : "False");
  auto out = Eval(text, {MakeArray(DType::kF64, {2, 2}, a),
                         MakeArray(DType::kF64,
                                   left ? std::vector<int64_t>{2, 1}
                                        : std::vector<int64_t>{1, 2},
                                   b)});
  if (out.size() != 1) return {};
  return ToDoubles(out[0]);
}

TEST(TriangularSolveTest, AllSidesAndTransposes) {
  // Stored matrix [[2, 100], [1, 3]]; 100 is outside the lower triangle and
  // never read, so L = [[2, 0], [1, 3]].
  const std::vector<double> a = {2, 100, 1, 3};
  // L x = (4, 11): x0 = 4/2 = 2, x1 = (11 - 1*2)/3 = 3.
  EXPECT_THAT(Solve(true, true, false, false, a, {4, 11}), ElementsAre(2, 3));
  // Lᵀ x = (4, 9), Lᵀ = [[2, 1], [0, 3]]: x1 = 9/3 = 3, x0 = (4 - 3)/2.
  EXPECT_THAT(Solve(true, true, true, false, a, {4, 9}), ElementsAre(0.5, 3));
  // x L = (4, 9): (2 x0 + x1, 3 x1) = (4, 9): x1 = 3, x0 = 0.5.
  EXPECT_THAT(Solve(false, true, false, false, a, {4, 9}), ElementsAre(0.5, 3));
  // Unit diagonal: L = [[1, 0], [1, 1]], L x = (4, 11): x = (4, 7).
  EXPECT_THAT(Solve(true, true, false, true, a, {4, 11}), ElementsAre(4, 7));
  // Upper: U = [[2, 100], [0, 3]] (the 1 is not read), U x = (206, 6):
  // x1 = 2, x0 = (206 - 200)/2 = 3.
  EXPECT_THAT(Solve(true, false, false, false, a, {206, 6}), ElementsAre(3, 2));
  // x Uᵀ = (206, 6) with Uᵀ = [[2, 0], [100, 3]]: (2 x0 + 100 x1, 3 x1):
  // x1 = 2, x0 = 3.
  EXPECT_THAT(Solve(false, false, true, false, a, {206, 6}), ElementsAre(3, 2));
}

TEST(LuTest, PartialPivotingPicksTheLargestMagnitude) {
  // A = [[1, 2], [3, 4]]: |3| > |1| so rows swap: [[3, 4], [1, 2]];
  // l = 1/3, u11 = 2 - (1/3)*4 = 2/3. pivots (1, 1), permutation (1, 0);
  // check: [[1, 0], [1/3, 1]] [[3, 4], [0, 2/3]] = [[3, 4], [1, 2]] = A[perm].
  auto out = Eval(
      "{ lambda ; a:f64[2,2]. let b:f64[2,2] c:i32[2] d:i32[2] = lu a in "
      "(b, c, d) }",
      {MakeArray(DType::kF64, {2, 2}, {1, 2, 3, 4})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(ToDoubles(out[0]), ElementsAre(3, 4, DoubleNear(1.0 / 3, 1e-15),
                                             DoubleNear(2.0 / 3, 1e-15)));
  EXPECT_THAT(ToInts(out[1]), ElementsAre(1, 1));
  EXPECT_THAT(ToInts(out[2]), ElementsAre(1, 0));
}

TEST(LuTest, TiesKeepTheFirstRowAndZeroPivotsSkipScaling) {
  // A = [[2, 1, 0], [-2, 3, 0]] (2x3): |2| == |-2|, the first row stays
  // (idamax returns the first maximum); l = -1, u11 = 3 - (-1)(1) = 4,
  // u12 = 0 - (-1)(0) = 0. pivots (0, 1), permutation (0, 1).
  auto out = Eval(
      "{ lambda ; a:f64[2,3]. let b:f64[2,3] c:i32[2] d:i32[2] = lu a in "
      "(b, c, d) }",
      {MakeArray(DType::kF64, {2, 3}, {2, 1, 0, -2, 3, 0})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(ToDoubles(out[0]), ElementsAre(2, 1, 0, -1, 4, 0));
  EXPECT_THAT(ToInts(out[1]), ElementsAre(0, 1));
  // A zero first column: pivot 0 stays at row 0 and nothing is divided;
  // step 1 works on [[1], [5]] below: |5| > |1| swaps rows 1 and 2.
  // A = [[0, 1], [0, 1], [0, 5]] -> pivots (0, 2), rows (0, 2, 1):
  // [[0, 1], [0, 5], [0, 1/5]].
  out = Eval(
      "{ lambda ; a:f64[3,2]. let b:f64[3,2] c:i32[2] d:i32[3] = lu a in "
      "(b, c, d) }",
      {MakeArray(DType::kF64, {3, 2}, {0, 1, 0, 1, 0, 5})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(ToDoubles(out[0]),
              ElementsAre(0, 1, 0, 5, 0, DoubleNear(0.2, 1e-15)));
  EXPECT_THAT(ToInts(out[1]), ElementsAre(0, 2));
  EXPECT_THAT(ToInts(out[2]), ElementsAre(0, 2, 1));
}

TEST(LuPivotsToPermutationTest, AppliesSwapsInOrder) {
  // iota(5) = 0 1 2 3 4; swap 0<->2: 2 1 0 3 4; swap 1<->2: 2 0 1 3 4;
  // swap 2<->3: 2 0 3 1 4.
  auto out = Eval(
      "{ lambda ; a:i32[3]. let b:i32[5] = "
      "lu_pivots_to_permutation[permutation_size=5] a in (b,) }",
      {MakeIntArray(DType::kI32, {3}, {2, 2, 3})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(ToInts(out[0]), ElementsAre(2, 0, 3, 1, 4));
}

TEST(EighTest, TwoByTwoFromTheLowerTriangle) {
  // Lower triangle of [[2, 99], [1, 2]] -> [[2, 1], [1, 2]]: det(A - l I) =
  // (2 - l)^2 - 1 = 0 -> l = 1, 3 (ascending). A (1, -1) = (1, -1) and
  // A (1, 1) = 3 (1, 1): columns ±(1, -1)/√2 then ±(1, 1)/√2.
  auto out = Eval(
      "{ lambda ; a:f64[2,2]. let b:f64[2,2] c:f64[2] = eigh[algorithm=None "
      "lower=True sort_eigenvalues=True subset_by_index=None] a in (b, c) }",
      {MakeArray(DType::kF64, {2, 2}, {2, 99, 1, 2})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(ToDoubles(out[1]),
              ElementsAre(DoubleNear(1, 1e-14), DoubleNear(3, 1e-14)));
  const std::vector<double> v = ToDoubles(out[0]);  // row-major, columns
  // Sign-free checks: v00 v10 = -1/2 (column 0 ∝ (1, -1)), v01 v11 = 1/2.
  EXPECT_NEAR(v[0] * v[2], -0.5, 1e-14);
  EXPECT_NEAR(v[1] * v[3], 0.5, 1e-14);
}

TEST(SvdTest, TallDiagonalSortsDescending) {
  // A = [[3, 0], [0, 4], [0, 0]]: Aᵀ A = diag(9, 16), s = (4, 3); the first
  // singular pair is ±(0, 1, 0) / ±(0, 1), the second ±(1, 0, 0) / ±(1, 0),
  // with u_j s_j v_jᵀ summing back to A (signs pair up).
  auto out = Eval(
      "{ lambda ; a:f64[3,2]. let b:f64[2] c:f64[3,2] d:f64[2,2] = "
      "svd[algorithm=None compute_uv=True full_matrices=False "
      "subset_by_index=None] a in (b, c, d) }",
      {MakeArray(DType::kF64, {3, 2}, {3, 0, 0, 4, 0, 0})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(ToDoubles(out[0]),
              ElementsAre(DoubleNear(4, 1e-14), DoubleNear(3, 1e-14)));
  const std::vector<double> s = ToDoubles(out[0]);
  const std::vector<double> u = ToDoubles(out[1]);
  const std::vector<double> vt = ToDoubles(out[2]);
  const std::vector<double> a = {3, 0, 0, 4, 0, 0};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) {
      double r = 0;
      for (int k = 0; k < 2; ++k) r += u[i * 2 + k] * s[k] * vt[k * 2 + j];
      EXPECT_NEAR(r, a[i * 2 + j], 1e-14) << i << "," << j;
    }
  }
  EXPECT_NEAR(std::abs(u[1 * 2 + 0]), 1, 1e-14);   // u_0 = ±e_1
  EXPECT_NEAR(std::abs(vt[0 * 2 + 1]), 1, 1e-14);  // v_0 = ±e_1
}

TEST(SvdTest, FullMatricesCompletesUWithTheLongestResiduals) {
  // A = (3, 0, 4)ᵀ: s = 5, u_0 = ±(0.6, 0, 0.8), Vᵀ = (±1). Completion: the
  // residuals e_j - (u_0ᵀ e_j) u_0 have squared norms 1 - 0.36 = 0.64, 1,
  // 1 - 0.64 = 0.36, so u_1 = e_1; then e_1's residual is 0 and e_0's is
  // (1 - 0.36, 0, -0.48) of norm 0.8: u_2 = (0.8, 0, -0.6) (the residuals
  // depend on u_0 u_0ᵀ only, so not on u_0's sign).
  auto out = Eval(
      "{ lambda ; a:f64[3,1]. let b:f64[1] c:f64[3,3] d:f64[1,1] = "
      "svd[algorithm=None compute_uv=True full_matrices=True "
      "subset_by_index=None] a in (b, c, d) }",
      {MakeArray(DType::kF64, {3, 1}, {3, 0, 4})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(ToDoubles(out[0]), ElementsAre(DoubleNear(5, 1e-14)));
  const std::vector<double> u = ToDoubles(out[1]);
  ASSERT_EQ(u.size(), 9u);
  EXPECT_NEAR(std::abs(u[0]), 0.6, 1e-14);
  EXPECT_NEAR(std::abs(u[6]), 0.8, 1e-14);
  EXPECT_THAT(std::vector<double>({u[1], u[4], u[7]}),
              ElementsAre(0, DoubleNear(1, 1e-14), 0));
  EXPECT_THAT(std::vector<double>({u[2], u[5], u[8]}),
              ElementsAre(DoubleNear(0.8, 1e-14), 0, DoubleNear(-0.6, 1e-14)));
}

TEST(QrTest, PivotingSwapsInTheLongestColumnFirst) {
  // A = [[1, 0], [0, 2]]: column norms (1, 2), so column 1 is swapped in:
  // p = (1, 0), A[:, p] = [[0, 1], [2, 0]]. Column (0, 2): alpha = 0,
  // beta = -2, tau = (beta - alpha) / beta = 1, v = (1, 2 / (0 + 2)) = (1, 1),
  // H = I - v vᵀ = [[0, -1], [-1, 0]]; H (1, 0)ᵀ = (0, -1). The last step
  // has nothing below the diagonal (tau = 0): R = [[-2, 0], [0, -1]], Q = H,
  // and Q R = [[0, 1], [2, 0]] = A[:, p].
  auto out = Eval(
      "{ lambda ; a:f64[2,2]. let b:f64[2,2] c:f64[2,2] d:i32[2] = "
      "qr[full_matrices=False pivoting=True use_magma=None] a in (b, c, d) }",
      {MakeArray(DType::kF64, {2, 2}, {1, 0, 0, 2})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(ToDoubles(out[0]), ElementsAre(0, -1, -1, 0));
  EXPECT_THAT(ToDoubles(out[1]), ElementsAre(-2, 0, 0, -1));
  EXPECT_THAT(ToInts(out[2]), ElementsAre(1, 0));
}

TEST(QrTest, HouseholderFollowsLapackSigns) {
  // A = (3, 4)ᵀ: alpha = 3, |x| = 4, beta = -sign(3) * 5 = -5,
  // tau = (beta - alpha) / beta = 8/5, v = (1, 4 / (3 + 5)) = (1, 1/2).
  // H = I - tau v vᵀ = [[1 - 8/5, -4/5], [-4/5, 1 - 2/5]]
  //   = [[-0.6, -0.8], [-0.8, 0.6]]; R = (-5); Q R = (3, 4)ᵀ.
  const std::string thin =
      "{ lambda ; a:f64[2,1]. let b:f64[2,1] c:f64[1,1] = "
      "qr[full_matrices=False pivoting=False use_magma=None] a in (b, c) }";
  auto out = Eval(thin, {MakeArray(DType::kF64, {2, 1}, {3, 4})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(ToDoubles(out[0]),
              ElementsAre(DoubleNear(-0.6, 1e-15), DoubleNear(-0.8, 1e-15)));
  EXPECT_THAT(ToDoubles(out[1]), ElementsAre(DoubleNear(-5, 1e-15)));
  const std::string full =
      "{ lambda ; a:f64[2,1]. let b:f64[2,2] c:f64[2,1] = "
      "qr[full_matrices=True pivoting=False use_magma=None] a in (b, c) }";
  out = Eval(full, {MakeArray(DType::kF64, {2, 1}, {3, 4})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(ToDoubles(out[0]),
              ElementsAre(DoubleNear(-0.6, 1e-15), DoubleNear(-0.8, 1e-15),
                          DoubleNear(-0.8, 1e-15), DoubleNear(0.6, 1e-15)));
  EXPECT_THAT(ToDoubles(out[1]), ElementsAre(DoubleNear(-5, 1e-15), 0));
}

// gtsv interchanges rows 0 and 1 when |d0| < |dl1|: [[0, 2], [3, 1]] x =
// (4, 5) (dl = (0, 3), d = (0, 1), du = (2, 0)). By hand (dgtsv.f, I = N-1):
// fact = d0/dl1 = 0, D = (3, du0 - 0*d1 = 2), DU0 = d1 = 1, B = (5, 4 - 0*5);
// back: x1 = 4/2 = 2, x0 = (5 - 1*2)/3 = 1. Elimination without pivoting
// divides by d0 = 0.
TEST(TridiagonalSolveTest, ZeroLeadingDiagonalIsSolvedByInterchange) {
  auto out = Eval(
      "{ lambda ; a:f64[2] b:f64[2] c:f64[2] d:f64[2,1]. let e:f64[2,1] = "
      "tridiagonal_solve[perturb_singular=False] a b c d in (e,) }",
      {MakeArray(DType::kF64, {2}, {0, 3}), MakeArray(DType::kF64, {2}, {0, 1}),
       MakeArray(DType::kF64, {2}, {2, 0}),
       MakeArray(DType::kF64, {2, 1}, {4, 5})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(ToDoubles(out[0]), ElementsAre(1, 2));
}

// A zero first column (d0 = dl1 = 0): dgtsv takes no interchange
// (|0| >= |0|) and finds D(1) = 0, INFO = 1; JAX then returns NaN for the
// whole member (_tridiagonal_solve_cpu_lowering).
TEST(TridiagonalSolveTest, SingularMemberIsNaN) {
  auto out = Eval(
      "{ lambda ; a:f64[2] b:f64[2] c:f64[2] d:f64[2,1]. let e:f64[2,1] = "
      "tridiagonal_solve[perturb_singular=False] a b c d in (e,) }",
      {MakeArray(DType::kF64, {2}, {0, 0}), MakeArray(DType::kF64, {2}, {0, 1}),
       MakeArray(DType::kF64, {2}, {2, 0}),
       MakeArray(DType::kF64, {2, 1}, {4, 5})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(ToDoubles(out[0]), ElementsAre(IsNan(), IsNan()));
}

TEST(TridiagonalSolveTest, NoInterchangeOnADiagonallyDominantSystem) {
  // [[2, 1, 0], [1, 2, 1], [0, 1, 2]] x = (4, 8, 8) (dl = (0, 1, 1),
  // d = (2, 2, 2), du = (1, 1, 0)): x = (1, 2, 3) since 2+2 = 4,
  // 1+4+3 = 8, 2+6 = 8.
  auto out = Eval(
      "{ lambda ; a:f64[3] b:f64[3] c:f64[3] d:f64[3,1]. let e:f64[3,1] = "
      "tridiagonal_solve[perturb_singular=False] a b c d in (e,) }",
      {MakeArray(DType::kF64, {3}, {0, 1, 1}),
       MakeArray(DType::kF64, {3}, {2, 2, 2}),
       MakeArray(DType::kF64, {3}, {1, 1, 0}),
       MakeArray(DType::kF64, {3, 1}, {4, 8, 8})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(ToDoubles(out[0]),
              ElementsAre(DoubleNear(1, 1e-14), DoubleNear(2, 1e-14),
                          DoubleNear(3, 1e-14)));
}

TEST(GeqrfTest, CompactFormAndHouseholderProduct) {
  // A = (3, 4)ᵀ as in the qr test: beta = -5, tau = 8/5, v's tail
  // 4 / (3 - (-5)) = 1/2 -> a' = (-5, 1/2), taus = (8/5); orgqr rebuilds
  // Q = (I - tau v vᵀ)[:, :1] = (-0.6, -0.8)ᵀ.
  auto out = Eval(
      "{ lambda ; a:f64[2,1]. let b:f64[2,1] c:f64[1] = geqrf a; "
      "d:f64[2,1] = householder_product b c in (b, c, d) }",
      {MakeArray(DType::kF64, {2, 1}, {3, 4})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(ToDoubles(out[0]),
              ElementsAre(DoubleNear(-5, 1e-15), DoubleNear(0.5, 1e-15)));
  EXPECT_THAT(ToDoubles(out[1]), ElementsAre(DoubleNear(1.6, 1e-15)));
  EXPECT_THAT(ToDoubles(out[2]),
              ElementsAre(DoubleNear(-0.6, 1e-15), DoubleNear(-0.8, 1e-15)));
}

TEST(CustomLinearSolveTest, AppliesTheSolveJaxprToItsConstsAndB) {
  // solve(d, b) = b / d with d = (2, 4) and b = (1, 2): (0.5, 0.5). The
  // matvec/vecmat/transpose_solve jaxprs (here one const each) are skipped.
  auto out = Eval(R"({ lambda ; a:f32[2] b:f32[2]. let
    c:f32[2] = custom_linear_solve[
      const_lengths=_LinearSolveTuple(matvec=1, vecmat=0, solve=1, transpose_solve=0)
      jaxprs=_LinearSolveTuple(matvec={ lambda ; d:f32[2] e:f32[2]. let f:f32[2] = mul d e in (f,) }, vecmat=None, solve={ lambda ; g:f32[2] h:f32[2]. let i:f32[2] = div h g in (i,) }, transpose_solve=None)
    ] a a b
  in (c,) })",
                  {MakeArray(DType::kF32, {2}, {2, 4}),
                   MakeArray(DType::kF32, {2}, {1, 2})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(ToDoubles(out[0]), ElementsAre(0.5, 0.5));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
