// Shared helpers of the op translators: types, dense constants, attribute
// text, and params in the shapes JAX prints.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {

absl::string_view StripSpace(absl::string_view s) {
  return absl::StripAsciiWhitespace(s);
}

absl::StatusOr<DType> ElementDType(absl::string_view e) {
  static const std::pair<const char*, DType> kTable[] = {
      {"i1", DType::kBool},    {"i8", DType::kI8},     {"i16", DType::kI16},
      {"i32", DType::kI32},    {"i64", DType::kI64},   {"si8", DType::kI8},
      {"si16", DType::kI16},   {"si32", DType::kI32},  {"si64", DType::kI64},
      {"ui8", DType::kU8},     {"ui16", DType::kU16},  {"ui32", DType::kU32},
      {"ui64", DType::kU64},   {"f16", DType::kF16},   {"bf16", DType::kBF16},
      {"f32", DType::kF32},    {"f64", DType::kF64},
      {"complex<f32>", DType::kC64}, {"complex<f64>", DType::kC128},
  };
  for (const auto& [name, d] : kTable) {
    if (e == name) return d;
  }
  // The narrow types (MLIR's builtin names) onto JAX's (jaxpr/narrow_dtype.h);
  // whether ONNX can hold one is decided at conversion (docs/dtypes.md).
  using jaxpr::NarrowFormat;
  static const std::pair<const char*, NarrowFormat> kNarrow[] = {
      {"i4", NarrowFormat::kI4},
      {"si4", NarrowFormat::kI4},
      {"ui4", NarrowFormat::kU4},
      {"i2", NarrowFormat::kI2},
      {"si2", NarrowFormat::kI2},
      {"ui2", NarrowFormat::kU2},
      {"f8E4M3FN", NarrowFormat::kF8E4M3FN},
      {"f8E5M2", NarrowFormat::kF8E5M2},
      {"f8E4M3FNUZ", NarrowFormat::kF8E4M3FNUZ},
      {"f8E5M2FNUZ", NarrowFormat::kF8E5M2FNUZ},
      {"f8E4M3B11FNUZ", NarrowFormat::kF8E4M3B11FNUZ},
      {"f8E4M3", NarrowFormat::kF8E4M3},
      {"f8E3M4", NarrowFormat::kF8E3M4},
      {"f8E8M0FNU", NarrowFormat::kF8E8M0FNU},
      {"f4E2M1FN", NarrowFormat::kF4E2M1FN},
      {"f6E2M3FN", NarrowFormat::kF6E2M3FN},
      {"f6E3M2FN", NarrowFormat::kF6E3M2FN},
  };
  for (const auto& [name, format] : kNarrow) {
    if (e == name) return jaxpr::NarrowDType(format);
  }
  return absl::UnimplementedError(
      absl::StrCat("element type ", e, " has no ONNX counterpart"));
}

absl::StatusOr<Aval> AvalOfType(const MlirType& type) {
  if (type.kind == MlirType::Kind::kToken) {
    Aval a;
    a.kind = Aval::Kind::kToken;
    a.opaque_text = "Tok";
    return a;
  }
  if (type.kind != MlirType::Kind::kTensor &&
      type.kind != MlirType::Kind::kScalar) {
    return absl::UnimplementedError(
        absl::StrCat("type ", type.text, " is not supported"));
  }
  J2O_ASSIGN_OR_RETURN(DType d, ElementDType(type.element));
  std::vector<jaxpr::DimExpr> shape;
  for (int64_t dim : type.dims) {
    if (dim == -2) {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension out of range in ", type.text));
    }
    if (dim < 0) {  // `?`: a placeholder (translate_symbolic.cc)
      shape.push_back(jaxpr::DimExpr::Symbol(kUnknownDim));
      continue;
    }
    shape.push_back(jaxpr::DimExpr::Constant(dim));
  }
  return Aval::Shaped(d, std::move(shape));
}

std::vector<absl::string_view> SplitTopLevel(absl::string_view s, char sep) {
  std::vector<absl::string_view> out;
  int depth = 0;
  size_t start = 0;
  bool in_str = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_str) {
      if (c == '\\') ++i;
      else if (c == '"') in_str = false;
      continue;
    }
    if (c == '"') in_str = true;
    else if (c == '(' || c == '[' || c == '{' || c == '<') ++depth;
    else if (c == ')' || c == ']' || c == '}' || (c == '>' && (i == 0 || s[i - 1] != '-'))) --depth;
    else if (c == sep && depth == 0) {
      out.push_back(StripSpace(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  absl::string_view last = StripSpace(s.substr(start));
  if (!last.empty() || !out.empty()) out.push_back(last);
  return out;
}

// Drops a trailing `: type` at depth 0.
static absl::string_view DropTypeSuffix(absl::string_view s) {
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '(' || c == '[' || c == '{' || c == '<') ++depth;
    else if (c == ')' || c == ']' || c == '}' || c == '>') --depth;
    else if (c == ':' && depth == 0) return StripSpace(s.substr(0, i));
  }
  return StripSpace(s);
}

