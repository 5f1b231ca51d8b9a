// Legacy lowerings of sort and top_k; the recipes are in plugin/sort_plan.h,
// shared with the IR pipeline.
#include "plugin/onnx_types.h"
#include "plugin/registry.h"
#include "plugin/sort_plan.h"
#include "plugins/lax/legacy_emitter.h"
#include "plugins/register.h"

namespace jax2onnx::plugins {
namespace {

absl::Status LowerSort(converter::State& s, const jaxpr::Eqn& eqn) {
  NeutralLegacyEmitter e(s, eqn);
  return plugin::LowerSort(e);
}

absl::Status LowerTopK(converter::State& s, const jaxpr::Eqn& eqn) {
  NeutralLegacyEmitter e(s, eqn);
  return plugin::LowerTopK(e);
}

}  // namespace

void RegisterSort() {
  plugin::Registry& registry = plugin::Registry::Global();
  registry.RegisterLegacy(
      "sort", &LowerSort,
      {{"TopK", "GatherElements", "IsNaN", "Where", "Cast"},
       plugin::kMinOpset,
       "stable: one full-length TopK pass per key (least significant first, "
       "ties by lower index), NaN last, -0.0 == +0.0; any num_keys; u64 via "
       "sign-flipped i64; complex keys refused"});
  registry.RegisterLegacy(
      "top_k", &LowerTopK,
      {{"TopK", "GatherElements", "Slice", "IsNaN", "Where", "Cast"},
       plugin::kMinOpset,
       "descending, ties by lower index, NaN first and +0.0 above -0.0 via "
       "extra stable passes; every NaN ranks as +NaN (ONNX cannot see a "
       "NaN's sign); complex refused"});
}

}  // namespace jax2onnx::plugins
