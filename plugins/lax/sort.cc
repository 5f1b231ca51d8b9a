// Legacy lowerings of sort and top_k; the recipes are in plugin/sort_plan.h,
// shared with the IR pipeline.
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
      {{"TopK", "GatherElements", "Slice", "IsNaN", "Where", "Cast"},
       plugin::kMinOpset,
       "descending, ties by lower index, NaN first and +0.0 above -0.0 via "
       "extra stable passes; every NaN ranks as +NaN (ONNX cannot see a "
       "NaN's sign); complex refused"});
}

}  // namespace jax2onnx::plugins
