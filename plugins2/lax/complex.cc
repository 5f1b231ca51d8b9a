// Complex values in the IR pipeline (plugin/complex_plan.h): every registered
// IR lowering is wrapped so that an equation with complex operands or
// results is lowered by the shared complex recipes, passed to the usual
// lowering when that lowering only moves values (calls, control flow), or
// refused with a precise error. Registers `fft`, which exists only on
// complex values.
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_replace.h"
#include "converter2/lowering_context.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/complex_lowering.h"
#include "plugin/registry.h"
#include "plugins2/lax/ir_emitter.h"
#include "plugins2/register.h"

namespace jax2onnx::plugins2 {
namespace {

using converter2::LoweringContext;
namespace cx = plugin::complex;

absl::flat_hash_map<std::string, plugin::IrLoweringFn>& Originals() {
  static auto* originals =
      new absl::flat_hash_map<std::string, plugin::IrLoweringFn>();
  return *originals;
}

plugin::IrLoweringFn OriginalOf(const std::string& primitive) {
  auto it = Originals().find(primitive);
  return it == Originals().end() ? nullptr : it->second;
}

class ComplexIrEmitter : public NeutralIrEmitter {
 public:
  ComplexIrEmitter(LoweringContext& ctx, const jaxpr::Eqn& eqn)
      : NeutralIrEmitter(ctx, eqn), ctx_(ctx) {}

  // Runs the real lowering of `real.eqn` with its replaced operands bound to
  // `parts`; returns its outputs (nullptr for dropped ones).
  absl::StatusOr<std::vector<Value>> LowerReal(
      const cx::RealEqn& real, const std::vector<Value>& parts) {
    plugin::IrLoweringFn fn = OriginalOf(real.eqn.primitive);
    if (fn == nullptr) {
      return absl::InternalError(
          absl::StrCat("no real IR lowering of '", real.eqn.primitive, "'"));
    }
    for (size_t j = 0; j < real.replaced.size(); ++j) {
      ctx_.Bind(real.eqn.inputs[real.replaced[j]].var, parts[j]);
    }
    absl::Status status = fn(ctx_, real.eqn);
    std::vector<Value> outs;
    for (const jaxpr::Var* out : real.eqn.outputs) {
      if (status.ok() && !out->is_drop) {
        auto v = ctx_.ValueOf(jaxpr::Atom::OfVar(const_cast<jaxpr::Var*>(out)),
                              &real.eqn);
        if (!v.ok()) status = v.status();
        outs.push_back(v.ok() ? *v : nullptr);
      } else {
        outs.push_back(nullptr);
      }
    }
    for (const auto& var : real.owned) ctx_.Unbind(var.get());
    if (!status.ok()) return status;
    return outs;
  }

 private:
  LoweringContext& ctx_;
};

absl::Status ComplexAware(LoweringContext& ctx, const jaxpr::Eqn& eqn) {
  plugin::IrLoweringFn original = OriginalOf(eqn.primitive);
  const bool complex = cx::InvolvesComplex(eqn);
  if (!complex && original != nullptr) return original(ctx, eqn);
  switch (cx::ComplexKind(eqn.primitive)) {
    case cx::Kind::kTransparent:
      return original(ctx, eqn);
    case cx::Kind::kNone:
      if (original == nullptr) {
        return absl::InternalError("complex wrapper without a lowering");
      }
      return cx::RefuseComplex(eqn);
    default: {
      if (!complex) {
        return absl::InvalidArgumentError(absl::StrCat(
            "'", eqn.primitive, "' needs complex operands or results"));
      }
      ComplexIrEmitter e(ctx, eqn);
      return cx::LowerComplex(e);
    }
  }
}

}  // namespace

void RegisterComplex() {
  plugin::Registry& r = plugin::Registry::Global();
  for (const plugin::PrimitiveEntry* entry : r.Entries()) {
    if (entry->ir == nullptr || entry->ir == &ComplexAware) continue;
    Originals()[entry->name] = entry->ir;
    plugin::LoweringInfo info = entry->ir_info;
    if (cx::ComplexKind(entry->name) != cx::Kind::kNone) {
      info.notes = absl::StrReplaceAll(
          info.notes, {{"complex refused", "complex as real [..., 2] parts"}});
    }
    r.RegisterIr(entry->name, &ComplexAware, std::move(info));
  }
  // Primitives that exist only on complex values (or have no real
  // lowering): complex, real, imag, conj, fft.
  for (const std::string& name : cx::ComplexPrimitives(cx::Kind::kRecipe)) {
    const plugin::PrimitiveEntry* entry = r.Find(name);
    if (name == "fft" || (entry != nullptr && entry->ir != nullptr)) {
      continue;
    }
    r.RegisterIr(name, &ComplexAware,
                 {{"Gather", "Unsqueeze", "Concat", "Neg", "Expand"},
                  plugin::kMinOpset,
                  "complex values only, as real [..., 2] tensors"});
  }
  r.RegisterIr("fft", &ComplexAware,
               {{"DFT", "Unsqueeze", "Slice", "Concat", "Gather", "Mul"},
                plugin::kMinOpset,
                "FFT/IFFT/RFFT/IRFFT over 1-3 trailing axes with ONNX DFT "
                "(axis attribute below opset 20, input from 20); complex "
                "values as real [..., 2] tensors"});
}

}  // namespace jax2onnx::plugins2
