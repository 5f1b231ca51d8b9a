// End-to-end tests of the legacy pipeline's ConvertToProto: graph I/O and
// symbolic dims, finalize (shape_env check, pruning, output naming),
// determinism, error messages, ONNX checker + strict shape inference, and
// numbers from ONNX Runtime against the reference interpreter.
#include "converter/convert.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "api/ort_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/io/compare.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"
#include "plugin/onnx_types.h"
#include "tests/converter/converter_test_util.h"

namespace jax2onnx::converter {
namespace {

using testing::BundleFromText;
using testing::Convert;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::SerializeDeterministic;

std::vector<std::string> OpTypes(const onnx::GraphProto& g) {
  std::vector<std::string> ops;
  for (const onnx::NodeProto& n : g.node()) ops.push_back(n.op_type());
  return ops;
}

std::vector<std::string> DimsOf(const onnx::ValueInfoProto& v) {
  std::vector<std::string> dims;
  for (const auto& d : v.type().tensor_type().shape().dim()) {
    dims.push_back(d.has_dim_param() ? d.dim_param()
                                     : std::to_string(d.dim_value()));
  }
  return dims;
}

// check_model + strict shape inference on a copy stamped IR 8 (libonnx 1.12
// knows IR <= 8); returns the failure text, "" when both pass.
std::string OnnxValidate(const onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  copy.set_ir_version(8);
  try {
    onnx::checker::check_model(copy);
    onnx::shape_inference::InferShapes(
        copy, onnx::OpSchemaRegistry::Instance(),
        onnx::ShapeInferenceOptions(/*check_type_val=*/true,
                                    /*strict_mode_val=*/1));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

jaxpr::Array Iota(jaxpr::DType dtype, std::vector<int64_t> shape, double scale,
                  double offset) {
  jaxpr::Array a(dtype, std::move(shape));
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    a.SetFromDouble(i, offset + scale * static_cast<double>(i));
  }
  return a;
}

// Runs the model in ORT on `inputs` (the graph inputs in order) and compares
// every output with the reference interpreter's.
void ExpectMatchesInterpreter(const jaxpr::Bundle& bundle,
                              const onnx::ModelProto& model,
                              const std::vector<jaxpr::Array>& inputs) {
  api::OrtRunner& ort = api::OrtRunner::Shared();
  std::string reason;
  if (!ort.IsAvailable(&reason)) GTEST_SKIP() << reason;
  absl::StatusOr<std::vector<jaxpr::Array>> expected =
      jaxpr::Evaluate(bundle.jaxpr(), bundle.consts, inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  const std::string path =
      ::testing::TempDir() + "/legacy_" +
      ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".onnx";
  {
    std::ofstream out(path, std::ios::binary);
    out << SerializeDeterministic(model);
  }
  api::NamedArrays named;
  for (size_t i = 0; i < inputs.size(); ++i) {
    named.emplace_back(model.graph().input(i).name(), inputs[i]);
  }
  absl::StatusOr<std::vector<jaxpr::Array>> got = ort.Run(path, named);
  std::remove(path.c_str());
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), expected->size());
  for (size_t i = 0; i < got->size(); ++i) {
    jaxpr::CompareResult r = jaxpr::CompareArrays((*expected)[i], (*got)[i]);
    EXPECT_TRUE(r.ok) << "output " << i << ": " << r.Summary();
  }
}

TEST(ConvertTest, SymbolicBatchBecomesDimParamOnInputsAndOutputs) {
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; a:f32[B,3] b:f32[B,3]. let c:f32[B,3] = add a b in (c,) }");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_TRUE(model.ok()) << model.status();
  const onnx::GraphProto& g = model->graph();
  ASSERT_EQ(g.input_size(), 2);
  // Graph I/O take the jaxpr's binders (plugin::ChooseIoNames).
  EXPECT_EQ(g.input(0).name(), "a");
  EXPECT_EQ(g.input(1).name(), "b");
  EXPECT_THAT(DimsOf(g.input(0)), ElementsAre("B", "3"));
  EXPECT_THAT(DimsOf(g.input(1)), ElementsAre("B", "3"));
  ASSERT_EQ(g.output_size(), 1);
  EXPECT_EQ(g.output(0).name(), "c");
  EXPECT_THAT(DimsOf(g.output(0)), ElementsAre("B", "3"));
  EXPECT_EQ(g.output(0).type().tensor_type().elem_type(),
            onnx::TensorProto::FLOAT);
  // b's dim B is checked against a's (jaxpr/argument_shape_checks.h: a
  // Gather that fails the run when they differ), and the output depends on
  // the check through a Reshape, which writes it directly (renamed, no
  // Identity).
  EXPECT_THAT(OpTypes(g),
              ElementsAre("Shape", "Squeeze", "Shape", "Squeeze", "Equal",
                          "Where", "Gather", "Add", "Shape", "Mul", "Reshape"));
  EXPECT_EQ(g.node(g.node_size() - 1).output(0), "c");
  EXPECT_EQ(model->ir_version(), plugin::IrVersionForOpset(17));
  ASSERT_EQ(model->opset_import_size(), 1);
  EXPECT_EQ(model->opset_import(0).version(), 17);
  EXPECT_EQ(model->producer_name(), "jax2onnx");
  EXPECT_EQ(OnnxValidate(*model), "");
}

TEST(ConvertTest, FinalizeRejectsANodeWithoutShapeEnvEntry) {
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; a:f32[3]. let b:f32[3] = test_unregistered_node a in (b,) "
      "}");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(model.status().message(), HasSubstr("node 'raw_neg_node' (Neg)"));
  EXPECT_THAT(model.status().message(), HasSubstr("no shape_env entry"));
}

