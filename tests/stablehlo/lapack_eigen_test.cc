// The LAPACK eigen/singular-value custom_calls of jax.export on CPU
// (lapack_?syevd_ffi/heevd, lapack_?gesdd_ffi; stablehlo/translate_lapack.cc)
// on JAX's own back-compat modules (tests/stablehlo/lapack_eigen: the module
// text, the inputs and the outputs XLA computed). Eigen- and singular vectors
// are unique only up to sign (phase), so ONNX Runtime's outputs are held to
// XLA's by what is unique: the values themselves, the reconstruction
// V diag(w) Vᴴ (U diag(s) Vᴴ) against the same product of XLA's outputs,
// orthonormal vectors, and each vector of a simple value equal to XLA's
// after aligning its phase. Both pipelines, opsets 23 and 17.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "api/bundle_access.h"
#include "api/ort_runner.h"
#include "gtest/gtest.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/array.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/io/bundle.h"
#include "onnx/onnx_pb.h"
#include "tests/eval/eig_compare.h"

namespace jax2onnx {
namespace {

using C = std::complex<double>;

const std::string kDir =
    std::string(JAX2ONNX_SOURCE_DIR) + "/tests/stablehlo/lapack_eigen/";

// A batch of matrices [..., rows, cols] (or vectors: cols = 1) as complex
// doubles.
struct Batch {
  int64_t count = 1, rows = 1, cols = 1;
  std::vector<C> v;
  C at(int64_t b, int64_t i, int64_t j) const {
    return v[(b * rows + i) * cols + j];
  }
};

Batch ToBatch(const jaxpr::Array& a, int matrix_rank) {
  Batch m;
  const std::vector<int64_t>& s = a.shape();
  const int r = static_cast<int>(s.size());
  m.rows = s[r - matrix_rank];
  m.cols = matrix_rank == 2 ? s[r - 1] : 1;
  for (int d = 0; d < r - matrix_rank; ++d) m.count *= s[d];
  if (jaxpr::IsComplex(a.dtype())) {
    const jaxpr::Array pairs = jaxpr::ComplexAsPairs(a);
    for (int64_t k = 0; k < a.num_elements(); ++k) {
      m.v.emplace_back(pairs.GetAsDouble(2 * k), pairs.GetAsDouble(2 * k + 1));
    }
  } else {
    for (int64_t k = 0; k < a.num_elements(); ++k) {
      m.v.emplace_back(a.GetAsDouble(k), 0.0);
    }
  }
  return m;
}

// left[:, :k] diag(values) right[:k, :] for batch b (right already holds
// the conjugate-transposed vectors, as Vᴴ in an svd).
std::vector<C> Product(const Batch& left, const Batch& values,
                       const Batch& right, int64_t b) {
  const int64_t k = values.rows;
  std::vector<C> out(left.rows * right.cols);
  for (int64_t i = 0; i < left.rows; ++i) {
    for (int64_t j = 0; j < right.cols; ++j) {
      C sum = 0;
      for (int64_t t = 0; t < k; ++t) {
        sum += left.at(b, i, t) * values.at(b, t, 0) * right.at(b, t, j);
      }
      out[i * right.cols + j] = sum;
    }
  }
  return out;
}

// The conjugate transpose of each matrix.
Batch Adjoint(const Batch& m) {
  Batch t = m;
  std::swap(t.rows, t.cols);
  for (int64_t b = 0; b < m.count; ++b) {
    for (int64_t i = 0; i < m.rows; ++i) {
      for (int64_t j = 0; j < m.cols; ++j) {
        t.v[(b * t.rows + j) * t.cols + i] = std::conj(m.at(b, i, j));
      }
    }
  }
  return t;
}

double MaxAbs(const Batch& m) {
  double x = 0;
  for (const C& c : m.v) x = std::max(x, std::abs(c));
  return x;
}

// Columns of `got` (the first k) are orthonormal, and each column whose
// value is simple (separated from its neighbours by more than `gap`) equals
// XLA's column after aligning the phase.
void ExpectVectorsLikeXla(const Batch& got, const Batch& want,
                          const Batch& values, double gap, double tol,
                          const std::string& what) {
  const int64_t k = values.rows;
  for (int64_t b = 0; b < got.count; ++b) {
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t q = 0; q < k; ++q) {
        C dot = 0;
        for (int64_t i = 0; i < got.rows; ++i) {
          dot += std::conj(got.at(b, i, p)) * got.at(b, i, q);
        }
        EXPECT_NEAR(std::abs(dot - C(p == q ? 1 : 0)), 0, tol)
            << what << " batch " << b << " columns " << p << ", " << q;
      }
      const double w = values.at(b, p, 0).real();
      const bool simple =
          (p == 0 || std::abs(w - values.at(b, p - 1, 0).real()) > gap) &&
          (p + 1 == k || std::abs(values.at(b, p + 1, 0).real() - w) > gap);
      if (!simple) continue;
      C inner = 0;
      for (int64_t i = 0; i < got.rows; ++i) {
        inner += std::conj(got.at(b, i, p)) * want.at(b, i, p);
      }
      const C phase = inner / std::abs(inner);
      for (int64_t i = 0; i < got.rows; ++i) {
        EXPECT_NEAR(std::abs(got.at(b, i, p) * phase - want.at(b, i, p)), 0,
                    tol)
            << what << " batch " << b << " vector " << p << " element " << i;
      }
    }
  }
}

