// Pipeline-independent lowering recipes for the elementwise family (lax
// arithmetic, math, bitwise, comparisons, select_n, clamp, conversions).
//
// Both pipelines lower these primitives the same way, so the recipes are
// written once against an "emitter" (template parameter E) that each pipeline
// implements in its plugins*/lax/elementwise.cc. An emitter provides:
//   using Value;                                  // a value handle
//   const jaxpr::Eqn& eqn() const;
//   jaxpr::DType InType(int i) const;             // JAX dtype of operand i
//   jaxpr::DType OutType() const;                 // JAX dtype of output 0
//   absl::StatusOr<Value> In(int i);              // operand i
//   jaxpr::DType TypeOf(const Value&) const;      // JAX dtype of a value
//   Value Op(op_type, inputs, out_dtype, int_attrs = {});
//   Value BitShift(x, amount, bool left);         // ONNX BitShift
//   int opset() const;                            // target ONNX opset
//   Value Const(const jaxpr::Array&);
//   absl::StatusOr<Value> ShapeValue(dims);       // 1-D int64 shape
//   absl::Status SetOut(const Value&);            // binds output 0
//
// The recipes reproduce XLA's CPU semantics as the reference interpreter
// (jaxpr/eval/elementwise.cc) documents them, using only ops and dtypes ONNX
// Runtime has CPU kernels for (probed against onnxruntime-node 1.30): f16
// and bf16 compute in f32 and round back per primitive, as XLA CPU does;
// integer corner cases (division by zero, INT_MIN / -1, shift amounts >= the
// bit width, float->int saturation) are emulated explicitly because ONNX
// leaves them undefined.
#ifndef JAX2ONNX_PLUGIN_ELEMENTWISE_PLAN_H_
#define JAX2ONNX_PLUGIN_ELEMENTWISE_PLAN_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "plugin/elementwise_special_recipes.h"

