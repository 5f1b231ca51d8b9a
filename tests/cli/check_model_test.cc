// `check MODEL.onnx BUNDLE` checks the model file as shipped: converted with
// external data, renamed inputs, NCHW adapters, a model-local function and
// opset 17, the file passes against the bundle's expected_i; the same file
// with one weight changed in its sidecar, or with a node appended that adds
// a constant to the output, fails with the planted error in the report.
// Also `check --seed` and `check --inputs` on a perturbed model file: the
// inputs they choose are used and reported, with the planted error.
//
// Hand derivations (all values exact in f32):
//   nchw bundle: const a = 0.5 everywhere, input b[i] = 1.5 + (i % 8) / 4,
//   c = a + b, expected_0 = b + 0.5 >= 2. Planting a[0] = 0.5 + 2^-8 in the
//   sidecar makes c[0] = 2 + 2^-8 against expected 2: max_abs = 2^-8,
//   max_rel = 2^-8 / 2 = 2^-9 (every other element exact).
//   add bundle: c = a + b on f32[4]; the appended node adds 2^-10 to every
//   element of c. On the bundle's inputs a = [1, 2, 0.5, -4],
//   b = [1, 0, 0.25, 0] the sums are [2, 2, 0.75, -4] and stay exact after
//   adding 2^-10: max_abs = 2^-10, max_rel = 2^-10 / 0.75.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/npy.h"
#include "nlohmann/json.hpp"
#include "onnx/onnx_pb.h"
#include "tests/cli_fixture.h"

namespace jax2onnx::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

jaxpr::Array F32(std::vector<int64_t> shape, const std::vector<double>& v) {
  jaxpr::Array a(jaxpr::DType::kF32, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) a.SetFromDouble(i, v[i]);
  return a;
}

void ExpectTwoDigits(double got, double want) {
  EXPECT_NEAR(got, want, 0.005 * std::fabs(want)) << "want " << want;
}

onnx::ModelProto ReadModel(const std::string& path) {
  onnx::ModelProto model;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(model.ParseFromIstream(&in)) << path;
  return model;
}

void WriteModel(const onnx::ModelProto& model, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  ASSERT_TRUE(model.SerializeToOstream(&out)) << path;
}

class CheckModelTest : public testing_util::CliFixture {
 protected:
  CheckModelTest() : CliFixture("check_model_test_") {}
  void TearDown() override { fs::remove_all(dir_); }

  // f32[1,2,2,64] = 256 elements (1 KiB: --external_data=always moves it).
  std::string WriteNchwBundle() {
    const std::string jaxpr = P("shifted.jaxpr");
    std::ofstream(jaxpr)
        << "# input_names: img\n"
           "{ lambda a:f32[1,2,2,64]; b:f32[1,2,2,64]. let\n"
           "    c:f32[1,2,2,64] = pjit[\n"
           "      name=shift\n"
           "      jaxpr={ lambda ; x:f32[1,2,2,64] y:f32[1,2,2,64]. let\n"
           "          z:f32[1,2,2,64] = add x y in (z,) }\n"
           "    ] a b\n"
           "  in (c,) }\n";
    std::vector<double> a(256, 0.5), b(256), expected(256);
    for (int i = 0; i < 256; ++i) {
      b[i] = 1.5 + (i % 8) * 0.25;
      expected[i] = b[i] + 0.5;
    }
    const absl::Status written = jaxpr::WriteNpzFile(
        P("shifted.npz"), {{"const_0", F32({1, 2, 2, 64}, a)},
                           {"input_0", F32({1, 2, 2, 64}, b)},
                           {"expected_0", F32({1, 2, 2, 64}, expected)}});
    EXPECT_TRUE(written.ok()) << written;
    return jaxpr;
  }

  std::string WriteAddBundle() {
    const std::string jaxpr = P("add.jaxpr");
    std::ofstream(jaxpr) << "{ lambda ; a:f32[4] b:f32[4]. let\n"
                            "    c:f32[4] = add a b\n"
                            "  in (c,) }\n";
    const absl::Status written = jaxpr::WriteNpzFile(
        P("add.npz"), {{"input_0", F32({4}, {1, 2, 0.5, -4})},
                       {"input_1", F32({4}, {1, 0, 0.25, 0})},
                       {"expected_0", F32({4}, {2, 2, 0.75, -4})}});
    EXPECT_TRUE(written.ok()) << written;
    return jaxpr;
  }

