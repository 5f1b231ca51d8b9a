// Serializing a model whose large initializers' data is held outside the
// proto (api/write_model.h's DeferredData) without first copying that data
// into the proto: the model is cut into small serialized pieces and the
// deferred bytes are spliced in between, with every enclosing length prefix
// computed from the pieces. The result is byte for byte what protobuf writes
// for the model with each deferred tensor's raw_data set (protobuf writes
// the known fields of a message in field-number order, so raw_data = 9 goes
// after name = 8 and before the fields above 9; initializer = 5 after name
// = 2 in GraphProto; graph = 7 between doc_string = 6 and opset_import = 8
// in ModelProto). tests/write/write_model_stream_test.cc checks it against
// protobuf's own serialization.
#ifndef JAX2ONNX_API_WRITE_MODEL_STREAM_H_
#define JAX2ONNX_API_WRITE_MODEL_STREAM_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "api/write_model.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::api {

// The serialized model as pieces to write in order: small serialized parts
// (held by `owned`) and views of the deferred bytes (held by the caller).
struct SplicedModel {
  std::deque<std::string> owned;
  std::vector<absl::string_view> pieces;
  uint64_t size = 0;  // the sum of the pieces' sizes
};

// Plans the serialization of `model` with the data of the tensors in
// `inline_data` (all initializers of the main graph, with no raw_data of
// their own) spliced in as raw_data. The model is changed while the pieces
// are serialized and restored before returning. nullopt when the model is
// not of that shape (a tensor of `inline_data` elsewhere in the model or
// already holding raw_data, unknown fields, no graph): the caller then
// copies the data into the proto instead.
std::optional<SplicedModel> SpliceDeferredData(onnx::ModelProto* model,
                                               const DeferredData& inline_data);

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_WRITE_MODEL_STREAM_H_