TEST(ConvertTest, FinalizePrunesDeadNodesAndUnusedInitializers) {
  jaxpr::Array k = Iota(jaxpr::DType::kF32, {3}, 1, 0);
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda k:f32[3]; a:f32[3]. let\n"
      "    b:f32[3] = exp a\n"
      "    c:f32[3] = test_with_dead_parts a\n"
      "  in (c,) }",
      {k});
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_TRUE(model.ok()) << model.status();
  const onnx::GraphProto& g = model->graph();
  // Exp (unused result), the lowering's dead Neg, its unused initializer and
  // the unused constvar are gone; only the Identity feeding c remains.
  EXPECT_THAT(OpTypes(g), ElementsAre("Identity"));
  EXPECT_EQ(g.initializer_size(), 0);
  // No value_info for pruned values.
  EXPECT_EQ(g.value_info_size(), 0);
  EXPECT_EQ(OnnxValidate(*model), "");
}

TEST(ConvertTest, OutputsAreNamedWithIdentitiesWhereRenamingCannotWork) {
  // b is both read by neg and returned twice; a is returned as is. Only c
  // is named by its binder: b (twice) and a (an input) cannot be, so they
  // are out_i.
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; a:f32[B,3]. let\n"
      "    b:f32[B,3] = exp a\n"
      "    c:f32[B,3] = neg b\n"
      "  in (b, c, b, a) }");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_TRUE(model.ok()) << model.status();
  const onnx::GraphProto& g = model->graph();
  ASSERT_EQ(g.output_size(), 4);
  std::vector<std::string> names;
  for (int i = 0; i < 4; ++i) {
    names.push_back(g.output(i).name());
    EXPECT_THAT(DimsOf(g.output(i)), ElementsAre("B", "3"));
  }
  EXPECT_THAT(names, ElementsAre("out_0", "c", "out_2", "out_3"));
  EXPECT_THAT(OpTypes(g), ElementsAre("Exp", "Neg", "Identity", "Identity"));
  EXPECT_EQ(g.node(0).output(0), "out_0");
  EXPECT_EQ(g.node(1).input(0), "out_0");  // the reader was renamed too
  EXPECT_EQ(g.node(2).input(0), "out_0");
  EXPECT_EQ(g.node(3).input(0), "a");
  EXPECT_EQ(OnnxValidate(*model), "");
  ExpectMatchesInterpreter(bundle, *model,
                           {Iota(jaxpr::DType::kF32, {2, 3}, 0.25, -0.5)});
}

TEST(ConvertTest, OutputBytesAreIdenticalAcrossConversions) {
  const std::string text =
      "{ lambda k:f32[3]; a:f32[B,3] b:f32[B,3]. let\n"
      "    c:f32[B,3] = mul a k\n"
      "    d:f32[B,3] = add c 1.0:f32[]\n"
      "    e:f32[B,3] = max d b\n"
      "    f:f32[B,3] = sub e 1.0:f32[]\n"
      "    g:f32[B,3] = tanh f\n"
      "  in (g, e) }";
  jaxpr::Array k = Iota(jaxpr::DType::kF32, {3}, 0.5, 1);
  absl::StatusOr<onnx::ModelProto> first = Convert(BundleFromText(text, {k}));
  absl::StatusOr<onnx::ModelProto> second = Convert(BundleFromText(text, {k}));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(SerializeDeterministic(*first), SerializeDeterministic(*second));
  // The two `1.0` literals share one initializer, next to const_0; the exact
  // float max (plugin/float_extremes.h: a zero result takes IEEE's sign)
  // adds its +0 and -1 scalars (its 1 shares the literals' initializer);
  // the check that b's B equals a's (jaxpr/argument_shape_checks.h) adds
  // the axes of its Squeeze, the Gather's [1] and the Where's 0 and 1.
  EXPECT_EQ(first->graph().initializer_size(), 8);
  EXPECT_EQ(OnnxValidate(*first), "");
}

