// Generated jaxpr programs in JAX's printed layout, for the conversion
// benchmarks (bench/convert_bench.cc, bench/complexity_bench.cc) and the
// complexity regression test (bench/complexity_test.cc). Each generator
// takes a target number of equations and returns a program of about that
// size whose shape stresses one way a converter can be superlinear: deep
// chains (recursion depth), DAG diamonds (exponential re-evaluation), wide
// fan-out (use lists), many outputs, nesting, long loop bodies, many
// constants. Weights are constvars supplied in memory (what an npz holds).
#ifndef JAX2ONNX_BENCH_JAXPR_PROGRAMS_H_
#define JAX2ONNX_BENCH_JAXPR_PROGRAMS_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "jaxpr/array.h"

namespace jax2onnx::bench {

struct Generated {
  std::string text;                  // the jaxpr
  int num_eqns = 0;                  // equations, nested ones included
  std::vector<jaxpr::Array> consts;  // one per constvar, in order
  std::set<std::string> primitives;
};

// One program shape of the suite.
struct ProgramShape {
  const char* name;
  const char* description;
  Generated (*generate)(int target_eqns);
};

// Layers of dot_general + bias (broadcast_in_dim, add) + tanh/logistic.
Generated DeepMlp(int target_eqns);
// Attention blocks with softmax, residual, mean-centering, SiLU MLP.
Generated TransformerStack(int target_eqns);

// The parse benchmark's program (bench/parse_bench.cc): a chain of
// `num_eqns` add / mul by a typed literal / reduce_precision / transpose /
// tanh on f32[8,16], with a nested `jit` every 100 equations.
std::string ParseMix(int num_eqns);

// The complexity suite, in the order docs/performance.md lists it.
const std::vector<ProgramShape>& ComplexityShapes();
// The shape called `name`, or nullptr.
const ProgramShape* FindShape(const std::string& name);

// A chain of `depth` scalar `add`s of a running sum with the input, then a
// `div` and a `mul` (the form that overflowed the stack).
Generated DeepAddChain(int depth);
// `v = add v v` `n` times on a scalar, then a `div` and a `mul` (the
// matchers asking whether a divisor's operand is a constant walked the
// chain: 2^n steps).
Generated AddDiamonds(int n);
// `n` unrolled Newton steps of the reciprocal x = x * (2 - a * x), then
// a / x and a `mul` (x as a divisor was evaluated as a possible constant:
// 2^n steps).
Generated NewtonReciprocal(int n);

}  // namespace jax2onnx::bench

#endif  // JAX2ONNX_BENCH_JAXPR_PROGRAMS_H_
