#include "jaxpr/params.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jax2onnx::jaxpr {
namespace {

using ::testing::HasSubstr;

TEST(ParamsTest, TypedAccessorsReturnValues) {
  Params p;
  p.Set("axes", ParamValue::Tuple({ParamValue::Int(0), ParamValue::Int(2)}));
  p.Set("new_dtype", ParamValue::Name("float32"));
  p.Set("keepdims", ParamValue::Bool(true));
  EXPECT_EQ(*p.GetIntList("axes"), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(*p.GetDType("new_dtype"), DType::kF32);
  EXPECT_TRUE(*p.GetBool("keepdims"));
}

TEST(ParamsTest, WrongTypeErrorNamesTheParamAndWhatItHolds) {
  Params p;
  p.Set("axes", ParamValue::None());
  auto v = p.GetIntList("axes");
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("param 'axes'"));
  EXPECT_THAT(v.status().message(), HasSubstr("None"));
  auto missing = p.GetInt("dimension");
  EXPECT_THAT(missing.status().message(),
              HasSubstr("missing param 'dimension'"));
}

TEST(ParamsTest, ReprsMatchPython) {
  EXPECT_EQ(ParamValue::Tuple({ParamValue::Int(1)}).ToString(), "(1,)");
  EXPECT_EQ(ParamValue::Tuple({}).ToString(), "()");
  EXPECT_EQ(ParamValue::Float(1e-5).ToString(), "1e-05");
  EXPECT_EQ(ParamValue::Float(2).ToString(), "2.0");
  EXPECT_EQ(ParamValue::Call(
                "GatherDimensionNumbers",
                {{"offset_dims", ParamValue::Tuple({ParamValue::Int(1)})}})
                .ToString(),
            "GatherDimensionNumbers(offset_dims=(1,))");
}

}  // namespace
}  // namespace jax2onnx::jaxpr
