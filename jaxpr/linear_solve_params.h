// Reads the params of custom_linear_solve (lax.custom_linear_solve):
//   const_lengths=_LinearSolveTuple(matvec=M, vecmat=V, solve=S,
//   transpose_solve=T) jaxprs=_LinearSolveTuple(matvec={...}, vecmat=...,
//   solve={...}, transpose_solve=...)
// Operands are the consts of the four jaxprs in that order, then b. The
// primitive's value is the solve jaxpr applied to (its consts, b); the other
// jaxprs only matter for differentiation.
#ifndef JAX2ONNX_JAXPR_LINEAR_SOLVE_PARAMS_H_
#define JAX2ONNX_JAXPR_LINEAR_SOLVE_PARAMS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/params.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx::jaxpr {

struct LinearSolveParts {
  const ClosedJaxpr* solve = nullptr;
  int64_t solve_consts_begin = 0;  // operand index of the first solve const
  int64_t solve_consts = 0;
  int64_t all_consts = 0;  // operands before b
};

inline absl::StatusOr<LinearSolveParts> ReadLinearSolveParams(
    const Params& params) {
  J2O_ASSIGN_OR_RETURN(const ParamValue* lengths,
                       params.GetCall("const_lengths"));
  J2O_ASSIGN_OR_RETURN(const ParamValue* jaxprs, params.GetCall("jaxprs"));
  LinearSolveParts parts;
  for (const char* name : {"matvec", "vecmat", "solve", "transpose_solve"}) {
    const ParamValue* len = lengths->Field(name);
    if (len == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("custom_linear_solve: const_lengths lacks ", name));
    }
    J2O_ASSIGN_OR_RETURN(int64_t n, len->AsInt("const_lengths entry"));
    if (n < 0) {
      return absl::InvalidArgumentError(
          "custom_linear_solve: negative const_lengths entry");
    }
    if (absl::string_view(name) == "solve") {
      parts.solve_consts_begin = parts.all_consts;
      parts.solve_consts = n;
    }
    parts.all_consts += n;
  }
  const ParamValue* solve = jaxprs->Field("solve");
  if (solve == nullptr || solve->jaxpr() == nullptr) {
    return absl::InvalidArgumentError(
        "custom_linear_solve: jaxprs.solve is not a jaxpr");
  }
  parts.solve = solve->jaxpr().get();
  return parts;
}

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_LINEAR_SOLVE_PARAMS_H_
