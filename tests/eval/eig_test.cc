// The reference interpreter's eig (jaxpr/eval/eig_general.cc), the oracle of
// eig's lowering, against XLA on CPU (LAPACK ?geev): JAX's back-compat data
// cpu_eig_lapack_geev.py (data_2024_08_19, extracted into
// tests/stablehlo/lapack_eigen/geev_*.npz: w, vl, vr of iota(16).reshape(4,
// 4) in f32, f64, c64 and c128), hand-derived cases, and the defining
// residuals A v = λ v, uᴴ A = λ uᴴ on pseudo-random matrices.
//
// What is unique in an eigendecomposition, and so what is compared: the
// eigenvalues as a multiset (geev's order is whatever its QR iteration
// produces: each of ours is matched to the nearest unused XLA value); each
// eigenvector of a simple eigenvalue up to a unit factor (|vᴴ v_xla| = 1 for
// unit vectors); for a repeated eigenvalue only the eigenspace (our vectors
// lie in the span of XLA's). geev's normalization (norm 1, largest component
// real) is checked on our vectors directly.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jaxpr/array.h"
#include "jaxpr/io/npy.h"
#include "tests/eval/eig_compare.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::jax2onnx::jaxpr::eig_compare::C;
using ::jax2onnx::jaxpr::eig_compare::Eig;
using ::jax2onnx::jaxpr::eig_compare::Entries;
using ::jax2onnx::jaxpr::eig_compare::ExpectEigenpairs;
using ::jax2onnx::jaxpr::eig_compare::ExpectSameVectors;
using ::jax2onnx::jaxpr::eig_compare::MatchValues;
using ::jax2onnx::jaxpr::testing::EvalText;
using ::jax2onnx::jaxpr::testing::MakeArray;
using ::jax2onnx::jaxpr::testing::ToComplex;

std::string Text(const std::string& in, const std::string& out, int64_t n,
                 bool left, bool right) {
  std::string outs = "w:" + out + "[" + std::to_string(n) + "]";
  std::string results = "w";
  const std::string mat =
      out + "[" + std::to_string(n) + "," + std::to_string(n) + "]";
  if (left) outs += " vl:" + mat, results += ", vl";
  if (right) outs += " vr:" + mat, results += ", vr";
  return "{ lambda ; a:" + in + "[" + std::to_string(n) + "," +
         std::to_string(n) + "]. let " + outs +
         " = eig[compute_left_eigenvectors=" + (left ? "True" : "False") +
         " compute_right_eigenvectors=" + (right ? "True" : "False") +
         " enable_eigvec_derivs=False implementation=None] a in (" + results +
         ",) }";
}

Eig RunEig(const std::string& in_dtype, const std::string& out_dtype,
           const Array& a, int64_t n) {
  auto out = EvalText(Text(in_dtype, out_dtype, n, true, true), {a});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || out->size() != 3) return {};
  return {ToComplex((*out)[0]), ToComplex((*out)[1]), ToComplex((*out)[2])};
}

// The matrix as complex doubles (real dtypes widened).
std::vector<C> Widened(const Array& a) {
  if (IsComplex(a.dtype())) return ToComplex(a);
  std::vector<C> v;
  for (int64_t i = 0; i < a.num_elements(); ++i)
    v.emplace_back(a.GetAsDouble(i));
  return v;
}

struct XlaCase {
  const char* file;
  DType in;
  const char* in_name;
  const char* out_name;
  double tol;
};

