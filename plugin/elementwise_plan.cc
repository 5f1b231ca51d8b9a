// Dtype tables of the elementwise lowering recipes (see elementwise_plan.h).
// The carriers reflect which dtypes ONNX Runtime 1.30's CPU kernels accept,
// probed op by op: Where takes f16/f32/f64/i32/i64/u8; Max/Min/Clip lack
// i16/u16; BitShift takes only u8/u32/u64; almost nothing takes bf16.
#include "plugin/elementwise_plan.h"

#include "absl/strings/match.h"
#include "glog/logging.h"
#include "jaxpr/params.h"
#include "plugin/onnx_types.h"

namespace jax2onnx::plugin::elementwise {

DType FloatCompute(DType d) {
  return d == DType::kF16 || d == DType::kBF16 ? DType::kF32 : d;
}

DType WhereCarrier(DType d) {
  switch (d) {
    case DType::kBool:
    case DType::kI8:
      return DType::kU8;
    case DType::kI16:
    case DType::kU16:
      return DType::kI32;
    case DType::kU32:
    case DType::kU64:
      return DType::kI64;
    case DType::kBF16:
      return DType::kF32;
    default:
      return d;
  }
}

DType OrderCarrier(DType d) {
  switch (d) {
    case DType::kI16:
    case DType::kU16:
      return DType::kI32;
    case DType::kF16:
    case DType::kBF16:
      return DType::kF32;
    default:
      return d;
  }
}

DType BitCarrier(DType d) {
  switch (d) {
    case DType::kI8:
    case DType::kU8:
      return DType::kU8;
    case DType::kI16:
    case DType::kU16:
    case DType::kI32:
    case DType::kU32:
      return DType::kU32;
    default:
      return DType::kU64;
  }
}

int BitWidth(DType d) { return jaxpr::ItemSize(d) * 8; }

int OnnxType(DType d) {
  absl::StatusOr<int> t = OnnxDType(d);
  CHECK(t.ok()) << "elementwise recipe used dtype " << jaxpr::ShortName(d)
                << " that ONNX cannot hold";
  return *t;
}

int ValueBits(DType d) { return BitWidth(d) - (jaxpr::IsSignedInt(d) ? 1 : 0); }

int MantissaBits(DType d) {
  switch (d) {
    case DType::kF16:
      return 11;
    case DType::kBF16:
      return 8;
    case DType::kF64:
      return 53;
    default:
      return 24;
  }
}

int MinNormalExponent(DType d) {
  switch (d) {
    case DType::kF16:
      return -14;
    case DType::kF64:
      return -1022;
    default:
      return -126;  // f32, bf16
  }
}

absl::Status Refuse(const jaxpr::Eqn& eqn, DType d, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat("'", eqn.primitive, "' on ",
                                               jaxpr::ShortName(d), ": ", why));
}

absl::StatusOr<int> RoundingMethod(const jaxpr::Eqn& eqn) {
  const jaxpr::ParamValue* p = eqn.params.Find("rounding_method");
  if (p == nullptr) return 0;
  if (p->kind() == jaxpr::ParamValue::Kind::kInt) {
    if (p->int_value() == 0 || p->int_value() == 1) {
      return static_cast<int>(p->int_value());
    }
  } else {
    const std::string text = p->ToString();
    if (absl::StrContains(text, "TO_NEAREST_EVEN")) return 1;
    if (absl::StrContains(text, "AWAY_FROM_ZERO")) return 0;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'round' has unknown rounding_method=", p->ToString()));
}

}  // namespace jax2onnx::plugin::elementwise
