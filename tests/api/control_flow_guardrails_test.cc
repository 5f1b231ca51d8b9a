// The control-flow guardrails of seed 000, on both pipelines:
//   Where rule: every Where (select_n, and the Where carriers under it) gets
//     three inputs of one rank whose known dims agree, never relying on ONNX
//     broadcasting (a scalar predicate or literal case is expanded first).
//   If rule: the then/else branch outputs of every If declare the same dtype
//     and the same fully known shape, equal to the If's own output type.
//   Reject rule: a cond branch whose output cannot be reconciled with the
//     cond's outvar is an error naming the branch, not a model.
// Each model is converted at opset 17 and must pass the ONNX checker with
// strict shape inference (what ONNX Runtime's loader relies on); the numeric
// side of the same bundles is checked against the interpreter by the corpus
// ctests (corpus_legacy / corpus_ir).
#include <cctype>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/convert_internal.h"
#include "api/corpus.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/text/parser.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "tests/ort_accepts.h"

namespace jax2onnx::api {
namespace {

using ::testing::HasSubstr;

using TypeScope = std::map<std::string, onnx::TypeProto>;

// "?" for a dim nobody knows, including the unk__N names ONNX shape
// inference invents for dims computed at run time.
std::string DimString(const onnx::TensorShapeProto::Dimension& d) {
  if (d.has_dim_value()) return std::to_string(d.dim_value());
  if (d.has_dim_param() && !absl::StartsWith(d.dim_param(), "unk__")) {
    return d.dim_param();
  }
  return "?";
}

std::string TypeString(const onnx::TypeProto& t) {
  if (!t.has_tensor_type()) return "<not a tensor>";
  std::vector<std::string> dims;
  if (!t.tensor_type().has_shape()) return "<no shape>";
  for (const auto& d : t.tensor_type().shape().dim()) {
    dims.push_back(DimString(d));
  }
  return absl::StrCat(t.tensor_type().elem_type(), "[",
                      absl::StrJoin(dims, ","), "]");
}

// `outer` plus every typed name `graph` declares or infers.
TypeScope ScopeOf(const onnx::GraphProto& graph, const TypeScope& outer) {
  TypeScope scope = outer;
  for (const auto& v : graph.input()) scope[v.name()] = v.type();
  for (const auto& v : graph.value_info()) scope[v.name()] = v.type();
  for (const auto& v : graph.output()) scope[v.name()] = v.type();
  for (const auto& t : graph.initializer()) {
    onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(t.data_type());
    auto* shape = type.mutable_tensor_type()->mutable_shape();
    for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
    scope[t.name()] = type;
  }
  return scope;
}

bool SameKnownShape(const onnx::TypeProto& a, const onnx::TypeProto& b) {
  const auto& sa = a.tensor_type().shape();
  const auto& sb = b.tensor_type().shape();
  if (sa.dim_size() != sb.dim_size()) return false;
  for (int i = 0; i < sa.dim_size(); ++i) {
    const std::string da = DimString(sa.dim(i));
    if (da == "?" || da != DimString(sb.dim(i))) return false;
  }
  return true;
}

struct Counts {
  int wheres = 0;
  int ifs = 0;
};

// Checks the Where and If rules on `graph` and its subgraphs; violations
// are appended to `errors`.
void CheckGraph(const onnx::GraphProto& graph, const TypeScope& outer,
                Counts& counts, std::vector<std::string>& errors) {
  const TypeScope scope = ScopeOf(graph, outer);
  auto type_of = [&](const std::string& name) -> const onnx::TypeProto* {
    auto it = scope.find(name);
    if (it == scope.end() || !it->second.tensor_type().has_shape()) {
      return nullptr;
    }
    return &it->second;
  };
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() == "Where") {
      counts.wheres++;
      std::vector<const onnx::TypeProto*> ins;
      for (const std::string& in : node.input()) ins.push_back(type_of(in));
      for (int i = 0; i < 3; ++i) {
        if (ins[i] == nullptr) {
          errors.push_back(absl::StrCat("Where '", node.name(), "' input ", i,
                                        " has no known rank"));
          ins.clear();
          break;
        }
      }
      for (size_t i = 1; i < ins.size(); ++i) {
        const auto& s0 = ins[0]->tensor_type().shape();
        const auto& si = ins[i]->tensor_type().shape();
        bool agree = s0.dim_size() == si.dim_size();
        for (int k = 0; agree && k < s0.dim_size(); ++k) {
          const std::string d0 = DimString(s0.dim(k));
          const std::string di = DimString(si.dim(k));
          agree = d0 == "?" || di == "?" || d0 == di;
        }
        if (!agree) {
          errors.push_back(absl::StrCat(
              "Where '", node.name(), "' broadcasts implicitly: input 0 is ",
              TypeString(*ins[0]), ", input ", i, " is ", TypeString(*ins[i])));
        }
      }
    }
    if (node.op_type() == "If") {
      counts.ifs++;
      const onnx::GraphProto* branches[2] = {nullptr, nullptr};
      for (const auto& attr : node.attribute()) {
        if (attr.name() == "then_branch") branches[0] = &attr.g();
        if (attr.name() == "else_branch") branches[1] = &attr.g();
      }
      ASSERT_NE(branches[0], nullptr);
      ASSERT_NE(branches[1], nullptr);
      for (int o = 0; o < node.output_size(); ++o) {
        const onnx::TypeProto& then_type = branches[0]->output(o).type();
        const onnx::TypeProto& else_type = branches[1]->output(o).type();
        const onnx::TypeProto* if_type = type_of(node.output(o));
        const bool same_dtype = then_type.tensor_type().elem_type() ==
                                else_type.tensor_type().elem_type();
        if (!same_dtype || !SameKnownShape(then_type, else_type) ||
            if_type == nullptr || !SameKnownShape(then_type, *if_type) ||
            if_type->tensor_type().elem_type() !=
                then_type.tensor_type().elem_type()) {
          errors.push_back(absl::StrCat(
              "If '", node.name(), "' output ", o, ": then ",
              TypeString(then_type), ", else ", TypeString(else_type), ", If ",
              if_type ? TypeString(*if_type) : "<untyped>"));
        }
      }
    }
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) CheckGraph(attr.g(), scope, counts, errors);
    }
  }
}

