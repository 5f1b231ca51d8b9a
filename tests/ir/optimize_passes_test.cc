// The generic exact rewrites of --optimize >= 1 (ir/passes/), each on a
// small graph: the graph before is built by hand, the graph after is
// compared as printed text written by hand (values derived in comments),
// and each test also pins what the pass refuses. Every run verifies the IR
// before and after the pass and cleans up with dead-node-elimination and
// unused-initializer-pruning so the expected text shows only what remains.
// ONNX Runtime must accept every model before and after its pass
// (tests/ir/ir_ort_accepts.h).
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/pass.h"
#include "ir/passes/passes.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "tests/ir/ir_ort_accepts.h"

namespace jax2onnx::ir {
namespace {

using TP = onnx::TensorProto;

Type T(int dtype, Shape s) { return Type::Tensor(dtype, s); }
Type F32(Shape s) { return T(TP::FLOAT, s); }

Node* Op(Graph& g, absl::string_view op, std::vector<Value*> ins,
         std::string out, Type type, std::vector<Attr> attrs = {}) {
  Node* n =
      g.Append(Node::Create("", op, ins, {std::move(out)}, std::move(attrs)));
  n->output(0)->SetType(type);
  return n;
}

std::vector<Attr> A(Attr a) {
  std::vector<Attr> v;
  v.push_back(std::move(a));
  return v;
}

Value* Init(Graph& g, const std::string& name, Tensor t) {
  std::vector<Dim> dims(t.dims().begin(), t.dims().end());
  const int dtype = t.dtype();
  Value* v = *g.AddInitializer(name, std::move(t));
  v->SetType(T(dtype, Shape(dims)));
  return v;
}

Value* I64(Graph& g, const std::string& name, std::vector<int64_t> v) {
  return Init(g, name,
              Tensor::FromVector<int64_t>(TP::INT64,
                                          {static_cast<int64_t>(v.size())}, v));
}

// Runs `pass` once (with the verifier around it), then the cleanup passes;
// returns whether `pass` changed the model. ORT must accept the model
// after, and before unless `input_is_valid` is false (node-naming's input
// has the duplicate node names ORT refuses and the pass removes).
bool RunPass(absl::string_view pass, Model& m, bool input_is_valid = true) {
  if (input_is_valid) EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  PassManagerOptions options;
  options.verify_each_pass = true;
  PassManager manager(options);
  CHECK(manager.AddByName(pass).ok()) << pass;
  absl::StatusOr<bool> changed = manager.Run(m);
  CHECK(changed.ok()) << changed.status();
  PassManager cleanup(options);
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(CreateDeadNodeEliminationPass());
  passes.push_back(CreateUnusedInitializerPruningPass());
  cleanup.AddFixpoint("cleanup", std::move(passes));
  CHECK(cleanup.Run(m).ok());
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  return *changed;
}

TEST(ConstantFoldingTest, TransposesAndReshapesASingleUseWeight) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({3, 2}));
  // w = [[1, 2, 3], [4, 5, 6]]; w^T = [[1, 4], [2, 5], [3, 6]].
  Value* w = Init(
      g, "w", Tensor::FromVector<float>(TP::FLOAT, {2, 3}, {1, 2, 3, 4, 5, 6}));
  Node* t =
      Op(g, "Transpose", {w}, "wt", F32({3, 2}), A(Attr::Ints("perm", {1, 0})));
  Node* r =
      Op(g, "Reshape", {t->output(0), I64(g, "s", {6})}, "flat", F32({6}));
  Node* y = Op(g, "Add", {x, t->output(0)}, "y", F32({3, 2}));
  Node* z = Op(g, "Neg", {r->output(0)}, "z", F32({6}));
  g.AddOutput(y->output(0));
  g.AddOutput(z->output(0));
  EXPECT_TRUE(RunPass("constant-folding", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[3,2]) -> (%y: f32[3,2], %z: f32[6]) {\n"
            "  init %flat: f32[6] = f32[6]{1, 4, 2, 5, 3, 6}\n"
            "  init %wt: f32[3,2] = f32[3,2]{1, 4, 2, 5, 3, 6}\n"
            "  %y: f32[3,2] = Add(%x, %wt)\n"
            "  %z: f32[6] = Neg(%flat)\n"
            "}\n");
  EXPECT_FALSE(RunPass("constant-folding", m));
}

TEST(ConstantFoldingTest, CastsExactlyAndRefusesFloatToInt) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  // 2^32 + 5 wraps to 5 in int32; -1 stays -1.
  Value* big = Init(g, "big",
                    Tensor::FromVector<int64_t>(TP::INT64, {2},
                                                {(int64_t{1} << 32) + 5, -1}));
  // 0.1 (f64) rounds to the nearest f32, printed with 9 digits.
  Value* tenth =
      Init(g, "tenth", Tensor::FromVector<double>(TP::DOUBLE, {1}, {0.1}));
  Value* half =
      Init(g, "half", Tensor::FromVector<float>(TP::FLOAT, {1}, {2.5f}));
  Node* a = Op(g, "Cast", {big}, "a", T(TP::INT32, {2}),
               A(Attr::Int("to", TP::INT32)));
  Node* b =
      Op(g, "Cast", {tenth}, "b", F32({1}), A(Attr::Int("to", TP::FLOAT)));
  Node* c = Op(g, "Cast", {half}, "c", T(TP::INT32, {1}),
               A(Attr::Int("to", TP::INT32)));
  g.AddOutput(Op(g, "Neg", {a->output(0)}, "na", T(TP::INT32, {2}))->output(0));
  g.AddOutput(Op(g, "Neg", {b->output(0)}, "nb", F32({1}))->output(0));
  g.AddOutput(Op(g, "Neg", {c->output(0)}, "nc", T(TP::INT32, {1}))->output(0));
  EXPECT_TRUE(RunPass("constant-folding", m));
  // The f32 nearest 0.1 is 0x3DCCCCCD (round to nearest even of
  // 0x3DCCCCCC.CCC...); the printer shows its shortest form, 0.1.
  const Value* folded = g.initializer("b");
  ASSERT_NE(folded, nullptr);
  uint32_t bits;
  std::memcpy(&bits, folded->const_value()->bytes().data(), 4);
  EXPECT_EQ(bits, 0x3DCCCCCDu);
  EXPECT_EQ(PrintGraph(g),
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

TEST(CommonSubexpressionEliminationTest, MergesEqualNodesAndConstants) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Value* c1 = Init(g, "c1", Tensor::FromVector<float>(TP::FLOAT, {1}, {2.f}));
  Value* c2 = Init(g, "c2", Tensor::FromVector<float>(TP::FLOAT, {1}, {2.f}));
  Node* a = Op(g, "Mul", {x, c1}, "a", F32({2}));
  Node* b = Op(g, "Mul", {x, c2}, "b", F32({2}));
  // alpha differs in the last bit (the printer rounds both to 0.1): not
  // the same op.
  Node* l1 = Op(g, "LeakyRelu", {a->output(0)}, "l1", F32({2}),
                A(Attr::Float("alpha", 0.1f)));
  Node* l2 = Op(g, "LeakyRelu", {b->output(0)}, "l2", F32({2}),
                A(Attr::Float("alpha", std::nextafter(0.1f, 1.f))));
  Node* y = Op(g, "Add", {l1->output(0), l2->output(0)}, "y", F32({2}));
  g.AddOutput(y->output(0));
  EXPECT_TRUE(RunPass("common-subexpression-elimination", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2]) -> (%y: f32[2]) {\n"
            "  init %c1: f32[1] = f32[1]{2}\n"
            "  %a: f32[2] = Mul(%x, %c1)\n"
            "  %l1: f32[2] = LeakyRelu(%a) {alpha=0.1}\n"
            "  %l2: f32[2] = LeakyRelu(%a) {alpha=0.1}\n"
            "  %y: f32[2] = Add(%l1, %l2)\n"
            "}\n");
  EXPECT_FALSE(RunPass("common-subexpression-elimination", m));
}

TEST(CommonSubexpressionEliminationTest, KeepsRandomOps) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  // ONNX Runtime 1.30 has RandomUniformLike kernels up to version 21 only
  // (none for 22, what opset 23 resolves to): a model of opset 21.
  m.SetOpsetVersion("", 21);
  Node* r1 = Op(g, "RandomUniformLike", {x}, "r1", F32({2}));
  Node* r2 = Op(g, "RandomUniformLike", {x}, "r2", F32({2}));
  g.AddOutput(
      Op(g, "Sub", {r1->output(0), r2->output(0)}, "y", F32({2}))->output(0));
  EXPECT_FALSE(RunPass("common-subexpression-elimination", m));
}

