// The corpus runner: marker grammar, f32->f64 promotion, the ONNX checker
// wrapper, and outcomes (PASS/FAIL/XFAIL/XPASS/SKIP) on small generated
// bundles through both pipelines.
#include "api/corpus.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "api/convert_internal.h"
#include "api/untyped_values.h"
#include "converter2/lowering_context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/text/parser.h"
#include "plugin/registry.h"
#include "tests/ort_accepts.h"

namespace jax2onnx::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(MarkersTest, ParsesNamesStrictAndSharedReason) {
  auto m = ParseMarkersLine("ir_xfail(strict), legacy_xfail: ORT lacks X, Y");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].name, "ir_xfail");
  EXPECT_TRUE((*m)[0].strict);
  EXPECT_EQ((*m)[0].reason, "ORT lacks X, Y");
  EXPECT_EQ((*m)[1].name, "legacy_xfail");
  EXPECT_FALSE((*m)[1].strict);
  EXPECT_EQ((*m)[1].reason, "ORT lacks X, Y");
  auto bare = ParseMarkersLine("legacy_only");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ((*bare)[0].reason, "");
}

TEST(MarkersTest, RejectsUnknownMalformedAndMisplacedStrict) {
  EXPECT_THAT(ParseMarkersLine("ir_xfial").status().message(),
              HasSubstr("unknown marker 'ir_xfial'"));
  EXPECT_THAT(ParseMarkersLine("legacy_only(strict)").status().message(),
              HasSubstr("only xfail markers take (strict)"));
  EXPECT_THAT(ParseMarkersLine("ir_xfail(loose)").status().message(),
              HasSubstr("unknown flag 'loose'"));
  EXPECT_FALSE(ParseMarkersLine("ir_xfail legacy_xfail").ok());  // no comma
  EXPECT_FALSE(ParseMarkersLine("ir_xfail,").ok());
  EXPECT_FALSE(ParseMarkersLine("ir_xfail(strict").ok());
}

TEST(MarkersTest, CollectsEveryMarkersLineAndRejectsContradictions) {
  auto file = jaxpr::ParseJaxprText(
      "# markers: ir_xfail: a\n# markers: no_f64: b\n"
      "{ lambda ; a:f32[2]. let  in (a,) }\n");
  ASSERT_TRUE(file.ok()) << file.status();
  auto m = ParseMarkers(*file);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[1].name, "no_f64");
  EXPECT_EQ((*m)[1].reason, "b");
  auto both = jaxpr::ParseJaxprText(
      "# markers: ir_only, legacy_only\n{ lambda ; a:f32[2]. let  in (a,) }\n");
  ASSERT_TRUE(both.ok());
  EXPECT_FALSE(ParseMarkers(*both).ok());
}

TEST(PromoteTest, PromotesF32TypesAndDtypeParamsButNotHeadersOrNames) {
  const std::string text =
      "# note: f32 stays here\n"
      "{ lambda ; a:f32[B,3] f32x:i32[]. let\n"
      "    b:f32[B,3] = mul a 2.0:f32[]\n"
      "    c:f32[B,3] = convert_element_type[new_dtype=float32 "
      "weak_type=False] b\n"
      "    d:bf16[3] = iota[dtype=bfloat16 dimension=0 shape=(3,)] \n"
      "  in (c,) }";
  EXPECT_EQ(PromoteF32ToF64(text),
            "# note: f32 stays here\n"
            "{ lambda ; a:f64[B,3] f32x:i32[]. let\n"
            "    b:f64[B,3] = mul a 2.0:f64[]\n"
            "    c:f64[B,3] = convert_element_type[new_dtype=float64 "
            "weak_type=False] b\n"
            "    d:bf16[3] = iota[dtype=bfloat16 dimension=0 shape=(3,)] \n"
            "  in (c,) }");
}

