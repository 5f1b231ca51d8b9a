// State discharge: rewrites the ref programs JAX prints (new_ref, get, swap,
// addupdate, freeze, empty_ref, free_ref, run_state) into pure jaxprs in
// which every ref is an SSA value, the way jax/_src/state/discharge.py does:
//
//   b:Ref{T} = new_ref a        the ref's current value is a
//   empty_ref[ty=T]             zeros of T (JAX leaves the contents
//                               unspecified; reading before writing is the
//                               program's own undefined behaviour)
//   y <- b[idx]                 y = the current value indexed: the whole value,
//                               or dynamic_slice (+ squeeze for integer
//                               indexers) with JAX's clamped start indices
//   y, b[idx] <- b[idx], v      y as above; the current value becomes
//                               dynamic_update_slice(current, v, starts)
//   b[idx] += v                 current = dynamic_update_slice(current,
//                               dynamic_slice(...) + v, starts)
//   c = freeze b                c = the current value
//   free_ref b                  dropped
//   run_state[jaxpr=...]        its body inlined with the refs it takes bound
//                               to the operands; results = final ref values
//   cond / while / scan taking  the refs' values threaded through the bodies,
//   refs as operands            as JAX's discharge rules for them do: cond
//                               branches return the final values as extra
//                               results; refs among while (cond or body) and
//                               scan consts become the first carries
//
// Refused with a located error: a ref as a program input or output, a ref
// passed to any other equation (e.g. a jit body taking a ref), a ref in a
// while/scan carry or scanned over, a ref passed twice to one equation,
// integer-array (gather) indexers, slices of dynamic size, uninitialized
// run_state refs, Pallas `MemRef` avals. A JAX 0.11 scan (ft_in/ft_out)
// carrying refs is rewritten with num_consts/num_carry.
#ifndef JAX2ONNX_JAXPR_STATE_DISCHARGE_H_
#define JAX2ONNX_JAXPR_STATE_DISCHARGE_H_

#include "absl/status/status.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

// True when any jaxpr of the file binds a state primitive.
bool UsesState(const JaxprFile& file);

// Discharges every jaxpr of `file` in place (main, shared and nested
// bodies). A file without state primitives is left untouched. Errors are
// `FILE:LINE:COL: error: PRIMITIVE: ...`.
absl::Status DischargeState(JaxprFile* file);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_STATE_DISCHARGE_H_
