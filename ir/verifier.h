// Structural checks of the IR: use lists agree with node inputs, every value
// is defined once (graph input, initializer or node output) before it is
// used, nodes belong to the graph that lists them, value names are unique
// within the visible scope (subgraphs may read but not redefine outer
// names), and graph inputs/outputs carry types.
#ifndef JAX2ONNX_IR_VERIFIER_H_
#define JAX2ONNX_IR_VERIFIER_H_

#include "absl/status/status.h"
#include "ir/ir.h"

namespace jax2onnx::ir {

struct VerifyOptions {
  // Graph inputs and outputs (of the main graph and its subgraphs) must
  // have a type. Function bodies are exempt: ONNX function parameters are
  // untyped.
  bool require_io_types = true;
};

// Verifies the main graph (with subgraphs) and every function body.
absl::Status Verify(const Model& model, const VerifyOptions& options = {});
// Verifies `graph` as a top-level graph (its subgraphs included).
absl::Status Verify(const Graph& graph, const VerifyOptions& options = {});

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_VERIFIER_H_