TEST(PromoteTest, PromotesF32ToBf16WithJaxNames) {
  const std::string text =
      "# rtol: f32 stays here\n"
      "{ lambda ; a:f32[2] b:i8[2]. let\n"
      "    c:f32[2] = convert_element_type[new_dtype=float32 "
      "weak_type=False] b\n"
      "    d:f32[2] = mul a c\n"
      "  in (d,) }";
  EXPECT_EQ(PromoteF32(text, jaxpr::DType::kBF16),
            "# rtol: f32 stays here\n"
            "{ lambda ; a:bf16[2] b:i8[2]. let\n"
            "    c:bf16[2] = convert_element_type[new_dtype=bfloat16 "
            "weak_type=False] b\n"
            "    d:bf16[2] = mul a c\n"
            "  in (d,) }");
}

TEST(PromoteTest, AllF32SignatureNeedsF32InvarsAndOutvars) {
  auto f32 = jaxpr::ParseJaxprText(
      "{ lambda ; a:f32[2]. let b:f32[2] = neg a in (b,) }");
  auto mixed = jaxpr::ParseJaxprText(
      "{ lambda ; a:f32[2] i:i32[]. let b:f32[2] = neg a in (b,) }");
  auto int_out = jaxpr::ParseJaxprText(
      "{ lambda ; a:f32[2]. let b:i32[2] = "
      "convert_element_type[new_dtype=int32 "
      "weak_type=False] a in (b,) }");
  ASSERT_TRUE(f32.ok() && mixed.ok() && int_out.ok());
  EXPECT_TRUE(AllF32Signature(*f32->main));
  EXPECT_FALSE(AllF32Signature(*mixed->main));
  EXPECT_FALSE(AllF32Signature(*int_out->main));
}

// A one-node opset-17 model: Relu on f32[2].
onnx::ModelProto ReluModel(const std::string& op_type) {
  onnx::ModelProto m;
  m.set_ir_version(10);
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  for (auto* v : {g->add_input(), g->add_output()}) {
    v->set_name(v == &g->input(0) ? "x" : "y");
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(2);
  }
  auto* n = g->add_node();
  n->set_op_type(op_type);
  n->add_input("x");
  n->add_output("y");
  return m;
}

TEST(OnnxCheckerTest, AcceptsValidModelStampedWithNewerIr) {
  EXPECT_TRUE(ValidateWithOnnxChecker(ReluModel("Relu")).ok());
  EXPECT_ORT_ACCEPTS(ReluModel("Relu"));
}

TEST(UntypedValuesTest, InferredIntermediateIsTyped) {
  // x -> Relu -> t -> Relu -> y: t has no value_info, inference types it.
  onnx::ModelProto m = ReluModel("Relu");
  m.mutable_graph()->mutable_node(0)->set_output(0, "t");
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type("Relu");
  n->add_input("t");
  n->add_output("y");
  auto untyped = UntypedValues(m);
  ASSERT_TRUE(untyped.ok()) << untyped.status();
  EXPECT_TRUE(untyped->empty()) << UntypedNames(*untyped);
}

TEST(UntypedValuesTest, ValueFromRankUnknownInputHasOnlyItsElementType) {
  // The same chain on an input declared without a shape: t and y keep
  // FLOAT but no rank, so both are listed with has_elem_type.
  onnx::ModelProto m = ReluModel("Relu");
  m.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->clear_shape();
  m.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->clear_shape();
  m.mutable_graph()->mutable_node(0)->set_output(0, "t");
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type("Relu");
  n->add_input("t");
  n->add_output("y");
  auto untyped = UntypedValues(m);
  ASSERT_TRUE(untyped.ok()) << untyped.status();
  ASSERT_EQ(untyped->size(), 2u);
  EXPECT_EQ((*untyped)[0].name, "t");
  EXPECT_TRUE((*untyped)[0].has_elem_type);
  EXPECT_EQ(UntypedNames(*untyped), "t, y");
}

TEST(OnnxCheckerTest, RejectsUnknownOpAndWrongDeclaredShape) {
  EXPECT_THAT(ValidateWithOnnxChecker(ReluModel("NoSuchOp")).message(),
              HasSubstr("check_model"));
  onnx::ModelProto m = ReluModel("Relu");
  m.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(3);
  EXPECT_THAT(ValidateWithOnnxChecker(m).message(),
              HasSubstr("shape inference"));
}

