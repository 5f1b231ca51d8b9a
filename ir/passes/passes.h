// Factories of the generic IR passes (one pass per file in ir/passes/).
#ifndef JAX2ONNX_IR_PASSES_PASSES_H_
#define JAX2ONNX_IR_PASSES_PASSES_H_

#include <memory>

#include "ir/pass.h"

namespace jax2onnx::ir {

// "dead-node-elimination"
std::unique_ptr<Pass> CreateDeadNodeEliminationPass();
// "unused-initializer-pruning"
std::unique_ptr<Pass> CreateUnusedInitializerPruningPass();
// "topological-sort"
std::unique_ptr<Pass> CreateTopologicalSortPass();

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_PASSES_PASSES_H_
