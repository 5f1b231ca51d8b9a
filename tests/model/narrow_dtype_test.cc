// The narrow-dtype codec (jaxpr/narrow_dtype.h) against
// testdata/dtypes/narrow_float_vectors.txt, written by
// scripts/narrow_float_reference.py: a table-lookup implementation of each
// format (nearest finite value, ties to the even code) with ml_dtypes 0.6's
// rules for overflow, NaN, infinity and zero, independent of the codec's
// arithmetic rounding.
#include "jaxpr/narrow_dtype.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace jax2onnx::jaxpr {
namespace {

std::string VectorsPath() {
  return std::string(JAX2ONNX_SOURCE_DIR) +
         "/testdata/dtypes/narrow_float_vectors.txt";
}

float FloatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

TEST(NarrowDTypeTest, NamesResolveInBothSpellings) {
  ASSERT_NE(FindNarrowFormat("f8_e4m3fn"), nullptr);
  EXPECT_EQ(FindNarrowFormat("float8_e4m3fn"), FindNarrowFormat("f8_e4m3fn"));
  EXPECT_EQ(FindNarrowFormat("uint2")->format, NarrowFormat::kU2);
  EXPECT_EQ(FindNarrowFormat("f4_e2m1fn")->bits, 4);
  EXPECT_EQ(FindNarrowFormat("f8_e4m3fnz"), nullptr);
  EXPECT_EQ(FindNarrowFormat("f32"), nullptr);
}

TEST(NarrowDTypeTest, OnnxTypesAndFirstOpsets) {
  // onnx.proto TensorProto.DataType; Cast-19/21/23/24/25 in the operator
  // changelog. ONNX has no e4m3 (IEEE), e3m4, e4m3b11fnuz or f6 type.
  const std::map<std::string, std::pair<int, int>> expected = {
      {"f8_e4m3fn", {17, 19}},  {"f8_e4m3fnuz", {18, 19}},
      {"f8_e5m2", {19, 19}},    {"f8_e5m2fnuz", {20, 19}},
      {"u4", {21, 21}},         {"i4", {22, 21}},
      {"f4_e2m1fn", {23, 23}},  {"f8_e8m0fnu", {24, 24}},
      {"u2", {25, 25}},         {"i2", {26, 25}},
      {"f8_e4m3", {0, 0}},      {"f8_e3m4", {0, 0}},
      {"f8_e4m3b11fnuz", {0, 0}}, {"f6_e2m3fn", {0, 0}},
      {"f6_e3m2fn", {0, 0}},
  };
  EXPECT_EQ(AllNarrowFormats().size(), expected.size());
  for (const NarrowFormatInfo& f : AllNarrowFormats()) {
    auto it = expected.find(std::string(f.short_name));
    ASSERT_NE(it, expected.end()) << f.short_name;
    EXPECT_EQ(f.onnx_type, it->second.first) << f.short_name;
    EXPECT_EQ(f.onnx_min_opset, it->second.second) << f.short_name;
  }
}

TEST(NarrowDTypeTest, MatchesTheNumpyReferenceOnEveryVector) {
  std::ifstream in(VectorsPath());
  ASSERT_TRUE(in) << VectorsPath();
  std::string line;
  int decoded = 0;
  int encoded = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string kind, name, a, b;
    fields >> kind >> name >> a >> b;
    const NarrowFormatInfo* f = FindNarrowFormat(name);
    ASSERT_NE(f, nullptr) << line;
    if (kind == "decode") {
      const auto code = static_cast<uint8_t>(std::stoul(a, nullptr, 16));
      const double got = NarrowFloatToDouble(f->format, code);
      if (b == "nan") {
        EXPECT_TRUE(std::isnan(got)) << line;
      } else {
        const double want = b == "inf"    ? HUGE_VAL
                            : b == "-inf" ? -HUGE_VAL
                                          : std::strtod(b.c_str(), nullptr);
        EXPECT_EQ(got, want) << line;
        EXPECT_EQ(std::signbit(got), std::signbit(want)) << line;
      }
      ++decoded;
    } else {
      ASSERT_EQ(kind, "encode") << line;
      const float x = FloatFromBits(
          static_cast<uint32_t>(std::stoul(a, nullptr, 16)));
      const auto want = static_cast<int>(std::stoul(b, nullptr, 16));
      EXPECT_EQ(static_cast<int>(NarrowFloatFromDouble(f->format, x)), want)
          << line << " (x = " << x << ")";
      ++encoded;
    }
  }
  // Every code of the 11 float formats (eight 8-bit, two 6-bit, one
  // 4-bit), and several hundred inputs each.
  EXPECT_EQ(decoded, 8 * 256 + 2 * 64 + 16);
  EXPECT_GT(encoded, 9000);
}

TEST(NarrowDTypeTest, FloatCodesIgnoreTheUnusedHighBits) {
  // f4_e2m1fn 0b0011 = 1.5 (exponent 01, mantissa 1, bias 1); ml_dtypes
  // keeps a 4-bit value in the low bits of its byte.
  EXPECT_EQ(NarrowFloatToDouble(NarrowFormat::kF4E2M1FN, 0x03), 1.5);
  EXPECT_EQ(NarrowFloatToDouble(NarrowFormat::kF4E2M1FN, 0xF3), 1.5);
}

TEST(NarrowDTypeTest, IntegersSignExtendAndWrap) {
  // int4 keeps the low 4 bits (ml_dtypes intN::Mask); reading
  // sign-extends bit 3: 0x0F -> -1, 0x08 -> -8, 0x07 -> 7, and a stray
  // high nibble (0xF7) is ignored.
  EXPECT_EQ(NarrowIntValue(NarrowFormat::kI4, 0x0F), -1);
  EXPECT_EQ(NarrowIntValue(NarrowFormat::kI4, 0x08), -8);
  EXPECT_EQ(NarrowIntValue(NarrowFormat::kI4, 0xF7), 7);
  EXPECT_EQ(NarrowIntValue(NarrowFormat::kU4, 0xFF), 15);
  EXPECT_EQ(NarrowIntValue(NarrowFormat::kI2, 0x02), -2);
  EXPECT_EQ(NarrowIntValue(NarrowFormat::kU2, 0x07), 3);
  // Narrowing wraps modulo 2^bits: 9 = 0b1001 -> int4 -7; -9 = ...10111 ->
  // 0b0111 = 7; 5 = 0b101 -> uint2 1.
  EXPECT_EQ(NarrowIntValue(NarrowFormat::kI4,
                           NarrowIntFromInt64(NarrowFormat::kI4, 9)),
            -7);
  EXPECT_EQ(NarrowIntFromInt64(NarrowFormat::kI4, -9), 0x07);
  EXPECT_EQ(NarrowIntFromInt64(NarrowFormat::kU2, 5), 0x01);
  EXPECT_EQ(NarrowIntMin(NarrowFormat::kI4), -8);
  EXPECT_EQ(NarrowIntMax(NarrowFormat::kU4), 15);
  EXPECT_EQ(NarrowIntMin(NarrowFormat::kI2), -2);
  EXPECT_EQ(NarrowIntMax(NarrowFormat::kI2), 1);
}

}  // namespace
}  // namespace jax2onnx::jaxpr
