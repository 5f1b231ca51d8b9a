// Shadow compare: canonical form and verdicts on hand-built pairs of ONNX
// models, the JSON report, and the JAX2ONNX_SHADOW_COMPARE / _REPORT
// environment handling of ToOnnx.
#include "api/shadow.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/convert_internal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/serde.h"
#include "jaxpr/text/parser.h"
#include "tests/ort_accepts.h"
#include "tests/scoped_env.h"

namespace jax2onnx::api {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

// --- Model building --------------------------------------------------------

void AddTensorValueInfo(onnx::ValueInfoProto* v, const std::string& name,
                        std::vector<int64_t> dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::ModelProto EmptyModel() {
  onnx::ModelProto m;
  m.set_ir_version(9);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  m.mutable_graph()->set_name("fixture");  // the ONNX checker requires one
  AddTensorValueInfo(m.mutable_graph()->add_input(), "x", {2, 3});
  AddTensorValueInfo(m.mutable_graph()->add_output(), "y", {2, 3});
  return m;
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op,
                         std::vector<std::string> inputs,
                         std::vector<std::string> outputs,
                         const std::string& node_name = "") {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(node_name);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  return n;
}

void AddFloatInitializer(onnx::GraphProto* g, const std::string& name,
                         const std::vector<float>& values, bool raw = true) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(2);
  t->add_dims(3);
  if (raw) {
    t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()),
                                values.size() * sizeof(float)));
  } else {
    for (float v : values) t->add_float_data(v);
  }
}

const std::vector<float> kConst = {1, 2, 3, 4, 5, 6};

// y = (x + c) * x, with names and order chosen by the caller.
onnx::ModelProto AddMul(const std::string& tmp_name,
                        const std::string& const_name,
                        const std::vector<float>& c = kConst) {
  onnx::ModelProto m = EmptyModel();
  auto* g = m.mutable_graph();
  AddFloatInitializer(g, const_name, c);
  AddNode(g, "Add", {"x", const_name}, {tmp_name}, "add_" + tmp_name);
  AddNode(g, "Mul", {tmp_name, "x"}, {"y"});
  return m;
}

// y = Neg(x) + Exp(x); `neg_first` picks the order of the two branches.
onnx::ModelProto TwoBranches(bool neg_first) {
  onnx::ModelProto m = EmptyModel();
  auto* g = m.mutable_graph();
  if (neg_first) {
    AddNode(g, "Neg", {"x"}, {"a"});
    AddNode(g, "Exp", {"x"}, {"b"});
    AddNode(g, "Add", {"a", "b"}, {"y"});
  } else {
    AddNode(g, "Exp", {"x"}, {"p"});
    AddNode(g, "Neg", {"x"}, {"q"});
    AddNode(g, "Add", {"q", "p"}, {"y"});
  }
  return m;
}

// AddMul with an Identity between Add and Mul.
onnx::ModelProto AddIdentityMul() {
  onnx::ModelProto m = EmptyModel();
  auto* g = m.mutable_graph();
  AddFloatInitializer(g, "c", kConst);
  AddNode(g, "Add", {"x", "c"}, {"t"});
  AddNode(g, "Identity", {"t"}, {"t2"});
  AddNode(g, "Mul", {"t2", "x"}, {"y"});
  return m;
}

jaxpr::Array Input() {
  jaxpr::Array x(jaxpr::DType::kF32, {2, 3});
  const float values[] = {0.5f, -1.0f, 2.0f, -0.25f, 1.5f, 3.0f};
  for (int i = 0; i < 6; ++i) x.SetFromDouble(i, values[i]);
  return x;
}

// (x + c) * x computed here, independently of any ONNX run.
jaxpr::Array AddMulReference(const jaxpr::Array& x,
                             const std::vector<float>& c) {
  jaxpr::Array y(jaxpr::DType::kF32, {2, 3});
  for (int i = 0; i < 6; ++i) {
    const float xi = static_cast<float>(x.GetAsDouble(i));
    y.SetFromDouble(i, (xi + c[i]) * xi);
  }
  return y;
}

