// The public API (jax2onnx/jax2onnx.h) on its own terms: the opaque Bundle,
// the in-memory entry point and the switch that ignores the environment.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/convert_internal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/serde.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/io/npy.h"
#include "tests/ort_accepts.h"
#include "tests/scoped_env.h"

namespace jax2onnx {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// y = x * w + literal, with a constvar and an elided literal: both kinds of
// arrays a bundle's npz carries.
constexpr char kProgram[] =
    "{ lambda a:f32[3]; b:f32[3]. let\n"
    "    c:f32[3] = mul b a\n"
    "    d:f32[3] = add c [...]:f32[3]\n"
    "  in (d,) }\n";

NamedArray F32Array(const std::string& name, std::vector<float> values) {
  NamedArray a{name, "f32", {static_cast<int64_t>(values.size())}, ""};
  a.bytes.resize(values.size() * sizeof(float));
  std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}

jaxpr::Array ToInternal(const NamedArray& a) {
  jaxpr::Array out(jaxpr::DType::kF32, a.shape);
  std::memcpy(out.data(), a.bytes.data(), a.bytes.size());
  return out;
}

using testing_util::ScopedEnv;

TEST(PublicApiTest, InMemoryConversionEqualsTheConversionOfTheSameFiles) {
  const NamedArray weight = F32Array("const_0", {1.5f, -2.0f, 0.25f});
  const NamedArray literal = F32Array("literal_0", {0.0f, 1.0f, -1.0f});
  ConvertOptions options;
  options.read_environment = false;
  auto in_memory = ToOnnxFromText(kProgram, {weight, literal}, options);
  ASSERT_TRUE(in_memory.ok()) << in_memory.status();

  // The oracle: the same program and arrays written as a bundle on disk.
  const fs::path dir = fs::path(::testing::TempDir()) / "public_api_files";
  fs::create_directories(dir);
  // Named like the in-memory bundle ("bundle"): the IR graph takes the
  // bundle's name.
  std::ofstream((dir / "bundle.jaxpr").string()) << kProgram;
  ASSERT_TRUE(jaxpr::WriteNpzFile((dir / "bundle.npz").string(),
                                  {{"const_0", ToInternal(weight)},
                                   {"literal_0", ToInternal(literal)}})
                  .ok());
  auto bundle = LoadBundle((dir / "bundle.jaxpr").string());
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  EXPECT_EQ(bundle->name(), "bundle");
  EXPECT_EQ(bundle->num_inputs(), 1);
  EXPECT_EQ(bundle->num_outputs(), 1);
  auto from_files = ToOnnx(*bundle, options);
  ASSERT_TRUE(from_files.ok()) << from_files.status();
  EXPECT_ORT_ACCEPTS(*from_files);
  EXPECT_EQ(ir::SerializeDeterministic(*in_memory),
            ir::SerializeDeterministic(*from_files));
  // The weight's bytes reach the model unchanged.
  bool found = false;
  for (const auto& init : in_memory->graph().initializer()) {
    if (init.raw_data() == weight.bytes) found = true;
  }
  EXPECT_TRUE(found) << "no initializer holds const_0's bytes";
}

TEST(PublicApiTest, InMemoryArraysAreValidatedLikeAnNpz) {
  const NamedArray literal = F32Array("literal_0", {0, 1, 2});
  auto missing = BundleFromText(kProgram, {literal}, "mine");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("const_0"));

  NamedArray short_bytes = F32Array("const_0", {1, 2, 3});
  short_bytes.bytes.pop_back();
  auto wrong_size = BundleFromText(kProgram, {short_bytes, literal});
  ASSERT_FALSE(wrong_size.ok());
  EXPECT_THAT(wrong_size.status().message(),
              HasSubstr("f32[3] needs 12 bytes, got 11"));

  NamedArray bad_dtype = F32Array("const_0", {1, 2, 3});
  bad_dtype.dtype = "float33";
  auto unknown = BundleFromText(kProgram, {bad_dtype, literal});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("'float33'"));

  NamedArray wrong_shape = F32Array("const_0", {1, 2});
  auto mismatch = BundleFromText(kProgram, {wrong_shape, literal});
  ASSERT_FALSE(mismatch.ok());
}

TEST(PublicApiTest, ParseErrorsOfTextNameTheGivenName) {
  auto bundle =
      BundleFromText("{ lambda ; a:f32[3]. let\n  in (b,) }", {}, "broken");
  ASSERT_FALSE(bundle.ok());
  EXPECT_THAT(bundle.status().message(), HasSubstr("broken.jaxpr:2:"));
}

TEST(PublicApiTest, EnvironmentOverridesTheOptionsUnlessSwitchedOff) {
  const NamedArray weight = F32Array("const_0", {1, 2, 3});
  const NamedArray literal = F32Array("literal_0", {0, 1, 2});
  auto bundle = BundleFromText(kProgram, {weight, literal});
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  const jaxpr::Bundle& internal = api::BundleAccess::Get(*bundle);
  ConvertOptions defaults;
  defaults.read_environment = false;
  auto legacy =
      api::ConvertWithPipeline(api::Pipeline::kLegacy, internal, defaults);
  auto ir = api::ConvertWithPipeline(api::Pipeline::kIr, internal, defaults);
  ASSERT_TRUE(legacy.ok() && ir.ok());
  EXPECT_ORT_ACCEPTS(*legacy);
  EXPECT_ORT_ACCEPTS(*ir);
  ASSERT_NE(ir::SerializeDeterministic(*legacy),
            ir::SerializeDeterministic(*ir))
      << "the pipelines must differ here for the test to tell them apart";

  ScopedEnv env;
  env.Set("JAX2ONNX_USE_ONNX_IR", "0");
  ConvertOptions ir_please;
  ir_please.use_onnx_ir = true;
  // Read: the environment wins over the option.
  auto routed = ToOnnx(*bundle, ir_please);
  ASSERT_TRUE(routed.ok()) << routed.status();
  EXPECT_EQ(ir::SerializeDeterministic(*routed),
            ir::SerializeDeterministic(*legacy));
  // Ignored: the option decides.
  ir_please.read_environment = false;
  auto chosen = ToOnnx(*bundle, ir_please);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_EQ(ir::SerializeDeterministic(*chosen),
            ir::SerializeDeterministic(*ir));

  // Invalid values are errors only when the environment is read.
  env.Set("JAX2ONNX_USE_ONNX_IR", "maybe");
  env.Set("JAX2ONNX_SHADOW_COMPARE", "sometimes");
  ConvertOptions read;
  EXPECT_EQ(ToOnnx(*bundle, read).status().code(),
            absl::StatusCode::kInvalidArgument);
  ConvertOptions ignore;
  ignore.read_environment = false;
  EXPECT_TRUE(ToOnnx(*bundle, ignore).ok());
}

TEST(PublicApiTest, VersionIsTheProjectVersion) {
  EXPECT_STREQ(Version(), JAX2ONNX_VERSION);
}

}  // namespace
}  // namespace jax2onnx
