// Symbolic shapes in StableHLO (stablehlo/translate_symbolic.cc): modules in
// the form jax.export prints for symbolic shapes (testdata/stablehlo_export)
// translate to programs with symbolic dims named after JAX's dimension
// variables, and their ONNX models (dynamic input dims) match the reference
// interpreter in ONNX Runtime at two different sizes of each dim, on both
// pipelines at opsets 23 and 17.
#include <cmath>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "api/bundle_access.h"
#include "api/check.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/text/printer.h"
#include "stablehlo/translate.h"

namespace jax2onnx {
namespace {

using ::testing::HasSubstr;

const std::string kDir =
    std::string(JAX2ONNX_SOURCE_DIR) + "/testdata/stablehlo_export/";

std::string Signature(const stablehlo::StablehloProgram& p) {
  std::string s;
  for (const jaxpr::Var* v : p.file.main->invars) s += v->aval.ToString() + " ";
  s += "->";
  for (const jaxpr::Atom& a : p.file.main->outvars) {
    s += " " + (a.is_literal() ? std::string("lit") : a.var->aval.ToString());
  }
  return s;
}

TEST(StablehloSymbolic, DimensionVariablesNameTheDynamicDims) {
  auto p = stablehlo::LoadStablehloFile(kDir + "symbolic_batch.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(Signature(*p), "f32[b,4] -> f32[b,4] f32[4]");
  // y.shape[0] == b (a shape_assertion of @main) makes y's dim `b` too.
  auto q = stablehlo::LoadStablehloFile(kDir + "symbolic_two_args.mlir");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(Signature(*q),
            "f32[b,4] f32[b,4] -> f32[4*b - 1] f32[4,4] f32[4,b]");
}

TEST(StablehloSymbolic, WithoutGlobalConstantsTheDimsGetGeneratedNames) {
  // JAX before global-constant attributes: the `?` keeps a generated name.
  auto p = stablehlo::StablehloFromText(R"(
module @jit_f {
  func.func public @main(%arg0: tensor<4x?xf32>) -> tensor<4x?xf32> {
    %0 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<4x?xf32>) -> tensor<i32>
    %1 = call @_wrapped_jax_export_main(%0, %arg0) : (tensor<i32>, tensor<4x?xf32>) -> tensor<4x?xf32>
    return %1 : tensor<4x?xf32>
  }
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i32>, %arg1: tensor<4x?xf32>) -> tensor<4x?xf32> {
    %0 = stablehlo.negate %arg1 : tensor<4x?xf32>
    return %0 : tensor<4x?xf32>
  }
}
)",
                                        "old.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(Signature(*p), "f32[4,_d0] -> f32[4,_d0]");
}

// core.min_dim of a symbolic and a constant dim (jnp.minimum of dimension
// values, what JAX's symbolic min evaluates to) is a dim value too.
TEST(StablehloSymbolic, MinimumOfDimensionValuesIsADimension) {
  auto p = stablehlo::StablehloFromText(R"(
module @m {
  func.func public @main(%arg0: tensor<?xf32>) -> tensor<?xi32> {
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?xf32>) -> tensor<i32>
    %c = stablehlo.constant dense<3> : tensor<i32>
    %1 = stablehlo.minimum %0, %c : tensor<i32>
    %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
    %3 = stablehlo.dynamic_iota %2, dim = 0 : (tensor<1xi32>) -> tensor<?xi32>
    return %3 : tensor<?xi32>
  }
}
)",
                                        "min.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(Signature(*p), "f32[_d0] -> i32[min(_d0, 3)]");
}

TEST(StablehloSymbolic, StaticBroadcastKeepsTheOperandsSymbolicDim) {
  auto p = stablehlo::StablehloFromText(R"(
module @m {
  func.func public @main(%arg0: tensor<?xf32>) -> tensor<?x4xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<?xf32>) -> tensor<?x4xf32>
    return %0 : tensor<?x4xf32>
  }
}
)",
                                        "bcast.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(Signature(*p), "f32[_d0] -> f32[_d0,4]");
}

