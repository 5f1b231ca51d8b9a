#include "plugins2/register.h"

#include <mutex>

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
#include "plugins2/lax/ir_emitter.h"

namespace jax2onnx::plugins2 {

void RegisterAll() {
  static std::once_flag once;
  std::call_once(once, [] {
    IrRegistrar shared;  // the rule tables stated once (plugin/rules.h)
    RegisterElementwise();
    plugin::ShapeRules(shared);
    plugin::ReductionRules(shared);
    plugin::DecompositionRules(shared);
    plugin::SelectWindowRules(shared);
    plugin::DotGeneralRules(shared);
    RegisterCalls();
    plugin::ProgramRules(shared);
    plugin::IndexingRules(shared);
    RegisterControlFlow();
    plugin::ConvRules(shared);
    plugin::SortRules(shared);
    RegisterCollectives();
    RegisterKeyWords();
    // Last: wraps every lowering registered before for complex values
    // and registers fft (plugin/complex_wrappers.h).
    plugin::RegisterComplexWrappers<IrRegistrar>();
  });
}

}  // namespace jax2onnx::plugins2
