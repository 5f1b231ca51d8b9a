// u64 ordering for the shared recipes: ONNX Runtime has no ReduceMax/Min,
// ArgMax/Min or TopK kernel for uint64, and no wider integer holds u64. Read
// as i64 (Cast keeps the bits) and shifted by INT64_MIN (a wrapping add,
// which flips the sign bit), u64 values keep their order as i64 values; the
// same add and a Cast back restore the u64 bits exactly.
#ifndef JAX2ONNX_PLUGIN_U64_ORDER_H_
#define JAX2ONNX_PLUGIN_U64_ORDER_H_

#include <cstdint>
#include <limits>

#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "plugin/elementwise_plan.h"
#include "plugin/emit.h"

namespace jax2onnx::plugin {

namespace u64_order_internal {
template <class E>
typename E::Value AddInt64Min(E& e, typename E::Value v) {
  return e.Op(
      "Add",
      {v, e.Const(jaxpr::Array::ScalarFromInt64(
              jaxpr::DType::kI64, std::numeric_limits<int64_t>::min()))},
      jaxpr::DType::kI64);
}
}  // namespace u64_order_internal

// u64 -> i64 with the same order.
template <class E>
typename E::Value U64ToOrderedI64(E& e, typename E::Value x) {
  typename E::Value bits =
      e.Op("Cast", {x}, jaxpr::DType::kI64,
           {OpAttr::Int("to", elementwise::OnnxType(jaxpr::DType::kI64))});
  return u64_order_internal::AddInt64Min(e, bits);
}

// The inverse of U64ToOrderedI64.
template <class E>
typename E::Value OrderedI64ToU64(E& e, typename E::Value key) {
  return e.Op("Cast", {u64_order_internal::AddInt64Min(e, key)},
              jaxpr::DType::kU64,
              {OpAttr::Int("to", elementwise::OnnxType(jaxpr::DType::kU64))});
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_U64_ORDER_H_
