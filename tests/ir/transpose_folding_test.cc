// The transpose-folding pass (ir/passes/transpose_folding.cc) on small
// hand-built graphs: the graph after is compared as printed text written by
// hand (values derived in comments) and each test also pins what the pass
// refuses (tests/ir/pass_test_util.h: verifier around the pass, cleanup after,
// ONNX Runtime accepts the model before and after).
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
using pass_test::Init;
using pass_test::Op;
using pass_test::RunPass;
using pass_test::T;
using pass_test::TP;

TEST(TransposeFoldingTest, CancelsAndMergesPairs) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2, 3, 4}));
  Node* t1 = Op(g, "Transpose", {x}, "t1", F32({3, 4, 2}),
                A(Attr::Ints("perm", {1, 2, 0})));
  // perm [2, 0, 1] undoes [1, 2, 0].
  Node* t2 = Op(g, "Transpose", {t1->output(0)}, "t2", F32({2, 3, 4}),
                A(Attr::Ints("perm", {2, 0, 1})));
  // [1, 0, 2] after [1, 2, 0]: x axes (inner[1], inner[0], inner[2]) =
  // (2, 1, 0).
  Node* t3 = Op(g, "Transpose", {t1->output(0)}, "t3", F32({4, 3, 2}),
                A(Attr::Ints("perm", {1, 0, 2})));
  g.AddOutput(Op(g, "Relu", {t2->output(0)}, "y", F32({2, 3, 4}))->output(0));
  g.AddOutput(Op(g, "Neg", {t3->output(0)}, "z", F32({4, 3, 2}))->output(0));
  EXPECT_TRUE(RunPass("transpose-folding", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2,3,4]) -> (%y: f32[2,3,4], %z: f32[4,3,2]) "
            "{\n"
            "  %t3: f32[4,3,2] = Transpose(%x) {perm=[2, 1, 0]}\n"
            "  %y: f32[2,3,4] = Relu(%x)\n"
            "  %z: f32[4,3,2] = Neg(%t3)\n"
            "}\n");
}

TEST(TransposeFoldingTest, MovesThroughUnaryElementwiseToCancel) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2, 3}));
  Node* t1 =
      Op(g, "Transpose", {x}, "t1", F32({3, 2}), A(Attr::Ints("perm", {1, 0})));
  Node* c = Op(g, "Cast", {t1->output(0)}, "c", T(TP::DOUBLE, {3, 2}),
               A(Attr::Int("to", TP::DOUBLE)));
  Node* t2 = Op(g, "Transpose", {c->output(0)}, "t2", T(TP::DOUBLE, {2, 3}),
                A(Attr::Ints("perm", {1, 0})));
  g.AddOutput(
      Op(g, "Neg", {t2->output(0)}, "y", T(TP::DOUBLE, {2, 3}))->output(0));
  PassManagerOptions options;
  options.verify_each_pass = true;
  PassManager manager(options);
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(CreateTransposeFoldingPass());
  passes.push_back(CreateDeadNodeEliminationPass());
  manager.AddFixpoint("fold", std::move(passes));
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  ASSERT_TRUE(manager.Run(m).ok());
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2,3]) -> (%y: f64[2,3]) {\n"
            "  %c: f64[2,3] = Cast(%x) {to=11}\n"
            "  %y: f64[2,3] = Neg(%c)\n"
            "}\n");
}

TEST(TransposeFoldingTest, KeepsTheGraphOutputValueOfACancelledPair) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2, 3}));
  Node* r = Op(g, "Relu", {x}, "r", F32({2, 3}));
  Node* t1 = Op(g, "Transpose", {r->output(0)}, "t1", F32({3, 2}),
                A(Attr::Ints("perm", {1, 0})));
  Node* t2 = Op(g, "Transpose", {t1->output(0)}, "y", F32({2, 3}),
                A(Attr::Ints("perm", {1, 0})));
  g.AddOutput(t2->output(0));
  EXPECT_TRUE(RunPass("transpose-folding", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2,3]) -> (%y: f32[2,3]) {\n"
            "  %r: f32[2,3] = Relu(%x)\n"
            "  %y: f32[2,3] = Identity(%r)  # Identity\n"
            "}\n");
  EXPECT_TRUE(RunPass("identity-elimination", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2,3]) -> (%y: f32[2,3]) {\n"
            "  %y: f32[2,3] = Relu(%x)\n"
            "}\n");
}