OrtRunner* RunnerOrNull() {
  std::string reason;
  return OrtRunner::Shared().IsAvailable(&reason) ? &OrtRunner::Shared()
                                                  : nullptr;
}

#define REQUIRE_ORT(runner)           \
  OrtRunner* runner = RunnerOrNull(); \
  if (runner == nullptr) GTEST_SKIP() << "ONNX Runtime unavailable"

ShadowResult Compare(const onnx::ModelProto& legacy, const onnx::ModelProto& ir,
                     OrtRunner* runner) {
  const jaxpr::Array x = Input();
  std::vector<jaxpr::Array> oracle = {AddMulReference(x, kConst)};
  return CompareModels(legacy, ir, std::vector<jaxpr::Array>{x}, oracle,
                       std::nullopt, std::nullopt, runner);
}

// The hand-built fixtures are whole models ORT accepts (tests/ort_accepts.h);
// the tests below that break one (NoSuchOp) do so on purpose.
TEST(FixtureTest, EveryFixtureModelIsOneOrtAccepts) {
  EXPECT_ORT_ACCEPTS(AddMul("t", "c"));
  EXPECT_ORT_ACCEPTS(AddMul("tmp_9", "const_a", {6, 5, 4, 3, 2, 1}));
  EXPECT_ORT_ACCEPTS(TwoBranches(true));
  EXPECT_ORT_ACCEPTS(TwoBranches(false));
  EXPECT_ORT_ACCEPTS(AddIdentityMul());
}

// --- Canonical form and structural diff -----------------------------------

TEST(CanonicalTest, SameModelIsIdentical) {
  const auto m = AddMul("t", "c");
  StructuralDiff d = DiffGraphs(Canonicalize(m), Canonicalize(m));
  EXPECT_TRUE(d.identical);
  EXPECT_TRUE(d.nodes.empty());
  EXPECT_TRUE(d.op_histogram_delta.empty());
}

TEST(CanonicalTest, RenamedValuesAndNodesGiveTheSameText) {
  EXPECT_EQ(Canonicalize(AddMul("t", "c")).Text(),
            Canonicalize(AddMul("tmp_9", "const_a")).Text());
}

TEST(CanonicalTest, ReorderedIndependentNodesGiveTheSameText) {
  EXPECT_EQ(Canonicalize(TwoBranches(true)).Text(),
            Canonicalize(TwoBranches(false)).Text());
}

TEST(CanonicalTest, NodesListedOutOfTopologicalOrderAreSorted) {
  onnx::ModelProto m = AddMul("t", "c");
  m.mutable_graph()->mutable_node()->SwapElements(0, 1);
  EXPECT_EQ(Canonicalize(m).Text(), Canonicalize(AddMul("t", "c")).Text());
}

TEST(CanonicalTest, GraphInputNamesArePartOfTheSignature) {
  onnx::ModelProto renamed = AddMul("t", "c");
  auto* g = renamed.mutable_graph();
  g->mutable_input(0)->set_name("x0");
  for (auto& n : *g->mutable_node()) {
    for (auto& in : *n.mutable_input()) {
      if (in == "x") in = "x0";
    }
  }
  StructuralDiff d =
      DiffGraphs(Canonicalize(AddMul("t", "c")), Canonicalize(renamed));
  EXPECT_FALSE(d.identical);
  ASSERT_THAT(d.signature_diffs, SizeIs(1));
  EXPECT_THAT(d.signature_diffs[0], HasSubstr("input 0"));
  EXPECT_TRUE(d.nodes.empty());  // the structure is the same
}

