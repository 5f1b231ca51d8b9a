// eig's print forms date a jaxpr (jaxpr/text/jax_releases.cc): its params
// changed at 0.4.36 (use_magma), 0.8.0 (implementation) and 0.10.1
// (enable_eigvec_derivs), read from jax/_src/lax/linalg.py at those tags.
#include <string>

#include "gtest/gtest.h"
#include "jaxpr/text/jax_releases.h"
#include "jaxpr/text/parser.h"

namespace jax2onnx::jaxpr {
namespace {

ReleaseRange RangeOf(const std::string& params) {
  auto file = ParseJaxprText(
      "{ lambda ; a:f32[2,2]. let w:c64[2] = eig[compute_left_eigenvectors="
      "False compute_right_eigenvectors=False" +
      params + "] a in (w,) }");
  EXPECT_TRUE(file.ok()) << file.status();
  return file.ok() ? JaxReleaseRange(*file) : ReleaseRange{};
}

TEST(EigReleasesTest, EachParamSetPinsItsReleases) {
  ReleaseRange r = RangeOf("");
  EXPECT_EQ(r.oldest, "0.4.30");
  EXPECT_EQ(r.newest, "0.4.35");
  r = RangeOf(" use_magma=None");
  EXPECT_EQ(r.oldest, "0.4.36");
  EXPECT_EQ(r.newest, "0.7.2");
  r = RangeOf(" implementation=None");
  EXPECT_EQ(r.oldest, "0.8.0");
  EXPECT_EQ(r.newest, "0.10.0");
  r = RangeOf(" enable_eigvec_derivs=False implementation=None");
  EXPECT_EQ(r.oldest, "0.10.1");
  EXPECT_EQ(r.newest, "main");
}

}  // namespace
}  // namespace jax2onnx::jaxpr
