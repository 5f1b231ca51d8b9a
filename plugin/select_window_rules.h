// The rules of select_and_scatter_add, select_and_gather_add and the generic
// select_and_scatter, the pooling gradients (plugin/rules.h): the recipes are
// in select_window_plan.h and select_and_scatter_plan.h.
#ifndef JAX2ONNX_PLUGIN_SELECT_WINDOW_RULES_H_
#define JAX2ONNX_PLUGIN_SELECT_WINDOW_RULES_H_

#include "plugin/rules.h"
#include "plugin/select_and_scatter_plan.h"
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
  r.template Neutral<&LowerSelectAndScatter<E>>(
      "select_and_scatter",
      {{"Transpose", "Pad", "Slice", "Where", "Gather", "Flatten", "Reshape"},
       kMinOpset,
       "XLA's sequential select (select body ge/gt/le/lt) and scatter body "
       "add/mul/max/min applied in window order from init; static windowed "
       "dims; padding never selected; other bodies and consts refused by "
       "name; u64 keys, bool/complex refused"});
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_SELECT_WINDOW_RULES_H_