TEST(ConvertTest, GuardrailNamesTheEquationThatBoundNothing) {
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = neg a\n"
      "    c:f32[3] = test_binds_nothing b\n"
      "  in (c,) }");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(model.status().message(),
              HasSubstr("equation #1 'test_binds_nothing' at line 3:"));
  EXPECT_THAT(model.status().message(),
              HasSubstr("did not bind output 0 (c:f32[3])"));
}

TEST(ConvertTest, UnknownPrimitiveErrorListsNearestNames) {
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = neg a\n"
      "    c:f32[3] = tanhh b\n"
      "  in (c,) }");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(),
              HasSubstr("equation #1 'tanhh' at line 3:"));
  EXPECT_THAT(model.status().message(),
              HasSubstr("unknown primitive 'tanhh'; did you mean tanh"));
}

TEST(ConvertTest, OpsetOutsideTheSupportedRangeIsRejected) {
  jaxpr::Bundle bundle =
      BundleFromText("{ lambda ; a:f32[3]. let b:f32[3] = neg a in (b,) }");
  for (int opset : {16, 27}) {
    absl::StatusOr<onnx::ModelProto> model = Convert(bundle, opset);
    ASSERT_FALSE(model.ok()) << opset;
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(model.status().message(),
                HasSubstr("opset " + std::to_string(opset)));
  }
  for (int opset : {17, 23, 26}) {
    absl::StatusOr<onnx::ModelProto> model = Convert(bundle, opset);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ(model->ir_version(), plugin::IrVersionForOpset(opset));
  }
}

TEST(ConvertTest, ALoweringIsRefusedBelowItsMinimumOpset) {
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = test_needs_opset_23 a\n"
      "  in (b,) }");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle, 17);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented)
      << model.status();
  EXPECT_THAT(model.status().message(),
              HasSubstr("equation #0 'test_needs_opset_23' at line 2:"));
  EXPECT_THAT(model.status().message(),
              HasSubstr("needs opset 23 or later in the legacy pipeline "
                        "(converting at opset 17)"));
  // At its opset the lowering runs (this one binds nothing on purpose).
  model = Convert(bundle, 23);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("did not bind output 0"));
}

TEST(ConvertTest, InputNameCountMismatchIsAnError) {
  plugins::RegisterAll();
  jaxpr::Bundle bundle =
      BundleFromText("{ lambda ; a:f32[3]. let b:f32[3] = neg a in (b,) }");
  LegacyConvertOptions options;
  options.input_names = {"x", "y"};
  absl::StatusOr<onnx::ModelProto> model = ConvertToProto(bundle, options);
  EXPECT_THAT(model.status().message(), HasSubstr("--input_names gives 2"));
  options.input_names = {"x"};
  options.output_names = {"x"};
  model = ConvertToProto(bundle, options);
  EXPECT_THAT(model.status().message(), HasSubstr("'x' is used twice"));
}

TEST(ConvertTest, ThreeEquationsMatchTheInterpreterInOrt) {
  // mul / exp / sub with a scalar literal, every lowering in this file.
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; a:f32[2,3] b:f32[2,3]. let\n"
      "    c:f32[2,3] = mul a b\n"
      "    d:f32[2,3] = exp c\n"
      "    e:f32[2,3] = sub d 0.5:f32[]\n"
      "  in (e,) }");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(OnnxValidate(*model), "");
  ExpectMatchesInterpreter(bundle, *model,
                           {Iota(jaxpr::DType::kF32, {2, 3}, 0.3, -0.7),
                            Iota(jaxpr::DType::kF32, {2, 3}, -0.2, 0.9)});
}

TEST(ConvertTest, IntegerAndBoolSpecialCasesMatchTheInterpreterInOrt) {
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; a:u8[4] b:bool[4] c:bool[4]. let\n"
      "    d:u8[4] = neg a\n"
      "    e:bool[4] = max b c\n"
      "    f:bool[4] = min b c\n"
      "  in (d, e, f) }");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(OnnxValidate(*model), "");
  jaxpr::Array b(jaxpr::DType::kBool, {4}), c(jaxpr::DType::kBool, {4});
  for (int i = 0; i < 4; ++i) {
    b.SetFromInt64(i, i & 1);
    c.SetFromInt64(i, (i >> 1) & 1);
  }
  // u8 values where neg wraps: 0, 1, 128 (its own negation) and 255. (They
  // were Iota(u8, 0, 100, ...), whose 300 is out of u8's range:
  // SetFromDouble's static_cast is undefined there, UBSan's finding.)
  jaxpr::Array a(jaxpr::DType::kU8, {4});
  const int64_t a_values[] = {0, 1, 128, 255};
  for (int i = 0; i < 4; ++i) a.SetFromInt64(i, a_values[i]);
  ExpectMatchesInterpreter(bundle, *model, {a, b, c});
}

