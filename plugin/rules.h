// Rule tables stated once for both pipelines (issue 29). A family of
// lowerings written against the neutral emitter (plugin/emit.h) states its
// rules -- primitive, recipe, ONNX ops, minimum opset, notes -- once, as a
// function template over a pipeline's registrar:
//
//   template <class R>
//   void SortRules(R& r) {
//     using E = typename R::Emitter;
//     r.template Neutral<&LowerSort<E>>("sort", {{"TopK", ...}, kMinOpset,
//                                                "notes"});
//   }
//
// Each pipeline has one registrar (plugins/lax/legacy_emitter.h's
// LegacyRegistrar, plugins2/lax/ir_emitter.h's IrRegistrar): `Emitter` is its
// neutral emitter and `Neutral<Recipe>(primitive, info)` registers the recipe
// behind its adapter. plugins*/register.cc run every table through their
// registrar, so the pipelines cannot disagree on a rule.
#ifndef JAX2ONNX_PLUGIN_RULES_H_
#define JAX2ONNX_PLUGIN_RULES_H_

#include "plugin/onnx_types.h"
#include "plugin/registry.h"

#endif  // JAX2ONNX_PLUGIN_RULES_H_
