// Reads the IR printer's text (ir/printer.h) back into a Model, so tests can
// state a pass's input graph as text, the way its expected output is
// written:
//
//   ParseModel(R"(
//     graph main(%x: f32[2]) -> (%y: f32[2]) {
//       %t: f32[2] = Identity(%x)
//       %y: f32[2] = Relu(%t)  # relu_0
//     })")
//
// The grammar is the printer's: an optional `model ir_version=N
// opsets={"": 23} producer="NAME VERSION"` header and `meta "k" = "v"`
// lines, one `graph`, then `function DOMAIN::NAME attrs=[...] opsets={...}`
// each followed by its `body`. Whitespace between tokens is free, except that
// a node's `# name` must end the line of its node. A value may be used before
// the node that defines it (unsorted graphs are test inputs too) and from
// subgraphs; every use must be defined somewhere in scope. Long tensors
// printed with a digest ("...") cannot be read back: print with
// PrintOptions{.exact = true}. f16/bf16 literals are rounded through f32.
//
// Not in the text, so not in the parsed model: doc strings, denotations,
// the model's domain and version, Tensor encoding hints, and value_info of
// values no node, input or initializer declares. ParseModel(PrintModel(m,
// {.exact = true})) prints back to the same text (tests/ir/parser_test.cc
// checks it on every libonnx test model and every converted testdata
// bundle).
#ifndef JAX2ONNX_IR_PARSER_H_
#define JAX2ONNX_IR_PARSER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/ir.h"

namespace jax2onnx::ir {

// Errors read `LINE:COL: error: ...` at the offending token.
absl::StatusOr<Model> ParseModel(absl::string_view text);

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_PARSER_H_