TEST(CanonicalTest, TensorDigestIgnoresNameAndEncoding) {
  onnx::GraphProto g;
  AddFloatInitializer(&g, "a", kConst, /*raw=*/true);
  AddFloatInitializer(&g, "b", kConst, /*raw=*/false);
  std::vector<float> other = kConst;
  other[5] = 6.5f;
  AddFloatInitializer(&g, "c", other);
  EXPECT_EQ(TensorDigest(g.initializer(0)), TensorDigest(g.initializer(1)));
  EXPECT_NE(TensorDigest(g.initializer(0)), TensorDigest(g.initializer(2)));
  EXPECT_THAT(TensorDigest(g.initializer(0)), SizeIs(16));
}

TEST(DiffTest, ExtraIdentityShowsInHistogramAndAlignment) {
  StructuralDiff d = DiffGraphs(Canonicalize(AddMul("t", "c")),
                                Canonicalize(AddIdentityMul()));
  EXPECT_FALSE(d.identical);
  ASSERT_THAT(d.op_histogram_delta, SizeIs(1));
  EXPECT_EQ(d.op_histogram_delta[0].op_type, "Identity");
  EXPECT_EQ(d.op_histogram_delta[0].legacy, 0);
  EXPECT_EQ(d.op_histogram_delta[0].ir, 1);
  EXPECT_EQ(d.matched_nodes, 2);  // Add and Mul
  int ir_only = 0;
  for (const NodeDiff& n : d.nodes) {
    if (n.kind == NodeDiff::Kind::kIrOnly) {
      ++ir_only;
      EXPECT_EQ(n.op_type, "Identity");
    }
  }
  EXPECT_EQ(ir_only, 1);
  EXPECT_EQ(d.initializers_common, 1);
}

TEST(DiffTest, DifferentConstantShowsAsInitializerAndInputDiff) {
  std::vector<float> other = kConst;
  other[0] = 1.5f;
  StructuralDiff d = DiffGraphs(Canonicalize(AddMul("t", "c")),
                                Canonicalize(AddMul("t", "c", other)));
  EXPECT_FALSE(d.identical);
  EXPECT_TRUE(d.op_histogram_delta.empty());
  EXPECT_THAT(d.initializers_legacy_only, SizeIs(1));
  EXPECT_THAT(d.initializers_ir_only, SizeIs(1));
  EXPECT_EQ(d.initializers_common, 0);
  ASSERT_THAT(d.nodes, SizeIs(1));
  EXPECT_EQ(d.nodes[0].kind, NodeDiff::Kind::kChanged);
  EXPECT_EQ(d.nodes[0].op_type, "Add");
  EXPECT_THAT(d.nodes[0].details[0], HasSubstr("input 1"));
}

TEST(DiffTest, AttributeDifferenceIsNamed) {
  auto transpose = [](std::vector<int64_t> perm) {
    onnx::ModelProto m = EmptyModel();
    auto* n = AddNode(m.mutable_graph(), "Transpose", {"x"}, {"y"});
    auto* a = n->add_attribute();
    a->set_name("perm");
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t p : perm) a->add_ints(p);
    return m;
  };
  StructuralDiff d = DiffGraphs(Canonicalize(transpose({1, 0})),
                                Canonicalize(transpose({0, 1})));
  ASSERT_THAT(d.nodes, SizeIs(1));
  EXPECT_THAT(d.nodes[0].details[0],
              HasSubstr("attribute perm: legacy [1,0], ir [0,1]"));
}

// --- Verdicts ----------------------------------------------------------------

TEST(VerdictTest, IdenticalModels) {
  ShadowResult r = Compare(AddMul("t", "c"), AddMul("t", "c"), RunnerOrNull());
  EXPECT_EQ(r.verdict, Verdict::kIdentical) << r.reason;
}

TEST(VerdictTest, RenamedValuesOnlyAreIdentical) {
  ShadowResult r =
      Compare(AddMul("t", "c"), AddMul("tmp_9", "const_a"), RunnerOrNull());
  EXPECT_EQ(r.verdict, Verdict::kIdentical) << r.reason;
}

