// Implementation of the helpers in linalg_internal.h.
#include "jaxpr/eval/linalg_internal.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace jax2onnx::jaxpr::linalg_internal {
namespace {

int Bits(DType d) { return ItemSize(d) * 8; }

// Complex element i of a c64/c128 array.
Complex ComplexAt(const Array& a, int64_t i) {
  if (a.dtype() == DType::kC64) {
    const float* p = a.typed_data<float>();
    return {p[2 * i], p[2 * i + 1]};
  }
  const double* p = a.typed_data<double>();
  return {p[2 * i], p[2 * i + 1]};
}

void SetComplex(Array* a, int64_t i, Complex v) {
  if (a->dtype() == DType::kC64) {
    float* p = a->typed_data<float>();
    p[2 * i] = static_cast<float>(v.real());
    p[2 * i + 1] = static_cast<float>(v.imag());
  } else {
    double* p = a->typed_data<double>();
    p[2 * i] = v.real();
    p[2 * i + 1] = v.imag();
  }
}

// Real value of element i of any supported array, exact for u64.
double RealAt(const Array& a, int64_t i) {
  if (a.dtype() == DType::kU64) return static_cast<double>(a.GetAsUInt64(i));
  return a.GetAsDouble(i);
}

// XLA float->integer conversion: truncate, saturate, NaN -> 0.
void SetIntFromDouble(Array* out, int64_t i, double v) {
  const DType d = out->dtype();
  if (std::isnan(v)) {
    out->SetFromInt64(i, 0);
    return;
  }
  v = std::trunc(v);
  if (IsUnsignedInt(d)) {
    const double max = std::ldexp(1.0, Bits(d));  // 2^bits, exclusive
    uint64_t u;
    if (v <= 0) {
      u = 0;
    } else if (v >= max) {
      u = Bits(d) == 64 ? std::numeric_limits<uint64_t>::max()
                        : (uint64_t{1} << Bits(d)) - 1;
    } else {
      u = static_cast<uint64_t>(v);
    }
    out->SetFromInt64(i, static_cast<int64_t>(u));
    return;
  }
  const double lo = -std::ldexp(1.0, Bits(d) - 1);
  const double hi = std::ldexp(1.0, Bits(d) - 1);  // exclusive
  int64_t s;
  if (v <= lo) {
    s = Bits(d) == 64 ? std::numeric_limits<int64_t>::min()
                      : -(int64_t{1} << (Bits(d) - 1));
  } else if (v >= hi) {
    s = Bits(d) == 64 ? std::numeric_limits<int64_t>::max()
                      : (int64_t{1} << (Bits(d) - 1)) - 1;
  } else {
    s = static_cast<int64_t>(v);
  }
  out->SetFromInt64(i, s);
}

}  // namespace

absl::StatusOr<Family> FamilyOf(DType dtype, absl::string_view what) {
  if (IsFloat(dtype)) return Family::kFloat;
  if (IsSignedInt(dtype)) return Family::kSigned;
  if (IsUnsignedInt(dtype) || dtype == DType::kBool) return Family::kUnsigned;
  if (IsComplex(dtype)) return Family::kComplex;
  return absl::UnimplementedError(
      absl::StrCat(what, ": dtype '", ShortName(dtype), "' is not supported"));
}

template <>
std::vector<double> Widen<double>(const Array& a) {
  std::vector<double> v(a.num_elements());
  for (int64_t i = 0; i < a.num_elements(); ++i) v[i] = RealAt(a, i);
  return v;
}

template <>
std::vector<int64_t> Widen<int64_t>(const Array& a) {
  std::vector<int64_t> v(a.num_elements());
  for (int64_t i = 0; i < a.num_elements(); ++i) v[i] = a.GetAsInt64(i);
  return v;
}

template <>
std::vector<uint64_t> Widen<uint64_t>(const Array& a) {
  std::vector<uint64_t> v(a.num_elements());
  for (int64_t i = 0; i < a.num_elements(); ++i) v[i] = a.GetAsUInt64(i);
  return v;
}

template <>
std::vector<Complex> Widen<Complex>(const Array& a) {
  std::vector<Complex> v(a.num_elements());
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    v[i] = IsComplex(a.dtype()) ? ComplexAt(a, i) : Complex(RealAt(a, i), 0);
  }
  return v;
}

Array Narrow(const std::vector<double>& v, DType dtype,
             std::vector<int64_t> shape) {
  Array out(dtype, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) out.SetFromDouble(i, v[i]);
  return out;
}

