// Tests of LoadBundle: header fields, npz entry classification, and the
// validation errors for counts, dtypes, shapes, symbolic dims, missing
// consts/literals and index gaps; plus real vectors checked against their
// own jaxpr avals.
#include "jaxpr/io/bundle.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/io/npy.h"

namespace jax2onnx::jaxpr {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kTwoInputs[] = R"(# source: test
# rtol: 1e-3
# atol: 2.5e-4
# markers: slow, x64  gpu
{ lambda ; a:f32[B,3] b:f32[B]. let
    c:f32[B,3] = mul a a
  in (c, b) }
)";

class BundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrCat(
               "bundle_test_",
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  // Writes NAME.jaxpr (and NAME.npz unless `arrays` is null); returns the
  // .jaxpr path.
  std::string Write(const std::string& name, const std::string& text,
                    const NamedArrays* arrays) {
    const std::string stem = (dir_ / name).string();
    std::ofstream(stem + ".jaxpr") << text;
    if (arrays != nullptr) {
      EXPECT_TRUE(WriteNpzFile(stem + ".npz", *arrays).ok());
    }
    return stem + ".jaxpr";
  }
  std::string Write(const std::string& name, const std::string& text,
                    const NamedArrays& arrays) {
    return Write(name, text, &arrays);
  }
  absl::Status LoadError(const std::string& text, const NamedArrays& arrays) {
    return LoadBundle(Write("b", text, &arrays)).status();
  }
  fs::path dir_;
};

Array F32(std::vector<int64_t> shape) { return Array(DType::kF32, shape); }

TEST_F(BundleTest, LoadsValuesAndHeaderFields) {
  const NamedArrays arrays = {{"input_0", F32({4, 3})},
                              {"input_1", F32({4})},
                              {"expected_0", F32({4, 3})},
                              {"expected_1", F32({4})},
                              {"notes", Array(DType::kI8, {2})}};
  auto b = LoadBundle(Write("two", kTwoInputs, &arrays));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->name, "two");
  EXPECT_EQ(b->npz_path, (dir_ / "two.npz").string());
  EXPECT_EQ(b->inputs.size(), 2u);
  EXPECT_EQ(b->expected.size(), 2u);
  EXPECT_TRUE(b->has_inputs());
  EXPECT_TRUE(b->has_expected());
  ASSERT_TRUE(b->rtol.has_value());
  EXPECT_EQ(*b->rtol, 1e-3);
  EXPECT_EQ(*b->atol, 2.5e-4);
  EXPECT_THAT(b->markers, ElementsAre("slow", "x64", "gpu"));
  EXPECT_TRUE(b->HasMarker("x64"));
  EXPECT_FALSE(b->HasMarker("fast"));
}

TEST_F(BundleTest, AcceptsStemOrNpzPathAndMissingNpz) {
  const NamedArrays arrays = {{"input_0", F32({2, 3})}, {"input_1", F32({2})}};
  Write("s", kTwoInputs, &arrays);
  EXPECT_TRUE(LoadBundle((dir_ / "s").string()).ok());
  EXPECT_TRUE(LoadBundle((dir_ / "s.npz").string()).ok());
  auto bare = LoadBundle(Write("bare", kTwoInputs, nullptr));
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->npz_path, "");
  EXPECT_FALSE(bare->has_inputs());
  EXPECT_TRUE(bare->rtol.has_value());  // the header needs no npz
  EXPECT_EQ(LoadBundle((dir_ / "nothing").string()).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(BundleTest, WrongDTypeNamesEntryAndInvar) {
  const std::string text = R"({ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = add a b
  in (c,) })";
  const absl::Status s = LoadError(
      text, {{"input_0", F32({3})}, {"input_1", Array(DType::kI32, {3})}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("input_1: dtype int32 does not match invar b:f32[3]"));
}

// A key-typed input is stored as its key data (jax.random.key_data): a
// key<fry>[2] input is u32[2, 2]; anything else is refused by shape or dtype.
TEST_F(BundleTest, KeyInputsAreTheirKeyData) {
  const std::string text = R"({ lambda ; a:key<fry>[2]. let
    b:u32[2,2] = random_unwrap a
  in (b,) })";
  const NamedArrays ok = {{"input_0", Array(DType::kU32, {2, 2})}};
  EXPECT_TRUE(LoadBundle(Write("keys", text, &ok)).ok());
  EXPECT_THAT(LoadError(text, {{"input_0", Array(DType::kU32, {2})}}).message(),
              HasSubstr("input_0: shape [2] does not match invar"));
  EXPECT_THAT(
      LoadError(text, {{"input_0", Array(DType::kI32, {2, 2})}}).message(),
      HasSubstr("input_0: dtype int32 does not match invar"));
}

