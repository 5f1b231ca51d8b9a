// ONNX Runtime loads models written with external data: hand-built models
// with tensors in subgraphs (If branches), Constant attributes and model
// functions (expected values derived by hand below), and a converted while
// bundle compared against the reference interpreter.
// Skips when ONNX Runtime (node + onnxruntime-node) is not installed.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "api/bundle_access.h"
#include "api/check.h"
#include "api/convert_internal.h"
#include "api/ort_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/io/compare.h"
#include "jaxpr/io/npy.h"
#include "tests/ort_accepts.h"
#include "tests/write/write_test_util.h"

namespace jax2onnx::write_test {
namespace {

using jaxpr::Array;
using jaxpr::DType;

class ExternalDataOrtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!runner().IsAvailable(&reason)) GTEST_SKIP() << reason;
  }
  static api::OrtRunner& runner() { return api::OrtRunner::Shared(); }
};

Array F32(const std::vector<float>& values) {
  Array a(DType::kF32, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) a.SetFromDouble(i, values[i]);
  return a;
}

std::vector<double> Values(const Array& a) {
  std::vector<double> out;
  for (int64_t i = 0; i < a.num_elements(); ++i)
    out.push_back(a.GetAsDouble(i));
  return out;
}

onnx::AttributeProto* AddAttribute(onnx::NodeProto* node,
                                   const std::string& name,
                                   onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

onnx::NodeProto* AddNode(
    google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes,
    const std::string& op, const std::vector<std::string>& inputs,
    const std::string& output) {
  onnx::NodeProto* node = nodes->Add();
  node->set_op_type(op);
  for (const std::string& in : inputs) node->add_input(in);
  node->add_output(output);
  return node;
}

constexpr int kN = 256;  // f32: 1 KiB, the smallest tensor that goes external

std::vector<float> Iota() {
  std::vector<float> v(kN);
  for (int i = 0; i < kN; ++i) v[i] = static_cast<float>(i);
  return v;
}

// z = Scale(If(cond, then: Constant[0..255] + x, else: w_else * x)) where
// w_else = [10]*256 is an initializer of the else branch and the model
// function local.Scale(v) = v * Constant[2]*256. Every tensor lives in a
// subgraph, a node attribute or a function.
onnx::ModelProto IfAndFunctionModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::OperatorSetIdProto* local = model.add_opset_import();
  local->set_domain("local");
  local->set_version(1);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("if_function");
  onnx::ValueInfoProto* cond = g->add_input();
  cond->set_name("cond");
  cond->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::BOOL);
  cond->mutable_type()->mutable_tensor_type()->mutable_shape();
  AddFloatInfo(g->mutable_input(), "x", {kN});
  AddFloatInfo(g->mutable_output(), "z", {kN});

  onnx::NodeProto* if_node = AddNode(g->mutable_node(), "If", {"cond"}, "y");
  onnx::GraphProto* then_branch =
      AddAttribute(if_node, "then_branch", onnx::AttributeProto::GRAPH)
          ->mutable_g();
  then_branch->set_name("then");
  *AddAttribute(AddNode(then_branch->mutable_node(), "Constant", {}, "c"),
                "value", onnx::AttributeProto::TENSOR)
       ->mutable_t() = FloatTensor("", Iota());
  AddNode(then_branch->mutable_node(), "Add", {"c", "x"}, "y_then");
  AddFloatInfo(then_branch->mutable_output(), "y_then", {kN});
  onnx::GraphProto* else_branch =
      AddAttribute(if_node, "else_branch", onnx::AttributeProto::GRAPH)
          ->mutable_g();
  else_branch->set_name("else");
  *else_branch->add_initializer() =
      FloatTensor("w_else", std::vector<float>(kN, 10));
  AddNode(else_branch->mutable_node(), "Mul", {"w_else", "x"}, "y_else");
  AddFloatInfo(else_branch->mutable_output(), "y_else", {kN});

  onnx::NodeProto* call = AddNode(g->mutable_node(), "Scale", {"y"}, "z");
  call->set_domain("local");
  onnx::FunctionProto* scale = model.add_functions();
  scale->set_name("Scale");
  scale->set_domain("local");
  scale->add_input("v");
  scale->add_output("out");
  scale->add_opset_import()->set_version(17);
  *AddAttribute(AddNode(scale->mutable_node(), "Constant", {}, "two"), "value",
                onnx::AttributeProto::TENSOR)
       ->mutable_t() = FloatTensor("", std::vector<float>(kN, 2));
  AddNode(scale->mutable_node(), "Mul", {"v", "two"}, "out");
  return model;
}

