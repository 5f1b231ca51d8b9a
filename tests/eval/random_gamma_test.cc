// random_gamma in the reference interpreter (JAX's Marsaglia-Tsang sampler
// written out in the primitives it binds, jaxpr/text/random_gamma.h) against
// the values JAX publishes: jax-ml/jax tests/random_test.py
// _RANDOM_VALUES_CASES, the threefry2x32 rows of gamma, loggamma and beta
// (testRandomDistributionValues runs them with jax_threefry_partitionable
// off; printed to 6 decimals and compared with assertAllClose), seed
// zlib.adler32(name + "threefry2x32").
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "jaxpr/prng.h"
#include "jaxpr/text/random_gamma.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using testing::EvalText;

uint32_t Adler32(const std::string& s) {
  uint32_t a = 1, b = 0;
  for (unsigned char c : s) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

// random.gamma / random.loggamma(key(seed), a, (5,)) as _gamma binds it.
std::string GammaJaxpr(uint32_t seed, const char* a, bool log_space) {
  return absl::StrCat(
      "{ lambda ; . let\n"
      "    k:key<fry>[] = random_seed[impl=fry] ",
      seed,
      ":i64[]\n"
      "    b:f32[5] = broadcast_in_dim[broadcast_dimensions=() shape=(5,) "
      "sharding=None] ",
      a,
      ":f32[]\n"
      "    c:f32[5] = random_gamma[log_space=",
      log_space ? "True" : "False",
      "] k b\n"
      "  in (c,) }");
}

void ExpectClose(const std::string& text, const std::vector<double>& want) {
  EvalOptions options;
  options.threefry_partitionable = false;
  auto out = EvalText(text, {}, {}, options);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].num_elements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    // 6 printed decimals plus assertAllClose's float32 rtol of 1e-6.
    EXPECT_NEAR((*out)[0].GetAsDouble(i), want[i],
                1e-6 + 1e-6 * std::abs(want[i]))
        << i;
  }
}

TEST(RandomGammaTest, RandomValuesCasesGamma) {
  ExpectClose(GammaJaxpr(Adler32("gammathreefry2x32"), "0.8", false),
              {0.824221, 1.724476, 0.502882, 5.386132, 0.685543});
}

TEST(RandomGammaTest, RandomValuesCasesLoggamma) {
  ExpectClose(GammaJaxpr(Adler32("loggammathreefry2x32"), "0.8", true),
              {0.240559, -3.575443, -0.450946, -2.161372, -2.943277});
}

// random.beta(key, 0.8, 0.9, (5,)): _beta splits the key and takes two
// loggamma samples (alpha 0.9 >= ... exercises a second alpha).
TEST(RandomGammaTest, RandomValuesCasesBeta) {
  const uint32_t seed = Adler32("betathreefry2x32");
  ExpectClose(
      absl::StrCat(
          "{ lambda ; . let\n"
          "    k:key<fry>[] = random_seed[impl=fry] ",
          seed,
          ":i64[]\n"
          "    s:key<fry>[2] = random_split[shape=(2,)] k\n"
          "    sx:key<fry>[1] = slice[limit_indices=(1,) start_indices=(0,) "
          "strides=None] s\n"
          "    ka:key<fry>[] = squeeze[dimensions=(0,)] sx\n"
          "    sy:key<fry>[1] = slice[limit_indices=(2,) start_indices=(1,) "
          "strides=None] s\n"
          "    kb:key<fry>[] = squeeze[dimensions=(0,)] sy\n"
          "    a:f32[5] = broadcast_in_dim[broadcast_dimensions=() shape=(5,) "
          "sharding=None] 0.8:f32[]\n"
          "    b:f32[5] = broadcast_in_dim[broadcast_dimensions=() shape=(5,) "
          "sharding=None] 0.9:f32[]\n"
          "    la:f32[5] = random_gamma[log_space=True] ka a\n"
          "    lb:f32[5] = random_gamma[log_space=True] kb b\n"
          "    m:f32[5] = max la lb\n"
          "    da:f32[5] = sub la m\n"
          "    ea:f32[5] = exp da\n"
          "    db:f32[5] = sub lb m\n"
          "    eb:f32[5] = exp db\n"
          "    t:f32[5] = add ea eb\n"
          "    r:f32[5] = div ea t\n"
          "  in (r,) }"),
      {0.13259, 0.824893, 0.948363, 0.964155, 0.235448});
}

TEST(RandomGammaTest, RefusesOtherFloatTypesAndKeys) {
  Aval key = Aval::Static(DType::kOther, {});
  key.dtype_name = "key<fry>";
  EXPECT_FALSE(
      RandomGammaJaxprText(key, Aval::Static(DType::kF16, {3}), false).ok());
  Aval rbg = key;
  rbg.dtype_name = "key<rbg>";
  EXPECT_FALSE(
      RandomGammaJaxprText(rbg, Aval::Static(DType::kF32, {3}), false).ok());
}

}  // namespace
}  // namespace jax2onnx::jaxpr
