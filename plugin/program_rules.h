// The rules of the primitives current JAX emits for ordinary code
// (plugin/rules.h): stack, unstack, tile, empty, empty2, zeros_like, tie,
// shard_alike, xla_metadata_value, random_clone, dce_sink, debug_print,
// debug_callback, platform_index, dim_as_value, dimension_size,
// shape_assertion; the recipes are in
// program_plan.h. The call-like ones (eval_jaxpr, composite, ...) are
// inlined by plugins*/lax/calls.cc.
#ifndef JAX2ONNX_PLUGIN_PROGRAM_RULES_H_
#define JAX2ONNX_PLUGIN_PROGRAM_RULES_H_

#include "plugin/program_plan.h"
#include "plugin/rules.h"

namespace jax2onnx::plugin {

template <class R>
void ProgramRules(R& r) {
  using E = typename R::Emitter;
  r.template Neutral<&LowerStack<E>>("stack",
                                     {{"Unsqueeze", "Concat"}, 17, ""});
  r.template Neutral<&LowerUnstack<E>>(
      "unstack", {{"Split", "Squeeze"}, 17, "one result per row"});
  r.template Neutral<&LowerTile<E>>(
      "tile",
      {{"Tile", "Cast"}, 17, "f16/bf16/i8/i16/u8/u16 moved as f32/i32"});
  for (const char* name : {"empty", "empty2", "zeros_like"}) {
    r.template Neutral<&LowerZeros<E>>(
        name, {{"Expand", "Cast"},
               17,
               "zeros (JAX leaves empty's values unspecified; its CPU "
               "lowering writes zeros)"});
  }
  r.template Neutral<&LowerTie<E>>("tie", {{}, 17, "its second operand"});
  for (const char* name :
       {"shard_alike", "xla_metadata_value", "random_clone"}) {
    r.template Neutral<&LowerPassThrough<E>>(name,
                                             {{}, 17, "identity (annotation)"});
  }
  for (const char* name : {"dce_sink", "debug_print", "debug_callback"}) {
    r.template Neutral<&LowerDropped<E>>(
        name, {{}, 17, "dropped: no results (convert -v names it)"});
  }
  r.template Neutral<&LowerPlatformIndex<E>>(
      "platform_index",
      {{}, 17, "constant: the branch JAX's CPU backend takes"});
  r.template Neutral<&LowerDimAsValue<E>>(
      "dim_as_value", {{"Shape", "Gather", "Squeeze", "Cast"},
                       17,
                       "the dimension from the input shapes at run time"});
  r.template Neutral<&LowerDimensionSize<E>>(
      "dimension_size", {{"Shape", "Squeeze", "Cast"},
                         17,
                         "the operand's dimension at run time"});
  r.template Neutral<&LowerShapeAssertion<E>>(
      "shape_assertion",
      {{"Where", "Gather", "Shape", "Mul", "Reshape"},
       17,
       "checked at run time: a false assertion fails the ONNX Runtime run "
       "naming a node 'shape_assertion: MESSAGE'; every output depends on "
       "it; refused inside loop/cond bodies and functions"});
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_PROGRAM_RULES_H_
