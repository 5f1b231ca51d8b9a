// Mutable refs as JAX prints them (jax/_src/state): `Ref{f32[3]}` avals and
// the NDIndexer of get/swap/addupdate (`x[...]`, `x[i,:]`, `x[i:i+2]`),
// decoded from the `idx` text the parser keeps and the index operands it
// appends after the ref (and value). Shared by the type checker and the
// discharge pass (discharge.h).
#ifndef JAX2ONNX_JAXPR_STATE_REF_STATE_H_
#define JAX2ONNX_JAXPR_STATE_REF_STATE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

// The state primitives (sorted): new_ref (`mutable_array` before 0.7.1,
// `array_ref` in 0.7.1), empty_ref, get, swap, addupdate, freeze, free_ref,
// run_state.
const std::vector<std::string>& StatePrimitives();
bool IsStatePrimitive(absl::string_view primitive);

// `Ref{T}` or `Ref<space>{T}` (not Pallas `MemRef<...>{...}`).
bool IsRefAval(const Aval& aval);
// T of `Ref{T}`.
absl::StatusOr<Aval> RefInnerAval(const Aval& ref);
// The aval printed as `text` ("f32[3]"), parsed by the jaxpr parser.
absl::StatusOr<Aval> ParseAvalText(absl::string_view text);
// `Ref{T}` for an array aval T.
Aval MakeRefAval(const Aval& inner);

// One entry of an NDIndexer, per dim of the ref's value.
struct RefDimIndex {
  // An integer indexer (`x[i]`, `x[0]`): selects one element and drops the
  // dim (a non-scalar integer array is a gather, see `operand`'s aval).
  bool is_point = false;
  // Slices: static start, or the eqn operand of a dynamic one (`i:i+2`).
  int64_t start = 0;
  int start_operand = -1;
  // Slices: static size, or the eqn operand of a dynamic one (`:j`).
  // `full`: the whole dim (`:` or `...`), symbolic dims included.
  bool full = false;
  int64_t size = 0;
  int size_operand = -1;
  // Points: the eqn operand holding the index.
  int operand = -1;
};

// Decodes eqn's `idx` param against the ref's value aval; index operands
// start at `first_index_operand`. `...` is every dim in full. Errors name
// the entry.
absl::StatusOr<std::vector<RefDimIndex>> DecodeRefIndex(
    const Eqn& eqn, int first_index_operand, const Aval& value);
// The aval a get with `index` reads (JAX's NDIndexer.get_indexer_shape for
// scalar integer indexers and static-size slices): sliced dims keep their
// place, point dims are dropped. Non-scalar integer indexers are refused.
absl::StatusOr<Aval> IndexedAval(const Eqn& eqn,
                                 const std::vector<RefDimIndex>& index,
                                 const Aval& value);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_STATE_REF_STATE_H_