TEST(EigTest, MatchesXlaGeevOnJaxBackCompatData) {
  const std::string dir =
      std::string(JAX2ONNX_SOURCE_DIR) + "/tests/stablehlo/lapack_eigen/";
  for (const XlaCase& c :
       {XlaCase{"geev_f32", DType::kF32, "f32", "c64", 2e-4},
        XlaCase{"geev_f64", DType::kF64, "f64", "c128", 1e-11},
        XlaCase{"geev_c64", DType::kC64, "c64", "c64", 2e-4},
        XlaCase{"geev_c128", DType::kC128, "c128", "c128", 1e-11}}) {
    SCOPED_TRACE(c.file);
    auto npz = ReadNpzFile(dir + c.file + ".npz");
    ASSERT_TRUE(npz.ok()) << npz.status();
    ASSERT_EQ(npz->size(), 3u);  // expected_0..2: w, vl, vr
    const std::vector<C> want_w = ToComplex((*npz)[0].second),
                         want_vl = ToComplex((*npz)[1].second),
                         want_vr = ToComplex((*npz)[2].second);
    // The module's operand: stablehlo.iota 0..15 reshaped to 4 x 4.
    std::vector<double> iota(16);
    for (int i = 0; i < 16; ++i) iota[i] = i;
    Array a = MakeArray(c.in, {4, 4}, iota);
    if (IsComplex(c.in)) {
      a = Array(c.in, {4, 4});
      for (int i = 0; i < 16; ++i) {
        if (c.in == DType::kC64) {
          a.typed_data<float>()[2 * i] = i,
                                    a.typed_data<float>()[2 * i + 1] = 0;
        } else {
          a.typed_data<double>()[2 * i] = i,
                                     a.typed_data<double>()[2 * i + 1] = 0;
        }
      }
    }
    const Eig e = RunEig(c.in_name, c.out_name, a, 4);
    ASSERT_EQ(e.w.size(), 4u);
    // ‖A‖ is about 36: tolerances scale with it.
    const std::vector<int64_t> match = MatchValues(e.w, want_w, 36 * c.tol);
    // iota(16) has rank 2: eigenvalue 0 twice (XLA: ~1e-15 and ~5e-16 in
    // f64), the two others simple.
    ExpectSameVectors(e.vr, want_vr, want_w, match, 4, 1e-2, 10 * c.tol, "vr");
    ExpectSameVectors(e.vl, want_vl, want_w, match, 4, 1e-2, 10 * c.tol, "vl");
    ExpectEigenpairs(Widened(a), e, 4, 36 * c.tol);
  }
}

TEST(EigTest, UpperTriangularHasItsDiagonalAndHandDerivedVectors) {
  // A = [[1, 2, 3], [0, 4, 5], [0, 0, 6]]: eigenvalues 1, 4, 6. Right
  // vectors (A - λ I) v = 0 by back-substitution: λ = 1: e_0; λ = 4:
  // -3 v0 + 2 v1 = 0 -> (2, 3, 0) / √13; λ = 6: -2 v1 + 5 v2 = 0, -5 v0 +
  // 2 v1 + 3 v2 = 0 -> (16, 25, 10) / √981. Each has a unique
  // largest-magnitude component, so geev's normalization fixes the sign:
  // positive.
  const Array a = MakeArray(DType::kF64, {3, 3}, {1, 2, 3, 0, 4, 5, 0, 0, 6});
  const Eig e = RunEig("f64", "c128", a, 3);
  ASSERT_EQ(e.w.size(), 3u);
  const std::vector<C> want_w = {1, 4, 6};
  const std::vector<std::vector<double>> want_v = {
      {1, 0, 0},
      {2 / std::sqrt(13.0), 3 / std::sqrt(13.0), 0},
      {16 / std::sqrt(981.0), 25 / std::sqrt(981.0), 10 / std::sqrt(981.0)}};
  const std::vector<int64_t> match = MatchValues(e.w, want_w, 1e-12);
  for (int64_t k = 0; k < 3; ++k) {
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_NEAR(std::abs(e.vr[i * 3 + k] - want_v[match[k]][i]), 0, 1e-12)
          << "vr column " << k << " row " << i;
    }
  }
  ExpectEigenpairs(Widened(a), e, 3, 1e-12);
}

