// The pattern fusions: chains of elementwise/reduction ops the IR pipeline
// emits for JAX's printed layer norms, softmaxes and activations, rewritten
// into the native ONNX ops, each gated on the opset that has the op. Every
// pass fires only on an exact structural match (see each file's comment)
// and otherwise leaves the graph unchanged.
#ifndef JAX2ONNX_IR_PASSES_FUSIONS_H_
#define JAX2ONNX_IR_PASSES_FUSIONS_H_

#include <memory>
#include <string>
#include <vector>

#include "ir/pass.h"

namespace jax2onnx::ir {

// "fuse-layer-norm": LayerNormalization (opset >= 17).
std::unique_ptr<Pass> CreateFuseLayerNormPass();
// "fuse-rms-norm": RMSNormalization (opset >= 23).
std::unique_ptr<Pass> CreateFuseRmsNormPass();
// "fuse-softmax": Softmax and LogSoftmax (opset >= 13).
std::unique_ptr<Pass> CreateFuseSoftmaxPass();
// "fuse-gelu": Gelu, tanh and erf forms (opset >= 20).
std::unique_ptr<Pass> CreateFuseGeluPass();
// "fuse-swish": Swish (opset >= 24).
std::unique_ptr<Pass> CreateFuseSwishPass();

// The fusion passes available at `opset`, in the order they should run
// (each also checks the model's imported opset, so a pass given a model of
// a lower opset does nothing). The passes erase the chains they replace.
std::vector<std::unique_ptr<Pass>> FusionPasses(int opset);
void AddFusionPasses(PassManager& manager, int opset);

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_PASSES_FUSIONS_H_
