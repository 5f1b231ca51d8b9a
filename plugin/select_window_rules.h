// The rules of select_and_scatter_add and select_and_gather_add, the pooling
// gradients (plugin/rules.h): the recipes are in select_window_plan.h.
#ifndef JAX2ONNX_PLUGIN_SELECT_WINDOW_RULES_H_
#define JAX2ONNX_PLUGIN_SELECT_WINDOW_RULES_H_

#include "plugin/rules.h"
#include "plugin/select_window_plan.h"

namespace jax2onnx::plugin {

template <class R>
void SelectWindowRules(R& r) {
  using E = typename R::Emitter;
  r.template Neutral<&LowerSelectAndScatterAdd<E>>(
      "select_and_scatter_add",
      {{"Transpose", "Pad", "Slice", "Where", "ScatterND", "Expand", "Range"},
       kMinOpset,
       "XLA's sequential select in window order; windowed dims static or "
       "symbolic (Slices end from the dim's end, masks and ScatterND "
       "positions from Range at run time); one ScatterND(add); padding "
       "never selected; negative padding crops; u64/bool/complex refused"});
  r.template Neutral<&LowerSelectAndGatherAdd<E>>(
      "select_and_gather_add",
      {{"Transpose", "Pad", "Slice", "Where", "Gather", "Range"},
       kMinOpset,
       "JAX's (key, tangent) pair reduction; windowed dims static or "
       "symbolic; base_dilation holes (static dims) and pads skipped; "
       "negative padding crops; u64/bool/complex refused"});
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_SELECT_WINDOW_RULES_H_
