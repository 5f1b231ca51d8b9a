// End-to-end tests of `jax2onnx randomize`: runs the built binary on small
// jaxprs written here and checks the npz it writes (entries, shapes, ranges,
// symbol bindings, determinism) and that it refuses to clobber JAX outputs.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/io/npy.h"
#include "tests/cli_fixture.h"

namespace jax2onnx::jaxpr {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A constvar, symbolic dims B (first seen) and T, an int input and an elided
// literal: every kind of entry randomize writes.
constexpr char kProgram[] = R"({ lambda a:f32[3]; b:f32[B,T] c:i32[T]. let
    d:f32[B,T] = mul b 2.0:f32[]
  in (d, c, a, [...]:f32[2,2]) }
)";

class RandomizeCliTest : public testing_util::CliFixture {
 protected:
  RandomizeCliTest() : CliFixture("randomize_cli_test_") {}
  void SetUp() override {
    CliFixture::SetUp();
    if (IsSkipped()) return;
    std::ofstream((dir_ / "p.jaxpr").string()) << kProgram;
  }
  int Run(const std::string& args, std::string* output = nullptr) {
    testing_util::ShellResult shell = testing_util::RunShell(
        absl::StrCat(binary_, " randomize ", args, " 2>&1"));
    if (output != nullptr) *output = std::move(shell.output);
    return shell.exit_code;
  }
  std::map<std::string, Array> ReadNpz() {
    std::map<std::string, Array> out;
    auto arrays = ReadNpzFile(P("p.npz"));
    EXPECT_TRUE(arrays.ok()) << arrays.status();
    if (arrays.ok()) {
      for (auto& [name, a] : *arrays) out[name] = a;
    }
    return out;
  }
  std::string ReadBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

TEST_F(RandomizeCliTest, WritesEveryEntryWithShapesFromSizesAndLoads) {
  std::string out;
  ASSERT_EQ(Run(absl::StrCat(P("p.jaxpr"), " --sizes=B=4"), &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("B=4"));
  // T is not named: it is the second symbol, so it gets the default 3.
  EXPECT_THAT(out, HasSubstr("T=3"));
  std::map<std::string, Array> npz = ReadNpz();
  ASSERT_EQ(npz.size(), 4u);
  EXPECT_THAT(npz["const_0"].shape(), ElementsAre(3));
  EXPECT_THAT(npz["literal_0"].shape(), ElementsAre(2, 2));
  EXPECT_THAT(npz["input_0"].shape(), ElementsAre(4, 3));
  EXPECT_THAT(npz["input_1"].shape(), ElementsAre(3));
  EXPECT_EQ(npz["input_1"].dtype(), DType::kI32);
  for (int64_t i = 0; i < npz["input_0"].num_elements(); ++i) {
    const double v = npz["input_0"].GetAsDouble(i);
    EXPECT_GE(v, -1.0);
    EXPECT_LE(v, 1.0);
  }
  auto bundle = LoadBundle(P("p.jaxpr"));
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  EXPECT_FALSE(bundle->has_expected());
}

TEST_F(RandomizeCliTest, DefaultSizesAreTwoThreeInOrderOfAppearance) {
  ASSERT_EQ(Run(P("p.jaxpr")), 0);
  EXPECT_THAT(ReadNpz()["input_0"].shape(), ElementsAre(2, 3));
}

TEST_F(RandomizeCliTest, SameSeedSameBytesOtherSeedOtherValues) {
  ASSERT_EQ(Run(absl::StrCat(P("p.jaxpr"), " --seed=7")), 0);
  const std::string first = ReadBytes(P("p.npz"));
  ASSERT_EQ(Run(absl::StrCat(P("p.jaxpr"), " --seed=7 --force")), 0);
  EXPECT_EQ(ReadBytes(P("p.npz")), first);
  ASSERT_EQ(Run(absl::StrCat(P("p.jaxpr"), " --seed=8 --force")), 0);
  EXPECT_NE(ReadBytes(P("p.npz")), first);
}

TEST_F(RandomizeCliTest, IntRangeBoundsIntegerValues) {
  ASSERT_EQ(Run(absl::StrCat(P("p.jaxpr"), " --int_range=0,1 --sizes=T=50")),
            0);
  const Array ints = ReadNpz()["input_1"];
  ASSERT_EQ(ints.num_elements(), 50);
  bool saw[2] = {false, false};
  for (int64_t i = 0; i < ints.num_elements(); ++i) {
    const int64_t v = ints.GetAsInt64(i);
    ASSERT_TRUE(v == 0 || v == 1) << v;
    saw[v] = true;
  }
  // 50 fair draws all equal has probability 2^-49.
  EXPECT_TRUE(saw[0] && saw[1]);
}

// The span of the full range is 2^64: `hi - lo + 1` wrapped to 0 and the draw
// divided by it (SIGFPE, rc 136). Each dtype takes the range clipped to the
// values it holds, so one flag spans i8, u8, i64 and u64 whole.
TEST_F(RandomizeCliTest, FullIntegerRangeIsClippedToEachDtype) {
  std::ofstream((dir_ / "w.jaxpr").string())
      << "{ lambda ; a:i8[64] b:u8[64] c:i64[64] d:u64[64]. let  in "
         "(a, b, c, d) }\n";
  std::string out;
  ASSERT_EQ(Run(absl::StrCat(P("w.jaxpr"),
                             " --int_range=-9223372036854775808,"
                             "18446744073709551615"),
                &out),
            0)
      << out;
  auto arrays = ReadNpzFile(P("w.npz"));
  ASSERT_TRUE(arrays.ok()) << arrays.status();
  std::map<std::string, Array> npz(arrays->begin(), arrays->end());
  // i8 and u8 spread over both halves of their range.
  bool i8_negative = false, i8_positive = false, u8_high = false;
  for (int64_t i = 0; i < 64; ++i) {
    const int64_t v = npz["input_0"].GetAsInt64(i);
    i8_negative |= v < 0;
    i8_positive |= v > 0;
    u8_high |= npz["input_1"].GetAsInt64(i) > 127;
  }
  EXPECT_TRUE(i8_negative && i8_positive && u8_high);
  // i64 and u64 draw from their whole range: some value beyond 32 bits.
  bool wide_i64 = false, wide_u64 = false;
  for (int64_t i = 0; i < 64; ++i) {
    const int64_t s = npz["input_2"].GetAsInt64(i);
    wide_i64 |= s > (int64_t{1} << 40) || s < -(int64_t{1} << 40);
    const uint64_t u = static_cast<uint64_t>(npz["input_3"].GetAsInt64(i));
    wide_u64 |= u > (uint64_t{1} << 63);
  }
  EXPECT_TRUE(wide_i64);
  EXPECT_TRUE(wide_u64);
  EXPECT_THAT(out, HasSubstr("4 input"));
}

// Before, 100..1000 stored as i8 wrapped (300 -> 44); clipped, it is 100..127.
TEST_F(RandomizeCliTest, RangeBeyondADtypeIsClippedNotWrapped) {
  std::ofstream((dir_ / "n.jaxpr").string())
      << "{ lambda ; a:i8[64]. let  in (a,) }\n";
  ASSERT_EQ(Run(absl::StrCat(P("n.jaxpr"), " --int_range=100,1000")), 0);
  auto arrays = ReadNpzFile(P("n.npz"));
  ASSERT_TRUE(arrays.ok()) << arrays.status();
  const Array& a = arrays->begin()->second;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    EXPECT_GE(a.GetAsInt64(i), 100);
    EXPECT_LE(a.GetAsInt64(i), 127);
  }
}

TEST_F(RandomizeCliTest, RejectsARangeBeyondSixtyFourBits) {
  std::string out;
  EXPECT_EQ(
      Run(absl::StrCat(P("p.jaxpr"), " --int_range=0,18446744073709551616"),
          &out),
      2);
  EXPECT_THAT(out, HasSubstr("--int_range must be LO,HI"));
}

TEST_F(RandomizeCliTest, RefusesToOverwriteExpectedOutputs) {
  Array expected(DType::kF32, {});
  ASSERT_TRUE(WriteNpzFile(P("p.npz"), {{"expected_0", expected}}).ok());
  const std::string before = ReadBytes(P("p.npz"));
  std::string out;
  EXPECT_EQ(Run(P("p.jaxpr"), &out), 1);
  EXPECT_THAT(out, HasSubstr("expected_0"));
  EXPECT_EQ(ReadBytes(P("p.npz")), before);
}

TEST_F(RandomizeCliTest, KeepsExistingWeightsAndInputsUnlessForced) {
  Array weight(DType::kF32, {3});
  weight.SetFromDouble(0, 42);
  Array input(DType::kF32, {2, 3});
  ASSERT_TRUE(
      WriteNpzFile(P("p.npz"), {{"const_0", weight}, {"input_0", input}}).ok());
  const std::string before = ReadBytes(P("p.npz"));
  std::string out;
  EXPECT_EQ(Run(P("p.jaxpr"), &out), 1);
  // The error names every entry it refuses to replace, and how to force.
  EXPECT_THAT(out, HasSubstr("const_0, input_0"));
  EXPECT_THAT(out, HasSubstr("--force"));
  EXPECT_EQ(ReadBytes(P("p.npz")), before);

  ASSERT_EQ(Run(absl::StrCat(P("p.jaxpr"), " --force"), &out), 0) << out;
  EXPECT_NE(ReadBytes(P("p.npz")), before);
  EXPECT_NE(ReadNpz()["const_0"].GetAsDouble(0), 42);
}

TEST_F(RandomizeCliTest, ForceStillKeepsExpectedOutputs) {
  Array expected(DType::kF32, {});
  ASSERT_TRUE(WriteNpzFile(P("p.npz"), {{"expected_0", expected}}).ok());
  std::string out;
  EXPECT_EQ(Run(absl::StrCat(P("p.jaxpr"), " --force"), &out), 1);
  EXPECT_THAT(out, HasSubstr("expected_0"));
}

TEST_F(RandomizeCliTest, RejectsSizeForUnknownSymbol) {
  std::string out;
  EXPECT_EQ(Run(absl::StrCat(P("p.jaxpr"), " --sizes=N=4"), &out), 1);
  EXPECT_THAT(out, HasSubstr("'N'"));
  EXPECT_FALSE(fs::exists(P("p.npz")));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
