// Legacy lowerings of the indexing family: gather, scatter, scatter-add/
// -sub/-mul/-min/-max, dynamic_slice, dynamic_update_slice. The plans and
// the emission recipe live in plugin/gather_scatter_plan.h and are shared
// with the IR pipeline; this file adapts converter::State to the recipe's
// builder interface and registers the lowerings.
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "converter/state.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/gather_scatter_plan.h"
#include "plugin/onnx_types.h"
#include "plugin/registry.h"
#include "plugins/lax/legacy_emitter.h"
#include "plugins/register.h"

namespace jax2onnx::plugins {
namespace {

using converter::State;
using plugin::OnnxAttr;

class LegacyBuilder {
 public:
  using Value = std::string;
  explicit LegacyBuilder(State& s) : s_(s) {}

  int opset() const { return s_.opset(); }
  absl::StatusOr<Value> Input(const jaxpr::Eqn& eqn, int i) {
    return s_.Input(eqn, i);
  }
  Value Op(absl::string_view op, std::vector<Value> inputs,
           std::vector<OnnxAttr> attrs, jaxpr::DType dtype) {
    std::vector<onnx::AttributeProto> protos;
    for (const OnnxAttr& a : attrs) {
      switch (a.kind) {
        case OnnxAttr::Kind::kInt:
          protos.push_back(converter::AttrInt(a.name, a.i));
          break;
        case OnnxAttr::Kind::kInts:
          protos.push_back(converter::AttrInts(a.name, a.ints));
          break;
        case OnnxAttr::Kind::kString:
          protos.push_back(converter::AttrString(a.name, a.s));
          break;
      }
    }
    auto code = plugin::OnnxDType(dtype);
    return s_.AddNode(op, std::move(inputs),
                      converter::ValueInfo::UnknownShape(
                          code.ok() ? *code : onnx::TensorProto::UNDEFINED),
                      std::move(protos));
  }
  Value ConstI64(std::vector<int64_t> v) { return s_.ConstI64(v); }
  Value ConstI64Scalar(int64_t v) { return s_.ConstI64Scalar(v); }
  absl::StatusOr<Value> ConstArray(const jaxpr::Array& a) {
    return s_.ConstArray(a);
  }
  absl::StatusOr<Value> DimValue(const jaxpr::DimExpr& d) {
    return s_.DimValue(d);
  }
  absl::StatusOr<Value> ShapeValue(const std::vector<jaxpr::DimExpr>& dims) {
    return s_.ShapeValue(dims);
  }
  absl::Status SetOutput(const jaxpr::Eqn& eqn, int i, const Value& v) {
    return s_.SetOutput(eqn, i, v);
  }
  absl::StatusOr<std::vector<Value>> Loop(
      Value trip_count, std::vector<Value> inits,
      const std::vector<plugin::CarriedType>& types,
      const plugin::LoopBody<Value>& body) {
    std::vector<converter::ValueInfo> infos;
    for (const plugin::CarriedType& t : types) {
      J2O_ASSIGN_OR_RETURN(converter::ValueInfo info, CarriedInfo(t));
      infos.push_back(std::move(info));
    }
    J2O_ASSIGN_OR_RETURN(
        onnx::GraphProto graph,
        s_.BuildSubgraph(
            "scatter_rows", [&]() -> absl::StatusOr<std::vector<Value>> {
              Value iter = s_.AddGraphInput(
                  "row",
                  converter::ValueInfo::Tensor(onnx::TensorProto::INT64, {}));
              Value cond = s_.AddGraphInput(
                  "cond",
                  converter::ValueInfo::Tensor(onnx::TensorProto::BOOL, {}));
              std::vector<Value> carried;
              for (const converter::ValueInfo& info : infos) {
                carried.push_back(s_.AddGraphInput("carried", info));
              }
              J2O_ASSIGN_OR_RETURN(std::vector<Value> next,
                                   body(iter, carried));
              for (size_t k = 0; k < infos.size(); ++k) {
                if (infos[k].has_shape) s_.SetInfo(next[k], infos[k]);
              }
              std::vector<Value> outs = {s_.AddNode(
                  "Identity", {cond},
                  converter::ValueInfo::Tensor(onnx::TensorProto::BOOL, {}))};
              outs.insert(outs.end(), next.begin(), next.end());
              return outs;
            }));
    std::vector<Value> loop_in = {trip_count, ""};
    loop_in.insert(loop_in.end(), inits.begin(), inits.end());
    return s_.AddNodeMulti("Loop", std::move(loop_in), infos,
                           {converter::AttrGraph("body", std::move(graph))});
  }

 private:
  State& s_;
};

absl::Status LowerGather(State& s, const jaxpr::Eqn& eqn) {
  LegacyBuilder b(s);
  return plugin::IndexingEmitter<LegacyBuilder>(b).Gather(eqn);
}
absl::Status LowerScatter(State& s, const jaxpr::Eqn& eqn) {
  LegacyBuilder b(s);
  return plugin::IndexingEmitter<LegacyBuilder>(b).Scatter(eqn);
}
absl::Status LowerDynamicSlice(State& s, const jaxpr::Eqn& eqn) {
  LegacyBuilder b(s);
  return plugin::IndexingEmitter<LegacyBuilder>(b).DynamicSlice(eqn);
}
absl::Status LowerDynamicUpdateSlice(State& s, const jaxpr::Eqn& eqn) {
  LegacyBuilder b(s);
  return plugin::IndexingEmitter<LegacyBuilder>(b).DynamicUpdateSlice(eqn);
}

}  // namespace

void RegisterIndexing() {
  auto& r = plugin::Registry::Global();
  r.RegisterLegacy("gather", &LowerGather,
                   {{"Gather", "GatherND", "Where", "Transpose", "Slice"},
                    17,
                    "row gather -> Gather; collapsed indexed dims -> "
                    "GatherND (batch_dims); else index grid + GatherND"});
  for (const char* name : {"scatter", "scatter-add", "scatter-sub",
                           "scatter-mul", "scatter-min", "scatter-max"}) {
    r.RegisterLegacy(
        name, &LowerScatter,
        {{"ScatterND", "Concat", "Slice", "Where", "Loop", "GatherND"},
         17,
         "dropped windows and losing duplicates go to a scratch "
         "row; below opset 18 min/max and non-unique scatter "
         "apply index rows in order in a Loop"});
  }
  r.RegisterLegacy("dynamic_slice", &LowerDynamicSlice,
                   {{"Slice"}, 17, "XLA start clamping"});
  r.RegisterLegacy("dynamic_update_slice", &LowerDynamicUpdateSlice,
                   {{"ScatterND"}, 17, "XLA start clamping; index grid"});
}

}  // namespace jax2onnx::plugins