TEST(VerdictTest, ReorderedIndependentNodesAreIdentical) {
  ShadowResult r = CompareModels(TwoBranches(true), TwoBranches(false),
                                 std::vector<jaxpr::Array>{Input()},
                                 absl::UnimplementedError("no oracle"),
                                 std::nullopt, std::nullopt, nullptr);
  EXPECT_EQ(r.verdict, Verdict::kIdentical) << r.reason;
}

TEST(VerdictTest, ExtraIdentityIsEquivalent) {
  REQUIRE_ORT(runner);
  ShadowResult r = Compare(AddMul("t", "c"), AddIdentityMul(), runner);
  EXPECT_EQ(r.verdict, Verdict::kEquivalent) << r.reason;
  EXPECT_TRUE(r.legacy.passed) << r.legacy.error;
  EXPECT_TRUE(r.ir.passed) << r.ir.error;
  ASSERT_THAT(r.outputs, SizeIs(1));
  EXPECT_TRUE(r.outputs[0].legacy_vs_ir.ok);
  EXPECT_EQ(r.outputs[0].legacy_vs_ir.max_abs, 0);
}

TEST(VerdictTest, NumericallyDifferentConstantIsDifferent) {
  REQUIRE_ORT(runner);
  std::vector<float> other = kConst;
  other[2] = 3.5f;  // element 2: x = 2, so y differs by 0.5 * 2 = 1
  ShadowResult r = Compare(AddMul("t", "c"), AddMul("t", "c", other), runner);
  EXPECT_EQ(r.verdict, Verdict::kDifferent) << r.reason;
  ASSERT_THAT(r.outputs, SizeIs(1));
  EXPECT_FALSE(r.outputs[0].legacy_vs_ir.ok);
  EXPECT_DOUBLE_EQ(r.outputs[0].legacy_vs_ir.max_abs, 1.0);
  // Relative to the IR side: (2 + 3.5) * 2 = 11.
  EXPECT_DOUBLE_EQ(r.outputs[0].legacy_vs_ir.max_rel, 1.0 / 11.0);
  EXPECT_TRUE(r.legacy.passed);  // legacy matches the oracle
  EXPECT_FALSE(r.ir.passed);
  EXPECT_EQ(r.ir.stage, "compare");
}

TEST(VerdictTest, DifferingGraphsWithoutRuntimeAreNotRun) {
  ShadowResult r = Compare(AddMul("t", "c"), AddIdentityMul(), nullptr);
  EXPECT_EQ(r.verdict, Verdict::kNotRun);
}

TEST(VerdictTest, ConversionFailuresAreClassified) {
  const auto ok = AddMul("t", "c");
  const absl::StatusOr<onnx::ModelProto> bad =
      absl::UnimplementedError("no lowering for 'foo'");
  const std::vector<jaxpr::Array> in = {Input()};
  const absl::StatusOr<std::vector<jaxpr::Array>> none =
      absl::UnimplementedError("none");
  EXPECT_EQ(CompareModels(bad, ok, in, none, {}, {}, nullptr).verdict,
            Verdict::kLegacyFailed);
  EXPECT_EQ(CompareModels(ok, bad, in, none, {}, {}, nullptr).verdict,
            Verdict::kIrFailed);
  ShadowResult both = CompareModels(bad, bad, in, none, {}, {}, nullptr);
  EXPECT_EQ(both.verdict, Verdict::kBothFailed);
  EXPECT_THAT(both.reason, HasSubstr("no lowering for 'foo'"));
}

TEST(VerdictTest, ModelOrtRejectsIsThatPipelinesFailure) {
  REQUIRE_ORT(runner);
  onnx::ModelProto broken = AddMul("t", "c");
  broken.mutable_graph()->mutable_node(1)->set_op_type("NoSuchOp");
  ShadowResult r = Compare(AddMul("t", "c"), broken, runner);
  EXPECT_EQ(r.verdict, Verdict::kIrFailed) << r.reason;
  EXPECT_EQ(r.ir.stage, "run");
}

