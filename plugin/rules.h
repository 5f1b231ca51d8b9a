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

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/jaxpr.h"
#include "plugin/onnx_types.h"
#include "plugin/registry.h"

namespace jax2onnx::plugin {

// The lowering of registrar R's pipeline that runs `Recipe` through an
// emitter Em built from the pipeline's context: for families whose recipes
// take another emitter than R::Emitter (the elementwise family's,
// plugin/elementwise_rules.h).
template <class R, class Em, absl::Status (*Recipe)(Em&)>
absl::Status RunWith(typename R::Context& ctx, const jaxpr::Eqn& eqn) {
  Em e(ctx, eqn);
  return Recipe(e);
}

// What a pipeline's registrar shares with the other's. Emitter is the
// pipeline's neutral emitter over lowering context Context; the registry
// holds the pipeline's LoweringFn and LoweringInfo in the PrimitiveEntry
// fields kLowering and kInfo, registered by Registry member kRegister.
// plugin/complex_wrappers.h and plugin/collectives_rules.h are generic over
// this interface.
template <class Self, class Em, class Ctx, class Fn,
          Fn PrimitiveEntry::*kLowering, LoweringInfo PrimitiveEntry::*kInfo,
          void (Registry::*kRegister)(absl::string_view, Fn, LoweringInfo),
          const char* kPipelineName, const char* kOtherPipelineName>
struct RegistrarBase {
  using Emitter = Em;
  using Context = Ctx;
  using LoweringFn = Fn;
  // For messages ("no legacy lowering; the IR pipeline has one").
  static constexpr const char* kName = kPipelineName;
  static constexpr const char* kOtherName = kOtherPipelineName;
  // The value the context bound to a jaxpr atom (a literal is materialized;
  // `eqn` types an untyped one).
  static absl::StatusOr<typename Em::Value> ValueOf(Ctx& ctx,
                                                    const jaxpr::Atom& atom,
                                                    const jaxpr::Eqn* eqn) {
    return ctx.ValueOf(atom, eqn);
  }
  static LoweringFn LoweringOf(const PrimitiveEntry& entry) {
    return entry.*kLowering;
  }
  static const LoweringInfo& InfoOf(const PrimitiveEntry& entry) {
    return entry.*kInfo;
  }
  static void Register(absl::string_view primitive, LoweringFn fn,
                       LoweringInfo info) {
    (Registry::Global().*kRegister)(primitive, fn, std::move(info));
  }
  // A rule whose recipe runs through the neutral emitter.
  template <absl::Status (*Recipe)(Emitter&)>
  void Neutral(absl::string_view primitive, LoweringInfo info) {
    Register(primitive, &RunWith<Self, Emitter, Recipe>, std::move(info));
  }
};

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_RULES_H_
