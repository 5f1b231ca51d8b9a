// A pipeline-neutral node emitter interface for lowering recipes written once
// as templates and instantiated by both pipelines (conv, windows, sort,
// gather/scatter, ...), stated as the concept NeutralEmitter below.
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
//   int OnnxDTypeOf(Value) const;                  // the element type the
//                                                  // pipeline knows for a
//                                                  // value, else UNDEFINED
//   Value ConstI64(std::vector<int64_t>);          // 1-D int64
//   Value ConstI64Scalar(int64_t);                 // int64 scalar
//   absl::StatusOr<Value> DimValue(const jaxpr::DimExpr&);   // int64 [1]
//   absl::StatusOr<Value> ShapeValue(const std::vector<jaxpr::DimExpr>&);
//   absl::Status SetOut(int i, Value);             // binds output i
//   absl::StatusOr<std::vector<Value>> Loop(       // ONNX Loop; returns the
//       Value trip_count, std::vector<Value> inits, // final carried values
//       std::vector<CarriedType>, const NeutralLoopBody<Value>&,
//       bool early_exit = false,   // body returns {continue?, carried...}:
//                                  // runs while iter < trip && continue
//       const LoopNames& = {});    // the body graph's and iter's names
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

#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/mesh.h"

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

// The names a Loop's body graph and its iteration input take in the model
// (the indexing recipes' row-by-row loops call theirs scatter_rows/row).
struct LoopNames {
  const char* body = "loop_body";
  const char* iter = "iter";
};

// The interface above as a C++20 concept: both pipelines' emitters
// (plugins/lax/legacy_emitter.h, plugins2/lax/ir_emitter.h) are checked
// against it where they are defined, and recipe templates may constrain
// their emitter with it (`template <NeutralEmitter E>`), so a recipe that
// calls something an emitter lacks fails at its call, naming the concept.
template <typename E>
concept NeutralEmitter = requires(
    E& e, typename E::Value v, std::vector<typename E::Value> vs,
    std::string name, const jaxpr::Array& array, const jaxpr::DimExpr& dim,
    const std::vector<jaxpr::DimExpr>& dims, jaxpr::DType dtype,
    std::vector<jaxpr::DType> dtypes, std::vector<OpAttr> attrs,
    std::vector<CarriedType> carried, NeutralLoopBody<typename E::Value> body,
    const LoopNames& loop_names, const jaxpr::ClosedJaxpr& jaxpr,
    std::function<absl::StatusOr<typename E::Value>(typename E::Value,
                                                    const jaxpr::Aval&)>
        guard) {
  { e.eqn() } -> std::same_as<const jaxpr::Eqn&>;
  { e.opset() } -> std::same_as<int>;
  { e.threefry_partitionable() } -> std::same_as<bool>;
  { e.mesh_axis_sizes() } -> std::same_as<const std::vector<jaxpr::MeshAxis>&>;
  { e.In(0) } -> std::same_as<absl::StatusOr<typename E::Value>>;
  { e.Op("Add", vs, dtype, attrs) } -> std::same_as<typename E::Value>;
  { e.Op("Add", vs, dtype) } -> std::same_as<typename E::Value>;
  {
    e.OpMulti("TopK", vs, dtypes, attrs)
    } -> std::same_as<std::vector<typename E::Value>>;
  { e.Const(array) } -> std::same_as<typename E::Value>;
  { e.OnnxDTypeOf(v) } -> std::same_as<int>;
  { e.ConstI64(std::vector<int64_t>{}) } -> std::same_as<typename E::Value>;
  { e.ConstI64Scalar(int64_t{0}) } -> std::same_as<typename E::Value>;
  { e.DimValue(dim) } -> std::same_as<absl::StatusOr<typename E::Value>>;
  { e.ShapeValue(dims) } -> std::same_as<absl::StatusOr<typename E::Value>>;
  { e.SetOut(0, v) } -> std::same_as<absl::Status>;
  {
    e.Loop(v, vs, carried, body, false, loop_names)
    } -> std::same_as<absl::StatusOr<std::vector<typename E::Value>>>;
  {
    e.Inline(jaxpr, vs)
    } -> std::same_as<absl::StatusOr<std::vector<typename E::Value>>>;
  e.NameNode(v, name);
  { e.OutputGuardToken() } -> std::same_as<std::optional<typename E::Value>>;
  { e.SetOutputGuard(v, guard) } -> std::same_as<absl::Status>;
};

// What the two pipelines' neutral emitters share: the equation, the options
// a recipe may read and the operands, from the pipeline's lowering context
// Ctx (converter::State, converter2::LoweringContext), and Op as the first
// result of the emitter's OpMulti (Derived::OpMulti).
template <class Derived, class Ctx, class V>
class NeutralEmitterBase {
 public:
  using Value = V;

  NeutralEmitterBase(Ctx& ctx, const jaxpr::Eqn& eqn) : ctx_(ctx), eqn_(eqn) {}

  const jaxpr::Eqn& eqn() const { return eqn_; }
  int opset() const { return ctx_.opset(); }
  bool threefry_partitionable() const { return ctx_.threefry_partitionable(); }
  const std::vector<jaxpr::MeshAxis>& mesh_axis_sizes() const {
    return ctx_.mesh_axis_sizes();
  }
  absl::StatusOr<Value> In(int i) { return ctx_.Input(eqn_, i); }
  Value Op(absl::string_view op_type, std::vector<Value> inputs,
           jaxpr::DType out, std::vector<OpAttr> attrs = {}) {
    return static_cast<Derived&>(*this).OpMulti(op_type, std::move(inputs),
                                                {out}, std::move(attrs))[0];
  }

 protected:
  // Also for the emitters that extend a pipeline's emitter with lowering
  // and binding (plugin/complex_wrappers.h, plugin/collectives_rules.h).
  Ctx& ctx_;
  const jaxpr::Eqn& eqn_;
};

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_EMIT_H_
