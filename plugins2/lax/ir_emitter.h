// The IR pipeline's implementation of the neutral emitter interface
// (plugin/emit.h) used by the shared conv/window/sort recipes.
#ifndef JAX2ONNX_PLUGINS2_LAX_IR_EMITTER_H_
#define JAX2ONNX_PLUGINS2_LAX_IR_EMITTER_H_

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/string_view.h"
#include "converter2/lowering_context.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/emit.h"
#include "plugin/onnx_types.h"
#include "plugin/registry.h"
#include "plugin/rules.h"

namespace jax2onnx::plugins2 {

// The declared type of a Loop-carried value: with the shape the recipe
// states (plugin::CarriedType), else of unknown shape.
inline absl::StatusOr<ir::Type> CarriedIrType(const plugin::CarriedType& t) {
  J2O_ASSIGN_OR_RETURN(int code, plugin::OnnxDType(t.dtype));
  if (!t.has_shape) return ir::Type::Tensor(code);
  return converter2::LoweringContext::TypeOfAval(
      jaxpr::Aval::Shaped(t.dtype, t.shape), "a Loop-carried value");
}

class NeutralIrEmitter
    : public plugin::NeutralEmitterBase<
          NeutralIrEmitter, converter2::LoweringContext, ir::Value*> {
 public:
  using NeutralEmitterBase::NeutralEmitterBase;
  std::vector<Value> OpMulti(absl::string_view op_type,
                             std::vector<Value> inputs,
                             std::vector<jaxpr::DType> outs,
                             std::vector<plugin::OpAttr> attrs = {}) {
    std::vector<ir::Attr> ir_attrs;
    for (plugin::OpAttr& a : attrs) ir_attrs.push_back(ToIr(std::move(a)));
    std::vector<Value> values =
        ctx_.OpMulti(op_type, std::move(inputs), static_cast<int>(outs.size()),
                     std::move(ir_attrs));
    for (size_t i = 0; i < outs.size(); ++i) {
      auto dtype = plugin::OnnxDType(outs[i]);
      if (dtype.ok()) values[i]->SetDtype(*dtype);
    }
    return values;
  }
  Value Const(const jaxpr::Array& a) { return ctx_.ConstArray(a); }
  Value ConstI64(std::vector<int64_t> v) { return ctx_.ConstI64(std::move(v)); }
  // The value's element type, derived through its producer when the value
  // is untyped (the context leaves the outputs of its own Op untyped).
  int OnnxDTypeOf(Value v) const {
    for (int depth = 0; v != nullptr && depth < 64; ++depth) {
      if (v->dtype() != onnx::TensorProto::UNDEFINED) return v->dtype();
      const ir::Node* n = v->producer();
      if (n == nullptr) break;
      const std::string& op = n->op_type();
      if (op == "Cast") {
        const ir::Attr* to = n->attr("to");
        return to ? static_cast<int>(to->i()) : onnx::TensorProto::UNDEFINED;
      }
      if (op == "ArgMax" || op == "ArgMin" || op == "Shape") {
        return onnx::TensorProto::INT64;
      }
      if (op == "IsNaN" || op == "Equal" || op == "Less" || op == "Greater" ||
          op == "Not") {
        return onnx::TensorProto::BOOL;
      }
      const int i = op == "Where" ? 1 : 0;
      if (n->num_inputs() <= i) break;
      v = n->input(i);
    }
    return onnx::TensorProto::UNDEFINED;
  }
  Value ConstI64Scalar(int64_t v) { return ctx_.ConstI64Scalar(v); }
  absl::StatusOr<Value> DimValue(const jaxpr::DimExpr& d) {
    return ctx_.DimValue(d);
  }
  absl::StatusOr<Value> ShapeValue(const std::vector<jaxpr::DimExpr>& d) {
    return ctx_.ShapeValue(d);
  }
  absl::Status SetOut(int i, Value v) { return ctx_.SetOutput(eqn_, i, v); }
  // Shape assertions (plugin::LowerShapeAssertion): the newest check and the
  // rewrite the core applies to every graph output.
  std::optional<Value> OutputGuardToken() const {
    if (ctx_.output_guard_check() == nullptr) return std::nullopt;
    return ctx_.output_guard_check();
  }
  absl::Status SetOutputGuard(Value check,
                              converter2::LoweringContext::OutputGuard guard) {
    return ctx_.SetOutputGuard(check, std::move(guard));
  }
  // Names the node that produces `v` (ONNX Runtime's errors quote it).
  void NameNode(Value v, std::string name) {
    if (v->producer() != nullptr) v->producer()->set_name(std::move(name));
  }
  // Lowers `jaxpr`'s equations inline on `args`; returns its outvars.
  absl::StatusOr<std::vector<Value>> Inline(const jaxpr::ClosedJaxpr& jaxpr,
                                            const std::vector<Value>& args) {
    return ctx_.Inline(jaxpr, args);
  }
  // A vector of dtypes (no shapes); a template so that a braced list of
  // dtypes binds to the CarriedType overload alone.
  template <typename D,
            typename = std::enable_if_t<std::is_same_v<D, jaxpr::DType>>>
  absl::StatusOr<std::vector<Value>> Loop(
      Value trip_count, std::vector<Value> inits, const std::vector<D>& dtypes,
      const plugin::NeutralLoopBody<Value>& body, bool early_exit = false) {
    return Loop(trip_count, std::move(inits),
                std::vector<plugin::CarriedType>(dtypes.begin(), dtypes.end()),
                body, early_exit);
  }
  // Carried values with a shape are declared with it as body inputs, body
  // outputs and Loop results (plugin::CarriedType).
  absl::StatusOr<std::vector<Value>> Loop(
      Value trip_count, std::vector<Value> inits,
      const std::vector<plugin::CarriedType>& carried_types,
      const plugin::NeutralLoopBody<Value>& body, bool early_exit = false,
      const plugin::LoopNames& names = {}) {
    std::vector<ir::Type> types;
    for (const plugin::CarriedType& t : carried_types) {
      J2O_ASSIGN_OR_RETURN(ir::Type type, CarriedIrType(t));
      types.push_back(std::move(type));
    }
    J2O_ASSIGN_OR_RETURN(
        std::unique_ptr<ir::Graph> graph,
        ctx_.BuildSubgraph(
            names.body, [&]() -> absl::StatusOr<std::vector<Value>> {
              Value iter = ctx_.AddGraphInput(
                  names.iter,
                  ir::Type::Tensor(onnx::TensorProto::INT64, ir::Shape{}));
              Value cond = ctx_.AddGraphInput(
                  "cond",
                  ir::Type::Tensor(onnx::TensorProto::BOOL, ir::Shape{}));
              std::vector<Value> carried;
              for (const ir::Type& type : types) {
                carried.push_back(ctx_.AddGraphInput("carried", type));
              }
              J2O_ASSIGN_OR_RETURN(std::vector<Value> next,
                                   body(iter, carried));
              Value cond_out;
              if (early_exit) {
                if (next.size() != types.size() + 1) {
                  return absl::InternalError(
                      "an early-exit Loop body returns its condition and "
                      "the carried values");
                }
                cond_out = next.front();
                next.erase(next.begin());
              } else {
                cond_out = ctx_.Op("Identity", {cond});
              }
              cond_out->SetType(
                  ir::Type::Tensor(onnx::TensorProto::BOOL, ir::Shape{}));
              std::vector<Value> outs = {cond_out};
              for (size_t k = 0; k < next.size(); ++k) {
                next[k]->SetType(types[k]);
                outs.push_back(next[k]);
              }
              return outs;
            }));
    std::vector<Value> loop_in = {
        trip_count, early_exit ? Const(jaxpr::Array::ScalarFromInt64(
                                     jaxpr::DType::kBool, 1))
                               : nullptr};
    loop_in.insert(loop_in.end(), inits.begin(), inits.end());
    std::vector<Value> outs = ctx_.OpMulti(
        "Loop", std::move(loop_in), static_cast<int>(inits.size()),
        converter2::Attrs(ir::Attr::GraphValue("body", std::move(graph))));
    for (size_t k = 0; k < outs.size(); ++k) outs[k]->SetType(types[k]);
    return outs;
  }

 private:
  static ir::Attr ToIr(plugin::OpAttr a) {
    if (auto* i = std::get_if<int64_t>(&a.value)) {
      return ir::Attr::Int(std::move(a.name), *i);
    }
    if (auto* is = std::get_if<std::vector<int64_t>>(&a.value)) {
      return ir::Attr::Ints(std::move(a.name), std::move(*is));
    }
    if (auto* f = std::get_if<float>(&a.value)) {
      return ir::Attr::Float(std::move(a.name), *f);
    }
    return ir::Attr::String(std::move(a.name),
                            std::move(std::get<std::string>(a.value)));
  }
};
static_assert(plugin::NeutralEmitter<NeutralIrEmitter>);

// The IR pipeline's registrar of the shared rule tables (plugin/rules.h).
struct IrRegistrar
    : plugin::RegistrarBase<
          IrRegistrar, NeutralIrEmitter, converter2::LoweringContext,
          plugin::IrLoweringFn, &plugin::PrimitiveEntry::ir,
          &plugin::PrimitiveEntry::ir_info, &plugin::Registry::RegisterIr,
          plugin::kIrPipelineName, plugin::kLegacyPipelineName> {};

// The registrations that really differ per pipeline or take the
// pipeline's own emitter (plugin/all_rules.h), one per family file
// (plugins2/lax/<family>.cc).
void RegisterElementwise();
void RegisterCalls();
void RegisterControlFlow();
void RegisterKeyWords();  // structural ops on PRNG keys

}  // namespace jax2onnx::plugins2

#endif  // JAX2ONNX_PLUGINS2_LAX_IR_EMITTER_H_
