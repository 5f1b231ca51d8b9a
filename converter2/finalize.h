// Finalization of a lowered IR model: the optimizer/cleanup pass pipeline
// (dead nodes, unused initializers; at `optimize` >= 1 the generic exact
// rewrites of ir/passes/, at 2 also the fusions; then topological order and
// unique node names), with the verifier run around every pass in debug
// builds.
#ifndef JAX2ONNX_CONVERTER2_FINALIZE_H_
#define JAX2ONNX_CONVERTER2_FINALIZE_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "ir/ir.h"
#include "ir/passes/fusions.h"

namespace jax2onnx::converter2 {

// Runs the IR passes of optimization level `optimize` (0 literal, 1 generic
// rewrites, 2 also fusions to ops of `opset`, those off by default chosen
// by `fusions`) and verifies the result.
absl::Status Finalize(
    ir::Model& model, int optimize, int opset,
    const std::function<void(const std::string&, const ir::Model&)>& dump,
    const ir::FusionOptions& fusions = {});

}  // namespace jax2onnx::converter2

#endif  // JAX2ONNX_CONVERTER2_FINALIZE_H_
