// A stable, readable text form of the IR for tests, dumps and diffs:
//
//   graph main(%x: f32[B,3], %w: f32[3]) -> (%y: f32[B,3]) {
//     init %w: f32[3] = {1, 2, 3}
//     %t: f32[B,3] = Relu(%x)
//     %y: f32[B,3] = Add(%t, %w)  # add_0
//   }
//
// Values are `%name` (`%"name"`, C-escaped, when the name holds a space or
// punctuation of this syntax), absent optional inputs/outputs `_`,
// attributes are sorted by name, initializers by name, nodes in list order;
// a node name (if any) follows as a `#` comment. A float attribute always
// shows a `.` or an exponent (`1.0`), so it reads back as a float; an empty
// list names its kind (`ints []`), a reference attribute its type
// (`@alpha: float`). The same IR always prints the same text, and
// ir/parser.h reads it back.
#ifndef JAX2ONNX_IR_PRINTER_H_
#define JAX2ONNX_IR_PRINTER_H_

#include <string>

#include "absl/strings/string_view.h"
#include "ir/ir.h"

namespace jax2onnx::ir {

struct PrintOptions {
  // Every tensor element (no "..." digest) and floating-point values with
  // the digits that read back as the same number (NaN payloads aside): the
  // text ParseModel turns into an equal model. The default shows six
  // significant digits and the first elements of long tensors.
  bool exact = false;
};

// Model header line(s), the main graph, then the functions in order.
std::string PrintModel(const Model& model, const PrintOptions& options = {});
// A graph with its subgraphs nested in attribute values.
std::string PrintGraph(const Graph& graph, const PrintOptions& options = {});
// One node (its subgraphs, if any, span further lines), without indentation
// and without a trailing newline.
std::string PrintNode(const Node& node, const PrintOptions& options = {});
std::string PrintFunction(const Function& function,
                          const PrintOptions& options = {});
// `f32[2,2]{1, 2, 3, 4}`; long tensors show their first elements, count and
// an FNV-1a digest of the bytes.
std::string PrintTensor(const Tensor& tensor, const PrintOptions& options = {});
// `name` as the printer writes value, graph and function names: as is when
// it is plain (no space, control character, non-ASCII byte or any of
// `,(){}[]"=#%:@\\`), else quoted and C-escaped.
bool IsPlainName(absl::string_view name);
// An attribute kind as `@ref: kind` and typed empty lists (`ints []`) print
// it: "float", "ints", "types", ... ("undefined" for others).
const char* AttrKindName(AttrType type);
std::string PrintName(absl::string_view name);
std::string PrintAttr(const Attr& attr, const PrintOptions& options = {});

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_PRINTER_H_
