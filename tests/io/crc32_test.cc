// Crc32 (the carry-less-multiply path on x86-64) against zlib's crc32_z, the
// reference implementation, on every length around the 16- and 64-byte
// block boundaries, unaligned starts, continued CRCs, and the published
// check value.
#include "jaxpr/io/crc32.h"

#include <zlib.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace jax2onnx::jaxpr {
namespace {

uint32_t Zlib(uint32_t crc, const uint8_t* p, size_t n) {
  return static_cast<uint32_t>(crc32_z(crc, p, n));
}

std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<uint8_t> out(n);
  for (uint8_t& b : out) b = static_cast<uint8_t>(gen());
  return out;
}

TEST(Crc32Test, CheckValueOf123456789) {
  // The CRC-32 "check" value of the ASCII digits 1-9 (Williams, "A Painless
  // Guide to CRC Error Detection Algorithms", CRC-32 parameter table).
  const char* digits = "123456789";
  EXPECT_EQ(Crc32(0, reinterpret_cast<const uint8_t*>(digits), 9), 0xCBF43926u);
  // 64 and more bytes take the folding path: 'a' x 1000 against zlib.
  std::string as(1000, 'a');
  const auto* p = reinterpret_cast<const uint8_t*>(as.data());
  EXPECT_EQ(Crc32(0, p, as.size()), Zlib(0, p, as.size()));
}

TEST(Crc32Test, EqualsZlibForEveryLengthAndOffset) {
  const std::vector<uint8_t> bytes = RandomBytes(4096 + 64, 1);
  for (size_t offset = 0; offset < 17; ++offset) {
    for (size_t n = 0; n <= 600; ++n) {
      const uint8_t* p = bytes.data() + offset;
      ASSERT_EQ(Crc32(0, p, n), Zlib(0, p, n))
          << "offset " << offset << " length " << n;
    }
  }
}

TEST(Crc32Test, ContinuesARunningCrc) {
  const std::vector<uint8_t> bytes = RandomBytes(1 << 20, 2);
  const uint32_t whole = Zlib(0, bytes.data(), bytes.size());
  EXPECT_EQ(Crc32(0, bytes.data(), bytes.size()), whole);
  for (size_t split : {1u, 15u, 63u, 64u, 1000u, 65536u, 1000003u}) {
    const uint32_t head = Crc32(0, bytes.data(), split);
    EXPECT_EQ(Crc32(head, bytes.data() + split, bytes.size() - split), whole)
        << "split at " << split;
  }
  // All-zero and all-one blocks (no accidental cancellation in the folds).
  for (uint8_t fill : {uint8_t{0}, uint8_t{0xFF}}) {
    std::vector<uint8_t> flat(100000, fill);
    EXPECT_EQ(Crc32(0x12345678, flat.data(), flat.size()),
              Zlib(0x12345678, flat.data(), flat.size()));
  }
}

}  // namespace
}  // namespace jax2onnx::jaxpr
