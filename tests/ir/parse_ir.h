// The model an IR test states as text (ir/parser.h reads what
// ir/printer.h prints), for the pass, parser and fusion tests:
//   Model m = ParseIr(R"(
//     graph main(%x: f32[2]) -> (%y: f32[2]) {
//       %y: f32[2] = Relu(%x)
//     })");
#ifndef JAX2ONNX_TESTS_IR_PARSE_IR_H_
#define JAX2ONNX_TESTS_IR_PARSE_IR_H_

#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "glog/logging.h"
#include "ir/ir.h"
#include "ir/parser.h"

namespace jax2onnx::ir::pass_test {

inline Model ParseIr(absl::string_view text) {
  absl::StatusOr<Model> m = ParseModel(text);
  CHECK(m.ok()) << m.status();
  return *std::move(m);
}

}  // namespace jax2onnx::ir::pass_test

#endif  // JAX2ONNX_TESTS_IR_PARSE_IR_H_
