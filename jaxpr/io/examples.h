// Further example sets of a bundle (docs/testing.md#several-examples): besides
// input_i / expected_i (example 0), NAME.npz may hold `input_i@K` and
// `expected_i@K` for K = 1, 2, ... — the inputs and JAX's outputs of example
// K, written by tools/export_jaxpr.py (`more_examples=`). Readers that do not
// know the form skip those entries (LoadBundle tolerates unknown names), so
// such an npz stays a valid bundle for them. `check` runs every example.
#ifndef JAX2ONNX_JAXPR_IO_EXAMPLES_H_
#define JAX2ONNX_JAXPR_IO_EXAMPLES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/io/npy.h"

namespace jax2onnx::jaxpr {

// Splits `input_0@2` into base "input_0" and example 2. False for names
// without `@`, a base other than input_i / expected_i, or an example index
// that is not a canonical decimal >= 1.
bool SplitExampleEntryName(absl::string_view name, std::string* base,
                           int* example);

// Groups the `@K` entries of `arrays` by example: element K-1 holds example
// K's entries under their base names (input_i, expected_i), ready for
// SetBundleInputs. Examples must be numbered 1..N without gaps; `what` names
// the source in errors. An input_/expected_ entry with a malformed `@`
// suffix (`input_0@0`) is an error; other names are ignored.
absl::StatusOr<std::vector<NamedArrays>> GroupMoreExamples(
    const NamedArrays& arrays, absl::string_view what);

// Reads the `@K` entries of the bundle's npz (none when it has no npz) and
// groups them. Only those entries are read, each refused before it is
// inflated when its header declares more bytes than the static aval of its
// invar/outvar holds (as LoadBundle guards the others).
absl::StatusOr<std::vector<NamedArrays>> ReadMoreExamples(const Bundle& bundle);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_IO_EXAMPLES_H_
