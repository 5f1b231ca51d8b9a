// Every lowering family registered for one pipeline, in one order for both
// (plugins/register.cc, plugins2/register.cc). R is the pipeline's registrar
// (plugin/rules.h); the four functions register what really differs per
// pipeline or takes the pipeline's own emitter: the elementwise family (its
// emitter), calls, control flow and the key-word adapter.
#ifndef JAX2ONNX_PLUGIN_ALL_RULES_H_
#define JAX2ONNX_PLUGIN_ALL_RULES_H_

#include "plugin/collectives_rules.h"
#include "plugin/complex_wrappers.h"
#include "plugin/conv_rules.h"
#include "plugin/decomposition_rules.h"
#include "plugin/dot_general_rules.h"
#include "plugin/indexing_rules.h"
#include "plugin/program_rules.h"
#include "plugin/reduction_rules.h"
#include "plugin/select_window_rules.h"
#include "plugin/shape_rules.h"
#include "plugin/sort_rules.h"

namespace jax2onnx::plugin {

template <class R, void (*Elementwise)(), void (*Calls)(),
          void (*ControlFlow)(), void (*KeyWords)()>
void RegisterAllRules() {
  R shared;
  Elementwise();
  ShapeRules(shared);
  ReductionRules(shared);
  DecompositionRules(shared);
  SelectWindowRules(shared);
  DotGeneralRules(shared);
  Calls();
  ProgramRules(shared);
  IndexingRules(shared);
  ControlFlow();
  ConvRules(shared);
  SortRules(shared);
  CollectiveRules(shared);
  KeyWords();
  // Last: wraps every lowering registered before for complex values and
  // registers fft (plugin/complex_wrappers.h).
  RegisterComplexWrappers<R>();
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_ALL_RULES_H_