TEST(OnnxCheckerTest, ShapeInferencePropagatesShapeData) {
  // y = Concat(Shape(x, end=0), [3]) on x: f32[2]. The ONNX model is valid
  // (ONNX Runtime runs it: y = [3]); only shape inference with data
  // propagation rejects it, the empty Shape slice reaching Concat as a
  // rank-0 value ("axis must be in [-rank, rank-1]", libonnx 1.12); without
  // data propagation the checker passed this pattern (the legacy lu at
  // opset 17 had it and passed corpus_legacy), so this fails when
  // ValidateWithOnnxChecker drops data propagation. The lowerings no longer
  // emit it (linalg_plan::Builder::BatchShapeThen).
  onnx::ModelProto m = ReluModel("Shape");
  onnx::GraphProto* g = m.mutable_graph();
  onnx::NodeProto* shape = g->mutable_node(0);
  shape->set_output(0, "batch");
  onnx::AttributeProto* end = shape->add_attribute();
  end->set_name("end");
  end->set_type(onnx::AttributeProto::INT);
  end->set_i(0);
  onnx::TensorProto* three = g->add_initializer();
  three->set_name("three");
  three->set_data_type(onnx::TensorProto::INT64);
  three->add_dims(1);
  three->add_int64_data(3);
  onnx::NodeProto* concat = g->add_node();
  concat->set_op_type("Concat");
  concat->add_input("batch");
  concat->add_input("three");
  concat->add_output("y");
  onnx::AttributeProto* axis = concat->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  auto* y = g->mutable_output(0)->mutable_type()->mutable_tensor_type();
  y->set_elem_type(onnx::TensorProto::INT64);
  y->mutable_shape()->mutable_dim(0)->set_dim_value(1);
  std::string reason;
  if (OrtRunner::Shared().IsAvailable(&reason)) {
    auto y_out = RunModel(m, {jaxpr::Array(jaxpr::DType::kF32, {2})},
                          OrtRunner::Shared());
    ASSERT_TRUE(y_out.ok()) << y_out.status();
    ASSERT_EQ(y_out->size(), 1u);
    EXPECT_EQ((*y_out)[0].shape(), std::vector<int64_t>{1});
    EXPECT_EQ((*y_out)[0].GetAsInt64(0), 3);
  }
  EXPECT_THAT(ValidateWithOnnxChecker(m).message(),
              HasSubstr("axis must be in [-rank, rank-1]"));
}

