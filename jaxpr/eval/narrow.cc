#include "jaxpr/eval/narrow.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx::jaxpr {
namespace {

bool IsNarrowAval(const Aval& aval) {
  return aval.is_shaped() && IsNarrow(aval.dtype);
}

// f32 for narrow floats (exact for every value, f8_e8m0fnu's 2^-127 as a
// subnormal included), i32 for narrow integers.
DType Widened(DType dtype) {
  if (IsNarrowFloat(dtype)) return DType::kF32;
  if (IsNarrowInt(dtype)) return DType::kI32;
  return dtype;
}

bool HasNestedJaxpr(const Eqn& eqn) {
  for (const auto& [key, value] : eqn.params.entries()) {
    if (value.kind() == ParamValue::Kind::kJaxpr ||
        value.kind() == ParamValue::Kind::kJaxprTuple) {
      return true;
    }
  }
  return false;
}

// The narrow dtype a param names (`preferred_element_type=float8_e4m3fn`,
// `dtype=int4`), if any.
std::optional<DType> NarrowParamDType(const ParamValue& value) {
  if (value.kind() != ParamValue::Kind::kName) return std::nullopt;
  const std::optional<DType> d = DTypeFromNumpyName(value.ToString());
  if (d.has_value() && IsNarrow(*d)) return d;
  return std::nullopt;
}

Array WidenArray(const Array& a) {
  if (!IsNarrow(a.dtype())) return a;
  Array wide(Widened(a.dtype()), a.shape());
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    wide.SetFromDouble(i, a.GetAsDouble(i));  // exact
  }
  return wide;
}

// The narrow dtype `to`'s value of each element of `from`, converted as
// convert_element_type does (see narrow.h).
Array ConvertToNarrow(const Array& from, DType to) {
  Array out(to, from.shape());
  const NarrowFormat format = *NarrowFormatOf(to);
  const bool from_float = IsFloat(from.dtype()) || IsComplex(from.dtype()) ||
                          IsNarrowFloat(from.dtype());
  for (int64_t i = 0; i < from.num_elements(); ++i) {
    if (IsNarrowFloat(to)) {
      out.data()[i] = NarrowFloatFromDouble(format, from.GetAsDouble(i));
    } else if (from_float) {
      const double v = from.GetAsDouble(i);
      int64_t n = 0;
      if (!std::isnan(v)) {
        n = static_cast<int64_t>(std::trunc(
            std::fmin(std::fmax(v, static_cast<double>(NarrowIntMin(format))),
                      static_cast<double>(NarrowIntMax(format)))));
      }
      out.data()[i] = NarrowIntFromInt64(format, n);
    } else {
      out.data()[i] =
          NarrowIntFromInt64(format, static_cast<int64_t>(from.GetAsUInt64(i)));
    }
  }
  return out;
}

Array NarrowBack(const Array& wide, DType narrow) {
  Array out(narrow, wide.shape());
  const NarrowFormat format = *NarrowFormatOf(narrow);
  for (int64_t i = 0; i < wide.num_elements(); ++i) {
    out.data()[i] = IsNarrowFloat(narrow)
                        ? NarrowFloatFromDouble(format, wide.GetAsDouble(i))
                        : NarrowIntFromInt64(format, wide.GetAsInt64(i));
  }
  return out;
}

}  // namespace

bool TouchesNarrowDType(const Eqn& eqn) {
  if (HasNestedJaxpr(eqn)) return false;
  for (const Atom& a : eqn.inputs) {
    if (IsNarrowAval(a.is_literal()
                         ? (a.literal->aval ? *a.literal->aval : Aval())
                         : a.var->aval)) {
      return true;
    }
  }
  for (const Var* v : eqn.outputs) {
    if (IsNarrowAval(v->aval)) return true;
  }
  for (const auto& [key, value] : eqn.params.entries()) {
    if (NarrowParamDType(value)) return true;
  }
  return false;
}

absl::StatusOr<std::vector<Array>> EvalNarrowEqn(
    const Eqn& eqn, const std::vector<Array>& inputs, EqnRunner run) {
  const DType out0 =
      eqn.outputs.empty() ? DType::kInvalid : eqn.outputs[0]->aval.dtype;
  if (eqn.primitive == "convert_element_type" && inputs.size() == 1 &&
      IsNarrow(out0)) {
    return std::vector<Array>{ConvertToNarrow(inputs[0], out0)};
  }
  if (eqn.primitive == "bitcast_convert_type" && inputs.size() == 1) {
    const Array& in = inputs[0];
    const auto bits = [](DType d) {
      if (auto f = NarrowFormatOf(d)) return Info(*f).bits;
      return ItemSize(d) * 8;
    };
    if (bits(in.dtype()) != 8 || bits(out0) != 8) {
      return absl::UnimplementedError(
          absl::StrCat("bitcast_convert_type from ", ShortName(in.dtype()),
                       " to ", ShortName(out0),
                       ": only 8-bit narrow types are bitcast here (the "
                       "4- and 2-bit ones pack into bytes differently)"));
    }
    Array out(out0, in.shape());
    if (in.num_bytes() > 0) std::memcpy(out.data(), in.data(), in.num_bytes());
    return std::vector<Array>{std::move(out)};
  }
  // The widened equation: its own Vars (avals widened), literals and params.
  Eqn wide = eqn;
  std::vector<std::unique_ptr<Var>> temps;
  auto widen_var = [&](Var* v) {
    if (!IsNarrowAval(v->aval)) return v;
    temps.push_back(std::make_unique<Var>(*v));
    Aval& aval = temps.back()->aval;
    aval.dtype = Widened(aval.dtype);
    aval.dtype_name = std::string(ShortName(aval.dtype));
    return temps.back().get();
  };
  for (Atom& a : wide.inputs) {
    if (a.is_literal()) {
      if (a.literal->aval && IsNarrowAval(*a.literal->aval)) {
        auto lit = std::make_shared<Literal>(*a.literal);
        lit->aval->dtype = Widened(lit->aval->dtype);
        lit->aval->dtype_name = std::string(ShortName(lit->aval->dtype));
        a.literal = std::move(lit);
      }
    } else {
      a.var = widen_var(a.var);
    }
  }
  for (Var*& v : wide.outputs) v = widen_var(v);
  Params params;
  for (const auto& [key, value] : eqn.params.entries()) {
    if (auto d = NarrowParamDType(value)) {
      params.Set(key, ParamValue::Name(std::string(NumpyName(Widened(*d)))));
    } else {
      params.Set(key, value);
    }
  }
  wide.params = std::move(params);
  std::vector<Array> wide_inputs;
  wide_inputs.reserve(inputs.size());
  for (const Array& a : inputs) wide_inputs.push_back(WidenArray(a));
  J2O_ASSIGN_OR_RETURN(std::vector<Array> outs, run(wide, wide_inputs));
  for (size_t o = 0; o < outs.size() && o < eqn.outputs.size(); ++o) {
    const Aval& aval = eqn.outputs[o]->aval;
    if (IsNarrowAval(aval)) outs[o] = NarrowBack(outs[o], aval.dtype);
  }
  return outs;
}

}  // namespace jax2onnx::jaxpr
