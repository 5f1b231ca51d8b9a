// CustomCall ops (see docs/stablehlo.md for the status of each).
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {

void RegisterCustomCallOps(TranslatorTable& table) { (void)table; }

}  // namespace jax2onnx::stablehlo
