// Kernel families of the reference interpreter. Registration is explicit
// (called once from the registry in evaluator.cc) so the linker never drops
// a family.
#ifndef JAX2ONNX_JAXPR_EVAL_KERNELS_H_
#define JAX2ONNX_JAXPR_EVAL_KERNELS_H_

namespace jax2onnx::jaxpr {

void RegisterElementwiseKernels();   // eval/elementwise.cc
void RegisterShapeKernels();         // eval/shape_ops.cc
void RegisterReductionKernels();     // eval/reductions.cc
void RegisterLinalgKernels();        // eval/linalg.cc (dot, conv, windows)
void RegisterIndexingKernels();      // eval/indexing.cc (gather, scatter, ...)
void RegisterSortKernels();          // eval/sort.cc
void RegisterControlFlowKernels();   // eval/control_flow.cc
void RegisterSpecialKernels();       // eval/special.cc (igamma, zeta, ...)
void RegisterCollectiveKernels();    // eval/collectives.cc (shard_map, psum)
void RegisterFftKernels();           // eval/fft.cc
void RegisterRandomKernels();        // eval/random.cc (threefry PRNG)

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_EVAL_KERNELS_H_
