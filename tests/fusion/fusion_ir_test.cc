// The fusion passes on hand-built IR: the forms the generic simplifications
// leave (ReduceX with keepdims=1, explicit Expand, ReduceMean, Pow) and
// near misses that must stay unfused (epsilon outside the square root, a
// divisor that is not the axis size, a wrong GELU constant). Each fused
// graph is pinned as printed text, and the fused and unfused models are run
// in ONNX Runtime on the same seeded inputs and must agree to rounding.
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/check.h"
#include "api/ort_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/pass.h"
#include "ir/passes/fusions.h"
#include "ir/printer.h"
#include "ir/serde.h"
#include "ir/verifier.h"
#include "jaxpr/io/compare.h"

namespace jax2onnx::ir {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kF32 = onnx::TensorProto::FLOAT;

Type F32(Shape s) { return Type::Tensor(kF32, std::move(s)); }

class Builder {
 public:
  explicit Builder(int opset) {
    model_.set_ir_version(10);
    model_.SetOpsetVersion("", opset);
    model_.graph().set_name("g");
  }
  Graph& g() { return model_.graph(); }
  Model& model() { return model_; }

  Value* Input(const std::string& name, Shape s) {
    return g().AddInput(name, F32(std::move(s)));
  }
  Value* Scalar(float v) {
    std::vector<float> data = {v};
    Value* c = *g().AddInitializer(
        g().FreshName("k"),
        Tensor::FromVector<float>(kF32, {}, absl::MakeConstSpan(data)));
    c->SetType(F32(Shape()));
    return c;
  }
  // A Constant node with value_float (the form constant folding may leave).
  Value* ConstantNode(float v) {
    Node* n =
        g().Append(Node::Create("", "Constant", {}, {g().FreshName("cn")}));
    n->SetAttr(Attr::Float("value_float", v));
    n->output(0)->SetType(F32(Shape()));
    return n->output(0);
  }
  Value* Floats(std::vector<float> v) {
    int64_t n = static_cast<int64_t>(v.size());
    Value* c = *g().AddInitializer(
        g().FreshName("w"),
        Tensor::FromVector<float>(kF32, {n}, absl::MakeConstSpan(v)));
    c->SetType(F32(Shape({n})));
    return c;
  }
  Value* Ints(std::vector<int64_t> v) {
    int64_t n = static_cast<int64_t>(v.size());
    Value* c = *g().AddInitializer(
        g().FreshName("i"),
        Tensor::FromVector<int64_t>(onnx::TensorProto::INT64, {n},
                                    absl::MakeConstSpan(v)));
    c->SetType(Type::Tensor(onnx::TensorProto::INT64, Shape({n})));
    return c;
  }
  // A node with one float32 output named `out` of shape `s` (and a
  // keepdims attribute when `keepdims` >= 0).
  Value* Op(const std::string& op, std::vector<Value*> ins,
            const std::string& out, Shape s, int keepdims = -1) {
    Node* n = g().Append(Node::Create("", op, ins, {out}));
    if (keepdims >= 0) n->SetAttr(Attr::Int("keepdims", keepdims));
    n->output(0)->SetType(F32(std::move(s)));
    return n->output(0);
  }
  void Output(Value* v) { g().AddOutput(v); }
  static Shape ShapeOf(const std::vector<int64_t>& dims) {
    std::vector<Dim> d;
    for (int64_t x : dims) d.push_back(Dim(x));
    return Shape(std::move(d));
  }
  // A bool initializer of shape `dims`.
  Value* Bools(std::vector<int64_t> dims, const std::vector<uint8_t>& v) {
    Value* c = *g().AddInitializer(
        g().FreshName("m"),
        Tensor::FromVector<uint8_t>(onnx::TensorProto::BOOL, dims,
                                    absl::MakeConstSpan(v)));
    c->SetType(Type::Tensor(onnx::TensorProto::BOOL, ShapeOf(dims)));
    return c;
  }
  Value* Constant(std::vector<int64_t> dims, std::vector<float> v) {
    Value* c = *g().AddInitializer(
        g().FreshName("w"),
        Tensor::FromVector<float>(kF32, dims, absl::MakeConstSpan(v)));
    c->SetType(F32(ShapeOf(dims)));
    return c;
  }

