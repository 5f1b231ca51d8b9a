// Tests of the ONNX Runtime harness (api/ort_runner.h + tools/ort/runner.js):
// tiny ONNX models built here with the onnx protobuf run through one batch
// Node process; expected values are computed in C++, independent of ORT.
// Tests that need ORT skip, with the reason, when node or onnxruntime-node is
// not installed.
#include "api/ort_runner.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "glog/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/array.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::api {
namespace {

namespace fs = std::filesystem;
using jaxpr::Array;
using jaxpr::DType;
using ::testing::HasSubstr;

// A scratch directory per test binary run, removed at the end.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern =
        (fs::temp_directory_path() / "ort_runner_test-XXXXXX").string();
    CHECK(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string File(const std::string& name) const {
    return (path_ / name).string();
  }

 private:
  fs::path path_;
};

ScratchDir& Scratch() {
  static ScratchDir dir;
  return dir;
}

void AddTensorInfo(
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
    const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* info = list->Add();
  info->set_name(name);
  onnx::TypeProto_Tensor* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

onnx::NodeProto* AddNode(onnx::GraphProto* graph, const std::string& op,
                         const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs) {
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name(op + "_" + std::to_string(graph->node_size()));
  for (const auto& in : inputs) node->add_input(in);
  for (const auto& out : outputs) node->add_output(out);
  return node;
}

onnx::ModelProto NewModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("ort_runner_test");
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  model.mutable_graph()->set_name("test");
  return model;
}

std::string SaveModel(const onnx::ModelProto& model, const std::string& name) {
  std::string path = Scratch().File(name);
  std::ofstream out(path, std::ios::binary);
  CHECK(model.SerializeToOstream(&out));
  return path;
}

// c = a + b, f32[2,3].
std::string AddModel() {
  static const std::string path = [] {
    onnx::ModelProto model = NewModel();
    onnx::GraphProto* g = model.mutable_graph();
    AddTensorInfo(g->mutable_input(), "a", onnx::TensorProto::FLOAT, {2, 3});
    AddTensorInfo(g->mutable_input(), "b", onnx::TensorProto::FLOAT, {2, 3});
    AddTensorInfo(g->mutable_output(), "c", onnx::TensorProto::FLOAT, {2, 3});
    AddNode(g, "Add", {"a", "b"}, {"c"});
    return SaveModel(model, "add.onnx");
  }();
  return path;
}

// y = Cast<int64>(x), x f32[5].
std::string CastModel() {
  static const std::string path = [] {
    onnx::ModelProto model = NewModel();
    onnx::GraphProto* g = model.mutable_graph();
    AddTensorInfo(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {5});
    AddTensorInfo(g->mutable_output(), "y", onnx::TensorProto::INT64, {5});
    onnx::AttributeProto* to =
        AddNode(g, "Cast", {"x"}, {"y"})->add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(onnx::TensorProto::INT64);
    return SaveModel(model, "cast.onnx");
  }();
  return path;
}

// Two outputs, declared "gt" before "sum": gt = a > b (bool), sum = a + b,
// i32[4].
std::string CompareModel() {
  static const std::string path = [] {
    onnx::ModelProto model = NewModel();
    onnx::GraphProto* g = model.mutable_graph();
    AddTensorInfo(g->mutable_input(), "a", onnx::TensorProto::INT32, {4});
    AddTensorInfo(g->mutable_input(), "b", onnx::TensorProto::INT32, {4});
    AddTensorInfo(g->mutable_output(), "gt", onnx::TensorProto::BOOL, {4});
    AddTensorInfo(g->mutable_output(), "sum", onnx::TensorProto::INT32, {4});
    AddNode(g, "Add", {"a", "b"}, {"sum"});
    AddNode(g, "Greater", {"a", "b"}, {"gt"});
    return SaveModel(model, "compare.onnx");
  }();
  return path;
}

struct DTypeCase {
  DType dtype;
  int onnx_type;
};
const std::vector<DTypeCase>& AllDTypes() {
  static const std::vector<DTypeCase> cases = {
      {DType::kBool, onnx::TensorProto::BOOL},
      {DType::kI8, onnx::TensorProto::INT8},
      {DType::kI16, onnx::TensorProto::INT16},
      {DType::kI32, onnx::TensorProto::INT32},
      {DType::kI64, onnx::TensorProto::INT64},
      {DType::kU8, onnx::TensorProto::UINT8},
      {DType::kU16, onnx::TensorProto::UINT16},
      {DType::kU32, onnx::TensorProto::UINT32},
      {DType::kU64, onnx::TensorProto::UINT64},
      {DType::kF16, onnx::TensorProto::FLOAT16},
      {DType::kF32, onnx::TensorProto::FLOAT},
      {DType::kF64, onnx::TensorProto::DOUBLE},
  };
  return cases;
}

// One Identity per dtype, input i<k> -> output o<k>, each 0-d except the
// shape [2,0] float input which checks empty tensors.
std::string IdentityModel() {
  static const std::string path = [] {
    onnx::ModelProto model = NewModel();
    onnx::GraphProto* g = model.mutable_graph();
    for (size_t k = 0; k < AllDTypes().size(); ++k) {
      std::string in = "i" + std::to_string(k), out = "o" + std::to_string(k);
      AddTensorInfo(g->mutable_input(), in, AllDTypes()[k].onnx_type, {});
      AddTensorInfo(g->mutable_output(), out, AllDTypes()[k].onnx_type, {});
      AddNode(g, "Identity", {in}, {out});
    }
    AddTensorInfo(g->mutable_input(), "empty", onnx::TensorProto::FLOAT,
                  {2, 0});
    AddTensorInfo(g->mutable_output(), "empty_out", onnx::TensorProto::FLOAT,
                  {2, 0});
    AddNode(g, "Identity", {"empty"}, {"empty_out"});
    return SaveModel(model, "identity.onnx");
  }();
  return path;
}

Array F32(std::vector<int64_t> shape, const std::vector<float>& values) {
  Array a(DType::kF32, std::move(shape));
  CHECK_EQ(a.num_elements(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    a.typed_data<float>()[i] = values[i];
  return a;
}

Array I32(const std::vector<int32_t>& values) {
  Array a(DType::kI32, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i)
    a.typed_data<int32_t>()[i] = values[i];
  return a;
}

#define SKIP_IF_ORT_UNAVAILABLE(runner)           \
  do {                                            \
    std::string reason;                           \
    if (!(runner).IsAvailable(&reason)) {         \
      GTEST_SKIP() << "ONNX Runtime: " << reason; \
    }                                             \
  } while (0)

TEST(OrtRunnerTest, ReportsOrtVersion) {
  OrtRunner& runner = OrtRunner::Shared();
  SKIP_IF_ORT_UNAVAILABLE(runner);
  absl::StatusOr<std::string> version = runner.OrtVersion();
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_THAT(*version, ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+.*"));
  std::cout << "onnxruntime-node version: " << *version << "\n";
}

// 50 requests over three models through one process; every result checked
// against values computed here.
TEST(OrtRunnerTest, BatchOfFiftyRequestsMatchesHandComputedValues) {
  OrtRunner runner;
  SKIP_IF_ORT_UNAVAILABLE(runner);
  const int starts_before = runner.process_starts();
  constexpr int kRequests = 50;
  auto begin = std::chrono::steady_clock::now();
  for (int i = 0; i < kRequests; ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    switch (i % 3) {
      case 0: {
        std::vector<float> a, b;
        for (int k = 0; k < 6; ++k) {
          a.push_back(0.25f * k + i);
          b.push_back(-1.5f * k + 0.125f * i);
        }
        auto out = runner.Run(AddModel(),
                              {{"a", F32({2, 3}, a)}, {"b", F32({2, 3}, b)}});
        ASSERT_TRUE(out.ok()) << out.status();
        ASSERT_EQ(out->size(), 1u);
        const Array& c = (*out)[0];
        ASSERT_EQ(c.dtype(), DType::kF32);
        ASSERT_EQ(c.shape(), (std::vector<int64_t>{2, 3}));
        // Sums of values with few mantissa bits are exact in f32.
        for (int k = 0; k < 6; ++k) {
          EXPECT_EQ(c.typed_data<float>()[k], a[k] + b[k]) << "k=" << k;
        }
        break;
      }
      case 1: {
        std::vector<float> x = {1.75f + i, -2.5f - i, 3.0f, -0.4f, 1e6f + i};
        auto out = runner.Run(CastModel(), {{"x", F32({5}, x)}});
        ASSERT_TRUE(out.ok()) << out.status();
        ASSERT_EQ(out->size(), 1u);
        const Array& y = (*out)[0];
        ASSERT_EQ(y.dtype(), DType::kI64);
        ASSERT_EQ(y.shape(), (std::vector<int64_t>{5}));
        // ONNX Cast float -> int truncates toward zero, like static_cast.
        for (int k = 0; k < 5; ++k) {
          EXPECT_EQ(y.typed_data<int64_t>()[k], static_cast<int64_t>(x[k]))
              << "k=" << k;
        }
        break;
      }
      case 2: {
        std::vector<int32_t> a = {i, -i, 7, 2147483000};
        std::vector<int32_t> b = {3, 5, 7, -1000 + i};
        auto out =
            runner.RunNamed(CompareModel(), {{"a", I32(a)}, {"b", I32(b)}});
        ASSERT_TRUE(out.ok()) << out.status();
        ASSERT_EQ(out->size(), 2u);
        // Graph output order, not node order.
        EXPECT_EQ((*out)[0].first, "gt");
        EXPECT_EQ((*out)[1].first, "sum");
        const Array& gt = (*out)[0].second;
        const Array& sum = (*out)[1].second;
        ASSERT_EQ(gt.dtype(), DType::kBool);
        ASSERT_EQ(sum.dtype(), DType::kI32);
        for (int k = 0; k < 4; ++k) {
          EXPECT_EQ(gt.typed_data<uint8_t>()[k], a[k] > b[k] ? 1 : 0)
              << "k=" << k;
          EXPECT_EQ(sum.typed_data<int32_t>()[k], a[k] + b[k]) << "k=" << k;
        }
        break;
      }
    }
  }
  auto elapsed = std::chrono::steady_clock::now() - begin;
  double per_request_ms =
      std::chrono::duration<double, std::milli>(elapsed).count() / kRequests;
  std::cout << "ORT batch mode: " << kRequests << " requests, "
            << per_request_ms
            << " ms per request (including the first session load of each "
            << "model)\n";
  EXPECT_EQ(runner.process_starts(), starts_before);

  // Steady state: sessions are cached, the process is warm.
  begin = std::chrono::steady_clock::now();
  for (int i = 0; i < kRequests; ++i) {
    auto out = runner.Run(AddModel(), {{"a", F32({2, 3}, {1, 2, 3, 4, 5, 6})},
                                       {"b", F32({2, 3}, {1, 1, 1, 1, 1, 1})}});
    ASSERT_TRUE(out.ok()) << out.status();
  }
  elapsed = std::chrono::steady_clock::now() - begin;
  std::cout << "ORT batch mode, warm: "
            << std::chrono::duration<double, std::milli>(elapsed).count() /
                   kRequests
            << " ms per request\n";
}

TEST(OrtRunnerTest, EveryNpyDtypeAndZeroDimAndEmptyShapesRoundTrip) {
  OrtRunner& runner = OrtRunner::Shared();
  SKIP_IF_ORT_UNAVAILABLE(runner);
  NamedArrays inputs;
  for (size_t k = 0; k < AllDTypes().size(); ++k) {
    Array a(AllDTypes()[k].dtype, {});
    // A byte pattern that differs per dtype and is a valid value of each
    // (bool must be 0 or 1; f16 0x3C00 is 1.0).
    switch (a.dtype()) {
      case DType::kBool:
        a.data()[0] = 1;
        break;
      case DType::kF16:
        a.typed_data<uint16_t>()[0] = jaxpr::FloatToHalf(-2.5f);
        break;
      case DType::kF32:
        a.typed_data<float>()[0] = 3.25f;
        break;
      case DType::kF64:
        a.typed_data<double>()[0] = -1e300;
        break;
      default:
        for (size_t b = 0; b < a.num_bytes(); ++b) {
          a.data()[b] = static_cast<uint8_t>(0x81 + 17 * b + k);
        }
    }
    inputs.emplace_back("i" + std::to_string(k), a);
  }
  inputs.emplace_back("empty", Array(DType::kF32, {2, 0}));
  RunOptions options;
  options.graph_optimization = RunOptions::GraphOptimization::kDisabled;
  auto out = runner.RunNamed(IdentityModel(), inputs, options);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), inputs.size());
  for (size_t k = 0; k < AllDTypes().size(); ++k) {
    EXPECT_EQ((*out)[k].first, "o" + std::to_string(k));
    EXPECT_EQ((*out)[k].second, inputs[k].second)
        << "dtype " << jaxpr::ShortName(AllDTypes()[k].dtype);
  }
  EXPECT_EQ(out->back().first, "empty_out");
  EXPECT_EQ(out->back().second.shape(), (std::vector<int64_t>{2, 0}));
}

TEST(OrtRunnerTest, DisabledOptimizationGivesSameSums) {
  OrtRunner& runner = OrtRunner::Shared();
  SKIP_IF_ORT_UNAVAILABLE(runner);
  RunOptions options;
  options.graph_optimization = RunOptions::GraphOptimization::kDisabled;
  auto out = runner.Run(AddModel(),
                        {{"a", F32({2, 3}, {1, 2, 3, 4, 5, 6})},
                         {"b", F32({2, 3}, {0.5f, 0.5f, 0.5f, -4, -5, -6})}},
                        options);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], F32({2, 3}, {1.5f, 2.5f, 3.5f, 0, 0, 0}));
}

