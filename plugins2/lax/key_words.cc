// IR lowering of structural primitives on PRNG keys (slice, squeeze,
// concatenate, select_n, gather, ... with key operands or results;
// jaxpr::MovesKeys): a key array is its key data u32[S, W], so the
// primitive's own lowering runs once per key word on u32[S] values (the
// equation seen with u32 avals of the keys' logical shape) and the words of
// each key result are interleaved back along a trailing axis. The legacy
// pipeline (plugins/lax/key_words.cc) and the interpreter do the same.
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "converter2/lowering_context.h"
#include "jaxpr/prng.h"
#include "jaxpr/status_macros.h"
#include "plugin/registry.h"
#include "plugins2/lax/ir_emitter.h"

namespace jax2onnx::plugins2 {
namespace {

using converter2::Attrs;
using converter2::LoweringContext;

absl::Status LowerOnKeyWords(LoweringContext& ctx, const jaxpr::Eqn& eqn,
                             plugin::IrLoweringFn lower) {
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
  std::vector<std::vector<ir::Value*>> results(num_words);
  for (int w = 0; w < num_words; ++w) {
    for (int k : key_inputs) {
      J2O_ASSIGN_OR_RETURN(ir::Value * keys, ctx.Input(eqn, k));
      ir::Value* word = ctx.Op("Gather", {keys, ctx.ConstI64Scalar(w)},
                               Attrs(ir::Attr::Int("axis", -1)));
      ctx.SetType(word, jaxpr::DType::kU32, words.inputs[k].var->aval.shape);
      ctx.Bind(words.inputs[k].var, word);
    }
    J2O_RETURN_IF_ERROR(lower(ctx, words));
    for (const jaxpr::Var* v : words.outputs) {
      if (v->is_drop) {
        results[w].push_back(nullptr);
        continue;
      }
      J2O_ASSIGN_OR_RETURN(
          ir::Value * value,
          ctx.ValueOf(jaxpr::Atom::OfVar(const_cast<jaxpr::Var*>(v)), nullptr));
      results[w].push_back(value);
    }
  }
  for (size_t o = 0; o < eqn.outputs.size(); ++o) {
    if (eqn.outputs[o]->is_drop) continue;
    if (!jaxpr::IsSupportedKey(eqn.outputs[o]->aval)) {
      J2O_RETURN_IF_ERROR(
          ctx.SetOutput(eqn, static_cast<int>(o), results[0][o]));
      continue;
    }
    std::vector<ir::Value*> parts;
    for (int w = 0; w < num_words; ++w) {
      parts.push_back(ctx.Op("Unsqueeze", {results[w][o], ctx.ConstI64({-1})}));
    }
    J2O_RETURN_IF_ERROR(ctx.SetOutput(
        eqn, static_cast<int>(o),
        ctx.Op("Concat", parts, Attrs(ir::Attr::Int("axis", -1)))));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterKeyWords() {
  plugin::Registry::Global().SetKeyWordsAdapters(nullptr, &LowerOnKeyWords);
}

}  // namespace jax2onnx::plugins2