absl::StatusOr<int64_t> ParseIntScalar(absl::string_view raw) {
  absl::string_view s = DropTypeSuffix(raw);
  if (s == "true") return 1;
  if (s == "false") return 0;
  int64_t v;
  if (absl::SimpleAtoi(s, &v)) return v;
  return absl::InvalidArgumentError(absl::StrCat("expected an integer, found `", s, "`"));
}

absl::StatusOr<std::vector<int64_t>> ParseIntList(absl::string_view raw) {
  absl::string_view s = DropTypeSuffix(raw);
  if (absl::StartsWith(s, "array<")) {
    s = s.substr(6, s.size() - 7);
    size_t colon = s.find(':');
    s = colon == absl::string_view::npos ? absl::string_view() : s.substr(colon + 1);
  } else if (absl::StartsWith(s, "dense<")) {
    s = s.substr(6, s.size() - 7);
  }
  std::vector<int64_t> out;
  std::string cleaned;
  for (char c : s) cleaned.push_back((c == '[' || c == ']') ? ' ' : c);
  for (absl::string_view part : SplitTopLevel(cleaned, ',')) {
    part = StripSpace(part);
    if (part.empty()) continue;
    int64_t v;
    if (part == "true") v = 1;
    else if (part == "false") v = 0;
    else if (!absl::SimpleAtoi(part, &v)) {
      return absl::InvalidArgumentError(absl::StrCat("expected integers, found `", part, "`"));
    }
    out.push_back(v);
  }
  return out;
}

// IntMatrixAttr (translate_internal.h).
absl::StatusOr<std::vector<std::vector<int64_t>>> IntMatrixAttr(
    OpContext& ctx, absl::string_view key) {
  J2O_ASSIGN_OR_RETURN(absl::string_view raw, ctx.Attr(key));
  // dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>
  std::vector<std::vector<int64_t>> rows;
  std::vector<int64_t> row;
  int depth = 0;
  int64_t v = 0;
  bool in_num = false, neg = false;
  const size_t stop =
      raw.find(':') == absl::string_view::npos ? raw.size() : raw.find(':');
  for (size_t i = 0; i < stop; ++i) {
    const char c = raw[i];
    if (c >= '0' && c <= '9') {
      v = v * 10 + (c - '0');
      in_num = true;
      continue;
    }
    if (in_num) {
      row.push_back(neg ? -v : v);
      v = 0;
      in_num = neg = false;
    }
    if (c == '-') neg = true;
    if (c == '[') ++depth;
    if (c == ']') {
      if (depth == 2) {
        rows.push_back(row);
        row.clear();
      }
      --depth;
    }
  }
  if (rows.empty() && !row.empty()) rows.push_back(row);
  return rows;
}

std::optional<absl::string_view> StructField(absl::string_view raw,
                                             absl::string_view key) {
  size_t lt = raw.find('<');
  if (lt == absl::string_view::npos) return std::nullopt;
  absl::string_view body = raw.substr(lt + 1);
  if (!body.empty() && body.back() == '>') body.remove_suffix(1);
  for (absl::string_view part : SplitTopLevel(body, ',')) {
    size_t eq = part.find('=');
    if (eq == absl::string_view::npos) continue;
    if (StripSpace(part.substr(0, eq)) == key) return StripSpace(part.substr(eq + 1));
  }
  return std::nullopt;
}

// ---- dense constants ----