int CountExternal(const onnx::GraphProto& graph);
int CountExternalInNodes(
    const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
  int n = 0;
  for (const onnx::NodeProto& node : nodes) {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_t()) n += a.t().data_location() == onnx::TensorProto::EXTERNAL;
      if (a.has_g()) n += CountExternal(a.g());
      for (const onnx::GraphProto& sub : a.graphs()) n += CountExternal(sub);
    }
  }
  return n;
}
int CountExternal(const onnx::GraphProto& graph) {
  int n = 0;
  for (const onnx::TensorProto& t : graph.initializer()) {
    n += t.data_location() == onnx::TensorProto::EXTERNAL;
  }
  return n + CountExternalInNodes(graph.node());
}

TEST_F(ExternalDataOrtTest, SubgraphAttributeAndFunctionTensorsRunFromSidecar) {
  const fs::path dir = TestDir();
  const std::string out = (dir / "m.onnx").string();
  WriteOptions options;
  options.external_data_threshold = 0;
  ASSERT_TRUE(WriteModel(IfAndFunctionModel(), out, options).ok());
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(ReadFile(out)));
  // then-branch Constant, else-branch initializer; the function's Constant.
  EXPECT_EQ(CountExternal(back.graph()), 2);
  EXPECT_EQ(CountExternalInNodes(back.functions(0).node()), 1);

  std::vector<float> x(kN);
  for (int i = 0; i < kN; ++i) x[i] = 0.5f - (i % 3);
  for (bool c : {true, false}) {
    Array cond(DType::kBool, {});
    cond.SetFromInt64(0, c);
    auto got = runner().Run(out, {{"cond", cond}, {"x", F32(x)}});
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 1u);
    // then: (i + x[i]) * 2; else: (10 * x[i]) * 2. All exact in f32.
    std::vector<double> expected(kN);
    for (int i = 0; i < kN; ++i) {
      expected[i] = c ? (i + x[i]) * 2.0 : 10.0 * x[i] * 2.0;
    }
    EXPECT_EQ(Values((*got)[0]), expected) << (c ? "then" : "else");
  }
}

TEST_F(ExternalDataOrtTest, ThresholdZeroModelMatchesAddedWeights) {
  const fs::path dir = TestDir();
  const std::string out = (dir / "m.onnx").string();
  WriteOptions options;
  options.external_data_threshold = 0;
  ASSERT_TRUE(WriteModel(AddWeightModel(kN), out, options).ok());
  EXPECT_THAT(ListDir(dir), ::testing::ElementsAre("m.onnx", "m.onnx.data"));
  auto got = runner().Run(out, {{"x", F32(std::vector<float>(kN, -1))}});
  ASSERT_TRUE(got.ok()) << got.status();
  // w[i] = i: x + w = i - 1.
  std::vector<double> expected(kN);
  for (int i = 0; i < kN; ++i) expected[i] = i - 1;
  EXPECT_EQ(Values((*got)[0]), expected);
  // The fixture write_model_test.cc writes, inline: ORT and (opset 17) the
  // ONNX checker accept it (tests/ort_accepts.h).
  EXPECT_ORT_ACCEPTS(AddWeightModel(kN));
}

// Two models with byte-identical .onnx files (same sidecar name, offsets and
// lengths) but different sidecars: the runner must not reuse the first
// model's session for the second.
TEST_F(ExternalDataOrtTest, SameModelBytesWithAnotherSidecarAreNotCached) {
  const fs::path dir = TestDir();
  WriteOptions options;
  options.external_data = ExternalData::kAlways;
  std::string model_bytes[2];
  std::vector<double> results[2];
  for (int k = 0; k < 2; ++k) {
    onnx::ModelProto model = AddWeightModel(kN);  // w[i] = i
    if (k == 1) {
      *model.mutable_graph()->mutable_initializer(0) =
          FloatTensor("w", std::vector<float>(kN, 5));
    }
    fs::create_directory(dir / std::to_string(k));
    const std::string out = (dir / std::to_string(k) / "m.onnx").string();
    ASSERT_TRUE(WriteModel(model, out, options).ok());
    model_bytes[k] = ReadFile(out);
    auto got = runner().Run(out, {{"x", F32(std::vector<float>(kN, 1))}});
    ASSERT_TRUE(got.ok()) << got.status();
    results[k] = Values((*got)[0]);
  }
  ASSERT_EQ(model_bytes[0], model_bytes[1]);
  // x + w: i + 1, then 5 + 1.
  EXPECT_EQ(results[0][3], 4);
  EXPECT_EQ(results[1], std::vector<double>(kN, 6));
}

