// Conversion between the IR and onnx::ModelProto. The round trip
// FromProto -> ToProto reproduces the proto exactly for everything the
// project emits and for the ONNX backend test models; known normalizations
// are listed in docs/ir.md (value_info is written in node order).
#ifndef JAX2ONNX_IR_SERDE_H_
#define JAX2ONNX_IR_SERDE_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message_lite.h"
#include "ir/ir.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::ir {

onnx::ModelProto ToProto(const Model& model);
// Called for each main-graph initializer with in-memory numeric data, before
// its data is copied into the proto; returning true means the caller takes
// care of the data (e.g. writes it to ONNX external data straight from the
// tensor's bytes): the proto then gets the tensor's name, type and dims but
// no data. The proto pointer stays valid as long as the returned model.
using DeferInitializerData =
    std::function<bool(const Tensor& tensor, onnx::TensorProto* proto)>;
onnx::ModelProto ToProto(const Model& model, const DeferInitializerData& defer);
// Copies tensor data out of `proto`.
absl::StatusOr<Model> FromProto(const onnx::ModelProto& proto);
// Moves raw tensor data out of `proto` instead of copying it (the proto is
// left valid but with emptied raw_data fields).
absl::StatusOr<Model> FromProto(onnx::ModelProto&& proto);

// Pieces, for tests and for building models from parts.
onnx::TensorProto TensorToProto(const Tensor& tensor);
absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto);
onnx::TypeProto TypeToProto(const Type& type);
absl::StatusOr<Type> TypeFromProto(const onnx::TypeProto& proto);

// Serialized bytes with deterministic field ordering.
std::string SerializeDeterministic(const google::protobuf::MessageLite& msg);

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_SERDE_H_
