// Legacy lowering of structural primitives on PRNG keys (slice, squeeze,
// concatenate, select_n, gather, ... with key operands or results;
// jaxpr::MovesKeys): a key array is its key data u32[S, W], so the
// primitive's own lowering runs once per key word on u32[S] values (the
// equation seen with u32 avals of the keys' logical shape) and the words of
// each key result are interleaved back along a trailing axis. The
// interpreter does the same (jaxpr/eval/evaluator.cc RunOnKeyWords).
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "converter/state.h"
#include "jaxpr/prng.h"
#include "jaxpr/status_macros.h"
#include "onnx/onnx_pb.h"
#include "plugin/registry.h"
#include "plugins/lax/legacy_emitter.h"

namespace jax2onnx::plugins {
namespace {

using converter::State;
using converter::ValueInfo;

absl::Status LowerOnKeyWords(State& s, const jaxpr::Eqn& eqn,
                             plugin::LegacyLoweringFn lower) {
  J2O_RETURN_IF_ERROR(jaxpr::CheckMovesWholeKeys(eqn));
  const int num_words = jaxpr::MovedKeyWords(eqn);
  jaxpr::Eqn words = eqn;
  std::vector<std::unique_ptr<jaxpr::Var>> temps;
  auto word_var = [&](const jaxpr::Var* v) {
    temps.push_back(std::make_unique<jaxpr::Var>(*v));
    temps.back()->aval.dtype = jaxpr::DType::kU32;
    temps.back()->aval.dtype_name = "u32";
    return temps.back().get();
  };
  std::vector<int> key_inputs;
  for (size_t k = 0; k < eqn.inputs.size(); ++k) {
    const jaxpr::Atom& a = eqn.inputs[k];
    if (a.is_literal() || !jaxpr::IsSupportedKey(a.var->aval)) continue;
    key_inputs.push_back(static_cast<int>(k));
    words.inputs[k].var = word_var(a.var);
  }
  for (jaxpr::Var*& v : words.outputs) {
    if (jaxpr::IsSupportedKey(v->aval)) v = word_var(v);
  }
  std::vector<std::vector<std::string>> results(num_words);
  for (int w = 0; w < num_words; ++w) {
    for (int k : key_inputs) {
      J2O_ASSIGN_OR_RETURN(std::string keys, s.Input(eqn, k));
      s.Bind(words.inputs[k].var,
             s.AddNode("Gather", {keys, s.ConstI64Scalar(w)},
                       ValueInfo::UnknownShape(onnx::TensorProto::UINT32),
                       {converter::AttrInt("axis", -1)}));
    }
    J2O_RETURN_IF_ERROR(lower(s, words));
    for (const jaxpr::Var* v : words.outputs) {
      if (v->is_drop) {
        results[w].emplace_back();
        continue;
      }
      J2O_ASSIGN_OR_RETURN(
          std::string name,
          s.ValueOf(jaxpr::Atom::OfVar(const_cast<jaxpr::Var*>(v)), nullptr));
      results[w].push_back(name);
    }
  }
  const std::string last = s.ConstI64({-1});
  for (size_t o = 0; o < eqn.outputs.size(); ++o) {
    if (eqn.outputs[o]->is_drop) continue;
    if (!jaxpr::IsSupportedKey(eqn.outputs[o]->aval)) {
      J2O_RETURN_IF_ERROR(s.SetOutput(eqn, static_cast<int>(o), results[0][o]));
      continue;
    }
    std::vector<std::string> parts;
    for (int w = 0; w < num_words; ++w) {
      parts.push_back(
          s.AddNode("Unsqueeze", {results[w][o], last},
                    ValueInfo::UnknownShape(onnx::TensorProto::UINT32)));
    }
    J2O_RETURN_IF_ERROR(s.SetOutput(
        eqn, static_cast<int>(o),
        s.AddNode("Concat", parts,
                  ValueInfo::UnknownShape(onnx::TensorProto::UINT32),
                  {converter::AttrInt("axis", -1)})));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterKeyWords() {
  plugin::Registry::Global().SetKeyWordsAdapters(&LowerOnKeyWords, nullptr);
}

}  // namespace jax2onnx::plugins