TEST(IdentityEliminationTest, BypassesIdentitiesAndRenamesOutputProducers) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Node* i1 = Op(g, "Identity", {x}, "i1", F32({2}));
  Node* r = Op(g, "Relu", {i1->output(0)}, "r", F32({2}));
  Node* out = Op(g, "Identity", {r->output(0)}, "y", F32({2}));
  g.AddOutput(out->output(0));
  // The output Identity goes by renaming: %r becomes the output %y.
  EXPECT_TRUE(RunPass("identity-elimination", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2]) -> (%y: f32[2]) {\n"
            "  %y: f32[2] = Relu(%x)\n"
            "}\n");
}

TEST(IdentityEliminationTest, KeepsOutputIdentitiesOfInputsAndSharedValues) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Node* r = Op(g, "Relu", {x}, "r", F32({2}));
  // x is a graph input; r is read twice: neither can take an output name.
  g.AddOutput(Op(g, "Identity", {x}, "y", F32({2}))->output(0));
  g.AddOutput(Op(g, "Identity", {r->output(0)}, "z", F32({2}))->output(0));
  g.AddOutput(Op(g, "Neg", {r->output(0)}, "w", F32({2}))->output(0));
  EXPECT_FALSE(RunPass("identity-elimination", m));
}

TEST(CastEliminationTest, RemovesWideningRoundTripsOnly) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* f = g.AddInput("f", F32({2}));
  Value* d = g.AddInput("d", T(TP::DOUBLE, {2}));
  // f32 -> f64 -> f32 is the identity: every f32 is an f64.
  Node* up = Op(g, "Cast", {f}, "up", T(TP::DOUBLE, {2}),
                A(Attr::Int("to", TP::DOUBLE)));
  Node* back = Op(g, "Cast", {up->output(0)}, "back", F32({2}),
                  A(Attr::Int("to", TP::FLOAT)));
  // f64 -> f32 -> f64 rounds: kept.
  Node* down =
      Op(g, "Cast", {d}, "down", F32({2}), A(Attr::Int("to", TP::FLOAT)));
  Node* again = Op(g, "Cast", {down->output(0)}, "again", T(TP::DOUBLE, {2}),
                   A(Attr::Int("to", TP::DOUBLE)));
  // A cast to the type the value already has.
  Node* same =
      Op(g, "Cast", {f}, "same", F32({2}), A(Attr::Int("to", TP::FLOAT)));
  g.AddOutput(Op(g, "Add", {back->output(0), same->output(0)}, "y", F32({2}))
                  ->output(0));
  g.AddOutput(
      Op(g, "Neg", {again->output(0)}, "z", T(TP::DOUBLE, {2}))->output(0));
  EXPECT_TRUE(RunPass("cast-elimination", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%f: f32[2], %d: f64[2]) -> (%y: f32[2], %z: f64[2]) {\n"
            "  %down: f32[2] = Cast(%d) {to=1}\n"
            "  %again: f64[2] = Cast(%down) {to=11}\n"
            "  %y: f32[2] = Add(%f, %f)\n"
            "  %z: f64[2] = Neg(%again)\n"
            "}\n");
}

TEST(CastEliminationTest, KeepsIntToFloatToIntRoundTrip) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  // i32 -> f32 -> i32 loses integers above 2^24.
  Value* i = g.AddInput("i", T(TP::INT32, {2}));
  Node* f = Op(g, "Cast", {i}, "f", F32({2}), A(Attr::Int("to", TP::FLOAT)));
  Node* b = Op(g, "Cast", {f->output(0)}, "b", T(TP::INT32, {2}),
               A(Attr::Int("to", TP::INT32)));
  g.AddOutput(Op(g, "Neg", {b->output(0)}, "y", T(TP::INT32, {2}))->output(0));
  EXPECT_FALSE(RunPass("cast-elimination", m));
}

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

TEST(ReshapeFoldingTest, CollapsesChainsAndDropsNoOps) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2, 3}));
  Node* u = Op(g, "Unsqueeze", {x, I64(g, "ax", {0})}, "u", F32({1, 2, 3}));
  Node* r =
      Op(g, "Reshape", {u->output(0), I64(g, "s", {3, 2})}, "r", F32({3, 2}));
  // Squeeze(Unsqueeze(x)) has x's shape: no op at all.
  Node* s =
      Op(g, "Squeeze", {u->output(0), I64(g, "ax0", {0})}, "sq", F32({2, 3}));
  g.AddOutput(Op(g, "Neg", {r->output(0)}, "y", F32({3, 2}))->output(0));
  g.AddOutput(Op(g, "Relu", {s->output(0)}, "z", F32({2, 3}))->output(0));
  EXPECT_TRUE(RunPass("reshape-folding", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2,3]) -> (%y: f32[3,2], %z: f32[2,3]) {\n"
            "  init %s: i64[2] = i64[2]{3, 2}\n"
            "  %r: f32[3,2] = Reshape(%x, %s)\n"
            "  %y: f32[3,2] = Neg(%r)\n"
            "  %z: f32[2,3] = Relu(%x)\n"
            "}\n");
}

