// IR lowerings of shard_map, collectives, sharding markers and refused
// multi-device primitives; the recipes are shared with the legacy pipeline
// (plugin/collectives_plan.h).
#include <string>
#include <vector>

#include "converter2/lowering_context.h"
#include "jaxpr/mesh.h"
#include "plugin/collectives_plan.h"
#include "plugin/conversion_checks.h"
#include "plugin/registry.h"
#include "plugins2/lax/ir_emitter.h"
#include "plugins2/register.h"

namespace jax2onnx::plugins2 {
namespace {

using converter2::LoweringContext;

// NeutralIrEmitter plus the variable binding the mesh unroller needs.
class IrMeshDriver : public NeutralIrEmitter {
 public:
  IrMeshDriver(LoweringContext& ctx, const jaxpr::Eqn& eqn)
      : NeutralIrEmitter(ctx, eqn), ctx_(ctx) {}

  absl::StatusOr<Value> Operand(const jaxpr::Atom& atom,
                                const jaxpr::Eqn* eqn) {
    return ctx_.ValueOf(atom, eqn);
  }
  void Bind(const jaxpr::Var* var, Value v) { ctx_.Bind(var, v); }
  absl::StatusOr<Value> Bound(const jaxpr::Var* var) {
    return ctx_.ValueOf(jaxpr::Atom::OfVar(const_cast<jaxpr::Var*>(var)),
                        nullptr);
  }
  absl::Status Lower(const jaxpr::Eqn& eqn) {
    const plugin::Registry& registry = plugin::Registry::Global();
    const plugin::PrimitiveEntry* entry = registry.Find(eqn.primitive);
    if (entry == nullptr || entry->ir == nullptr) {
      return absl::UnimplementedError(plugin::MissingLoweringMessage(
          registry, eqn.primitive, "IR", "legacy"));
    }
    return entry->ir(ctx_, eqn);
  }
  absl::Status SetOutputOf(const jaxpr::Eqn& eqn, int i, Value v) {
    return ctx_.SetOutput(eqn, i, v);
  }

 private:
  LoweringContext& ctx_;
};

template <absl::Status (*Recipe)(IrMeshDriver&, const jaxpr::Eqn&)>
absl::Status WithMeshDriver(LoweringContext& ctx, const jaxpr::Eqn& eqn) {
  IrMeshDriver d(ctx, eqn);
  return Recipe(d, eqn);
}

absl::Status Refuse(LoweringContext&, const jaxpr::Eqn& eqn) {
  return jaxpr::RefusedPrimitiveError(eqn.primitive);
}

}  // namespace

void RegisterCollectives() {
  plugin::Registry& r = plugin::Registry::Global();
  r.RegisterIr(
      "shard_map", &WithMeshDriver<&plugin::LowerShardMap>,
      {{"Slice", "Concat", "Add", "Max", "Min", "Unsqueeze", "Squeeze"},
       17,
       "mesh emulated by unrolling (<= 64 devices); inlined when "
       "replicated"});
  for (const std::string& name : jaxpr::CollectivePrimitives()) {
    r.RegisterIr(name, &WithMeshDriver<&plugin::LowerCollectiveOutsideShardMap>,
                 {{"ReduceSum", "ReduceMax", "ReduceMin"},
                  17,
                  "positional axes (vmap) reduce; mesh axes inside shard_map"});
  }
  for (const std::string& name : jaxpr::RefusedPrimitives()) {
    r.RegisterIr(name, &Refuse, {{}, 17, "refused"});
  }
}

}  // namespace jax2onnx::plugins2
