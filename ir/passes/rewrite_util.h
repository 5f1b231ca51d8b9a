// Small helpers shared by the rewriting passes of ir/passes/: reading
// constant int64 inputs and attributes, naming the nodes a pass creates
// after the node they replace, and the single-use test most rewrites need.
#ifndef JAX2ONNX_IR_PASSES_REWRITE_UTIL_H_
#define JAX2ONNX_IR_PASSES_REWRITE_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/ir.h"

namespace jax2onnx::ir {

// A plain ONNX-domain node of this op type.
inline bool IsOp(const Node* node, absl::string_view op_type) {
  return node != nullptr &&
         (node->domain().empty() || node->domain() == "ai.onnx") &&
         node->op_type() == op_type;
}

// The producer of input `i` when it is a plain `op_type` node.
inline Node* ProducerIf(const Node* node, int i, absl::string_view op_type) {
  if (i >= node->num_inputs() || node->input(i) == nullptr) return nullptr;
  Node* p = node->input(i)->producer();
  return IsOp(p, op_type) ? p : nullptr;
}

// The value feeds exactly one node input and is no graph output.
inline bool HasSingleUse(const Value* v) {
  return v->num_uses() == 1 && !v->is_graph_output();
}

// The elements of a constant int64/int32 tensor input (an initializer), or
// nullopt when the input is absent or not such a constant.
std::optional<std::vector<int64_t>> ConstInts(const Value* v);

// An INT attribute, or `fallback` when absent.
int64_t IntAttr(const Node* node, absl::string_view name, int64_t fallback);
// An INTS attribute, or nullopt when absent.
std::optional<std::vector<int64_t>> IntsAttr(const Node* node,
                                             absl::string_view name);

// The static dims of a value's shape (nullopt when unranked or some dim is
// not a known size).
std::optional<std::vector<int64_t>> StaticDims(const Value* v);

// A name for a node a pass creates in place of `from`: `from`'s name with
// its last `/` segment (the op type, by the converter's naming) replaced by
// `op_type`, e.g. eqn12/dot_general/Einsum -> eqn12/dot_general/MatMul.
// Names need not be unique here; node-naming makes them unique at the end.
std::string DerivedNodeName(const Node* from, absl::string_view op_type);

// Inserts a new node before `anchor` in its graph, named after `anchor`,
// with one fresh-named output of type `type` (when given).
Node* InsertNodeBefore(Node* anchor, absl::string_view op_type,
                       std::vector<Value*> inputs, std::vector<Attr> attrs,
                       std::optional<Type> type);

// Adds an int64 1-D initializer to the root graph of `graph`.
Value* AddI64Initializer(Graph* graph, absl::string_view hint,
                         const std::vector<int64_t>& values);

// Axes normalized into [0, rank) (nullopt if one is out of range), sorted.
std::optional<std::vector<int64_t>> NormalizeAxes(std::vector<int64_t> axes,
                                                  int64_t rank);

// Numpy (ONNX multidirectional) broadcast of two shapes; nullopt when it is
// not decidable statically (unknown dims, or different symbols that are not
// a static 1) or the shapes do not broadcast.
std::optional<std::vector<Dim>> BroadcastDims(const std::vector<Dim>& a,
                                              const std::vector<Dim>& b);

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_PASSES_REWRITE_UTIL_H_
