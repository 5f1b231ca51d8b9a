// Legacy lowerings of the elementwise family (lax arithmetic and math).
// Primitives that map 1:1 onto an ONNX op share LowerOneToOne and a table;
// anything needing dtype-specific handling gets its own short function.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "converter/state.h"
#include "jaxpr/status_macros.h"
#include "plugin/registry.h"
#include "plugins/register.h"

namespace jax2onnx::plugins {
namespace {

using converter::State;
using converter::ValueInfo;

struct OneToOne {
  const char* primitive;
  const char* onnx_op;
};

// Primitives whose JAX semantics equal the ONNX op's for every dtype JAX
// allows them on (integer overflow wraps in both; broadcasting of scalar
// literals is numpy-style in both).
constexpr OneToOne kOneToOne[] = {
    {"add", "Add"}, {"sub", "Sub"},   {"mul", "Mul"},
    {"exp", "Exp"}, {"tanh", "Tanh"},
};

const OneToOne* FindOneToOne(absl::string_view primitive) {
  for (const OneToOne& entry : kOneToOne) {
    if (primitive == entry.primitive) return &entry;
  }
  return nullptr;
}

// ONNX has no complex arithmetic; refuse instead of emitting an op ORT
// rejects later.
absl::Status RefuseComplex(const jaxpr::Eqn& eqn) {
  const jaxpr::DType dtype = State::OutAval(eqn, 0).dtype;
  if (jaxpr::IsComplex(dtype)) {
    return absl::UnimplementedError(
        absl::StrCat("'", eqn.primitive, "' on ", jaxpr::ShortName(dtype),
                     ": ONNX has no complex arithmetic"));
  }
  return absl::OkStatus();
}

// Applies `onnx_op` to all operands, producing output 0.
absl::Status EmitSameOp(State& s, const jaxpr::Eqn& eqn,
                        absl::string_view onnx_op) {
  std::vector<std::string> inputs;
  for (int i = 0; i < static_cast<int>(eqn.inputs.size()); ++i) {
    J2O_ASSIGN_OR_RETURN(std::string in, s.Input(eqn, i));
    inputs.push_back(std::move(in));
  }
  J2O_ASSIGN_OR_RETURN(ValueInfo out, State::OutInfo(eqn, 0));
  return s.SetOutput(eqn, 0, s.AddNode(onnx_op, std::move(inputs), out));
}

absl::Status LowerOneToOne(State& s, const jaxpr::Eqn& eqn) {
  const OneToOne* entry = FindOneToOne(eqn.primitive);
  if (entry == nullptr) {
    return absl::InternalError(absl::StrCat("LowerOneToOne is registered for '",
                                            eqn.primitive,
                                            "', which is not in its table"));
  }
  J2O_RETURN_IF_ERROR(RefuseComplex(eqn));
  return EmitSameOp(s, eqn, entry->onnx_op);
}

// ONNX Neg is signed-only; on unsigned ints JAX's neg wraps, i.e. 0 - x.
absl::Status LowerNeg(State& s, const jaxpr::Eqn& eqn) {
  J2O_RETURN_IF_ERROR(RefuseComplex(eqn));
  const jaxpr::DType dtype = State::OutAval(eqn, 0).dtype;
  if (!jaxpr::IsUnsignedInt(dtype)) return EmitSameOp(s, eqn, "Neg");
  J2O_ASSIGN_OR_RETURN(std::string x, s.Input(eqn, 0));
  J2O_ASSIGN_OR_RETURN(std::string zero, s.ConstScalar(dtype, 0));
  J2O_ASSIGN_OR_RETURN(ValueInfo out, State::OutInfo(eqn, 0));
  return s.SetOutput(eqn, 0, s.AddNode("Sub", {zero, x}, out));
}

// ONNX Max/Min reject bool, where JAX's max/min are logical or/and.
absl::Status LowerMax(State& s, const jaxpr::Eqn& eqn) {
  J2O_RETURN_IF_ERROR(RefuseComplex(eqn));
  const bool is_bool = State::OutAval(eqn, 0).dtype == jaxpr::DType::kBool;
  return EmitSameOp(s, eqn, is_bool ? "Or" : "Max");
}

absl::Status LowerMin(State& s, const jaxpr::Eqn& eqn) {
  J2O_RETURN_IF_ERROR(RefuseComplex(eqn));
  const bool is_bool = State::OutAval(eqn, 0).dtype == jaxpr::DType::kBool;
  return EmitSameOp(s, eqn, is_bool ? "And" : "Min");
}

}  // namespace

void RegisterElementwise() {
  plugin::Registry& registry = plugin::Registry::Global();
  for (const OneToOne& entry : kOneToOne) {
    registry.RegisterLegacy(entry.primitive, &LowerOneToOne,
                            {{entry.onnx_op}, 17, "complex refused"});
  }
  registry.RegisterLegacy(
      "neg", &LowerNeg,
      {{"Neg", "Sub"}, 17, "unsigned ints as 0 - x; complex refused"});
  registry.RegisterLegacy(
      "max", &LowerMax,
      {{"Max", "Or"},
       17,
       "bool as Or; NaN propagates like XLA (ONNX Max does); complex "
       "refused"});
  registry.RegisterLegacy(
      "min", &LowerMin,
      {{"Min", "And"},
       17,
       "bool as And; NaN propagates like XLA (ONNX Min does); complex "
       "refused"});
}

}  // namespace jax2onnx::plugins