void ExpectClose(const std::vector<C>& got, const std::vector<C>& want,
                 double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(std::abs(got[i] - want[i]), 0, tol) << what << " element " << i;
  }
}

// Converts the module and runs it in ONNX Runtime on the bundle's inputs.
std::vector<jaxpr::Array> RunInOrt(const jaxpr::Bundle& bundle, bool ir,
                                   int opset) {
  ConvertOptions options;
  options.read_environment = false;
  options.use_onnx_ir = ir;
  options.opset = opset;
  absl::StatusOr<onnx::ModelProto> model =
      ToOnnx(api::BundleAccess::Wrap(bundle), options);
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return {};
  // ctest runs the cases of this file as parallel processes.
  const std::string path =
      ::testing::TempDir() + "/lapack_eigen_" +
      ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
      std::to_string(getpid()) + ".onnx";
  {
    std::ofstream out(path, std::ios::binary);
    model->SerializeToOstream(&out);
  }
  // Complex values cross the model boundary as real [..., 2] pairs
  // (docs/complex.md).
  api::NamedArrays named;
  for (size_t i = 0; i < bundle.inputs.size(); ++i) {
    const jaxpr::Array& x = bundle.inputs[i];
    named.emplace_back(
        model->graph().input(i).name(),
        jaxpr::IsComplex(x.dtype()) ? jaxpr::ComplexAsPairs(x) : x);
  }
  auto got = api::OrtRunner::Shared().Run(path, named);
  std::remove(path.c_str());
  EXPECT_TRUE(got.ok()) << got.status();
  if (!got.ok() || got->size() != bundle.expected.size()) return {};
  std::vector<jaxpr::Array> out;
  for (size_t i = 0; i < got->size(); ++i) {
    const jaxpr::DType want = bundle.expected[i].dtype();
    if (!jaxpr::IsComplex(want)) {
      out.push_back((*got)[i]);
      continue;
    }
    auto z = jaxpr::PairsAsComplex((*got)[i], want);
    EXPECT_TRUE(z.ok()) << z.status();
    if (!z.ok()) return {};
    out.push_back(*std::move(z));
  }
  return out;
}

double Eps(const std::string& file) {
  return absl::StrContains(file, "f32") || absl::StrContains(file, "c64")
             ? 1.1920929e-7
             : 2.220446049250313e-16;
}

