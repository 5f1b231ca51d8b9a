// `expect_graph` checks: structural expectations on a converted ONNX model,
// written as bundle header lines (`# expect_graph: Transpose -> Conv -> Relu`)
// and checked by the corpus runner (docs/testing.md has the grammar).
//
// One line holds one expectation:
//   PATH                 `Op[:SHAPE] -> Op[:SHAPE] -> ...`: some chain of
//                        main-graph nodes with these op types, each node
//                        consuming an output of the previous one; SHAPE
//                        constrains the node's first output.
//   exact PATH           PATH, and the main graph has no other node.
//   counts Op=N ...      the main graph has exactly N nodes of each Op.
//   must_absent Op ...   no node of these op types, in the main graph or any
//                        subgraph or function.
//   no_unused_inputs     every graph input is consumed by some node (or is
//                        itself a graph output).
// SHAPE is `AxBxC` (dims split on `x`) or `[A,B,C]` (dims split on `,`, for
// symbol names containing `x`); a dim is an integer, a symbol name matching
// the ONNX dim_param exactly, or `?` (anything); `scalar` means rank 0.
#ifndef JAX2ONNX_API_EXPECT_GRAPH_H_
#define JAX2ONNX_API_EXPECT_GRAPH_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::api {

struct PathStep {
  std::string op_type;
  bool has_shape = false;
  std::vector<std::string> dims;  // "3", "B", "?"; empty with has_shape: rank 0
};

struct GraphExpectation {
  enum class Kind { kPath, kExactPath, kCounts, kMustAbsent, kNoUnusedInputs };
  Kind kind = Kind::kPath;
  std::string text;                                 // the line, for messages
  std::vector<PathStep> path;                       // kPath, kExactPath
  std::vector<std::pair<std::string, int>> counts;  // kCounts
  std::vector<std::string> absent_ops;              // kMustAbsent
};

// Parses one `expect_graph` header value. Errors quote the line and say what
// is malformed.
absl::StatusOr<GraphExpectation> ParseGraphExpectation(absl::string_view line);

// OK when `model` meets the expectation; otherwise FailedPrecondition whose
// message says what was expected and what was found (the op histogram, the
// longest matching prefix of a path and the shapes seen).
absl::Status CheckGraphExpectation(const onnx::ModelProto& model,
                                   const GraphExpectation& expectation);

// Parses and checks every line; the first failure is returned.
absl::Status CheckGraphExpectations(const onnx::ModelProto& model,
                                    const std::vector<std::string>& lines);

// `Add=2 Mul=1` (op types sorted), for messages.
std::string OpHistogram(const onnx::GraphProto& graph);

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_EXPECT_GRAPH_H_