namespace {

int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

absl::Status StoreScalar(jaxpr::Array& a, int64_t i, absl::string_view tok,
                         bool imag_part) {
  DType d = a.dtype();
  tok = StripSpace(tok);
  bool hex = absl::StartsWith(tok, "0x") || absl::StartsWith(tok, "0X");
  const int item = jaxpr::ItemSize(d);
  uint8_t* base = a.data() + i * item;
  if (jaxpr::IsComplex(d)) {
    const int part = item / 2;
    uint8_t* dst = base + (imag_part ? part : 0);
    if (hex) {
      uint64_t bits = std::strtoull(std::string(tok.substr(2)).c_str(), nullptr, 16);
      std::memcpy(dst, &bits, part);
      return absl::OkStatus();
    }
    double v = std::strtod(std::string(tok).c_str(), nullptr);
    if (part == 4) {
      float f = static_cast<float>(v);
      std::memcpy(dst, &f, 4);
    } else {
      std::memcpy(dst, &v, 8);
    }
    return absl::OkStatus();
  }
  if (hex) {
    uint64_t bits = std::strtoull(std::string(tok.substr(2)).c_str(), nullptr, 16);
    std::memcpy(base, &bits, item);  // little-endian hosts
    return absl::OkStatus();
  }
  if (d == DType::kBool) {
    if (tok == "true") base[0] = 1;
    else if (tok == "false") base[0] = 0;
    else {
      int64_t v;
      if (!absl::SimpleAtoi(tok, &v)) {
        return absl::InvalidArgumentError(absl::StrCat("bad i1 element `", tok, "`"));
      }
      base[0] = v != 0;
    }
    return absl::OkStatus();
  }
  if (jaxpr::IsFloat(d) || jaxpr::IsNarrowFloat(d)) {
    std::string s(tok);
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str()) {
      return absl::InvalidArgumentError(absl::StrCat("bad float element `", tok, "`"));
    }
    a.SetFromDouble(i, v);
    return absl::OkStatus();
  }
  if (d == DType::kU64) {
    uint64_t u;
    if (!absl::SimpleAtoi(tok, &u)) {
      int64_t s;
      if (!absl::SimpleAtoi(tok, &s)) {
        return absl::InvalidArgumentError(absl::StrCat("bad integer element `", tok, "`"));
      }
      u = static_cast<uint64_t>(s);
    }
    std::memcpy(base, &u, 8);
    return absl::OkStatus();
  }
  int64_t v;
  if (!absl::SimpleAtoi(tok, &v)) {
    uint64_t u;
    if (!absl::SimpleAtoi(tok, &u)) {
      return absl::InvalidArgumentError(absl::StrCat("bad integer element `", tok, "`"));
    }
    v = static_cast<int64_t>(u);
  }
  a.SetFromInt64(i, v);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<jaxpr::Array> ParseDense(absl::string_view raw,
                                        const MlirType& type) {
  J2O_ASSIGN_OR_RETURN(Aval aval, AvalOfType(type));
  std::vector<int64_t> shape = StaticDims(aval);
  // A constant is materialised: refuse absurd sizes instead of failing to
  // allocate them.
  J2O_RETURN_IF_ERROR(jaxpr::CheckedByteSize(aval.dtype, shape, int64_t{4} << 30).status());
  jaxpr::Array a(aval.dtype, shape);
  const int64_t n = a.num_elements();
  const int item = jaxpr::ItemSize(aval.dtype);
  absl::string_view s = DropTypeSuffix(raw);
  if (absl::StartsWith(s, "dense<")) {
    s = s.substr(6, s.size() - 7);
  } else if (absl::StartsWith(s, "dense_resource<")) {
    return absl::UnimplementedError("dense_resource constants (blob data) are not supported");
  }
  s = StripSpace(s);
  if (absl::StartsWith(s, "\"0x") || absl::StartsWith(s, "\"0X")) {
    absl::string_view hex = s.substr(3, s.size() - 4);
    if (hex.size() % 2 != 0) return absl::InvalidArgumentError("odd hex digit count");
    const size_t nbytes = hex.size() / 2;
    std::vector<uint8_t> bytes(nbytes);
    for (size_t k = 0; k < nbytes; ++k) {
      int hi = HexVal(hex[2 * k]), lo = HexVal(hex[2 * k + 1]);
      if (hi < 0 || lo < 0) return absl::InvalidArgumentError("bad hex digit");
      bytes[k] = static_cast<uint8_t>(hi * 16 + lo);
    }
    const size_t total = static_cast<size_t>(n) * item;
    if (nbytes == total) {
      if (total) std::memcpy(a.data(), bytes.data(), total);
    } else if (nbytes == static_cast<size_t>(item)) {  // splat
      for (int64_t i = 0; i < n; ++i) std::memcpy(a.data() + i * item, bytes.data(), item);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "hex constant holds ", nbytes, " bytes; ", type.text, " needs ", total));
    }
    return a;
  }
  // Element tokens, flattened; complex elements are `(re, im)`.
  std::vector<std::pair<absl::string_view, absl::string_view>> elems;
  const bool complex = jaxpr::IsComplex(aval.dtype);
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '[' || c == ']' || c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '(' && complex) {
      size_t close = s.find(')', i);
      if (close == absl::string_view::npos) return absl::InvalidArgumentError("unterminated complex element");
      absl::string_view inner = s.substr(i + 1, close - i - 1);
      size_t comma = inner.find(',');
      if (comma == absl::string_view::npos) return absl::InvalidArgumentError("complex element needs (re, im)");
      elems.emplace_back(inner.substr(0, comma), inner.substr(comma + 1));
      i = close + 1;
      continue;
    }
    size_t j = i;
    while (j < s.size() && s[j] != ',' && s[j] != ']' && s[j] != ' ' && s[j] != '\n') ++j;
    elems.emplace_back(s.substr(i, j - i), absl::string_view());
    i = j;
  }
  if (static_cast<int64_t>(elems.size()) != n && elems.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "constant holds ", elems.size(), " elements; ", type.text, " has ", n));
  }
  if (elems.size() == 1 && n != 1) {
    if (n == 0) return a;
    jaxpr::Array one(aval.dtype, {});
    J2O_RETURN_IF_ERROR(StoreScalar(one, 0, elems[0].first, false));
    if (complex) J2O_RETURN_IF_ERROR(StoreScalar(one, 0, elems[0].second, true));
    for (int64_t k = 0; k < n; ++k) std::memcpy(a.data() + k * item, one.data(), item);
    return a;
  }
  for (int64_t k = 0; k < n; ++k) {
    J2O_RETURN_IF_ERROR(StoreScalar(a, k, elems[k].first, false));
    if (complex) J2O_RETURN_IF_ERROR(StoreScalar(a, k, elems[k].second, true));
  }
  return a;
}

