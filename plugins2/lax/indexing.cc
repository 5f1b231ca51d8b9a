// IR lowerings of the indexing family: gather, scatter, scatter-add/-sub/
// -mul/-min/-max, dynamic_slice, dynamic_update_slice. The plans and the
// emission recipe live in plugin/gather_scatter_plan.h and are shared with
// the legacy pipeline; this file adapts LoweringContext to the recipe's
// builder interface and registers the lowerings.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "converter2/lowering_context.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/gather_scatter_plan.h"
#include "plugin/onnx_types.h"
#include "plugin/registry.h"
#include "plugins2/lax/ir_emitter.h"
#include "plugins2/register.h"

namespace jax2onnx::plugins2 {
namespace {

using converter2::LoweringContext;
using plugin::OnnxAttr;

class IrBuilder {
 public:
  using Value = ir::Value*;
  explicit IrBuilder(LoweringContext& ctx) : ctx_(ctx) {}

  int opset() const { return ctx_.opset(); }
  absl::StatusOr<Value> Input(const jaxpr::Eqn& eqn, int i) {
    return ctx_.Input(eqn, i);
  }
  Value Op(absl::string_view op, std::vector<Value> inputs,
           std::vector<OnnxAttr> attrs, jaxpr::DType dtype) {
    std::vector<ir::Attr> ir_attrs;
    for (OnnxAttr& a : attrs) {
      switch (a.kind) {
        case OnnxAttr::Kind::kInt:
          ir_attrs.push_back(ir::Attr::Int(a.name, a.i));
          break;
        case OnnxAttr::Kind::kInts:
          ir_attrs.push_back(ir::Attr::Ints(a.name, std::move(a.ints)));
          break;
        case OnnxAttr::Kind::kString:
          ir_attrs.push_back(ir::Attr::String(a.name, std::move(a.s)));
          break;
      }
    }
    Value v = ctx_.Op(op, std::move(inputs), std::move(ir_attrs));
    auto code = plugin::OnnxDType(dtype);
    if (code.ok()) v->SetDtype(*code);
    return v;
  }
  Value ConstI64(std::vector<int64_t> v) { return ctx_.ConstI64(std::move(v)); }
  Value ConstI64Scalar(int64_t v) { return ctx_.ConstI64Scalar(v); }
  absl::StatusOr<Value> ConstArray(const jaxpr::Array& a) {
    J2O_RETURN_IF_ERROR(plugin::OnnxDType(a.dtype()).status());
    return ctx_.ConstArray(a);
  }
  absl::StatusOr<Value> DimValue(const jaxpr::DimExpr& d) {
    return ctx_.DimValue(d);
  }
  absl::StatusOr<Value> ShapeValue(const std::vector<jaxpr::DimExpr>& dims) {
    return ctx_.ShapeValue(dims);
  }
  absl::Status SetOutput(const jaxpr::Eqn& eqn, int i, Value v) {
    return ctx_.SetOutput(eqn, i, v);
  }
  absl::StatusOr<std::vector<Value>> Loop(
      Value trip_count, std::vector<Value> inits,
      const std::vector<plugin::CarriedType>& carried_types,
      const plugin::LoopBody<Value>& body) {
    std::vector<ir::Type> types;
    for (const plugin::CarriedType& t : carried_types) {
      J2O_ASSIGN_OR_RETURN(ir::Type type, CarriedIrType(t));
      types.push_back(std::move(type));
    }
    J2O_ASSIGN_OR_RETURN(
        std::unique_ptr<ir::Graph> graph,
        ctx_.BuildSubgraph(
            "scatter_rows", [&]() -> absl::StatusOr<std::vector<Value>> {
              Value iter = ctx_.AddGraphInput(
                  "row",
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
              Value cond_out = ctx_.Op("Identity", {cond});
              cond_out->SetType(
                  ir::Type::Tensor(onnx::TensorProto::BOOL, ir::Shape{}));
              std::vector<Value> outs = {cond_out};
              for (size_t k = 0; k < next.size(); ++k) {
                next[k]->SetType(types[k]);
                outs.push_back(next[k]);
              }
              return outs;
            }));
    std::vector<Value> loop_in = {trip_count, nullptr};
    loop_in.insert(loop_in.end(), inits.begin(), inits.end());
    std::vector<Value> outs = ctx_.OpMulti(
        "Loop", std::move(loop_in), static_cast<int>(inits.size()),
        converter2::Attrs(ir::Attr::GraphValue("body", std::move(graph))));
    for (size_t k = 0; k < outs.size(); ++k) outs[k]->SetType(types[k]);
    return outs;
  }

 private:
  LoweringContext& ctx_;
};

absl::Status LowerGather(LoweringContext& ctx, const jaxpr::Eqn& eqn) {
  IrBuilder b(ctx);
  return plugin::IndexingEmitter<IrBuilder>(b).Gather(eqn);
}
absl::Status LowerScatter(LoweringContext& ctx, const jaxpr::Eqn& eqn) {
  IrBuilder b(ctx);
  return plugin::IndexingEmitter<IrBuilder>(b).Scatter(eqn);
}
absl::Status LowerDynamicSlice(LoweringContext& ctx, const jaxpr::Eqn& eqn) {
  IrBuilder b(ctx);
  return plugin::IndexingEmitter<IrBuilder>(b).DynamicSlice(eqn);
}
absl::Status LowerDynamicUpdateSlice(LoweringContext& ctx,
                                     const jaxpr::Eqn& eqn) {
  IrBuilder b(ctx);
  return plugin::IndexingEmitter<IrBuilder>(b).DynamicUpdateSlice(eqn);
}

}  // namespace

void RegisterIndexing() {
  auto& r = plugin::Registry::Global();
  r.RegisterIr("gather", &LowerGather,
               {{"Gather", "GatherND", "Where", "Transpose", "Slice"},
                17,
                "row gather -> Gather; collapsed indexed dims -> GatherND "
                "(batch_dims); else index grid + GatherND"});
  for (const char* name : {"scatter", "scatter-add", "scatter-sub",
                           "scatter-mul", "scatter-min", "scatter-max"}) {
    r.RegisterIr(name, &LowerScatter,
                 {{"ScatterND", "Concat", "Slice", "Where", "Loop", "GatherND"},
                  17,
                  "dropped windows and losing duplicates go to a scratch "
                  "row; below opset 18 min/max and non-unique scatter "
                  "apply index rows in order in a Loop"});
  }
  r.RegisterIr("dynamic_slice", &LowerDynamicSlice,
               {{"Slice"}, 17, "XLA start clamping"});
  r.RegisterIr("dynamic_update_slice", &LowerDynamicUpdateSlice,
               {{"ScatterND"}, 17, "XLA start clamping; index grid"});
}

}  // namespace jax2onnx::plugins2