class CorpusRunTest : public ::testing::TestWithParam<Pipeline> {
 protected:
  void SetUp() override {
    std::string reason;
    if (!OrtRunner::Shared().IsAvailable(&reason)) {
      GTEST_SKIP() << "ONNX Runtime unavailable: " << reason;
    }
    dir_ = std::filesystem::temp_directory_path() /
           ("jax2onnx_corpus_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / (name + ".jaxpr")).string();
    std::ofstream(path) << text;
    return path;
  }

  // Runs and returns "OUTCOME name" per case.
  std::vector<std::string> Run(const std::vector<std::string>& paths,
                               CorpusSummary* summary_out = nullptr,
                               bool also_opset17 = false) {
    CorpusOptions options;
    options.pipeline = GetParam();
    options.display_root = dir_.string();
    options.out = nullptr;
    options.also_opset17 = also_opset17;
    CorpusSummary summary = RunCorpus(paths, options, OrtRunner::Shared());
    std::vector<std::string> lines;
    for (const CaseResult& c : summary.cases) {
      lines.push_back(std::string(OutcomeName(c.outcome)) + " " + c.name);
      last_reasons_.push_back(c.reason);
    }
    if (summary_out) *summary_out = summary;
    return lines;
  }

  std::filesystem::path dir_;
  std::vector<std::string> last_reasons_;
};

constexpr char kNeg[] =
    "{ lambda ; a:f32[B,3]. let b:f32[B,3] = neg a in (b,) }\n";

TEST_P(CorpusRunTest, PassingBundleRunsWithItsF64Variant) {
  CorpusSummary s;
  EXPECT_THAT(Run({Write("neg", kNeg)}, &s),
              ElementsAre("PASS neg", "PASS neg[f64]"));
  EXPECT_EQ(s.Line(), "2 passed, 0 failed, 0 skipped, 0 xfailed, 0 xpassed");
  EXPECT_TRUE(s.ok());
}

TEST_P(CorpusRunTest, NonF32BundleHasNoF64VariantAndNoF64Skips) {
  EXPECT_THAT(
      Run({Write("ineg",
                 "{ lambda ; a:i32[3]. let b:i32[3] = neg a in (b,) }")}),
      ElementsAre("PASS ineg"));
  EXPECT_THAT(
      Run({Write("nof64", std::string("# markers: no_f64: why\n") + kNeg)}),
      ElementsAre("PASS nof64", "SKIP nof64[f64]"));
  EXPECT_EQ(last_reasons_.back(), "no_f64: why");
}

TEST_P(CorpusRunTest, ExpectedFailureIsXfailAndUnexpectedIsFail) {
  const std::string bad =
      "{ lambda ; a:f32[3]. let b:f32[3] = no_such_primitive a in (b,) }\n";
  CorpusSummary s;
  EXPECT_THAT(Run({Write("bad", bad)}, &s),
              ElementsAre("FAIL bad", "FAIL bad[f64]"));
  EXPECT_THAT(last_reasons_[0], HasSubstr("convert: "));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(
      Run({Write("xbad",
                 "# markers: ir_xfail, legacy_xfail: not lowered\n" + bad)},
          &s),
      ElementsAre("XFAIL xbad", "XFAIL xbad[f64]"));
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.xfailed, 2);
}

TEST_P(CorpusRunTest, XpassFailsTheRunOnlyWhenStrict) {
  CorpusSummary s;
  EXPECT_THAT(Run({Write("xp", std::string("# markers: ir_xfail, "
                                           "legacy_xfail: was broken\n") +
                                   kNeg)},
                  &s),
              ElementsAre("XPASS xp", "XPASS xp[f64]"));
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.xpassed, 2);
  EXPECT_THAT(Run({Write("xps", std::string("# markers: ir_xfail(strict), "
                                            "legacy_xfail(strict)\n") +
                                    kNeg)},
                  &s),
              ElementsAre("XPASS xps", "XPASS xps[f64]"));
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.failed, 2);
  EXPECT_TRUE(s.cases[0].strict_xpass);
}

TEST_P(CorpusRunTest, OnlyMarkersSkipTheOtherPipeline) {
  const bool ir = GetParam() == Pipeline::kIr;
  const std::string path =
      Write("only", std::string("# markers: legacy_only: needs X\n") + kNeg);
  if (ir) {
    EXPECT_THAT(Run({path}), ElementsAre("SKIP only"));
    EXPECT_EQ(last_reasons_[0], "legacy_only: needs X");
  } else {
    EXPECT_THAT(Run({path}), ElementsAre("PASS only", "PASS only[f64]"));
  }
}

TEST_P(CorpusRunTest, ExpectGraphLinesAreChecked) {
  EXPECT_THAT(Run({Write("eg", std::string("# expect_graph: Neg\n"
                                           "# expect_graph: counts Neg=1\n") +
                                   kNeg)}),
              ElementsAre("PASS eg", "PASS eg[f64]"));
  CorpusSummary s;
  EXPECT_THAT(
      Run({Write("egbad",
                 std::string("# expect_graph: must_absent Neg\n") + kNeg)},
          &s),
      ElementsAre("FAIL egbad", "PASS egbad[f64]"));
  EXPECT_THAT(s.cases[0].reason, HasSubstr("expect_graph: "));
  EXPECT_THAT(s.cases[0].reason, HasSubstr("Neg=1"));
}