struct GuardrailCase {
  std::string bundle;  // relative to testdata/
  int min_wheres;
  int min_ifs;
};

void PrintTo(const GuardrailCase& c, std::ostream* os) { *os << c.bundle; }

std::string CaseName(const GuardrailCase& c) {
  std::string name = c.bundle;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

class GuardrailTest
    : public ::testing::TestWithParam<std::tuple<GuardrailCase, bool>> {};

TEST_P(GuardrailTest, OpsetSeventeenModelHasExplicitWhereAndIfTypes) {
  const auto& [c, use_ir] = GetParam();
  auto bundle = jaxpr::LoadBundle(
      absl::StrCat(JAX2ONNX_SOURCE_DIR, "/testdata/", c.bundle));
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  ConvertOptions options;
  options.opset = 17;
  options.use_onnx_ir = use_ir;
  auto model = ToOnnx(*bundle, options);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(ValidateWithOnnxChecker(*model).ok())
      << ValidateWithOnnxChecker(*model);
  EXPECT_ORT_ACCEPTS(*model);

  onnx::ModelProto inferred = *model;
  inferred.set_ir_version(8);
  onnx::shape_inference::InferShapes(inferred,
                                     onnx::OpSchemaRegistry::Instance());
  Counts counts;
  std::vector<std::string> errors;
  CheckGraph(inferred.graph(), {}, counts, errors);
  EXPECT_THAT(errors, ::testing::IsEmpty()) << absl::StrJoin(errors, "\n");
  EXPECT_GE(counts.wheres, c.min_wheres);
  EXPECT_GE(counts.ifs, c.min_ifs);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, GuardrailTest,
    ::testing::Combine(
        ::testing::Values(
            // Where rule.
            GuardrailCase{"primitives/select_n/scalar_pred_batch.jaxpr", 1, 0},
            GuardrailCase{"primitives/select_n/bool_i16_literal_case.jaxpr", 1,
                          0},
            GuardrailCase{"primitives/select_n/i32_four_cases_u64.jaxpr", 3, 0},
            GuardrailCase{"guardrails/select_n_bool_scalar_pred_i8_cases.jaxpr",
                          1, 0},
            // If rule.
            GuardrailCase{"primitives/cond/batch_f32.jaxpr", 0, 1},
            GuardrailCase{
                "primitives/cond/passthrough_and_literal_outputs.jaxpr", 0, 1},
            GuardrailCase{"primitives/cond/switch_clamped_3branches.jaxpr", 0,
                          2},
            GuardrailCase{"guardrails/cond_mixed_dtype_outputs.jaxpr", 0, 1},
            // Both, nested: a Where inside an If branch.
            GuardrailCase{"guardrails/select_n_in_cond_branch.jaxpr", 1, 1}),
        ::testing::Bool()),
    [](const auto& info) {
      return absl::StrCat(CaseName(std::get<0>(info.param)),
                          std::get<1>(info.param) ? "_ir" : "_legacy");
    });

class GuardrailRejectTest : public ::testing::TestWithParam<bool> {};

TEST_P(GuardrailRejectTest, IrreconcilableBranchOutputIsAnErrorNamingIt) {
  // Branch 0 returns f32[3] where the cond's outvar is f32[4]: no Cast,
  // Reshape or Expand makes the branches agree.
  auto file = jaxpr::ParseJaxprText(R"({ lambda ; a:f32[3] b:f32[4] c:i32[]. let
    d:f32[4] = cond[
      branches=(
        { lambda ; e:f32[3] f:f32[4]. let  in (e,) }
        { lambda ; g:f32[3] h:f32[4]. let  in (h,) }
      )
    ] c a b
  in (d,) })");
  ASSERT_TRUE(file.ok()) << file.status();
  Bundle bundle;
  bundle.name = "irreconcilable";
  bundle.file = *std::move(file);
  ConvertOptions options;
  options.use_onnx_ir = GetParam();
  auto model = ToOnnx(bundle, options);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("cond branch 0 output 0"));
  EXPECT_THAT(model.status().message(), HasSubstr("f32[4]"));
  EXPECT_THAT(model.status().message(), HasSubstr("'cond'"));
}

INSTANTIATE_TEST_SUITE_P(BothPipelines, GuardrailRejectTest, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "ir" : "legacy";
                         });

}  // namespace
}  // namespace jax2onnx::api