TEST(EigTest, RotationHasConjugateImaginaryPair) {
  // [[0, -1], [1, 0]] (f32): eigenvalues ±i; A v = i v for v = (1, -i) / √2
  // (A v = (i, 1) / √2 = i v), A v = -i v for (1, i) / √2. Both components
  // have magnitude 1/√2, so the unit factor is not fixed: compare
  // phase-free.
  const Array a = MakeArray(DType::kF32, {2, 2}, {0, -1, 1, 0});
  const Eig e = RunEig("f32", "c64", a, 2);
  ASSERT_EQ(e.w.size(), 2u);
  const double h = 1 / std::sqrt(2.0);
  const std::vector<C> want_w = {C(0, 1), C(0, -1)};
  const std::vector<C> want_vr = {h, h, C(0, -h), C(0, h)};
  const std::vector<int64_t> match = MatchValues(e.w, want_w, 1e-6);
  ExpectSameVectors(e.vr, want_vr, want_w, match, 2, 1e-2, 1e-6, "vr");
  ExpectEigenpairs(Widened(a), e, 2, 1e-6);
}

TEST(EigTest, RandomMatricesSatisfyTheDefiningResiduals) {
  // The oracle is the definition: A v = λ v, uᴴ A = λ uᴴ, and the
  // eigenvalues summing to the trace.
  for (int64_t n : {1, 2, 5, 8}) {
    SCOPED_TRACE(n);
    const std::vector<double> re = Entries(n * n, 7 + n),
                              im = Entries(n * n, 99 + n);
    const Array real = MakeArray(DType::kF64, {n, n}, re);
    Array cplx(DType::kC128, {n, n});
    for (int64_t i = 0; i < n * n; ++i) {
      cplx.typed_data<double>()[2 * i] = re[i];
      cplx.typed_data<double>()[2 * i + 1] = im[i];
    }
    for (const auto& [arr, in] :
         {std::pair<const Array*, const char*>{&real, "f64"},
          std::pair<const Array*, const char*>{&cplx, "c128"}}) {
      const Eig e = RunEig(in, "c128", *arr, n);
      ASSERT_EQ(static_cast<int64_t>(e.w.size()), n);
      const std::vector<C> m = Widened(*arr);
      ExpectEigenpairs(m, e, n, 1e-12);
      C trace = 0, sum = 0;
      for (int64_t i = 0; i < n; ++i) trace += m[i * n + i], sum += e.w[i];
      EXPECT_NEAR(std::abs(trace - sum), 0, 1e-12);
    }
  }
}

TEST(EigTest, FlagsSelectTheResultsAndNonFiniteMembersAreNaN) {
  // A batch of two: the first is diag(2, 3); the second holds a NaN, for
  // which geev reports failure and JAX returns NaN everywhere.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Array a = MakeArray(DType::kF32, {2, 2, 2}, {2, 0, 0, 3, 1, nan, 0, 1});
  auto out = EvalText(
      "{ lambda ; a:f32[2,2,2]. let w:c64[2,2] vr:c64[2,2,2] = "
      "eig[compute_left_eigenvectors=False compute_right_eigenvectors=True "
      "enable_eigvec_derivs=False implementation=None] a in (w, vr) }",
      {a});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  const std::vector<C> w = ToComplex((*out)[0]), vr = ToComplex((*out)[1]);
  std::vector<double> first = {w[0].real(), w[1].real()};
  std::sort(first.begin(), first.end());
  EXPECT_EQ(first, (std::vector<double>{2, 3}));
  EXPECT_EQ(w[0].imag(), 0);
  for (int i = 2; i < 4; ++i) EXPECT_TRUE(std::isnan(w[i].real()));
  for (int i = 4; i < 8; ++i) EXPECT_TRUE(std::isnan(vr[i].imag()));
  auto values_only = EvalText(
      "{ lambda ; a:f32[2,2,2]. let w:c64[2,2] = "
      "eig[compute_left_eigenvectors=False compute_right_eigenvectors=False "
      "use_magma=None] a in (w,) }",
      {a});
  ASSERT_TRUE(values_only.ok()) << values_only.status();
  EXPECT_EQ(values_only->size(), 1u);
}

}  // namespace
}  // namespace jax2onnx::jaxpr