TEST(ReshapeFoldingTest, DropsSymbolicChainsThatEndInTheInputShape) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"B", 6}));
  Node* r1 =
      Op(g, "Reshape", {x, I64(g, "s1", {0, 2, 3})}, "r1", F32({"B", 2, 3}));
  // The 0 entry copies r1's dim 0, so r2 cannot read x directly by its
  // target; but r2's type is x's ([B,6], equal symbol names denote equal
  // sizes), so the chain is a no-op.
  Node* r2 = Op(g, "Reshape", {r1->output(0), I64(g, "s2", {0, 6})}, "r2",
                F32({"B", 6}));
  g.AddOutput(Op(g, "Neg", {r2->output(0)}, "y", F32({"B", 6}))->output(0));
  EXPECT_TRUE(RunPass("reshape-folding", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[B,6]) -> (%y: f32[B,6]) {\n"
            "  %y: f32[B,6] = Neg(%x)\n"
            "}\n");
}

TEST(ReduceKeepdimsTest, KeepsReducedAxesInsteadOfUnsqueeze) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2, 3, 4}));
  Node* r = Op(g, "ReduceSum", {x, I64(g, "axes", {2})}, "r", F32({2, 3}),
               A(Attr::Int("keepdims", 0)));
  Node* u = Op(g, "Unsqueeze", {r->output(0), I64(g, "u_axes", {-1})}, "u",
               F32({2, 3, 1}));
  // Another axis re-inserted: not the reduced one, kept.
  Node* r2 = Op(g, "ReduceMax", {x, I64(g, "axes1", {1})}, "r2", F32({2, 4}),
                A(Attr::Int("keepdims", 0)));
  Node* u2 = Op(g, "Unsqueeze", {r2->output(0), I64(g, "u2_axes", {2})}, "u2",
                F32({2, 4, 1}));
  g.AddOutput(Op(g, "Sub", {x, u->output(0)}, "y", F32({2, 3, 4}))->output(0));
  g.AddOutput(Op(g, "Neg", {u2->output(0)}, "z", F32({2, 4, 1}))->output(0));
  EXPECT_TRUE(RunPass("reduce-keepdims", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2,3,4]) -> (%y: f32[2,3,4], %z: f32[2,4,1]) "
            "{\n"
            "  init %axes: i64[1] = i64[1]{2}\n"
            "  init %axes1: i64[1] = i64[1]{1}\n"
            "  init %u2_axes: i64[1] = i64[1]{2}\n"
            "  %r: f32[2,3,1] = ReduceSum(%x, %axes) {keepdims=1}\n"
            "  %r2: f32[2,4] = ReduceMax(%x, %axes1) {keepdims=0}\n"
            "  %u2: f32[2,4,1] = Unsqueeze(%r2, %u2_axes)\n"
            "  %y: f32[2,3,4] = Sub(%x, %r)\n"
            "  %z: f32[2,4,1] = Neg(%u2)\n"
            "}\n");
}

TEST(ExpandEliminationTest, DropsExpandsThatBroadcastingMakesRedundant) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"B", 3}));
  Value* b = g.AddInput("b", F32({3}));
  Value* one = g.AddInput("one", F32({1, 1}));
  // x's shape, as the converter computes a dynamic broadcast target.
  Value* shape = Op(g, "Shape", {x}, "shape", T(TP::INT64, {2}))->output(0);
  Node* e = Op(g, "Expand", {b, shape}, "e", F32({"B", 3}));
  g.AddOutput(Op(g, "Add", {x, e->output(0)}, "y", F32({"B", 3}))->output(0));
  // [1,1] + Expand([1,1] -> [B,3]) needs the Expand for its shape.
  Node* e2 = Op(g, "Expand", {one, shape}, "e2", F32({"B", 3}));
  g.AddOutput(
      Op(g, "Mul", {one, e2->output(0)}, "z", F32({"B", 3}))->output(0));
  EXPECT_TRUE(RunPass("expand-elimination", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[B,3], %b: f32[3], %one: f32[1,1]) -> (%y: "
            "f32[B,3], %z: f32[B,3]) {\n"
            "  %shape: i64[2] = Shape(%x)\n"
            "  %y: f32[B,3] = Add(%x, %b)\n"
            "  %e2: f32[B,3] = Expand(%one, %shape)\n"
            "  %z: f32[B,3] = Mul(%one, %e2)\n"
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

TEST(EinsumToMatMulTest, RewritesDenseAndAttentionEquations) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2, 5, 8}));
  Value* w = g.AddInput("w", F32({4, 8}));
  Value* k = g.AddInput("k", F32({2, 7, 8}));
  // Dense with a (out, in) kernel: x @ w^T.
  Node* d = Op(g, "Einsum", {x, w}, "d", F32({2, 5, 4}),
               A(Attr::String("equation", "abc,dc->abd")));
  d->set_name("eqn0/dot_general/Einsum");
  // Attention scores q k^T with batch a.
  Node* s = Op(g, "Einsum", {x, k}, "s", F32({2, 5, 7}),
               A(Attr::String("equation", "abc,adc->abd")));
  // Summed out of one operand only: no MatMul form.
  Node* r = Op(g, "Einsum", {x, w}, "r", F32({2, 4}),
               A(Attr::String("equation", "abc,dc->ad")));
  g.AddOutput(d->output(0));
  g.AddOutput(s->output(0));
  g.AddOutput(r->output(0));
  EXPECT_TRUE(RunPass("einsum-to-matmul", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[2,5,8], %w: f32[4,8], %k: f32[2,7,8]) -> "
            "(%d: f32[2,5,4], %s: f32[2,5,7], %r: f32[2,4]) {\n"
            "  %Transpose: f32[8,4] = Transpose(%w) {perm=[1, 0]}  # "
            "eqn0/dot_general/Transpose\n"
            "  %d: f32[2,5,4] = MatMul(%x, %Transpose)  # "
            "eqn0/dot_general/MatMul\n"
            "  %Transpose_1: f32[2,8,7] = Transpose(%k) {perm=[0, 2, 1]}  # "
            "Transpose\n"
            "  %s: f32[2,5,7] = MatMul(%x, %Transpose_1)  # MatMul\n"
            "  %r: f32[2,4] = Einsum(%x, %w) {equation=\"abc,dc->ad\"}\n"
            "}\n");
}

