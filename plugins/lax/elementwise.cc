// Legacy lowerings of the elementwise family (lax arithmetic, math, bitwise,
// comparisons, select_n, clamp, convert_element_type). The recipes live in
// plugin/elementwise_plan.h and are shared with the IR pipeline, so both
// pipelines emit the same node structure; this file supplies the legacy
// emitter (State::AddNode with shape_env types) and registers them.
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "converter/state.h"
#include "glog/logging.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/elementwise_rules.h"
#include "plugin/onnx_types.h"
#include "plugins/lax/legacy_emitter.h"

namespace jax2onnx::plugins {
namespace {

using converter::State;
using converter::ValueInfo;
using jaxpr::DType;
namespace ew = plugin::elementwise;

// Emits NodeProtos for one equation; every value it hands out is registered
// in shape_env with its ONNX dtype (shape left unknown; SetOutput refines
// bound outputs from the JAX avals).
class LegacyEmitter {
 public:
  using Value = std::string;

  LegacyEmitter(State& s, const jaxpr::Eqn& eqn) : s_(s), eqn_(eqn) {}

  const jaxpr::Eqn& eqn() const { return eqn_; }
  int opset() const { return s_.opset(); }
  bool threefry_partitionable() const { return s_.threefry_partitionable(); }
  const jaxpr::Aval& InAval(int i) const { return State::InAval(eqn_, i); }
  const jaxpr::Aval& OutAval() const { return State::OutAval(eqn_, 0); }
  DType InType(int i) const { return State::InDType(eqn_, i); }
  DType OutType() const { return OutAval().dtype; }

  absl::StatusOr<Value> In(int i) { return s_.Input(eqn_, i); }
  DType TypeOf(const Value& v) const {
    const ValueInfo* info = s_.Info(v);
    CHECK(info != nullptr) << "value '" << v << "' has no shape_env entry";
    std::optional<DType> d = plugin::JaxDType(info->dtype);
    CHECK(d.has_value()) << "value '" << v << "' has ONNX type " << info->dtype
                         << " with no JAX dtype";
    return *d;
  }
  Value Op(absl::string_view op_type, std::vector<Value> inputs, DType out,
           std::vector<ew::IntAttr> int_attrs = {}) {
    std::vector<onnx::AttributeProto> attrs;
    for (const ew::IntAttr& a : int_attrs) {
      attrs.push_back(converter::AttrInt(a.name, a.value));
    }
    return s_.AddNode(op_type, std::move(inputs),
                      ValueInfo::UnknownShape(ew::OnnxType(out)),
                      std::move(attrs));
  }
  Value BitShift(const Value& x, const Value& amount, bool left) {
    return s_.AddNode(
        "BitShift", {x, amount},
        ValueInfo::UnknownShape(ew::OnnxType(TypeOf(x))),
        {converter::AttrString("direction", left ? "LEFT" : "RIGHT")});
  }
  Value Const(const jaxpr::Array& a) {
    absl::StatusOr<std::string> v = s_.ConstArray(a);
    CHECK(v.ok()) << v.status();
    return *v;
  }
  absl::StatusOr<Value> ShapeValue(const std::vector<jaxpr::DimExpr>& dims) {
    return s_.ShapeValue(dims);
  }
  absl::Status SetOut(const Value& v) { return s_.SetOutput(eqn_, 0, v); }
  // ONNX Loop: runs `body` while its first result (a bool scalar) is true,
  // at most `max_trips` times; `first_cond` gates the first trip. Every
  // carried value has the (elementwise) equation's output shape, and is
  // declared with it.
  absl::StatusOr<std::vector<Value>> WhileLoop(
      int64_t max_trips, const Value& first_cond, std::vector<Value> inits,
      const ew::WhileBody<Value>& body) {
    std::vector<ValueInfo> infos;
    for (const Value& v : inits) {
      J2O_ASSIGN_OR_RETURN(ValueInfo info,
                           CarriedInfo(plugin::CarriedType(
                               TypeOf(v), eqn_.outputs[0]->aval.shape)));
      infos.push_back(std::move(info));
    }
    J2O_ASSIGN_OR_RETURN(
        onnx::GraphProto graph,
        s_.BuildSubgraph(
            "special_loop", [&]() -> absl::StatusOr<std::vector<Value>> {
              Value iter = s_.AddGraphInput(
                  "iter", ValueInfo::Tensor(onnx::TensorProto::INT64, {}));
              s_.AddGraphInput("cond",
                               ValueInfo::Tensor(onnx::TensorProto::BOOL, {}));
              std::vector<Value> carried;
              for (const ValueInfo& info : infos) {
                carried.push_back(s_.AddGraphInput("carried", info));
              }
              return body(iter, carried);
            }));
    std::vector<Value> loop_in = {s_.ConstI64Scalar(max_trips), first_cond};
    loop_in.insert(loop_in.end(), inits.begin(), inits.end());
    return s_.AddNodeMulti("Loop", std::move(loop_in), infos,
                           {converter::AttrGraph("body", std::move(graph))});
  }

  absl::Status SetOutAt(int i, const Value& v) {
    return s_.SetOutput(eqn_, i, v);
  }

 private:
  State& s_;
  const jaxpr::Eqn& eqn_;
};

}  // namespace

void RegisterElementwise() {
  plugin::ElementwiseRules<LegacyRegistrar, LegacyEmitter>();
}

}  // namespace jax2onnx::plugins
