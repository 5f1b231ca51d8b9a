// The StableHLO frontend on small hand-written modules: parsing of the
// pretty and generic forms, dense constants, the test-suite format and
// error locations. Expected values are derived by hand in the comments.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/text/printer.h"
#include "stablehlo/translate.h"

namespace jax2onnx::stablehlo {
namespace {

using ::testing::HasSubstr;

const jaxpr::Array* Find(const StablehloProgram& p, const std::string& name) {
  for (const auto& [k, v] : p.arrays) {
    if (k == name) return &v;
  }
  return nullptr;
}

TEST(StablehloTranslate, MainArgumentsAndResultsBecomeTheProgram) {
  auto p = StablehloFromText(R"(
module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<3x2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32> loc(#loc3)
    %1 = "stablehlo.negate"(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
    return %1 : tensor<3x2xf32>
  }
}
#loc3 = loc("x")
)", "f.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->is_test);
  EXPECT_EQ(jaxpr::PrintJaxpr(*p->file.main),
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[3,2] = transpose[permutation=(1, 0)] a\n"
            "    c:f32[3,2] = neg b\n"
            "  in (c,) }");
}

TEST(StablehloTranslate, HexSplatAndComplexConstants) {
  // 0x0000803F is 1.0f little-endian; a 4-byte hex string for a 2x2 tensor
  // is a splat. (1.5, -2) is one complex element.
  auto p = StablehloFromText(R"(
func.func public @main() -> (tensor<2x2xf32>, tensor<2xcomplex<f32>>) {
  %0 = stablehlo.constant dense<"0x0000803F"> : tensor<2x2xf32>
  %1 = stablehlo.constant dense<[(1.5, -2.0), (0.0, 0x7F800000)]> : tensor<2xcomplex<f32>>
  return %0, %1 : tensor<2x2xf32>, tensor<2xcomplex<f32>>
}
)", "c.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  const jaxpr::Array* c0 = Find(*p, "const_0");
  ASSERT_NE(c0, nullptr);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(c0->GetAsDouble(i), 1.0);
  const jaxpr::Array* c1 = Find(*p, "const_1");
  ASSERT_NE(c1, nullptr);
  const float* f = c1->typed_data<float>();
  EXPECT_EQ(f[0], 1.5f);
  EXPECT_EQ(f[1], -2.0f);
  EXPECT_EQ(f[2], 0.0f);
  EXPECT_TRUE(std::isinf(f[3]));
}

TEST(StablehloTranslate, TestFormatTakesInputsExpectedAndTolerance) {
  auto p = StablehloFromText(R"(
module @jit_main {
  func.func public @main() -> (tensor<2xi32> {jax.result_info = ""}) {
    %0 = call @inputs() : () -> tensor<2xi32>
    %1 = call @expected() : () -> tensor<2xi32>
    %2 = stablehlo.abs %0 : tensor<2xi32>
    stablehlo.custom_call @check.expect_eq(%2, %1) {has_side_effect = true} : (tensor<2xi32>, tensor<2xi32>) -> ()
    return %2 : tensor<2xi32>
  }
  func.func private @inputs() -> (tensor<2xi32> {mhlo.layout_mode = "default"}) {
    %c = stablehlo.constant dense<[-3, 4]> : tensor<2xi32>
    return %c : tensor<2xi32>
  }
  func.func private @expected() -> (tensor<2xi32> {mhlo.layout_mode = "default"}) {
    %c = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
    return %c : tensor<2xi32>
  }
}
)", "t.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->is_test);
  EXPECT_EQ(p->file.main->invars.size(), 1u);
  EXPECT_TRUE(p->file.main->constvars.empty());  // @expected is not program
  ASSERT_NE(Find(*p, "input_0"), nullptr);
  EXPECT_EQ(Find(*p, "input_0")->GetAsInt64(0), -3);
  ASSERT_NE(Find(*p, "expected_0"), nullptr);
  EXPECT_EQ(Find(*p, "expected_0")->GetAsInt64(0), 3);
  EXPECT_EQ(p->rtol, 0.0);  // expect_eq: exact
}