// eigh (syevd/heevd): outputs (V, w) with A = V diag(w) Vᴴ.
TEST(StablehloLapackEigen, SyevdMatchesXlaUpToTheVectorsPhase) {
  std::string why;
  if (!api::OrtRunner::Shared().IsAvailable(&why)) GTEST_SKIP() << why;
  for (const char* file :
       {"syevd_f32", "syevd_f64", "syevd_c64", "syevd_c128"}) {
    auto bundle = api::LoadBundle(kDir + file + ".mlir");
    ASSERT_TRUE(bundle.ok()) << bundle.status();
    ASSERT_EQ(bundle->expected.size(), 2u);
    const Batch v_xla = ToBatch(bundle->expected[0], 2);
    const Batch w_xla = ToBatch(bundle->expected[1], 1);
    const double scale = MaxAbs(w_xla);
    // Jacobi and LAPACK both reach a backward error of a few eps ||A||.
    const double tol = 64 * Eps(file) * scale;
    for (bool ir : {false, true}) {
      for (int opset : {23, 17}) {
        const std::string what = std::string(file) + (ir ? " ir" : " legacy") +
                                 " opset " + std::to_string(opset);
        std::vector<jaxpr::Array> got = RunInOrt(*bundle, ir, opset);
        ASSERT_EQ(got.size(), 2u) << what;
        const Batch v = ToBatch(got[0], 2);
        const Batch w = ToBatch(got[1], 1);
        ExpectClose(w.v, w_xla.v, tol, what + " eigenvalues");
        for (int64_t b = 0; b < v.count; ++b) {
          ExpectClose(Product(v, w, Adjoint(v), b),
                      Product(v_xla, w_xla, Adjoint(v_xla), b), tol,
                      what + " V diag(w) Vᴴ");
        }
        ExpectVectorsLikeXla(v, v_xla, w_xla, 1e3 * tol,
                             64 * Eps(file) * v.rows, what);
      }
    }
  }
}

// svd (gesdd): outputs (U, s, Vᴴ) with A = U diag(s) Vᴴ, A the input.
TEST(StablehloLapackEigen, GesddMatchesXlaUpToTheVectorsPhase) {
  std::string why;
  if (!api::OrtRunner::Shared().IsAvailable(&why)) GTEST_SKIP() << why;
  for (const char* file :
       {"gesdd_f32", "gesdd_f64", "gesdd_c64", "gesdd_c128"}) {
    auto bundle = api::LoadBundle(kDir + file + ".mlir");
    ASSERT_TRUE(bundle.ok()) << bundle.status();
    ASSERT_EQ(bundle->inputs.size(), 1u);
    ASSERT_EQ(bundle->expected.size(), 3u);
    const Batch a = ToBatch(bundle->inputs[0], 2);
    const Batch u_xla = ToBatch(bundle->expected[0], 2);
    const Batch s_xla = ToBatch(bundle->expected[1], 1);
    const Batch vh_xla = ToBatch(bundle->expected[2], 2);
    const double scale = MaxAbs(s_xla);
    const double tol = 64 * Eps(file) * scale;
    for (bool ir : {false, true}) {
      for (int opset : {23, 17}) {
        const std::string what = std::string(file) + (ir ? " ir" : " legacy") +
                                 " opset " + std::to_string(opset);
        std::vector<jaxpr::Array> got = RunInOrt(*bundle, ir, opset);
        ASSERT_EQ(got.size(), 3u) << what;
        const Batch u = ToBatch(got[0], 2);
        const Batch s = ToBatch(got[1], 1);
        const Batch vh = ToBatch(got[2], 2);
        ExpectClose(s.v, s_xla.v, tol, what + " singular values");
        for (int64_t b = 0; b < u.count; ++b) {
          std::vector<C> input(a.v.begin() + b * a.rows * a.cols,
                               a.v.begin() + (b + 1) * a.rows * a.cols);
          ExpectClose(Product(u, s, vh, b), input, tol, what + " U diag(s) Vᴴ");
          ExpectClose(Product(u_xla, s_xla, vh_xla, b), input, tol,
                      what + " XLA's U diag(s) Vᴴ");
        }
        const double vec_tol = 64 * Eps(file) * u.rows;
        ExpectVectorsLikeXla(u, u_xla, s_xla, 1e3 * tol, vec_tol, what + " U");
        ExpectVectorsLikeXla(Adjoint(vh), Adjoint(vh_xla), s_xla, 1e3 * tol,
                             vec_tol, what + " V");
      }
    }
  }
}