 private:
  Model model_;
};

std::vector<jaxpr::Array> RandomInputs(const Graph& g) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<jaxpr::Array> out;
  for (const Value* in : g.inputs()) {
    std::vector<int64_t> dims;
    for (const Dim& d : in->shape()->dims()) dims.push_back(d.value());
    jaxpr::Array a(jaxpr::DType::kF32, dims);
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      a.SetFromDouble(i, dist(rng));
    }
    out.push_back(std::move(a));
  }
  return out;
}

// Runs the fusions on `b`'s model and returns the printed graph; checks in
// ONNX Runtime that the fused model computes what the unfused one does.
std::string FuseAndCompare(Builder& b, bool expect_change) {
  onnx::ModelProto before = ToProto(b.model());
  std::vector<jaxpr::Array> inputs = RandomInputs(b.g());
  PassManagerOptions options;
  options.verify_each_pass = true;
  PassManager manager(std::move(options));
  FusionOptions fusion_options;
  fusion_options.fuse_swish = true;      // off in the pipeline (see fusions.h)
  fusion_options.fuse_attention = true;  // likewise
  AddFusionPasses(manager, *b.model().OpsetVersion(""), fusion_options);
  absl::StatusOr<bool> changed = manager.Run(b.model());
  EXPECT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(changed.value_or(!expect_change), expect_change);
  EXPECT_TRUE(Verify(b.model()).ok());
  std::string text = PrintGraph(b.g());
  std::string reason;
  if (!api::OrtRunner::Shared().IsAvailable(&reason)) {
    ADD_FAILURE() << "ONNX Runtime unavailable: " << reason;
    return text;
  }
  auto want = api::RunModel(before, inputs, api::OrtRunner::Shared());
  auto got =
      api::RunModel(ToProto(b.model()), inputs, api::OrtRunner::Shared());
  EXPECT_TRUE(want.ok()) << want.status();
  EXPECT_TRUE(got.ok()) << got.status() << "\n" << text;
  if (want.ok() && got.ok()) {
    for (size_t i = 0; i < want->size(); ++i) {
      jaxpr::CompareResult cmp =
          jaxpr::CompareArrays((*want)[i], (*got)[i], 1e-5, 1e-5);
      EXPECT_TRUE(cmp.ok) << cmp.Summary() << "\n" << text;
    }
  }
  return text;
}

// x: f32[2,3,16]; the layer norm with keepdims=1 reductions (the form left
// once Unsqueeze after ReduceSum is folded), scale and bias as [16].
// `eps_inside` false puts epsilon outside the square root;
// `divisor` is what the sums are divided by.
void BuildKeepdimsLayerNorm(Builder& b, bool eps_inside, float divisor) {
  Value* x = b.Input("x", {2, 3, 16});
  Value* axes = b.Ints({-1});
  Value* n = b.Scalar(divisor);
  Value* keep = b.Op("ReduceSum", {x, axes}, "sum", {2, 3, 1}, 1);
  Value* mean = b.Op("Div", {keep, n}, "mean", {2, 3, 1});
  Value* sq = b.Op("Mul", {x, x}, "sq", {2, 3, 16});
  Value* keep2 = b.Op("ReduceSum", {sq, axes}, "sum2", {2, 3, 1}, 1);
  Value* mean2 = b.Op("Div", {keep2, n}, "mean2", {2, 3, 1});
  Value* mm = b.Op("Mul", {mean, mean}, "mm", {2, 3, 1});
  Value* d = b.Op("Sub", {mean2, mm}, "d", {2, 3, 1});
  Value* var = b.Op("Max", {d, b.Scalar(0)}, "var", {2, 3, 1});
  Value* c = b.Op("Sub", {x, mean}, "centered", {2, 3, 16});
  Value* eps = b.Scalar(1e-5f);
  Value* inv = nullptr;
  if (eps_inside) {
    Value* ve = b.Op("Add", {var, eps}, "ve", {2, 3, 1});
    Value* s = b.Op("Sqrt", {ve}, "s", {2, 3, 1});
    inv = b.Op("Div", {b.Scalar(1), s}, "inv", {2, 3, 1});
  } else {
    Value* s = b.Op("Sqrt", {var}, "s", {2, 3, 1});
    Value* se = b.Op("Add", {s, eps}, "se", {2, 3, 1});
    inv = b.Op("Reciprocal", {se}, "inv", {2, 3, 1});
  }
  std::vector<float> scale(16), bias(16);
  for (int i = 0; i < 16; ++i) {
    scale[i] = 0.5f + 0.1f * i;
    bias[i] = -0.25f * i;
  }
  Value* y = b.Op("Mul", {c, inv}, "y", {2, 3, 16});
  Value* ys = b.Op("Mul", {b.Floats(scale), y}, "ys", {2, 3, 16});
  b.Output(b.Op("Add", {ys, b.Floats(bias)}, "out", {2, 3, 16}));
}