TEST(StablehloTranslate, SplitModulesWithConstChecksFormOneProgram) {
  auto p = StablehloFromText(R"(// RUN: stablehlo-translate --interpret -split-input-file %s
func.func @a() {
  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = stablehlo.multiply %x, %x : tensor<2xf32>
  check.expect_almost_eq_const %y, dense<[1.0, 4.0]> : tensor<2xf32>
  func.return
}
// -----
func.func @b() {
  %x = stablehlo.constant dense<true> : tensor<i1>
  check.expect_eq_const %x, dense<true> : tensor<i1>
  func.return
}
)", "s.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->file.main->outvars.size(), 2u);
  // expect_almost_eq without a tolerance: StableHLO's default 1e-4, which is
  // above f32's default 1e-5.
  ASSERT_TRUE(p->rtol.has_value());
  EXPECT_DOUBLE_EQ(*p->rtol, 1e-4);
  EXPECT_DOUBLE_EQ(*p->atol, 1e-4);
}

TEST(StablehloTranslate, UnsupportedOpIsLocatedAndNamed) {
  auto p = StablehloFromText(
      "func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.frobnicate %a : tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n"
      "}\n",
      "u.mlir");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(),
              HasSubstr("u.mlir:2:8: error: stablehlo.frobnicate"));
}

TEST(StablehloTranslate, SyntaxErrorIsLocated) {
  auto p = StablehloFromText(
      "func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.add %a, %a : tensor<2xf32\n"
      "}\n",
      "e.mlir");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("e.mlir:2:"));
}

TEST(StablehloTranslate, UnsupportedElementTypeIsNamed) {
  // i4 and the other narrow types translate onto JAX's dtypes (whether ONNX
  // holds one is decided at conversion, docs/dtypes.md); tf32 is an MLIR
  // builtin float that neither JAX nor ONNX has.
  auto p = StablehloFromText(
      "func.func public @main(%a: tensor<2xtf32>) -> tensor<2xtf32> {\n"
      "  return %a : tensor<2xtf32>\n"
      "}\n",
      "tf32.mlir");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("tf32"));
}

TEST(StablehloTranslate, GenericChloScanReordersBodyToLaxScan) {
  // chlo.scan's body takes (x slice, carry) and returns (y, new carry); lax
  // scan's jaxpr takes (carry, x) and returns (new carry, y), and its
  // operands are the inits then the xs. operandSegmentSizes = [1, 1]: one
  // input, one init. A running sum: the body adds x and the carry.
  auto p = StablehloFromText(R"(
func.func public @main(%xs: tensor<3xf32>, %init: tensor<f32>) -> (tensor<3xf32>, tensor<f32>) {
  %0:2 = "chlo.scan"(%xs, %init) <{dimension = 0 : i64, operandSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%x: tensor<f32>, %c: tensor<f32>):
    %s = stablehlo.add %x, %c : tensor<f32>
    stablehlo.return %s, %s : tensor<f32>, tensor<f32>
  }) : (tensor<3xf32>, tensor<f32>) -> (tensor<3xf32>, tensor<f32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<f32>
}
)", "s.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(jaxpr::PrintJaxpr(*p->file.main),
            "{ lambda ; a:f32[3] b:f32[]. let\n"
            "    f:f32[] g:f32[3] = scan[\n"
            "      _split_transpose=False\n"
            "      jaxpr={ lambda ; d:f32[] c:f32[]. let e:f32[] = add c d in "
            "(e, e) }\n"
            "      length=3\n"
            "      linear=(False, False)\n"
            "      num_carry=1\n"
            "      num_consts=0\n"
            "      reverse=False\n"
            "      unroll=1\n"
            "    ] b a\n"
            "  in (g, f) }");
}