TEST(EinsumToMatMulTest, MergesDenseGeneralKernelAxesWithReshapes) {
  // Flax DenseGeneral with a 3-D kernel, symbolic batch B: the q/k/v
  // projection `abc,cde->abde` (two rhs-free letters) and the output
  // projection `abcd,cde->abe` (two contracted letters).
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"B", 5, 6}));
  Value* h = g.AddInput("h", F32({"B", 5, 2, 3}));
  // wq[c, d, e] = 6c + 3d + e (c < 6, d < 2, e < 3); as [6, 6] row c holds
  // the (d, e) pairs in row-major order: exactly wq's bytes.
  std::vector<float> wq_values(36), wo_values(24);
  for (int i = 0; i < 36; ++i) wq_values[i] = static_cast<float>(i);
  for (int i = 0; i < 24; ++i) wo_values[i] = static_cast<float>(i);
  Value* wq =
      Init(g, "wq", Tensor::FromVector<float>(TP::FLOAT, {6, 2, 3}, wq_values));
  Value* wo =
      Init(g, "wo", Tensor::FromVector<float>(TP::FLOAT, {2, 3, 4}, wo_values));
  Node* q = Op(g, "Einsum", {x, wq}, "q", F32({"B", 5, 2, 3}),
               A(Attr::String("equation", "abc,cde->abde")));
  q->set_name("eqn0/dot_general/Einsum");
  Node* o = Op(g, "Einsum", {h, wo}, "o", F32({"B", 5, 4}),
               A(Attr::String("equation", "abcd,cde->abe")));
  o->set_name("eqn1/dot_general/Einsum");
  g.AddOutput(
      Op(g, "Neg", {q->output(0)}, "nq", F32({"B", 5, 2, 3}))->output(0));
  g.AddOutput(o->output(0));
  EXPECT_TRUE(RunPass("einsum-to-matmul", m));
  // q: x [B,5,6] @ wq as [6, 2*3] -> [B,5,6], split to [B,5,2,3] (B copied
  // with 0, the static 5 written out). o: h [B,5,2,3] merged to
  // [B,5,2*3] @ wo as [2*3, 4].
  EXPECT_EQ(
      PrintGraph(g),
      "graph main(%x: f32[B,5,6], %h: f32[B,5,2,3]) -> (%nq: f32[B,5,2,3], "
      "%o: f32[B,5,4]) {\n"
      "  init %shape: i64[2] = i64[2]{6, 6}\n"
      "  init %shape_1: i64[4] = i64[4]{0, 5, 2, 3}\n"
      "  init %shape_2: i64[3] = i64[3]{0, 5, 6}\n"
      "  init %shape_3: i64[2] = i64[2]{6, 4}\n"
      "  init %wo: f32[2,3,4] = f32[2,3,4]{0, 1, 2, 3, 4, 5, 6, 7, ... (24 "
      "elements, fnv1a e3d9403545dbe1aa)}\n"
      "  init %wq: f32[6,2,3] = f32[6,2,3]{0, 1, 2, 3, 4, 5, 6, 7, ... (36 "
      "elements, fnv1a 2b6bcf7024c1056a)}\n"
      "  %Reshape: f32[6,6] = Reshape(%wq, %shape)  # "
      "eqn0/dot_general/Reshape\n"
      "  %MatMul: f32[B,5,6] = MatMul(%x, %Reshape)  # "
      "eqn0/dot_general/MatMul\n"
      "  %q: f32[B,5,2,3] = Reshape(%MatMul, %shape_1)  # "
      "eqn0/dot_general/Reshape\n"
      "  %Reshape_1: f32[B,5,6] = Reshape(%h, %shape_2)  # "
      "eqn1/dot_general/Reshape\n"
      "  %Reshape_2: f32[6,4] = Reshape(%wo, %shape_3)  # "
      "eqn1/dot_general/Reshape\n"
      "  %o: f32[B,5,4] = MatMul(%Reshape_1, %Reshape_2)  # "
      "eqn1/dot_general/MatMul\n"
      "  %nq: f32[B,5,2,3] = Neg(%q)\n"
      "}\n");
  // Constant folding turns the kernel Reshapes into 2-D initializers with
  // the kernels' bytes unchanged (row-major), and the 3-D kernels go.
  EXPECT_TRUE(RunPass("constant-folding", m));
  EXPECT_EQ(
      PrintGraph(g),
      "graph main(%x: f32[B,5,6], %h: f32[B,5,2,3]) -> (%nq: f32[B,5,2,3], "
      "%o: f32[B,5,4]) {\n"
      "  init %Reshape: f32[6,6] = f32[6,6]{0, 1, 2, 3, 4, 5, 6, 7, ... (36 "
      "elements, fnv1a 2b6bcf7024c1056a)}\n"
      "  init %Reshape_2: f32[6,4] = f32[6,4]{0, 1, 2, 3, 4, 5, 6, 7, ... "
      "(24 elements, fnv1a e3d9403545dbe1aa)}\n"
      "  init %shape_1: i64[4] = i64[4]{0, 5, 2, 3}\n"
      "  init %shape_2: i64[3] = i64[3]{0, 5, 6}\n"
      "  %MatMul: f32[B,5,6] = MatMul(%x, %Reshape)  # "
      "eqn0/dot_general/MatMul\n"
      "  %q: f32[B,5,2,3] = Reshape(%MatMul, %shape_1)  # "
      "eqn0/dot_general/Reshape\n"
      "  %Reshape_1: f32[B,5,6] = Reshape(%h, %shape_2)  # "
      "eqn1/dot_general/Reshape\n"
      "  %o: f32[B,5,4] = MatMul(%Reshape_1, %Reshape_2)  # "
      "eqn1/dot_general/MatMul\n"
      "  %nq: f32[B,5,2,3] = Neg(%q)\n"
      "}\n");
  const Value* folded = g.initializer("Reshape");
  ASSERT_NE(folded, nullptr);
  ASSERT_EQ(folded->const_value()->bytes().size(), 36 * sizeof(float));
  EXPECT_EQ(std::memcmp(folded->const_value()->bytes().data(), wq_values.data(),
                        36 * sizeof(float)),
            0);
}

