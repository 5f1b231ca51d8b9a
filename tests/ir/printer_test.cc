// The IR printer (ir/printer.cc): graphs, subgraphs, absent values, domains
// and long tensors as text. Expected text is written by hand.
#include "ir/printer.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/ir.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::AddNode;
using pass_test::F32;
using pass_test::Floats;
using ::testing::HasSubstr;

TEST(PrinterTest, PrintsGraphWithInitializersAttributesAndNodeNames) {
  Graph g("main");
  Value* x = g.AddInput("x", F32({"B", 3}));
  Value* w = *g.AddInitializer("w", Floats({1, 2, 3}));
  Node* relu = AddNode(g, "Relu", {x}, {"t"}, F32({"B", 3}));
  Node* add = AddNode(g, "Add", {relu->output(0), w}, {"y"}, F32({"B", 3}));
  add->set_name("add_0");
  add->SetAttr(Attr::Ints("perm", {1, 0}));
  add->SetAttr(Attr::Float("alpha", 0.5f));
  add->SetAttr(Attr::String("mode", "a\"b"));
  g.AddOutput(add->output(0));
  // Attributes come out sorted by name, the string C-escaped.
  EXPECT_EQ(PrintGraph(g),
            "graph main(%x: f32[B,3]) -> (%y: f32[B,3]) {\n"
            "  init %w: f32[3] = f32[3]{1, 2, 3}\n"
            "  %t: f32[B,3] = Relu(%x)\n"
            "  %y: f32[B,3] = Add(%t, %w) {alpha=0.5, mode=\"a\\\"b\", "
            "perm=[1, 0]}  # add_0\n"
            "}\n");
  EXPECT_EQ(PrintNode(*relu), "%t: f32[B,3] = Relu(%x)");
}

TEST(PrinterTest, PrintsSubgraphsAbsentValuesAndDomains) {
  Graph g("main");
  Value* c = g.AddInput("c", Type::Tensor(onnx::TensorProto::BOOL, Shape()));
  Value* x = g.AddInput("x", F32({2}));
  auto then_g = std::make_unique<Graph>("then_g");
  AddNode(*then_g, "Neg", {x}, {"e"});
  then_g->AddOutput(then_g->last_node()->output(0));
  Node* if_node = g.Append(Node::Create("", "If", {c}, {"o"}));
  if_node->SetAttr(Attr::GraphValue("then_branch", std::move(then_g)));
  Node* custom =
      g.Append(Node::Create("my.domain", "Op", {x, nullptr, x}, {"", "p"}));
  (void)custom;
  EXPECT_EQ(PrintGraph(g),
            "graph main(%c: bool[], %x: f32[2]) -> () {\n"
            "  %o = If(%c) {then_branch=graph then_g() -> (%e: f32[2]) {\n"
            "    %e: f32[2] = Neg(%x)\n"
            "  }}\n"
            "  _, %p = my.domain::Op(%x, _, %x)\n"
            "}\n");
}

TEST(PrinterTest, LongTensorsShowHeadCountAndDigest) {
  std::vector<float> v(20, 1.0f);
  std::string text = PrintTensor(Floats(v));
  EXPECT_THAT(text, HasSubstr("f32[20]{1, 1, 1, 1, 1, 1, 1, 1, ... (20 "
                              "elements, fnv1a "));
}

}  // namespace
}  // namespace jax2onnx::ir