TEST(StablehloTranslate, RaggedDotOverContractingDimensionIsRefused) {
  // lhs_ragged_dimensions = [1] is lhs's contracting dimension (ragged_dot
  // mode 2), which the translation does not cover.
  auto p = StablehloFromText(
      "func.func public @main(%l: tensor<2x4xf32>, %r: tensor<4x3xf32>, "
      "%g: tensor<2xi64>) -> tensor<2x2x3xf32> {\n"
      "  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers = "
      "#chlo.ragged_dot<lhs_batching_dimensions = [], "
      "rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], "
      "rhs_contracting_dimensions = [0], lhs_ragged_dimensions = [1], "
      "rhs_group_dimensions = []>} : (tensor<2x4xf32>, tensor<4x3xf32>, "
      "tensor<2xi64>) -> tensor<2x2x3xf32>\n"
      "  return %0 : tensor<2x2x3xf32>\n"
      "}\n",
      "r.mlir");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(),
              HasSubstr("r.mlir:2:8: error: chlo.ragged_dot"));
  EXPECT_THAT(p.status().message(), HasSubstr("non-contracting"));
}


// ---- tokens, f8E4M3/f8E3M4 carried in f32, reduce_precision folding ----

namespace carried {

std::vector<jaxpr::Array> Run(const StablehloProgram& p,
                              std::vector<jaxpr::Array> inputs) {
  std::vector<jaxpr::Array> consts;
  for (const auto& [k, v] : p.arrays) {
    if (k.rfind("const_", 0) == 0) consts.push_back(v);
  }
  auto outs = jaxpr::Evaluate(*p.file.main, consts, inputs, {});
  EXPECT_TRUE(outs.ok()) << outs.status();
  return outs.ok() ? *outs : std::vector<jaxpr::Array>{};
}

jaxpr::Array F32(const std::vector<float>& v) {
  jaxpr::Array a(jaxpr::DType::kF32, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) a.SetFromDouble(i, v[i]);
  return a;
}

}  // namespace carried

TEST(StablehloTranslate, TokensNothingReadsAreDropped) {
  auto p = StablehloFromText(R"(
func.func @after_all_op_test() {
  %input0 = stablehlo.after_all : !stablehlo.token
  %input1 = stablehlo.create_token : !stablehlo.token
  %result = stablehlo.after_all %input0, %input1 : !stablehlo.token
  func.return
}
)", "tok.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->file.main->eqns.empty());
  EXPECT_TRUE(p->file.main->outvars.empty());
}

TEST(StablehloTranslate, HostIoOnTokensIsRefusedAtTheOp) {
  auto p = StablehloFromText(
      "func.func @f() -> tensor<2xi32> {\n"
      "  %t = stablehlo.after_all : !stablehlo.token\n"
      "  %r:2 = \"stablehlo.infeed\"(%t) {infeed_config = \"\"} : "
      "(!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)\n"
      "  func.return %r#0 : tensor<2xi32>\n"
      "}\n",
      "infeed.mlir");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(p.status().message(),
              HasSubstr("infeed.mlir:3:10: error: stablehlo.infeed: "
                        "`!stablehlo.token` operand or result"));
}

TEST(StablehloTranslate, ReducePrecisionToZeroMantissaBitsFoldsConstants) {
  // XLA: a NaN reduced to 0 mantissa bits becomes the infinity of its sign
  // (0xFFF8... is a NaN with the sign bit set -> -inf); 3.0 = 1.1b x 2^1
  // is halfway between 2^1 and 2^2 and rounds half to even on the bit
  // pattern, whose last kept bit is the exponent's lowest (1024 for 2^1:
  // even) -> 2.0; 1.0e6 ~ 1.9 x 2^19 rounds to 2^20, past e5's largest
  // exponent 15 -> +inf.
  auto p = StablehloFromText(R"(
func.func public @main() -> tensor<3xf64> {
  %0 = stablehlo.constant dense<[0xFFF8000000000001, 3.0, 1.0e6]> : tensor<3xf64>
  %1 = stablehlo.reduce_precision %0, format = e5m0 : tensor<3xf64>
  return %1 : tensor<3xf64>
}
)", "rp.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->file.main->eqns.empty());  // folded
  auto outs = carried::Run(*p, {});
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].GetAsDouble(0), -INFINITY);
  EXPECT_EQ(outs[0].GetAsDouble(1), 2.0);
  EXPECT_EQ(outs[0].GetAsDouble(2), INFINITY);
}

