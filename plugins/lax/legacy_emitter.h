// The legacy pipeline's implementation of the neutral emitter interface
// (plugin/emit.h) used by the shared conv/window/sort recipes. Intermediate
// values are registered in shape_env with their dtype and an unknown shape;
// SetOutput refines bound outputs from the JAX avals.
#ifndef JAX2ONNX_PLUGINS_LAX_LEGACY_EMITTER_H_
#define JAX2ONNX_PLUGINS_LAX_LEGACY_EMITTER_H_

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "converter/state.h"
#include "glog/logging.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/emit.h"
#include "plugin/onnx_types.h"
#include "plugin/registry.h"
#include "plugin/rules.h"

namespace jax2onnx::plugins {

// The declared type of a Loop-carried value: with the shape the recipe
// states (plugin::CarriedType), else of unknown shape.
inline absl::StatusOr<converter::ValueInfo> CarriedInfo(
    const plugin::CarriedType& t) {
  J2O_ASSIGN_OR_RETURN(int code, plugin::OnnxDType(t.dtype));
  if (!t.has_shape) return converter::ValueInfo::UnknownShape(code);
  return converter::ValueInfo::OfAval(jaxpr::Aval::Shaped(t.dtype, t.shape));
}

class NeutralLegacyEmitter
    : public plugin::NeutralEmitterBase<NeutralLegacyEmitter, converter::State,
                                        std::string> {
 public:
  using NeutralEmitterBase::NeutralEmitterBase;
  std::vector<Value> OpMulti(absl::string_view op_type,
                             std::vector<Value> inputs,
                             std::vector<jaxpr::DType> outs,
                             std::vector<plugin::OpAttr> attrs = {}) {
    std::vector<onnx::AttributeProto> protos;
    for (const plugin::OpAttr& a : attrs) protos.push_back(ToProto(a));
    std::vector<converter::ValueInfo> infos;
    for (jaxpr::DType d : outs) {
      auto dtype = plugin::OnnxDType(d);
      CHECK(dtype.ok()) << dtype.status();
      infos.push_back(converter::ValueInfo::UnknownShape(*dtype));
    }
    return ctx_.AddNodeMulti(op_type, std::move(inputs), std::move(infos),
                             std::move(protos));
  }
  Value Const(const jaxpr::Array& a) {
    auto v = ctx_.ConstArray(a);
    CHECK(v.ok()) << v.status();
    return *v;
  }
  Value ConstI64(std::vector<int64_t> v) { return ctx_.ConstI64(v); }
  int OnnxDTypeOf(const Value& v) const {
    const converter::ValueInfo* info = ctx_.Info(v);
    return info ? info->dtype : onnx::TensorProto::UNDEFINED;
  }
  Value ConstI64Scalar(int64_t v) { return ctx_.ConstI64Scalar(v); }
  absl::StatusOr<Value> DimValue(const jaxpr::DimExpr& d) {
    return ctx_.DimValue(d);
  }
  absl::StatusOr<Value> ShapeValue(const std::vector<jaxpr::DimExpr>& d) {
    return ctx_.ShapeValue(d);
  }
  absl::Status SetOut(int i, const Value& v) {
    return ctx_.SetOutput(eqn_, i, v);
  }
  // Shape assertions (plugin::LowerShapeAssertion): the newest check and the
  // rewrite the core applies to every graph output.
  std::optional<Value> OutputGuardToken() const {
    return ctx_.output_guard_check();
  }
  absl::Status SetOutputGuard(Value check,
                              converter::State::OutputGuard guard) {
    return ctx_.SetOutputGuard(std::move(check), std::move(guard));
  }
  // Names the node that produces `v` (ONNX Runtime's errors quote it),
  // made unique by State::FreshName (node names are unique in a valid
  // model). `v`'s producer is looked for from the newest node back: it is
  // the one the recipe just emitted.
  void NameNode(const Value& v, std::string name) {
    auto& nodes = *ctx_.graph().mutable_node();
    for (int n = nodes.size() - 1; n >= 0; --n) {
      for (const std::string& out : nodes[n].output()) {
        if (out == v) {
          nodes[n].set_name(ctx_.FreshName(name));
          return;
        }
      }
    }
  }
  // Lowers `jaxpr`'s equations inline on `args`; returns its outvars.
  absl::StatusOr<std::vector<Value>> Inline(const jaxpr::ClosedJaxpr& jaxpr,
                                            const std::vector<Value>& args) {
    return ctx_.Inline(jaxpr, args);
  }
  // A vector of dtypes (no shapes); a template so that a braced list of
  // dtypes binds to the CarriedType overload alone.
  template <typename D,
            typename = std::enable_if_t<std::is_same_v<D, jaxpr::DType>>>
  absl::StatusOr<std::vector<Value>> Loop(
      Value trip_count, std::vector<Value> inits, const std::vector<D>& dtypes,
      const plugin::NeutralLoopBody<Value>& body, bool early_exit = false) {
    return Loop(std::move(trip_count), std::move(inits),
                std::vector<plugin::CarriedType>(dtypes.begin(), dtypes.end()),
                body, early_exit);
  }
  // Carried values with a shape are declared with it as body inputs, body
  // outputs and Loop results (plugin::CarriedType).
  absl::StatusOr<std::vector<Value>> Loop(
      Value trip_count, std::vector<Value> inits,
      const std::vector<plugin::CarriedType>& types,
      const plugin::NeutralLoopBody<Value>& body, bool early_exit = false,
      const plugin::LoopNames& names = {}) {
    std::vector<converter::ValueInfo> infos;
    for (const plugin::CarriedType& t : types) {
      J2O_ASSIGN_OR_RETURN(converter::ValueInfo info, CarriedInfo(t));
      infos.push_back(std::move(info));
    }
    J2O_ASSIGN_OR_RETURN(
        onnx::GraphProto graph,
        ctx_.BuildSubgraph(
            names.body, [&]() -> absl::StatusOr<std::vector<Value>> {
              Value iter = ctx_.AddGraphInput(
                  names.iter,
                  converter::ValueInfo::Tensor(onnx::TensorProto::INT64, {}));
              Value cond = ctx_.AddGraphInput(
                  "cond",
                  converter::ValueInfo::Tensor(onnx::TensorProto::BOOL, {}));
              std::vector<Value> carried;
              for (const converter::ValueInfo& info : infos) {
                carried.push_back(ctx_.AddGraphInput("carried", info));
              }
              J2O_ASSIGN_OR_RETURN(std::vector<Value> next,
                                   body(iter, carried));
              const size_t first = early_exit ? 1 : 0;
              if (next.size() != infos.size() + first) {
                return absl::InternalError(
                    "a Loop body returns its condition (early exit) and "
                    "the carried values");
              }
              for (size_t k = 0; k < infos.size(); ++k) {
                if (!infos[k].has_shape) continue;
                const Value& out = next[first + k];
                const converter::ValueInfo* have = ctx_.Info(out);
                if (have != nullptr && have->has_shape &&
                    !Refines(infos[k], *have)) {
                  return absl::InternalError(absl::StrCat(
                      "Loop body output ", k, " has shape ", have->ToString(),
                      ", not the carried shape ", infos[k].ToString()));
                }
                ctx_.SetInfo(out, infos[k]);
              }
              if (early_exit) return next;
              std::vector<Value> outs = {ctx_.AddNode(
                  "Identity", {cond},
                  converter::ValueInfo::Tensor(onnx::TensorProto::BOOL, {}))};
              outs.insert(outs.end(), next.begin(), next.end());
              return outs;
            }));
    std::vector<Value> loop_in = {
        trip_count, early_exit ? Const(jaxpr::Array::ScalarFromInt64(
                                     jaxpr::DType::kBool, 1))
                               : Value()};
    loop_in.insert(loop_in.end(), inits.begin(), inits.end());
    return ctx_.AddNodeMulti("Loop", std::move(loop_in), infos,
                             {converter::AttrGraph("body", std::move(graph))});
  }

 private:
  // Whether `declared` agrees with `have` on the rank and every known dim.
  static bool Refines(const converter::ValueInfo& declared,
                      const converter::ValueInfo& have) {
    if (declared.dims.size() != have.dims.size()) return false;
    for (size_t d = 0; d < have.dims.size(); ++d) {
      if (!have.dims[d].is_unknown() && !(have.dims[d] == declared.dims[d])) {
        return false;
      }
    }
    return true;
  }
  static onnx::AttributeProto ToProto(const plugin::OpAttr& a) {
    if (auto* i = std::get_if<int64_t>(&a.value)) {
      return converter::AttrInt(a.name, *i);
    }
    if (auto* is = std::get_if<std::vector<int64_t>>(&a.value)) {
      return converter::AttrInts(a.name, *is);
    }
    if (auto* f = std::get_if<float>(&a.value)) {
      return converter::AttrFloat(a.name, *f);
    }
    return converter::AttrString(a.name, std::get<std::string>(a.value));
  }
};
static_assert(plugin::NeutralEmitter<NeutralLegacyEmitter>);

// The legacy pipeline's registrar of the shared rule tables (plugin/rules.h).
struct LegacyRegistrar
    : plugin::RegistrarBase<
          LegacyRegistrar, NeutralLegacyEmitter, converter::State,
          plugin::LegacyLoweringFn, &plugin::PrimitiveEntry::legacy,
          &plugin::PrimitiveEntry::legacy_info,
          &plugin::Registry::RegisterLegacy, plugin::kLegacyPipelineName,
          plugin::kIrPipelineName> {};

// The registrations that really differ per pipeline or take the
// pipeline's own emitter (plugin/all_rules.h), one per family file
// (plugins/lax/<family>.cc).
void RegisterElementwise();
void RegisterCalls();
void RegisterControlFlow();
void RegisterKeyWords();  // structural ops on PRNG keys

}  // namespace jax2onnx::plugins

#endif  // JAX2ONNX_PLUGINS_LAX_LEGACY_EMITTER_H_
