// A thin view of the legacy converter::State with the method names of the
// IR pipeline's LoweringContext, used by the legacy shape, reduction, linalg
// and call lowerings so they stay structurally identical to their plugins2/
// twins (the shadow compare then diffs like for like). Intermediate values
// are registered in shape_env with their dtype (derived from the op) and an
// unknown shape; SetOutput refines bound outputs from the JAX avals.
#ifndef JAX2ONNX_PLUGINS_LAX_LAX_LEGACY_CTX_H_
#define JAX2ONNX_PLUGINS_LAX_LAX_LEGACY_CTX_H_

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "converter/state.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "onnx/onnx_pb.h"
#include "plugin/onnx_types.h"

namespace jax2onnx::plugins {

class LaxLegacyCtx {
 public:
  explicit LaxLegacyCtx(converter::State& s) : s_(s) {}

  int opset() const { return s_.opset(); }
  absl::StatusOr<std::string> Input(const jaxpr::Eqn& eqn, int i) {
    return s_.Input(eqn, i);
  }
  absl::Status SetOutput(const jaxpr::Eqn& eqn, int i, const std::string& v) {
    return s_.SetOutput(eqn, i, v);
  }
  std::string ConstI64(const std::vector<int64_t>& values) {
    return s_.ConstI64(values);
  }
  std::string ConstI64Scalar(int64_t value) { return s_.ConstI64Scalar(value); }
  absl::StatusOr<std::string> ConstScalar(jaxpr::DType dtype, double value) {
    return s_.ConstScalar(dtype, value);
  }
  absl::StatusOr<std::string> DimValue(const jaxpr::DimExpr& dim) {
    return s_.DimValue(dim);
  }
  absl::StatusOr<std::string> ShapeValue(
      const std::vector<jaxpr::DimExpr>& dims) {
    return s_.ShapeValue(dims);
  }
  absl::StatusOr<std::vector<std::string>> Inline(
      const jaxpr::ClosedJaxpr& jaxpr, const std::vector<std::string>& args) {
    return s_.Inline(jaxpr, args);
  }

  // ONNX element type of a value (UNDEFINED when shape_env has no entry).
  int DTypeOf(const std::string& value) const {
    const converter::ValueInfo* info = s_.Info(value);
    return info ? info->dtype : onnx::TensorProto::UNDEFINED;
  }

  std::string Op(absl::string_view op_type, std::vector<std::string> inputs,
                 std::vector<onnx::AttributeProto> attrs = {}) {
    return OpMulti(op_type, std::move(inputs), 1, std::move(attrs))[0];
  }
  std::vector<std::string> OpMulti(
      absl::string_view op_type, std::vector<std::string> inputs,
      int num_outputs, std::vector<onnx::AttributeProto> attrs = {}) {
    const int dtype = OutputDType(op_type, inputs, attrs);
    std::vector<converter::ValueInfo> outputs(
        num_outputs, converter::ValueInfo::UnknownShape(dtype));
    return s_.AddNodeMulti(op_type, std::move(inputs), std::move(outputs),
                           std::move(attrs));
  }

 private:
  // The element type of the ops these families emit.
  int OutputDType(absl::string_view op_type,
                  const std::vector<std::string>& inputs,
                  const std::vector<onnx::AttributeProto>& attrs) const {
    if (op_type == "Cast") {
      for (const onnx::AttributeProto& a : attrs) {
        if (a.name() == "to") return static_cast<int>(a.i());
      }
    }
    if (op_type == "ArgMax" || op_type == "ArgMin" || op_type == "Shape") {
      return onnx::TensorProto::INT64;
    }
    if (op_type == "IsNaN" || op_type == "Equal" || op_type == "Less" ||
        op_type == "Greater" || op_type == "Not") {
      return onnx::TensorProto::BOOL;
    }
    if (op_type == "Where") return DTypeOf(inputs[1]);
    return inputs.empty() ? onnx::TensorProto::UNDEFINED : DTypeOf(inputs[0]);
  }

  converter::State& s_;
};

// Move-based attribute list builder (the IR twin needs it for move-only
// attributes; kept so both twins read the same).
template <typename... T>
std::vector<std::common_type_t<T...>> Attrs(T... attrs) {
  std::vector<std::common_type_t<T...>> v;
  v.reserve(sizeof...(T));
  (v.push_back(std::move(attrs)), ...);
  return v;
}

// Adapts a lowering written against LaxLegacyCtx to the registry's legacy
// signature.
template <absl::Status (*Lower)(LaxLegacyCtx&, const jaxpr::Eqn&)>
absl::Status AdaptLegacy(converter::State& s, const jaxpr::Eqn& eqn) {
  LaxLegacyCtx ctx(s);
  return Lower(ctx, eqn);
}

}  // namespace jax2onnx::plugins

#endif  // JAX2ONNX_PLUGINS_LAX_LAX_LEGACY_CTX_H_
