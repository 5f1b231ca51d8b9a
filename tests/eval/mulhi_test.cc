// Hand-derived unit tests of the interpreter's mulhi kernel (the high half
// of the double-width product, jax.lax.mulhi), every width.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::jax2onnx::jaxpr::testing::EvalText;
using ::jax2onnx::jaxpr::testing::MakeIntArray;
using ::jax2onnx::jaxpr::testing::ToInts;
using ::testing::ElementsAre;

std::vector<int64_t> Mulhi(const std::string& t, std::vector<int64_t> a,
                           std::vector<int64_t> b, DType d) {
  const std::string n = std::to_string(a.size());
  auto out = EvalText("{ lambda ; a:" + t + "[" + n + "] b:" + t + "[" + n +
                          "]. let c:" + t + "[" + n + "] = mulhi a b in (c,) }",
                      {MakeIntArray(d, {static_cast<int64_t>(a.size())}, a),
                       MakeIntArray(d, {static_cast<int64_t>(b.size())}, b)});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? ToInts((*out)[0]) : std::vector<int64_t>{};
}

TEST(MulhiTest, EightAndSixteenBit) {
  // i8: 100*100 = 10000 = 0x2710 -> 0x27 = 39; -100*100 = -10000,
  // floor(-10000 / 256) = floor(-39.06) = -40; -1 * 1 = -1 -> floor(-1/256)
  // = -1.
  EXPECT_THAT(Mulhi("i8", {100, -100, -1}, {100, 100, 1}, DType::kI8),
              ElementsAre(39, -40, -1));
  // u8: 255*255 = 65025 = 0xFE01 -> 0xFE = 254; 16*16 = 256 -> 1.
  EXPECT_THAT(Mulhi("u8", {255, 16}, {255, 16}, DType::kU8),
              ElementsAre(254, 1));
  // i16: -32768 * -32768 = 2^30 -> 2^30 / 2^16 = 16384.
  EXPECT_THAT(Mulhi("i16", {-32768}, {-32768}, DType::kI16),
              ElementsAre(16384));
  // u16: 65535^2 = 2^32 - 2^17 + 1 -> 2^16 - 2 = 65534.
  EXPECT_THAT(Mulhi("u16", {65535}, {65535}, DType::kU16), ElementsAre(65534));
}

TEST(MulhiTest, ThirtyTwoAndSixtyFourBit) {
  // i32: (2^31 - 1)^2 = 2^62 - 2^32 + 1 -> 2^30 - 1 = 1073741823.
  EXPECT_THAT(Mulhi("i32", {2147483647}, {2147483647}, DType::kI32),
              ElementsAre(1073741823));
  // u32: (2^32 - 1)^2 = 2^64 - 2^33 + 1 -> 2^32 - 2 = 4294967294.
  EXPECT_THAT(Mulhi("u32", {4294967295}, {4294967295}, DType::kU32),
              ElementsAre(4294967294));
  // i64: 2^62 * 4 = 2^64 -> 1; 2^62 * -4 = -2^64 -> -1; -1 * 1 -> -1.
  EXPECT_THAT(Mulhi("i64", {int64_t{1} << 62, int64_t{1} << 62, -1}, {4, -4, 1},
                    DType::kI64),
              ElementsAre(1, -1, -1));
  // u64: (2^64 - 1)^2 = 2^128 - 2^65 + 1 -> 2^64 - 2 (bit pattern -2);
  // 2^63 * 2 = 2^64 -> 1.
  EXPECT_THAT(Mulhi("u64", {-1, std::numeric_limits<int64_t>::min()}, {-1, 2},
                    DType::kU64),
              ElementsAre(-2, 1));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