TEST(OrtRunnerTest, BadRequestsFailWithoutKillingTheProcess) {
  OrtRunner runner;
  SKIP_IF_ORT_UNAVAILABLE(runner);
  const std::string garbage = Scratch().File("garbage.onnx");
  std::ofstream(garbage) << "this is not a protobuf";

  auto bad_model = runner.Run(garbage, {{"a", F32({1}, {1})}});
  ASSERT_FALSE(bad_model.ok());
  EXPECT_EQ(bad_model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_model.status().message(), HasSubstr("garbage.onnx"));

  auto missing = runner.Run(Scratch().File("no_such_model.onnx"), {});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("no_such_model.onnx"));

  auto wrong_name =
      runner.Run(CastModel(), {{"nope", F32({5}, {1, 2, 3, 4, 5})}});
  ASSERT_FALSE(wrong_name.ok());
  EXPECT_THAT(wrong_name.status().message(), HasSubstr("nope"));

  auto missing_input =
      runner.Run(AddModel(), {{"a", F32({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_FALSE(missing_input.ok());
  EXPECT_THAT(missing_input.status().message(), HasSubstr("b"));

  auto wrong_type = runner.Run(CastModel(), {{"x", I32({1, 2, 3, 4, 5})}});
  ASSERT_FALSE(wrong_type.ok());

  auto good =
      runner.Run(CastModel(), {{"x", F32({5}, {1.5f, -1.5f, 0, 9, -9})}});
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ((*good)[0].typed_data<int64_t>()[1], -1);
  EXPECT_EQ(runner.process_starts(), 1);
}

TEST(OrtRunnerTest, RestartsOnceWhenTheProcessDies) {
  OrtRunner runner;
  SKIP_IF_ORT_UNAVAILABLE(runner);
  EXPECT_EQ(runner.process_starts(), 1);
  runner.KillProcessForTesting();
  auto out = runner.Run(CastModel(), {{"x", F32({5}, {2.9f, -2.9f, 0, 1, 2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].typed_data<int64_t>()[0], 2);
  EXPECT_EQ(runner.process_starts(), 2);
}

TEST(OrtRunnerTest, TimeoutKillsTheProcessAndTheNextRequestRestartsIt) {
  OrtRunner runner;
  SKIP_IF_ORT_UNAVAILABLE(runner);
  RunOptions hurried;
  // Expires before any answer can arrive: the request was only just sent.
  hurried.timeout = absl::Nanoseconds(1);
  auto late =
      runner.Run(CastModel(), {{"x", F32({5}, {1, 2, 3, 4, 5})}}, hurried);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(late.status().message(), HasSubstr("did not answer within"));
  auto out = runner.Run(CastModel(), {{"x", F32({5}, {7.5f, 1, 2, 3, 4})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].typed_data<int64_t>()[0], 7);
  EXPECT_EQ(runner.process_starts(), 2);
}

TEST(OrtRunnerTest, MissingNodeIsAClearError) {
  OrtRunnerOptions options;
  options.node_binary = "/nonexistent/bin/node";
  OrtRunner runner(options);
  std::string reason;
  EXPECT_FALSE(runner.IsAvailable(&reason));
  EXPECT_THAT(reason, HasSubstr("/nonexistent/bin/node"));
  auto out = runner.Run(AddModel(), {});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(OrtRunnerTest, MissingOnnxruntimeNodeSaysHowToInstall) {
  // A runner directory with the script but no node_modules.
  const fs::path dir = Scratch().File("ort_without_modules");
  fs::create_directories(dir);
  fs::copy_file(fs::path(JAX2ONNX_SOURCE_DIR) / "tools/ort/runner.js",
                dir / "runner.js", fs::copy_options::overwrite_existing);
  OrtRunnerOptions options;
  options.runner_dir = dir.string();
  OrtRunner runner(options);
  std::string reason;
  EXPECT_FALSE(runner.IsAvailable(&reason));
  // The command to run, in the directory the runner looked in (an install's
  // share/jax2onnx/ort, not the checkout's tools/ort).
  EXPECT_THAT(reason, HasSubstr("cd " + dir.string() +
                                " && npm ci --ignore-scripts"));
}

TEST(OrtRunnerTest, MissingRunnerScriptNamesThePath) {
  OrtRunnerOptions options;
  options.runner_dir = Scratch().File("no_such_dir");
  OrtRunner runner(options);
  std::string reason;
  EXPECT_FALSE(runner.IsAvailable(&reason));
  EXPECT_THAT(reason, HasSubstr("no_such_dir/runner.js"));
  EXPECT_THAT(reason, HasSubstr("JAX2ONNX_ORT_DIR"));
}

}  // namespace
}  // namespace jax2onnx::api
