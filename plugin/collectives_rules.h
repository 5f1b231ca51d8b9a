// The rule table of shard_map, the collectives outside it and the refused
// multi-device primitives, for both pipelines (plugin/rules.h). The recipes
// (plugin/collectives_plan.h) drive a MeshDriver: the pipeline's neutral
// emitter plus the variable binding and nested lowering the mesh unroller
// needs.
#ifndef JAX2ONNX_PLUGIN_COLLECTIVES_RULES_H_
#define JAX2ONNX_PLUGIN_COLLECTIVES_RULES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/mesh.h"
#include "plugin/collectives_plan.h"
#include "plugin/conversion_checks.h"
#include "plugin/registry.h"
#include "plugin/rules.h"

namespace jax2onnx::plugin {

// Registrar R's neutral emitter plus what the mesh unroller needs: the value
// of any atom, binding variables, and lowering an equation with whatever
// the registry holds for R's pipeline.
template <class R>
class MeshDriver : public R::Emitter {
 public:
  using Value = typename R::Emitter::Value;
  using R::Emitter::Emitter;

  absl::StatusOr<Value> Operand(const jaxpr::Atom& atom,
                                const jaxpr::Eqn* eqn) {
    return R::ValueOf(this->ctx_, atom, eqn);
  }
  void Bind(const jaxpr::Var* var, const Value& v) { this->ctx_.Bind(var, v); }
  absl::StatusOr<Value> Bound(const jaxpr::Var* var) {
    return Operand(jaxpr::Atom::OfVar(const_cast<jaxpr::Var*>(var)), nullptr);
  }
  absl::Status Lower(const jaxpr::Eqn& eqn) {
    const Registry& registry = Registry::Global();
    const PrimitiveEntry* entry = registry.Find(eqn.primitive);
    if (entry == nullptr || R::LoweringOf(*entry) == nullptr) {
      return absl::UnimplementedError(MissingLoweringMessage(
          registry, eqn.primitive, R::kName, R::kOtherName));
    }
    return R::LoweringOf(*entry)(this->ctx_, eqn);
  }
  absl::Status SetOutputOf(const jaxpr::Eqn& eqn, int i, const Value& v) {
    return this->ctx_.SetOutput(eqn, i, v);
  }
};

template <class R, absl::Status (*Recipe)(MeshDriver<R>&, const jaxpr::Eqn&)>
absl::Status WithMeshDriver(typename R::Context& ctx, const jaxpr::Eqn& eqn) {
  MeshDriver<R> d(ctx, eqn);
  return Recipe(d, eqn);
}

template <class R>
absl::Status RefuseMultiDevice(typename R::Context&, const jaxpr::Eqn& eqn) {
  return jaxpr::RefusedPrimitiveError(eqn.primitive);
}

template <class R>
void CollectiveRules(R&) {
  R::Register("shard_map", &WithMeshDriver<R, &LowerShardMap<MeshDriver<R>>>,
              {{"Slice", "Concat", "Add", "Max", "Min", "Unsqueeze", "Squeeze"},
               17,
               "mesh emulated by unrolling (<= 64 devices); inlined when "
               "replicated"});
  for (const std::string& name : jaxpr::CollectivePrimitives()) {
    R::Register(
        name,
        &WithMeshDriver<R, &LowerCollectiveOutsideShardMap<MeshDriver<R>>>,
        {{"ReduceSum", "ReduceMax", "ReduceMin"},
         17,
         "positional axes (vmap) reduce; mesh axes inside shard_map"});
  }
  for (const std::string& name : jaxpr::RefusedPrimitives()) {
    R::Register(name, &RefuseMultiDevice<R>, {{}, 17, "refused"});
  }
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_COLLECTIVES_RULES_H_