TEST(ConvertTest, MaxAndMinPropagateNaNLikeTheInterpreter) {
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; a:f32[4] b:f32[4]. let\n"
      "    c:f32[4] = max a b\n"
      "    d:f32[4] = min a b\n"
      "  in (c, d) }");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_TRUE(model.ok()) << model.status();
  jaxpr::Array a = Iota(jaxpr::DType::kF32, {4}, 1, 0);
  jaxpr::Array b = Iota(jaxpr::DType::kF32, {4}, -1, 2);
  a.SetFromDouble(0, std::nan(""));
  b.SetFromDouble(3, std::nan(""));
  ExpectMatchesInterpreter(bundle, *model, {a, b});
}

TEST(ConvertTest, RuntimeDimValuesFollowFloorSemantics) {
  // Each dim is compared with DimExpr::Evaluate (the jaxpr library's own
  // Python-semantics implementation) at B = 5 and B = 8.
  using jaxpr::DimExpr;
  const DimExpr b = DimExpr::Symbol("B");
  const DimExpr b_minus_9 = DimExpr::Sum({b, DimExpr::Constant(-9)});
  testing::TestShapeDims() = {
      DimExpr::FloorDiv(b_minus_9, DimExpr::Constant(3)),
      DimExpr::FloorDiv(b, DimExpr::Constant(2)),
      DimExpr::Mod(b_minus_9, DimExpr::Constant(3)),
      DimExpr::Constant(7),
      DimExpr::Product({DimExpr::Constant(2), b}),
      DimExpr::Max(b, DimExpr::Constant(6)),
      DimExpr::Min(b, DimExpr::Constant(6)),
      DimExpr::NonNegative(b_minus_9),
      DimExpr::Pow(b, 2),
  };
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; a:f32[B,3]. let c:i64[9] = test_shape_value a in (c,) }");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(OnnxValidate(*model), "");
  api::OrtRunner& ort = api::OrtRunner::Shared();
  std::string reason;
  if (!ort.IsAvailable(&reason)) GTEST_SKIP() << reason;
  const std::string path = ::testing::TempDir() + "/legacy_dims.onnx";
  {
    std::ofstream out(path, std::ios::binary);
    out << SerializeDeterministic(*model);
  }
  for (int64_t size : {5, 8}) {
    absl::StatusOr<std::vector<jaxpr::Array>> got =
        ort.Run(path, {{"a", jaxpr::Array(jaxpr::DType::kF32, {size, 3})}});
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 1u);
    const jaxpr::Array& dims = (*got)[0];
    ASSERT_EQ(dims.num_elements(), 9);
    for (int i = 0; i < 9; ++i) {
      absl::StatusOr<int64_t> want =
          testing::TestShapeDims()[i].Evaluate({{"B", size}});
      ASSERT_TRUE(want.ok());
      EXPECT_EQ(dims.GetAsInt64(i), *want)
          << testing::TestShapeDims()[i].ToString() << " at B=" << size;
    }
  }
  std::remove(path.c_str());
}

TEST(ConvertTest, CallsAreInlined) {
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; a:f32[2,3]. let\n"
      "    b:f32[2,3] = test_call[jaxpr={ lambda ; x:f32[2,3]. let\n"
      "        y:f32[2,3] = tanh x\n"
      "        z:f32[2,3] = mul y 2.0:f32[]\n"
      "      in (z,) }] a\n"
      "  in (b,) }");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT(OpTypes(model->graph()), ElementsAre("Tanh", "Mul"));
  EXPECT_EQ(OnnxValidate(*model), "");
}

