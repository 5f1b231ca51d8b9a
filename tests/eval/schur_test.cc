// The reference interpreter's schur (jaxpr/eval/eig_general.cc), the oracle
// of schur's lowering, against XLA on CPU (LAPACK ?gees): JAX's back-compat
// data cpu_schur_lapack_gees.py (data_2024_11_29, extracted into
// tests/stablehlo/lapack_eigen/gees_{c64,c128}.npz: T and Z of
// iota(16).reshape(4, 4)), and hand-derived cases. A Schur form is unique
// only up to the order of T's diagonal and a unit factor per column of Z,
// so the comparison is eig_compare::ExpectSchur's.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "jaxpr/array.h"
#include "jaxpr/io/npy.h"
#include "tests/eval/eig_compare.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::jax2onnx::jaxpr::eig_compare::C;
using ::jax2onnx::jaxpr::eig_compare::ExpectSchur;
using ::jax2onnx::jaxpr::testing::EvalText;
using ::jax2onnx::jaxpr::testing::MakeArray;
using ::jax2onnx::jaxpr::testing::ToComplex;

// A complex array of `dtype` from (re, im) values.
Array ComplexArray(DType dtype, std::vector<int64_t> shape,
                   const std::vector<C>& values) {
  Array a(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kC64) {
      a.typed_data<float>()[2 * i] = values[i].real();
      a.typed_data<float>()[2 * i + 1] = values[i].imag();
    } else {
      a.typed_data<double>()[2 * i] = values[i].real();
      a.typed_data<double>()[2 * i + 1] = values[i].imag();
    }
  }
  return a;
}

// The elements as complex doubles (real dtypes widened).
std::vector<C> Values(const Array& a) {
  if (IsComplex(a.dtype())) return ToComplex(a);
  std::vector<C> v;
  for (int64_t i = 0; i < a.num_elements(); ++i)
    v.emplace_back(a.GetAsDouble(i));
  return v;
}

std::string SchurText(const std::string& type, bool vectors) {
  return "{ lambda ; a:" + type + ". let t:" + type +
         (vectors ? " z:" + type : "") +
         " = schur[compute_schur_vectors=" + (vectors ? "True" : "False") +
         " select_callable=None sort_eig_vals=False] a in (t" +
         (vectors ? ", z" : "") + ",) }";
}

TEST(SchurTest, MatchesXlaGeesOnJaxBackCompatData) {
  const std::string dir =
      std::string(JAX2ONNX_SOURCE_DIR) + "/tests/stablehlo/lapack_eigen/";
  struct XlaCase {
    const char* file;
    DType dtype;
    const char* type;
    double tol;
  };
  for (const XlaCase& c :
       {XlaCase{"gees_c64", DType::kC64, "c64[4,4]", 1e-4},
        XlaCase{"gees_c128", DType::kC128, "c128[4,4]", 1e-12},
        XlaCase{"gees_f32", DType::kF32, "f32[4,4]", 1e-4},
        XlaCase{"gees_f64", DType::kF64, "f64[4,4]", 1e-12}}) {
    SCOPED_TRACE(c.file);
    auto npz = ReadNpzFile(dir + c.file + ".npz");
    ASSERT_TRUE(npz.ok()) << npz.status();
    auto entry = [&](const std::string& name) {
      for (const auto& [key, value] : *npz) {
        if (key == name) return value;
      }
      ADD_FAILURE() << "no " << name;
      return Array(c.dtype, {4, 4});
    };
    const Array a = entry("input_0");
    auto out = EvalText(SchurText(c.type, true), {a});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 2u);
    // ‖A‖ is about 36 and iota(16) has the double eigenvalue 0, whose
    // Schur vectors are a subspace: columns 0 and 1 (values 32.5, -2.46)
    // are compared, 2 and 3 only through the reconstruction.
    ExpectSchur(Values(a), Values((*out)[0]), Values((*out)[1]), 4, 36 * c.tol,
                Values(entry("expected_0")), Values(entry("expected_1")), 1e-2,
                !IsComplex(c.dtype));
  }
}

