#include "plugin/onnx_types.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/narrow_dtype.h"
#include "onnx/onnx_pb.h"
#include "plugin/onnx_raw_data.h"

namespace jax2onnx::plugin {

using jaxpr::DType;
using onnx::TensorProto;

absl::StatusOr<int> OnnxDType(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return TensorProto::BOOL;
    case DType::kI8:
      return TensorProto::INT8;
    case DType::kI16:
      return TensorProto::INT16;
    case DType::kI32:
      return TensorProto::INT32;
    case DType::kI64:
      return TensorProto::INT64;
    case DType::kU8:
      return TensorProto::UINT8;
    case DType::kU16:
      return TensorProto::UINT16;
    case DType::kU32:
      return TensorProto::UINT32;
    case DType::kU64:
      return TensorProto::UINT64;
    case DType::kF16:
      return TensorProto::FLOAT16;
    case DType::kBF16:
      return TensorProto::BFLOAT16;
    case DType::kF32:
      return TensorProto::FLOAT;
    case DType::kF64:
      return TensorProto::DOUBLE;
    case DType::kC64:
      return TensorProto::FLOAT;
    case DType::kC128:
      return TensorProto::DOUBLE;
    default:
      if (auto format = jaxpr::NarrowFormatOf(dtype)) {
        const jaxpr::NarrowFormatInfo& info = jaxpr::Info(*format);
        if (info.onnx_type != 0) return info.onnx_type;
      }
      return absl::UnimplementedError(
          absl::StrCat("dtype '", jaxpr::ShortName(dtype),
                       "' has no ONNX element type"));
  }
}

std::optional<DType> JaxDType(int onnx_dtype) {
  for (DType d :
       {DType::kBool, DType::kI8, DType::kI16, DType::kI32, DType::kI64,
        DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kF16,
        DType::kBF16, DType::kF32, DType::kF64}) {
    if (*OnnxDType(d) == onnx_dtype) return d;
  }
  for (const jaxpr::NarrowFormatInfo& info : jaxpr::AllNarrowFormats()) {
    if (info.onnx_type != 0 && info.onnx_type == onnx_dtype) {
      return jaxpr::NarrowDType(info.format);
    }
  }
  return std::nullopt;
}

DType ComplexPartDType(DType dtype) {
  if (dtype == DType::kC64) return DType::kF32;
  if (dtype == DType::kC128) return DType::kF64;
  return dtype;
}

jaxpr::Aval RealifiedAval(const jaxpr::Aval& aval) {
  if (!aval.is_shaped() || !jaxpr::IsComplex(aval.dtype)) return aval;
  jaxpr::Aval real = aval;
  real.dtype = ComplexPartDType(aval.dtype);
  real.dtype_name = std::string(jaxpr::ShortName(real.dtype));
  real.shape.push_back(jaxpr::DimExpr::Constant(2));
  if (!real.dim_sharding.empty()) real.dim_sharding.push_back("");
  return real;
}

std::vector<int64_t> OnnxDims(DType dtype, const std::vector<int64_t>& shape) {
  std::vector<int64_t> dims = shape;
  if (jaxpr::IsComplex(dtype)) dims.push_back(2);
  return dims;
}

std::string OnnxRawData(const jaxpr::Array& array) {
  // bytes(), not data(): a copy of the bytes needs no aligned view of them.
  const auto* bytes = reinterpret_cast<const char*>(array.bytes().data());
  const std::optional<jaxpr::NarrowFormat> format =
      jaxpr::NarrowFormatOf(array.dtype());
  const int bits = format ? jaxpr::Info(*format).bits : 8;
  if (bits != 4 && bits != 2) return std::string(bytes, array.num_bytes());
  const int per_byte = 8 / bits;
  const int64_t n = array.num_elements();
  std::string packed((n + per_byte - 1) / per_byte, '\0');
  const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t code = array.data()[i] & mask;
    packed[i / per_byte] = static_cast<char>(
        static_cast<uint8_t>(packed[i / per_byte]) |
        static_cast<uint8_t>(code << (bits * (i % per_byte))));
  }
  return packed;
}

int IrVersionForOpset(int opset) {
  // ONNX releases: 1.12/1.13 (opset 17/18) IR 8; 1.14/1.15 (19/20) IR 9;
  // 1.16/1.17 (21/22) IR 10; 1.18 (23) IR 11; later opsets IR 11 as the
  // lowest IR that every newer runtime reads for them.
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  if (opset <= 22) return 10;
  return 11;
}

absl::Status CheckOpset(int opset) {
  if (opset < kMinOpset || opset > kMaxOpset) {
    return absl::InvalidArgumentError(absl::StrCat(
        "opset ", opset, " is not supported: use ", kMinOpset, "..",
        kMaxOpset));
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx::plugin
