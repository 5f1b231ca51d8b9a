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
#ifndef JAX2ONNX_PLUGIN_EMIT_H_
#define JAX2ONNX_PLUGIN_EMIT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

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

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_EMIT_H_