  // The converted add model with `Add(c, 2^-10)` appended before out_0.
  std::string PerturbedAddModel(const std::string& bundle) {
    const std::string path = P("add.onnx");
    const testing_util::ShellResult r = Sh(absl::StrCat(
        binary_, " convert ", bundle, " -o ", path, " 2>", P("err.txt")));
    EXPECT_EQ(r.exit_code, 0) << CheckErr();
    onnx::ModelProto model = ReadModel(path);
    onnx::GraphProto* g = model.mutable_graph();
    const std::string out = g->output(0).name();
    for (onnx::NodeProto& n : *g->mutable_node()) {
      for (std::string& o : *n.mutable_output()) {
        if (o == out) o = "planted_pre";
      }
    }
    onnx::TensorProto* delta = g->add_initializer();
    delta->set_name("planted_delta");
    delta->set_data_type(onnx::TensorProto::FLOAT);
    delta->add_float_data(std::ldexp(1.0f, -10));
    onnx::NodeProto* add = g->add_node();
    add->set_op_type("Add");
    add->set_name("planted_add");
    add->add_input("planted_pre");
    add->add_input("planted_delta");
    add->add_output(out);
    WriteModel(model, path);
    return path;
  }

  testing_util::ShellResult Sh(const std::string& command) {
    return testing_util::RunShell(command);
  }
};

TEST_F(CheckModelTest,
       ShippedModelWithEveryOptionPassesAndAPlantedWeightFails) {
  const std::string bundle = WriteNchwBundle();
  const std::string model = P("shifted.onnx");
  testing_util::ShellResult r = Sh(absl::StrCat(
      binary_, " convert ", bundle, " -o ", model,
      " --external_data=always --inputs_as_nchw=0 --outputs_as_nchw=0"
      " --functions=shift --opset 17 2>",
      P("err.txt")));
  ASSERT_EQ(r.exit_code, 0) << CheckErr();
  // The file is what the options say: input `img` channels-first, a
  // model-local function, opset 17, the weight in the sidecar.
  const onnx::ModelProto proto = ReadModel(model);
  ASSERT_EQ(proto.graph().input_size(), 1);
  EXPECT_EQ(proto.graph().input(0).name(), "img");
  const auto& dims = proto.graph().input(0).type().tensor_type().shape().dim();
  ASSERT_EQ(dims.size(), 4);
  EXPECT_EQ(dims[1].dim_value(), 64);
  EXPECT_EQ(proto.functions_size(), 1);
  EXPECT_EQ(proto.opset_import(0).version(), 17);
  ASSERT_TRUE(fs::exists(model + ".data"));

  r = RunCheck(absl::StrCat("--json ", model, " ", bundle));
  if (CheckFoundNoOrt(r)) GTEST_SKIP() << CheckErr();
  ASSERT_EQ(r.exit_code, 0) << r.output << CheckErr();
  nlohmann::json doc = nlohmann::json::parse(r.output);
  EXPECT_EQ(doc[0]["model"], model);
  EXPECT_EQ(doc[0]["oracle"], "expected");
  EXPECT_EQ(doc[0]["inputs"], "bundle");
  EXPECT_EQ(doc[0]["outputs"][0]["max_abs_error"].get<double>(), 0.0);

  // Plant a[0] = 0.5 + 2^-8 in the sidecar (its only tensor).
  ASSERT_EQ(proto.graph().initializer_size(), 1);
  int64_t offset = 0;
  for (const auto& e : proto.graph().initializer(0).external_data()) {
    if (e.key() == "offset") offset = std::stoll(e.value());
  }
  {
    std::fstream data(model + ".data",
                      std::ios::binary | std::ios::in | std::ios::out);
    data.seekp(offset);
    const float planted = 0.5f + std::ldexp(1.0f, -8);
    data.write(reinterpret_cast<const char*>(&planted), sizeof planted);
  }
  r = RunCheck(absl::StrCat("--json ", model, " ", bundle));
  EXPECT_EQ(r.exit_code, 1) << r.output << CheckErr();
  doc = nlohmann::json::parse(r.output);
  EXPECT_EQ(doc[0]["passed"], false);
  const nlohmann::json& out = doc[0]["outputs"][0];
  EXPECT_EQ(out["ok"], false);
  ExpectTwoDigits(out["max_abs_error"].get<double>(), std::ldexp(1.0, -8));
  ExpectTwoDigits(out["max_rel_error"].get<double>(), std::ldexp(1.0, -9));
}