// Shadow and parity judge each pipeline against the oracle by `check`'s rule
// (api/output_compare.h): a dot over 10,000 f32 terms that cancels to 0 is
// off by ~2.5e-5 in ORT (beyond the fixed 1e-5) and passes by the f32 noise
// bound, as `jax2onnx check` passes it.
TEST(VerdictTest, OracleComparisonUsesChecksNoiseBound) {
  REQUIRE_ORT(runner);
  ShadowOptions options;
  ShadowResult r = ShadowCompareFile(
      JAX2ONNX_SOURCE_DIR "/testdata/tolerance/dot_10000_cancelling.jaxpr",
      options, runner);
  EXPECT_TRUE(r.legacy.passed) << r.legacy.stage << ": " << r.legacy.error;
  EXPECT_TRUE(r.ir.passed) << r.ir.stage << ": " << r.ir.error;
  ASSERT_EQ(r.outputs.size(), 1u);
  // The output says which rule accepted it; the error stays reported.
  EXPECT_TRUE(r.outputs[0].ir_vs_oracle.ok);
  EXPECT_NE(r.outputs[0].ir_vs_oracle.summary.find("f32 noise bound"),
            std::string::npos)
      << r.outputs[0].ir_vs_oracle.summary;
  EXPECT_GT(r.outputs[0].ir_vs_oracle.max_abs, 1e-5);
}

// --- Report format -----------------------------------------------------------

TEST(ReportTest, JsonHasTheDocumentedFields) {
  ShadowResult r = Compare(AddMul("t", "c"), AddIdentityMul(), nullptr);
  r.name = "case";
  const nlohmann::json j = ShadowToJson(r);
  EXPECT_EQ(j["schema"], "jax2onnx.shadow/1");
  EXPECT_EQ(j["name"], "case");
  EXPECT_EQ(j["verdict"], "NOT_RUN");
  for (const char* side : {"legacy", "ir"}) {
    for (const char* field : {"converted", "ran", "passed", "stage", "error",
                              "nodes", "initializers", "convert_seconds"}) {
      EXPECT_TRUE(j[side].contains(field)) << side << "." << field;
    }
  }
  EXPECT_EQ(j["legacy"]["nodes"], 2);
  EXPECT_EQ(j["ir"]["nodes"], 3);
  const auto& s = j["structure"];
  EXPECT_EQ(s["identical"], false);
  EXPECT_EQ(s["op_histogram_delta"][0]["op"], "Identity");
  EXPECT_EQ(s["op_histogram_delta"][0]["legacy"], 0);
  EXPECT_EQ(s["op_histogram_delta"][0]["ir"], 1);
  EXPECT_TRUE(s["signature_diffs"].is_array());
  EXPECT_EQ(s["initializers"]["common"], 1);
  EXPECT_TRUE(s["node_diffs"].is_array());
  EXPECT_EQ(s["node_diffs_truncated"], 0);
  for (const auto& n : s["node_diffs"]) {
    for (const char* field :
         {"kind", "op", "legacy_index", "ir_index", "details"}) {
      EXPECT_TRUE(n.contains(field)) << field;
    }
  }
  EXPECT_TRUE(j["outputs"].is_array());
  EXPECT_TRUE(j.contains("oracle"));
  EXPECT_TRUE(j.contains("reason"));
}

TEST(ReportTest, JsonOutputErrorsAndTruncation) {
  REQUIRE_ORT(runner);
  std::vector<float> other = kConst;
  other[2] = 3.5f;
  ShadowResult r = Compare(AddMul("t", "c"), AddMul("t", "c", other), runner);
  const nlohmann::json j = ShadowToJson(r, /*max_node_diffs=*/0);
  EXPECT_EQ(j["verdict"], "DIFFERENT");
  EXPECT_EQ(j["structure"]["node_diffs"].size(), 0u);
  EXPECT_EQ(j["structure"]["node_diffs_truncated"], 1);
  const auto& out = j["outputs"][0];
  EXPECT_EQ(out["index"], 0);
  EXPECT_EQ(out["legacy_vs_ir"]["ok"], false);
  EXPECT_EQ(out["legacy_vs_ir"]["max_abs"], 1.0);
  EXPECT_EQ(out["legacy_vs_oracle"]["ok"], true);
  EXPECT_EQ(out["ir_vs_oracle"]["ok"], false);
}