Array Narrow(const std::vector<int64_t>& v, DType dtype,
             std::vector<int64_t> shape) {
  Array out(dtype, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) out.SetFromInt64(i, v[i]);
  return out;
}

Array Narrow(const std::vector<uint64_t>& v, DType dtype,
             std::vector<int64_t> shape) {
  Array out(dtype, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) {
    out.SetFromInt64(i, static_cast<int64_t>(v[i]));
  }
  return out;
}

Array Narrow(const std::vector<Complex>& v, DType dtype,
             std::vector<int64_t> shape) {
  Array out(dtype, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) SetComplex(&out, i, v[i]);
  return out;
}

absl::StatusOr<Array> ConvertTo(const Array& a, DType dtype) {
  if (a.dtype() == dtype) return a;
  for (DType d : {a.dtype(), dtype}) {
    if (auto f = FamilyOf(d, "conversion"); !f.ok()) return f.status();
  }
  Array out(dtype, a.shape());
  const bool from_int = IsInteger(a.dtype()) || a.dtype() == DType::kBool;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    if (IsComplex(dtype)) {
      SetComplex(
          &out, i,
          IsComplex(a.dtype()) ? ComplexAt(a, i) : Complex(RealAt(a, i), 0));
    } else if (dtype == DType::kBool) {
      const bool nonzero = IsComplex(a.dtype()) ? ComplexAt(a, i) != Complex()
                           : from_int           ? a.GetAsUInt64(i) != 0
                                                : a.GetAsDouble(i) != 0.0;
      out.SetFromInt64(i, nonzero ? 1 : 0);
    } else if (IsFloat(dtype)) {
      out.SetFromDouble(i, RealAt(a, i));
    } else if (from_int) {
      out.SetFromInt64(i, a.GetAsInt64(i));
    } else {
      SetIntFromDouble(&out, i, a.GetAsDouble(i));
    }
  }
  return out;
}

bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& shape) {
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    if (++index[d] < shape[d]) return true;
    index[d] = 0;
  }
  return false;
}

int64_t FlatIndexIn(const std::vector<int64_t>& index,
                    const std::vector<int64_t>& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

absl::Status CheckRank(absl::string_view what, size_t got, size_t want) {
  if (got == want) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      what, " has ", got, " entries, expected one per dimension (", want, ")"));
}

absl::StatusOr<std::vector<int64_t>> IntListOr(const Params& params,
                                               absl::string_view key,
                                               size_t rank, int64_t fallback) {
  auto list = params.GetOptionalIntList(key);
  if (!list.ok()) return list.status();
  if (!list->has_value()) return std::vector<int64_t>(rank, fallback);
  if (auto s =
          CheckRank(absl::StrCat("param '", key, "'"), (*list)->size(), rank);
      !s.ok()) {
    return s;
  }
  return **list;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> GetPadding(
    const Params& params, absl::string_view key,
    const std::vector<int64_t>& dilated_input,
    const std::vector<int64_t>& effective_window,
    const std::vector<int64_t>& strides) {
  const size_t rank = dilated_input.size();
  auto value = params.Get(key);
  if (!value.ok()) return value.status();
  const ParamValue& p = **value;
  std::vector<std::pair<int64_t, int64_t>> pads;
  if (p.kind() == ParamValue::Kind::kString ||
      p.kind() == ParamValue::Kind::kName) {
    std::string mode = p.text();
    if (absl::string_view(mode).substr(0, 12) == "PaddingType.") {
      mode = mode.substr(12);
    }
    if (mode == "VALID") {
      pads.assign(rank, {0, 0});
      return pads;
    }
    if (mode == "SAME" || mode == "SAME_LOWER") {
      for (size_t d = 0; d < rank; ++d) {
        // lax.padtype_to_pads: out = ceil(in / stride).
        const int64_t out = (dilated_input[d] + strides[d] - 1) / strides[d];
        const int64_t total = std::max<int64_t>(
            0, (out - 1) * strides[d] + effective_window[d] - dilated_input[d]);
        const int64_t small = total / 2;
        pads.emplace_back(mode == "SAME" ? small : total - small,
                          mode == "SAME" ? total - small : small);
      }
      return pads;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("param '", key, "': unknown padding mode '", mode, "'"));
  }
  if (p.kind() != ParamValue::Kind::kTuple &&
      p.kind() != ParamValue::Kind::kList) {
    return absl::InvalidArgumentError(absl::StrCat(
        "param '", key, "' should be ((lo, hi), ...), got ", p.ToString()));
  }
  for (const ParamValue& pair : p.items()) {
    auto lo_hi = pair.AsIntList(absl::StrCat("param '", key, "' entry"));
    if (!lo_hi.ok()) return lo_hi.status();
    if (lo_hi->size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "param '", key, "' entry ", pair.ToString(), " is not (lo, hi)"));
    }
    pads.emplace_back((*lo_hi)[0], (*lo_hi)[1]);
  }
  if (auto s = CheckRank(absl::StrCat("param '", key, "'"), pads.size(), rank);
      !s.ok()) {
    return s;
  }
  return pads;
}