TEST(EinsumToMatMulTest, MergesBatchedContractionsAndRefusesInexactReshapes) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"B", 5, 2, 3}));
  Value* y = g.AddInput("y", F32({"B", 7, 2, 3}));
  Value* s = g.AddInput("s", F32({4, "S", 3}));
  Value* w = g.AddInput("w", F32({"S", 3, 6}));
  Value* z = g.AddInput("z", F32({"B", 5, 2, 3}));
  // Batch a, lhs-free b, contracted (c, d), rhs-free e: y goes to
  // [a, c, d, e] (Transpose) then [B, 6, 7] (B copied).
  Node* batched = Op(g, "Einsum", {x, y}, "p", F32({"B", 5, 7}),
                     A(Attr::String("equation", "abcd,aecd->abe")));
  // Two contracted letters, one symbolic (S): no static product, refused.
  Node* symbolic = Op(g, "Einsum", {s, w}, "r", F32({4, 6}),
                      A(Attr::String("equation", "abc,bcd->ad")));
  // Batch with two lhs-free letters: no MatMul form, refused.
  Node* two_free = Op(g, "Einsum", {z, y}, "t", F32({"B", 5, 2, 7}),
                      A(Attr::String("equation", "abcd,aecd->abce")));
  (void)two_free;
  g.AddOutput(batched->output(0));
  g.AddOutput(symbolic->output(0));
  g.AddOutput(two_free->output(0));
  EXPECT_TRUE(RunPass("einsum-to-matmul", m));
  EXPECT_EQ(
      PrintGraph(g),
      "graph main(%x: f32[B,5,2,3], %y: f32[B,7,2,3], %s: f32[4,S,3], %w: "
      "f32[S,3,6], %z: f32[B,5,2,3]) -> (%p: f32[B,5,7], %r: f32[4,6], %t: "
      "f32[B,5,2,7]) {\n"
      "  init %shape: i64[3] = i64[3]{0, 5, 6}\n"
      "  init %shape_1: i64[3] = i64[3]{0, 6, 7}\n"
      "  %Reshape: f32[B,5,6] = Reshape(%x, %shape)  # Reshape\n"
      "  %Transpose: f32[B,2,3,7] = Transpose(%y) {perm=[0, 2, 3, 1]}  # "
      "Transpose\n"
      "  %Reshape_1: f32[B,6,7] = Reshape(%Transpose, %shape_1)  # Reshape\n"
      "  %p: f32[B,5,7] = MatMul(%Reshape, %Reshape_1)  # MatMul\n"
      "  %r: f32[4,6] = Einsum(%s, %w) {equation=\"abc,bcd->ad\"}\n"
      "  %t: f32[B,5,2,7] = Einsum(%z, %y) {equation=\"abcd,aecd->abce\"}\n"
      "}\n");
}

TEST(GemmBiasFoldingTest, DenseLayerBiasAddBecomesGemmC) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"B", 4}));
  Value* w = g.AddInput("w", F32({4, 8}));
  Value* b = g.AddInput("b", F32({8}));
  Value* x3 = g.AddInput("x3", F32({2, "B", 4}));
  Value* big = g.AddInput("big", F32({3, "B", 8}));
  Node* mm = Op(g, "MatMul", {x, w}, "mm", F32({"B", 8}));
  // Bias first: either operand order.
  Node* dense = Op(g, "Add", {b, mm->output(0)}, "dense", F32({"B", 8}));
  // Rank-3 activations: no Gemm.
  Node* mm3 = Op(g, "MatMul", {x3, w}, "mm3", F32({2, "B", 8}));
  Node* dense3 = Op(g, "Add", {mm3->output(0), b}, "dense3", F32({2, "B", 8}));
  // The "bias" broadcasts the product to a larger shape: no Gemm.
  Node* mm2 = Op(g, "MatMul", {x, w}, "mm2", F32({"B", 8}));
  Node* wide = Op(g, "Add", {mm2->output(0), big}, "wide", F32({3, "B", 8}));
  g.AddOutput(dense->output(0));
  g.AddOutput(dense3->output(0));
  g.AddOutput(wide->output(0));
  EXPECT_TRUE(RunPass("gemm-bias-folding", m));
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[B,4], %w: f32[4,8], %b: f32[8], %x3: "
            "f32[2,B,4], %big: f32[3,B,8]) -> (%dense: f32[B,8], %dense3: "
            "f32[2,B,8], %wide: f32[3,B,8]) {\n"
            "  %dense: f32[B,8] = Gemm(%x, %w, %b)  # Gemm\n"
            "  %mm3: f32[2,B,8] = MatMul(%x3, %w)\n"
            "  %dense3: f32[2,B,8] = Add(%mm3, %b)\n"
            "  %mm2: f32[B,8] = MatMul(%x, %w)\n"
            "  %wide: f32[3,B,8] = Add(%mm2, %big)\n"
            "}\n");
}