TEST(StablehloTranslate, F8E4M3AndF8E3M4AreCarriedInF32AndRounded) {
  // f8E4M3: bias 7, 3 mantissa bits, smallest normal 2^-6, subnormal step
  // 2^-9, largest finite 1.111b x 2^7 = 240 (248 is the midpoint to 256).
  //   0.1 = 1.6 x 2^-4 -> 1.625 x 2^-4 = 0.1015625 (1.6 is nearer 1.625
  //   than 1.5); 3 x 2^-10 = 1.5 steps of 2^-9 -> tie to even: 2 x 2^-9 =
  //   2^-8 (reduce_precision alone would flush it to 0); 2^-10 = half a
  //   step -> tie to even: 0; 250 > 248 -> inf; 244 < 248 -> 240;
  //   -0.3 = -1.2 x 2^-2 -> -1.25 x 2^-2 = -0.3125.
  // f8E3M4: bias 3, 4 mantissa bits, smallest normal 2^-2, subnormal step
  // 2^-6, largest finite 1.1111b x 2^3 = 15.5 (15.75 the midpoint to 16):
  //   the input 15.7 -> 15.5; 0.1 = 6.4 steps of 2^-6 -> 6/64 = 0.09375.
  auto p = StablehloFromText(R"(
func.func public @main(%a: tensor<6xf32>, %b: tensor<2xf8E3M4>) -> (tensor<6xf8E4M3>, tensor<2xf8E3M4>) {
  %0 = stablehlo.convert %a : (tensor<6xf32>) -> tensor<6xf8E4M3>
  return %0, %b : tensor<6xf8E4M3>, tensor<2xf8E3M4>
}
)", "f8.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->file.main->invars.size(), 2u);
  EXPECT_EQ(p->file.main->invars[1]->aval.dtype, jaxpr::DType::kF32);
  auto outs = carried::Run(
      *p, {carried::F32({0.1f, 3 * 0x1p-10f, 0x1p-10f, 250.0f, 244.0f, -0.3f}),
           carried::F32({15.7f, 0.1f})});
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].dtype(), jaxpr::DType::kF32);
  const std::vector<double> want = {0.1015625, 0x1p-8, 0.0, INFINITY, 240.0, -0.3125};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(outs[0].GetAsDouble(i), want[i]) << i;
  EXPECT_EQ(outs[1].GetAsDouble(0), 15.5);
  EXPECT_EQ(outs[1].GetAsDouble(1), 0.09375);
}

TEST(StablehloTranslate, F8DotAccumulatesInF32AndRoundsOnce) {
  // [0..7] . [0..7] = 140 in f32; f8E4M3 holds 128 and 144 around it (step
  // 16 above 128), 140 is nearer 144. Rounding each partial sum instead
  // would also give 144 here, so the check value's own rounding is what
  // the test pins: dense<140.0> parses to 144.
  auto p = StablehloFromText(R"(
func.func @dot() {
  %0 = stablehlo.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf8E4M3>
  %r = stablehlo.dot_general %0, %0, contracting_dims = [0] x [0] : (tensor<8xf8E4M3>, tensor<8xf8E4M3>) -> tensor<f8E4M3>
  check.expect_almost_eq_const %r, dense<140.0> : tensor<f8E4M3>
  func.return
}
)", "dot.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  const jaxpr::Array* expected = Find(*p, "expected_0");
  ASSERT_NE(expected, nullptr);
  EXPECT_EQ(expected->dtype(), jaxpr::DType::kF32);
  EXPECT_EQ(expected->GetAsDouble(0), 144.0);
  auto outs = carried::Run(*p, {});
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].GetAsDouble(0), 144.0);
}

TEST(StablehloTranslate, F8BitcastIsRefused) {
  auto p = StablehloFromText(
      "func.func public @main(%a: tensor<2xf8E4M3>) -> tensor<2xi8> {\n"
      "  %0 = stablehlo.bitcast_convert %a : (tensor<2xf8E4M3>) -> tensor<2xi8>\n"
      "  return %0 : tensor<2xi8>\n"
      "}\n",
      "bc.mlir");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(),
              HasSubstr("bc.mlir:2:8: error: stablehlo.bitcast_convert: "
                        "f8E4M3/f8E3M4 values are carried in f32"));
}

