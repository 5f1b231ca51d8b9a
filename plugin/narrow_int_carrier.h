// int4/uint4 and int2/uint2 below the first ONNX opset that has them.
//
// ONNX has INT4/UINT4 from opset 21 and INT2/UINT2 from opset 25. Below
// those opsets both pipelines carry such values exactly in INT8/UINT8: one
// value per byte, sign-extended for the signed types (how ml_dtypes stores
// int4/int2 arrays in memory, so a user feeds the int8/uint8 view of their
// array and reads the model's int8/uint8 output as the narrow type). The
// converters emit the narrow element types as at the later opsets (every
// computation already runs in i32 and is wrapped to the narrow range before
// its Cast back, plugin/low_precision.h); CarryNarrowIntsBelowTheirOpset
// then retypes the finished model. At opsets that have the types it changes
// nothing.
#ifndef JAX2ONNX_PLUGIN_NARROW_INT_CARRIER_H_
#define JAX2ONNX_PLUGIN_NARROW_INT_CARRIER_H_

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::plugin {

// The first default-domain opset whose ONNX has the narrow integer element
// type `elem_type` (INT4/UINT4: 21, INT2/UINT2: 25); 0 for other types.
int NarrowIntFirstOpset(int elem_type);

// Below the model's opset for each of INT4, UINT4, INT2, UINT2: every
// declared type (graph inputs, outputs, value_info, initializers, Constant
// and ConstantOfShape values, Cast targets) becomes INT8 or UINT8, packed
// initializer data is unpacked one value per byte, and every Cast to the
// type is preceded by the wrap to the narrow range (x mod 2^bits, then
// sign-extended) unless its input already is such a wrap. At opset 17,
// where ONNX has no bitwise operators, the wraps' BitwiseAnd/BitwiseXor with
// constant masks are rewritten as the equal Mod/Add forms. Error for an
// initializer whose data lies outside the model (none is written yet).
absl::Status CarryNarrowIntsBelowTheirOpset(onnx::ModelProto& model);

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_NARROW_INT_CARRIER_H_