TEST(TypePropagationTest, TypesUntypedOutputsFromTheInputTypes) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"B", 3}));
  Value* y = g.AddInput("y", F32({3}));
  Value* z = g.AddInput("z", F32({"C", 3}));
  auto untyped = [&](absl::string_view op, std::vector<Value*> ins,
                     std::string out, std::vector<Attr> attrs = {}) {
    return g.Append(
        Node::Create("", op, ins, {std::move(out)}, std::move(attrs)));
  };
  Node* add = untyped("Add", {x, y}, "add");
  Node* less = untyped("Less", {add->output(0), y}, "less");
  Node* cast =
      untyped("Cast", {add->output(0)}, "cast", A(Attr::Int("to", TP::DOUBLE)));
  Node* t = untyped("Transpose", {cast->output(0)}, "t",
                    A(Attr::Ints("perm", {1, 0})));
  Node* shape = untyped("Shape", {t->output(0)}, "shape");
  // B and C are different symbols: their broadcast is not decidable.
  Node* mixed = untyped("Add", {x, z}, "mixed");
  // Graph outputs must be typed: typed Identities read the values.
  g.AddOutput(Op(g, "Identity", {less->output(0)}, "o1", T(TP::BOOL, {"B", 3}))
                  ->output(0));
  g.AddOutput(Op(g, "Identity", {shape->output(0)}, "o2", T(TP::INT64, {2}))
                  ->output(0));
  g.AddOutput(
      Op(g, "Identity", {mixed->output(0)}, "o3", F32({Dim::Unknown(), 3}))
          ->output(0));
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(add->output(0)->type()->ToString(), "f32[B,3]");
  EXPECT_EQ(less->output(0)->type()->ToString(), "bool[B,3]");
  EXPECT_EQ(cast->output(0)->type()->ToString(), "f64[B,3]");
  EXPECT_EQ(t->output(0)->type()->ToString(), "f64[3,B]");
  EXPECT_EQ(shape->output(0)->type()->ToString(), "i64[2]");
  EXPECT_EQ(mixed->output(0)->type(), nullptr);
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, CompletesConvMatMulAndReshapeShapes) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"N", 3, 32, 31}));
  Value* w = g.AddInput("w", F32({8, 3, 3, 3}));
  Value* v = g.AddInput("v", F32({4}));
  Value* a = g.AddInput("a", F32({"N", 5, 6}));
  Value* b = g.AddInput("b", F32({6, 4}));
  Value* target = I64(g, "target", {0, -1, 2});
  // Conv with a dtype-only type (what the conv lowering leaves): spatial
  // sizes floor((32 + 0 + 1 - 2*(3-1) - 1) / 2) + 1 = 15 and
  // floor((31 + 1 + 1 - 2*(3-1) - 1) / 2) + 1 = 15; channels = w's 8.
  std::vector<Attr> conv_attrs;
  conv_attrs.push_back(Attr::Ints("pads", {0, 1, 1, 1}));
  conv_attrs.push_back(Attr::Ints("strides", {2, 2}));
  conv_attrs.push_back(Attr::Ints("dilations", {2, 2}));
  Node* conv = Op(g, "Conv", {x, w}, "conv", Type::Tensor(TP::FLOAT),
                  std::move(conv_attrs));
  // VALID and an unknown-size axis: 32 - 3 + 1 = 30 and ?.
  Node* valid = g.Append(Node::Create(
      "", "Conv", {conv->output(0), g.AddInput("w2", F32({4, 8, 3, 3}))},
      {"valid"}, A(Attr::String("auto_pad", "VALID"))));
  // MatMul: [N,5,6] @ [6,4] -> [N,5,4]; [6,4] @ [4] (1-D rhs: its axis is
  // dropped) -> [6].
  Node* mm = g.Append(Node::Create("", "MatMul", {a, b}, {"mm"}));
  Node* vec = g.Append(Node::Create("", "MatMul", {b, v}, {"vec"}));
  // Reshape [N,5,4] by {0, -1, 2}: N copied, -1 not computable under a
  // symbol -> no type; of the static [6,4] by {0, -1, 2}: [6, 2, 2].
  Node* r_sym =
      g.Append(Node::Create("", "Reshape", {mm->output(0), target}, {"rs"}));
  Node* r_static = g.Append(Node::Create("", "Reshape", {b, target}, {"rt"}));
  // A type that disagrees with the rule (dim 2 says 9): left as it is.
  Node* wrong =
      Op(g, "Relu", {mm->output(0)}, "wrong", F32({"N", Dim::Unknown(), 9}));
  for (Node* n : {conv, valid, vec, r_sym, r_static, wrong}) {
    g.AddOutput(Op(g, "Identity", {n->output(0)}, n->output(0)->name() + "_out",
                   Type::Tensor(TP::FLOAT))
                    ->output(0));
  }
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(conv->output(0)->type()->ToString(), "f32[N,8,15,15]");
  EXPECT_EQ(valid->output(0)->type()->ToString(), "f32[N,4,13,13]");
  EXPECT_EQ(mm->output(0)->type()->ToString(), "f32[N,5,4]");
  EXPECT_EQ(vec->output(0)->type()->ToString(), "f32[6]");
  EXPECT_EQ(r_sym->output(0)->type(), nullptr);
  EXPECT_EQ(r_static->output(0)->type()->ToString(), "f32[6,2,2]");
  EXPECT_EQ(wrong->output(0)->type()->ToString(), "f32[N,?,9]");
  EXPECT_FALSE(RunPass("type-propagation", m));
}

// The rules below follow the ONNX operators' shape inference; each expected
// type is derived by hand in the comment above its node.
Node* Untyped(Graph& g, absl::string_view op, std::vector<Value*> ins,
              std::string out, std::vector<Attr> attrs = {}) {
  return g.Append(
      Node::Create("", op, ins, {std::move(out)}, std::move(attrs)));
}

// Graph outputs must be typed: a dtype-only Identity reads each value.
void ReadByOutputs(Graph& g, const std::vector<Node*>& nodes, int dtype) {
  for (Node* n : nodes) {
    g.AddOutput(Op(g, "Identity", {n->output(0)}, n->output(0)->name() + "_out",
                   Type::Tensor(dtype))
                    ->output(0));
  }
}

