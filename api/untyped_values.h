#ifndef JAX2ONNX_API_UNTYPED_VALUES_H_
#define JAX2ONNX_API_UNTYPED_VALUES_H_

// Issue 28: every intermediate of a converted model must be typed after ONNX
// shape inference, so viewers (Netron) and consumers that read value_info
// see each tensor's element type and rank.
//
// "Typed" means: after onnx::shape_inference::InferShapes in strict mode with
// data propagation (the same run as ValidateWithOnnxChecker, on a copy stamped
// ir_version 8), the value has a tensor type with an element type and a shape
// field, i.e. a known rank. Dimensions may stay unknown (a Reshape to a
// runtime shape, a Loop's scan outputs, a NonZero count); the rank may not.
// Sequence and optional values count as typed when their element is.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::api {

struct UntypedValue {
  std::string name;
  bool has_elem_type = false;  // true: only the rank is unknown
};

// The node outputs, in the main graph and in every subgraph (Loop/If/Scan
// bodies), that are not typed in the sense above, in graph order (subgraph
// values after their node's earlier siblings). A failure of shape inference
// itself is returned as an error.
absl::StatusOr<std::vector<UntypedValue>> UntypedValues(
    const onnx::ModelProto& model);

// "a, b, c, ..." of the first `shown` names.
std::string UntypedNames(const std::vector<UntypedValue>& values,
                         size_t shown = 5);

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_UNTYPED_VALUES_H_
