// Ill-typed inputs through the public ToOnnx on both pipelines: every
// registered primitive with no operands, a valid use of each primitive
// (found in testdata/) with its last operand dropped, and with a variable
// operand replaced by an untyped literal. Each must come back as a clean
// FILE:LINE:COL error (or, for the literal swap, a valid conversion), never
// a crash; before the type checker, 58 primitives segfaulted on the first
// sweep and gather read past its operand list on the second.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/check.h"
#include "api/convert_internal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/mesh.h"
#include "jaxpr/text/parser.h"
#include "plugin/registry.h"
#include "tests/ort_accepts.h"

namespace jax2onnx {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;
// The internal bundle: the sweeps edit equations before converting.
using jaxpr::Bundle;
using jaxpr::LoadBundle;

std::vector<std::string> RegisteredPrimitives() {
  api::RegisterAllLowerings();
  std::vector<std::string> names;
  for (const plugin::PrimitiveEntry* e : plugin::Registry::Global().Entries()) {
    names.push_back(e->name);
  }
  return names;
}

absl::StatusOr<onnx::ModelProto> Convert(const Bundle& bundle, bool ir) {
  ConvertOptions options;
  options.use_onnx_ir = ir;
  return api::ConvertWithPipeline(
      ir ? api::Pipeline::kIr : api::Pipeline::kLegacy, bundle, options);
}

// A mutated bundle that is still well typed converts; its model must be
// one ONNX Runtime accepts (tests/ort_accepts.h), run on the bundle's own
// inputs (the mutations keep the signature).
void ExpectOrtAcceptsOnBundleInputs(const onnx::ModelProto& model,
                                    const Bundle& bundle) {
  std::string reason;
  if (!api::OrtRunner::Shared().IsAvailable(&reason)) return;
  auto inputs = api::InputsFor(bundle, api::CheckOptions{});
  ASSERT_TRUE(inputs.ok()) << bundle.file.path << ": " << inputs.status();
  absl::Status status = ort_accepts::OrtAcceptsOn(model, *inputs);
  EXPECT_TRUE(status.ok()) << bundle.file.path << ": " << status;
}

TEST(IllTypedSweepTest, EveryPrimitiveWithNoOperandsIsACleanError) {
  for (const std::string& prim : RegisteredPrimitives()) {
    const std::string text = absl::StrCat(
        "{ lambda ; a:f32[3]. let\n    b:f32[3] = ", prim, " \n  in (b,) }");
    auto file = jaxpr::ParseJaxprText(text, "zero.jaxpr");
    ASSERT_TRUE(file.ok()) << prim << ": " << file.status();
    Bundle bundle;
    bundle.file = *std::move(file);
    for (bool ir : {false, true}) {
      auto model = Convert(bundle, ir);
      ASSERT_FALSE(model.ok()) << prim << " (ir=" << ir << ") converted";
      if (absl::c_linear_search(jaxpr::RefusedPrimitives(), prim)) {
        // Well typed with no operands (a callback may take none); refused
        // by its lowering with the reason, at the equation.
        EXPECT_THAT(std::string(model.status().message()),
                    HasSubstr(absl::StrCat("'", prim, "' at line 2:5: ")))
            << "ir=" << ir;
        continue;
      }
      EXPECT_THAT(
          std::string(model.status().message()),
          StartsWith(absl::StrCat("zero.jaxpr:2:5: error: '", prim, "'")))
          << "ir=" << ir;
    }
  }
}

// Loading rewrites ref programs (the state primitives are discharged to
// SSA values, jaxpr/state/discharge.h): their equations are not where the
// parsed file has them, and are not swept.
bool StillThere(const Bundle& bundle, const std::string& prim, int index) {
  const auto& eqns = bundle.file.main->eqns;
  return index < static_cast<int>(eqns.size()) &&
         eqns[index].primitive == prim;
}

// First top-level equation of each primitive in testdata/, as (file, index).
std::map<std::string, std::pair<std::string, int>> FirstUses() {
  std::map<std::string, std::pair<std::string, int>> uses;
  std::vector<std::string> paths;
  for (const auto& entry : fs::recursive_directory_iterator(
           fs::path(JAX2ONNX_SOURCE_DIR) / "testdata")) {
    if (entry.path().extension() == ".jaxpr") {
      paths.push_back(entry.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  for (const std::string& path : paths) {
    auto file = jaxpr::ParseJaxprFile(path);
    if (!file.ok()) continue;
    const auto& eqns = file->main->eqns;
    for (size_t i = 0; i < eqns.size(); ++i) {
      if (eqns[i].inputs.empty()) continue;
      uses.emplace(eqns[i].primitive,
                   std::make_pair(path, static_cast<int>(i)));
    }
  }
  return uses;
}

TEST(IllTypedSweepTest, DroppedLastOperandIsACleanError) {
  const auto uses = FirstUses();
  EXPECT_GT(uses.size(), 80u);
  for (const auto& [prim, use] : uses) {
    auto bundle = LoadBundle(use.first);
    if (!bundle.ok() || !StillThere(*bundle, prim, use.second)) continue;
    jaxpr::Eqn& eqn = bundle->file.main->eqns[use.second];
    eqn.inputs.pop_back();
    for (bool ir : {false, true}) {
      auto model = Convert(*bundle, ir);
      // select_n with one case fewer can still be well typed, and so can a
      // debug print of one value fewer (debug_print/debug_callback take any
      // number of operands) or a shape assertion quoting one value fewer;
      // the model must then be one ORT accepts.
      if ((prim == "select_n" || prim == "debug_print" ||
           prim == "debug_callback" || prim == "shape_assertion") &&
          model.ok()) {
        ExpectOrtAcceptsOnBundleInputs(*model, *bundle);
        continue;
      }
      ASSERT_FALSE(model.ok()) << prim << " in " << use.first << " (ir=" << ir
                               << ") converted with an operand missing";
      EXPECT_THAT(std::string(model.status().message()),
                  StartsWith(bundle->file.path + ":"))
          << prim << ": " << model.status();
    }
  }
}

TEST(IllTypedSweepTest, LiteralInPlaceOfAVariableNeverCrashes) {
  for (const auto& [prim, use] : FirstUses()) {
    auto bundle = LoadBundle(use.first);
    if (!bundle.ok() || !StillThere(*bundle, prim, use.second)) continue;
    jaxpr::Eqn& eqn = bundle->file.main->eqns[use.second];
    for (jaxpr::Atom& a : eqn.inputs) {
      if (a.is_literal()) continue;
      jaxpr::Literal lit;
      lit.kind = jaxpr::Literal::Kind::kFloat;
      lit.text = "1.0";
      lit.float_value = 1.0;
      a = jaxpr::Atom::OfLiteral(lit);
      break;
    }
    for (bool ir : {false, true}) {
      auto model = Convert(*bundle, ir);
      if (model.ok()) {  // e.g. `add 1.0 b` is still well typed
        ExpectOrtAcceptsOnBundleInputs(*model, *bundle);
        continue;
      }
      EXPECT_FALSE(absl::StrContains(model.status().message(), "Internal"))
          << prim << ": " << model.status();
      EXPECT_FALSE(model.status().message().empty()) << prim;
    }
  }
}

}  // namespace
}  // namespace jax2onnx