TEST(ConvertTest, SubgraphsCaptureOuterValuesAndKeepThemAlive) {
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; p:bool[] a:f32[2,3]. let\n"
      "    b:f32[2,3] = test_if_neg_exp p a\n"
      "  in (b,) }");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_TRUE(model.ok()) << model.status();
  const onnx::GraphProto& g = model->graph();
  // The Exp is read only inside the then-branch; pruning must keep it.
  EXPECT_THAT(OpTypes(g), ElementsAre("Exp", "If"));
  const onnx::NodeProto& if_node = g.node(1);
  ASSERT_EQ(if_node.attribute_size(), 2);
  EXPECT_THAT(OpTypes(if_node.attribute(0).g()), ElementsAre("Neg"));
  // The else-branch returned an outer value: an Identity inside the body.
  EXPECT_THAT(OpTypes(if_node.attribute(1).g()), ElementsAre("Identity"));
  EXPECT_EQ(OnnxValidate(*model), "");
  api::OrtRunner& ort = api::OrtRunner::Shared();
  std::string reason;
  if (!ort.IsAvailable(&reason)) GTEST_SKIP() << reason;
  const std::string path = ::testing::TempDir() + "/legacy_if.onnx";
  {
    std::ofstream out(path, std::ios::binary);
    out << SerializeDeterministic(*model);
  }
  const jaxpr::Array x = Iota(jaxpr::DType::kF32, {2, 3}, 0.5, -1);
  for (bool pred : {true, false}) {
    jaxpr::Array p(jaxpr::DType::kBool, {});
    p.SetFromInt64(0, pred);
    absl::StatusOr<std::vector<jaxpr::Array>> got =
        ort.Run(path, {{"p", p}, {"a", x}});
    ASSERT_TRUE(got.ok()) << got.status();
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const double want = pred ? -std::exp(x.GetAsDouble(i)) : x.GetAsDouble(i);
      EXPECT_NEAR((*got)[0].GetAsDouble(i), want, 1e-5) << i;
    }
  }
  std::remove(path.c_str());
}

TEST(ConvertTest, LoweringErrorsNameTheEquationAndOperands) {
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; a:c64[3]. let b:i32[] = argmax[axes=(0,) "
      "index_dtype=int32] a in (b,) }");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(), HasSubstr("equation #0 'argmax'"));
  EXPECT_THAT(model.status().message(),
              HasSubstr("'argmax' on complex values is not supported"));
  EXPECT_THAT(model.status().message(), HasSubstr("(operands: c64[3])"));
}

TEST(ConvertTest, GenericReduceWindowRefusesACombinerPrimitiveItCannotWiden) {
  // The combiner is lowered inline on whole tensors, which is exact only
  // for elementwise primitives (calls in it are inlined first); others are
  // refused by name.
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; a:f32[4]. let b:f32[3] = reduce_window[base_dilation=(1,) "
      "consts=() jaxpr={ lambda ; c:f32[] d:f32[]. let e:f32[] = pjit[ "
      "name=f jaxpr={ lambda ; x:f32[] y:f32[]. let z:f32[] = mul x y "
      "w:f32[] = erf_inv z in (w,) }] c d in (e,) } padding=((0, 0),) "
      "window_dilation=(1,) window_dimensions=(2,) window_strides=(1,)] a "
      "1.0:f32[] in (b,) }");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(),
              HasSubstr("reduce_window: combiner primitive 'erf_inv' is not "
                        "one of the elementwise primitives"));
}

TEST(ConvertTest, WindowGradientOverAbsurdShapesIsRefusedNotAllocated) {
  // 4 offsets x 2.5e9 window positions: the explicit construction would
  // need hundreds of GB of index constants (it aborted in std::bad_alloc).
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; a:f32[100000,100000] b:f32[50000,50000]. let "
      "c:f32[100000,100000] = select_and_scatter_add[padding=((0, 0), (0, 0)) "
      "select_prim=ge window_dimensions=(2, 2) window_strides=(2, 2)] b a "
      "in (c,) }");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(),
              HasSubstr("select_and_scatter_add over f32[100000,100000] needs "
                        "more than 16777216 (window offset, output position) "
                        "pairs"));
}

TEST(ConvertTest, WindowGradientBaseDilationOnASymbolicDimIsRefusedByName) {
  // Base dilation is built with a Gather over the static length; on a
  // symbolic windowed dim the refusal names the primitive and the dim.
  jaxpr::Bundle bundle = BundleFromText(
      "{ lambda ; a:f32[3,w] b:f32[3,w]. let c:f32[3,2*w - 2] = "
      "select_and_gather_add[base_dilation=(1, 2) padding=((0, 0), (0, 0)) "
      "select_prim=ge window_dilation=(1, 1) window_dimensions=(1, 2) "
      "window_strides=(1, 1)] a b in (c,) }");
  absl::StatusOr<onnx::ModelProto> model = Convert(bundle);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(),
              HasSubstr("'select_and_gather_add': base_dilation on the "
                        "symbolic dimension 'w'"));
}

}  // namespace
}  // namespace jax2onnx::converter
