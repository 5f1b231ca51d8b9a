// Legacy lowerings of shard_map, collectives, sharding markers and refused
// multi-device primitives; the recipes are shared with the IR pipeline
// (plugin/collectives_plan.h).
#include <string>
#include <vector>

#include "converter/state.h"
#include "jaxpr/mesh.h"
#include "plugin/collectives_plan.h"
#include "plugin/conversion_checks.h"
#include "plugin/registry.h"
#include "plugins/lax/legacy_emitter.h"
#include "plugins/register.h"

namespace jax2onnx::plugins {
namespace {

using converter::State;

// NeutralLegacyEmitter plus the variable binding the mesh unroller needs.
class LegacyMeshDriver : public NeutralLegacyEmitter {
 public:
  LegacyMeshDriver(State& s, const jaxpr::Eqn& eqn)
      : NeutralLegacyEmitter(s, eqn), s_(s) {}

  absl::StatusOr<Value> Operand(const jaxpr::Atom& atom,
                                const jaxpr::Eqn* eqn) {
    return s_.Name(atom, eqn);
  }
  void Bind(const jaxpr::Var* var, const Value& v) { s_.Bind(var, v); }
  absl::StatusOr<Value> Bound(const jaxpr::Var* var) {
    return s_.Name(jaxpr::Atom::OfVar(const_cast<jaxpr::Var*>(var)), nullptr);
  }
  absl::Status Lower(const jaxpr::Eqn& eqn) {
    const plugin::Registry& registry = plugin::Registry::Global();
    const plugin::PrimitiveEntry* entry = registry.Find(eqn.primitive);
    if (entry == nullptr || entry->legacy == nullptr) {
      return absl::UnimplementedError(plugin::MissingLoweringMessage(
          registry, eqn.primitive, "legacy", "IR"));
    }
    return entry->legacy(s_, eqn);
  }
  absl::Status SetOutputOf(const jaxpr::Eqn& eqn, int i, const Value& v) {
    return s_.SetOutput(eqn, i, v);
  }

 private:
  State& s_;
};

template <absl::Status (*Recipe)(LegacyMeshDriver&, const jaxpr::Eqn&)>
absl::Status WithMeshDriver(State& s, const jaxpr::Eqn& eqn) {
  LegacyMeshDriver d(s, eqn);
  return Recipe(d, eqn);
}

absl::Status Refuse(State&, const jaxpr::Eqn& eqn) {
  return jaxpr::RefusedPrimitiveError(eqn.primitive);
}

}  // namespace

void RegisterCollectives() {
  plugin::Registry& r = plugin::Registry::Global();
  r.RegisterLegacy(
      "shard_map", &WithMeshDriver<&plugin::LowerShardMap>,
      {{"Slice", "Concat", "Add", "Max", "Min", "Unsqueeze", "Squeeze"},
       17,
       "mesh emulated by unrolling (<= 64 devices); inlined "
       "when replicated"});
  for (const std::string& name : jaxpr::CollectivePrimitives()) {
    r.RegisterLegacy(
        name, &WithMeshDriver<&plugin::LowerCollectiveOutsideShardMap>,
        {{"ReduceSum", "ReduceMax", "ReduceMin"},
         17,
         "positional axes (vmap) reduce; mesh axes inside shard_map"});
  }
  for (const std::string& name : jaxpr::RefusedPrimitives()) {
    r.RegisterLegacy(name, &Refuse, {{}, 17, "refused"});
  }
}

}  // namespace jax2onnx::plugins