TEST(ReportTest, HumanSummaryStartsWithTheVerdict) {
  ShadowResult r = Compare(AddMul("t", "c"), AddIdentityMul(), nullptr);
  r.name = "case";
  const std::string s = ShadowSummary(r);
  EXPECT_EQ(s.rfind("NOT_RUN case: ", 0), 0u) << s;
  EXPECT_THAT(s, HasSubstr("Identity 0->1"));
}

// --- Environment
// ---------------------------------------------------------------

TEST(EnvTest, ShadowModeValues) {
  EXPECT_EQ(*ParseShadowMode(nullptr), ShadowMode::kOff);
  for (const char* v : {"", "0", "false", "OFF"}) {
    EXPECT_EQ(*ParseShadowMode(v), ShadowMode::kOff) << v;
  }
  for (const char* v : {"1", "true", "On", " on "}) {
    EXPECT_EQ(*ParseShadowMode(v), ShadowMode::kOn) << v;
  }
  for (const char* v : {"strict", "STRICT", " Strict "}) {
    EXPECT_EQ(*ParseShadowMode(v), ShadowMode::kStrict) << v;
  }
  auto bad = ParseShadowMode("maybe");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("JAX2ONNX_SHADOW_COMPARE"));
  EXPECT_THAT(bad.status().message(), HasSubstr("maybe"));
}

TEST(EnvTest, StrictTurnsOnlyDifferentIntoAnError) {
  ShadowResult r;
  r.name = "b.jaxpr";
  for (Verdict v :
       {Verdict::kIdentical, Verdict::kEquivalent, Verdict::kLegacyFailed,
        Verdict::kIrFailed, Verdict::kBothFailed, Verdict::kNotRun}) {
    r.verdict = v;
    EXPECT_TRUE(ShadowStrictStatus(ShadowMode::kStrict, r).ok())
        << VerdictName(v);
  }
  r.verdict = Verdict::kDifferent;
  EXPECT_TRUE(ShadowStrictStatus(ShadowMode::kOn, r).ok());
  absl::Status s = ShadowStrictStatus(ShadowMode::kStrict, r);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("b.jaxpr"));
}

using testing_util::ScopedEnv;

Bundle TanhBundle() {
  auto file = jaxpr::ParseJaxprText(
      "{ lambda ; a:f32[2,3]. let\n"
      "    b:f32[2,3] = tanh a\n"
      "    c:f32[2,3] = add b a\n"
      "  in (c,) }\n",
      "tanh_add.jaxpr");
  CHECK(file.ok()) << file.status();
  Bundle b;
  b.name = "tanh_add";
  b.jaxpr_path = "tanh_add.jaxpr";
  b.file = *std::move(file);
  return b;
}