// An upper triangular matrix is its own Schur form: nothing deflates
// before the first test finds every subdiagonal zero, so T = A and Z = I
// exactly; without vectors only T is returned.
TEST(SchurTest, TriangularMatrixIsItsOwnSchurForm) {
  const std::vector<C> values = {C(1, 2), C(3, -1), C(0, 0), C(-2, 0.5)};
  const Array a = ComplexArray(DType::kC128, {2, 2}, values);
  auto out = EvalText(SchurText("c128[2,2]", true), {a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToComplex((*out)[0]), values);
  EXPECT_EQ(ToComplex((*out)[1]), (std::vector<C>{C(1), C(0), C(0), C(1)}));
  auto t_only = EvalText(SchurText("c128[2,2]", false), {a});
  ASSERT_TRUE(t_only.ok()) << t_only.status();
  EXPECT_EQ(t_only->size(), 1u);
}

// [[0, 1], [1, 0]] has the eigenvalues ±1 with the eigenvectors (1, ±1) /
// √2: T's diagonal is {1, -1}, Z T Zᴴ = A, and Z's first column is the
// eigenvector of T's first value (up to phase); a member holding a NaN (gees
// fails, JAX returns NaN) is NaN in T and Z.
TEST(SchurTest, SwapMatrixAndNonFiniteMember) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double h = std::sqrt(0.5);
  const Array a =
      ComplexArray(DType::kC64, {2, 2, 2},
                   {C(0), C(1), C(1), C(0), C(1), C(nan, 0), C(0), C(1)});
  auto out = EvalText(SchurText("c64[2,2,2]", true), {a});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<C> t = ToComplex((*out)[0]), z = ToComplex((*out)[1]);
  const std::vector<C> first(t.begin(), t.begin() + 4);
  ExpectSchur({C(0), C(1), C(1), C(0)}, first,
              std::vector<C>(z.begin(), z.begin() + 4), 2, 1e-6,
              {C(1), C(0), C(0), C(-1)}, {C(h), C(h), C(h), C(-h)}, 0.5);
  for (int i = 4; i < 8; ++i) {
    EXPECT_TRUE(std::isnan(t[i].real()) && std::isnan(z[i].imag()));
  }
}

// A real matrix gets dgees's real Schur form. The rotation by 90° scaled
// by 2, [[0, -2], [2, 0]], has the eigenvalues ±2i: it is already in
// dlanv2's standard form (equal diagonal, b c = -4 < 0), so T = A and
// Z = I exactly. [[1, 2], [0, 3]] is triangular: T = A, Z = I. Sorting is
// refused (JAX does not implement it either).
TEST(SchurTest, RealMatricesGetTheQuasiTriangularForm) {
  auto rotation = EvalText(SchurText("f64[2,2]", true),
                           {MakeArray(DType::kF64, {2, 2}, {0, -2, 2, 0})});
  ASSERT_TRUE(rotation.ok()) << rotation.status();
  EXPECT_EQ(Values((*rotation)[0]), (std::vector<C>{C(0), C(-2), C(2), C(0)}));
  EXPECT_EQ(Values((*rotation)[1]), (std::vector<C>{C(1), C(0), C(0), C(1)}));
  auto triangular = EvalText(SchurText("f32[2,2]", true),
                             {MakeArray(DType::kF32, {2, 2}, {1, 2, 0, 3})});
  ASSERT_TRUE(triangular.ok()) << triangular.status();
  EXPECT_EQ(Values((*triangular)[0]), (std::vector<C>{C(1), C(2), C(0), C(3)}));
  auto sorted = EvalText(
      "{ lambda ; a:c64[2,2]. let t:c64[2,2] = "
      "schur[compute_schur_vectors=False select_callable=None "
      "sort_eig_vals=True] a in (t,) }",
      {Array(DType::kC64, {2, 2})});
  ASSERT_FALSE(sorted.ok());
  EXPECT_TRUE(absl::StrContains(sorted.status().message(), "sort_eig_vals"))
      << sorted.status();
}

// Random real matrices (entries in [-1, 1), so most have complex pairs):
// T quasi-triangular in standard form, Z orthogonal, Z T Zᵀ = A, and T's
// eigenvalues those of the complex iteration (eig's) as a multiset.
TEST(SchurTest, RandomRealMatricesSatisfyTheSchurConditions) {
  for (int64_t n : {3, 5, 8}) {
    const std::vector<double> entries = eig_compare::Entries(n * n, 7 + n);
    const Array a = MakeArray(DType::kF64, {n, n}, entries);
    const std::string type =
        "f64[" + std::to_string(n) + "," + std::to_string(n) + "]";
    auto out = EvalText(SchurText(type, true), {a});
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<C> complex_a;
    for (double x : entries) complex_a.emplace_back(x, 0);
    const std::string ctype =
        "c128[" + std::to_string(n) + "," + std::to_string(n) + "]";
    Array ca(DType::kC128, {n, n});
    for (int64_t i = 0; i < n * n; ++i) {
      ca.typed_data<double>()[2 * i] = entries[i];
      ca.typed_data<double>()[2 * i + 1] = 0;
    }
    auto complex_out = EvalText(SchurText(ctype, true), {ca});
    ASSERT_TRUE(complex_out.ok()) << complex_out.status();
    const std::vector<C> t = Values((*out)[0]);
    // The complex form's own eigenvalues stand in for the reference
    // (their order differs, so no column is compared).
    eig_compare::MatchValues(
        eig_compare::SchurValues(t, n),
        eig_compare::SchurValues(Values((*complex_out)[0]), n), 1e-12);
    ExpectSchur(complex_a, t, Values((*out)[1]), n, 1e-12, t, Values((*out)[1]),
                1e-3, /*real_form=*/true);
  }
}

}  // namespace
}  // namespace jax2onnx::jaxpr