TEST(StablehloSymbolic, DataDependentShapeIsRefusedAtTheOp) {
  auto p = stablehlo::StablehloFromText(R"(
module @m {
  func.func public @main(%arg0: tensor<2xi32>) -> tensor<?x?xf32> {
    %cst = stablehlo.constant dense<1.0> : tensor<f32>
    %0 = stablehlo.dynamic_broadcast_in_dim %cst, %arg0, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
    return %0 : tensor<?x?xf32>
  }
}
)",
                                        "dd.mlir");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(
      p.status().message(),
      HasSubstr("dd.mlir:5:10: error: stablehlo.dynamic_broadcast_in_dim"));
  EXPECT_THAT(p.status().message(), HasSubstr("data-dependent shape"));
}

// jax.export's shape_assertions on static shapes (a symbolic module whose
// `?` dims were made concrete): decided at conversion time, a false one is
// an error quoting JAX's message with its `{k}` slots filled in.
std::string AssertingModule(int x_rows, int y_rows) {
  return absl::StrReplaceAll(
      R"(module @jit_f attributes {jax.uses_shape_polymorphism = true} {
  func.func public @main(%arg0: tensor<XROWSx4xf32>, %arg1: tensor<YROWSx4xf32>) -> tensor<XROWSx4xf32> {
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<XROWSx4xf32>) -> tensor<i32>
    %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64>
    %c = stablehlo.constant dense<1> : tensor<i64>
    %2 = stablehlo.compare  GE, %1, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%2, %1) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'. Using the following polymorphic shapes specifications: args[0].shape = (b, 4). Obtained dimension variables: 'b' = {0} from specification 'b' for dimension args[0].shape[0] (= {0}), .", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> ()
    %3 = stablehlo.get_dimension_size %arg1, dim = 0 : (tensor<YROWSx4xf32>) -> tensor<i32>
    %4 = stablehlo.convert %3 : (tensor<i32>) -> tensor<i64>
    %5 = stablehlo.compare  EQ, %4, %1,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%5, %4, %1) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Found inconsistency between dimension size args[1].shape[0] (= {0}) and the specification 'b' (= {1}).", has_side_effect = true} : (tensor<i1>, tensor<i64>, tensor<i64>) -> ()
    return %arg0 : tensor<XROWSx4xf32>
  }
}
)",
      {{"XROWS", absl::StrCat(x_rows)}, {"YROWS", absl::StrCat(y_rows)}});
}

TEST(StablehloSymbolic, StaticShapeAssertionsAreChecked) {
  EXPECT_TRUE(
      stablehlo::StablehloFromText(AssertingModule(3, 3), "ok.mlir").ok());
  auto mismatch =
      stablehlo::StablehloFromText(AssertingModule(3, 5), "mismatch.mlir");
  ASSERT_FALSE(mismatch.ok());
  EXPECT_THAT(
      mismatch.status().message(),
      HasSubstr("mismatch.mlir:11:5: error: stablehlo.custom_call: shape "
                "assertion failed for the static shapes: Input shapes do not "
                "match the polymorphic shapes specification. Found "
                "inconsistency between dimension size args[1].shape[0] (= 5) "
                "and the specification 'b' (= 3)."));
  auto empty =
      stablehlo::StablehloFromText(AssertingModule(0, 0), "empty.mlir");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(),
              HasSubstr("empty.mlir:7:5: error: stablehlo.custom_call: shape "
                        "assertion failed for the static shapes: Input shapes "
                        "do not match the polymorphic shapes specification. "
                        "Expected value >= 1 for dimension variable 'b'. "
                        "Using the following polymorphic shapes "
                        "specifications: args[0].shape = (b, 4). Obtained "
                        "dimension variables: 'b' = 0 from specification 'b' "
                        "for dimension args[0].shape[0] (= 0), ."));
}

