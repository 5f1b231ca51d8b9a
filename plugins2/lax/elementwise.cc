// IR lowerings of the elementwise family (lax arithmetic, math, bitwise,
// comparisons, select_n, clamp, convert_element_type). The recipes live in
// plugin/elementwise_plan.h and are shared with the legacy pipeline; this
// file supplies the IR emitter they build with and registers them.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "converter2/lowering_context.h"
#include "glog/logging.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/elementwise_rules.h"
#include "plugin/onnx_types.h"
#include "plugins2/lax/ir_emitter.h"

namespace jax2onnx::plugins2 {
namespace {

using converter2::Attrs;
using converter2::LoweringContext;
using jaxpr::DType;
namespace ew = plugin::elementwise;

// Emits IR nodes for one equation and remembers the JAX dtype of every value
// it hands out (IR values carry no dtype until SetOutput stamps one).
class IrEmitter {
 public:
  using Value = ir::Value*;

  IrEmitter(LoweringContext& ctx, const jaxpr::Eqn& eqn)
      : ctx_(ctx), eqn_(eqn) {}

  const jaxpr::Eqn& eqn() const { return eqn_; }
  int opset() const { return ctx_.opset(); }
  bool threefry_partitionable() const { return ctx_.threefry_partitionable(); }
  const jaxpr::Aval& InAval(int i) const {
    return LoweringContext::InAval(eqn_, i);
  }
  const jaxpr::Aval& OutAval() const {
    return LoweringContext::OutAval(eqn_, 0);
  }
  DType InType(int i) const {
    const jaxpr::Atom& a = eqn_.inputs[i];
    if (!a.is_literal()) return a.var->aval.dtype;
    return jaxpr::LiteralDType(*a.literal, &eqn_);
  }
  DType OutType() const { return OutAval().dtype; }

  absl::StatusOr<Value> In(int i) {
    J2O_ASSIGN_OR_RETURN(Value v, ctx_.Input(eqn_, i));
    types_[v] = InType(i);
    return v;
  }
  DType TypeOf(Value v) const {
    auto it = types_.find(v);
    CHECK(it != types_.end()) << "elementwise emitter lost a value's dtype";
    return it->second;
  }
  Value Op(absl::string_view op_type, std::vector<Value> inputs, DType out,
           std::vector<ew::IntAttr> int_attrs = {}) {
    std::vector<ir::Attr> attrs;
    for (const ew::IntAttr& a : int_attrs) {
      attrs.push_back(ir::Attr::Int(a.name, a.value));
    }
    return Typed(ctx_.Op(op_type, std::move(inputs), std::move(attrs)), out);
  }
  Value BitShift(Value x, Value amount, bool left) {
    return Typed(
        ctx_.Op("BitShift", {x, amount},
                Attrs(ir::Attr::String("direction", left ? "LEFT" : "RIGHT"))),
        TypeOf(x));
  }
  Value Const(const jaxpr::Array& a) {
    return Typed(ctx_.ConstArray(a), a.dtype());
  }
  absl::StatusOr<Value> ShapeValue(const std::vector<jaxpr::DimExpr>& dims) {
    J2O_ASSIGN_OR_RETURN(Value v, ctx_.ShapeValue(dims));
    return Typed(v, DType::kI64);
  }
  absl::Status SetOut(Value v) { return ctx_.SetOutput(eqn_, 0, v); }
  // ONNX Loop: runs `body` while its first result (a bool scalar) is true,
  // at most `max_trips` times; `first_cond` gates the first trip.
  absl::StatusOr<std::vector<Value>> WhileLoop(
      int64_t max_trips, Value first_cond, std::vector<Value> inits,
      const ew::WhileBody<Value>& body) {
    // Every carried value has the (elementwise) equation's output shape,
    // and is declared with it.
    std::vector<DType> dtypes;
    std::vector<ir::Type> types;
    for (Value v : inits) {
      dtypes.push_back(TypeOf(v));
      J2O_ASSIGN_OR_RETURN(ir::Type type,
                           CarriedIrType(plugin::CarriedType(
                               TypeOf(v), eqn_.outputs[0]->aval.shape)));
      types.push_back(std::move(type));
    }
    J2O_ASSIGN_OR_RETURN(
        std::unique_ptr<ir::Graph> graph,
        ctx_.BuildSubgraph(
            "special_loop", [&]() -> absl::StatusOr<std::vector<Value>> {
              Value iter = Typed(
                  ctx_.AddGraphInput(
                      "iter",
                      ir::Type::Tensor(onnx::TensorProto::INT64, ir::Shape{})),
                  DType::kI64);
              ctx_.AddGraphInput(
                  "cond",
                  ir::Type::Tensor(onnx::TensorProto::BOOL, ir::Shape{}));
              std::vector<Value> carried;
              for (size_t k = 0; k < types.size(); ++k) {
                carried.push_back(
                    Typed(ctx_.AddGraphInput("carried", types[k]), dtypes[k]));
              }
              J2O_ASSIGN_OR_RETURN(std::vector<Value> outs,
                                   body(iter, carried));
              outs[0]->SetType(
                  ir::Type::Tensor(onnx::TensorProto::BOOL, ir::Shape{}));
              for (size_t k = 1; k < outs.size(); ++k) {
                outs[k]->SetType(types[k - 1]);
              }
              return outs;
            }));
    std::vector<Value> loop_in = {ctx_.ConstI64Scalar(max_trips), first_cond};
    loop_in.insert(loop_in.end(), inits.begin(), inits.end());
    std::vector<Value> outs = ctx_.OpMulti(
        "Loop", std::move(loop_in), static_cast<int>(inits.size()),
        converter2::Attrs(ir::Attr::GraphValue("body", std::move(graph))));
    for (size_t k = 0; k < outs.size(); ++k) {
      outs[k]->SetType(types[k]);
      Typed(outs[k], dtypes[k]);
    }
    return outs;
  }

  absl::Status SetOutAt(int i, Value v) { return ctx_.SetOutput(eqn_, i, v); }

 private:
  Value Typed(Value v, DType d) {
    types_[v] = d;
    return v;
  }

  LoweringContext& ctx_;
  const jaxpr::Eqn& eqn_;
  absl::flat_hash_map<Value, DType> types_;
};

}  // namespace

void RegisterElementwise() {
  plugin::ElementwiseRules<IrRegistrar, IrEmitter>();
}

}  // namespace jax2onnx::plugins2