// svd(compute_uv=False) emits gesdd with mode 'N' (values only): the same
// singular values as XLA's full-mode run of the same input. A NaN in one
// matrix of the batch makes info nonzero there, so the module's own masking
// (JAX's _replace_not_ok_with_nan) turns that matrix's values into NaN and
// leaves the other matrix alone.
TEST(StablehloLapackEigen, ValuesOnlyModeAndNanInputFollowJax) {
  std::string why;
  if (!api::OrtRunner::Shared().IsAvailable(&why)) GTEST_SKIP() << why;
  auto full = api::LoadBundle(kDir + "gesdd_f32.mlir");
  ASSERT_TRUE(full.ok()) << full.status();
  const char* text = R"(
module @jit_func {
  func.func public @main(%arg0: tensor<2x4x4xf32>) -> tensor<2x4xf32> {
    %0:5 = stablehlo.custom_call @lapack_sgesdd_ffi(%arg0) {mhlo.backend_config = {mode = 78 : ui8}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2xi32>)
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %2 = stablehlo.compare  EQ, %0#4, %1,  SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<2xi1>) -> tensor<2x4xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %5 = stablehlo.select %3, %0#1, %4 : tensor<2x4xi1>, tensor<2x4xf32>
    return %5 : tensor<2x4xf32>
  }
}
)";
  auto bundle = api::StablehloBundleFromText(text, "svd_values");
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  const jaxpr::Array& s_xla = full->expected[1];  // [2, 4]
  jaxpr::Array x = full->inputs[0];
  bundle->inputs = {x};
  bundle->expected = {s_xla};
  jaxpr::Array poisoned = x;
  poisoned.SetFromDouble(5, std::nan(""));  // batch 0, row 1, column 1
  const double tol = 64 * Eps("f32") * 12;
  for (bool ir : {false, true}) {
    for (int opset : {23, 17}) {
      const std::string what =
          std::string(ir ? "ir" : "legacy") + " opset " + std::to_string(opset);
      std::vector<jaxpr::Array> got = RunInOrt(*bundle, ir, opset);
      ASSERT_EQ(got.size(), 1u) << what;
      for (int64_t k = 0; k < 8; ++k) {
        EXPECT_NEAR(got[0].GetAsDouble(k), s_xla.GetAsDouble(k), tol)
            << what << " value " << k;
      }
      bundle->inputs = {poisoned};
      got = RunInOrt(*bundle, ir, opset);
      bundle->inputs = {x};
      ASSERT_EQ(got.size(), 1u) << what;
      for (int64_t k = 0; k < 4; ++k) {
        EXPECT_TRUE(std::isnan(got[0].GetAsDouble(k)))
            << what << " value " << k;
      }
      for (int64_t k = 4; k < 8; ++k) {
        EXPECT_NEAR(got[0].GetAsDouble(k), s_xla.GetAsDouble(k), tol)
            << what << " value " << k << " (the matrix without NaN)";
      }
    }
  }
}

// eig (geev): outputs (w, vl, vr) of iota(16).reshape(4, 4), whose
// eigenvalue 0 is double (rank 2). Compared as the interpreter's test does
// (tests/eval/eig_compare.h): eigenvalues as a multiset, vectors
// phase-free, by eigenspace for the repeated value, and the defining
// residuals with geev's normalization.
TEST(StablehloLapackEigen, GeevMatchesXlaUpToOrderAndPhase) {
  std::string why;
  if (!api::OrtRunner::Shared().IsAvailable(&why)) GTEST_SKIP() << why;
  namespace ec = jaxpr::eig_compare;
  for (const char* file : {"geev_f32", "geev_f64", "geev_c64", "geev_c128"}) {
    auto bundle = api::LoadBundle(kDir + file + ".mlir");
    ASSERT_TRUE(bundle.ok()) << bundle.status();
    ASSERT_EQ(bundle->expected.size(), 3u);
    const std::vector<C> want_w = ToBatch(bundle->expected[0], 1).v;
    const std::vector<C> want_vl = ToBatch(bundle->expected[1], 2).v;
    const std::vector<C> want_vr = ToBatch(bundle->expected[2], 2).v;
    // ‖A‖ is about 36; the null space's vectors are determined only to
    // about eps ‖A‖ / gap.
    const double tol = 2048 * Eps(file);
    std::vector<C> a(16);
    for (int i = 0; i < 16; ++i) a[i] = i;
    for (bool ir : {false, true}) {
      for (int opset : {23, 17}) {
        const std::string what = std::string(file) + (ir ? " ir" : " legacy") +
                                 " opset " + std::to_string(opset);
        SCOPED_TRACE(what);
        std::vector<jaxpr::Array> got = RunInOrt(*bundle, ir, opset);
        ASSERT_EQ(got.size(), 3u);
        const ec::Eig e{ToBatch(got[0], 1).v, ToBatch(got[1], 2).v,
                        ToBatch(got[2], 2).v};
        const std::vector<int64_t> match =
            ec::MatchValues(e.w, want_w, 36 * tol);
        ec::ExpectSameVectors(e.vr, want_vr, want_w, match, 4, 1e-2, 10 * tol,
                              "vr");
        ec::ExpectSameVectors(e.vl, want_vl, want_w, match, 4, 1e-2, 10 * tol,
                              "vl");
        ec::ExpectEigenpairs(a, e, 4, 36 * tol);
      }
    }
  }
}

