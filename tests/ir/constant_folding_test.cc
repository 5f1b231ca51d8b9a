// The constant-folding pass (ir/passes/constant_folding.cc) on small graphs:
// the graph after is compared as printed text written by hand (values derived
// in comments) and each test also pins what the pass refuses
// (tests/ir/pass_test_util.h: verifier around the pass, cleanup after, ONNX
// Runtime accepts the model before and after). The input graphs are stated
// as IR text, except the two with 512-element weights, built by hand.
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::A;
using pass_test::F32;
using pass_test::I64;
using pass_test::Init;
using pass_test::Op;
using pass_test::ParseIr;
using pass_test::RunPass;
using pass_test::TP;

TEST(ConstantFoldingTest, TransposesAndReshapesASingleUseWeight) {
  // w = [[1, 2, 3], [4, 5, 6]]; w^T = [[1, 4], [2, 5], [3, 6]].
  Model m = ParseIr(R"(
    graph main(%x: f32[3,2]) -> (%y: f32[3,2], %z: f32[6]) {
      init %w: f32[2,3] = f32[2,3]{1, 2, 3, 4, 5, 6}
      init %s: i64[1] = i64[1]{6}
      %wt: f32[3,2] = Transpose(%w) {perm=[1, 0]}
      %flat: f32[6] = Reshape(%wt, %s)
      %y: f32[3,2] = Add(%x, %wt)
      %z: f32[6] = Neg(%flat)
    })");
  EXPECT_TRUE(RunPass("constant-folding", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%x: f32[3,2]) -> (%y: f32[3,2], %z: f32[6]) {\n"
            "  init %flat: f32[6] = f32[6]{1, 4, 2, 5, 3, 6}\n"
            "  init %wt: f32[3,2] = f32[3,2]{1, 4, 2, 5, 3, 6}\n"
            "  %y: f32[3,2] = Add(%x, %wt)\n"
            "  %z: f32[6] = Neg(%flat)\n"
            "}\n");
  EXPECT_FALSE(RunPass("constant-folding", m));
}

TEST(ConstantFoldingTest, CastsExactlyAndRefusesFloatToInt) {
  // 2^32 + 5 wraps to 5 in int32; -1 stays -1. 0.1 (f64) rounds to the
  // nearest f32, printed with 9 digits.
  Model m = ParseIr(R"(
    graph main() -> (%na: i32[2], %nb: f32[1], %nc: i32[1]) {
      init %big: i64[2] = i64[2]{4294967301, -1}
      init %tenth: f64[1] = f64[1]{0.1}
      init %half: f32[1] = f32[1]{2.5}
      %a: i32[2] = Cast(%big) {to=6}
      %b: f32[1] = Cast(%tenth) {to=1}
      %c: i32[1] = Cast(%half) {to=6}
      %na: i32[2] = Neg(%a)
      %nb: f32[1] = Neg(%b)
      %nc: i32[1] = Neg(%c)
    })");
  EXPECT_TRUE(RunPass("constant-folding", m));
  // The f32 nearest 0.1 is 0x3DCCCCCD (round to nearest even of
  // 0x3DCCCCCC.CCC...); the printer shows its shortest form, 0.1.
  const Value* folded = m.graph().initializer("b");
  ASSERT_NE(folded, nullptr);
  uint32_t bits;
  std::memcpy(&bits, folded->const_value()->bytes().data(), 4);
  EXPECT_EQ(bits, 0x3DCCCCCDu);
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main() -> (%na: i32[2], %nb: f32[1], %nc: i32[1]) {\n"
            "  init %a: i32[2] = i32[2]{5, -1}\n"
            "  init %b: f32[1] = f32[1]{0.1}\n"
            "  init %half: f32[1] = f32[1]{2.5}\n"
            "  %c: i32[1] = Cast(%half) {to=6}\n"
            "  %na: i32[2] = Neg(%a)\n"
            "  %nb: f32[1] = Neg(%b)\n"
            "  %nc: i32[1] = Neg(%c)\n"
            "}\n");
}

TEST(ConstantFoldingTest, NeverCopiesALargeSharedWeight) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  // 512 floats = 2 KiB, over the 1 KiB small-constant allowance, read by
  // the Transpose and by the Neg: folding would store it twice.
  Value* w = Init(g, "w",
                  Tensor::FromVector<float>(TP::FLOAT, {16, 32},
                                            std::vector<float>(512, 1.f)));
  Node* t = Op(g, "Transpose", {w}, "wt", F32({32, 16}),
               A(Attr::Ints("perm", {1, 0})));
  g.AddOutput(Op(g, "Relu", {t->output(0)}, "y", F32({32, 16}))->output(0));
  g.AddOutput(Op(g, "Neg", {w}, "z", F32({16, 32}))->output(0));
  EXPECT_FALSE(RunPass("constant-folding", m));
}

TEST(ConstantFoldingTest, ReshapingAWeightSharesItsBytes) {
  // A reshaped (squeezed, flattened) weight is the same bytes under new
  // dims: the folded initializer borrows them (ViT-B/16's DenseGeneral
  // kernels would otherwise be held twice, 113 MB) and keeps them alive
  // after the original initializer is pruned.
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  std::vector<float> values(512);
  for (int i = 0; i < 512; ++i) values[i] = static_cast<float>(i) - 7.5f;
  Value* w =
      Init(g, "w", Tensor::FromVector<float>(TP::FLOAT, {16, 32}, values));
  const char* bytes = w->const_value()->bytes().data();
  Node* r = Op(g, "Reshape", {w, I64(g, "s", {512})}, "flat", F32({512}));
  g.AddOutput(Op(g, "Neg", {r->output(0)}, "y", F32({512}))->output(0));
  EXPECT_TRUE(RunPass("constant-folding", m));
  const Value* folded = nullptr;
  for (const Value* v : g.initializers()) {
    if (v->const_value()->dims() == std::vector<int64_t>{512}) folded = v;
  }
  ASSERT_NE(folded, nullptr);
  EXPECT_EQ(g.initializer("w"), nullptr);  // pruned
  EXPECT_EQ(folded->const_value()->bytes().data(), bytes);
  EXPECT_TRUE(folded->const_value()->is_borrowed());
  absl::Span<const float> got = folded->const_value()->data<float>();
  EXPECT_EQ(std::vector<float>(got.begin(), got.end()), values);
}

}  // namespace
}  // namespace jax2onnx::ir
