// A stable, readable text form of the IR for tests, dumps and diffs:
//
//   graph main(%x: f32[B,3], %w: f32[3]) -> (%y: f32[B,3]) {
//     init %w: f32[3] = {1, 2, 3}
//     %t: f32[B,3] = Relu(%x)
//     %y: f32[B,3] = Add(%t, %w)  # add_0
//   }
//
// Values are `%name`, absent optional inputs/outputs `_`, attributes are
// sorted by name, initializers by name, nodes in list order; a node name
// (if any) follows as a `#` comment. The same IR always prints the same text.
#ifndef JAX2ONNX_IR_PRINTER_H_
#define JAX2ONNX_IR_PRINTER_H_

#include <string>

#include "ir/ir.h"

namespace jax2onnx::ir {

// Model header line(s), the main graph, then the functions in order.
std::string PrintModel(const Model& model);
// A graph with its subgraphs nested in attribute values.
std::string PrintGraph(const Graph& graph);
// One node (its subgraphs, if any, span further lines), without indentation
// and without a trailing newline.
std::string PrintNode(const Node& node);
std::string PrintFunction(const Function& function);
// `f32[2,2]{1, 2, 3, 4}`; long tensors show their first elements, count and
// an FNV-1a digest of the bytes.
std::string PrintTensor(const Tensor& tensor);
std::string PrintAttr(const Attr& attr);

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_PRINTER_H_
