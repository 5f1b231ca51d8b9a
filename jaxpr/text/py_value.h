// Parses the Python reprs JAX prints as param values (`(1, 0)`, `None`,
// `GatherScatterMode.CLIP`, `'z'`, `{0: ('z',)}`, `np.int64(1)`,
// `GatherDimensionNumbers(offset_dims=(1,), ...)`) into a ParamValue tree.
// Anything it does not understand is reported as "not structured" so the
// caller can keep the text as ParamValue::Opaque.
#ifndef JAX2ONNX_JAXPR_TEXT_PY_VALUE_H_
#define JAX2ONNX_JAXPR_TEXT_PY_VALUE_H_

#include "absl/strings/string_view.h"
#include "jaxpr/params.h"

namespace jax2onnx::jaxpr {

// True when all of `text` (surrounding whitespace allowed) is one value of
// the supported repr subset; nesting deeper than `max_depth` gives false.
bool ParsePyValue(absl::string_view text, int max_depth, ParamValue* out);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_TEXT_PY_VALUE_H_
