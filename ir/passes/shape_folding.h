// shape-folding (ir/passes/shape_folding.cc), declared apart from
// ir/passes/passes.h so that adding it rebuilt no other pass.
#ifndef JAX2ONNX_IR_PASSES_SHAPE_FOLDING_H_
#define JAX2ONNX_IR_PASSES_SHAPE_FOLDING_H_

#include <memory>

#include "ir/pass.h"

namespace jax2onnx::ir {

// "shape-folding"
std::unique_ptr<Pass> CreateShapeFoldingPass();

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_PASSES_SHAPE_FOLDING_H_
