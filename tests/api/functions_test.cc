// ConvertOptions::functions (the CLI's --functions): named calls become
// model-local ONNX functions, deduplicated by signature, nested, with
// symbolic dims read from the function's own inputs; numbers checked in
// ONNX Runtime against the reference interpreter; the legacy pipeline
// refuses the option. The bundles are testdata/functions/*.jaxpr (also run
// by the corpus through their `# functions:` header).
#include "converter2/functions.h"

#include <set>
#include <string>
#include <vector>

#include "api/bundle_access.h"
#include "api/check.h"
#include "api/shadow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/text/parser.h"
#include "tests/ort_accepts.h"

namespace jax2onnx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kDir =
    std::string(JAX2ONNX_SOURCE_DIR) + "/testdata/functions/";

ConvertOptions IrOptions(std::vector<std::string> functions, int opset = 23) {
  ConvertOptions options;
  options.read_environment = false;
  options.use_onnx_ir = true;
  options.opset = opset;
  options.functions = std::move(functions);
  return options;
}

onnx::ModelProto ConvertFile(const std::string& name,
                             const ConvertOptions& options) {
  auto bundle = LoadBundle(kDir + name);
  CHECK(bundle.ok()) << bundle.status();
  auto model = ToOnnx(*bundle, options);
  CHECK(model.ok()) << model.status();
  return *model;
}

std::vector<std::string> CalledOps(const onnx::ModelProto& m) {
  std::vector<std::string> ops;
  for (const auto& n : m.graph().node()) {
    if (n.domain() == converter2::kFunctionDomain) ops.push_back(n.op_type());
  }
  return ops;
}

std::vector<std::string> FunctionNames(const onnx::ModelProto& m) {
  std::vector<std::string> names;
  for (const auto& f : m.functions()) names.push_back(f.name());
  return names;
}

const onnx::FunctionProto* FindFunction(const onnx::ModelProto& m,
                                        const std::string& name) {
  for (const auto& f : m.functions()) {
    if (f.name() == name) return &f;
  }
  return nullptr;
}

std::vector<std::string> NodeOps(const onnx::FunctionProto& f) {
  std::vector<std::string> ops;
  for (const auto& n : f.node()) ops.push_back(n.op_type());
  return ops;
}

// Every node input of `f` is a function input or an earlier node output:
// nothing refers to the main graph (a FunctionProto cannot see it).
void ExpectSelfContained(const onnx::FunctionProto& f) {
  std::set<std::string> defined(f.input().begin(), f.input().end());
  for (const auto& n : f.node()) {
    for (const std::string& in : n.input()) {
      if (in.empty()) continue;
      EXPECT_TRUE(defined.contains(in))
          << "function " << f.name() << ": node " << n.name() << " reads '"
          << in << "', which the function does not define";
    }
    for (const std::string& out : n.output()) defined.insert(out);
  }
  for (const std::string& out : f.output()) {
    EXPECT_TRUE(defined.contains(out)) << f.name() << " output " << out;
  }
}

int64_t DomainVersion(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
    const std::string& domain) {
  for (const auto& o : imports) {
    if (o.domain() == domain) return o.version();
  }
  return -1;
}

TEST(FunctionsTest, EqualCallsShareOneFunctionOtherAvalsGetASibling) {
  for (int opset : {23, 17}) {
    SCOPED_TRACE(opset);
    const onnx::ModelProto m = ConvertFile(
        "shared_nested.jaxpr", IrOptions({"_dense", "_act"}, opset));
    // Two calls on f32[2,4] share `_dense`; the f32[3,4] call gets
    // `_dense_1`; each calls its own `_act` (nested, added first).
    EXPECT_THAT(CalledOps(m), ElementsAre("_dense", "_dense", "_dense_1"));
    EXPECT_THAT(FunctionNames(m),
                ElementsAre("_act", "_dense", "_act_1", "_dense_1"));
    EXPECT_EQ(DomainVersion(m.opset_import(), converter2::kFunctionDomain), 1);
    for (const auto& f : m.functions()) {
      SCOPED_TRACE(f.name());
      EXPECT_EQ(f.domain(), converter2::kFunctionDomain);
      EXPECT_EQ(DomainVersion(f.opset_import(), ""), opset);
      ExpectSelfContained(f);
    }
    // The literal 2.0 of the body is a Constant node there, not a main
    // graph initializer.
    const onnx::FunctionProto* act = FindFunction(m, "_act");
    ASSERT_NE(act, nullptr);
    EXPECT_THAT(NodeOps(*act), ElementsAre("Constant", "Tanh", "Mul"));
    EXPECT_EQ(DomainVersion(act->opset_import(), converter2::kFunctionDomain),
              -1);
    const onnx::FunctionProto* dense = FindFunction(m, "_dense");
    ASSERT_NE(dense, nullptr);
    EXPECT_THAT(NodeOps(*dense), ElementsAre("MatMul", "_act"));
    EXPECT_EQ(DomainVersion(dense->opset_import(), converter2::kFunctionDomain),
              1);
    EXPECT_EQ(m.graph().initializer_size(), 0);
    EXPECT_ORT_ACCEPTS(m);
  }
}

