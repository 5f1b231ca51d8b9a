// Conversion with an explicit pipeline, for the router, shadow compare and
// parity tools (which must run both pipelines on the same input).
#ifndef JAX2ONNX_API_CONVERT_INTERNAL_H_
#define JAX2ONNX_API_CONVERT_INTERNAL_H_

#include "absl/status/statusor.h"
#include "api/router.h"
#include "jax2onnx/jax2onnx.h"

namespace jax2onnx::api {

absl::StatusOr<onnx::ModelProto> ConvertWithPipeline(
    Pipeline pipeline, const Bundle& bundle, const ConvertOptions& options);

// Makes sure both plugin sets are in the registry (idempotent).
void RegisterAllLowerings();

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_CONVERT_INTERNAL_H_
