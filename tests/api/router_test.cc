#include "api/router.h"

#include <cstdlib>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jax2onnx::api {
namespace {

using ::testing::HasSubstr;

TEST(RouterTest, EnvironmentWinsOverCallAndFlag) {
  EXPECT_EQ(*ResolvePipeline("1", false, false), Pipeline::kIr);
  EXPECT_EQ(*ResolvePipeline("off", true, true), Pipeline::kLegacy);
}

TEST(RouterTest, CallOptionWinsOverFlag) {
  EXPECT_EQ(*ResolvePipeline(nullptr, true, false), Pipeline::kIr);
  EXPECT_EQ(*ResolvePipeline(nullptr, false, true), Pipeline::kLegacy);
}

TEST(RouterTest, FlagWinsOverDefault) {
  EXPECT_EQ(*ResolvePipeline(nullptr, std::nullopt, true), Pipeline::kIr);
  EXPECT_EQ(*ResolvePipeline(nullptr, std::nullopt, false), Pipeline::kLegacy);
}

TEST(RouterTest, NothingSetGivesTheBuiltInDefault) {
  EXPECT_EQ(*ResolvePipeline(nullptr, std::nullopt, std::nullopt),
            kDefaultPipeline);
}

TEST(RouterTest, EnvironmentValuesAreCaseInsensitive) {
  for (const char* v : {"1", "true", "TRUE", "On", " on "}) {
    EXPECT_EQ(*ResolvePipeline(v, std::nullopt, std::nullopt), Pipeline::kIr)
        << v;
  }
  for (const char* v : {"0", "false", "False", "OFF"}) {
    EXPECT_EQ(*ResolvePipeline(v, std::nullopt, std::nullopt),
              Pipeline::kLegacy)
        << v;
  }
}

TEST(RouterTest, AnyOtherEnvironmentValueIsAnError) {
  for (const char* v : {"yes", "2", "", "ir"}) {
    auto p = ResolvePipeline(v, true, true);
    ASSERT_FALSE(p.ok()) << v;
    EXPECT_THAT(p.status().message(), HasSubstr("JAX2ONNX_USE_ONNX_IR"));
  }
}

TEST(RouterTest, ReadsTheProcessEnvironment) {
  setenv(kUseOnnxIrEnv, "true", 1);
  EXPECT_EQ(*ResolvePipelineFromEnvironment(false, false), Pipeline::kIr);
  unsetenv(kUseOnnxIrEnv);
  EXPECT_EQ(*ResolvePipelineFromEnvironment(false, true), Pipeline::kLegacy);
}

}  // namespace
}  // namespace jax2onnx::api
