// Issue 24's adversarial inputs to the parser: literals that do not fit
// their dtype, terminal escapes inside tokens and in echoed source lines,
// and inputs that are not regular files or exceed the byte limit.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/literal_value.h"
#include "jaxpr/text/parser.h"

namespace jax2onnx::jaxpr {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Program(const std::string& dtype, const std::string& literal) {
  return absl::StrCat("{ lambda ; a:", dtype, "[]. let\n    b:", dtype,
                      "[] = add a ", literal, "\n  in (b,) }\n");
}

// JAX prints a literal from a value of its dtype; one that does not fit
// (which used to wrap: 300:u8[] stored 44) is an error at the literal.
TEST(LiteralRangeTest, LiteralsThatDoNotFitTheirDtypeAreLocatedErrors) {
  struct Case {
    const char* dtype;
    const char* literal;
  };
  for (const Case& c : {Case{"u8", "300:u8[]"}, Case{"u32", "-1:u32[]"},
                        Case{"i32", "4294967296:i32[]"},
                        Case{"i8", "-129:i8[]"}, Case{"i64",
                                                      "9223372036854775808:i64[]"},
                        Case{"bool", "2:bool[]"}, Case{"i32", "1.5:i32[]"},
                        Case{"u16", "65536:u16[]"}}) {
    auto file = ParseJaxprText(Program(c.dtype, c.literal), "x.jaxpr");
    ASSERT_FALSE(file.ok()) << c.literal;
    EXPECT_THAT(std::string(file.status().message()),
                HasSubstr("x.jaxpr:2:"))
        << file.status();
    EXPECT_THAT(std::string(file.status().message()),
                HasSubstr(absl::StrCat(": error: literal '",
                                       std::string(c.literal).substr(
                                           0, std::string(c.literal).find(':')),
                                       "'")))
        << file.status();
    EXPECT_THAT(std::string(file.status().message()),
                HasSubstr(absl::StrCat("does not fit its dtype ", c.dtype)))
        << file.status();
  }
}

TEST(LiteralRangeTest, ExtremesThatFitAreAccepted) {
  struct Case {
    const char* dtype;
    const char* literal;
  };
  for (const Case& c :
       {Case{"u8", "255:u8[]"}, Case{"i8", "-128:i8[]"},
        Case{"u32", "4294967295:u32[]"}, Case{"i32", "-2147483648:i32[]"},
        Case{"u64", "18446744073709551615:u64[]"},
        Case{"i64", "-9223372036854775808:i64[]"}, Case{"bool", "1:bool[]"},
        Case{"f32", "3.4028234663852886e+38:f32[]"}, Case{"f16", "65504.0:f16[]"},
        Case{"f32", "inf:f32[]"}, Case{"f32", "-inf:f32[]"},
        Case{"f32", "nan:f32[]"}, Case{"f64", "1e300:f64[]"}}) {
    auto file = ParseJaxprText(Program(c.dtype, c.literal), "x.jaxpr");
    EXPECT_TRUE(file.ok()) << c.literal << ": " << file.status();
  }
}

// A float literal past its dtype's largest finite value rounds as numpy and
// ml_dtypes round it when JAX makes the array: JAX's bf16 promotion prints
// f32's lowest value -3.4028234663852886e+38 (= -(2 - 2^-23) * 2^127), which
// lies past bf16's rounding threshold -(2 - 2^-9) * 2^127 and so becomes
// -inf (np.float32(-3.4028234663852886e38).astype(ml_dtypes.bfloat16) is
// -inf); 65520 is f16's threshold (65504 + half an ulp of 32, a tie that
// rounds to the even side, infinity); 1e39 is past f32's.
TEST(LiteralRangeTest, FloatLiteralsThatOverflowRoundToInfinity) {
  struct Case {
    const char* dtype;
    const char* literal;
    double expected;
  };
  const double inf = std::numeric_limits<double>::infinity();
  for (const Case& c :
       {Case{"bf16", "-3.4028234663852886e+38:bf16[]", -inf},
        Case{"f32", "1e39:f32[]", inf}, Case{"f16", "65520.0:f16[]", inf},
        Case{"f16", "-65520.0:f16[]", -inf},
        // Just under the f16 threshold: the largest finite value.
        Case{"f16", "65519.0:f16[]", 65504.0}}) {
    auto file = ParseJaxprText(Program(c.dtype, c.literal), "x.jaxpr");
    ASSERT_TRUE(file.ok()) << c.literal << ": " << file.status();
    const Eqn& eqn = file->main->eqns[0];
    ASSERT_TRUE(eqn.inputs[1].is_literal());
    auto value = LiteralValue(*eqn.inputs[1].literal, &eqn, nullptr);
    ASSERT_TRUE(value.ok()) << value.status();
    EXPECT_EQ(value->GetAsDouble(0), c.expected) << c.literal;
  }
}

// A colour sequence between tokens (a coloured terminal copy) is dropped;
// one inside a token is an error, not silently joined.
TEST(TerminalEscapeTest, EscapeInsideATokenIsAnError) {
  const std::string between =
      "{ lambda ; a:f32[3]. let\n    \x1b[34mb\x1b[0m:f32[3] = neg a\n  in "
      "(b,) }\n";
  EXPECT_TRUE(ParseJaxprText(between, "x.jaxpr").ok());
  const std::string inside =
      "{ lambda ; a:f32[3]. let\n    b:f32[3] = n\x1b[8meg a\n  in (b,) }\n";
  auto file = ParseJaxprText(inside, "x.jaxpr");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(std::string(file.status().message()),
              HasSubstr("x.jaxpr:2:17: error: terminal escape sequence"));
}

// Control characters are echoed as \xNN, never raw, and the caret stays
// under the offending column.
TEST(TerminalEscapeTest, EchoedSourceLineEscapesControlCharacters) {
  const std::string text =
      "{ lambda ; a:f32[3]. let\n    b:f32[3] = neg a \x07 \x1b(B ?\n  in "
      "(b,) }\n";
  auto file = ParseJaxprText(text, "x.jaxpr");
  ASSERT_FALSE(file.ok());
  const std::string message(file.status().message());
  EXPECT_THAT(message, Not(HasSubstr("\x1b")));
  EXPECT_THAT(message, Not(HasSubstr("\x07")));
  EXPECT_THAT(message, HasSubstr("\\x07"));
}

// Both binders at their own positions (they were both reported at 1:1).
TEST(DuplicateBinderTest, LambdaBindersAreReportedAtTheirOwnPositions) {
  auto file = ParseJaxprText(
      "{ lambda a:f32[2]; b:f32[2]\n    a:f32[2]. let c:f32[2] = add a b in "
      "(c,) }",
      "x.jaxpr");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(std::string(file.status().message()),
              HasSubstr("x.jaxpr:2:5: error: duplicate binder 'a' (first "
                        "bound at x.jaxpr:1:10)"));
  // Shadowing an outer name inside a nested jaxpr is not a duplicate.
  EXPECT_TRUE(ParseJaxprText(R"({ lambda ; a:f32[2]. let
    b:f32[2] = pjit[
      name=f
      jaxpr={ lambda ; a:f32[2]. let c:f32[2] = neg a in (c,) }
    ] a
  in (b,) })",
                             "y.jaxpr")
                  .ok());
}

class FileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("adversarial_input_",
                        ::testing::UnitTest::GetInstance()
                            ->current_test_info()
                            ->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  std::filesystem::path dir_;
};

// /dev/zero used to be read until memory ran out: a non-regular input is
// read only up to the byte limit.
TEST_F(FileInputTest, DevZeroIsReadOnlyUpToTheLimit) {
  ParseOptions options;
  options.max_input_bytes = 1 << 20;
  const auto start = std::chrono::steady_clock::now();
  auto file = ParseJaxprFile("/dev/zero", options);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(file.status().message()),
              HasSubstr("more than 1048576 bytes"));
  // Generous: reading 1 MiB takes milliseconds, reading forever never ends.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

// A regular file over the limit is refused from its size (fstat), before
// any byte is read: a sparse file of 1 TiB is refused instantly.
TEST_F(FileInputTest, OversizedRegularFileIsRefusedBeforeReading) {
  const std::string path = (dir_ / "huge.jaxpr").string();
  {
    std::ofstream out(path);
  }
  ASSERT_EQ(::truncate(path.c_str(), int64_t{1} << 40), 0);
  auto file = ParseJaxprFile(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(file.status().message()),
              HasSubstr("the file is 1099511627776 bytes, over the limit"));
}

TEST_F(FileInputTest, DirectoryAndMissingFileHavePreciseMessages) {
  auto dir = ParseJaxprFile(dir_.string());
  ASSERT_FALSE(dir.ok());
  EXPECT_THAT(std::string(dir.status().message()), HasSubstr("is a directory"));
  auto missing = ParseJaxprFile((dir_ / "none.jaxpr").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace jax2onnx::jaxpr