// `check`'s RunModel writes a model whose weight exceeds the 1 MiB default
// threshold with a sidecar into a private temporary directory, runs it and
// removes the directory.
TEST_F(ExternalDataOrtTest, CheckRunModelUsesAPrivateDirectoryWithSidecar) {
  const fs::path dir = TestDir();
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir ? old_tmpdir : "";
  ::setenv("TMPDIR", dir.c_str(), 1);
  constexpr int kBig = 300000;  // 1.2 MB of f32
  auto got = api::RunModel(AddWeightModel(kBig),
                           {F32(std::vector<float>(kBig, 0.5f))}, runner());
  if (old_tmpdir) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  ASSERT_TRUE(got.ok()) << got.status();
  // w[i] = i: x + w = i + 0.5 (exact in f32 below 2^23).
  EXPECT_EQ((*got)[0].GetAsDouble(0), 0.5);
  EXPECT_EQ((*got)[0].GetAsDouble(kBig - 1), kBig - 1 + 0.5);
  for (const std::string& name : ListDir(dir)) {
    EXPECT_FALSE(absl::StartsWith(name, "jax2onnx_check_")) << name;
  }
}

// A while loop whose body multiplies by a 2 KiB weight (a main-graph
// initializer, passed to the Loop) and adds a broadcast literal, which the
// converter lowers to Expand with a small int64 shape tensor: the weight goes
// external, the shape tensor must stay inline for ONNX shape inference.
constexpr char kWhileJaxpr[] = R"({ lambda a:f32[512]; b:f32[512] n:i32[]. let
    _:i32[] _:i32[] e:f32[512] = while[
      body_jaxpr={ lambda ; w:f32[512] h:i32[] i:i32[] j:f32[512]. let
          k:i32[] = add h 1
          c:f32[512] = broadcast_in_dim[broadcast_dimensions=() shape=(512,) sharding=None] 3.0
          m:f32[512] = add j c
          q:f32[512] = mul m w
        in (k, i, q) }
      body_nconsts=1
      cond_jaxpr={ lambda ; o:i32[] p:i32[] r:f32[512]. let
          s:bool[] = lt o p
        in (s,) }
      cond_nconsts=0
    ] a 0 n b
  in (e,) }
)";

TEST_F(ExternalDataOrtTest, ConvertedWhileBundleMatchesTheInterpreter) {
  const fs::path dir = TestDir();
  WriteFile(dir / "w.jaxpr", kWhileJaxpr);
  Array weight(DType::kF32, {512}), start(DType::kF32, {512});
  for (int i = 0; i < 512; ++i) {
    weight.SetFromDouble(i, 0.5 + (i % 7) * 0.125);
    start.SetFromDouble(i, (i % 5) - 2.0);
  }
  Array trips(DType::kI32, {});
  trips.SetFromInt64(0, 3);
  ASSERT_TRUE(jaxpr::WriteNpzFile(
                  (dir / "w.npz").string(),
                  {{"const_0", weight}, {"input_0", start}, {"input_1", trips}})
                  .ok());
  auto bundle = jaxpr::LoadBundle((dir / "w.jaxpr").string());
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  auto model = api::ToOnnx(*bundle);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::string out = (dir / "m.onnx").string();
  WriteOptions options;
  options.external_data_threshold = 0;
  ASSERT_TRUE(WriteModel(*model, out, options).ok());
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(ReadFile(out)));
  EXPECT_EQ(CountExternal(back.graph()), 1);  // the weight only

  api::CheckOptions check_options;
  auto inputs = api::InputsFor(*bundle, check_options);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  std::string oracle;
  auto expected = api::OracleOutputs(*bundle, *inputs, &oracle);
  ASSERT_TRUE(expected.ok()) << expected.status();
  api::NamedArrays named;
  for (size_t i = 0; i < inputs->size(); ++i) {
    named.emplace_back(back.graph().input(static_cast<int>(i)).name(),
                       (*inputs)[i]);
  }
  auto got = runner().Run(out, named);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  jaxpr::CompareResult cmp = jaxpr::CompareArrays((*expected)[0], (*got)[0]);
  EXPECT_TRUE(cmp.ok) << cmp.Summary();
}

