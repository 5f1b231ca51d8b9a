// The rule table of the elementwise family (plugin/elementwise_plan.h), the
// special functions (plugin/special_plan.h), random bits and bitcasts, for
// both pipelines (plugin/rules.h). Their recipes take the elementwise
// emitter (plugin/elementwise_pieces.h), which each pipeline implements in
// its plugins*/lax/elementwise.cc and passes here as Em.
#ifndef JAX2ONNX_PLUGIN_ELEMENTWISE_RULES_H_
#define JAX2ONNX_PLUGIN_ELEMENTWISE_RULES_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plugin/bitcast_plan.h"
#include "plugin/elementwise_plan.h"
#include "plugin/random_plan.h"
#include "plugin/rng_bit_generator_plan.h"
#include "plugin/rules.h"
#include "plugin/special_plan.h"

namespace jax2onnx::plugin {

template <class R, class Em>
void ElementwiseRules() {
  namespace ew = elementwise;
  const auto info = [](const ew::Rule<Em>& rule) {
    return LoweringInfo{
        rule.onnx_ops, kMinOpset,
        absl::StrCat(rule.notes, rule.notes[0] ? "; " : "", "complex refused")};
  };
  for (const ew::Rule<Em>& rule : ew::Rules<Em>()) {
    R::Register(rule.primitive, &RunWith<R, Em, &ew::LowerElementwise<Em>>,
                info(rule));
  }
  for (const ew::Rule<Em>& rule : ew::SpecialRules<Em>()) {
    R::Register(rule.primitive, &RunWith<R, Em, &ew::LowerSpecial<Em>>,
                info(rule));
  }
  for (const std::string& name : random::RandomPrimitives()) {
    R::Register(
        name, &RunWith<R, Em, &random::LowerRandom<Em>>,
        {random::RandomOnnxOps(), kMinOpset, random::RandomNotes(name)});
  }
  R::Register("rng_bit_generator",
              &RunWith<R, Em, &random::LowerRngBitGenerator<Em>>,
              {random::RngBitGeneratorOnnxOps(), kMinOpset,
               random::RngBitGeneratorNotes()});
  R::Register("bitcast_convert_type",
              &RunWith<R, Em, &bitcast::LowerBitcastConvertType<Em>>,
              {bitcast::BitcastOnnxOps(), kMinOpset, bitcast::BitcastNotes()});
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_ELEMENTWISE_RULES_H_
