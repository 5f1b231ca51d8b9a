// The rules of conv_general_dilated and the reduce_window family
// (plugin/rules.h): the recipes are in conv_plan.h and window_plan.h.
#ifndef JAX2ONNX_PLUGIN_CONV_RULES_H_
#define JAX2ONNX_PLUGIN_CONV_RULES_H_

#include "plugin/conv_plan.h"
#include "plugin/rules.h"
#include "plugin/window_plan.h"

namespace jax2onnx::plugin {

template <class R>
void ConvRules(R& r) {
  using E = typename R::Emitter;
  r.template Neutral<&LowerConv<E>>(
      "conv_general_dilated",
      {{"Conv", "MatMul", "Pad", "Transpose", "Gather", "Where", "Slice",
        "Reshape", "Cast"},
       kMinOpset,
       "any dimension numbers via Transpose; lhs_dilation built with "
       "Gather+Where (static spatial dims); negative padding sliced; "
       "batch_group_count folded into groups; Conv in f32 for floats and "
       "8-bit ints (exact up to 1024 products per output); f64 and wider "
       "ints exactly via strided Slices + grouped MatMul (static kernel "
       "spatial dims and output features, input features symbolic only "
       "without groups; at most 4096 offsets)"});
  for (const char* prim : {"reduce_window_sum", "reduce_window_max",
                           "reduce_window_min", "reduce_window"}) {
    r.template Neutral<&LowerReduceWindow<E>>(
        prim,
        {{"Slice", "Add", "Max", "Min", "Pad", "Gather", "Where", "Expand",
          "And", "Or", "Not", "Greater", "Less"},
         kMinOpset,
         "one strided Slice per window offset combined with Add/Max/Min "
         "(i64: Greater/Less and Where, exact where ORT's i64 Max/Min are "
         "not) "
         "(at most 4096 offsets; a symbolic windowed dim slices from its "
         "end); padding and base_dilation holes are "
         "skipped as XLA does (the identity fills them; a generic init "
         "joins each window once); generic reduce_window with any "
         "elementwise combiner and any number of operands folds each "
         "offset's Slice in with the combiner inlined, masking pads and "
         "holes with a constant Where; its complex operands move as real "
         "[..., 2] parts"});
  }
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_CONV_RULES_H_
