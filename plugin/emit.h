// A pipeline-neutral node emitter interface for lowering recipes written once
// as templates and instantiated by both pipelines (conv, windows, sort).
//
// An emitter E provides:
//   using Value;                                   // a value handle
//   const jaxpr::Eqn& eqn() const;
//   int opset() const;                             // target ONNX opset
//   absl::StatusOr<Value> In(int i);               // operand i
//   Value Op(op_type, inputs, jaxpr::DType out, std::vector<OpAttr> = {});
//   std::vector<Value> OpMulti(op_type, inputs, std::vector<jaxpr::DType>,
//                              std::vector<OpAttr> = {});
//   Value Const(const jaxpr::Array&);
//   Value ConstI64(std::vector<int64_t>);          // 1-D int64
//   absl::StatusOr<Value> DimValue(const jaxpr::DimExpr&);   // int64 [1]
//   absl::StatusOr<Value> ShapeValue(const std::vector<jaxpr::DimExpr>&);
//   absl::Status SetOut(int i, Value);             // binds output i
//   absl::StatusOr<std::vector<Value>> Loop(       // ONNX Loop; returns the
//       Value trip_count, std::vector<Value> inits, // final carried values
//       std::vector<CarriedType>, const NeutralLoopBody<Value>&,
//       bool early_exit = false);  // body returns {continue?, carried...}:
//                                  // runs while iter < trip && continue
//   absl::StatusOr<std::vector<Value>> Inline(     // lowers a jaxpr's
//       const jaxpr::ClosedJaxpr&, const std::vector<Value>& args);  // eqns
//   void NameNode(Value, std::string);             // names v's producer
//   std::optional<Value> OutputGuardToken();       // the newest check, and
//   absl::Status SetOutputGuard(Value check,       // a rewrite the core
//       std::function<StatusOr<Value>(Value, const jaxpr::Aval&)>);
//                          // applies to every graph output (main graph only;
//                          // shape_assertion, plugin/program_plan.h)
#ifndef JAX2ONNX_PLUGIN_EMIT_H_
#define JAX2ONNX_PLUGIN_EMIT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::plugin {

// An ONNX node attribute of the kinds the shared recipes use.
struct OpAttr {
  std::string name;
  std::variant<int64_t, std::vector<int64_t>, float, std::string> value;

  static OpAttr Int(std::string n, int64_t v) { return {std::move(n), v}; }
  static OpAttr Ints(std::string n, std::vector<int64_t> v) {
    return {std::move(n), std::move(v)};
  }
  static OpAttr Float(std::string n, float v) { return {std::move(n), v}; }
  static OpAttr String(std::string n, std::string v) {
    return {std::move(n), std::move(v)};
  }
};

// The type of a Loop-carried value: its element type and, where the recipe
// knows it, its shape, the same before and after every iteration. ONNX
// shape inference gives a Loop body's inputs only the types the body
// declares (Loop drops the shapes of its carried inputs), so a carried value
// declared without shape leaves the body's values and the Loop's results of
// unknown rank; with a shape, the body inputs, body outputs and Loop results
// are all declared with it. Converts implicitly from a DType (no shape).
struct CarriedType {
  CarriedType(jaxpr::DType d) : dtype(d) {}  // NOLINT: implicit on purpose
  CarriedType(jaxpr::DType d, std::vector<jaxpr::DimExpr> s)
      : dtype(d), shape(std::move(s)), has_shape(true) {}
  jaxpr::DType dtype;
  std::vector<jaxpr::DimExpr> shape;
  bool has_shape = false;
};

// `shape` with its last two dims swapped (a batch of transposed matrices).
inline std::vector<jaxpr::DimExpr> SwapLast2(
    std::vector<jaxpr::DimExpr> shape) {
  if (shape.size() >= 2) std::swap(shape[shape.size() - 2], shape.back());
  return shape;
}

// Emits an ONNX Loop body: given the iteration number (int64 scalar) and the
// carried values, returns the next carried values (after a bool scalar
// "continue" condition for a Loop with early_exit). Values of the enclosing
// graph may be used directly (ONNX outer-scope references).
template <typename Value>
using NeutralLoopBody = std::function<absl::StatusOr<std::vector<Value>>(
    Value iter, const std::vector<Value>& carried)>;

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_EMIT_H_
