#include "plugins2/register.h"

#include <mutex>

#include "plugin/all_rules.h"
#include "plugins2/lax/ir_emitter.h"

namespace jax2onnx::plugins2 {

void RegisterAll() {
  static std::once_flag once;
  std::call_once(once,
                 &plugin::RegisterAllRules<IrRegistrar, &RegisterElementwise,
                                           &RegisterCalls, &RegisterControlFlow,
                                           &RegisterKeyWords>);
}

}  // namespace jax2onnx::plugins2