TEST(FusionIrTest, KeepdimsLayerNormWithScaleAndBias) {
  Builder b(23);
  BuildKeepdimsLayerNorm(b, /*eps_inside=*/true, 16);
  std::string text = FuseAndCompare(b, true);
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "  %out: f32[2,3,16] = LayerNormalization(%x, %w, "
                        "%w_1) {axis=-1, epsilon=1e-05}\n}\n"));
  EXPECT_EQ(b.g().num_nodes(), 1u);
}

TEST(FusionIrTest, EpsilonOutsideTheSquareRootIsNotALayerNorm) {
  Builder b(23);
  BuildKeepdimsLayerNorm(b, /*eps_inside=*/false, 16);
  size_t before = b.g().num_nodes();
  FuseAndCompare(b, false);
  EXPECT_EQ(b.g().num_nodes(), before);
}

TEST(FusionIrTest, MeanDividedByAnotherCountIsNotALayerNorm) {
  Builder b(23);
  // jnp.var(ddof=1)-like divisor: 15 for 16 elements.
  BuildKeepdimsLayerNorm(b, /*eps_inside=*/true, 15);
  size_t before = b.g().num_nodes();
  FuseAndCompare(b, false);
  EXPECT_EQ(b.g().num_nodes(), before);
}

TEST(FusionIrTest, LayerNormBelowOpset17IsLeftAlone) {
  Builder b(16);
  BuildKeepdimsLayerNorm(b, /*eps_inside=*/true, 16);
  size_t before = b.g().num_nodes();
  FuseAndCompare(b, false);
  EXPECT_EQ(b.g().num_nodes(), before);
}

TEST(FusionIrTest, SoftmaxWithKeepdimsAndExplicitExpand) {
  Builder b(23);
  Value* x = b.Input("x", {4, 5});
  Value* axes = b.Ints({1});
  Value* shape = b.Ints({4, 5});
  Value* m = b.Op("ReduceMax", {x, axes}, "m", {4, 1}, 1);
  Value* me = b.Op("Expand", {m, shape}, "me", {4, 5});
  Value* s = b.Op("Sub", {x, me}, "s", {4, 5});
  Value* e = b.Op("Exp", {s}, "e", {4, 5});
  Value* z = b.Op("ReduceSum", {e, axes}, "z", {4, 1}, 1);
  b.Output(b.Op("Div", {e, z}, "out", {4, 5}));
  std::string text = FuseAndCompare(b, true);
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "  %out: f32[4,5] = Softmax(%x) {axis=1}\n}\n"));
  EXPECT_EQ(b.g().num_nodes(), 1u);
}

// x * 0.5 * (1 + tanh(c1 * (x + c2 * Pow(x, 3)))) with the 0.5 applied to x
// first, as hand-written models do, and given by a Constant node.
void BuildTanhGelu(Builder& b, float c2) {
  Value* x = b.Input("x", {3, 8});
  Value* cube = b.Op("Pow", {x, b.Scalar(3)}, "cube", {3, 8});
  Value* t = b.Op("Mul", {cube, b.Scalar(c2)}, "t", {3, 8});
  Value* inner = b.Op("Add", {t, x}, "inner", {3, 8});
  Value* arg =
      b.Op("Mul", {inner, b.Scalar(0.7978845608028654f)}, "arg", {3, 8});
  Value* th = b.Op("Tanh", {arg}, "th", {3, 8});
  Value* h = b.Op("Add", {th, b.Scalar(1)}, "h", {3, 8});
  Value* hx = b.Op("Mul", {b.ConstantNode(0.5), x}, "hx", {3, 8});
  b.Output(b.Op("Mul", {hx, h}, "out", {3, 8}));
}

