#include <memory>

#include "gtest/gtest.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {
namespace {

Literal UntypedInt(int64_t v) {
  Literal lit;
  lit.kind = Literal::Kind::kInt;
  lit.int_value = v;
  lit.text = std::to_string(v);
  return lit;
}

TEST(LiteralDTypeTest, TypedLiteralKeepsItsPrintedType) {
  Literal lit = UntypedInt(2);
  lit.aval = Aval::Static(DType::kU8, {});
  EXPECT_EQ(LiteralDType(lit, nullptr), DType::kU8);
}

TEST(LiteralDTypeTest, UntypedIntTakesASiblingIntOperandsType) {
  ClosedJaxpr j;
  Var* x = j.NewVar("a", Aval::Static(DType::kI64, {3}));
  Eqn eqn;
  eqn.primitive = "add";
  eqn.inputs = {Atom::OfVar(x), Atom::OfLiteral(UntypedInt(1))};
  EXPECT_EQ(LiteralDType(*eqn.inputs[1].literal, &eqn), DType::kI64);
}

// `pjit[name=_take ...] x 0` where the callee's second invar is i32[]: the
// literal is an index, so it must not take the f32 type of operand x.
TEST(LiteralDTypeTest, UntypedOperandOfACallTakesTheCalleeInvarType) {
  auto callee = std::make_shared<ClosedJaxpr>();
  callee->invars = {callee->NewVar("a", Aval::Static(DType::kF32, {4})),
                    callee->NewVar("b", Aval::Static(DType::kI32, {}))};
  ClosedJaxpr outer;
  Var* x = outer.NewVar("x", Aval::Static(DType::kF32, {4}));
  Eqn eqn;
  eqn.primitive = "pjit";
  eqn.params.Set("jaxpr", ParamValue::Jaxpr(callee));
  eqn.inputs = {Atom::OfVar(x), Atom::OfLiteral(UntypedInt(0))};
  EXPECT_EQ(LiteralDType(*eqn.inputs[1].literal, &eqn), DType::kI32);
}

// `c:bf16[16] = broadcast_in_dim[...] 1.0` (JAX <= 0.4 prints literals
// untyped): no operand to follow, so the literal takes the result's float
// dtype; reading it as f32 broadcast 4-byte elements into a 2-byte array.
TEST(LiteralDTypeTest, UntypedFloatWithoutOperandsTakesTheResultsFloatType) {
  ClosedJaxpr j;
  Eqn eqn;
  eqn.primitive = "broadcast_in_dim";
  Literal one;
  one.kind = Literal::Kind::kFloat;
  one.float_value = 1.0;
  eqn.inputs = {Atom::OfLiteral(one)};
  eqn.outputs = {j.NewVar("c", Aval::Static(DType::kBF16, {16}))};
  EXPECT_EQ(LiteralDType(*eqn.inputs[0].literal, &eqn), DType::kBF16);
  // A non-float result (a comparison) gives no hint: the f32 default.
  eqn.outputs = {j.NewVar("p", Aval::Static(DType::kBool, {16}))};
  EXPECT_EQ(LiteralDType(*eqn.inputs[0].literal, &eqn), DType::kF32);
}

TEST(LiteralDTypeTest, DefaultsWithoutContext) {
  Literal f;
  f.kind = Literal::Kind::kFloat;
  EXPECT_EQ(LiteralDType(f, nullptr), DType::kF32);
  EXPECT_EQ(LiteralDType(UntypedInt(1), nullptr), DType::kI32);
}

}  // namespace
}  // namespace jax2onnx::jaxpr
