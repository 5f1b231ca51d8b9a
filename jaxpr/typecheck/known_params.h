// The params each primitive may carry, and the fields of the structured
// params (GatherDimensionNumbers(...), ...) that change what it computes.
//
// A param that a newer JAX adds with a new meaning must not be dropped
// silently, so the type checker refuses a param (or a field of a structured
// param) that is not listed here for its primitive, naming it and listing the
// known ones. The table is the union of every bind site of the primitive in
// JAX's source at the release tags jax-v0.4.30 ... jax-v0.11.0 and main
// (read with an AST walk over jax/_src), of the params the corpus bundles
// (testdata/, corpus/real, vectors) print, and of the params the parser and
// the StableHLO translator set themselves.
//
// Params that only place or lay out data (shardings, layouts, meshes) never
// change a value, so kIrrelevantParams accepts them on every primitive even
// where the table does not list them: a JAX that adds `out_sharding` to one
// more primitive still converts.
#ifndef JAX2ONNX_JAXPR_TYPECHECK_KNOWN_PARAMS_H_
#define JAX2ONNX_JAXPR_TYPECHECK_KNOWN_PARAMS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr::typecheck {

// The known param names of `primitive`, sorted, or nullptr when its params
// are not checked (a primitive with no entry, or one in the documented
// unchecked list of opaque calls the converter refuses anyway).
const std::vector<std::string>* KnownParams(absl::string_view primitive);

// The known fields of a structured param value printed as `callee(...)`, or
// nullptr for a callee whose fields are not checked (shardings, meshes).
const std::vector<std::string>* KnownFields(absl::string_view callee);

// Params accepted on every primitive: they place or lay out data and never
// change a value (documented in docs/jax_versions.md).
bool IsIrrelevantParam(absl::string_view name);

// OK, or an error (without location) naming the first unknown param or
// structured field of `eqn` and listing the known ones.
absl::Status CheckKnownParams(const Eqn& eqn);

// Primitives deliberately left unchecked (sorted).
std::vector<std::string> UncheckedParamPrimitives();

}  // namespace jax2onnx::jaxpr::typecheck

#endif  // JAX2ONNX_JAXPR_TYPECHECK_KNOWN_PARAMS_H_