TEST_P(CorpusRunTest, BadHeaderIsAFailure) {
  EXPECT_THAT(Run({Write("hdr", std::string("# markers: typo\n") + kNeg)}),
              ElementsAre("FAIL hdr"));
  EXPECT_THAT(last_reasons_[0], HasSubstr("unknown marker 'typo'"));
}

TEST_P(CorpusRunTest, Opset17VariantRunsTheChecker) {
  CorpusSummary s;
  EXPECT_THAT(Run({Write("o", kNeg)}, &s, /*also_opset17=*/true),
              ElementsAre("PASS o", "PASS o[f64]", "PASS o[opset17]"));
  EXPECT_THAT(
      Run({Write("o17", std::string("# opset: 17\n") + kNeg)}, &s, true),
      ElementsAre("PASS o17", "PASS o17[f64]"));
}

// A test-only IR lowering of `neg` that refuses opsets below 18 the way
// real lowerings refuse (Unimplemented, naming the opset).
absl::Status LowerNegFrom18(converter2::LoweringContext& ctx,
                            const jaxpr::Eqn& eqn) {
  if (ctx.opset() < 18) {
    return absl::UnimplementedError(
        absl::StrCat("neg at opset ", ctx.opset(), " needs 18"));
  }
  auto x = ctx.Input(eqn, 0);
  if (!x.ok()) return x.status();
  return ctx.SetOutput(eqn, 0, ctx.Op("Neg", {*x}));
}

TEST(CorpusRefusalTest, Opset17RefusalIsSkipButOtherFailuresAreNot) {
  std::string reason;
  if (!OrtRunner::Shared().IsAvailable(&reason)) {
    GTEST_SKIP() << "ONNX Runtime unavailable: " << reason;
  }
  // Swapped in for the real `neg` (the interpreter must know the primitive
  // to be the oracle) and restored below.
  RegisterAllLowerings();
  plugin::Registry& registry = plugin::Registry::Global();
  const plugin::PrimitiveEntry saved = *registry.Find("neg");
  registry.RegisterIr("neg", &LowerNegFrom18);
  const auto dir = std::filesystem::temp_directory_path() /
                   ("jax2onnx_refusal_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "r.jaxpr").string();
  std::ofstream(path) << "{ lambda ; a:i32[3]. let b:i32[3] = "
                         "neg a in (b,) }\n";
  const std::string at17 = (dir / "r17.jaxpr").string();
  std::ofstream(at17) << "# opset: 17\n{ lambda ; a:i32[3]. let b:i32[3] = "
                         "neg a in (b,) }\n";
  CorpusOptions options;
  options.pipeline = Pipeline::kIr;
  options.also_opset17 = true;
  options.display_root = dir.string();
  options.out = nullptr;
  CorpusSummary s = RunCorpus({path, at17}, options, OrtRunner::Shared());
  registry.RegisterIr("neg", saved.ir, saved.ir_info);
  std::filesystem::remove_all(dir);
  ASSERT_EQ(s.cases.size(), 3u);
  EXPECT_EQ(s.cases[0].outcome, Outcome::kPass);
  // The generated variant: the lowering's precise refusal is a SKIP.
  EXPECT_EQ(s.cases[1].name, "r[opset17]");
  EXPECT_EQ(s.cases[1].outcome, Outcome::kSkip);
  EXPECT_THAT(s.cases[1].reason, HasSubstr("refused at opset 17"));
  // A bundle that asks for opset 17 itself must convert there.
  EXPECT_EQ(s.cases[2].name, "r17");
  EXPECT_EQ(s.cases[2].outcome, Outcome::kFail);
}

INSTANTIATE_TEST_SUITE_P(BothPipelines, CorpusRunTest,
                         ::testing::Values(Pipeline::kLegacy, Pipeline::kIr),
                         [](const auto& info) {
                           return std::string(PipelineName(info.param));
                         });

}  // namespace
}  // namespace jax2onnx::api
