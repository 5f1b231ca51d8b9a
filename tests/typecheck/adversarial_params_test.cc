// Issue 24: values no JAX prints are refused, not silently accepted.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/text/parser.h"
#include "jaxpr/typecheck/typecheck.h"

namespace jax2onnx::jaxpr::typecheck {
namespace {

using ::testing::HasSubstr;

absl::Status Check(const std::string& text) {
  auto file = ParseJaxprText(text, "t.jaxpr");
  if (!file.ok()) return file.status();
  return TypeCheckFile(*file);
}

TEST(AdversarialParamsTest, WeakTypeMustBeABool) {
  const absl::Status two = Check(
      "{ lambda ; a:i32[2]. let\n"
      "    b:f32[2] = convert_element_type[new_dtype=float32 weak_type=2] a\n"
      "  in (b,) }");
  ASSERT_FALSE(two.ok());
  EXPECT_THAT(std::string(two.message()), HasSubstr("t.jaxpr:2:"));
  EXPECT_THAT(std::string(two.message()), HasSubstr("weak_type"));
  for (const char* ok : {"True", "False"}) {
    EXPECT_TRUE(Check(std::string("{ lambda ; a:i32[2]. let\n"
                                  "    b:f32[2] = convert_element_type["
                                  "new_dtype=float32 weak_type=") +
                      ok + "] a\n  in (b,) }")
                    .ok())
        << ok;
  }
}

// A program with no outputs converted to "0 nodes" that ONNX Runtime cannot
// load; it is refused with a message that says why.
TEST(AdversarialParamsTest, ProgramWithoutOutputsIsRefused) {
  auto model =
      ToOnnxFromText("{ lambda ; a:f32[2]. let b:f32[2] = neg a in () }", {});
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(std::string(model.status().message()),
              HasSubstr("the program has no outputs"));
}

}  // namespace
}  // namespace jax2onnx::jaxpr::typecheck
