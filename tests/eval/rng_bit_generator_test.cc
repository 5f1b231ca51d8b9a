// XLA's RngBitGenerator in the reference interpreter (jaxpr/xla_rng.cc, the
// oracle of the rng_bit_generator lowerings) against outside data: Random123's
// known-answer vectors for Philox-4x32-10 and a value JAX publishes for its
// rbg keys, whose random bits are rng_bit_generator with RNG_DEFAULT.
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/xla_rng.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::testing::ElementsAre;
using testing::EvalText;

// github.com/DEShawResearch/random123 tests/kat_vectors, the three
// "philox4x32 10" lines (columns: counter words, key words, expected).
TEST(Philox4x32Test, Random123KnownAnswers) {
  EXPECT_THAT(Philox4x32({0, 0, 0, 0}, {0, 0}),
              ElementsAre(0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u));
  EXPECT_THAT(Philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                         {0xffffffffu, 0xffffffffu}),
              ElementsAre(0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu));
  EXPECT_THAT(Philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                         {0xa4093822u, 0x299f31d0u}),
              ElementsAre(0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u));
}

// A counter of zero and key k: block 0 is Philox4x32((0, 0, k0, k1), k), so
// with the all-ones known answer the generator's first four values follow
// from the vector above: state {key = 2^64 - 1, counter = 2^64 - 1} makes the
// 128-bit counter all ones.
TEST(RngBitGeneratorTest, PhiloxFirstBlockIsTheKnownAnswer) {
  auto r = XlaRngBitGenerator({~uint64_t{0}, ~uint64_t{0}}, {4}, 32,
                              RngAlgorithm::kPhilox);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->bits,
              ElementsAre(0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu));
  // The counter advances by one block and wraps; the key word stays.
  EXPECT_THAT(r->state, ElementsAre(~uint64_t{0}, 0u));
}

// Hand derivation of the Threefry layout (xla prng.cc ThreeFryRngBit32):
// shape (3,) has no even dimension, so the pairs interleave along axis 0 of
// the halved shape (2,): values (y(0)[0], y(0)[1], y(1)[0]) with y(i) the
// Threefry-2x32 block of counter state + i, and the state advances by 2.
// With key words 0 and counter 0, block 0 is Random123's all-zero answer.
TEST(RngBitGeneratorTest, ThreefryPairsInterleaveAlongTheSplitAxis) {
  auto r = XlaRngBitGenerator({0, 0}, {3}, 32, RngAlgorithm::kThreeFry);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->bits.size(), 3u);
  EXPECT_EQ(r->bits[0], 0x6b200159u);
  EXPECT_EQ(r->bits[1], 0x99ba4efeu);
  EXPECT_THAT(r->state, ElementsAre(0u, 2u));
}

// jax-ml/jax tests/random_test.py _RANDOM_VALUES_CASES, the "uniform" "rbg"
// row: random.uniform(key, (5,)) for the rbg key of seed
// zlib.adler32(b"uniformrbg") = 395641916 (rbg.py _rbg_seed: [0, s, 0, s]),
// printed to 6 decimals. The bits are rng_bit_generator[RNG_DEFAULT]; the
// floats are JAX's mantissa trick ((bits >> 9) | 0x3F800000) - 1.
TEST(RngBitGeneratorTest, MatchesJaxUniformRbgValues) {
  Array key(DType::kU32, {4});
  for (int i = 0; i < 4; ++i) key.SetFromInt64(i, i % 2 == 0 ? 0 : 395641916);
  auto out = EvalText(
      "{ lambda ; k:u32[4]. let\n"
      "    a:u32[4] b:u32[5] = rng_bit_generator[algorithm=RNG_DEFAULT "
      "dtype=uint32 out_sharding=None shape=(5,)] k\n"
      "  in (b,) }",
      {key});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> want = {0.477161, 0.706508, 0.656261, 0.432547,
                                    0.057772};
  for (int i = 0; i < 5; ++i) {
    const uint32_t bits =
        (static_cast<uint32_t>((*out)[0].GetAsUInt64(i)) >> 9) | 0x3F800000u;
    float f;
    std::memcpy(&f, &bits, 4);
    EXPECT_NEAR(f - 1.0f, want[i], 1e-6) << i;
  }
}

TEST(RngBitGeneratorTest, RejectsUnknownAlgorithm) {
  EXPECT_FALSE(ParseRngAlgorithm("RNG_MERSENNE").ok());
  EXPECT_EQ(*ParseRngAlgorithm("RNG_THREE_FRY"), RngAlgorithm::kThreeFry);
}

}  // namespace
}  // namespace jax2onnx::jaxpr