std::string TempPath(const std::string& stem) {
  return (std::filesystem::temp_directory_path() /
          (stem + "_" + std::to_string(getpid())))
      .string();
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(EnvTest, ToOnnxAppendsReportLinesAndReturnsTheRoutedModel) {
  const std::string report = TempPath("shadow_report.jsonl");
  std::remove(report.c_str());
  const Bundle bundle = TanhBundle();
  ScopedEnv env;
  env.Set(kShadowCompareEnv, "1");
  env.Set(kShadowReportEnv, report);
  for (const char* use_ir : {"0", "1"}) {
    env.Set(kUseOnnxIrEnv, use_ir);
    auto model = ToOnnx(bundle);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_ORT_ACCEPTS(*model);
    const Pipeline routed =
        use_ir[0] == '1' ? Pipeline::kIr : Pipeline::kLegacy;
    auto direct = ConvertWithPipeline(routed, bundle, ConvertOptions());
    ASSERT_TRUE(direct.ok());
    EXPECT_EQ(ir::SerializeDeterministic(*model),
              ir::SerializeDeterministic(*direct))
        << "routed " << PipelineName(routed);
  }
  const auto lines = Lines(report);
  ASSERT_THAT(lines, SizeIs(2));
  const auto first = nlohmann::json::parse(lines[0]);
  const auto second = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(first["routed"], "legacy");
  EXPECT_EQ(second["routed"], "ir");
  EXPECT_EQ(first["mode"], "on");
  EXPECT_EQ(first["bundle"], "tanh_add.jaxpr");
  EXPECT_EQ(first["schema"], "jax2onnx.shadow/1");
  EXPECT_TRUE(first["legacy"]["converted"]);
  EXPECT_TRUE(first["ir"]["converted"]);
  // Both pipelines are expected to agree on tanh + add.
  EXPECT_THAT(std::string(first["verdict"]),
              ::testing::AnyOf("IDENTICAL", "EQUIVALENT", "NOT_RUN"));
  std::remove(report.c_str());
}

TEST(EnvTest, StrictModeConvertsWhenThePipelinesAgree) {
  const std::string report = TempPath("shadow_strict.jsonl");
  std::remove(report.c_str());
  ScopedEnv env;
  env.Set(kShadowCompareEnv, "strict");
  env.Set(kShadowReportEnv, report);
  auto model = ToOnnx(TanhBundle());
  EXPECT_TRUE(model.ok()) << model.status();
  const auto lines = Lines(report);
  ASSERT_THAT(lines, SizeIs(1));
  EXPECT_EQ(nlohmann::json::parse(lines[0])["mode"], "strict");
  std::remove(report.c_str());
}

TEST(EnvTest, InvalidShadowValueIsAnError) {
  ScopedEnv env;
  env.Set(kShadowCompareEnv, "sometimes");
  auto model = ToOnnx(TanhBundle());
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(), HasSubstr("sometimes"));
}

TEST(EnvTest, UnwritableReportIsAnError) {
  ScopedEnv env;
  env.Set(kShadowCompareEnv, "on");
  env.Set(kShadowReportEnv, "/nonexistent-dir/report.jsonl");
  auto model = ToOnnx(TanhBundle());
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("/nonexistent-dir"));
}

TEST(EnvTest, ShadowOffLeavesNoReport) {
  const std::string report = TempPath("shadow_off.jsonl");
  std::remove(report.c_str());
  ScopedEnv env;
  env.Set(kShadowCompareEnv, "0");
  env.Set(kShadowReportEnv, report);
  ASSERT_TRUE(ToOnnx(TanhBundle()).ok());
  EXPECT_FALSE(std::filesystem::exists(report));
}

// --- JAX2ONNX_DEBUG_IR_DUMP
// -----------------------------------------------------

TEST(IrDumpTest, WritesOneNumberedFilePerStepOfTheIrPipeline) {
  const std::string dir = TempPath("ir_dump");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ScopedEnv env;
  env.Set("JAX2ONNX_DEBUG_IR_DUMP", dir);
  ASSERT_TRUE(
      ConvertWithPipeline(Pipeline::kIr, TanhBundle(), ConvertOptions()).ok());
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  ASSERT_GE(names.size(), 2u);  // after lowering, then at least one pass
  EXPECT_EQ(names[0], "00_lowered.txt");
  for (size_t i = 0; i < names.size(); ++i) {
    char prefix[8];
    std::snprintf(prefix, sizeof(prefix), "%02zu_", i);
    EXPECT_EQ(names[i].rfind(prefix, 0), 0u) << names[i];
  }
  std::ifstream in(dir + "/00_lowered.txt");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("Tanh"));
  EXPECT_THAT(text.str(), HasSubstr("Add"));

  // The legacy pipeline has no IR to dump.
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(
      ConvertWithPipeline(Pipeline::kLegacy, TanhBundle(), ConvertOptions())
          .ok());
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace jax2onnx::api
