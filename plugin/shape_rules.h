// The rules of the shape family (plugin/rules.h): broadcast_in_dim,
// reshape, squeeze, expand_dims, transpose, rev, slice, concatenate, iota,
// split, pad; the recipes are in shape_plan.h.
#ifndef JAX2ONNX_PLUGIN_SHAPE_RULES_H_
#define JAX2ONNX_PLUGIN_SHAPE_RULES_H_

#include "plugin/rules.h"
#include "plugin/shape_plan.h"

namespace jax2onnx::plugin {

template <class R>
void ShapeRules(R& r) {
  using E = typename R::Emitter;
  r.template Neutral<&LowerBroadcastInDim<E>>(
      "broadcast_in_dim",
      {{"Unsqueeze", "Expand"},
       17,
       "output aval gives the shape (param absent in JAX >= 0.9.1)"});
  r.template Neutral<&LowerReshape<E>>(
      "reshape", {{"Transpose", "Reshape"},
                  17,
                  "allowzero=1 whenever a target dim is 0 or symbolic"});
  r.template Neutral<&LowerSqueeze<E>>("squeeze", {{"Squeeze"}, 17, ""});
  r.template Neutral<&LowerExpandDims<E>>("expand_dims",
                                          {{"Unsqueeze"}, 17, ""});
  r.template Neutral<&LowerTranspose<E>>("transpose", {{"Transpose"}, 17, ""});
  r.template Neutral<&LowerRev<E>>("rev",
                                   {{"Slice"}, 17, "Slice with step -1"});
  r.template Neutral<&LowerSlice<E>>("slice", {{"Slice"}, 17, ""});
  r.template Neutral<&LowerConcatenate<E>>("concatenate", {{"Concat"}, 17, ""});
  r.template Neutral<&LowerIota<E>>("iota",
                                    {{"Range", "Cast", "Unsqueeze", "Expand"},
                                     17,
                                     "int64 Range cast to the result dtype"});
  r.template Neutral<&LowerSplit<E>>("split", {{"Split"}, 17, ""});
  r.template Neutral<&LowerPad<E>>(
      "pad", {{"Pad", "Unsqueeze", "Reshape", "Slice", "Cast"},
              17,
              "interior via unit-axis Pad + Reshape; negative via Slice; "
              "f16/bf16/i16/u16 moved as f32/i32"});
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_SHAPE_RULES_H_