namespace jax2onnx::plugin::elementwise {

template <class E>
absl::Status RefuseAlways(E& e, absl::string_view why) {
  return Refuse(e.eqn(), e.OutType(), why);
}

// The table both pipelines register. Notes land in LoweringInfo.
template <class E>
const std::vector<Rule<E>>& Rules() {
  using S = absl::Status;
  static const std::vector<Rule<E>>* const rules = new std::vector<Rule<E>>{
      {"add", +[](E& e) -> S { return Arith(e, "Add"); }, {"Add", "Or"}, "bool as Or; f16/bf16 in f32, bit-exact (f32 > 2p+2 bits)"},
      {"sub", +[](E& e) -> S { return Arith(e, "Sub"); }, {"Sub"}, "f16/bf16 in f32, bit-exact (f32 > 2p+2 bits)"},
      {"mul", +[](E& e) -> S { return Arith(e, "Mul"); }, {"Mul", "And"}, "bool as And; f16/bf16 in f32, bit-exact (f32 > 2p+2 bits)"},
      {"div", &LowerDiv<E>, {"Div", "Where", "Equal"}, "integers: x/0 = -1 (all ones), INT_MIN/-1 = INT_MIN, guarded before Div; f16/bf16 in f32, bit-exact"},
      {"rem", &LowerRem<E>, {"Mod", "Div", "Mul", "Sub", "Where"}, "floats: Mod fmod=1; integers: a - trunc(a/b)*b with x%0 = x"},
      {"pow", &LowerPow<E>, {"Pow", "BitwiseAnd", "Mul", "Where"}, "integer pow unrolled square-and-multiply (wrapping; negative exponents 0 except bases +-1)"},
      {"max", +[](E& e) -> S { return MaxMin(e, true); }, {"Max", "Or"}, "bool as Or; NaN propagates (ORT Max); i16/u16 in i32; -0 < +0 as IEEE maximum"},
      {"min", +[](E& e) -> S { return MaxMin(e, false); }, {"Min", "And"}, "bool as And; NaN propagates (ORT Min); i16/u16 in i32; -0 < +0 as IEEE minimum"},
      {"neg", &LowerNeg<E>, {"Neg", "Sub"}, "unsigned as 0 - x"},
      {"abs", &LowerAbs<E>, {"Abs"}, "INT_MIN wraps"},
      {"sign", &LowerSign<E>, {"Sign", "Where"}, "keeps NaN and signed zeros"},
      {"floor", +[](E& e) -> S { return NativeFloat(e, "Floor"); }, {"Floor"}, "f16/bf16 in f32, bit-exact (f32 > 2p+2 bits)"},
      {"ceil", +[](E& e) -> S { return NativeFloat(e, "Ceil"); }, {"Ceil"}, "f16/bf16 in f32, bit-exact (f32 > 2p+2 bits)"},
      {"round", &LowerRound<E>, {"Round", "Floor", "Where"}, "rounding_method 0 (away from zero) emulated with Floor; 1 is ONNX Round"},
      {"is_finite", &LowerIsFinite<E>, {"IsNaN", "IsInf", "Or", "Not"}, ""},
      {"exp", +[](E& e) -> S { return NativeFloat(e, "Exp"); }, {"Exp"}, "f16/bf16 in f32 rounded once: within 1 ulp"},
      {"exp2", +[](E& e) -> S { return FloatMath(e, 1, [](E& e, const std::vector<V<E>>& x, DType c) -> absl::StatusOr<V<E>> { return Bin(e, "Pow", FConst(e, c, 2.0), x[0]); }); }, {"Pow"}, "as Pow(2, x)"},
      {"expm1", +[](E& e) -> S { return FloatMath(e, 1, [](E& e, const std::vector<V<E>>& x, DType) -> absl::StatusOr<V<E>> { return Expm1(e, x[0]); }); }, {"Exp", "Log", "Where"}, "Kahan's (e^x - 1) x / log(e^x), no cancellation"},
      {"log", +[](E& e) -> S { return NativeFloat(e, "Log"); }, {"Log"}, "f16/bf16 in f32 rounded once: within 1 ulp"},
      {"log1p", +[](E& e) -> S { return FloatMath(e, 1, [](E& e, const std::vector<V<E>>& x, DType) -> absl::StatusOr<V<E>> { return Log1p(e, x[0]); }); }, {"Log", "Where"}, "Kahan's log(1+x) x / ((1+x) - 1), no cancellation"},
      {"sqrt", +[](E& e) -> S { return NativeFloat(e, "Sqrt"); }, {"Sqrt"}, "f16/bf16 in f32, bit-exact (f32 > 2p+2 bits)"},
      {"rsqrt", +[](E& e) -> S { return FloatMath(e, 1, [](E& e, const std::vector<V<E>>& x, DType c) -> absl::StatusOr<V<E>> { return Bin(e, "Div", FConst(e, c, 1.0), Un(e, "Sqrt", x[0])); }); }, {"Sqrt", "Div"}, "1 / Sqrt (two roundings)"},
      {"cbrt", &LowerCbrt<E>, {"Pow", "Abs", "Where"}, "Pow(|x|, 1/3) plus one Newton step, x's sign"},
      {"tanh", +[](E& e) -> S { return NativeFloat(e, "Tanh"); }, {"Tanh"}, "f16/bf16 in f32 rounded once: within 1 ulp"},
      {"logistic", +[](E& e) -> S { return NativeFloat(e, "Sigmoid"); }, {"Sigmoid"}, "f16/bf16 in f32 rounded once: within 1 ulp"},
      {"sin", +[](E& e) -> S { return NativeFloat(e, "Sin"); }, {"Sin"}, "f16/bf16 in f32 rounded once: within 1 ulp"},
      {"cos", +[](E& e) -> S { return NativeFloat(e, "Cos"); }, {"Cos"}, "f16/bf16 in f32 rounded once: within 1 ulp"},
      {"tan", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Tan", &TanF64<E>); }, {"Tan", "Sin", "Cos"}, "f64 as Sin/Cos (ORT Tan is f32-only)"},
      {"asin", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Asin", &AsinF64<E>); }, {"Asin", "Atan"}, "f64 as atan2(x, sqrt(1-x^2)) with Newton-refined atan"},
      {"acos", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Acos", &AcosF64<E>); }, {"Acos", "Atan"}, "f64 as atan2(sqrt(1-x^2), x) with Newton-refined atan"},
      {"atan", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Atan", &Atan<E>); }, {"Atan", "Sin", "Cos"}, "f64: f32 Atan plus two f64 Newton steps"},
      {"atan2", +[](E& e) -> S { return FloatMath(e, 2, [](E& e, const std::vector<V<E>>& x, DType) -> absl::StatusOr<V<E>> { return Atan2(e, x[0], x[1]); }); }, {"Atan", "Div", "Where"}, "atan(y/x) with quadrant, signed-zero and infinity fixes"},
      {"sinh", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Sinh", &SinhF64<E>); }, {"Sinh", "Exp"}, "f64 via expm1 (ORT Sinh is f32-only)"},
      {"cosh", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Cosh", &CoshF64<E>); }, {"Cosh", "Exp"}, "f64 via Exp (ORT Cosh is f32-only)"},
      {"asinh", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Asinh", &AsinhF64<E>); }, {"Asinh", "Log"}, "f64 via log1p (ORT Asinh is f32-only)"},
      {"acosh", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Acosh", &AcoshF64<E>); }, {"Acosh", "Log"}, "f64 via log1p (ORT Acosh is f32-only)"},
      {"atanh", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Atanh", &AtanhF64<E>); }, {"Atanh", "Log"}, "f64 via log1p (ORT Atanh is f32-only)"},
      {"erf", +[](E& e) -> S { return LowerErf(e, false); }, {"Erf", "Exp", "Div"}, "f64: series below 2, continued fraction above (ORT Erf is f32-only)"},
      {"erfc", +[](E& e) -> S { return LowerErf(e, true); }, {"Exp", "Div"}, "f32: Numerical Recipes erfcc in f64 (rel. error < 1.2e-7); f64: series below 2, continued fraction above"},
      {"digamma", &LowerDigamma<E>, {"Log", "Sin", "Cos", "Floor", "Div", "Where"}, "in f64: reflection, 6 recurrence steps, asymptotic series (as the interpreter)"},
      {"erf_inv", &LowerErfInv<E>, {"Log", "Sqrt", "Mul", "Add", "Where", "Exp"}, "f32: XLA's erfInv32 op for op, log1p correctly rounded via f64 (bit-exact with the interpreter); f64: Giles' polynomial + four Newton steps"},
      {"integer_pow", &LowerIntegerPow<E>, {"Mul", "Div", "Expand"}, "square-and-multiply rounding per multiply like JAX's lowering"},
      {"square", &LowerSquare<E>, {"Mul"}, ""},
      {"not", +[](E& e) -> S { return Bitwise(e, "Not", std::nullopt); }, {"Not", "BitwiseNot", "BitShift", "Slice"}, "opset 17: bit planes"},
      {"and", +[](E& e) -> S { return Bitwise(e, "And", BitOp::kAnd); }, {"And", "BitwiseAnd", "BitShift", "Slice"}, "opset 17: bit planes"},
      {"or", +[](E& e) -> S { return Bitwise(e, "Or", BitOp::kOr); }, {"Or", "BitwiseOr", "BitShift", "Slice"}, "opset 17: bit planes"},
      {"xor", +[](E& e) -> S { return Bitwise(e, "Xor", BitOp::kXor); }, {"Xor", "BitwiseXor", "BitShift", "Slice"}, "opset 17: bit planes"},
      {"shift_left", +[](E& e) -> S { return Shift(e, ShiftKind::kLeft); }, {"BitShift", "Mul", "Less"}, "in an unsigned carrier; amounts >= width give 0"},
      {"shift_right_logical", +[](E& e) -> S { return Shift(e, ShiftKind::kRightLogical); }, {"BitShift", "Mul", "Less"}, "in an unsigned carrier; amounts >= width give 0"},
      {"shift_right_arithmetic", +[](E& e) -> S { return Shift(e, ShiftKind::kRightArithmetic); }, {"BitShift", "BitwiseXor", "Min"}, "~(~x >> n) for negative x; amounts >= width give the sign fill"},
      {"population_count", &LowerPopulationCount<E>, {"BitShift", "BitwiseAnd", "Sub", "Add", "Mul"}, "SWAR bit count"},
      {"clz", &LowerClz<E>, {"BitShift", "BitwiseOr", "Sub"}, "bit smear then SWAR count"},
      {"mulhi", &LowerMulhi<E>, {"Mul", "BitShift", "Add", "Sub", "Cast", "Where"}, "exact: 64-bit product (w <= 32) or 32-bit limbs (w = 64)"},
      {"eq", +[](E& e) -> S { return Compare(e, "Equal", false); }, {"Equal"}, ""},
      {"ne", +[](E& e) -> S { return Compare(e, "Equal", true); }, {"Equal", "Not"}, ""},
      {"lt", +[](E& e) -> S { return Compare(e, "Less", false); }, {"Less"}, "bool as u8"},
      {"le", +[](E& e) -> S { return Compare(e, "LessOrEqual", false); }, {"LessOrEqual"}, "bool as u8"},
      {"gt", +[](E& e) -> S { return Compare(e, "Greater", false); }, {"Greater"}, "bool as u8"},
      {"ge", +[](E& e) -> S { return Compare(e, "GreaterOrEqual", false); }, {"GreaterOrEqual"}, "bool as u8"},
      {"select_n", &LowerSelectN<E>, {"Where", "GreaterOrEqual", "Expand"}, "nested Where on operands expanded to the output shape; Where carriers for dtypes ORT lacks"},
      {"clamp", &LowerClamp<E>, {"Max", "Min"}, "min(max(lo, x), hi)"},
      {"convert_element_type", &LowerConvert<E>, {"Cast", "Equal", "Not", "Max", "Min", "Where"}, "float->int saturates (NaN -> 0) before Cast"},
      {"nextafter", &LowerNextAfter<E>, {"Log", "Pow", "Floor", "Where"}, "ulp from the binade (log2 corrected by exact powers of two), no bitcast"},
      {"reduce_precision", &LowerReducePrecision<E>, {"Round", "Pow", "Log", "Floor", "Where"}, "arithmetic in f64 (no bitcast): round-half-even at the value's quantum, exponent overflow/underflow to signed inf/zero; mantissa_bits=0 refused"},
  };
  return *rules;
}

// Runs the recipe registered for the equation's primitive after refusing
// dtypes ONNX cannot compute (complex, f8 and other pass-through types).
template <class E>
absl::Status LowerElementwise(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  std::vector<DType> dtypes = {e.OutType()};
  for (int i = 0; i < static_cast<int>(eqn.inputs.size()); ++i) {
    dtypes.push_back(e.InType(i));
  }
  for (DType d : dtypes) {
    if (jaxpr::IsComplex(d)) {
      return Refuse(eqn, d, "ONNX has no complex arithmetic");
    }
    if (d == DType::kOther || d == DType::kInvalid) {
      return Refuse(eqn, d, "ONNX cannot compute on this dtype");
    }
  }
  for (const Rule<E>& rule : Rules<E>()) {
    if (eqn.primitive == rule.primitive) return rule.lower(e);
  }
  return absl::InternalError(
      absl::StrCat("no elementwise recipe for '", eqn.primitive, "'"));
}

}  // namespace jax2onnx::plugin::elementwise

#endif  // JAX2ONNX_PLUGIN_ELEMENTWISE_PLAN_H_
