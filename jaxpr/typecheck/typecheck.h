// A type checker for parsed jaxprs, run before any lowering or evaluation.
// The converter and the interpreter trust the printed types; this pass makes
// that trust safe. It enforces what `jax.core.check_jaxpr` enforces:
// structural rules (binders bound once, operands defined before use, known
// dtypes, non-negative dims with element counts that fit in int64) and, per
// primitive, JAX's abstract-evaluation rules (arity, operand dtypes, params
// present and well-formed, nested jaxpr signatures) with the result type
// computed from operands and params compared with the declared binder.
//
// Errors read like parse errors and point at the equation:
//   FILE:LINE:COL: error: 'add': expected f32[5], declared f32[6]
//   (operands: f32[5], f32[5])
// For an equation inside a nested jaxpr the enclosing equation's location is
// appended: `(in the jaxpr of 'pjit' at FILE:LINE:COL)`.
#ifndef JAX2ONNX_JAXPR_TYPECHECK_TYPECHECK_H_
#define JAX2ONNX_JAXPR_TYPECHECK_TYPECHECK_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/mesh.h"

namespace jax2onnx::jaxpr {

struct TypeCheckOptions {
  // A primitive with no type rule is an error when true (`verify`); when
  // false its equation gets only the structural checks, so the converter or
  // interpreter can name it with its own "unsupported primitive" message.
  bool unknown_primitive_is_error = false;
  // Stop after this many errors (each on its own line of the status).
  int max_errors = 20;
  // Sizes of mesh axes a printed shard_map mesh does not show (`--mesh`):
  // with them the shard shapes of shard_map bodies are checked too.
  std::vector<MeshAxis> mesh_axis_sizes;
};

// Checks the main jaxpr of `file` and every jaxpr nested in it. OK, or an
// InvalidArgument status whose message holds one `FILE:LINE:COL: error:`
// line per problem found.
absl::Status TypeCheckFile(const JaxprFile& file,
                           const TypeCheckOptions& options = {});

// Same for one jaxpr; `filename` prefixes locations.
absl::Status TypeCheckJaxpr(const ClosedJaxpr& jaxpr,
                            absl::string_view filename,
                            const TypeCheckOptions& options = {});

// The result types the rule of `eqn.primitive` computes from the operand
// avals and params (nullopt for a result the rule does not compute; the
// declared binder avals are not compared). Nested jaxprs are type checked.
// An error when there is no rule or the rule rejects the equation. Used by
// frontends that know only some result dims (StableHLO's `?`).
absl::StatusOr<std::vector<std::optional<Aval>>> InferResultAvals(
    const Eqn& eqn);

// True when the checker has a rule for `primitive`.
bool HasTypeRule(absl::string_view primitive);
// Sorted names of the primitives with a rule.
std::vector<std::string> TypeRulePrimitives();
// Sorted names of the primitives whose rule is partial (checks arity, dtypes
// and params but does not compute every result type).
std::vector<std::string> PartialTypeRulePrimitives();

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_TYPECHECK_TYPECHECK_H_
