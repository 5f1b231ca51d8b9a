// Legacy lowerings of the shape family (broadcast_in_dim, reshape, squeeze,
// expand_dims, transpose, rev, slice, concatenate, iota, split, pad); the
// recipes are in plugin/shape_plan.h, shared with the IR pipeline.
#include "absl/status/status.h"
#include "converter/state.h"
#include "plugin/registry.h"
#include "plugin/shape_plan.h"
#include "plugins/lax/legacy_emitter.h"
#include "plugins/register.h"

namespace jax2onnx::plugins {

void RegisterShape() {
  plugin::Registry& r = plugin::Registry::Global();
  r.RegisterLegacy(
      "broadcast_in_dim",
      &WithNeutralEmitter<&plugin::LowerBroadcastInDim<NeutralLegacyEmitter>>,
      {{"Unsqueeze", "Expand"},
       17,
       "output aval gives the shape (param absent in JAX >= 0.9.1)"});
  r.RegisterLegacy(
      "reshape",
      &WithNeutralEmitter<&plugin::LowerReshape<NeutralLegacyEmitter>>,
      {{"Transpose", "Reshape"},
       17,
       "allowzero=1 whenever a target dim is 0 or symbolic"});
  r.RegisterLegacy(
      "squeeze",
      &WithNeutralEmitter<&plugin::LowerSqueeze<NeutralLegacyEmitter>>,
      {{"Squeeze"}, 17, ""});
  r.RegisterLegacy(
      "expand_dims",
      &WithNeutralEmitter<&plugin::LowerExpandDims<NeutralLegacyEmitter>>,
      {{"Unsqueeze"}, 17, ""});
  r.RegisterLegacy(
      "transpose",
      &WithNeutralEmitter<&plugin::LowerTranspose<NeutralLegacyEmitter>>,
      {{"Transpose"}, 17, ""});
  r.RegisterLegacy("rev",
                   &WithNeutralEmitter<&plugin::LowerRev<NeutralLegacyEmitter>>,
                   {{"Slice"}, 17, "Slice with step -1"});
  r.RegisterLegacy(
      "slice", &WithNeutralEmitter<&plugin::LowerSlice<NeutralLegacyEmitter>>,
      {{"Slice"}, 17, ""});
  r.RegisterLegacy(
      "concatenate",
      &WithNeutralEmitter<&plugin::LowerConcatenate<NeutralLegacyEmitter>>,
      {{"Concat"}, 17, ""});
  r.RegisterLegacy(
      "iota", &WithNeutralEmitter<&plugin::LowerIota<NeutralLegacyEmitter>>,
      {{"Range", "Cast", "Unsqueeze", "Expand"},
       17,
       "int64 Range cast to the result dtype"});
  r.RegisterLegacy(
      "split", &WithNeutralEmitter<&plugin::LowerSplit<NeutralLegacyEmitter>>,
      {{"Split"}, 17, ""});
  r.RegisterLegacy("pad",
                   &WithNeutralEmitter<&plugin::LowerPad<NeutralLegacyEmitter>>,
                   {{"Pad", "Unsqueeze", "Reshape", "Slice", "Cast"},
                    17,
                    "interior via unit-axis Pad + Reshape; negative via Slice; "
                    "f16/bf16/i16/u16 moved as f32/i32"});
}

}  // namespace jax2onnx::plugins
