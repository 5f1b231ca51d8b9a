// IR lowerings of the primitives current JAX emits for ordinary code
// (stack, unstack, tile, empty, empty2, zeros_like, tie, shard_alike,
// xla_metadata_value, random_clone, dce_sink, debug_print, debug_callback,
// platform_index, dim_as_value); the recipes are in plugin/program_plan.h,
// shared with the legacy pipeline. The call-like ones (eval_jaxpr, composite,
// ...) are inlined by calls.cc.
#include "absl/status/status.h"
#include "converter2/lowering_context.h"
#include "plugin/program_plan.h"
#include "plugin/registry.h"
#include "plugins2/lax/ir_emitter.h"
#include "plugins2/register.h"

namespace jax2onnx::plugins2 {

void RegisterProgram() {
  plugin::Registry& r = plugin::Registry::Global();
  r.RegisterIr("stack",
               &WithNeutralEmitter<&plugin::LowerStack<NeutralIrEmitter>>,
               {{"Unsqueeze", "Concat"}, 17, ""});
  r.RegisterIr("unstack",
               &WithNeutralEmitter<&plugin::LowerUnstack<NeutralIrEmitter>>,
               {{"Split", "Squeeze"}, 17, "one result per row"});
  r.RegisterIr(
      "tile", &WithNeutralEmitter<&plugin::LowerTile<NeutralIrEmitter>>,
      {{"Tile", "Cast"}, 17, "f16/bf16/i8/i16/u8/u16 moved as f32/i32"});
  for (const char* name : {"empty", "empty2", "zeros_like"}) {
    r.RegisterIr(name,
                 &WithNeutralEmitter<&plugin::LowerZeros<NeutralIrEmitter>>,
                 {{"Expand", "Cast"},
                  17,
                  "zeros (JAX leaves empty's values unspecified; its CPU "
                  "lowering writes zeros)"});
  }
  r.RegisterIr("tie", &WithNeutralEmitter<&plugin::LowerTie<NeutralIrEmitter>>,
               {{}, 17, "its second operand"});
  for (const char* name :
       {"shard_alike", "xla_metadata_value", "random_clone"}) {
    r.RegisterIr(
        name, &WithNeutralEmitter<&plugin::LowerPassThrough<NeutralIrEmitter>>,
        {{}, 17, "identity (annotation)"});
  }
  for (const char* name : {"dce_sink", "debug_print", "debug_callback"}) {
    r.RegisterIr(name,
                 &WithNeutralEmitter<&plugin::LowerDropped<NeutralIrEmitter>>,
                 {{}, 17, "dropped: no results (convert -v names it)"});
  }
  r.RegisterIr(
      "platform_index",
      &WithNeutralEmitter<&plugin::LowerPlatformIndex<NeutralIrEmitter>>,
      {{}, 17, "constant: the branch JAX's CPU backend takes"});
  r.RegisterIr("dim_as_value",
               &WithNeutralEmitter<&plugin::LowerDimAsValue<NeutralIrEmitter>>,
               {{"Shape", "Gather", "Squeeze", "Cast"},
                17,
                "the dimension from the input shapes at run time"});
}

}  // namespace jax2onnx::plugins2
