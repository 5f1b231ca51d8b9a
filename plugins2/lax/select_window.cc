// IR lowerings of select_and_scatter_add and select_and_gather_add (the
// pooling gradients); the recipes are in plugin/select_window_plan.h,
// shared with the legacy pipeline.
#include "plugin/onnx_types.h"
#include "plugin/registry.h"
#include "plugin/select_window_plan.h"
#include "plugins2/lax/ir_emitter.h"

namespace jax2onnx::plugins2 {

// Called from RegisterLinalg (plugins2/lax/linalg.cc).
void RegisterSelectWindow() {
  plugin::Registry& r = plugin::Registry::Global();
  r.RegisterIr(
      "select_and_scatter_add",
      &WithNeutralEmitter<&plugin::LowerSelectAndScatterAdd<NeutralIrEmitter>>,
      {{"Transpose", "Pad", "Slice", "Where", "ScatterND", "Expand", "Range"},
       plugin::kMinOpset,
       "XLA's sequential select in window order; windowed dims static or "
       "symbolic (Slices end from the dim's end, masks and ScatterND "
       "positions from Range at run time); one ScatterND(add); padding "
       "never selected; negative padding crops; u64/bool/complex refused"});
  r.RegisterIr(
      "select_and_gather_add",
      &WithNeutralEmitter<&plugin::LowerSelectAndGatherAdd<NeutralIrEmitter>>,
      {{"Transpose", "Pad", "Slice", "Where", "Gather", "Range"},
       plugin::kMinOpset,
       "JAX's (key, tangent) pair reduction; windowed dims static or "
       "symbolic; base_dilation holes (static dims) and pads skipped; "
       "negative padding crops; u64/bool/complex refused"});
}

}  // namespace jax2onnx::plugins2