// ConvertToFile (the CLI's path) writes the weights straight from the
// bundle's memory-mapped npz instead of copying them into the proto first;
// the files it writes are byte-identical to ToOnnx + WriteModel for every
// external-data mode on both pipelines, and ONNX Runtime runs them.
TEST_F(ExternalDataOrtTest, ConvertToFileWritesWhatToOnnxAndWriteModelWrite) {
  const fs::path dir = TestDir();
  WriteFile(dir / "w.jaxpr", kWhileJaxpr);
  Array weight(DType::kF32, {512}), start(DType::kF32, {512});
  for (int i = 0; i < 512; ++i) {
    weight.SetFromDouble(i, 0.25 + (i % 11) * 0.5);
    start.SetFromDouble(i, (i % 3) - 1.0);
  }
  Array trips(DType::kI32, {});
  trips.SetFromInt64(0, 2);
  ASSERT_TRUE(jaxpr::WriteNpzFile(
                  (dir / "w.npz").string(),
                  {{"const_0", weight}, {"input_0", start}, {"input_1", trips}})
                  .ok());
  auto public_bundle = LoadBundle((dir / "w.jaxpr").string());
  ASSERT_TRUE(public_bundle.ok()) << public_bundle.status();
  const jaxpr::Bundle& bundle = api::BundleAccess::Get(*public_bundle);
  ASSERT_TRUE(bundle.consts[0].is_borrowed());  // from the map, not a copy

  for (bool use_ir : {true, false}) {
    for (ExternalData mode :
         {ExternalData::kNever, ExternalData::kAlways, ExternalData::kAuto}) {
      SCOPED_TRACE(absl::StrCat(use_ir ? "ir" : "legacy", " mode ",
                                static_cast<int>(mode)));
      ConvertOptions options;
      options.use_onnx_ir = use_ir;
      options.read_environment = false;
      WriteOptions write;
      write.external_data = mode;
      write.external_data_threshold = 0;
      auto model = api::ToOnnx(bundle, options);
      ASSERT_TRUE(model.ok()) << model.status();
      // Same file name in two folders: the sidecar's name is in the model.
      fs::create_directories(dir / "ref");
      fs::create_directories(dir / "got");
      const fs::path ref = dir / "ref" / "m.onnx", got = dir / "got" / "m.onnx";
      ASSERT_TRUE(WriteModel(*model, ref.string(), write).ok());
      ASSERT_TRUE(
          ConvertToFile(*public_bundle, got.string(), options, write).ok());
      EXPECT_EQ(ReadFile(got), ReadFile(ref));
      const bool sidecar = fs::exists(dir / "ref" / "m.onnx.data");
      EXPECT_EQ(sidecar, mode != ExternalData::kNever);
      ASSERT_EQ(fs::exists(dir / "got" / "m.onnx.data"), sidecar);
      if (sidecar) {
        EXPECT_EQ(ReadFile(dir / "got" / "m.onnx.data"),
                  ReadFile(dir / "ref" / "m.onnx.data"));
      }
      if (use_ir) {
        auto pending = api::ToOnnxForWriting(bundle, options);
        ASSERT_TRUE(pending.ok()) << pending.status();
        EXPECT_EQ(pending->deferred.size(), 1u);  // the 2 KiB weight
      }
      // ONNX Runtime runs what ConvertToFile wrote and agrees with the
      // interpreter.
      api::CheckOptions check_options;
      auto inputs = api::InputsFor(bundle, check_options);
      ASSERT_TRUE(inputs.ok()) << inputs.status();
      std::string oracle;
      auto expected = api::OracleOutputs(bundle, *inputs, &oracle);
      ASSERT_TRUE(expected.ok()) << expected.status();
      onnx::ModelProto back;
      ASSERT_TRUE(back.ParseFromString(ReadFile(got)));
      api::NamedArrays named;
      for (size_t i = 0; i < inputs->size(); ++i) {
        named.emplace_back(back.graph().input(static_cast<int>(i)).name(),
                           (*inputs)[i]);
      }
      auto ran = runner().Run(got.string(), named);
      ASSERT_TRUE(ran.ok()) << ran.status();
      jaxpr::CompareResult cmp =
          jaxpr::CompareArrays((*expected)[0], (*ran)[0]);
      EXPECT_TRUE(cmp.ok) << cmp.Summary();
      fs::remove_all(dir / "ref");
      fs::remove_all(dir / "got");
    }
  }
}

}  // namespace
}  // namespace jax2onnx::write_test