// ---- params ----

ParamValue IntTuple(const std::vector<int64_t>& v) {
  std::vector<ParamValue> items;
  for (int64_t x : v) items.push_back(ParamValue::Int(x));
  return ParamValue::Tuple(std::move(items));
}
ParamValue IntList(const std::vector<int64_t>& v) {
  std::vector<ParamValue> items;
  for (int64_t x : v) items.push_back(ParamValue::Int(x));
  return ParamValue::List(std::move(items));
}
ParamValue PairTuple(const std::vector<std::pair<int64_t, int64_t>>& v) {
  std::vector<ParamValue> items;
  for (auto [a, b] : v) items.push_back(IntTuple({a, b}));
  return ParamValue::Tuple(std::move(items));
}
ParamValue Name(absl::string_view n) { return ParamValue::Name(std::string(n)); }
ParamValue NumpyDType(DType d) { return Name(jaxpr::NumpyName(d)); }
ParamValue JaxprParam(std::shared_ptr<jaxpr::ClosedJaxpr> j) {
  return ParamValue::Jaxpr(std::move(j));
}
std::vector<int64_t> StaticDims(const Aval& aval) {
  std::vector<int64_t> out;
  for (const auto& d : aval.shape) out.push_back(d.is_constant() ? d.constant_value() : -1);
  return out;
}
Aval ShapedAval(DType dtype, const std::vector<int64_t>& shape) {
  return Aval::Static(dtype, shape);
}
Aval WithDType(const Aval& aval, DType dtype) {
  Aval a = aval;
  a.dtype = dtype;
  a.dtype_name = std::string(jaxpr::ShortName(dtype));
  return a;
}

Val EmitBroadcastInDim(OpContext& ctx, const Val& x,
                       const std::vector<int64_t>& broadcast_dimensions,
                       const Aval& out) {
  Params p;
  p.Set("broadcast_dimensions", IntTuple(broadcast_dimensions));
  p.Set("shape", DimsParam(out.shape));
  p.Set("sharding", ParamValue::None());
  return ctx.Emit1("broadcast_in_dim", std::move(p), {x}, out);
}

Val EmitReshape(OpContext& ctx, const Val& x, const Aval& out) {
  Params p;
  p.Set("dimensions", ParamValue::None());
  p.Set("new_sizes", DimsParam(out.shape));
  p.Set("sharding", ParamValue::None());
  return ctx.Emit1("reshape", std::move(p), {x}, out);
}

Val EmitIota(OpContext& ctx, const Aval& out, int64_t dimension) {
  Params p;
  p.Set("dimension", ParamValue::Int(dimension));
  p.Set("dtype", NumpyDType(out.dtype));
  p.Set("shape", DimsParam(out.shape));
  p.Set("sharding", ParamValue::None());
  return ctx.Emit1("iota", std::move(p), {}, out);
}

Val ConvertTo(OpContext& ctx, const Val& v, DType dtype) {
  if (v.aval.dtype == dtype) return v;
  Params p;
  p.Set("new_dtype", NumpyDType(dtype));
  p.Set("sharding", ParamValue::None());
  p.Set("weak_type", ParamValue::Bool(false));
  return ctx.Emit1("convert_element_type", std::move(p), {v},
                   WithDType(v.aval, dtype));
}

}  // namespace jax2onnx::stablehlo
