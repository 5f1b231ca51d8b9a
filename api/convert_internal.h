// Conversion with an explicit pipeline, for the router, shadow compare and
// parity tools (which must run both pipelines on the same input), and the
// routed conversion of internal bundles behind the public ToOnnx.
#ifndef JAX2ONNX_API_CONVERT_INTERNAL_H_
#define JAX2ONNX_API_CONVERT_INTERNAL_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "api/bundle_access.h"
#include "api/router.h"
#include "api/write_model.h"
#include "ir/ir.h"
#include "jax2onnx/jax2onnx.h"

namespace jax2onnx::api {

absl::StatusOr<onnx::ModelProto> ConvertWithPipeline(
    Pipeline pipeline, const Bundle& bundle, const ConvertOptions& options);

// The public ToOnnx on an internal bundle: routes (environment unless
// options.read_environment is false, then options.use_onnx_ir, then the
// default) and honours JAX2ONNX_SHADOW_COMPARE.
absl::StatusOr<onnx::ModelProto> ToOnnx(const Bundle& bundle,
                                        const ConvertOptions& options = {});

// A converted model whose large main-graph weights may still be held by the
// IR model (a borrowed memory-mapped npz) instead of copied into the proto:
// WritePendingModel writes them straight from there.
struct PendingModel {
  onnx::ModelProto proto;
  DeferredData deferred;  // tensors of `proto` without their data
  std::shared_ptr<const ir::Model> ir_model;  // owns the deferred bytes
};

struct ConversionReport;  // api/report.h

// ToOnnx for a model that is going to be written: the same model, without
// the copy of the weights in the proto on the IR pipeline (the legacy
// pipeline and shadow compare give a plain proto). With `report`, the IR
// pipeline records its op histograms and pass timings there.
absl::StatusOr<PendingModel> ToOnnxForWriting(
    const Bundle& bundle, const ConvertOptions& options,
    ConversionReport* report = nullptr);
// WriteModel for a PendingModel.
absl::Status WritePendingModel(PendingModel&& model, const std::string& path,
                               const WriteOptions& options);

// The pipeline ToOnnx would use for `options`.
absl::StatusOr<Pipeline> RoutePipeline(const ConvertOptions& options);

// Makes sure both plugin sets are in the registry (idempotent).
void RegisterAllLowerings();

// A conversion error as `FILE:LINE:COL: error: MESSAGE` followed by the
// source line and a caret (the form parse errors take), using the
// location of the innermost equation that failed (plugin/conversion_checks.h
// EqnLocation); `FILE: error: MESSAGE` when the error has no location.
std::string FormatConversionError(const absl::Status& status,
                                  const std::string& jaxpr_path);

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_CONVERT_INTERNAL_H_