TEST(TypePropagationTest, GatherInsertsTheIndicesShapeAtItsAxis) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* data = g.AddInput("data", F32({"B", 5, 7}));
  Value* idx = g.AddInput("idx", T(TP::INT64, {2, 3}));
  Value* one = g.AddInput("one", T(TP::INT64, Shape()));
  Value* y = g.AddInput("y", F32({"C", 5, 7}));
  // axis 1: [B] + [2,3] + [7].
  Node* mid = Untyped(g, "Gather", {data, idx}, "mid", A(Attr::Int("axis", 1)));
  // axis -1 (2) with scalar indices: [B,5] + [] + [].
  Node* last =
      Untyped(g, "Gather", {data, one}, "last", A(Attr::Int("axis", -1)));
  // Default axis 0: [2,3] + [5,7].
  Node* first = Untyped(g, "Gather", {data, idx}, "first");
  // Data of unknown type (B vs C does not broadcast statically): refused.
  Node* mixed = Untyped(g, "Add", {data, y}, "mixed");
  Node* blind = Untyped(g, "Gather", {mixed->output(0), idx}, "blind");
  ReadByOutputs(g, {mid, last, first, blind}, TP::FLOAT);
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(mid->output(0)->type()->ToString(), "f32[B,2,3,7]");
  EXPECT_EQ(last->output(0)->type()->ToString(), "f32[B,5]");
  EXPECT_EQ(first->output(0)->type()->ToString(), "f32[2,3,5,7]");
  EXPECT_EQ(blind->output(0)->type(), nullptr);
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, UnsqueezeInsertsOnesAtTheOutputAxes) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({"B", 3}));
  Value* run_time_axes = g.AddInput("axes", T(TP::INT64, {1}));
  // Output rank 2 + 2 = 4; axes {0, -1} are {0, 3}: [1, B, 3, 1].
  Node* both = Untyped(g, "Unsqueeze", {x, I64(g, "ends", {0, -1})}, "both");
  // Output rank 3; axis 1: [B, 1, 3].
  Node* inner = Untyped(g, "Unsqueeze", {x, I64(g, "one", {1})}, "inner");
  // Axes known only at run time: refused.
  Node* blind = Untyped(g, "Unsqueeze", {x, run_time_axes}, "blind");
  ReadByOutputs(g, {both, inner, blind}, TP::FLOAT);
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(both->output(0)->type()->ToString(), "f32[1,B,3,1]");
  EXPECT_EQ(inner->output(0)->type()->ToString(), "f32[B,1,3]");
  EXPECT_EQ(blind->output(0)->type(), nullptr);
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, ConcatSumsTheAxisAndMergesTheOtherDims) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* a = g.AddInput("a", F32({2, "B"}));
  Value* b = g.AddInput("b", F32({3, "B"}));
  Value* e = g.AddInput("e", F32({0, "B"}));
  Value* c = g.AddInput("c", F32({2, 4}));
  Value* s = g.AddInput("s", F32({"S", 4}));
  // axis 0: 2 + 3 + 0 = 5; dim 1 is B in all.
  Node* rows = Untyped(g, "Concat", {a, b, e}, "rows", A(Attr::Int("axis", 0)));
  // axis -1 (1): B + 4 is not static, so unknown; dim 0 is 2.
  Node* cols = Untyped(g, "Concat", {a, c}, "cols", A(Attr::Int("axis", -1)));
  // axis 1: 4 + 4 = 8; dim 0 merges S and 2: the static 2 (ONNX's merge;
  // the operands must agree at run time).
  Node* merged =
      Untyped(g, "Concat", {s, c}, "merged", A(Attr::Int("axis", 1)));
  // An operand of unknown type: refused.
  Node* mixed = Untyped(g, "Add", {a, g.AddInput("z", F32({2, "C"}))}, "mixed");
  Node* blind = Untyped(g, "Concat", {a, mixed->output(0)}, "blind",
                        A(Attr::Int("axis", 0)));
  ReadByOutputs(g, {rows, cols, merged, blind}, TP::FLOAT);
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(rows->output(0)->type()->ToString(), "f32[5,B]");
  EXPECT_EQ(cols->output(0)->type()->ToString(), "f32[2,?]");
  EXPECT_EQ(merged->output(0)->type()->ToString(), "f32[2,8]");
  EXPECT_EQ(blind->output(0)->type(), nullptr);
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, RangeLengthFromConstantIntOperands) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  auto i64 = [&](const std::string& name, int64_t v) {
    return Init(g, name, Tensor::FromVector<int64_t>(TP::INT64, {}, {v}));
  };
  auto i32 = [&](const std::string& name, int32_t v) {
    return Init(g, name, Tensor::FromVector<int32_t>(TP::INT32, {}, {v}));
  };
  // 2, 5, 8: ceil((11 - 2) / 3) = 3.
  Node* up =
      Untyped(g, "Range", {i64("s1", 2), i64("l1", 11), i64("d1", 3)}, "up");
  // 10, 6, 2: ceil((1 - 10) / -4) = ceil(2.25) = 3.
  Node* down =
      Untyped(g, "Range", {i64("s2", 10), i64("l2", 1), i64("d2", -4)}, "down");
  // Limit below start with a positive delta: max(ceil(-4 / 2), 0) = 0.
  Node* empty =
      Untyped(g, "Range", {i64("s3", 5), i64("l3", 1), i64("d3", 2)}, "empty");
  // int32: 0, 2, 4, 6: ceil(7 / 2) = 4, of start's dtype.
  Node* narrow =
      Untyped(g, "Range", {i32("s4", 0), i32("l4", 7), i32("d4", 2)}, "narrow");
  // Float operands: 1-D f32 whose length is left unknown (the rule computes
  // it from int operands only).
  auto f32 = [&](const std::string& name, float v) {
    return Init(g, name, Tensor::FromVector<float>(TP::FLOAT, {}, {v}));
  };
  Node* floats = Untyped(
      g, "Range", {f32("fs", 0), f32("fl", 1), f32("fd", 0.25f)}, "floats");
  ReadByOutputs(g, {up, down, empty}, TP::INT64);
  ReadByOutputs(g, {narrow}, TP::INT32);
  ReadByOutputs(g, {floats}, TP::FLOAT);
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(up->output(0)->type()->ToString(), "i64[3]");
  EXPECT_EQ(down->output(0)->type()->ToString(), "i64[3]");
  EXPECT_EQ(empty->output(0)->type()->ToString(), "i64[0]");
  EXPECT_EQ(narrow->output(0)->type()->ToString(), "i32[4]");
  EXPECT_EQ(floats->output(0)->type()->ToString(), "f32[?]");
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, SliceClampsStartsAndEndsPerAxis) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({10, "B", 6}));
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  // axis 0, [1, -1) = [1, 9): 8.
  Node* inner = Untyped(
      g, "Slice", {x, I64(g, "s1", {1}), I64(g, "e1", {-1}), I64(g, "a1", {0})},
      "inner");
  // axis 2 backwards by 2: start -1 -> 5, end INT64_MIN -> clamped to -1;
  // ceil((-1 - 5) / -2) = 3 (elements 5, 3, 1).
  Node* back = Untyped(g, "Slice",
                       {x, I64(g, "s2", {-1}), I64(g, "e2", {kMin}),
                        I64(g, "a2", {2}), I64(g, "st2", {-2})},
                       "back");
  // No axes: starts/ends cover axes 0, 1. Axis 0: start 20 and end 30
  // clamp to 10: 0. Axis 1 is symbolic: unknown.
  Node* clamped = Untyped(
      g, "Slice", {x, I64(g, "s3", {20, 0}), I64(g, "e3", {30, 2})}, "clamped");
  // axis -1 (2) by 3 from 0 to INT64_MAX (clamped to 6): ceil(6 / 3) = 2.
  Node* strided = Untyped(g, "Slice",
                          {x, I64(g, "s4", {0}), I64(g, "e4", {kMax}),
                           I64(g, "a4", {-1}), I64(g, "st4", {3})},
                          "strided");
  // Starts known only at run time: refused.
  Node* blind = Untyped(g, "Slice",
                        {x, g.AddInput("rs", T(TP::INT64, {1})),
                         I64(g, "e5", {2}), I64(g, "a5", {0})},
                        "blind");
  ReadByOutputs(g, {inner, back, clamped, strided, blind}, TP::FLOAT);
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(inner->output(0)->type()->ToString(), "f32[8,B,6]");
  EXPECT_EQ(back->output(0)->type()->ToString(), "f32[10,B,3]");
  EXPECT_EQ(clamped->output(0)->type()->ToString(), "f32[0,?,6]");
  EXPECT_EQ(strided->output(0)->type()->ToString(), "f32[10,B,2]");
  EXPECT_EQ(blind->output(0)->type(), nullptr);
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(TypePropagationTest, BitShiftBroadcastsLikeTheOtherBinaryOps) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", T(TP::UINT32, {"B", 4}));
  Value* k = g.AddInput("k", T(TP::UINT32, {4}));
  // [B,4] and [4] broadcast to [B,4]; the dtype is x's.
  Node* shl = Untyped(g, "BitShift", {x, k}, "shl",
                      A(Attr::String("direction", "LEFT")));
  ReadByOutputs(g, {shl}, TP::UINT32);
  EXPECT_TRUE(RunPass("type-propagation", m));
  EXPECT_EQ(shl->output(0)->type()->ToString(), "u32[B,4]");
  EXPECT_FALSE(RunPass("type-propagation", m));
}

