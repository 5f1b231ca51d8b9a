// IR lowerings of the reduction family (reduce_*, argmax/argmin and the
// cumulative scans); the recipes are in plugin/reduction_plan.h, shared with
// the legacy pipeline.
#include "absl/status/status.h"
#include "converter2/lowering_context.h"
#include "plugin/onnx_types.h"
#include "plugin/reduce_plan.h"
#include "plugin/reduction_plan.h"
#include "plugin/registry.h"
#include "plugins2/lax/ir_emitter.h"
#include "plugins2/register.h"

namespace jax2onnx::plugins2 {

void RegisterReductions() {
  plugin::Registry& r = plugin::Registry::Global();
  r.RegisterIr(
      "reduce",
      &WithNeutralEmitter<&plugin::LowerGenericReduce<NeutralIrEmitter>>,
      {{"Loop", "Transpose", "Reshape", "Gather", "Expand"},
       plugin::kMinOpset,
       "variadic: one Loop over the reduced elements in row-major order, the "
       "scalar combiner inlined on whole slices; elementwise combiners, "
       "calls in them (pjit, custom_jvp_call, ...) inlined; complex "
       "operands as real [..., 2] parts"});
  for (const char* name : plugin::ReducePrimitives()) {
    r.RegisterIr(name,
                 &WithNeutralEmitter<&plugin::LowerReduce<NeutralIrEmitter>>,
                 {{plugin::ReduceOnnxOp(name), "Cast", "Mod"},
                  17,
                  plugin::ReduceIsBoolOnly(name)
                      ? "bool only (bitwise integer forms refused); xor as Mod "
                        "2 of the sum"
                      : "narrow ints/f16/bf16 computed wider and cast "
                        "back; u64 max/min on an order-preserving i64 key; "
                        "complex max/min "
                        "lexicographic from -inf/+inf + 0i (JAX's max_hlo)"});
  }
  for (const char* name : {"argmax", "argmin"}) {
    r.RegisterIr(
        name, &WithNeutralEmitter<&plugin::LowerArgExtreme<NeutralIrEmitter>>,
        {{"ArgMax", "ArgMin", "IsNaN", "ReduceMax", "Where", "Cast"},
         17,
         "first NaN wins (JAX rule); ties pick the first index; u64 on an "
         "order-preserving i64 key"});
  }
  r.RegisterIr("cumsum",
               &WithNeutralEmitter<&plugin::LowerCumsum<NeutralIrEmitter>>,
               {{"CumSum", "Cast"}, 17, ""});
  for (const char* name : {"cumprod", "cummax", "cummin", "cumlogsumexp"}) {
    r.RegisterIr(
        name,
        &WithNeutralEmitter<&plugin::LowerCumulativeScan<NeutralIrEmitter>>,
        {{"Slice", "Concat", "Mul", "Max", "Min", "Cast", "Exp", "Log",
          "Greater", "Less", "Where"},
         17,
         "log-step scan (cumlogsumexp combines with a stable logaddexp; "
         "complex "
         "cummax/cummin pick lexicographically); the scanned axis must be "
         "static"});
  }
}

}  // namespace jax2onnx::plugins2