TEST(StablehloTranslate, UniformQuantizedValuesAreTheirStorageIntegers) {
  // quantize(x) = round_half_even(clamp(-128, x / 0.5 + 3, 127)):
  //   0.25 -> 3.5 -> 4 (even); 0.75 -> 4.5 -> 4; 100 -> 203 -> 127;
  //   -100 -> -197 -> -128.
  // dequantize(q) = (q - 3) * 0.5: 0.5, 0.5, 62, -65.5.
  // add on quantized values (dequantize, add, quantize to 1.0:0):
  //   1, 1, 124, -131 -> clamped -128.
  auto p = StablehloFromText(R"(
func.func public @main(%x: tensor<4xf32>) -> (tensor<4xi8>, tensor<4xf32>, tensor<4xi8>) {
  %q = "stablehlo.uniform_quantize"(%x) : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 0.5:3>>
  %b = "stablehlo.bitcast_convert"(%q) : (tensor<4x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<4xi8>
  %d = "stablehlo.uniform_dequantize"(%q) : (tensor<4x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<4xf32>
  %s = "stablehlo.add"(%q, %q) : (tensor<4x!quant.uniform<i8:f32, 0.5:3>>, tensor<4x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<4x!quant.uniform<i8:f32, 1.0:0>>
  %sb = "stablehlo.bitcast_convert"(%s) : (tensor<4x!quant.uniform<i8:f32, 1.0:0>>) -> tensor<4xi8>
  return %b, %d, %sb : tensor<4xi8>, tensor<4xf32>, tensor<4xi8>
}
)", "q.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  auto outs = carried::Run(*p, {carried::F32({0.25f, 0.75f, 100.0f, -100.0f})});
  ASSERT_EQ(outs.size(), 3u);
  const std::vector<int64_t> q = {4, 4, 127, -128};
  const std::vector<double> d = {0.5, 0.5, 62.0, -65.5};
  const std::vector<int64_t> s = {1, 1, 124, -128};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(outs[0].GetAsInt64(i), q[i]) << i;
    EXPECT_EQ(outs[1].GetAsDouble(i), d[i]) << i;
    EXPECT_EQ(outs[2].GetAsInt64(i), s[i]) << i;
  }
}

TEST(StablehloTranslate, PerAxisQuantizationUsesTheScaleOfEachIndex) {
  // Axis 1, scales {1.0:0, 0.25:-1}: column 0: 1.5 -> 2, -2.5 -> -2 (half
  // to even); column 1: 1.0 / 0.25 - 1 = 3, 0.3f / 0.25 - 1 = 0.2000000477
  // -> 0.
  auto p = StablehloFromText(R"(
func.func public @main(%x: tensor<2x2xf32>) -> tensor<2x2xi8> {
  %q = "stablehlo.uniform_quantize"(%x) : (tensor<2x2xf32>) -> tensor<2x2x!quant.uniform<i8:f32:1, {1.0:0,0.25:-1}>>
  %b = "stablehlo.bitcast_convert"(%q) : (tensor<2x2x!quant.uniform<i8:f32:1, {1.0:0,0.25:-1}>>) -> tensor<2x2xi8>
  return %b : tensor<2x2xi8>
}
)", "qa.mlir");
  ASSERT_TRUE(p.ok()) << p.status();
  jaxpr::Array x(jaxpr::DType::kF32, {2, 2});
  const float xs[4] = {1.5f, 1.0f, -2.5f, 0.3f};
  for (int i = 0; i < 4; ++i) x.SetFromDouble(i, xs[i]);
  auto outs = carried::Run(*p, {x});
  ASSERT_EQ(outs.size(), 1u);
  const int64_t want[4] = {2, 3, -2, 0};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(outs[0].GetAsInt64(i), want[i]) << i;
}

}  // namespace
}  // namespace jax2onnx::stablehlo
