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
// "node-naming"
std::unique_ptr<Pass> CreateNodeNamingPass();
// "type-propagation"
std::unique_ptr<Pass> CreateTypePropagationPass();

// The generic exact rewrites of --optimize >= 1 (each file states what it
// rewrites and what it refuses).
// "constant-folding"
std::unique_ptr<Pass> CreateConstantFoldingPass();
// "common-subexpression-elimination"
std::unique_ptr<Pass> CreateCommonSubexpressionEliminationPass();
// "identity-elimination"
std::unique_ptr<Pass> CreateIdentityEliminationPass();
// "cast-elimination"
std::unique_ptr<Pass> CreateCastEliminationPass();
// "transpose-folding"
std::unique_ptr<Pass> CreateTransposeFoldingPass();
// "reshape-folding"
std::unique_ptr<Pass> CreateReshapeFoldingPass();
// "reduce-keepdims"
std::unique_ptr<Pass> CreateReduceKeepdimsPass();
// "expand-elimination"
std::unique_ptr<Pass> CreateExpandEliminationPass();
// "einsum-to-matmul"
std::unique_ptr<Pass> CreateEinsumToMatMulPass();
// "gemm-bias-folding"
std::unique_ptr<Pass> CreateGemmBiasFoldingPass();
// "slices-to-split"
std::unique_ptr<Pass> CreateSlicesToSplitPass();
// "squeeze-sinking"
std::unique_ptr<Pass> CreateSqueezeSinkingPass();

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_PASSES_PASSES_H_
