#include "jaxpr/literal_value.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace jax2onnx::jaxpr {

absl::StatusOr<Array> LiteralValue(const Literal& lit, const Eqn* eqn,
                                   const std::vector<Array>* elided) {
  if (lit.kind == Literal::Kind::kElidedArray) {
    if (elided == nullptr || lit.elided_index < 0 ||
        lit.elided_index >= static_cast<int>(elided->size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("literal ", lit.text, " #", lit.elided_index,
                       " is elided in the text and its value (npz literal_",
                       lit.elided_index, ") was not provided"));
    }
    return (*elided)[lit.elided_index];
  }
  const DType dtype = LiteralDType(lit, eqn);
  if (ItemSize(dtype) == 0) {
    return absl::UnimplementedError(
        absl::StrCat("literal of unsupported dtype '",
                     lit.aval ? lit.aval->ToString() : "?", "'"));
  }
  Array out(dtype, {});
  switch (lit.kind) {
    case Literal::Kind::kBool:
      out.SetFromInt64(0, lit.bool_value ? 1 : 0);
      break;
    case Literal::Kind::kInt:
      if (IsFloat(dtype) || IsComplex(dtype)) {
        out.SetFromDouble(0, static_cast<double>(lit.int_value));
      } else if (dtype == DType::kU64) {
        out.typed_data<uint64_t>()[0] =
            lit.uint_value != 0 ? lit.uint_value
                                : static_cast<uint64_t>(lit.int_value);
      } else {
        out.SetFromInt64(0, lit.int_value);
      }
      break;
    case Literal::Kind::kFloat:
      out.SetFromDouble(0, lit.float_value);
      break;
    case Literal::Kind::kComplex:
      out.SetFromDouble(0, lit.float_value);
      if (dtype == DType::kC64) {
        out.typed_data<float>()[1] = static_cast<float>(lit.imag_value);
      } else if (dtype == DType::kC128) {
        out.typed_data<double>()[1] = lit.imag_value;
      }
      break;
    case Literal::Kind::kElidedArray:
      break;
  }
  return out;
}

}  // namespace jax2onnx::jaxpr