TEST(FusionIrTest, TanhGeluWithPowAndOtherAssociation) {
  Builder b(20);
  BuildTanhGelu(b, 0.044715f);
  std::string text = FuseAndCompare(b, true);
  EXPECT_THAT(text, ::testing::HasSubstr("  %out: f32[3,8] = Gelu(%x) "
                                         "{approximate=\"tanh\"}\n}\n"));
  EXPECT_EQ(b.g().num_nodes(), 1u);
}

TEST(FusionIrTest, TanhGeluWithAnotherCubicCoefficientIsLeftAlone) {
  Builder b(20);
  BuildTanhGelu(b, 0.0447f);
  size_t before = b.g().num_nodes();
  FuseAndCompare(b, false);
  EXPECT_EQ(b.g().num_nodes(), before);
}

TEST(FusionIrTest, AFusedOutputKeepsItsGraphOutputName) {
  Builder b(23);
  Value* x = b.Input("x", {2, 4});
  Value* sig = b.Op("Sigmoid", {x}, "sig", {2, 4});
  b.Output(b.Op("Mul", {x, sig}, "out", {2, 4}));
  Builder b24(24);
  Value* x24 = b24.Input("x", {2, 4});
  Value* sig24 = b24.Op("Sigmoid", {x24}, "sig", {2, 4});
  b24.Output(b24.Op("Mul", {sig24, x24}, "out", {2, 4}));
  FuseAndCompare(b, false);  // Swish needs opset 24
  std::string text = FuseAndCompare(b24, true);
  EXPECT_EQ(text,
            "graph g(%x: f32[2,4]) -> (%out: f32[2,4]) {\n"
            "  %out: f32[2,4] = Swish(%x) {alpha=1.0}\n"
            "}\n");
}

// ---- Attention (FusionOptions::fuse_attention) ----

// softmax(scale q k^T + mask) v over q [2,3,4,8], k [2,3,5,8], v [2,3,5,6]
// (B=2 H=3 T=4 S=5 D=8 Dv=6, all different so a layout slip shows), k
// transposed by a Transpose as einsum-to-matmul leaves it.
struct AttentionSpec {
  enum class Scale {
    kMulScores,  // (q k^T) * 1/sqrt(8)
    kDivQuery,   // (q / sqrt(8)) k^T, Flax's form
    kNegative,   // (q k^T) * -1/sqrt(8): Attention's scale must be > 0
    kPerHead,    // (q k^T) * c[1,3,1,1]: not one number
    kInput,      // (q k^T) * c with c a graph input: not a constant
  };
  enum class Mask {
    kNone,
    kBias,              // + bias[1,1,4,5], a constant
    kInputBias,         // + bias[1,1,4,5], a graph input: any value
    kFullyMaskedBias,   // + a constant bias with a row of finfo.min
    kCausalWhere,       // Where(causal[1,1,4,5], ., finfo(f32).min)
    kMultiplied,        // * m[1,1,4,5] of 0/1: not an additive mask
    kFullyMaskedWhere,  // Where with a row of False (JAX: the mean of v)
    kSmallFillWhere,    // Where(causal, ., -1e9)
  };
  Scale scale = Scale::kMulScores;
  Mask mask = Mask::kNone;
  int softmax_axis = -1;
};

