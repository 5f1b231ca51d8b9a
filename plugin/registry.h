// The one registry of primitive lowerings shared by both pipelines. An entry
// is keyed by JAX primitive name and holds an optional legacy lowering
// (converter/ + plugins/), an optional IR lowering (converter2/ + plugins2/)
// and metadata. The pipelines' context types are only declared here, so this
// layer depends on neither pipeline.
#ifndef JAX2ONNX_PLUGIN_REGISTRY_H_
#define JAX2ONNX_PLUGIN_REGISTRY_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::converter {
class State;
}  // namespace jax2onnx::converter
namespace jax2onnx::converter2 {
class LoweringContext;
}  // namespace jax2onnx::converter2

namespace jax2onnx::plugin {

// The pipelines' names in messages.
inline constexpr char kLegacyPipelineName[] = "legacy";
inline constexpr char kIrPipelineName[] = "IR";

using LegacyLoweringFn = absl::Status (*)(converter::State& s,
                                          const jaxpr::Eqn& eqn);
using IrLoweringFn = absl::Status (*)(converter2::LoweringContext& ctx,
                                      const jaxpr::Eqn& eqn);

struct LoweringInfo {
  std::vector<std::string> onnx_ops;  // ONNX ops the lowering may emit
  int min_opset = 17;                 // lowest opset it supports
  std::string notes;                  // limits, refusals
};

struct PrimitiveEntry {
  std::string name;
  LegacyLoweringFn legacy = nullptr;
  IrLoweringFn ir = nullptr;
  LoweringInfo legacy_info;
  LoweringInfo ir_info;
};

// Lowers a key-moving equation (jaxpr::MovesKeys) with `lower`, the
// primitive's own lowering, once per key word (plugins*/lax/key_words.cc).
using LegacyKeyWordsFn = absl::Status (*)(converter::State& s,
                                          const jaxpr::Eqn& eqn,
                                          LegacyLoweringFn lower);
using IrKeyWordsFn = absl::Status (*)(converter2::LoweringContext& ctx,
                                      const jaxpr::Eqn& eqn,
                                      IrLoweringFn lower);

class Registry {
 public:
  // The process-wide registry. Plugin sets fill it through their explicit
  // Register*() functions (see plugins/ and plugins2/), never through static
  // initializers, so no registration can be dropped by the linker.
  static Registry& Global();

  void RegisterLegacy(absl::string_view primitive, LegacyLoweringFn fn,
                      LoweringInfo info = {});
  void RegisterIr(absl::string_view primitive, IrLoweringFn fn,
                  LoweringInfo info = {});

  const PrimitiveEntry* Find(absl::string_view primitive) const;
  // All entries sorted by name.
  std::vector<const PrimitiveEntry*> Entries() const;
  // Up to `n` registered names closest to `name` (edit distance), for
  // "unknown primitive" errors.
  std::vector<std::string> Nearest(absl::string_view name, int n = 3) const;

  void SetKeyWordsAdapters(LegacyKeyWordsFn legacy, IrKeyWordsFn ir) {
    if (legacy != nullptr) legacy_key_words_ = legacy;
    if (ir != nullptr) ir_key_words_ = ir;
  }
  LegacyKeyWordsFn legacy_key_words() const { return legacy_key_words_; }
  IrKeyWordsFn ir_key_words() const { return ir_key_words_; }

 private:
  LegacyKeyWordsFn legacy_key_words_ = nullptr;
  IrKeyWordsFn ir_key_words_ = nullptr;
  std::map<std::string, PrimitiveEntry, std::less<>> entries_;
};

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_REGISTRY_H_