TEST(StablehloSymbolic, OnnxRuntimeMatchesTheInterpreterAtTwoSizes) {
  std::string why;
  if (!api::OrtRunner::Shared().IsAvailable(&why)) GTEST_SKIP() << why;
  for (const char* file :
       {"symbolic_batch.mlir", "symbolic_two_args.mlir", "symbolic_gather.mlir",
        "symbolic_pad.mlir", "symbolic_pad_expr.mlir",
        // LAPACK FFI calls over a symbolic batch.
        "symbolic_sytrd_f32.mlir", "symbolic_hetrd_upper_c64.mlir",
        "symbolic_potrf_f32.mlir", "symbolic_getrf_f32.mlir",
        "symbolic_syevd_f32.mlir", "symbolic_gesdd_f32.mlir",
        "symbolic_geev_f32.mlir", "symbolic_gees_f32.mlir"}) {
    for (bool ir : {false, true}) {
      for (int opset : {23, 17}) {
        for (int64_t size : {2, 5}) {
          SCOPED_TRACE(std::string(file) + (ir ? " ir" : " legacy") +
                       " opset " + std::to_string(opset) +
                       " b=" + std::to_string(size));
          api::CheckOptions options;
          options.convert.read_environment = false;
          options.convert.use_onnx_ir = ir;
          options.convert.opset = opset;
          options.first_symbol_size = size;
          const api::CheckResult r =
              api::CheckBundle(kDir + file, options, api::OrtRunner::Shared());
          EXPECT_TRUE(r.passed) << r.stage << ": " << r.reason;
          EXPECT_EQ(r.oracle, "interpreter");
          ASSERT_FALSE(r.outputs.empty());
        }
      }
    }
  }
}

// A strided 'SAME' convolution over symbolic spatial dims: jax.export emits
// stablehlo.dynamic_conv whose padding JAX computes with jnp.divmod on the
// dimension values; the translation reads floordiv/mod back from those
// steps, so the padding is symbolic (a pad before the convolution), and
// ONNX Runtime matches a numpy computation of the SAME convolution at
// h = 7, w = 8 (odd and even: pads (1, 1) and (0, 1)) on both pipelines.
TEST(StablehloSymbolic, StridedSameConvolutionHasSymbolicPadding) {
  std::string why;
  if (!api::OrtRunner::Shared().IsAvailable(&why)) GTEST_SKIP() << why;
  const std::string file = kDir + "symbolic_conv_same.mlir";
  auto bundle = api::LoadBundle(file);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  const std::string text = jaxpr::PrintJaxpr(bundle->jaxpr());
  EXPECT_THAT(text, HasSubstr("(floordiv(- 2*floordiv(-h, 2) - h + 1, 2), - "
                              "2*floordiv(-h, 2) - h + 1 - floordiv(- "
                              "2*floordiv(-h, 2) - h + 1, 2), 0)"));
  for (bool ir : {false, true}) {
    for (int opset : {23, 17}) {
      SCOPED_TRACE(std::string(ir ? "ir" : "legacy") + " opset " +
                   std::to_string(opset));
      api::CheckOptions options;
      options.convert.read_environment = false;
      options.convert.use_onnx_ir = ir;
      options.convert.opset = opset;
      const api::CheckResult r =
          api::CheckBundle(file, options, api::OrtRunner::Shared());
      EXPECT_TRUE(r.passed) << r.stage << ": " << r.reason;
      EXPECT_EQ(r.oracle, "expected");
    }
  }
}

// The LAPACK custom_calls of jax.export on CPU (JAX's own back-compat
// modules, testdata/stablehlo_export/lapack, with the inputs and the outputs
// XLA computed): ONNX Runtime matches XLA on both pipelines and opsets.
// gehrd's (real and complex) and sytrd's outputs (the reduced matrix with
// the reflectors beyond it, d, e and the taus) are unique given LAPACK's
// reflector convention, and gtsv's solution is unique, so all are compared
// element-wise. gtsv_singular_f32 (hand-derived, not XLA's) has a singular
// batch member (a zero pivot): gtsv's info makes it NaN. gees_pairs_f32
// (hand-derived too) returns every result of lapack_sgees_ffi on matrices
// already in real Schur form, a complex pair's wi included.
// hetrd_upper_c128 (uplo 'U', which JAX's back-compat data lacks) is checked
// against scripts/hetrd_upper_numpy.py's transcription of LAPACK zhetd2.
TEST(StablehloLapack, OnnxRuntimeMatchesXla) {
  std::string why;
  if (!api::OrtRunner::Shared().IsAvailable(&why)) GTEST_SKIP() << why;
  for (const char* file :
       {"potrf_f32",         "potrf_f64",       "getrf_f32",       "getrf_f64",
        "geqrf_orgqr_f32",   "geqrf_orgqr_f64", "trsm_f32",        "trsm_f64",
        "gehrd_f32",         "gehrd_f64",       "gehrd_c64",       "gehrd_c128",
        "gtsv_f32",          "gtsv_f64",        "gtsv_c64",        "gtsv_c128",
        "gtsv_singular_f32", "sytrd_f32",       "sytrd_f64",       "hetrd_c64",
        "hetrd_c128",        "gees_pairs_f32",  "hetrd_upper_c128"}) {
    for (bool ir : {false, true}) {
      for (int opset : {23, 17}) {
        SCOPED_TRACE(std::string(file) + (ir ? " ir" : " legacy") + " opset " +
                     std::to_string(opset));
        api::CheckOptions options;
        options.convert.read_environment = false;
        options.convert.use_onnx_ir = ir;
        options.convert.opset = opset;
        const api::CheckResult r =
            api::CheckBundle(kDir + "lapack/" + file + ".mlir", options,
                             api::OrtRunner::Shared());
        EXPECT_TRUE(r.passed) << r.stage << ": " << r.reason;
        // Modules without arguments (getrf, geqrf) are checked against the
        // interpreter, which the next test holds to XLA's outputs.
        EXPECT_TRUE(r.oracle == "expected" || r.inputs == "none") << r.oracle;
      }
    }
  }
}

