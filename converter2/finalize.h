// Finalization of a lowered IR model: the optimizer/cleanup pass pipeline
// (dead nodes, unused initializers, topological order), with the verifier
// run around every pass in debug builds.
#ifndef JAX2ONNX_CONVERTER2_FINALIZE_H_
#define JAX2ONNX_CONVERTER2_FINALIZE_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "ir/ir.h"

namespace jax2onnx::converter2 {

absl::Status Finalize(
    ir::Model& model,
    const std::function<void(const std::string&, const ir::Model&)>& dump);

}  // namespace jax2onnx::converter2

#endif  // JAX2ONNX_CONVERTER2_FINALIZE_H_
