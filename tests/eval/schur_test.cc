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
  for (const XlaCase& c : {XlaCase{"gees_c64", DType::kC64, "c64[4,4]", 1e-4},
                           XlaCase{"gees_c128", DType::kC128, "c128[4,4]",
                                   1e-12}}) {
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
    ExpectSchur(ToComplex(a), ToComplex((*out)[0]), ToComplex((*out)[1]), 4,
                36 * c.tol, ToComplex(entry("expected_0")),
                ToComplex(entry("expected_1")), 1e-2);
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
  EXPECT_EQ(ToComplex((*out)[1]),
            (std::vector<C>{C(1), C(0), C(0), C(1)}));
  auto t_only = EvalText(SchurText("c128[2,2]", false), {a});
  ASSERT_TRUE(t_only.ok()) << t_only.status();
  EXPECT_EQ(t_only->size(), 1u);
}

// [[0, 1], [1, 0]] has the eigenvalues ±1 with the eigenvectors (1, ±1) /
// √2: T's diagonal is {1, -1}, Z T Zᴴ = A, and Z's first column is the
// eigenvector of T's first value (up to phase); a member holding a NaN (gees fails, JAX returns NaN) is NaN
// in T and Z.
TEST(SchurTest, SwapMatrixAndNonFiniteMember) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double h = std::sqrt(0.5);
  const Array a = ComplexArray(
      DType::kC64, {2, 2, 2},
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

// dgees's real Schur form (quasi-triangular, 2 x 2 blocks) is not
// implemented, nor is sorting (JAX does not implement it either).
TEST(SchurTest, RealOperandsAndSortingAreRefused) {
  const Array a(DType::kF32, {2, 2});
  auto real = EvalText(SchurText("f32[2,2]", true), {a});
  ASSERT_FALSE(real.ok());
  EXPECT_TRUE(absl::StrContains(real.status().message(),
                                "schur of a real (f32) operand"))
      << real.status();
  auto sorted = EvalText(
      "{ lambda ; a:c64[2,2]. let t:c64[2,2] = "
      "schur[compute_schur_vectors=False select_callable=None "
      "sort_eig_vals=True] a in (t,) }",
      {Array(DType::kC64, {2, 2})});
  ASSERT_FALSE(sorted.ok());
  EXPECT_TRUE(absl::StrContains(sorted.status().message(), "sort_eig_vals"))
      << sorted.status();
}

}  // namespace
}  // namespace jax2onnx::jaxpr