// The interpreter on the translated LAPACK calls reproduces XLA's outputs
// (pivots, info codes and factors).
TEST(StablehloLapack, InterpreterMatchesXla) {
  for (const char* file :
       {"potrf_f32", "potrf_f64", "getrf_f32", "getrf_f64", "geqrf_orgqr_f32",
        "geqrf_orgqr_f64", "trsm_f32", "trsm_f64", "gehrd_f32", "gehrd_f64",
        "gtsv_f32", "gtsv_f64", "sytrd_f32", "sytrd_f64"}) {
    SCOPED_TRACE(file);
    auto bundle = api::LoadBundle(kDir + "lapack/" + file + ".mlir");
    ASSERT_TRUE(bundle.ok()) << bundle.status();
    ASSERT_TRUE(bundle->has_expected());
    jaxpr::Bundle no_expected = *bundle;
    no_expected.expected.clear();
    std::string oracle;
    auto got = api::OracleOutputs(no_expected, bundle->inputs, &oracle);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(oracle, "interpreter");
    ASSERT_EQ(got->size(), bundle->expected.size());
    const bool f32 = absl::StrContains(file, "f32");
    for (size_t i = 0; i < got->size(); ++i) {
      const jaxpr::Array& a = (*got)[i];
      const jaxpr::Array& e = bundle->expected[i];
      ASSERT_EQ(a.shape(), e.shape()) << "output " << i;
      for (int64_t k = 0; k < a.num_elements(); ++k) {
        const double x = a.GetAsDouble(k), y = e.GetAsDouble(k);
        EXPECT_NEAR(x, y, (f32 ? 1e-5 : 1e-12) * (1 + std::abs(y)))
            << "output " << i << " element " << k;
      }
    }
  }
}

TEST(StablehloLapack, OtherTargetsAreRefusedByName) {
  auto q = stablehlo::StablehloFromText(R"(
module @m {
  func.func public @main(%arg0: tensor<3x3xf32>) -> tensor<3x3xf32> {
    %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%arg0) {mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
    return %0#0 : tensor<3x3xf32>
  }
}
)",
                                        "rowmajor.mlir");
  ASSERT_FALSE(q.ok());
  EXPECT_THAT(q.status().message(),
              HasSubstr("not LAPACK's column-major layout"));
  // gehrd with a partial range (JAX always reduces the whole matrix).
  auto g = stablehlo::StablehloFromText(R"(
module @m {
  func.func public @main(%arg0: tensor<3x3xf32>) -> tensor<3x3xf32> {
    %0:3 = stablehlo.custom_call @lapack_sgehrd_ffi(%arg0) {mhlo.backend_config = {high = 2 : i32, low = 1 : i32}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<2xf32>, tensor<i32>)
    return %0#0 : tensor<3x3xf32>
  }
}
)",
                                        "gehrd.mlir");
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(),
              HasSubstr("gehrd with low = 1, high = 2 is not supported"));
}