// eig's lowering (plugin/eig_general_plan.h) against the reference
// interpreter on pseudo-random matrices, batched, every dtype and result
// selection: the interpreter computes in double and the lowering in the
// part dtype, so the QR iteration can deflate in another order; the
// eigenvalues are compared as a multiset and the vectors phase-free, and
// ONNX Runtime's results also satisfy the defining residuals themselves.
// A member holding a NaN is NaN everywhere (JAX on geev failure).
TEST(EigLowering, MatchesTheInterpreterUpToOrderAndPhase) {
  std::string why;
  if (!api::OrtRunner::Shared().IsAvailable(&why)) GTEST_SKIP() << why;
  namespace ec = jaxpr::eig_compare;
  struct Case {
    jaxpr::DType in;
    const char* in_name;
    const char* out_name;
    int64_t batch, n;
    bool left, right;
    double eps;
  };
  for (const Case& c :
       {Case{jaxpr::DType::kF32, "f32", "c64", 3, 12, true, true, 1.2e-7},
        Case{jaxpr::DType::kF64, "f64", "c128", 2, 6, true, true, 2.3e-16},
        Case{jaxpr::DType::kC64, "c64", "c64", 2, 5, false, true, 1.2e-7},
        Case{jaxpr::DType::kC128, "c128", "c128", 1, 7, true, false, 2.3e-16},
        Case{jaxpr::DType::kF64, "f64", "c128", 2, 1, true, true, 2.3e-16},
        Case{jaxpr::DType::kF32, "f32", "c64", 2, 3, false, false, 1.2e-7}}) {
    const int64_t n = c.n, count = c.batch * n * n;
    const std::string ns = std::to_string(n), bs = std::to_string(c.batch);
    std::string outs =
        std::string("w:") + c.out_name + "[" + bs + "," + ns + "]";
    std::string results = "w";
    const std::string mat =
        std::string(c.out_name) + "[" + bs + "," + ns + "," + ns + "]";
    if (c.left) outs += " vl:" + mat, results += ", vl";
    if (c.right) outs += " vr:" + mat, results += ", vr";
    const std::string text =
        std::string("{ lambda ; a:") + c.in_name + "[" + bs + "," + ns + "," +
        ns + "]. let " + outs +
        " = eig[compute_left_eigenvectors=" + (c.left ? "True" : "False") +
        " compute_right_eigenvectors=" + (c.right ? "True" : "False") +
        " enable_eigvec_derivs=False implementation=None] a in (" + results +
        ",) }";
    SCOPED_TRACE(text);
    const std::vector<double> re = ec::Entries(count, 11 + n),
                              im = ec::Entries(count, 5 + n);
    jaxpr::Array a(c.in, {c.batch, n, n});
    std::vector<C> values(count);
    for (int64_t i = 0; i < count; ++i) {
      values[i] = jaxpr::IsComplex(c.in) ? C(re[i], im[i]) : C(re[i], 0);
    }
    // The last member of a batch of 3 holds a NaN.
    if (c.batch == 3) values[count - 1] = std::nan("");
    for (int64_t i = 0; i < count; ++i) {
      if (c.in == jaxpr::DType::kF32)
        a.typed_data<float>()[i] = values[i].real();
      if (c.in == jaxpr::DType::kF64)
        a.typed_data<double>()[i] = values[i].real();
      if (c.in == jaxpr::DType::kC64) {
        a.typed_data<float>()[2 * i] = values[i].real();
        a.typed_data<float>()[2 * i + 1] = values[i].imag();
      }
      if (c.in == jaxpr::DType::kC128) {
        a.typed_data<double>()[2 * i] = values[i].real();
        a.typed_data<double>()[2 * i + 1] = values[i].imag();
      }
    }
    // Values as the operand holds them (rounded to f32 where it is f32).
    for (int64_t i = 0; i < count; ++i) {
      if (c.in == jaxpr::DType::kF32 || c.in == jaxpr::DType::kC64) {
        values[i] = C(static_cast<float>(values[i].real()),
                      static_cast<float>(values[i].imag()));
      }
    }
    auto parsed =
        jaxpr::BundleFromParts("eig", text, "eig.jaxpr", {{"input_0", a}});
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    auto want = jaxpr::Evaluate(parsed->jaxpr(), {}, {a});
    ASSERT_TRUE(want.ok()) << want.status();
    parsed->expected = *want;
    const size_t outputs = 1 + c.left + c.right;
    ASSERT_EQ(want->size(), outputs);
    const double tol = 64 * n * c.eps;
    for (bool ir : {false, true}) {
      for (int opset : {23, 17}) {
        SCOPED_TRACE(std::string(ir ? "ir" : "legacy") + " opset " +
                     std::to_string(opset));
        std::vector<jaxpr::Array> got = RunInOrt(*parsed, ir, opset);
        ASSERT_EQ(got.size(), outputs);
        for (int64_t b = 0; b < c.batch; ++b) {
          auto member = [&](const jaxpr::Array& x, int matrix_rank) {
            const Batch all = ToBatch(x, matrix_rank);
            const int64_t size = all.rows * all.cols;
            return std::vector<C>(all.v.begin() + b * size,
                                  all.v.begin() + (b + 1) * size);
          };
          const std::vector<C> w = member(got[0], 1),
                               w_ref = member((*want)[0], 1);
          if (c.batch == 3 && b == 2) {  // the NaN member
            for (size_t k = 0; k < got.size(); ++k) {
              for (const C& x : member(got[k], k == 0 ? 1 : 2)) {
                EXPECT_TRUE(std::isnan(x.real()) && std::isnan(x.imag()));
              }
            }
            continue;
          }
          const std::vector<int64_t> match = ec::MatchValues(w, w_ref, tol);
          ec::Eig e{w, {}, {}};
          ec::Eig e_ref{w_ref, {}, {}};
          size_t k = 1;
          if (c.left)
            e.vl = member(got[k], 2), e_ref.vl = member((*want)[k++], 2);
          if (c.right)
            e.vr = member(got[k], 2), e_ref.vr = member((*want)[k++], 2);
          if (c.left)
            ec::ExpectSameVectors(e.vl, e_ref.vl, w_ref, match, n, 1e-3,
                                  1e3 * tol, "vl");
          if (c.right)
            ec::ExpectSameVectors(e.vr, e_ref.vr, w_ref, match, n, 1e-3,
                                  1e3 * tol, "vr");
          if (c.left && c.right) {
            ec::ExpectEigenpairs(
                std::vector<C>(values.begin() + b * n * n,
                               values.begin() + (b + 1) * n * n),
                e, n, tol);
          }
        }
      }
    }
  }
}

