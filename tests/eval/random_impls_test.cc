// JAX's other PRNG implementations in the reference interpreter
// (jaxpr/prng.cc, jaxpr/eval/random.cc): threefry4x32, philox2x32 and
// philox4x32 (jax/_src/random/*.py) against outside data, the Random123
// known-answer vectors jax-ml/jax tests/random_impl_test.py quotes from
// random123/tests/kat_vectors, and against the properties that test file
// asserts of every implementation (split is fold_in over iota). The
// key-chain bundles (testdata/random/*_key_chain) check the rest against
// scripts/prng_impls_numpy.py.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/prng.h"
#include "jaxpr/xla_rng.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using testing::EvalText;
using ::testing::HasSubstr;

constexpr uint32_t kM = 0xFFFFFFFFu;

TEST(Threefry4x32Test, Random123KnownAnswers) {
  EXPECT_THAT(Threefry4x32({0, 0, 0, 0}, {0, 0, 0, 0}),
              ElementsAre(0x9C6CA96Au, 0xE17EAE66u, 0xFC10ECD4u, 0x5256A7D8u));
  EXPECT_THAT(Threefry4x32({kM, kM, kM, kM}, {kM, kM, kM, kM}),
              ElementsAre(0x2A881696u, 0x57012287u, 0xF6C7446Eu, 0xA16A6732u));
  EXPECT_THAT(
      Threefry4x32({0xA4093822u, 0x299F31D0u, 0x082EFA98u, 0xEC4E6C89u},
                   {0x243F6A88u, 0x85A308D3u, 0x13198A2Eu, 0x03707344u}),
      ElementsAre(0x59CD1DBBu, 0xB8879579u, 0x86B5D00Cu, 0xAC8B6D84u));
}

TEST(Philox2x32Test, Random123KnownAnswers) {
  EXPECT_THAT(Philox2x32(0, {0, 0}), ElementsAre(0xFF1DAE59u, 0x6CD10DF2u));
  EXPECT_THAT(Philox2x32(kM, {kM, kM}), ElementsAre(0x2C3F628Bu, 0xAB4FD7ADu));
  EXPECT_THAT(Philox2x32(0x13198A2Eu, {0x243F6A88u, 0x85A308D3u}),
              ElementsAre(0xDD7CE038u, 0xF62A4C12u));
}

TEST(Philox4x32Test, Random123KnownAnswers) {
  EXPECT_THAT(Philox4x32({0, 0, 0, 0}, {0, 0}),
              ElementsAre(0x6627E8D5u, 0xE169C58Du, 0xBC57AC4Cu, 0x9B00DBD8u));
  EXPECT_THAT(Philox4x32({kM, kM, kM, kM}, {kM, kM}),
              ElementsAre(0x408F276Du, 0x41C83B0Eu, 0xA20BC7C6u, 0x6D5451FDu));
  EXPECT_THAT(Philox4x32({0x243F6A88u, 0x85A308D3u, 0x13198A2Eu, 0x03707344u},
                         {0xA4093822u, 0x299F31D0u}),
              ElementsAre(0xD16CFE09u, 0x94FDCCEBu, 0x5001E420u, 0x24126EA1u));
}

