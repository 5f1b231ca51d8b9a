// Issue 24: LoadBundle parses, then type checks, then binds the npz, so an
// ill-typed program is reported at its line whatever its npz holds; and a
// bundle path that is a directory, FIFO or device is named as such (it used
// to say `no file X.jaxpr`).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/io/npy.h"

namespace jax2onnx::jaxpr {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class BundleLoadOrderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrCat("bundle_load_order_",
                        ::testing::UnitTest::GetInstance()
                            ->current_test_info()
                            ->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  std::string P(const std::string& rel) const { return (dir_ / rel).string(); }
  fs::path dir_;
};

// `neg` of an f32 cannot give i32 (line 3); the npz is stale in every way
// (no const_0, expected_0 of the wrong dtype).
constexpr char kIllTyped[] = R"({ lambda c:f32[2]; a:f32[2]. let
    b:f32[2] = add a c
    d:i32[2] = neg b
  in (d,) }
)";

TEST_F(BundleLoadOrderTest, TypeErrorIsReportedBeforeAStaleNpz) {
  std::ofstream(P("b.jaxpr")) << kIllTyped;
  Array wrong(DType::kF32, {2});
  ASSERT_TRUE(WriteNpzFile(P("b.npz"), {{"input_0", wrong},
                                        {"expected_0", wrong}})
                  .ok());
  auto bundle = LoadBundle(P("b.jaxpr"));
  ASSERT_FALSE(bundle.ok());
  const std::string message(bundle.status().message());
  EXPECT_THAT(message, HasSubstr(absl::StrCat(P("b.jaxpr"), ":3:")));
  EXPECT_THAT(message, Not(HasSubstr("const_0")));
  EXPECT_THAT(message, Not(HasSubstr("expected_0")));
}

TEST_F(BundleLoadOrderTest, TypeErrorIsReportedWithoutAnyNpz) {
  std::ofstream(P("b.jaxpr")) << kIllTyped;
  auto bundle = LoadBundle(P("b.jaxpr"));
  ASSERT_FALSE(bundle.ok());
  EXPECT_THAT(std::string(bundle.status().message()),
              HasSubstr(absl::StrCat(P("b.jaxpr"), ":3:")));
}

TEST_F(BundleLoadOrderTest, DirectoryAndFifoAreNamedPrecisely) {
  fs::create_directories(P("d.jaxpr"));
  auto dir = LoadBundle(P("d.jaxpr"));
  ASSERT_FALSE(dir.ok());
  EXPECT_THAT(std::string(dir.status().message()),
              HasSubstr("d.jaxpr is a directory, not a regular file"));
  ASSERT_EQ(::mkfifo(P("f.jaxpr").c_str(), 0644), 0);
  auto fifo = LoadBundle(P("f.jaxpr"));
  ASSERT_FALSE(fifo.ok());
  EXPECT_THAT(std::string(fifo.status().message()),
              HasSubstr("f.jaxpr is a FIFO, not a regular file"));
  auto missing = LoadBundle(P("none.jaxpr"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("no file"));
  // An npz that is not a regular file is named too.
  std::ofstream(P("g.jaxpr")) << "{ lambda ; a:f32[2]. let  in (a,) }\n";
  ASSERT_EQ(::mkfifo(P("g.npz").c_str(), 0644), 0);
  auto npz_fifo = LoadBundle(P("g.jaxpr"));
  ASSERT_FALSE(npz_fifo.ok());
  EXPECT_THAT(std::string(npz_fifo.status().message()),
              HasSubstr("g.npz is a FIFO"));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
