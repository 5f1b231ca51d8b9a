// lapack_?geev_ffi (stablehlo/translate_lapack.cc: Geev) on JAX's own
// back-compat modules (tests/stablehlo/lapack_eigen/geev_*: the module
// jax.export printed on CPU for jnp.linalg.eig of iota(16).reshape(4, 4) and
// the outputs XLA computed), translated to eig and run in the reference
// interpreter. The module's own code around the custom_call (complex(wr,
// wi) for real operands, the info == 0 masking) runs too. Eigenvalues are
// compared as a multiset and eigenvectors phase-free, by eigenspace where
// the eigenvalue repeats (tests/eval/eig_compare.h).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jaxpr/array.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/io/npy.h"
#include "stablehlo/translate.h"
#include "tests/eval/eig_compare.h"

namespace jax2onnx {
namespace {

using jaxpr::eig_compare::C;

std::vector<C> Complexes(const jaxpr::Array& a) {
  const jaxpr::Array pairs = jaxpr::ComplexAsPairs(a);
  std::vector<C> out;
  for (int64_t k = 0; k < a.num_elements(); ++k) {
    out.emplace_back(pairs.GetAsDouble(2 * k), pairs.GetAsDouble(2 * k + 1));
  }
  return out;
}

TEST(GeevTranslateTest, BackCompatModulesMatchXlaInTheInterpreter) {
  const std::string dir =
      std::string(JAX2ONNX_SOURCE_DIR) + "/tests/stablehlo/lapack_eigen/";
  for (const auto& [name, tol] :
       std::vector<std::pair<std::string, double>>{{"geev_f32", 2e-4},
                                                   {"geev_f64", 1e-11},
                                                   {"geev_c64", 2e-4},
                                                   {"geev_c128", 1e-11}}) {
    SCOPED_TRACE(name);
    auto prog = stablehlo::LoadStablehloFile(dir + name + ".mlir");
    ASSERT_TRUE(prog.ok()) << prog.status();
    std::vector<jaxpr::Array> consts, expected;
    for (const auto& [k, v] : prog->arrays) {
      if (k.rfind("const_", 0) == 0) consts.push_back(v);
    }
    auto npz = jaxpr::ReadNpzFile(dir + name + ".npz");  // XLA's outputs
    ASSERT_TRUE(npz.ok()) << npz.status();
    for (const auto& [k, v] : *npz) {
      if (k.rfind("expected_", 0) == 0) expected.push_back(v);
    }
    ASSERT_EQ(expected.size(), 3u);  // w, vl, vr
    auto outs = jaxpr::Evaluate(*prog->file.main, consts, {});
    ASSERT_TRUE(outs.ok()) << outs.status();
    ASSERT_EQ(outs->size(), 3u);
    jaxpr::eig_compare::Eig got{Complexes((*outs)[0]), Complexes((*outs)[1]),
                                Complexes((*outs)[2])};
    const std::vector<C> want_w = Complexes(expected[0]);
    ASSERT_EQ(got.w.size(), 4u);
    // The module's operand is iota(16).reshape(4, 4) (‖A‖ about 36).
    std::vector<C> a(16);
    for (int i = 0; i < 16; ++i) a[i] = i;
    const std::vector<int64_t> match =
        jaxpr::eig_compare::MatchValues(got.w, want_w, 36 * tol);
    jaxpr::eig_compare::ExpectSameVectors(
        got.vr, Complexes(expected[2]), want_w, match, 4, 1e-2, 10 * tol, "vr");
    jaxpr::eig_compare::ExpectSameVectors(
        got.vl, Complexes(expected[1]), want_w, match, 4, 1e-2, 10 * tol, "vl");
    jaxpr::eig_compare::ExpectEigenpairs(a, got, 4, 36 * tol);
  }
}

}  // namespace
}  // namespace jax2onnx