void BuildAttention(Builder& b, const AttentionSpec& spec) {
  using Scale = AttentionSpec::Scale;
  using Mask = AttentionSpec::Mask;
  Value* q = b.Input("q", {2, 3, 4, 8});
  Value* k = b.Input("k", {2, 3, 5, 8});
  Value* v = b.Input("v", {2, 3, 5, 6});
  Value* bias =
      spec.mask == Mask::kInputBias ? b.Input("bias", {1, 1, 4, 5}) : nullptr;
  Value* c_in = spec.scale == Scale::kInput ? b.Input("c", {}) : nullptr;
  const float finfo_min = -std::numeric_limits<float>::max();
  Value* kt = b.Op("Transpose", {k}, "kt", {2, 3, 8, 5});
  kt->producer()->SetAttr(Attr::Ints("perm", {0, 1, 3, 2}));
  const float inv_sqrt_d = 1.0f / std::sqrt(8.0f);
  if (spec.scale == Scale::kDivQuery) {
    q = b.Op("Div", {q, b.Scalar(std::sqrt(8.0f))}, "qs", {2, 3, 4, 8});
  }
  Value* s = b.Op("MatMul", {q, kt}, "scores", {2, 3, 4, 5});
  switch (spec.scale) {
    case Scale::kMulScores:
      s = b.Op("Mul", {s, b.Scalar(inv_sqrt_d)}, "scaled", {2, 3, 4, 5});
      break;
    case Scale::kNegative:
      s = b.Op("Mul", {s, b.Scalar(-inv_sqrt_d)}, "scaled", {2, 3, 4, 5});
      break;
    case Scale::kPerHead:
      s = b.Op("Mul", {s, b.Constant({1, 3, 1, 1}, {0.25f, 0.5f, 1.0f})},
               "scaled", {2, 3, 4, 5});
      break;
    case Scale::kInput:
      s = b.Op("Mul", {s, c_in}, "scaled", {2, 3, 4, 5});
      break;
    case Scale::kDivQuery:
      break;
  }
  // Causal over T=4 queries and S=5 keys (query i sees keys 0..i+1).
  std::vector<uint8_t> causal;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 5; ++j) causal.push_back(j <= i + 1);
  }
  switch (spec.mask) {
    case Mask::kNone:
      break;
    case Mask::kBias:
    case Mask::kFullyMaskedBias: {
      std::vector<float> values;
      for (int i = 0; i < 20; ++i) values.push_back(0.1f * (i % 7) - 0.3f);
      if (spec.mask == Mask::kFullyMaskedBias) {
        for (int j = 0; j < 5; ++j) values[5 + j] = finfo_min;
      }
      s = b.Op("Add", {s, b.Constant({1, 1, 4, 5}, values)}, "biased",
               {2, 3, 4, 5});
      break;
    }
    case Mask::kInputBias:
      s = b.Op("Add", {s, bias}, "biased", {2, 3, 4, 5});
      break;
    case Mask::kCausalWhere:
      s = b.Op("Where", {b.Bools({1, 1, 4, 5}, causal), s, b.Scalar(finfo_min)},
               "masked", {2, 3, 4, 5});
      break;
    case Mask::kMultiplied: {
      std::vector<float> m(causal.begin(), causal.end());
      s = b.Op("Mul", {s, b.Constant({1, 1, 4, 5}, m)}, "masked", {2, 3, 4, 5});
      break;
    }
    case Mask::kFullyMaskedWhere: {
      std::vector<uint8_t> m = causal;
      for (int j = 0; j < 5; ++j) m[2 * 5 + j] = 0;  // query 2 sees nothing
      s = b.Op("Where", {b.Bools({1, 1, 4, 5}, m), s, b.Scalar(finfo_min)},
               "masked", {2, 3, 4, 5});
      break;
    }
    case Mask::kSmallFillWhere:
      s = b.Op("Where", {b.Bools({1, 1, 4, 5}, causal), s, b.Scalar(-1e9f)},
               "masked", {2, 3, 4, 5});
      break;
  }
  Value* p = b.Op("Softmax", {s}, "probs", {2, 3, 4, 5});
  p->producer()->SetAttr(Attr::Int("axis", spec.softmax_axis));
  b.Output(b.Op("MatMul", {p, v}, "out", {2, 3, 4, 6}));
}

std::string FusedAttentionText(const AttentionSpec& spec) {
  Builder b(23);
  BuildAttention(b, spec);
  return FuseAndCompare(b, true);
}

