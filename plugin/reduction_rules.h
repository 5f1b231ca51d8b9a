// The rules of the reduction family (plugin/rules.h): reduce (variadic),
// reduce_*, argmax/argmin and the cumulative scans; the recipes are in
// reduce_plan.h and reduction_plan.h.
#ifndef JAX2ONNX_PLUGIN_REDUCTION_RULES_H_
#define JAX2ONNX_PLUGIN_REDUCTION_RULES_H_

#include "plugin/reduce_plan.h"
#include "plugin/reduction_plan.h"
#include "plugin/rules.h"

namespace jax2onnx::plugin {

template <class R>
void ReductionRules(R& r) {
  using E = typename R::Emitter;
  r.template Neutral<&LowerGenericReduce<E>>(
      "reduce",
      {{"Loop", "Transpose", "Reshape", "Gather", "Expand"},
       kMinOpset,
       "variadic: one Loop over the reduced elements in row-major order, the "
       "scalar combiner inlined on whole slices; elementwise combiners, "
       "calls in them (pjit, custom_jvp_call, ...) inlined; complex "
       "operands as real [..., 2] parts"});
  for (const char* name : ReducePrimitives()) {
    r.template Neutral<&LowerReduce<E>>(
        name, {{ReduceOnnxOp(name), "Cast", "Mod"},
               17,
               ReduceIsBoolOnly(name)
                   ? "bool only (bitwise integer forms refused); xor as Mod 2 "
                     "of the sum"
                   : "narrow ints/f16/bf16 computed wider and cast back; u64 "
                     "max/min on an order-preserving i64 key; complex max/min "
                     "lexicographic from -inf/+inf + 0i (JAX's max_hlo)"});
  }
  for (const char* name : {"argmax", "argmin"}) {
    r.template Neutral<&LowerArgExtreme<E>>(
        name, {{"ArgMax", "ArgMin", "IsNaN", "ReduceMax", "Where", "Cast"},
               17,
               "first NaN wins (JAX rule); ties pick the first index; u64 on "
               "an order-preserving i64 key"});
  }
  r.template Neutral<&LowerCumsum<E>>("cumsum", {{"CumSum", "Cast"}, 17, ""});
  for (const char* name : {"cumprod", "cummax", "cummin", "cumlogsumexp"}) {
    r.template Neutral<&LowerCumulativeScan<E>>(
        name,
        {{"Slice", "Concat", "Mul", "Max", "Min", "Cast", "Exp", "Log",
          "Greater", "Less", "Where"},
         17,
         "log-step scan (cumlogsumexp combines with a stable logaddexp; "
         "complex cummax/cummin pick lexicographically); the scanned axis "
         "must be static"});
  }
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_REDUCTION_RULES_H_