TEST(TransposeFoldingTest, FoldsRank2TransposeIntoGemmOnlyForF32) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* a = g.AddInput("a", F32({2, 3}));
  Value* b = g.AddInput("b", F32({4, 3}));
  Node* bt =
      Op(g, "Transpose", {b}, "bt", F32({3, 4}), A(Attr::Ints("perm", {1, 0})));
  Node* mm = Op(g, "MatMul", {a, bt->output(0)}, "y", F32({2, 4}));
  mm->set_name("eqn0/dot_general/MatMul");
  g.AddOutput(mm->output(0));
  Value* da = g.AddInput("da", T(TP::DOUBLE, {2, 3}));
  Value* db = g.AddInput("db", T(TP::DOUBLE, {4, 3}));
  Node* dbt = Op(g, "Transpose", {db}, "dbt", T(TP::DOUBLE, {3, 4}),
                 A(Attr::Ints("perm", {1, 0})));
  g.AddOutput(Op(g, "MatMul", {da, dbt->output(0)}, "z", T(TP::DOUBLE, {2, 4}))
                  ->output(0));
  EXPECT_TRUE(RunPass("transpose-folding", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%a: f32[2,3], %b: f32[4,3], %da: f64[2,3], %db: "
            "f64[4,3]) -> (%y: f32[2,4], %z: f64[2,4]) {\n"
            "  %y: f32[2,4] = Gemm(%a, %b) {transB=1}  # "
            "eqn0/dot_general/Gemm\n"
            "  %dbt: f64[3,4] = Transpose(%db) {perm=[1, 0]}\n"
            "  %z: f64[2,4] = MatMul(%da, %dbt)\n"
            "}\n");
}

