// ONNX model-local functions for named JAX calls (ConvertOptions::functions,
// the CLI's --functions=GLOB,...). A call equation whose `name` param (pjit,
// jit, and the custom_jvp_call / custom_vjp_call forms that print one)
// matches one of the fnmatch-style globs is lowered once into a
// FunctionProto of the domain `jax2onnx.functions` and called by a node of
// that domain, instead of being inlined. Calls that agree on (name,
// primitive, operand avals, params with the callee jaxpr compared up to
// variable renaming) share one function; the same name with another
// signature gets a numbered sibling (`gelu`, `gelu_1`, ...).
//
// The body is lowered with the same IR lowerings into the function's body
// graph: inputs are the call's variable operands (a literal operand is a
// constant of the body and part of the dedup key), outputs its results.
// Constants of the body are initializers of the body graph while the optimizer
// runs (so every pass treats them as constants) and Constant nodes in the
// written FunctionProto (ir::ToProto); nothing in a body refers to the main
// graph. Matching calls inside a body become nested function calls.
#ifndef JAX2ONNX_CONVERTER2_FUNCTIONS_H_
#define JAX2ONNX_CONVERTER2_FUNCTIONS_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/ir.h"
#include "jaxpr/array.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::converter2 {

class LoweringContext;

inline constexpr char kFunctionDomain[] = "jax2onnx.functions";

// The dedup key of a call: name, primitive, operand avals, and the params
// with every jaxpr printed with canonical variable numbers (so two calls of
// one traced function agree although JAX prints their inner variables under
// different names).
std::string CallKey(const jaxpr::Eqn& eqn, absl::string_view jax_name);

// `name` made a valid, non-empty C-style identifier: other characters
// become '_' (`<lambda>` -> `_lambda_`), a leading digit gets a '_'.
std::string SanitizeFunctionName(absl::string_view name);

// Refuses an empty glob (a typo such as `--functions=a,,b`).
absl::Status ValidateFunctionPatterns(const std::vector<std::string>& globs);

class FunctionTable {
 public:
  FunctionTable(ir::Model* model, std::vector<std::string> globs, int opset,
                const std::vector<jaxpr::Array>* elided_literals);

  // Whether a call named `jax_name` becomes a function.
  bool Matches(absl::string_view jax_name) const;

  // Emits, in `caller`'s current graph, a call of the function for `eqn`
  // (building the function on first use) and returns the call's outputs.
  absl::StatusOr<std::vector<ir::Value*>> Call(
      LoweringContext& caller, const jaxpr::Eqn& eqn,
      absl::string_view jax_name, const jaxpr::ClosedJaxpr& callee,
      absl::Span<ir::Value* const> args);

 private:
  // The body is lowered with `caller`'s options (threefry mode).
  absl::StatusOr<ir::Function*> Build(const LoweringContext& caller,
                                      const jaxpr::Eqn& eqn,
                                      absl::string_view jax_name,
                                      const jaxpr::ClosedJaxpr& callee);
  std::string UniqueName(absl::string_view jax_name);

  ir::Model* model_;
  std::vector<std::string> globs_;
  int opset_;
  const std::vector<jaxpr::Array>* elided_literals_;
  absl::flat_hash_map<std::string, ir::Function*> by_key_;
  absl::flat_hash_set<std::string> reserved_names_;
};

// Removes the functions of kFunctionDomain that no node calls any more
// (the optimizer may have removed every call), and the model's import of
// the domain when none is left.
void PruneUnusedFunctions(ir::Model& model);

}  // namespace jax2onnx::converter2

#endif  // JAX2ONNX_CONVERTER2_FUNCTIONS_H_