TEST_F(BundleTest, WrongShapeAndWrongCount) {
  const std::string text = R"({ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = add a b
  in (c,) })";
  EXPECT_THAT(
      LoadError(text, {{"input_0", F32({3})}, {"input_1", F32({4})}}).message(),
      HasSubstr("input_1: shape [4] does not match invar b:f32[3]"));
  EXPECT_THAT(LoadError(text, {{"input_0", F32({3})}}).message(),
              HasSubstr("missing input_1 for invar b:f32[3]"));
  EXPECT_THAT(LoadError(text, {{"input_0", F32({3})},
                               {"input_1", F32({3})},
                               {"input_2", F32({3})}})
                  .message(),
              HasSubstr("has 3 input_i arrays but the jaxpr has 2 invars"));
  EXPECT_THAT(LoadError(text, {{"input_0", F32({3})},
                               {"input_1", F32({3})},
                               {"expected_0", F32({3, 1})}})
                  .message(),
              HasSubstr("expected_0: shape [3,1] does not match outvar "
                        "c:f32[3]"));
  EXPECT_THAT(
      LoadError(text, {{"expected_0", F32({3})}, {"expected_1", F32({3})}})
          .message(),
      HasSubstr("has 2 expected_i arrays but the jaxpr has 1 outvars"));
}

TEST_F(BundleTest, GapsInIndicesAreErrors) {
  const std::string text = R"({ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = add a b
  in (c,) })";
  EXPECT_THAT(
      LoadError(text, {{"input_0", F32({3})}, {"input_2", F32({3})}}).message(),
      HasSubstr("input_2 is present but input_1 is missing"));
}

TEST_F(BundleTest, SymbolicDimsMustAgreeAcrossInputs) {
  // a:f32[B,3] binds B = 4; b:f32[B] of size 5 contradicts it.
  const absl::Status s =
      LoadError(kTwoInputs, {{"input_0", F32({4, 3})}, {"input_1", F32({5})}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input_1: dimension 0 is 5 but B = 4 "
                                     "from input_0 (a:f32[B,3])"));
  // Outputs are checked under the same bindings.
  EXPECT_THAT(LoadError(kTwoInputs, {{"input_0", F32({4, 3})},
                                     {"input_1", F32({4})},
                                     {"expected_0", F32({2, 3})},
                                     {"expected_1", F32({4})}})
                  .message(),
              HasSubstr("expected_0: dimension 0 is 2 but B = 4"));
}

TEST_F(BundleTest, LinearSymbolicDimsAreSolved) {
  // 2*b + 1 = 7 gives b = 3, so the second input f32[b] must have size 3.
  const std::string text = R"({ lambda ; a:f32[2*b + 1] c:f32[b]. let
  in (c,) })";
  EXPECT_TRUE(LoadBundle(Write("lin", text,
                               NamedArrays{{"input_0", F32({7})},
                                           {"input_1", F32({3})}}))
                  .ok());
  EXPECT_THAT(
      LoadError(text, {{"input_0", F32({7})}, {"input_1", F32({4})}}).message(),
      HasSubstr("input_1"));
  // An even size cannot be 2*b + 1.
  EXPECT_THAT(
      LoadError(text, {{"input_0", F32({8})}, {"input_1", F32({4})}}).message(),
      HasSubstr("input_0"));
}

TEST_F(BundleTest, MissingConstAndConstValidation) {
  const std::string text = R"({ lambda a:f32[3] b:i32[]; c:f32[3]. let
    d:f32[3] = add a c
  in (d,) })";
  EXPECT_THAT(LoadError(text, {{"input_0", F32({3})}}).message(),
              HasSubstr("missing const_0 for constvar a:f32[3]"));
  EXPECT_THAT(LoadError(text, {{"const_0", F32({3})}}).message(),
              HasSubstr("missing const_1 for constvar b:i32[]"));
  EXPECT_THAT(
      LoadError(text,
                {{"const_0", F32({3})}, {"const_1", Array(DType::kI64, {})}})
          .message(),
      HasSubstr("const_1: dtype int64 does not match constvar b:i32[]"));
  // Without any npz the missing const is still named.
  auto bare = LoadBundle(Write("noconst", text, nullptr));
  EXPECT_THAT(bare.status().message(), HasSubstr("missing const_0"));
  auto ok = LoadBundle(Write(
      "withconst", text,
      NamedArrays{{"const_0", F32({3})}, {"const_1", Array(DType::kI32, {})}}));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->consts.size(), 2u);
  EXPECT_FALSE(ok->has_inputs());
}