absl::StatusOr<WindowSpec> GetWindowSpec(const Params& params, size_t rank) {
  WindowSpec spec;
  auto dims = params.GetIntList("window_dimensions");
  if (!dims.ok()) return dims.status();
  if (auto s = CheckRank("param 'window_dimensions'", dims->size(), rank);
      !s.ok()) {
    return s;
  }
  spec.dimensions = *std::move(dims);
  auto strides = IntListOr(params, "window_strides", rank, 1);
  if (!strides.ok()) return strides.status();
  spec.strides = *std::move(strides);
  auto base = IntListOr(params, "base_dilation", rank, 1);
  if (!base.ok()) return base.status();
  spec.base_dilation = *std::move(base);
  auto wdil = IntListOr(params, "window_dilation", rank, 1);
  if (!wdil.ok()) return wdil.status();
  spec.window_dilation = *std::move(wdil);
  for (size_t d = 0; d < rank; ++d) {
    if (spec.strides[d] < 1 || spec.base_dilation[d] < 1 ||
        spec.window_dilation[d] < 1 || spec.dimensions[d] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "window params of dimension ", d,
          " must be positive (strides, dilations) / non-negative (sizes)"));
    }
  }
  if (params.Find("padding") == nullptr) {
    spec.padding.assign(rank, {0, 0});
  } else {
    // SAME padding (only in old texts) is resolved against the undilated
    // window; the caller never needs the input sizes otherwise.
    auto pads = GetPadding(params, "padding", std::vector<int64_t>(rank, 1),
                           spec.dimensions, spec.strides);
    if (!pads.ok()) return pads.status();
    spec.padding = *std::move(pads);
  }
  return spec;
}

std::vector<int64_t> WindowOutputShape(
    const WindowSpec& spec, const std::vector<int64_t>& operand_shape) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < operand_shape.size(); ++d) {
    const int64_t dilated =
        operand_shape[d] == 0
            ? 0
            : (operand_shape[d] - 1) * spec.base_dilation[d] + 1;
    const int64_t padded =
        dilated + spec.padding[d].first + spec.padding[d].second;
    const int64_t window =
        spec.dimensions[d] == 0
            ? 0
            : (spec.dimensions[d] - 1) * spec.window_dilation[d] + 1;
    out.push_back(padded < window ? 0
                                  : (padded - window) / spec.strides[d] + 1);
  }
  return out;
}

std::vector<int64_t> WindowElements(const WindowSpec& spec,
                                    const std::vector<int64_t>& operand_shape,
                                    const std::vector<int64_t>& out_index) {
  std::vector<int64_t> result;
  const size_t rank = operand_shape.size();
  for (int64_t d : spec.dimensions) {
    if (d == 0) return result;
  }
  std::vector<int64_t> k(rank, 0);
  std::vector<int64_t> operand_index(rank);
  do {
    bool valid = true;
    for (size_t d = 0; d < rank && valid; ++d) {
      // Position in the padded, base-dilated operand, then in the dilated
      // operand; holes between dilated elements are not operand elements.
      const int64_t padded =
          out_index[d] * spec.strides[d] + k[d] * spec.window_dilation[d];
      const int64_t dilated = padded - spec.padding[d].first;
      if (dilated < 0 || dilated % spec.base_dilation[d] != 0) {
        valid = false;
        break;
      }
      operand_index[d] = dilated / spec.base_dilation[d];
      if (operand_index[d] >= operand_shape[d]) valid = false;
    }
    if (valid) result.push_back(FlatIndexIn(operand_index, operand_shape));
  } while (NextIndex(k, spec.dimensions));
  return result;
}

Array ScalarAt(const Array& a, int64_t flat) {
  Array s(a.dtype(), {});
  const size_t size = ItemSize(a.dtype());
  std::memcpy(s.data(), a.data() + flat * size, size);
  return s;
}

void StoreScalar(const Array& scalar, int64_t flat, Array* out) {
  const size_t size = ItemSize(out->dtype());
  std::memcpy(out->data() + flat * size, scalar.data(), size);
}

}  // namespace jax2onnx::jaxpr::linalg_internal
