// JAX's float4_e2m1fn (ml_dtypes; ONNX FLOAT4E2M1) without ONNX Runtime's
// FLOAT4E2M1 support, which ONNX Runtime 1.30 lacks entirely: its CPU
// provider has no Cast kernel for the type (probed: "Could not find an
// implementation for Cast(23)"), so no model holding a FLOAT4E2M1 value runs.
//
// So an f4 value never appears in the finished model. Inside the graph it is
// carried in an f32 container (every f4 value, -0 included, is an f32), and
// each conversion to f4 is computed exactly as ml_dtypes 0.6 rounds
// (jaxpr/narrow_dtype.cc NarrowFloatFromDouble): round to nearest, ties to
// even, on the grid {0, 0.5, 1, 1.5, 2, 3, 4, 6}; past 6 (and +-inf) the
// largest value +-6 (the format has no infinity); the sign kept (-0 too);
// NaN becomes -0, ml_dtypes' code for +NaN (-NaN gives +0 there, but ONNX
// cannot observe the sign of a NaN, so -NaN gives -0 here too).
//
// Graph inputs and outputs of type f4 are UINT8 tensors of codes, the byte
// ml_dtypes stores per element (`x.view(np.uint8)` of a float4_e2m1fn
// array): the code in the low 4 bits (sign, 2 exponent bits, 1 mantissa
// bit); the upper bits of an input byte are ignored, those of an output are
// 0. Each such input and output has the doc_string kFloat4CodesDoc, and the
// model lists their names in the metadata entry kFloat4CodesMetadataKey.
// The ops used exist from opset 13, so this works at every opset the
// converters emit.
#ifndef JAX2ONNX_PLUGIN_FLOAT4_E2M1_H_
#define JAX2ONNX_PLUGIN_FLOAT4_E2M1_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::plugin {

inline constexpr int kOnnxFloat4E2M1 = 23;
inline constexpr char kFloat4CodesMetadataKey[] =
    "jax2onnx_float4_e2m1fn_as_uint8";
inline constexpr char kFloat4CodesDoc[] =
    "float4_e2m1fn as uint8 codes (ml_dtypes' byte: the code in the low 4 "
    "bits)";

// Value and node names unique in one model (ONNX Runtime rejects duplicate
// node names too): `base`, or `base_1`, `base_2`, ….
struct UniqueNames {
  absl::flat_hash_set<std::string>* values;
  absl::flat_hash_set<std::string>* nodes;
  std::string Value(const std::string& base) const;
  std::string Node(const std::string& base) const;
};

// The nodes that compute into `out` (an f32 container) the f4_e2m1fn value
// of `x`, whose element type is `elem_type`: FLOAT and DOUBLE round exactly
// in their own type; FLOAT16, BFLOAT16, integers and BOOL are Cast to FLOAT
// first (exact, or, for integers past 2^24, off only where the result
// saturates to +-6 anyway); FLOAT4E2M1 (an f32 container already) rounds to
// itself. Other types (complex, string, unknown) are an error.
absl::Status AppendRoundToFloat4E2M1(const std::string& x, int elem_type,
                                     const std::string& out,
                                     const std::string& base,
                                     const UniqueNames& names,
                                     std::vector<onnx::NodeProto>* nodes);

// After every Cast to FLOAT4E2M1 was replaced by AppendRoundToFloat4E2M1:
// retypes every remaining FLOAT4E2M1 value, initializer and Constant tensor
// of the model (graphs, subgraphs, function bodies) to its f32 container,
// and gives the main graph's f4 inputs and outputs the uint8-code form
// described above. A Cast to FLOAT4E2M1 left over, or an f4 initializer
// whose data is not in the proto (deferred to external data), is an error.
absl::Status CarryFloat4E2M1InFloat32(onnx::ModelProto& model,
                                      const UniqueNames& names);

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_FLOAT4_E2M1_H_