// The primitives' kernels, in JAX's operand order (key words first), with a
// scalar operand broadcast against the others.
TEST(RandomImplPrimitivesTest, KernelsMatchKnownAnswers) {
  auto out = EvalText(
      "{ lambda ; a:u32[] b:u32[2] c:u32[2]. let\n"
      "    d:u32[2] e:u32[2] = philox2x32 a b c\n"
      "  in (d, e) }",
      {testing::MakeIntArray(DType::kU32, {}, {0x13198A2E}),
       testing::MakeIntArray(DType::kU32, {2}, {0x243F6A88, 0x243F6A88}),
       testing::MakeIntArray(DType::kU32, {2}, {0x85A308D3, 0x85A308D3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(testing::ToU64s((*out)[0]),
              ElementsAre(0xDD7CE038u, 0xDD7CE038u));
  EXPECT_THAT(testing::ToU64s((*out)[1]),
              ElementsAre(0xF62A4C12u, 0xF62A4C12u));

  std::vector<Array> ins;
  for (uint32_t w : {0xA4093822u, 0x299F31D0u, 0x243F6A88u, 0x85A308D3u,
                     0x13198A2Eu, 0x03707344u}) {
    ins.push_back(testing::MakeIntArray(DType::kU32, {}, {w}));
  }
  out = EvalText(
      "{ lambda ; a:u32[] b:u32[] c:u32[] d:u32[] e:u32[] f:u32[]. let\n"
      "    g:u32[] h:u32[] i:u32[] j:u32[] = philox4x32 a b c d e f\n"
      "  in (g, h, i, j) }",
      ins);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].GetAsUInt64(0), 0xD16CFE09u);
  EXPECT_EQ((*out)[3].GetAsUInt64(0), 0x24126EA1u);
}

// random_impl_test.py PRNGImplTest.test_split_fold_in_equivalence: for
// every implementation, split(key, 5) equals vmap(fold_in(key, i)) over
// i = 0..4; and the split keys differ (test_split).
TEST(RandomImplKeysTest, SplitIsFoldInOverIota) {
  for (absl::string_view tag : {"fry4", "phx2", "phx4"}) {
    const KeyImpl impl = *KeyImplOfParam(tag);
    const int w = KeyWords(impl);
    const std::string text = absl::StrReplaceAll(
        "{ lambda ; . let\n"
        "    a:key<T>[] = random_seed[impl=T] 0:i32[]\n"
        "    b:key<T>[5] = random_split[shape=(5,)] a\n"
        "    c:u32[5,W] = random_unwrap b\n"
        "    d:u32[5] = iota[dimension=0 dtype=uint32 shape=(5,) "
        "sharding=None] \n"
        "    e:key<T>[5] = random_fold_in a d\n"
        "    f:u32[5,W] = random_unwrap e\n"
        "  in (c, f) }",
        {{"T", tag}, {"W", absl::StrCat(w)}});
    auto out = EvalText(text, {});
    ASSERT_TRUE(out.ok()) << tag << ": " << out.status();
    const std::vector<uint64_t> split = testing::ToU64s((*out)[0]);
    EXPECT_THAT(testing::ToU64s((*out)[1]), ElementsAreArray(split)) << tag;
    for (int i = 0; i < 5; ++i) {
      for (int j = i + 1; j < 5; ++j) {
        EXPECT_FALSE(std::equal(split.begin() + i * w,
                                split.begin() + (i + 1) * w,
                                split.begin() + j * w))
            << tag << " keys " << i << " and " << j;
      }
    }
  }
}

// The seed of each implementation hashes (seed >> 32, seed & 0xFFFFFFFF)
// once with its block function (threefry4x32.py _threefry4x32_seed,
// philox*.py _philox*_seed): the seed 0 key is the block of zeros.
TEST(RandomImplKeysTest, SeedZeroIsTheZeroBlock) {
  EXPECT_THAT(ImplSeed(KeyImpl::kThreefry4x32, 0, 32),
              ElementsAre(0x9C6CA96Au, 0xE17EAE66u, 0xFC10ECD4u, 0x5256A7D8u));
  EXPECT_THAT(ImplSeed(KeyImpl::kPhilox4x32, 0, 32),
              ElementsAre(0x6627E8D5u, 0xE169C58Du, 0u, 0u));
  EXPECT_EQ(ImplSeed(KeyImpl::kPhilox2x32, 0, 32)[0], 0xFF1DAE59u);
}

TEST(RandomImplKeysTest, UnsupportedImplementationIsNamed) {
  auto out = EvalText(
      "{ lambda ; . let\n"
      "    a:key<rbg>[] = random_seed[impl=rbg] 0:i32[]\n"
      "  in (a,) }",
      {});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("rbg"));
}

TEST(RandomImplKeysTest, MixedKeyTypesAreRefused) {
  auto out = EvalText(
      "{ lambda ; . let\n"
      "    a:key<fry4>[] = random_seed[impl=fry4] 0:i32[]\n"
      "    b:key<phx4>[] = random_seed[impl=phx4] 0:i32[]\n"
      "    c:key<fry4>[] = select_n True:bool[] a b\n"
      "  in (c,) }",
      {});
  ASSERT_FALSE(out.ok());
}

}  // namespace
}  // namespace jax2onnx::jaxpr