// sdy.manual_computation (shard_map under Shardy) with and without
// collectives in its body: emulated on one device, against the interpreter.
TEST(StablehloShardy, ManualComputationMatchesTheInterpreter) {
  std::string why;
  if (!api::OrtRunner::Shared().IsAvailable(&why)) GTEST_SKIP() << why;
  for (const char* file :
       {"shard_map_blockwise_sum.mlir", "shard_map_psum_ppermute.mlir"}) {
    for (bool ir : {false, true}) {
      for (int opset : {23, 17}) {
        SCOPED_TRACE(std::string(file) + (ir ? " ir" : " legacy") + " opset " +
                     std::to_string(opset));
        api::CheckOptions options;
        options.convert.read_environment = false;
        options.convert.use_onnx_ir = ir;
        options.convert.opset = opset;
        const api::CheckResult r =
            api::CheckBundle(kDir + file, options, api::OrtRunner::Shared());
        EXPECT_TRUE(r.passed) << r.stage << ": " << r.reason;
        EXPECT_EQ(r.oracle, "interpreter");
      }
    }
  }
}

TEST(StablehloShardy, ManualComputationBecomesShardMap) {
  auto p = stablehlo::LoadStablehloFile(kDir + "shard_map_psum_ppermute.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string text = jaxpr::PrintJaxpr(*p->file.main);
  EXPECT_THAT(text, HasSubstr("shard_map["));
  EXPECT_THAT(text, HasSubstr("psum"));
  EXPECT_THAT(text, HasSubstr("axes=('a',)"));
  EXPECT_THAT(text, HasSubstr("newly_manual_axes=frozenset({'a'})"));
  EXPECT_THAT(text, HasSubstr("perm=((0, 1), (1, 2), (2, 3), (3, 0))"));
}

// jax.export of tridiagonal over a symbolic batch: lapack_?sytrd/hetrd_ffi
// with its result shapes as extra operands becomes tridiagonal over
// f32[b,4,4] (its decomposition carries `b`); only the matrix dims must be
// static, and a symbolic one is refused naming the operand.
TEST(StablehloSymbolic, TridiagonalTakesASymbolicBatch) {
  auto bundle = api::LoadBundle(kDir + "symbolic_sytrd_f32.mlir");
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  EXPECT_THAT(jaxpr::PrintJaxpr(bundle->jaxpr()),
              HasSubstr("y:f32[b,4,4] z:f32[b,4] ba:f32[b,3] bb:f32[b,3] = "
                        "tridiagonal[lower=True] a\n"));
  auto loaded = LoadBundle(kDir + "symbolic_sytrd_f32.mlir");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ConvertOptions options;
  options.read_environment = false;
  for (bool ir : {false, true}) {
    options.use_onnx_ir = ir;
    EXPECT_TRUE(ToOnnx(*loaded, options).ok());
    auto square = ToOnnxFromText(
        "{ lambda ; a:f32[2,n,n]. let b:f32[2,n,n] c:f32[2,n] d:f32[2,n] "
        "e:f32[2,n] = tridiagonal[lower=True] a in (b, c, d, e) }",
        {}, options);
    ASSERT_FALSE(square.ok());
    EXPECT_THAT(square.status().message(),
                HasSubstr("tridiagonal: symbolic matrix dims in f32[2,n,n] "
                          "not supported (only batch dims may be symbolic)"));
  }
}

// A LAPACK call over symbolic matrix dims is refused at the custom_call
// (the decompositions unroll over the matrix dims).
TEST(StablehloSymbolic, LapackCallOverSymbolicMatrixDimsIsRefused) {
  auto p = stablehlo::StablehloFromText(
      R"(module @jit_f attributes {jax.uses_shape_polymorphism = true} {
  func.func public @main(%arg0: tensor<2x?x?xf32>) -> tensor<2x?x?xf32> {
    %r:2 = stablehlo.custom_call @lapack_spotrf_ffi(%arg0) {mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>]} : (tensor<2x?x?xf32>) -> (tensor<2x?x?xf32>, tensor<2xi32>)
    return %r#0 : tensor<2x?x?xf32>
  }
}
)",
      "square.mlir");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(),
              HasSubstr("square.mlir:3:12: error: stablehlo.custom_call: "
                        "custom_call target @lapack_spotrf_ffi: symbolic "
                        "matrix dims in f32[2,_d0,_d1] are not supported "
                        "(only batch dims may be symbolic)"));
}

}  // namespace
}  // namespace jax2onnx
