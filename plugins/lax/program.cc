// legacy lowerings of the primitives current JAX emits for ordinary code
// (stack, unstack, tile, empty, empty2, zeros_like, tie, shard_alike,
// xla_metadata_value, random_clone, dce_sink, debug_print, debug_callback,
// platform_index, dim_as_value); the recipes are in plugin/program_plan.h,
// shared with the IR pipeline. The call-like ones (eval_jaxpr, composite, ...)
// are inlined by calls.cc.
#include "absl/status/status.h"
#include "converter/state.h"
#include "plugin/program_plan.h"
#include "plugin/registry.h"
#include "plugins/lax/legacy_emitter.h"
#include "plugins/register.h"

namespace jax2onnx::plugins {

void RegisterProgram() {
  plugin::Registry& r = plugin::Registry::Global();
  r.RegisterLegacy(
      "stack", &WithNeutralEmitter<&plugin::LowerStack<NeutralLegacyEmitter>>,
      {{"Unsqueeze", "Concat"}, 17, ""});
  r.RegisterLegacy(
      "unstack",
      &WithNeutralEmitter<&plugin::LowerUnstack<NeutralLegacyEmitter>>,
      {{"Split", "Squeeze"}, 17, "one result per row"});
  r.RegisterLegacy(
      "tile", &WithNeutralEmitter<&plugin::LowerTile<NeutralLegacyEmitter>>,
      {{"Tile", "Cast"}, 17, "f16/bf16/i8/i16/u8/u16 moved as f32/i32"});
  for (const char* name : {"empty", "empty2", "zeros_like"}) {
    r.RegisterLegacy(
        name, &WithNeutralEmitter<&plugin::LowerZeros<NeutralLegacyEmitter>>,
        {{"Expand", "Cast"},
         17,
         "zeros (JAX leaves empty's values unspecified; its CPU "
         "lowering writes zeros)"});
  }
  r.RegisterLegacy("tie",
                   &WithNeutralEmitter<&plugin::LowerTie<NeutralLegacyEmitter>>,
                   {{}, 17, "its second operand"});
  for (const char* name :
       {"shard_alike", "xla_metadata_value", "random_clone"}) {
    r.RegisterLegacy(
        name,
        &WithNeutralEmitter<&plugin::LowerPassThrough<NeutralLegacyEmitter>>,
        {{}, 17, "identity (annotation)"});
  }
  for (const char* name : {"dce_sink", "debug_print", "debug_callback"}) {
    r.RegisterLegacy(
        name, &WithNeutralEmitter<&plugin::LowerDropped<NeutralLegacyEmitter>>,
        {{}, 17, "dropped: no results (convert -v names it)"});
  }
  r.RegisterLegacy(
      "platform_index",
      &WithNeutralEmitter<&plugin::LowerPlatformIndex<NeutralLegacyEmitter>>,
      {{}, 17, "constant: the branch JAX's CPU backend takes"});
  r.RegisterLegacy(
      "dim_as_value",
      &WithNeutralEmitter<&plugin::LowerDimAsValue<NeutralLegacyEmitter>>,
      {{"Shape", "Gather", "Squeeze", "Cast"},
       17,
       "the dimension from the input shapes at run time"});
}

}  // namespace jax2onnx::plugins
