// Legacy lowerings of sort and top_k; the recipes are in plugin/sort_plan.h,
// shared with the IR pipeline.
#include "plugin/approx_top_k_plan.h"
#include "plugin/onnx_types.h"
#include "plugin/registry.h"
#include "plugin/sort_plan.h"
#include "plugins/lax/legacy_emitter.h"
#include "plugins/register.h"

namespace jax2onnx::plugins {

void RegisterSort() {
  plugin::Registry& registry = plugin::Registry::Global();
  registry.RegisterLegacy(
      "sort", &WithNeutralEmitter<&plugin::LowerSort<NeutralLegacyEmitter>>,
      {{"TopK", "GatherElements", "IsNaN", "Where", "Cast"},
       plugin::kMinOpset,
       "stable: one full-length TopK pass per key (least significant first, "
       "ties by lower index), NaN last, -0.0 == +0.0; any num_keys; u64 via "
       "sign-flipped i64; complex keys refused"});
  registry.RegisterLegacy(
      "top_k", &WithNeutralEmitter<&plugin::LowerTopK<NeutralLegacyEmitter>>,
      {{"TopK", "GatherElements", "Slice", "IsNaN", "Where", "Cast", "BitCast",
        "BitwiseXor", "Less"},
       plugin::kMinOpset,
       "descending, ties by lower index; opset >= 26: one pass in XLA's IEEE "
       "total order on the BitCast bits (NaNs by sign and payload); below "
       "26 NaN first and +0.0 above -0.0 via extra stable passes, every NaN "
       "ranking as +NaN (ONNX cannot see a NaN's sign); complex refused"});
  registry.RegisterLegacy(
      "approx_top_k",
      &WithNeutralEmitter<&plugin::LowerApproxTopK<NeutralLegacyEmitter>>,
      {{"TopK", "GatherElements", "Slice", "IsNaN", "Where", "Cast", "BitCast",
        "Less"},
       plugin::kMinOpset,
       "the exact top k (a valid approximate answer): max in top_k's order, "
       "min ascending (-0.0 before +0.0, NaN last); aggregate_to_topk=False "
       "with more than k candidates refused"});
}

}  // namespace jax2onnx::plugins