TEST(NodeNamingTest, NamesUnnamedNodesAndMakesNamesUnique) {
  Model m;
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({2}));
  Node* a = Op(g, "Relu", {x}, "a", F32({2}));
  a->set_name("eqn0/relu/Relu");
  Node* b = Op(g, "Relu", {a->output(0)}, "b", F32({2}));
  b->set_name("eqn0/relu/Relu");
  Node* c = Op(g, "Neg", {b->output(0)}, "c", F32({2}));
  g.AddOutput(c->output(0));
  EXPECT_TRUE(RunPass("node-naming", m, /*input_is_valid=*/false));
  EXPECT_EQ(a->name(), "eqn0/relu/Relu");
  EXPECT_EQ(b->name(), "eqn0/relu/Relu_1");
  EXPECT_EQ(c->name(), "Neg");
  EXPECT_FALSE(RunPass("node-naming", m));
}

Value* Slice(Graph& g, Value* x, const std::string& name,
             std::vector<int64_t> starts, std::vector<int64_t> ends,
             std::vector<int64_t> axes, Shape shape,
             std::vector<int64_t> steps = {}) {
  std::vector<Value*> ins = {x, I64(g, name + "_starts", starts),
                             I64(g, name + "_ends", ends),
                             I64(g, name + "_axes", axes)};
  if (!steps.empty()) ins.push_back(I64(g, name + "_steps", steps));
  return Op(g, "Slice", ins, name, F32(shape))->output(0);
}

TEST(SlicesToSplitTest, StaticSlicesAlongOneAxisBecomeOneSplit) {
  Model m;
  m.SetOpsetVersion("", 23);
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({6, "B"}));
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // Rows [0,2), [2,3) and [-2, end) = [4,6) of the 6: five of six rows in
  // three disjoint ranges, so one Split into [2, 1, 1, 2] whose third
  // output (the gap, row 3) nobody reads. Axis 1 is symbolic and taken
  // whole by `a` (start 0, end INT64_MAX).
  Value* a = Slice(g, x, "a", {0, 0}, {2, kMax}, {0, 1}, {2, "B"});
  Value* b = Slice(g, x, "b", {2}, {3}, {0}, {1, "B"});
  Value* c = Slice(g, x, "c", {-2}, {kMax}, {-2}, {2, "B"});
  // Refused: the only slice of its group (columns of x), a stride of 2,
  // and a repeat of b's range (it keeps its own Slice).
  Value* d = Slice(g, x, "d", {1}, {2}, {1}, {6, 1});
  Value* e = Slice(g, x, "e", {0}, {6}, {0}, {3, "B"}, {2});
  Value* f = Slice(g, x, "f", {2}, {3}, {0}, {1, "B"});
  g.AddOutput(Op(g, "Neg", {a}, "na", F32({2, "B"}))->output(0));
  g.AddOutput(b);  // a graph output keeps its name
  g.AddOutput(Op(g, "Neg", {c}, "nc", F32({2, "B"}))->output(0));
  g.AddOutput(Op(g, "Neg", {d}, "nd", F32({6, 1}))->output(0));
  g.AddOutput(Op(g, "Neg", {e}, "ne", F32({3, "B"}))->output(0));
  g.AddOutput(Op(g, "Neg", {f}, "nf", F32({1, "B"}))->output(0));
  EXPECT_TRUE(RunPass("slices-to-split", m));
  EXPECT_EQ(
      PrintGraph(g),
      "graph main(%x: f32[6,B]) -> (%na: f32[2,B], %b: f32[1,B], %nc: "
      "f32[2,B], %nd: f32[6,1], %ne: f32[3,B], %nf: f32[1,B]) {\n"
      "  init %d_axes: i64[1] = i64[1]{1}\n"
      "  init %d_ends: i64[1] = i64[1]{2}\n"
      "  init %d_starts: i64[1] = i64[1]{1}\n"
      "  init %e_axes: i64[1] = i64[1]{0}\n"
      "  init %e_ends: i64[1] = i64[1]{6}\n"
      "  init %e_starts: i64[1] = i64[1]{0}\n"
      "  init %e_steps: i64[1] = i64[1]{2}\n"
      "  init %f_axes: i64[1] = i64[1]{0}\n"
      "  init %f_ends: i64[1] = i64[1]{3}\n"
      "  init %f_starts: i64[1] = i64[1]{2}\n"
      "  init %split_sizes: i64[4] = i64[4]{2, 1, 1, 2}\n"
      "  %a: f32[2,B], %b: f32[1,B], %split_gap: f32[1,B], %c: f32[2,B] = "
      "Split(%x, %split_sizes) {axis=0}  # Split\n"
      "  %d: f32[6,1] = Slice(%x, %d_starts, %d_ends, %d_axes)\n"
      "  %e: f32[3,B] = Slice(%x, %e_starts, %e_ends, %e_axes, %e_steps)\n"
      "  %f: f32[1,B] = Slice(%x, %f_starts, %f_ends, %f_axes)\n"
      "  %na: f32[2,B] = Neg(%a)\n"
      "  %nc: f32[2,B] = Neg(%c)\n"
      "  %nd: f32[6,1] = Neg(%d)\n"
      "  %ne: f32[3,B] = Neg(%e)\n"
      "  %nf: f32[1,B] = Neg(%f)\n"
      "}\n");
}

TEST(SlicesToSplitTest, RefusesOverlapsAndSparseCoverage) {
  Model m;
  m.SetOpsetVersion("", 23);
  Graph& g = m.graph();
  g.set_name("main");
  Value* x = g.AddInput("x", F32({8}));
  Value* y = g.AddInput("y", F32({8}));
  // Overlapping ranges [0,3) and [2,4) of x; two single elements of y
  // (2 of 8 elements: a Split would copy four times what they read).
  Value* a = Slice(g, x, "a", {0}, {3}, {0}, {3});
  Value* b = Slice(g, x, "b", {2}, {4}, {0}, {2});
  Value* c = Slice(g, y, "c", {0}, {1}, {0}, {1});
  Value* d = Slice(g, y, "d", {5}, {6}, {0}, {1});
  for (Value* v : {a, b, c, d}) g.AddOutput(v);
  EXPECT_FALSE(RunPass("slices-to-split", m));
}

}  // namespace
}  // namespace jax2onnx::ir
