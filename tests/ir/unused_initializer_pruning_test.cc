// The unused-initializer-pruning pass
// (ir/passes/unused_initializer_pruning.cc): initializers no node, subgraph or
// input default reads are removed. The graph before is stated as IR text;
// expected text is written by hand.
#include <string>

#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "tests/ir/pass_test_util.h"

namespace jax2onnx::ir {
namespace {

using pass_test::ParseIr;
using pass_test::RunPassAlone;

TEST(UnusedInitializerPruningTest, RemovesOnlyUnusedNonInputInitializers) {
  // inner_only is read only inside the branches; d is an input with a
  // default that nothing reads.
  Model m = ParseIr(R"(
    graph main(%x: f32[2], %c: bool[], %d: f32[1])
        -> (%y: f32[2], %o: f32[1]) {
      init %w: f32[2] = f32[2]{1, 2}
      init %unused: f32[1] = f32[1]{3}
      init %d: f32[1] = f32[1]{4}
      init %inner_only: f32[1] = f32[1]{5}
      %o: f32[1] = If(%c) {then_branch=graph body() -> (%n: f32[1]) {
        %n: f32[1] = Neg(%inner_only)
      }, else_branch=graph else_body() -> (%a: f32[1]) {
        %a: f32[1] = Abs(%inner_only)
      }}
      %y: f32[2] = Mul(%x, %w)
    })");
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_TRUE(RunPassAlone("unused-initializer-pruning", m));
  EXPECT_EQ(PrintGraph(m.graph()),
            "graph main(%x: f32[2], %c: bool[], %d: f32[1]) -> (%y: f32[2], "
            "%o: f32[1]) {\n"
            "  init %d: f32[1] = f32[1]{4}\n"
            "  init %inner_only: f32[1] = f32[1]{5}\n"
            "  init %w: f32[2] = f32[2]{1, 2}\n"
            "  %o: f32[1] = If(%c) {else_branch=graph else_body() -> (%a: "
            "f32[1]) {\n"
            "    %a: f32[1] = Abs(%inner_only)\n"
            "  }, then_branch=graph body() -> (%n: f32[1]) {\n"
            "    %n: f32[1] = Neg(%inner_only)\n"
            "  }}\n"
            "  %y: f32[2] = Mul(%x, %w)\n"
            "}\n");
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  EXPECT_FALSE(RunPassAlone("unused-initializer-pruning", m));
}

}  // namespace
}  // namespace jax2onnx::ir