TEST(FunctionsTest, SymbolicDimIsReadFromTheFunctionsOwnInput) {
  // The lowering (level 0) reads B for the broadcast to (B, 4) with a Shape
  // of the function's input. At level 2 the broadcast is gone (ReduceSum
  // keeps its axis and Div broadcasts it: reduce-keepdims and
  // expand-elimination on the propagated types); any Shape left must still
  // read the function's own input.
  for (int optimize : {0, 2}) {
    SCOPED_TRACE(optimize);
    ConvertOptions options = IrOptions({"_norm*", "softplus"});
    options.optimize = optimize;
    const onnx::ModelProto m = ConvertFile("symbolic_batch.jaxpr", options);
    // `_norm` through a shared `let` jaxpr, called twice; the named
    // custom_jvp_call becomes `softplus`.
    EXPECT_THAT(CalledOps(m), ElementsAre("_norm", "_norm", "softplus"));
    EXPECT_THAT(FunctionNames(m), ElementsAre("_norm", "softplus"));
    EXPECT_EQ(
        m.graph().input(0).type().tensor_type().shape().dim(0).dim_param(),
        "B");
    const onnx::FunctionProto* norm = FindFunction(m, "_norm");
    ASSERT_NE(norm, nullptr);
    int shapes = 0;
    for (const auto& n : norm->node()) {
      if (n.op_type() != "Shape") continue;
      ++shapes;
      EXPECT_EQ(n.input(0), norm->input(0)) << "B is read from the input";
    }
    if (optimize == 0) EXPECT_EQ(shapes, 1);
    ExpectSelfContained(*norm);
    EXPECT_ORT_ACCEPTS(m);
  }
}

TEST(FunctionsTest, NumbersMatchTheInterpreterAtBothOpsets) {
  std::string why;
  if (!api::OrtRunner::Shared().IsAvailable(&why)) GTEST_SKIP() << why;
  struct Case {
    const char* file;
    std::vector<std::string> globs;
  };
  for (const Case& c : {Case{"shared_nested.jaxpr", {"_dense", "_act"}},
                        Case{"symbolic_batch.jaxpr", {"_norm*", "softplus"}},
                        Case{"literal_operand.jaxpr", {"shift"}}}) {
    for (int opset : {23, 17}) {
      SCOPED_TRACE(std::string(c.file) + " opset " + std::to_string(opset));
      api::CheckOptions options;
      options.convert = IrOptions(c.globs, opset);
      const api::CheckResult r =
          api::CheckBundle(kDir + c.file, options, api::OrtRunner::Shared());
      EXPECT_TRUE(r.passed) << r.stage << ": " << r.reason;
      EXPECT_EQ(r.oracle, "interpreter");
    }
  }
}

TEST(FunctionsTest, ALiteralOperandIsAConstantOfTheBodyAndPartOfTheKey) {
  const onnx::ModelProto m =
      ConvertFile("literal_operand.jaxpr", IrOptions({"shift"}));
  // shift(a, 1.0) and shift(b, 1.0) share a function; shift(c, 2.0) gets
  // its own. Each takes only the variable operand.
  EXPECT_THAT(CalledOps(m), ElementsAre("shift", "shift", "shift_1"));
  for (const auto& n : m.graph().node()) {
    if (n.domain() == converter2::kFunctionDomain) EXPECT_EQ(n.input_size(), 1);
  }
  ASSERT_EQ(m.functions_size(), 2);
  for (const auto& f : m.functions()) {
    SCOPED_TRACE(f.name());
    EXPECT_EQ(f.input_size(), 1);
    EXPECT_EQ(NodeOps(f)[0], "Constant");
    ExpectSelfContained(f);
  }
  EXPECT_EQ(m.graph().initializer_size(), 0);
  EXPECT_ORT_ACCEPTS(m);
}

TEST(FunctionsTest, GlobsSelectWhichCallsBecomeFunctions) {
  const onnx::ModelProto only_act =
      ConvertFile("shared_nested.jaxpr", IrOptions({"_a?t"}));
  // `_dense` is inlined (its MatMul is in the main graph), `_act` is not.
  EXPECT_THAT(CalledOps(only_act), ElementsAre("_act", "_act", "_act_1"));
  EXPECT_THAT(FunctionNames(only_act), ElementsAre("_act", "_act_1"));
  EXPECT_ORT_ACCEPTS(only_act);

  const onnx::ModelProto none =
      ConvertFile("shared_nested.jaxpr", IrOptions({"nothing*"}));
  EXPECT_EQ(none.functions_size(), 0);
  EXPECT_EQ(DomainVersion(none.opset_import(), converter2::kFunctionDomain),
            -1);
}