TEST_F(BundleTest, ElidedLiteralsNeedLiteralEntries) {
  const std::string text = R"({ lambda ; a:f32[3]. let
    b:f32[3] = add a [...]:f32[3]
    c:f32[3] = mul b [...]:f32[3]
  in (c,) })";
  EXPECT_THAT(LoadError(text, {{"literal_0", F32({3})}}).message(),
              HasSubstr("missing literal_1 for elided literal [...]:f32[3]"));
  EXPECT_THAT(
      LoadError(text, {{"literal_0", F32({3})}, {"literal_1", F32({2})}})
          .message(),
      HasSubstr("literal_1: shape [2] does not match literal"));
  auto ok = LoadBundle(
      Write("lits", text,
            NamedArrays{{"literal_0", F32({3})}, {"literal_1", F32({3})}}));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->literals.size(), 2u);
}

TEST_F(BundleTest, BadHeaderNumberIsAnError) {
  const std::string text = "# rtol: tight\n{ lambda ; . let  in () }\n";
  EXPECT_THAT(LoadBundle(Write("h", text, nullptr)).status().message(),
              HasSubstr("rtol"));
}

TEST_F(BundleTest, SetBundleInputsReplacesAndValidates) {
  const NamedArrays arrays = {{"input_0", F32({4, 3})},
                              {"input_1", F32({4})},
                              {"expected_0", F32({4, 3})},
                              {"expected_1", F32({4})}};
  auto b = LoadBundle(Write("set", kTwoInputs, &arrays));
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE(SetBundleInputs(&*b,
                              {{"input_0", F32({2, 3})}, {"input_1", F32({2})}},
                              "other.npz")
                  .ok());
  EXPECT_EQ(b->inputs[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(b->expected.empty());
  const absl::Status bad = SetBundleInputs(
      &*b, {{"input_0", F32({2, 3})}, {"input_1", F32({3})}}, "other.npz");
  EXPECT_THAT(bad.message(), HasSubstr("other.npz: input_1"));
  EXPECT_EQ(b->inputs[1].shape(), (std::vector<int64_t>{2}));  // unchanged
}

// Real vectors: every npz entry must match the avals of its own jaxpr, and
// the reader must agree with the avals by dtype and shape.
TEST_F(BundleTest, RealVectorsMatchTheirJaxprAvals) {
  const fs::path vectors = fs::path(JAX2ONNX_VECTORS_DIR);
  ASSERT_TRUE(fs::is_directory(vectors))
      << vectors << " (checked in) is missing";
  int checked = 0;
  for (const char* group :
       {"gather", "scatter_add", "sort", "dot_general", "interp_pad"}) {
    for (const auto& entry : fs::directory_iterator(vectors / group)) {
      if (entry.path().extension() != ".jaxpr") continue;
      auto b = LoadBundle(entry.path().string());
      ASSERT_TRUE(b.ok()) << b.status();
      ASSERT_EQ(b->inputs.size(), b->jaxpr().invars.size()) << entry.path();
      ASSERT_EQ(b->expected.size(), b->jaxpr().outvars.size()) << entry.path();
      for (size_t i = 0; i < b->inputs.size(); ++i) {
        const Aval& aval = b->jaxpr().invars[i]->aval;
        EXPECT_EQ(b->inputs[i].dtype(), aval.dtype) << entry.path();
        EXPECT_EQ(b->inputs[i].shape(), *aval.StaticShape()) << entry.path();
      }
      for (size_t i = 0; i < b->expected.size(); ++i) {
        const Var* v = b->jaxpr().outvars[i].var;
        if (v == nullptr) continue;
        EXPECT_EQ(b->expected[i].dtype(), v->aval.dtype) << entry.path();
        EXPECT_EQ(b->expected[i].shape(), *v->aval.StaticShape())
            << entry.path();
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 10);
}

}  // namespace
}  // namespace jax2onnx::jaxpr
