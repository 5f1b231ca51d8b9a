// The rules of sort, top_k and approx_top_k (plugin/rules.h): the recipes
// are in sort_plan.h and approx_top_k_plan.h.
#ifndef JAX2ONNX_PLUGIN_SORT_RULES_H_
#define JAX2ONNX_PLUGIN_SORT_RULES_H_

#include "plugin/approx_top_k_plan.h"
#include "plugin/rules.h"
#include "plugin/sort_plan.h"

namespace jax2onnx::plugin {

template <class R>
void SortRules(R& r) {
  using E = typename R::Emitter;
  r.template Neutral<&LowerSort<E>>(
      "sort",
      {{"TopK", "GatherElements", "IsNaN", "Where", "Cast"},
       kMinOpset,
       "stable: one full-length TopK pass per key (least significant first, "
       "ties by lower index), NaN last, -0.0 == +0.0; any num_keys; u64 via "
       "sign-flipped i64; complex keys refused"});
  r.template Neutral<&LowerTopK<E>>(
      "top_k",
      {{"TopK", "GatherElements", "Slice", "IsNaN", "Where", "Cast", "BitCast",
        "BitwiseXor", "Less"},
       kMinOpset,
       "descending, ties by lower index; opset >= 26: one pass in XLA's IEEE "
       "total order on the BitCast bits (NaNs by sign and payload); below "
       "26 NaN first and +0.0 above -0.0 via extra stable passes, every NaN "
       "ranking as +NaN (ONNX cannot see a NaN's sign); complex refused"});
  r.template Neutral<&LowerApproxTopK<E>>(
      "approx_top_k",
      {{"TopK", "GatherElements", "Slice", "IsNaN", "Where", "Cast", "BitCast",
        "Less"},
       kMinOpset,
       "the exact top k (a valid approximate answer): max in top_k's order, "
       "min ascending (-0.0 before +0.0, NaN last); aggregate_to_topk=False "
       "with more than k candidates refused"});
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_SORT_RULES_H_
