// Complex values in the legacy pipeline (plugin/complex_plan.h): every
// registered legacy lowering is wrapped so that an equation with complex
// operands or results is lowered by the shared complex recipes, passed to the
// usual lowering when that lowering only moves values (calls, control flow), or
// refused with a precise error. Registers `fft`, which exists only on
// complex values.
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_replace.h"
#include "converter/state.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/complex_lowering.h"
#include "plugin/registry.h"
#include "plugins/lax/legacy_emitter.h"
#include "plugins/register.h"

namespace jax2onnx::plugins {
namespace {

using converter::State;
namespace cx = plugin::complex;

absl::flat_hash_map<std::string, plugin::LegacyLoweringFn>& Originals() {
  static auto* originals =
      new absl::flat_hash_map<std::string, plugin::LegacyLoweringFn>();
  return *originals;
}

plugin::LegacyLoweringFn OriginalOf(const std::string& primitive) {
  auto it = Originals().find(primitive);
  return it == Originals().end() ? nullptr : it->second;
}

class ComplexLegacyEmitter : public NeutralLegacyEmitter {
 public:
  ComplexLegacyEmitter(State& ctx, const jaxpr::Eqn& eqn)
      : NeutralLegacyEmitter(ctx, eqn), ctx_(ctx) {}

  // Runs the real lowering of `real.eqn` with its replaced operands bound to
  // `parts`; returns its outputs ("" for dropped ones).
  absl::StatusOr<std::vector<Value>> LowerReal(
      const cx::RealEqn& real, const std::vector<Value>& parts) {
    plugin::LegacyLoweringFn fn = OriginalOf(real.eqn.primitive);
    if (fn == nullptr) {
      return absl::InternalError(absl::StrCat("no real legacy lowering of '",
                                              real.eqn.primitive, "'"));
    }
    for (size_t j = 0; j < real.replaced.size(); ++j) {
      ctx_.Bind(real.eqn.inputs[real.replaced[j]].var, parts[j]);
    }
    absl::Status status = fn(ctx_, real.eqn);
    std::vector<Value> outs;
    for (const jaxpr::Var* out : real.eqn.outputs) {
      if (status.ok() && !out->is_drop) {
        auto v = ctx_.Name(jaxpr::Atom::OfVar(const_cast<jaxpr::Var*>(out)),
                           &real.eqn);
        if (!v.ok()) status = v.status();
        outs.push_back(v.ok() ? *v : std::string());
      } else {
        outs.push_back(std::string());
      }
    }
    for (const auto& var : real.owned) ctx_.Unbind(var.get());
    if (!status.ok()) return status;
    return outs;
  }

 private:
  State& ctx_;
};

absl::Status ComplexAware(State& ctx, const jaxpr::Eqn& eqn) {
  plugin::LegacyLoweringFn original = OriginalOf(eqn.primitive);
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
      ComplexLegacyEmitter e(ctx, eqn);
      return cx::LowerComplex(e);
    }
  }
}

}  // namespace

void RegisterComplex() {
  plugin::Registry& r = plugin::Registry::Global();
  for (const plugin::PrimitiveEntry* entry : r.Entries()) {
    if (entry->legacy == nullptr || entry->legacy == &ComplexAware) continue;
    Originals()[entry->name] = entry->legacy;
    plugin::LoweringInfo info = entry->legacy_info;
    if (cx::ComplexKind(entry->name) != cx::Kind::kNone) {
      info.notes = absl::StrReplaceAll(
          info.notes, {{"complex refused", "complex as real [..., 2] parts"}});
    }
    r.RegisterLegacy(entry->name, &ComplexAware, std::move(info));
  }
  // Primitives that exist only on complex values (or have no real
  // lowering): complex, real, imag, conj, fft.
  for (const std::string& name : cx::ComplexPrimitives(cx::Kind::kRecipe)) {
    const plugin::PrimitiveEntry* entry = r.Find(name);
    if (name == "fft" || (entry != nullptr && entry->legacy != nullptr)) {
      continue;
    }
    r.RegisterLegacy(name, &ComplexAware,
                     {{"Gather", "Unsqueeze", "Concat", "Neg", "Expand"},
                      plugin::kMinOpset,
                      "complex values only, as real [..., 2] tensors"});
  }
  r.RegisterLegacy("fft", &ComplexAware,
                   {{"DFT", "Unsqueeze", "Slice", "Concat", "Gather", "Mul"},
                    plugin::kMinOpset,
                    "FFT/IFFT/RFFT/IRFFT over 1-3 trailing axes with ONNX DFT "
                    "(axis attribute below opset 20, input from 20); complex "
                    "values as real [..., 2] tensors"});
}

}  // namespace jax2onnx::plugins