TEST(TransposeFoldingTest, MovesThroughBiasAndReluChainsToCancel) {
  // Conv output (NCHW) -> NHWC -> + bias [8] -> max 0 -> NCHW, as a
  // channels-last Conv's bias and relu sit between layout Transposes.
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2, 8, 4, 4}));
  Value* bias =
      Init(g, "bias",
           Tensor::FromVector<float>(TP::FLOAT, {8}, {1, 2, 3, 4, 5, 6, 7, 8}));
  Value* zero = Init(g, "zero", Tensor::FromVector<float>(TP::FLOAT, {}, {0}));
  Node* t1 = Op(g, "Transpose", {x}, "t1", F32({2, 4, 4, 8}),
                A(Attr::Ints("perm", {0, 2, 3, 1})));
  Node* add = Op(g, "Add", {t1->output(0), bias}, "add", F32({2, 4, 4, 8}));
  Node* relu = Op(g, "Max", {add->output(0), zero}, "relu", F32({2, 4, 4, 8}));
  Node* t2 = Op(g, "Transpose", {relu->output(0)}, "t2", F32({2, 8, 4, 4}),
                A(Attr::Ints("perm", {0, 3, 1, 2})));
  g.AddOutput(Op(g, "Neg", {t2->output(0)}, "y", F32({2, 8, 4, 4}))->output(0));
  // The same chain with an intermediate used twice stays.
  Value* x2 = g.AddInput("x2", F32({2, 8, 4, 4}));
  Node* u1 = Op(g, "Transpose", {x2}, "u1", F32({2, 4, 4, 8}),
                A(Attr::Ints("perm", {0, 2, 3, 1})));
  Node* uadd = Op(g, "Add", {u1->output(0), bias}, "uadd", F32({2, 4, 4, 8}));
  Node* u2 = Op(g, "Transpose", {uadd->output(0)}, "u2", F32({2, 8, 4, 4}),
                A(Attr::Ints("perm", {0, 3, 1, 2})));
  g.AddOutput(Op(g, "Neg", {u2->output(0)}, "z", F32({2, 8, 4, 4}))->output(0));
  g.AddOutput(uadd->output(0));
  EXPECT_TRUE(RunPass("transpose-folding", m));
  // The bias goes to rank 4 as [1,1,1,8] and is permuted to [1,8,1,1]; the
  // scalar zero needs nothing; the merged perm [0,2,3,1] o [0,3,1,2] is the
  // identity (removed by the next run).
  EXPECT_EQ(
      PrintGraph(g),
      "graph main(%x: f32[2,8,4,4], %x2: f32[2,8,4,4]) -> (%y: f32[2,8,4,4], "
      "%z: f32[2,8,4,4], %uadd: f32[2,4,4,8]) {\n"
      "  init %bias: f32[8] = f32[8]{1, 2, 3, 4, 5, 6, 7, 8}\n"
      "  init %shape: i64[4] = i64[4]{1, 1, 1, 8}\n"
      "  init %zero: f32[] = f32[]{0}\n"
      "  %t1: f32[2,8,4,4] = Transpose(%x) {perm=[0, 1, 2, 3]}\n"
      "  %Reshape: f32[1,1,1,8] = Reshape(%bias, %shape)  # Reshape\n"
      "  %Transpose: f32[1,8,1,1] = Transpose(%Reshape) {perm=[0, 3, 1, 2]}  "
      "# Transpose\n"
      "  %add: f32[2,8,4,4] = Add(%t1, %Transpose)\n"
      "  %relu: f32[2,8,4,4] = Max(%add, %zero)\n"
      "  %y: f32[2,8,4,4] = Neg(%relu)\n"
      "  %u1: f32[2,4,4,8] = Transpose(%x2) {perm=[0, 2, 3, 1]}\n"
      "  %uadd: f32[2,4,4,8] = Add(%u1, %bias)\n"
      "  %u2: f32[2,8,4,4] = Transpose(%uadd) {perm=[0, 3, 1, 2]}\n"
      "  %z: f32[2,8,4,4] = Neg(%u2)\n"
      "}\n");
}

TEST(TransposeFoldingTest, AGraphOutputTransposeMovesAsAnIdentity) {
  // An NCHW output adapter after a channels-last bias Add: out =
  // T(Add(T(x), b)); the chain moves and `out` keeps its name.
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2, 3, 4, 4}));
  Value* bias =
      Init(g, "bias", Tensor::FromVector<float>(TP::FLOAT, {3}, {1, 2, 3}));
  Node* t1 = Op(g, "Transpose", {x}, "t1", F32({2, 4, 4, 3}),
                A(Attr::Ints("perm", {0, 2, 3, 1})));
  Node* add = Op(g, "Add", {t1->output(0), bias}, "add", F32({2, 4, 4, 3}));
  Node* t2 = Op(g, "Transpose", {add->output(0)}, "out", F32({2, 3, 4, 4}),
                A(Attr::Ints("perm", {0, 3, 1, 2})));
  g.AddOutput(t2->output(0));
  EXPECT_TRUE(RunPass("transpose-folding", m));
  EXPECT_TRUE(RunPass("transpose-folding", m));  // the identity perm
  EXPECT_TRUE(RunPass("identity-elimination", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2,3,4,4]) -> (%out: f32[2,3,4,4]) {\n"
            "  init %bias: f32[3] = f32[3]{1, 2, 3}\n"
            "  init %shape: i64[4] = i64[4]{1, 1, 1, 3}\n"
            "  %Reshape: f32[1,1,1,3] = Reshape(%bias, %shape)  # Reshape\n"
            "  %Transpose: f32[1,3,1,1] = Transpose(%Reshape) {perm=[0, 3, 1, "
            "2]}  # Transpose\n"
            "  %out: f32[2,3,4,4] = Add(%x, %Transpose)\n"
            "}\n");
}

}  // namespace
}  // namespace jax2onnx::ir
