#include "plugin/collectives_plan.h"

namespace jax2onnx::plugin {

const char* PositionalReducePrimitive(absl::string_view collective) {
  const absl::string_view op = jaxpr::AllReduceOp(collective);
  if (op == "max") return "reduce_max";
  if (op == "min") return "reduce_min";
  return "reduce_sum";
}

const char* AllReduceOnnxOp(absl::string_view collective) {
  const absl::string_view op = jaxpr::AllReduceOp(collective);
  if (op == "add") return "Add";
  if (op == "max") return "Max";
  if (op == "min") return "Min";
  return nullptr;
}

jaxpr::Eqn PositionalReduceEqn(const jaxpr::Eqn& eqn,
                               const std::vector<int64_t>& axes) {
  jaxpr::Eqn reduce;
  reduce.primitive = PositionalReducePrimitive(eqn.primitive);
  std::vector<jaxpr::ParamValue> items;
  for (int64_t a : axes) items.push_back(jaxpr::ParamValue::Int(a));
  reduce.params.Set("axes", jaxpr::ParamValue::Tuple(std::move(items)));
  reduce.inputs = {eqn.inputs[0]};
  reduce.outputs = {eqn.outputs[0]};
  reduce.loc = eqn.loc;
  return reduce;
}

absl::Status NamedAxisOutsideShardMap(const jaxpr::Eqn& eqn,
                                      const jaxpr::CollectiveAxes& axes) {
  return absl::UnimplementedError(absl::StrCat(
      "'", eqn.primitive, "' over mesh axis '",
      axes.named.empty() ? std::string("?") : axes.named[0],
      "' outside shard_map: only shard_map bodies (emulated per device) and "
      "positional axes (vmap) are supported, not pmap/xla_pmap bodies"));
}

}  // namespace jax2onnx::plugin
