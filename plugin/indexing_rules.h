// The rules of gather, scatter (every combiner), dynamic_slice and
// dynamic_update_slice (plugin/rules.h): the recipes are IndexingEmitter's
// in gather_scatter_plan.h.
#ifndef JAX2ONNX_PLUGIN_INDEXING_RULES_H_
#define JAX2ONNX_PLUGIN_INDEXING_RULES_H_

#include "absl/status/status.h"
#include "plugin/gather_scatter_plan.h"
#include "plugin/rules.h"

namespace jax2onnx::plugin {

template <NeutralEmitter E>
absl::Status LowerGather(E& e) {
  return IndexingEmitter<E>(e).Gather(e.eqn());
}
template <NeutralEmitter E>
absl::Status LowerScatter(E& e) {
  return IndexingEmitter<E>(e).Scatter(e.eqn());
}
template <NeutralEmitter E>
absl::Status LowerDynamicSlice(E& e) {
  return IndexingEmitter<E>(e).DynamicSlice(e.eqn());
}
template <NeutralEmitter E>
absl::Status LowerDynamicUpdateSlice(E& e) {
  return IndexingEmitter<E>(e).DynamicUpdateSlice(e.eqn());
}

template <class R>
void IndexingRules(R& r) {
  using E = typename R::Emitter;
  r.template Neutral<&LowerGather<E>>(
      "gather", {{"Gather", "GatherND", "Where", "Transpose", "Slice"},
                 kMinOpset,
                 "row gather -> Gather; collapsed indexed dims -> "
                 "GatherND (batch_dims); else index grid + GatherND"});
  for (const char* name : {"scatter", "scatter-add", "scatter-sub",
                           "scatter-mul", "scatter-min", "scatter-max"}) {
    r.template Neutral<&LowerScatter<E>>(
        name, {{"ScatterND", "Concat", "Slice", "Where", "Loop", "GatherND"},
               kMinOpset,
               "dropped windows and losing duplicates go to a scratch "
               "row; below opset 18 min/max and non-unique scatter "
               "apply index rows in order in a Loop"});
  }
  r.template Neutral<&LowerDynamicSlice<E>>(
      "dynamic_slice", {{"Slice"}, kMinOpset, "XLA start clamping"});
  r.template Neutral<&LowerDynamicUpdateSlice<E>>(
      "dynamic_update_slice",
      {{"ScatterND"}, kMinOpset, "XLA start clamping; index grid"});
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_INDEXING_RULES_H_
