#include "plugins/register.h"

#include <mutex>

#include "plugin/all_rules.h"
#include "plugins/lax/legacy_emitter.h"

namespace jax2onnx::plugins {

void RegisterAll() {
  static std::once_flag once;
  std::call_once(
      once, &plugin::RegisterAllRules<LegacyRegistrar, &RegisterElementwise,
                                      &RegisterCalls, &RegisterControlFlow,
                                      &RegisterKeyWords>);
}

}  // namespace jax2onnx::plugins
