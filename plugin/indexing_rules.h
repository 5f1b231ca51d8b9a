// The rules of gather, scatter (every combiner), dynamic_slice and
// dynamic_update_slice (plugin/rules.h): the recipes are IndexingEmitter's
// in gather_scatter_plan.h.
#ifndef JAX2ONNX_PLUGIN_INDEXING_RULES_H_
#define JAX2ONNX_PLUGIN_INDEXING_RULES_H_

#include "absl/status/status.h"
#include "plugin/gather_scatter_plan.h"
#include "plugin/rules.h"

namespace jax2onnx::plugin {

// The lowering of one equation by IndexingEmitter's `Lower` (Gather,
// Scatter, DynamicSlice or DynamicUpdateSlice).
template <NeutralEmitter E,
          absl::Status (IndexingEmitter<E>::*Lower)(const jaxpr::Eqn&)>
absl::Status LowerIndexing(E& e) {
  IndexingEmitter<E> indexing(e);
  return (indexing.*Lower)(e.eqn());
}

template <class R>
void IndexingRules(R& r) {
  using E = typename R::Emitter;
  r.template Neutral<&LowerIndexing<E, &IndexingEmitter<E>::Gather>>(
      "gather", {{"Gather", "GatherND", "Where", "Transpose", "Slice"},
                 kMinOpset,
                 "row gather -> Gather; collapsed indexed dims -> "
                 "GatherND (batch_dims); else index grid + GatherND"});
  for (const char* name : {"scatter", "scatter-add", "scatter-sub",
                           "scatter-mul", "scatter-min", "scatter-max"}) {
    r.template Neutral<&LowerIndexing<E, &IndexingEmitter<E>::Scatter>>(
        name, {{"ScatterND", "Concat", "Slice", "Where", "Loop", "GatherND"},
               kMinOpset,
               "dropped windows and losing duplicates go to a scratch "
               "row; below opset 18 min/max and non-unique scatter "
               "apply index rows in order in a Loop"});
  }
  r.template Neutral<&LowerIndexing<E, &IndexingEmitter<E>::DynamicSlice>>(
      "dynamic_slice", {{"Slice"}, kMinOpset, "XLA start clamping"});
  r.template Neutral<
      &LowerIndexing<E, &IndexingEmitter<E>::DynamicUpdateSlice>>(
      "dynamic_update_slice",
      {{"ScatterND"}, kMinOpset, "XLA start clamping; index grid"});
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_INDEXING_RULES_H_
