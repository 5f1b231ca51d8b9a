// The threefry PRNG of the reference interpreter (jaxpr/prng.cc,
// jaxpr/eval/random.cc) against outside data: the Random123 known-answer
// vectors and values JAX publishes in its tests and docstrings (each test
// cites its source in jax-ml/jax). The interpreter is the oracle the ONNX
// lowerings are checked against, so these pin the oracle itself.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/prng.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using testing::EvalText;

// Runs a jaxpr with no inputs and one output in the given threefry mode.
Array EvalInMode(const std::string& text, bool partitionable) {
  EvalOptions options;
  options.threefry_partitionable = partitionable;
  auto out = EvalText(text, {}, {}, options);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return Array();
  return (*out)[0];
}

// zlib's adler32 of a string (tests/random_test.py RandomValuesCase._seed:
// zlib.adler32((name + prng_impl).encode())).
uint32_t Adler32(const std::string& s) {
  uint32_t a = 1, b = 0;
  for (unsigned char c : s) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

// jax-ml/jax tests/random_test.py PrngTest.testThreefry2x32: the Random123
// known-answer vectors for Threefry-2x32 with 20 rounds.
TEST(Threefry2x32Test, Random123KnownAnswers) {
  EXPECT_THAT(Threefry2x32({0, 0}, {0, 0}),
              ElementsAre(0x6b200159u, 0x99ba4efeu));
  EXPECT_THAT(
      Threefry2x32({0xFFFFFFFFu, 0xFFFFFFFFu}, {0xFFFFFFFFu, 0xFFFFFFFFu}),
      ElementsAre(0x1cb996fcu, 0xbb002be7u));
  EXPECT_THAT(
      Threefry2x32({0x13198a2eu, 0x03707344u}, {0x243f6a88u, 0x85a308d3u}),
      ElementsAre(0xc4923a9cu, 0x483df7a0u));
}

// The threefry2x32 primitive of the interpreter on the same vectors, with
// broadcasting of a scalar key against array counts (testThreefry2x32Large).
TEST(Threefry2x32Test, PrimitiveKernelMatchesKnownAnswers) {
  auto out = EvalText(
      "{ lambda ; a:u32[] b:u32[] c:u32[3] d:u32[3]. let\n"
      "    e:u32[3] f:u32[3] = threefry2x32 a b c d\n"
      "  in (e, f) }",
      {testing::MakeIntArray(DType::kU32, {}, {0x13198a2e}),
       testing::MakeIntArray(DType::kU32, {}, {0x03707344}),
       testing::MakeIntArray(DType::kU32, {3},
                             {0x243f6a88, 0x243f6a88, 0x243f6a88}),
       testing::MakeIntArray(DType::kU32, {3},
                             {0x85a308d3, 0x85a308d3, 0x85a308d3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(testing::ToU64s((*out)[0]),
              ElementsAre(0xc4923a9cu, 0xc4923a9cu, 0xc4923a9cu));
  EXPECT_THAT(testing::ToU64s((*out)[1]),
              ElementsAre(0x483df7a0u, 0x483df7a0u, 0x483df7a0u));
}

std::string BitsJaxpr(int64_t seed, int width, int n) {
  return absl::StrCat(
      "{ lambda ; . let\n    a:key<fry>[] = random_seed[impl=fry] ", seed,
      ":i64[]\n    b:u", width, "[", n, "] = random_bits[bit_width=", width,
      " shape=(", n, ",)] a\n  in (b,) }");
}

// jax-ml/jax tests/random_test.py PrngTest.testRngRandomBits (skipped under
// jax_threefry_partitionable, i.e. these are the original mode's values):
// random.bits(key(1701), (3,), uintN); the uint64 row is the x64 one.
TEST(RandomBitsTest, TestRngRandomBitsOriginalMode) {
  EXPECT_THAT(testing::ToU64s(EvalInMode(BitsJaxpr(1701, 8, 3), false)),
              ElementsAre(216, 115, 43));
  EXPECT_THAT(testing::ToU64s(EvalInMode(BitsJaxpr(1701, 16, 3), false)),
              ElementsAre(41682, 1300, 55017));
  EXPECT_THAT(testing::ToU64s(EvalInMode(BitsJaxpr(1701, 32, 3), false)),
              ElementsAre(56197195u, 4200222568u, 961309823u));
  EXPECT_THAT(testing::ToU64s(EvalInMode(BitsJaxpr(1701, 64, 3), false)),
              ElementsAre(3982329540505020460ull, 16822122385914693683ull,
                          7882654074788531506ull));
}

// jax-ml/jax tests/random_test.py _RANDOM_VALUES_CASES "bits" threefry2x32
// rows (testRandomDistributionValues, original mode), seed
// adler32("bits" + "threefry2x32").
TEST(RandomBitsTest, RandomValuesCasesBitsOriginalMode) {
  const int64_t seed = Adler32("bitsthreefry2x32");
  EXPECT_THAT(testing::ToU64s(EvalInMode(BitsJaxpr(seed, 8, 5), false)),
              ElementsAre(10, 158, 82, 54, 158));
  EXPECT_THAT(testing::ToU64s(EvalInMode(BitsJaxpr(seed, 16, 5), false)),
              ElementsAre(6738, 38161, 50695, 57337, 61600));
  EXPECT_THAT(testing::ToU64s(EvalInMode(BitsJaxpr(seed, 32, 5), false)),
              ElementsAre(1978747883u, 4134381225u, 3628107870u, 689687174u,
                          2788938207u));
  EXPECT_THAT(testing::ToU64s(EvalInMode(BitsJaxpr(seed, 64, 5), false)),
              ElementsAre(17649965731882839947ull, 1415307058040849897ull,
                          8282622628079774249ull, 14024425113645909402ull,
                          2012979996110532418ull));
}

// jax-ml/jax tests/random_test.py PrngTest.testPRNGValues (original mode):
// key_data(split(key(0), 4)) and key_data(fold_in(key(0), 4)).
TEST(RandomSplitTest, TestPRNGValuesOriginalMode) {
  EXPECT_THAT(testing::ToU64s(EvalInMode(
                  "{ lambda ; . let\n"
                  "    a:key<fry>[] = random_seed[impl=fry] 0:i32[]\n"
                  "    b:key<fry>[4] = random_split[shape=(4,)] a\n"
                  "    c:u32[4,2] = random_unwrap b\n"
                  "  in (c,) }",
                  false)),
              ElementsAre(2285895361u, 1501764800u, 1518642379u, 4090693311u,
                          433833334u, 4221794875u, 839183663u, 3740430601u));
  for (bool partitionable : {false, true}) {
    EXPECT_THAT(testing::ToU64s(EvalInMode(
                    "{ lambda ; . let\n"
                    "    a:key<fry>[] = random_seed[impl=fry] 0:i32[]\n"
                    "    b:key<fry>[] = random_fold_in a 4:u32[]\n"
                    "    c:u32[2] = random_unwrap b\n"
                    "  in (c,) }",
                    partitionable)),
                ElementsAre(2285895361u, 433833334u));
  }
}

std::string FoldInJaxpr(int64_t seed, int64_t data) {
  return absl::StrCat(
      "{ lambda ; . let\n    a:key<fry>[] = random_seed[impl=fry] ", seed,
      ":i32[]\n    b:key<fry>[] = random_fold_in a ", data,
      ":i32[]\n    c:u32[2] = random_unwrap b\n  in (c,) }");
}

// jax-ml/jax jax/_src/random/stateful_rng.py docstrings (doctests):
// StatefulPRNG.key: stateful_rng(0).key() twice = fold_in(key(0), 0) and
// fold_in(key(0), 1); stateful_rng: after four draws from
// stateful_rng(42), rng.key() = fold_in(key(42), 4).
TEST(RandomFoldInTest, StatefulRngDocstrings) {
  EXPECT_THAT(testing::ToU64s(EvalInMode(FoldInJaxpr(0, 0), true)),
              ElementsAre(1797259609u, 2579123966u));
  EXPECT_THAT(testing::ToU64s(EvalInMode(FoldInJaxpr(0, 1), true)),
              ElementsAre(928981903u, 3453687069u));
  EXPECT_THAT(testing::ToU64s(EvalInMode(FoldInJaxpr(42, 4), true)),
              ElementsAre(2954079971u, 3276725750u));
}

// jax.random.uniform(key, ()) as JAX prints _uniform, on fold_in(key(seed),
// draw): random_bits, shift, or, bitcast_convert_type, affine map.
std::string UniformScalarJaxpr(int64_t seed, int64_t draw) {
  return absl::StrCat(
      "{ lambda ; . let\n"
      "    a:key<fry>[] = random_seed[impl=fry] ",
      seed,
      ":i32[]\n"
      "    b:key<fry>[] = random_fold_in a ",
      draw,
      ":i32[]\n"
      "    c:u32[] = random_bits[bit_width=32 shape=()] b\n"
      "    d:u32[] = shift_right_logical c 9:u32[]\n"
      "    e:u32[] = or d 1065353216:u32[]\n"
      "    f:f32[] = bitcast_convert_type[new_dtype=float32] e\n"
      "    g:f32[] = sub f 1.0:f32[]\n"
      "    h:f32[] = sub 1.0:f32[] 0.0:f32[]\n"
      "    i:f32[] = mul g h\n"
      "    j:f32[] = add i 0.0:f32[]\n"
      "    k:f32[] = max 0.0:f32[] j\n"
      "  in (k,) }");
}

// jax-ml/jax jax/_src/random/stateful_rng.py stateful_rng docstring: draws
// 0..3 of rng = stateful_rng(42) are uniform(fold_in(key(42), i)) =
// 0.5302608, 0.72766423, 0.6672406, 0.3890121 (float32 reprs, so exact),
// in the default (partitionable) mode.
TEST(RandomUniformTest, StatefulRngUniformDraws) {
  const float expected[] = {0.5302608f, 0.72766423f, 0.6672406f, 0.3890121f};
  for (int draw = 0; draw < 4; ++draw) {
    Array u = EvalInMode(UniformScalarJaxpr(42, draw), true);
    ASSERT_EQ(u.num_elements(), 1);
    EXPECT_EQ(static_cast<float>(u.GetAsDouble(0)), expected[draw]) << draw;
  }
}

// jax-ml/jax tests/random_test.py
// PrngTest.test_threefry_split_fold_in_symmetry (partitionable mode):
// split(key(72), 3)[i] == fold_in(key(72), i).
TEST(RandomSplitTest, PartitionableSplitIsFoldIn) {
  Array split = EvalInMode(
      "{ lambda ; . let\n"
      "    a:key<fry>[] = random_seed[impl=fry] 72:i32[]\n"
      "    b:key<fry>[3] = random_split[shape=(3,)] a\n"
      "    c:u32[3,2] = random_unwrap b\n"
      "  in (c,) }",
      true);
  std::vector<uint64_t> folded;
  for (int i = 0; i < 3; ++i) {
    for (uint64_t w : testing::ToU64s(EvalInMode(FoldInJaxpr(72, i), true)))
      folded.push_back(w);
  }
  EXPECT_THAT(testing::ToU64s(split), ElementsAreArray(folded));
}

// jax.random.normal(key(seed), (n,)) as JAX prints it (the body of
// testdata/random/normal_key0_1000.jaxpr, for other sizes and seeds).
std::string NormalJaxpr(int64_t seed, int n) {
  const std::string s = absl::StrCat(n);
  return absl::StrCat(
      "{ lambda ; . let\n"
      "    a:key<fry>[] = random_seed[impl=fry] ",
      seed,
      ":i64[]\n"
      "    h:u32[",
      s, "] = random_bits[bit_width=32 shape=(", s,
      ",)] a\n"
      "    i:u32[",
      s,
      "] = shift_right_logical h 9:u32[]\n"
      "    j:u32[",
      s,
      "] = or i 1065353216:u32[]\n"
      "    k:f32[",
      s,
      "] = bitcast_convert_type[new_dtype=float32] j\n"
      "    l:f32[",
      s,
      "] = sub k 1.0:f32[]\n"
      "    f:f32[1] = broadcast_in_dim[broadcast_dimensions=() shape=(1,)] "
      "-0.9999999403953552:f32[]\n"
      "    m:f32[1] = sub 1.0:f32[] f\n"
      "    n:f32[",
      s,
      "] = mul l m\n"
      "    o:f32[",
      s,
      "] = add n f\n"
      "    p:f32[",
      s,
      "] = max f o\n"
      "    q:f32[",
      s,
      "] = erf_inv p\n"
      "    r:f32[",
      s,
      "] = mul 1.4142135381698608:f32[] q\n"
      "  in (r,) }");
}

// jax-ml/jax tests/random_test.py _RANDOM_VALUES_CASES "normal"
// threefry2x32 row (testRandomDistributionValues, original mode, printed to
// 6 decimals and compared with assertAllClose, so within 1e-6), seed
// adler32("normal" + "threefry2x32"): exercises random_bits, the float
// construction through bitcast_convert_type and erf_inv together.
TEST(RandomNormalTest, RandomValuesCasesNormalOriginalMode) {
  Array x = EvalInMode(NormalJaxpr(Adler32("normalthreefry2x32"), 5), false);
  const double expected[] = {-1.173234, -1.511662, 0.070593, -0.099764,
                             1.052845};
  ASSERT_EQ(x.num_elements(), 5);
  for (int i = 0; i < 5; ++i) {
    EXPECT_NEAR(x.GetAsDouble(i), expected[i], 1e-6) << i;
  }
}

// jax-ml/jax docs/jep/9263-typed-keys.md: jax.random.uniform(key(0), (3,))
// = [0.947667, 0.9785799, 0.33229148] (float32 reprs, so exact). The JEP's
// doctest output is in the default (partitionable) mode.
TEST(RandomUniformTest, TypedKeysJepUniform) {
  Array u = EvalInMode(
      absl::StrCat("{ lambda ; . let\n"
                   "    a:key<fry>[] = random_seed[impl=fry] 0:i32[]\n"
                   "    c:u32[3] = random_bits[bit_width=32 shape=(3,)] a\n"
                   "    d:u32[3] = shift_right_logical c 9:u32[]\n"
                   "    e:u32[3] = or d 1065353216:u32[]\n"
                   "    f:f32[3] = bitcast_convert_type[new_dtype=float32] e\n"
                   "    g:f32[3] = sub f 1.0:f32[]\n"
                   "  in (g,) }"),
      true);
  ASSERT_EQ(u.num_elements(), 3);
  EXPECT_EQ(static_cast<float>(u.GetAsDouble(0)), 0.947667f);
  EXPECT_EQ(static_cast<float>(u.GetAsDouble(1)), 0.9785799f);
  EXPECT_EQ(static_cast<float>(u.GetAsDouble(2)), 0.33229148f);
}

// threefry_seed: 64-bit seeds give (hi, lo); 32-bit seeds (0, bits).
TEST(RandomSeedTest, SeedWords) {
  EXPECT_THAT(ThreefrySeed(0x0000000100000002ull, 64), ElementsAre(1u, 2u));
  EXPECT_THAT(ThreefrySeed(static_cast<uint64_t>(int64_t{-1}), 32),
              ElementsAre(0u, 0xFFFFFFFFu));
  EXPECT_THAT(ThreefrySeed(static_cast<uint64_t>(int64_t{-1}), 64),
              ElementsAre(0xFFFFFFFFu, 0xFFFFFFFFu));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
