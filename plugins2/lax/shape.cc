// IR lowerings of the shape family (broadcast_in_dim, reshape, squeeze,
// expand_dims, transpose, rev, slice, concatenate, iota, split, pad); the
// recipes are in plugin/shape_plan.h, shared with the legacy pipeline.
#include "absl/status/status.h"
#include "converter2/lowering_context.h"
#include "plugin/registry.h"
#include "plugin/shape_plan.h"
#include "plugins2/lax/ir_emitter.h"
#include "plugins2/register.h"

namespace jax2onnx::plugins2 {

void RegisterShape() {
  plugin::Registry& r = plugin::Registry::Global();
  r.RegisterIr(
      "broadcast_in_dim",
      &WithNeutralEmitter<&plugin::LowerBroadcastInDim<NeutralIrEmitter>>,
      {{"Unsqueeze", "Expand"},
       17,
       "output aval gives the shape (param absent in JAX >= 0.9.1)"});
  r.RegisterIr("reshape",
               &WithNeutralEmitter<&plugin::LowerReshape<NeutralIrEmitter>>,
               {{"Transpose", "Reshape"},
                17,
                "allowzero=1 whenever a target dim is 0 or symbolic"});
  r.RegisterIr("squeeze",
               &WithNeutralEmitter<&plugin::LowerSqueeze<NeutralIrEmitter>>,
               {{"Squeeze"}, 17, ""});
  r.RegisterIr("expand_dims",
               &WithNeutralEmitter<&plugin::LowerExpandDims<NeutralIrEmitter>>,
               {{"Unsqueeze"}, 17, ""});
  r.RegisterIr("transpose",
               &WithNeutralEmitter<&plugin::LowerTranspose<NeutralIrEmitter>>,
               {{"Transpose"}, 17, ""});
  r.RegisterIr("rev", &WithNeutralEmitter<&plugin::LowerRev<NeutralIrEmitter>>,
               {{"Slice"}, 17, "Slice with step -1"});
  r.RegisterIr("slice",
               &WithNeutralEmitter<&plugin::LowerSlice<NeutralIrEmitter>>,
               {{"Slice"}, 17, ""});
  r.RegisterIr("concatenate",
               &WithNeutralEmitter<&plugin::LowerConcatenate<NeutralIrEmitter>>,
               {{"Concat"}, 17, ""});
  r.RegisterIr("iota",
               &WithNeutralEmitter<&plugin::LowerIota<NeutralIrEmitter>>,
               {{"Range", "Cast", "Unsqueeze", "Expand"},
                17,
                "int64 Range cast to the result dtype"});
  r.RegisterIr("split",
               &WithNeutralEmitter<&plugin::LowerSplit<NeutralIrEmitter>>,
               {{"Split"}, 17, ""});
  r.RegisterIr("pad", &WithNeutralEmitter<&plugin::LowerPad<NeutralIrEmitter>>,
               {{"Pad", "Unsqueeze", "Reshape", "Slice", "Cast"},
                17,
                "interior via unit-axis Pad + Reshape; negative via Slice; "
                "f16/bf16/i16/u16 moved as f32/i32"});
}

}  // namespace jax2onnx::plugins2