// schur (gees) of iota(16).reshape(4, 4) in f32, f64, c64 and c128: ONNX
// Runtime's T and Z against XLA's as eig_compare::ExpectSchur compares them
// (T upper triangular, quasi-triangular in dgees's real form, Z unitary,
// Z T Zᴴ = A, the eigenvalues as a multiset, columns of simple values up to
// phase while the order agrees).
TEST(StablehloLapackEigen, GeesMatchesXlaUpToOrderAndPhase) {
  std::string why;
  if (!api::OrtRunner::Shared().IsAvailable(&why)) GTEST_SKIP() << why;
  for (const char* file : {"gees_f32", "gees_f64", "gees_c64", "gees_c128"}) {
    auto bundle = api::LoadBundle(kDir + file + ".mlir");
    ASSERT_TRUE(bundle.ok()) << bundle.status();
    ASSERT_EQ(bundle->expected.size(), 2u);
    const std::vector<C> a = ToBatch(bundle->inputs[0], 2).v;
    const std::vector<C> want_t = ToBatch(bundle->expected[0], 2).v;
    const std::vector<C> want_z = ToBatch(bundle->expected[1], 2).v;
    const double tol = 36 * 1024 * Eps(file);  // ‖A‖ is about 36
    for (bool ir : {false, true}) {
      for (int opset : {23, 17}) {
        SCOPED_TRACE(std::string(file) + (ir ? " ir" : " legacy") + " opset " +
                     std::to_string(opset));
        std::vector<jaxpr::Array> got = RunInOrt(*bundle, ir, opset);
        ASSERT_EQ(got.size(), 2u);
        jaxpr::eig_compare::ExpectSchur(
            a, ToBatch(got[0], 2).v, ToBatch(got[1], 2).v, 4, tol, want_t,
            want_z, 1e-2, !jaxpr::IsComplex(bundle->inputs[0].dtype()));
      }
    }
  }
}

