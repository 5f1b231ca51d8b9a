// The reference interpreter: executes a ClosedJaxpr directly with JAX/XLA
// semantics, never through ONNX. It is the test oracle, so every kernel is
// written to be obviously right rather than fast.
#ifndef JAX2ONNX_JAXPR_EVAL_EVALUATOR_H_
#define JAX2ONNX_JAXPR_EVAL_EVALUATOR_H_

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "jaxpr/array.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/mesh.h"

namespace jax2onnx::jaxpr {

enum class PartialSumRounding { kNone, kNearest, kUpward, kDownward };

// `x` rounded to an f32 value in `mode` (kNone: unchanged).
inline double RoundPartialSum(double x, PartialSumRounding mode) {
  if (mode == PartialSumRounding::kNone || !std::isfinite(x)) return x;
  float f = static_cast<float>(x);
  if (mode == PartialSumRounding::kUpward && static_cast<double>(f) < x) {
    f = std::nextafter(f, std::numeric_limits<float>::infinity());
  } else if (mode == PartialSumRounding::kDownward &&
             static_cast<double>(f) > x) {
    f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  }
  return f;
}

struct EvalOptions {
  // Values of `[...]` literals (npz literal_k), indexed by elided_index.
  const std::vector<Array>* elided_literals = nullptr;
  // Names the jaxpr's file in type errors (`FILE:LINE:COL: error: ...`).
  std::string filename = "<jaxpr>";
  // How dot_general and reduce_sum on f32 round their partial sums. The
  // default (kNone) accumulates in double and rounds once: the most
  // accurate f32 answer. The others round every partial sum to f32, in
  // sequential order, to nearest or toward +/- infinity: running the
  // program with upward and with downward rounding brackets each sum and
  // shows how far f32 accumulation can move the outputs. check's noise bound
  // (api/output_compare.h) uses them.
  PartialSumRounding f32_partial_sums = PartialSumRounding::kNone;
  // The counter mode of random_split/random_bits (jaxpr/prng.h): JAX's
  // jax_threefry_partitionable, true since JAX 0.5. Callers take it from
  // jaxpr::ThreefryModeOf (the bundle's header, else their option).
  bool threefry_partitionable = true;
  // Sizes of mesh axes a printed shard_map mesh does not show (`--mesh`).
  std::vector<MeshAxis> mesh_axis_sizes;
};

// Runs `jaxpr` on constvar values and inputs after type checking it
// (jaxpr/typecheck/typecheck.h): an ill-typed jaxpr is an error, never
// evaluated. Symbolic dims are bound from the input shapes. Errors name the primitive, equation index and source
// line; unsupported primitives are named.
absl::StatusOr<std::vector<Array>> Evaluate(const ClosedJaxpr& jaxpr,
                                            absl::Span<const Array> consts,
                                            absl::Span<const Array> inputs,
                                            const EvalOptions& options = {});

class Interpreter;

// What a kernel sees of the equation it computes.
class EvalContext {
 public:
  EvalContext(const Eqn& eqn, const Interpreter& interp,
              const DimBindings& bindings)
      : eqn_(eqn), interp_(interp), bindings_(bindings) {}

  const Eqn& eqn() const { return eqn_; }
  const Params& params() const { return eqn_.params; }
  const DimBindings& bindings() const { return bindings_; }
  // EvalOptions::f32_partial_sums of this run.
  PartialSumRounding f32_partial_sums() const;
  // EvalOptions::threefry_partitionable of this run.
  bool threefry_partitionable() const;
  // EvalOptions::mesh_axis_sizes of this run.
  const std::vector<MeshAxis>& mesh_axis_sizes() const;
  int num_outputs() const { return static_cast<int>(eqn_.outputs.size()); }
  // The declared dtype / concrete shape of output i (symbols bound).
  DType OutputDType(int i) const { return eqn_.outputs[i]->aval.dtype; }
  absl::StatusOr<std::vector<int64_t>> OutputShape(int i) const {
    return eqn_.outputs[i]->aval.ConcreteShape(bindings_);
  }
  // A zero-filled array of output i's type.
  absl::StatusOr<Array> NewOutput(int i) const;
  // An integer-tuple param whose entries may be symbolic (`slice_sizes=(b,
  // 1)` under shape polymorphism): a symbol bound in this run, or a printed
  // dim of one of the equation's operand/result avals, evaluates with the
  // bindings; other entries must be integers.
  absl::StatusOr<std::vector<int64_t>> IntListParam(
      absl::string_view key) const;
  // The same for an integer tuple nested in param `key` (an entry of
  // pad's `padding_config=((lo, hi, interior), ...)`).
  absl::StatusOr<std::vector<int64_t>> IntTupleValue(
      const ParamValue& tuple, absl::string_view key) const;

  // Evaluates a nested jaxpr (pjit bodies, cond branches, scan bodies, ...)
  // with the same symbol bindings. `consts` feed its constvars.
  absl::StatusOr<std::vector<Array>> Call(const ClosedJaxpr& jaxpr,
                                          absl::Span<const Array> consts,
                                          absl::Span<const Array> args) const;
  // Runs the kernel of another equation (one of a nested jaxpr stepped
  // through by a kernel, e.g. shard_map's per-device body) on `inputs`.
  absl::StatusOr<std::vector<Array>> EvalEqn(
      const Eqn& eqn, absl::Span<const Array> inputs) const;
  // The value of literal operand `atom` of `eqn`.
  absl::StatusOr<Array> LiteralOperand(const Atom& atom, const Eqn& eqn) const;

 private:
  const Eqn& eqn_;
  const Interpreter& interp_;
  const DimBindings& bindings_;
};

// A kernel computes all outputs of one equation from its input arrays.
using EvalKernel = absl::StatusOr<std::vector<Array>> (*)(
    const EvalContext& ctx, absl::Span<const Array> inputs);

// Registers (or replaces) the kernel for a primitive name.
void RegisterEvalKernel(const std::string& primitive, EvalKernel kernel);
// Sorted names of primitives with a kernel.
std::vector<std::string> EvalPrimitives();

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_EVAL_EVALUATOR_H_