TEST_F(CheckModelTest, InputsAreFedByTheGivenOrRecordedNames) {
  const std::string bundle = WriteNchwBundle();
  const std::string model = P("renamed.onnx");
  testing_util::ShellResult r =
      Sh(absl::StrCat(binary_, " convert ", bundle, " -o ", model,
                      " --input_names=q --output_names=y 2>", P("err.txt")));
  ASSERT_EQ(r.exit_code, 0) << CheckErr();
  // The bundle's header records `img`, which this model does not have.
  r = RunCheck(absl::StrCat(model, " ", bundle));
  if (CheckFoundNoOrt(r)) GTEST_SKIP() << CheckErr();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("no input named 'img'"));
  r = RunCheck(
      absl::StrCat("--input_names=q --output_names=y ", model, " ", bundle));
  EXPECT_EQ(r.exit_code, 0) << r.output << CheckErr();
  EXPECT_THAT(r.output, HasSubstr("PASS"));
}

TEST_F(CheckModelTest, AppendedNodeFailsWithThePlantedError) {
  const std::string bundle = WriteAddBundle();
  const std::string model = PerturbedAddModel(bundle);
  const testing_util::ShellResult r =
      RunCheck(absl::StrCat("--json ", model, " ", bundle));
  if (CheckFoundNoOrt(r)) GTEST_SKIP() << CheckErr();
  EXPECT_EQ(r.exit_code, 1) << r.output << CheckErr();
  const nlohmann::json out = nlohmann::json::parse(r.output)[0]["outputs"][0];
  ExpectTwoDigits(out["max_abs_error"].get<double>(), std::ldexp(1.0, -10));
  ExpectTwoDigits(out["max_rel_error"].get<double>(),
                  std::ldexp(1.0, -10) / 0.75);
  EXPECT_EQ(out["tolerance_source"], "default");
}

TEST_F(CheckModelTest, SeedChecksOnRandomInputsAgainstTheInterpreter) {
  const std::string bundle = WriteAddBundle();
  const std::string model = PerturbedAddModel(bundle);
  const testing_util::ShellResult r =
      RunCheck(absl::StrCat("--json --seed 7 ", model, " ", bundle));
  if (CheckFoundNoOrt(r)) GTEST_SKIP() << CheckErr();
  EXPECT_EQ(r.exit_code, 1) << r.output << CheckErr();
  const nlohmann::json doc = nlohmann::json::parse(r.output);
  EXPECT_EQ(doc[0]["inputs"], "random (seed 7)");
  EXPECT_EQ(doc[0]["oracle"], "interpreter");
  // Random f32 sums in [-4, 4] plus 2^-10 round by at most 2^-23.
  EXPECT_NEAR(doc[0]["outputs"][0]["max_abs_error"].get<double>(),
              std::ldexp(1.0, -10), std::ldexp(1.0, -22));
}

TEST_F(CheckModelTest, InputsNpzReplacesTheBundleInputs) {
  const std::string bundle = WriteAddBundle();
  const std::string model = PerturbedAddModel(bundle);
  // Sums [8, -0.5, 1, 3]: the smallest |sum| is 0.5, so max_rel = 2^-9.
  ASSERT_TRUE(jaxpr::WriteNpzFile(P("other.npz"),
                                  {{"input_0", F32({4}, {4, -1, 0.5, 1})},
                                   {"input_1", F32({4}, {4, 0.5, 0.5, 2})}})
                  .ok());
  const testing_util::ShellResult r = RunCheck(absl::StrCat(
      "--json --inputs ", P("other.npz"), " ", model, " ", bundle));
  if (CheckFoundNoOrt(r)) GTEST_SKIP() << CheckErr();
  EXPECT_EQ(r.exit_code, 1) << r.output << CheckErr();
  const nlohmann::json doc = nlohmann::json::parse(r.output);
  EXPECT_EQ(doc[0]["inputs"], P("other.npz"));
  EXPECT_EQ(doc[0]["oracle"], "interpreter");
  const nlohmann::json& out = doc[0]["outputs"][0];
  ExpectTwoDigits(out["max_abs_error"].get<double>(), std::ldexp(1.0, -10));
  ExpectTwoDigits(out["max_rel_error"].get<double>(), std::ldexp(1.0, -9));
}

TEST_F(CheckModelTest, MissingModelFileIsAUsageError) {
  const testing_util::ShellResult r =
      RunCheck(absl::StrCat(P("nope.onnx"), " ", WriteAddBundle()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(CheckErr(), HasSubstr("jax2onnx check: no such file"));
}

}  // namespace
}  // namespace jax2onnx::cli