// schur's lowering (complex: eig's stages 1-2, plugin/eig_general_plan.h;
// real: dlahqr, plugin/real_schur_plan.h) against the reference
// interpreter on pseudo-random batches: both compute the same iteration,
// the interpreter in double, so the eigenvalues may come out in another
// order in f32/c64; ONNX Runtime's T and Z satisfy the Schur conditions
// themselves (the real form quasi-triangular). A member holding a NaN is
// NaN in T and Z; f16 is refused as JAX's CPU lowering refuses it.
TEST(SchurLowering, MatchesTheInterpreterUpToOrderAndPhase) {
  std::string why;
  if (!api::OrtRunner::Shared().IsAvailable(&why)) GTEST_SKIP() << why;
  namespace ec = jaxpr::eig_compare;
  struct Case {
    jaxpr::DType dtype;
    const char* name;
    int64_t batch, n;
    bool vectors;
    double eps;
  };
  for (const Case& c : {Case{jaxpr::DType::kC64, "c64", 3, 6, true, 1.2e-7},
                        Case{jaxpr::DType::kC128, "c128", 2, 9, true, 2.3e-16},
                        Case{jaxpr::DType::kC128, "c128", 1, 1, true, 2.3e-16},
                        Case{jaxpr::DType::kC64, "c64", 2, 4, false, 1.2e-7},
                        Case{jaxpr::DType::kF32, "f32", 3, 7, true, 1.2e-7},
                        Case{jaxpr::DType::kF64, "f64", 2, 10, true, 2.3e-16},
                        Case{jaxpr::DType::kF64, "f64", 1, 1, true, 2.3e-16},
                        Case{jaxpr::DType::kF32, "f32", 2, 5, false, 1.2e-7}}) {
    const int64_t n = c.n, count = c.batch * n * n;
    const std::string type = std::string(c.name) + "[" +
                             std::to_string(c.batch) + "," + std::to_string(n) +
                             "," + std::to_string(n) + "]";
    const std::string text =
        "{ lambda ; a:" + type + ". let t:" + type +
        (c.vectors ? " z:" + type : "") +
        " = schur[compute_schur_vectors=" + (c.vectors ? "True" : "False") +
        " select_callable=None sort_eig_vals=False] a in (t" +
        (c.vectors ? ", z" : "") + ",) }";
    SCOPED_TRACE(text);
    const std::vector<double> re = ec::Entries(count, 3 + n),
                              im = ec::Entries(count, 17 + n);
    jaxpr::Array a(c.dtype, {c.batch, n, n});
    for (int64_t i = 0; i < count; ++i) {
      // The last member of a batch of 3 holds a NaN.
      const double x = c.batch == 3 && i == count - 1 ? std::nan("") : re[i];
      if (c.dtype == jaxpr::DType::kC64) {
        a.typed_data<float>()[2 * i] = x;
        a.typed_data<float>()[2 * i + 1] = im[i];
      } else if (c.dtype == jaxpr::DType::kC128) {
        a.typed_data<double>()[2 * i] = x;
        a.typed_data<double>()[2 * i + 1] = im[i];
      } else if (c.dtype == jaxpr::DType::kF32) {
        a.typed_data<float>()[i] = x;
      } else {
        a.typed_data<double>()[i] = x;
      }
    }
    auto parsed =
        jaxpr::BundleFromParts("schur", text, "schur.jaxpr", {{"input_0", a}});
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    auto want = jaxpr::Evaluate(parsed->jaxpr(), {}, {a});
    ASSERT_TRUE(want.ok()) << want.status();
    parsed->expected = *want;
    const std::vector<C> values = ToBatch(a, 2).v;
    const double tol = 64 * n * c.eps;
    for (bool ir : {false, true}) {
      for (int opset : {23, 17}) {
        SCOPED_TRACE(std::string(ir ? "ir" : "legacy") + " opset " +
                     std::to_string(opset));
        std::vector<jaxpr::Array> got = RunInOrt(*parsed, ir, opset);
        ASSERT_EQ(got.size(), c.vectors ? 2u : 1u);
        for (int64_t b = 0; b < c.batch; ++b) {
          auto member = [&](const jaxpr::Array& x) {
            const Batch all = ToBatch(x, 2);
            return std::vector<C>(all.v.begin() + b * n * n,
                                  all.v.begin() + (b + 1) * n * n);
          };
          const bool real = !jaxpr::IsComplex(c.dtype);
          if (c.batch == 3 && b == 2) {  // the NaN member
            for (const jaxpr::Array& x : got) {
              for (const C& v : member(x)) {
                EXPECT_TRUE(std::isnan(v.real()) &&
                            (real || std::isnan(v.imag())));
              }
            }
            continue;
          }
          const std::vector<C> t = member(got[0]), t_ref = member((*want)[0]);
          if (!c.vectors) {
            // T alone: zeros below the diagonal (the subdiagonal too for
            // complex T), its eigenvalues the interpreter's as a multiset.
            for (int64_t k = 0; k < n; ++k) {
              for (int64_t j = 0; j + (real ? 1 : 0) < k; ++j) {
                EXPECT_EQ(ec::At(t, n, k, j), C(0));
              }
            }
            ec::MatchValues(ec::SchurValues(t, n), ec::SchurValues(t_ref, n),
                            tol);
            continue;
          }
          ec::ExpectSchur(std::vector<C>(values.begin() + b * n * n,
                                         values.begin() + (b + 1) * n * n),
                          t, member(got[1]), n, tol, t_ref, member((*want)[1]),
                          1e-3, real);
        }
      }
    }
  }
  auto half = ToOnnxFromText(
      "{ lambda ; a:f16[3,3]. let t:f16[3,3] = "
      "schur[compute_schur_vectors=False select_callable=None "
      "sort_eig_vals=False] a in (t,) }",
      {});
  ASSERT_FALSE(half.ok());
  EXPECT_TRUE(absl::StrContains(
      half.status().message(),
      "schur on f16: only f32, f64, c64 and c128 are lowered"))
      << half.status();
}

// f16/bf16 operands: JAX's CPU lowering has no geev kernel for them either.
TEST(EigLowering, HalfPrecisionIsRefusedByName) {
  auto model = ToOnnxFromText(
      "{ lambda ; a:bf16[3,3]. let w:c64[3] = "
      "eig[compute_left_eigenvectors=False compute_right_eigenvectors=False "
      "enable_eigvec_derivs=False implementation=None] a in (w,) }",
      {});
  ASSERT_FALSE(model.ok());
  EXPECT_TRUE(absl::StrContains(
      model.status().message(),
      "eig on bf16: only f32, f64, c64 and c128 are lowered"))
      << model.status();
}

}  // namespace
}  // namespace jax2onnx
