// jax.export's checks of the argument shapes at run time: dimension_size and
// shape_assertion (plugin/program_plan.h). A module or bundle whose
// assertions hold runs as before; one fed argument shapes that break an
// assertion (a dim that one symbol names in two arguments, or a dimension
// variable below 1) fails in ONNX Runtime with an error naming the
// assertion's message, as the exported function fails in JAX, on both
// pipelines at opsets 23 and 17; the interpreter refuses the same inputs.
// A printed jaxpr without checks gets jax.export's
// (jaxpr/argument_shape_checks.h).
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/bundle_access.h"
#include "api/ort_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/io/bundle.h"

namespace jax2onnx {
namespace {

using ::testing::HasSubstr;

const std::string kSource = std::string(JAX2ONNX_SOURCE_DIR) + "/testdata/";

jaxpr::Array Ones(std::vector<int64_t> shape) {
  jaxpr::Array a(jaxpr::DType::kF32, shape);
  for (int64_t i = 0; i < a.num_elements(); ++i) a.SetFromDouble(i, 1.0);
  return a;
}

// Converts `file` and runs the model in ONNX Runtime on `inputs`.
absl::StatusOr<std::vector<jaxpr::Array>> RunInOrt(
    const std::string& file, bool ir, int opset,
    const std::vector<jaxpr::Array>& inputs) {
  auto bundle = LoadBundle(kSource + file);
  if (!bundle.ok()) return bundle.status();
  ConvertOptions options;
  options.read_environment = false;
  options.use_onnx_ir = ir;
  options.opset = opset;
  auto model = ToOnnx(*bundle, options);
  if (!model.ok()) return model.status();
  // ctest runs the cases of this file as parallel processes.
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/assert_", getpid(),
                   ir ? "_ir" : "_legacy", opset, ".onnx");
  {
    std::ofstream out(path, std::ios::binary);
    model->SerializeToOstream(&out);
  }
  api::NamedArrays named;
  for (size_t i = 0; i < inputs.size(); ++i) {
    named.emplace_back(model->graph().input(i).name(), inputs[i]);
  }
  auto got = api::OrtRunner::Shared().Run(path, named);
  std::remove(path.c_str());
  return got;
}

absl::StatusOr<std::vector<jaxpr::Array>> Interpret(
    const std::string& file, const std::vector<jaxpr::Array>& inputs) {
  auto bundle = LoadBundle(kSource + file);
  if (!bundle.ok()) return bundle.status();
  const jaxpr::Bundle& b = api::BundleAccess::Get(*bundle);
  return jaxpr::Evaluate(b.jaxpr(), b.consts, inputs);
}

constexpr char kEmptyAssertion[] =
    "shape assertion failed: Input shapes do not match the polymorphic "
    "shapes specification. Expected value >= 1 for dimension variable 'b'.";

struct Case {
  const char* file;
  // Inputs whose shapes satisfy the assertions, break the equality of two
  // dims named `b`, and make `b` zero.
  std::vector<std::vector<int64_t>> good, mismatched, empty;
  const char* mismatch_message;
  // What the interpreter says of b = 0; null: the program has no `b >= 1`
  // check (the converter adds only the consistency checks to a jaxpr), so
  // b = 0 runs.
  const char* interpreter_empty_message;
};

const std::vector<Case>& Cases() {
  static const auto* cases = new std::vector<Case>{
      {"primitives/shape_assertion/argument_dims.jaxpr",
       {{3, 4}, {3}},
       {{3, 4}, {1}},
       {{0, 4}, {0}},
       "Found inconsistency between dimension size args[1].shape[0] (= {0}) "
       "and the specification 'b' (= {1})",
       kEmptyAssertion},
      // No checks printed: the converter adds jax.export's consistency
      // checks.
      {"primitives/shape_assertion/implicit_argument_checks.jaxpr",
       {{3, 4}, {3}},
       {{3, 4}, {1}},
       {{0, 4}, {0}},
       "Found inconsistency between dimension size args[1].shape[0] (= {0}) "
       "and the specification 'b' (= {1})",
       nullptr},
      {"stablehlo_export/symbolic_two_args.mlir",
       {{3, 4}, {3, 4}},
       {{3, 4}, {1, 4}},
       {{0, 4}, {0, 4}},
       "Found inconsistency between dimension size args[1].shape[0] (= {0}) "
       "and the specification 'b' (= {1})",
       kEmptyAssertion},
  };
  return *cases;
}

std::vector<jaxpr::Array> OnesOf(const std::vector<std::vector<int64_t>>& s) {
  std::vector<jaxpr::Array> out;
  for (const auto& shape : s) out.push_back(Ones(shape));
  return out;
}

TEST(ShapeAssertion, OnnxRuntimeFailsWhereTheExportedFunctionWould) {
  std::string why;
  if (!api::OrtRunner::Shared().IsAvailable(&why)) GTEST_SKIP() << why;
  for (const Case& c : Cases()) {
    for (bool ir : {false, true}) {
      for (int opset : {23, 17}) {
        SCOPED_TRACE(
            absl::StrCat(c.file, ir ? " ir" : " legacy", " opset ", opset));
        auto good = RunInOrt(c.file, ir, opset, OnesOf(c.good));
        ASSERT_TRUE(good.ok()) << good.status();
        auto want = Interpret(c.file, OnesOf(c.good));
        ASSERT_TRUE(want.ok()) << want.status();
        ASSERT_EQ(good->size(), want->size());
        for (size_t i = 0; i < want->size(); ++i) {
          EXPECT_EQ((*good)[i].shape(), (*want)[i].shape());
          auto bytes = [](const jaxpr::Array& a) {
            return std::vector<uint8_t>(a.bytes().begin(), a.bytes().end());
          };
          EXPECT_EQ(bytes((*good)[i]), bytes((*want)[i])) << "output " << i;
        }
        // Broadcasting would accept a size-1 dim: the check refuses it.
        auto mismatched = RunInOrt(c.file, ir, opset, OnesOf(c.mismatched));
        ASSERT_FALSE(mismatched.ok());
        EXPECT_THAT(mismatched.status().message(),
                    HasSubstr(absl::StrCat("shape_assertion: ",
                                           "Input shapes do not match the "
                                           "polymorphic shapes specification. ",
                                           c.mismatch_message)));
        auto empty = RunInOrt(c.file, ir, opset, OnesOf(c.empty));
        if (c.interpreter_empty_message == nullptr) {
          EXPECT_TRUE(empty.ok()) << empty.status();
          continue;
        }
        ASSERT_FALSE(empty.ok());
        EXPECT_THAT(
            empty.status().message(),
            HasSubstr("Expected value >= 1 for dimension variable 'b'"));
      }
    }
  }
}

TEST(ShapeAssertion, InterpreterRefusesTheSameShapes) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.file);
    EXPECT_TRUE(Interpret(c.file, OnesOf(c.good)).ok());
    EXPECT_FALSE(Interpret(c.file, OnesOf(c.mismatched)).ok());
    auto empty = Interpret(c.file, OnesOf(c.empty));
    if (c.interpreter_empty_message == nullptr) {
      EXPECT_TRUE(empty.ok()) << empty.status();
      continue;
    }
    ASSERT_FALSE(empty.ok());
    EXPECT_THAT(empty.status().message(),
                HasSubstr(c.interpreter_empty_message));
  }
}

TEST(ShapeAssertion, InsideALoopBodyIsRefused) {
  constexpr char kText[] = R"({ lambda ; a:f32[b] c:i32[]. let
    d:f32[b] = cond[
      branches=(
        { lambda ; e:f32[b]. let  in (e,) }
        { lambda ; f:f32[b]. let
            g:i32[] = dimension_size[dimension=0] f
            h:bool[] = ge g 1:i32[]
            shape_assertion[error_message=b >= 1] h g
          in (f,) }
      )
    ] c a
  in (d,) })";
  for (bool ir : {false, true}) {
    ConvertOptions options;
    options.read_environment = false;
    options.use_onnx_ir = ir;
    auto model = ToOnnxFromText(kText, {}, options);
    ASSERT_FALSE(model.ok());
    EXPECT_THAT(model.status().message(),
                HasSubstr("a shape assertion inside a loop or cond body"));
  }
}

}  // namespace
}  // namespace jax2onnx