TEST(FunctionsTest, AFunctionWhoseCallsAreDeadIsDropped) {
  constexpr char kProgram[] =
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[3] = pjit[name=unused jaxpr={ lambda ; c:f32[3]. let\n"
      "        d:f32[3] = sin c\n"
      "      in (d,) }] a\n"
      "    e:f32[3] = cos a\n"
      "  in (e,) }\n";
  auto m = ToOnnxFromText(kProgram, {}, IrOptions({"*"}));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->functions_size(), 0);
  EXPECT_EQ(DomainVersion(m->opset_import(), converter2::kFunctionDomain), -1);
  EXPECT_ORT_ACCEPTS(*m);
}

TEST(FunctionsTest, LegacyPipelineAndEmptyGlobsAreRefused) {
  ConvertOptions legacy = IrOptions({"_dense"});
  legacy.use_onnx_ir = false;
  auto bundle = LoadBundle(kDir + "shared_nested.jaxpr");
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  auto refused = ToOnnx(*bundle, legacy);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("functions (--functions) are implemented by the IR "
                        "pipeline only"));
  auto empty = ToOnnx(*bundle, IrOptions({"_dense", ""}));
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(),
              HasSubstr("functions: pattern 1 is empty"));
}

TEST(FunctionsTest, ABodyNeedingASymbolItsInputsLackIsRefusedPrecisely) {
  // The body broadcasts to (B, 3) but its only input is f32[3]: a function
  // cannot read B from the main graph's input. Inlined, it converts.
  constexpr char kProgram[] =
      "{ lambda ; a:f32[B,3] b:f32[3]. let\n"
      "    c:f32[B,3] = pjit[name=spread jaxpr={ lambda ; d:f32[3]. let\n"
      "        e:f32[B,3] = broadcast_in_dim[broadcast_dimensions=(1,)\n"
      "          shape=(B, 3) sharding=None] d\n"
      "      in (e,) }] b\n"
      "    f:f32[B,3] = add a c\n"
      "  in (f,) }\n";
  auto refused = ToOnnxFromText(kProgram, {}, IrOptions({"spread"}));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("symbolic dimension 'B' does not appear"));
  EXPECT_THAT(refused.status().message(),
              HasSubstr("(in the body of ONNX function 'spread', made for "
                        "--functions)"));
  auto inlined = ToOnnxFromText(kProgram, {}, IrOptions({}));
  ASSERT_TRUE(inlined.ok()) << inlined.status();
  EXPECT_ORT_ACCEPTS(*inlined);
}

TEST(FunctionsTest, ShadowFindsTheFunctionModelEquivalentToTheInlinedOne) {
  std::string why;
  if (!api::OrtRunner::Shared().IsAvailable(&why)) GTEST_SKIP() << why;
  api::ShadowOptions options;
  options.check.convert = IrOptions({"_dense", "_act"});
  const api::ShadowResult r = api::ShadowCompareFile(
      kDir + "shared_nested.jaxpr", options, &api::OrtRunner::Shared());
  EXPECT_EQ(r.verdict, api::Verdict::kEquivalent) << r.reason;
}

TEST(FunctionsTest, NamesAreSanitizedAndKeysIgnoreVariableNames) {
  EXPECT_EQ(converter2::SanitizeFunctionName("<lambda>"), "_lambda_");
  EXPECT_EQ(converter2::SanitizeFunctionName("MLP.__call__"), "MLP___call__");
  EXPECT_EQ(converter2::SanitizeFunctionName("0f"), "_0f");
  EXPECT_EQ(converter2::SanitizeFunctionName(""), "fn");
  // The same traced function printed with other variable names, and with
  // another operand shape.
  auto file = jaxpr::ParseJaxprText(
      "{ lambda ; a:f32[3] b:f32[4]. let\n"
      "    c:f32[3] = pjit[name=f jaxpr={ lambda ; d:f32[3]. let\n"
      "        e:f32[3] = sin d in (e,) }] a\n"
      "    f:f32[3] = pjit[name=f jaxpr={ lambda ; g:f32[3]. let\n"
      "        h:f32[3] = sin g in (h,) }] c\n"
      "    i:f32[4] = pjit[name=f jaxpr={ lambda ; j:f32[4]. let\n"
      "        k:f32[4] = sin j in (k,) }] b\n"
      "  in (f, i) }\n",
      "keys.jaxpr");
  ASSERT_TRUE(file.ok()) << file.status();
  const auto& eqns = file->main->eqns;
  EXPECT_EQ(converter2::CallKey(eqns[0], "f"),
            converter2::CallKey(eqns[1], "f"));
  EXPECT_NE(converter2::CallKey(eqns[0], "f"),
            converter2::CallKey(eqns[2], "f"));
}

}  // namespace
}  // namespace jax2onnx
