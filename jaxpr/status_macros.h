// Early-return helpers for absl::Status / absl::StatusOr.
#ifndef JAX2ONNX_JAXPR_STATUS_MACROS_H_
#define JAX2ONNX_JAXPR_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define J2O_STATUS_CONCAT_INNER(a, b) a##b
#define J2O_STATUS_CONCAT(a, b) J2O_STATUS_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define J2O_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::absl::Status j2o_status_ = (expr);       \
    if (!j2o_status_.ok()) return j2o_status_; \
  } while (0)

// `lhs = value of expr` (a StatusOr), or returns its error.
#define J2O_ASSIGN_OR_RETURN(lhs, expr)                                      \
  J2O_ASSIGN_OR_RETURN_IMPL(J2O_STATUS_CONCAT(j2o_statusor_, __LINE__), lhs, \
                            expr)
#define J2O_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

#endif  // JAX2ONNX_JAXPR_STATUS_MACROS_H_
