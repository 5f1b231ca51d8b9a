// Complex values in either pipeline (plugin/complex_plan.h), written once
// over a pipeline's registrar R (plugins/lax/legacy_emitter.h's
// LegacyRegistrar, plugins2/lax/ir_emitter.h's IrRegistrar): every
// registered lowering is wrapped so that an equation with complex operands
// or results is lowered by the shared complex recipes, passed to the usual
// lowering when that lowering only moves values (calls, control flow), or
// refused with a precise error. Registers `fft`, which exists only on
// complex values. Each pipeline calls RegisterComplexWrappers<R>() once,
// after every other lowering is registered.
#ifndef JAX2ONNX_PLUGIN_COMPLEX_WRAPPERS_H_
#define JAX2ONNX_PLUGIN_COMPLEX_WRAPPERS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "jaxpr/jaxpr.h"
#include "plugin/complex_lowering.h"
#include "plugin/registry.h"

namespace jax2onnx::plugin {
namespace complex_wrappers_internal {

// The lowerings the wrappers replaced, by primitive (one table per
// pipeline).
template <class R>
absl::flat_hash_map<std::string, typename R::LoweringFn>& Originals() {
  static auto* originals =
      new absl::flat_hash_map<std::string, typename R::LoweringFn>();
  return *originals;
}

template <class R>
typename R::LoweringFn OriginalOf(const std::string& primitive) {
  auto it = Originals<R>().find(primitive);
  return it == Originals<R>().end() ? nullptr : it->second;
}

// The pipeline's neutral emitter, able to run the real lowering of an
// equation the complex recipes split into real parts.
template <class R>
class ComplexEmitter : public R::Emitter {
 public:
  using Value = typename R::Emitter::Value;
  using R::Emitter::Emitter;

  // Runs the real lowering of `real.eqn` with its replaced operands bound to
  // `parts`; returns its outputs (an empty value for dropped ones).
  absl::StatusOr<std::vector<Value>> LowerReal(
      const complex::RealEqn& real, const std::vector<Value>& parts) {
    typename R::LoweringFn fn = OriginalOf<R>(real.eqn.primitive);
    if (fn == nullptr) {
      return absl::InternalError(absl::StrCat(
          "no real ", R::kName, " lowering of '", real.eqn.primitive, "'"));
    }
    for (size_t j = 0; j < real.replaced.size(); ++j) {
      this->ctx_.Bind(real.eqn.inputs[real.replaced[j]].var, parts[j]);
    }
    absl::Status status = fn(this->ctx_, real.eqn);
    std::vector<Value> outs;
    for (const jaxpr::Var* out : real.eqn.outputs) {
      if (status.ok() && !out->is_drop) {
        auto v = R::ValueOf(this->ctx_,
                            jaxpr::Atom::OfVar(const_cast<jaxpr::Var*>(out)),
                            &real.eqn);
        if (!v.ok()) status = v.status();
        outs.push_back(v.ok() ? *v : Value{});
      } else {
        outs.push_back(Value{});
      }
    }
    for (const auto& var : real.owned) this->ctx_.Unbind(var.get());
    if (!status.ok()) return status;
    return outs;
  }
};

template <class R>
absl::Status ComplexAware(typename R::Context& ctx, const jaxpr::Eqn& eqn) {
  namespace cx = complex;
  typename R::LoweringFn original = OriginalOf<R>(eqn.primitive);
  const bool involves_complex = cx::InvolvesComplex(eqn);
  if (!involves_complex && original != nullptr) return original(ctx, eqn);
  switch (cx::ComplexKind(eqn.primitive)) {
    case cx::Kind::kTransparent:
      return original(ctx, eqn);
    case cx::Kind::kNone:
      if (original == nullptr) {
        return absl::InternalError("complex wrapper without a lowering");
      }
      return cx::RefuseComplex(eqn);
    default: {
      if (!involves_complex && !cx::AlsoLowersRealOperands(eqn.primitive)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "'", eqn.primitive, "' needs complex operands or results"));
      }
      ComplexEmitter<R> e(ctx, eqn);
      return cx::LowerComplex(e);
    }
  }
}

}  // namespace complex_wrappers_internal

template <class R>
void RegisterComplexWrappers() {
  namespace cx = complex;
  namespace in = complex_wrappers_internal;
  const typename R::LoweringFn wrapper = &in::ComplexAware<R>;
  Registry& r = Registry::Global();
  for (const PrimitiveEntry* entry : r.Entries()) {
    const typename R::LoweringFn fn = R::LoweringOf(*entry);
    if (fn == nullptr || fn == wrapper) continue;
    in::Originals<R>()[entry->name] = fn;
    LoweringInfo info = R::InfoOf(*entry);
    if (cx::ComplexKind(entry->name) != cx::Kind::kNone) {
      info.notes = absl::StrReplaceAll(
          info.notes, {{"complex refused", "complex as real [..., 2] parts"}});
    }
    R::Register(entry->name, wrapper, std::move(info));
  }
  // Primitives that exist only on complex values (or have no real
  // lowering): complex, real, imag, conj, fft.
  for (const std::string& name : cx::ComplexPrimitives(cx::Kind::kRecipe)) {
    const PrimitiveEntry* entry = r.Find(name);
    if (name == "fft" || name == "eig" || name == "schur" ||
        (entry != nullptr && R::LoweringOf(*entry) != nullptr)) {
      continue;
    }
    R::Register(name, wrapper,
                {{"Gather", "Unsqueeze", "Concat", "Neg", "Expand"},
                 kMinOpset,
                 "complex values only, as real [..., 2] tensors"});
  }
  R::Register("eig", wrapper,
              {{"Loop", "MatMul", "Gather", "Where", "ReduceSum", "ArgMax"},
               kMinOpset,
               "LAPACK geev semantics: Hessenberg reduction, single-shift "
               "complex QR (at most 30 max(10, n) sweeps, else NaN) and "
               "substitution on the Schur form, three Loops; vectors of norm "
               "1, largest component real; eigenvalue order and phases may "
               "differ from LAPACK's (docs/linalg.md)"});
  R::Register("schur", wrapper,
              {{"Loop", "MatMul", "Gather", "Where", "ReduceSum"},
               kMinOpset,
               "LAPACK gees semantics, no sorting: Hessenberg reduction, "
               "then for complex operands eig's single-shift complex QR (T "
               "upper triangular), for real ones dlahqr's double-shift QR "
               "(T quasi-triangular, dlanv2's 2x2 blocks); A = Z T Z^H; "
               "eigenvalue order and vector phases may differ from "
               "LAPACK's (docs/linalg.md)"});
  R::Register("fft", wrapper,
              {{"DFT", "Unsqueeze", "Slice", "Concat", "Gather", "Mul"},
               kMinOpset,
               "FFT/IFFT/RFFT/IRFFT over 1-3 trailing axes with ONNX DFT "
               "(axis attribute below opset 20, input from 20); complex "
               "values as real [..., 2] tensors"});
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_COMPLEX_WRAPPERS_H_
