// JaxReleaseRange (jaxpr/text/jax_releases.h): every bundle under
// testdata/jax_versions/<release>/ (written by hand in that release's print
// form, docs/jax_versions.md) must be dated to a range holding <release>;
// plus forms whose first and last releases pin a file exactly.
#include "jaxpr/text/jax_releases.h"

#include <algorithm>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "jaxpr/text/parser.h"

namespace jax2onnx::jaxpr {
namespace {

namespace fs = std::filesystem;

int Index(const std::string& r) {
  const auto& all = KnownJaxReleases();
  return static_cast<int>(std::find(all.begin(), all.end(), r) - all.begin());
}

TEST(JaxReleasesTest, EveryVersionBundleIsDatedToItsRelease) {
  const fs::path root = fs::path(JAX2ONNX_SOURCE_DIR) / "testdata/jax_versions";
  int checked = 0;
  for (const auto& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    const std::string release = dir.path().filename().string();
    ASSERT_LT(Index(release), static_cast<int>(KnownJaxReleases().size()))
        << release << " is not a known release";
    for (const auto& f : fs::directory_iterator(dir.path())) {
      if (f.path().extension() != ".jaxpr") continue;
      auto file = ParseJaxprFile(f.path().string());
      ASSERT_TRUE(file.ok()) << file.status();
      const ReleaseRange r = JaxReleaseRange(*file);
      std::string forms;
      for (const auto& e : r.evidence) forms += e.form + "; ";
      ASSERT_TRUE(r.consistent) << f.path() << ": " << forms;
      EXPECT_LE(Index(r.oldest), Index(release)) << f.path() << ": " << forms;
      EXPECT_GE(Index(r.newest), Index(release)) << f.path() << ": " << forms;
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

TEST(JaxReleasesTest, TypedLiteralsAndPjitPinTwoReleases) {
  auto file = ParseJaxprText(
      "{ lambda ; a:f32[]. let\n"
      "    b:f32[] = pjit[name=f jaxpr={ lambda ; c:f32[]. let\n"
      "        d:f32[] = mul c 2.0:f32[] in (d,) }] a\n"
      "  in (b,) }");
  ASSERT_TRUE(file.ok()) << file.status();
  const ReleaseRange r = JaxReleaseRange(*file);
  EXPECT_TRUE(r.consistent);
  EXPECT_EQ(r.oldest, "0.6.1");
  EXPECT_EQ(r.newest, "0.6.2");
}

TEST(JaxReleasesTest, MixedFormsHaveNoRelease) {
  auto file = ParseJaxprText(
      "{ lambda ; a:f32[]. let\n"
      "    b:f32[] = jit[name=f jaxpr={ lambda ; c:f32[]. let\n"
      "        d:f32[] = mul c 2.0 in (d,) }] a\n"
      "  in (b,) }");
  ASSERT_TRUE(file.ok()) << file.status();
  const ReleaseRange r = JaxReleaseRange(*file);
  EXPECT_FALSE(r.consistent);  // jit (>= 0.7.0), untyped literal (<= 0.6.0)
}

TEST(JaxReleasesTest, NoEvidenceSpansEveryRelease) {
  auto file = ParseJaxprText(
      "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }");
  ASSERT_TRUE(file.ok()) << file.status();
  const ReleaseRange r = JaxReleaseRange(*file);
  EXPECT_EQ(r.oldest, KnownJaxReleases().front());
  EXPECT_EQ(r.newest, KnownJaxReleases().back());
  EXPECT_TRUE(r.evidence.empty());
}

}  // namespace
}  // namespace jax2onnx::jaxpr
