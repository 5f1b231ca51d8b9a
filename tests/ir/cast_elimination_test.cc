// The cast-elimination pass (ir/passes/cast_elimination.cc) on small hand-built
// graphs: the graph after is compared as printed text written by hand (values
// derived in comments) and each test also pins what the pass refuses
// (tests/ir/pass_test_util.h: verifier around the pass, cleanup after, ONNX
// Runtime accepts the model before and after).
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
using pass_test::Op;
using pass_test::RunPass;
using pass_test::T;
using pass_test::TP;

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

}  // namespace
}  // namespace jax2onnx::ir