void ExpectNoAttentionFusion(const AttentionSpec& spec, int opset = 23) {
  Builder b(opset);
  BuildAttention(b, spec);
  const size_t before = b.g().num_nodes();
  std::string text = FuseAndCompare(b, false);
  EXPECT_EQ(b.g().num_nodes(), before) << text;
  EXPECT_THAT(text, Not(HasSubstr("Attention")));
}

TEST(FusionIrTest, ScaledScoresWithAdditiveBiasBecomeAttention) {
  AttentionSpec spec;
  spec.mask = AttentionSpec::Mask::kBias;
  EXPECT_EQ(FusedAttentionText(spec),
            "graph g(%q: f32[2,3,4,8], %k: f32[2,3,5,8], %v: f32[2,3,5,6]) "
            "-> (%out: f32[2,3,4,6]) {\n"
            // The scale's constant, orphaned; the pipeline prunes it.
            "  init %k_1: f32[] = f32[]{0.353553}\n"
            "  init %w: f32[1,1,4,5] = f32[1,1,4,5]{-0.3, -0.2, -0.1, 0, 0.1, "
            "0.2, 0.3, -0.3, ... (20 elements, fnv1a 0487dfcbf4a731e1)}\n"
            "  %kt: f32[2,3,8,5] = Transpose(%k) {perm=[0, 1, 3, 2]}\n"
            "  %Transpose: f32[2,3,5,8] = Transpose(%kt) {perm=[0, 1, 3, 2]}\n"
            "  %out: f32[2,3,4,6] = Attention(%q, %Transpose, %v, %w) "
            "{scale=0.353553}\n"
            "}\n");
}

TEST(FusionIrTest, QueryDividedBySqrtDWithCausalWhereBecomesAttention) {
  // Flax: q / sqrt(d) before the product, jnp.where(mask, s, finfo.min).
  AttentionSpec spec;
  spec.scale = AttentionSpec::Scale::kDivQuery;
  spec.mask = AttentionSpec::Mask::kCausalWhere;
  std::string text = FusedAttentionText(spec);
  EXPECT_THAT(text, HasSubstr("= Attention(%q, %Transpose, %v, %m) "
                              "{scale=0.353553}"));
  EXPECT_THAT(text, Not(HasSubstr("Softmax")));
  EXPECT_THAT(text, Not(HasSubstr("Where")));
  EXPECT_THAT(text, Not(HasSubstr("Div")));
}

TEST(FusionIrTest, UnmaskedAttentionOverTheLastAxisNumberedThree) {
  AttentionSpec spec;
  spec.softmax_axis = 3;
  EXPECT_THAT(FusedAttentionText(spec),
              HasSubstr("= Attention(%q, %Transpose, %v) {scale=0.353553}"));
}

TEST(FusionIrTest, AttentionNearMissesStayUnfused) {
  using Scale = AttentionSpec::Scale;
  using Mask = AttentionSpec::Mask;
  const std::vector<AttentionSpec> near_misses = {
      {Scale::kNegative, Mask::kNone, -1},
      {Scale::kPerHead, Mask::kNone, -1},
      {Scale::kInput, Mask::kNone, -1},
      {Scale::kMulScores, Mask::kNone, 2},  // softmax over the queries
      {Scale::kMulScores, Mask::kMultiplied, -1},
      // A query with every key masked averages v in JAX (softmax of equal
      // logits) and is zeros in ONNX Runtime's Attention.
      {Scale::kMulScores, Mask::kFullyMaskedWhere, -1},
      {Scale::kMulScores, Mask::kFullyMaskedBias, -1},
      // A bias computed at run time could mask a whole row.
      {Scale::kMulScores, Mask::kInputBias, -1},
      {Scale::kMulScores, Mask::kSmallFillWhere, -1},
  };
  for (size_t i = 0; i < near_misses.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("near miss ", i));
    ExpectNoAttentionFusion(near_misses[i]);
  }
  ExpectNoAttentionFusion(AttentionSpec(), /*opset=*/22);
}

}  // namespace
}  // namespace jax2onnx::ir
