// Helpers shared by the IR shape, reduction and linalg lowerings: a Cast
// that is skipped when the value already has the dtype (looking through the
// ops these families emit, whose outputs the context leaves untyped), and a
// move-based attribute list builder (ir::Attr is move-only).
#ifndef JAX2ONNX_PLUGINS2_LAX_LAX_IR_UTIL_H_
#define JAX2ONNX_PLUGINS2_LAX_LAX_IR_UTIL_H_

#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "converter2/lowering_context.h"
#include "ir/ir.h"
#include "jaxpr/dtype.h"
#include "jaxpr/status_macros.h"
#include "plugin/onnx_types.h"

namespace jax2onnx::plugins2 {

template <typename... T>
std::vector<std::common_type_t<T...>> Attrs(T... attrs) {
  std::vector<std::common_type_t<T...>> v;
  v.reserve(sizeof...(T));
  (v.push_back(std::move(attrs)), ...);
  return v;
}

// The ONNX element type of `v`, derived through its producer when the value
// is untyped (UNDEFINED when unknown). Mirrors LaxLegacyCtx::OutputDType.
inline int KnownDType(const ir::Value* v) {
  for (int depth = 0; v != nullptr && depth < 64; ++depth) {
    if (v->dtype() != onnx::TensorProto::UNDEFINED) return v->dtype();
    const ir::Node* n = v->producer();
    if (n == nullptr) break;
    const std::string& op = n->op_type();
    if (op == "Cast") {
      const ir::Attr* to = n->attr("to");
      return to ? static_cast<int>(to->i()) : onnx::TensorProto::UNDEFINED;
    }
    if (op == "ArgMax" || op == "ArgMin" || op == "Shape") {
      return onnx::TensorProto::INT64;
    }
    if (op == "IsNaN" || op == "Equal" || op == "Less" || op == "Greater" ||
        op == "Not") {
      return onnx::TensorProto::BOOL;
    }
    const int i = op == "Where" ? 1 : 0;
    if (n->num_inputs() <= i) break;
    v = n->input(i);
  }
  return onnx::TensorProto::UNDEFINED;
}

inline absl::StatusOr<ir::Value*> CastTo(converter2::LoweringContext& ctx,
                                         ir::Value* v, jaxpr::DType to) {
  J2O_ASSIGN_OR_RETURN(int onnx_to, plugin::OnnxDType(to));
  if (KnownDType(v) == onnx_to) return v;
  return ctx.Op("Cast", {v}, Attrs(ir::Attr::Int("to", onnx_to)));
}

}  // namespace jax2onnx::plugins2

#endif  // JAX2ONNX_PLUGINS2_LAX_LAX_IR_UTIL_H_
