// Helpers for the tests of one IR pass each (tests/ir/<pass>_test.cc): the
// graph before is stated as IR text (ParseIr) or built by hand with these,
// the pass runs with the verifier around it and the cleanup passes after,
// and ONNX Runtime must accept the model before and after
// (tests/ir/ir_ort_accepts.h).
#ifndef JAX2ONNX_TESTS_IR_PASS_TEST_UTIL_H_
#define JAX2ONNX_TESTS_IR_PASS_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "glog/logging.h"
#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/pass.h"
#include "ir/passes/passes.h"
#include "tests/ir/ir_ort_accepts.h"
#include "tests/ir/parse_ir.h"

namespace jax2onnx::ir::pass_test {

using TP = onnx::TensorProto;

inline Type T(int dtype, Shape s) { return Type::Tensor(dtype, s); }
inline Type F32(Shape s) { return T(TP::FLOAT, s); }

// Appends `out: type = op(ins) {attrs}` to `g`.
inline Node* Op(Graph& g, absl::string_view op, std::vector<Value*> ins,
                std::string out, Type type, std::vector<Attr> attrs = {}) {
  Node* n =
      g.Append(Node::Create("", op, ins, {std::move(out)}, std::move(attrs)));
  n->output(0)->SetType(type);
  return n;
}

// One attribute as the attribute list Op takes (Attr is move-only).
inline std::vector<Attr> A(Attr a) {
  std::vector<Attr> v;
  v.push_back(std::move(a));
  return v;
}

// Appends a node with outputs `outs`, each of type `type`.
inline Node* AddNode(Graph& g, absl::string_view op, std::vector<Value*> ins,
                     std::vector<std::string> outs, Type type = F32({2})) {
  Node* n = g.Append(Node::Create("", op, ins, std::move(outs)));
  for (Value* v : n->outputs()) v->SetType(type);
  return n;
}

// A 1-D f32 tensor.
inline Tensor Floats(std::vector<float> v) {
  return Tensor::FromVector<float>(TP::FLOAT, {static_cast<int64_t>(v.size())},
                                   v);
}

// A typed initializer.
inline Value* Init(Graph& g, const std::string& name, Tensor t) {
  std::vector<Dim> dims(t.dims().begin(), t.dims().end());
  const int dtype = t.dtype();
  Value* v = *g.AddInitializer(name, std::move(t));
  v->SetType(T(dtype, Shape(dims)));
  return v;
}

// A 1-D int64 initializer (axes, shapes, slice bounds).
inline Value* I64(Graph& g, const std::string& name, std::vector<int64_t> v) {
  return Init(g, name,
              Tensor::FromVector<int64_t>(TP::INT64,
                                          {static_cast<int64_t>(v.size())}, v));
}

// Runs `pass` once (with the verifier around it), then the cleanup passes;
// returns whether `pass` changed the model. ORT must accept the model
// after, and before unless `input_is_valid` is false (node-naming's input
// has the duplicate node names ORT refuses and the pass removes).
inline bool RunPass(absl::string_view pass, Model& m,
                    bool input_is_valid = true) {
  if (input_is_valid) EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  PassManagerOptions options;
  options.verify_each_pass = true;
  PassManager manager(options);
  CHECK(manager.AddByName(pass).ok()) << pass;
  absl::StatusOr<bool> changed = manager.Run(m);
  CHECK(changed.ok()) << changed.status();
  PassManager cleanup(options);
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(CreateDeadNodeEliminationPass());
  passes.push_back(CreateUnusedInitializerPruningPass());
  cleanup.AddFixpoint("cleanup", std::move(passes));
  CHECK(cleanup.Run(m).ok());
  EXPECT_IR_MODEL_ORT_ACCEPTS(m);
  return *changed;
}

// Runs the pass named `name` alone: no verifier, no cleanup, no ORT gate
// (the tests of the cleanup passes and of the verifier itself use it).
inline bool RunPassAlone(absl::string_view name, Model& m) {
  std::unique_ptr<Pass> pass = CreatePass(name);
  CHECK(pass != nullptr) << name;
  absl::StatusOr<bool> changed = pass->Run(m);
  CHECK(changed.ok()) << changed.status();
  for (Graph* g : AllGraphs(m)) g->ReleaseErasedNodes();
  return *changed;
}

}  // namespace jax2onnx::ir::pass_test

#endif  // JAX2ONNX_TESTS_IR_PASS_TEST_UTIL_H_
