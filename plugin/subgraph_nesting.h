// Keeps the protobuf nesting of a finished model (both pipelines) within
// what ONNX Runtime parses.
//
// ONNX Runtime reads a model with protobuf's default recursion limit of 100
// nested messages. Every level of control flow nests three (NodeProto,
// AttributeProto, GraphProto), so a program with more than about 30 nested
// conds/whiles/scans converts to a model ORT refuses ("Protobuf parsing
// failed"). BoundSubgraphNesting moves every node with subgraphs that sits
// `max_levels` levels deep into a model-local function of its own
// (FunctionProto lives at ModelProto level, so the call resets the depth):
//
//   If(p) { ... }  at level max_levels   becomes
//   jax2onnx.nesting.nested_If_K(p, captured...)  calling
//   function nested_If_K(p, captured...) { If(p) { ... } }
//
// The function's inputs are the node's own inputs and every outer value its
// subgraphs read (ONNX functions cannot see outer scopes), under the same
// names, so the moved node and its subgraphs are unchanged; its outputs are
// the node's outputs. This is exact: ONNX Runtime inlines the function back
// into the graph. A model with no node that deep is returned untouched (byte
// identical), and the moved bodies are visited again, so any depth the
// parser accepts ends up bounded.
#ifndef JAX2ONNX_PLUGIN_SUBGRAPH_NESTING_H_
#define JAX2ONNX_PLUGIN_SUBGRAPH_NESTING_H_

#include "onnx/onnx_pb.h"

namespace jax2onnx::plugin {

// The function domain of the moved nodes (imported at version 1 only when
// some node moved).
inline constexpr char kNestingDomain[] = "jax2onnx.nesting";

// Subgraph levels kept inline: a node with subgraphs whose own graph is this
// many levels below the main graph (or a function body) is moved. 16 levels
// are about 50 nested messages, half of ORT's limit, leaving room for the
// value types and tensors at the leaves.
inline constexpr int kMaxInlineSubgraphLevels = 16;

// Moves nodes as described above. Returns how many were moved.
int BoundSubgraphNesting(onnx::ModelProto& model,
                         int max_levels = kMaxInlineSubgraphLevels);

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_SUBGRAPH_NESTING_H_
