// See write_model_stream.h. The pieces are serialized by protobuf itself
// (deterministically, as the writer does); only the three length-delimited
// fields on the way to the data (ModelProto.graph, GraphProto.initializer,
// TensorProto.raw_data) are written here, each placed before the first
// field of higher number in its serialized parent.
#include "api/write_model_stream.h"

#include <utility>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace jax2onnx::api {
namespace {

std::string SerializeDeterministic(const google::protobuf::MessageLite& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    m.SerializePartialToCodedStream(&coded);
  }
  return out;
}

// The key of a length-delimited field (wire type 2).
uint32_t LengthDelimitedKey(int field) {
  return (static_cast<uint32_t>(field) << 3) | 2;
}

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

uint64_t VarintSize(uint64_t v) {
  uint64_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// The bytes of a length-delimited field with `key` and a payload of `size`.
uint64_t FieldSize(int field, uint64_t size) {
  return VarintSize(LengthDelimitedKey(field)) + VarintSize(size) + size;
}

std::optional<uint64_t> ReadVarint(absl::string_view wire, size_t* pos) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && *pos < wire.size(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(wire[(*pos)++]);
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return v;
  }
  return std::nullopt;
}

// Where, in the serialized message `wire`, a field numbered `field` goes:
// before the first field of higher number. nullopt when `wire` already has
// that field or cannot be walked (groups, truncation): never expected from
// protobuf's own output, but then the caller does not splice.
std::optional<size_t> InsertionPoint(absl::string_view wire, int field) {
  size_t pos = 0;
  while (pos < wire.size()) {
    const size_t start = pos;
    const std::optional<uint64_t> key = ReadVarint(wire, &pos);
    if (!key) return std::nullopt;
    const uint64_t number = *key >> 3;
    if (number == static_cast<uint64_t>(field)) return std::nullopt;
    if (number > static_cast<uint64_t>(field)) return start;
    switch (*key & 7) {
      case 0:
        if (!ReadVarint(wire, &pos)) return std::nullopt;
        break;
      case 1:
        pos += 8;
        break;
      case 2: {
        const std::optional<uint64_t> n = ReadVarint(wire, &pos);
        if (!n || *n > wire.size() - pos) return std::nullopt;
        pos += *n;
        break;
      }
      case 5:
        pos += 4;
        break;
      default:
        return std::nullopt;
    }
    if (pos > wire.size()) return std::nullopt;
  }
  return wire.size();
}

class Planner {
 public:
  explicit Planner(SplicedModel* out) : out_(out) {}
  // A serialized piece (kept) or a view of the caller's bytes.
  void Own(std::string bytes) {
    if (bytes.empty()) return;
    out_->owned.push_back(std::move(bytes));
    View(out_->owned.back());
  }
  void View(absl::string_view bytes) {
    if (bytes.empty()) return;
    out_->pieces.push_back(bytes);
    out_->size += bytes.size();
  }
  // The key and length of a length-delimited field.
  void Header(int field, uint64_t size) {
    std::string head;
    AppendVarint(LengthDelimitedKey(field), &head);
    AppendVarint(size, &head);
    Own(std::move(head));
  }

 private:
  SplicedModel* out_;
};

}  // namespace

std::optional<SplicedModel> SpliceDeferredData(
    onnx::ModelProto* model, const DeferredData& inline_data) {
  if (!model->has_graph() || !model->unknown_fields().empty()) {
    return std::nullopt;
  }
  onnx::GraphProto* graph = model->mutable_graph();
  if (!graph->unknown_fields().empty()) return std::nullopt;

  // Each initializer: its serialized form, or for a deferred one its
  // serialization without data, the point where raw_data goes and the data.
  struct Initializer {
    std::string wire;
    size_t raw_data_at = 0;
    absl::string_view data;
    bool deferred = false;
  };
  std::vector<Initializer> initializers;
  initializers.reserve(graph->initializer_size());
  size_t found = 0;
  for (const onnx::TensorProto& tensor : graph->initializer()) {
    Initializer init;
    init.wire = SerializeDeterministic(tensor);
    if (auto it = inline_data.find(&tensor); it != inline_data.end()) {
      if (tensor.has_raw_data() || !tensor.unknown_fields().empty()) {
        return std::nullopt;
      }
      const std::optional<size_t> at =
          InsertionPoint(init.wire, onnx::TensorProto::kRawDataFieldNumber);
      if (!at) return std::nullopt;
      init.raw_data_at = *at;
      init.data = it->second;
      init.deferred = true;
      ++found;
    }
    initializers.push_back(std::move(init));
  }
  if (found != inline_data.size()) return std::nullopt;

  // The graph without its initializers, and the model without its graph;
  // both restored before anything can fail.
  std::string graph_wire;
  {
    google::protobuf::RepeatedPtrField<onnx::TensorProto> held;
    held.Swap(graph->mutable_initializer());
    graph_wire = SerializeDeterministic(*graph);
    held.Swap(graph->mutable_initializer());
  }
  std::string model_wire;
  {
    onnx::GraphProto* held = model->release_graph();
    model_wire = SerializeDeterministic(*model);
    model->set_allocated_graph(held);
  }
  const std::optional<size_t> initializers_at =
      InsertionPoint(graph_wire, onnx::GraphProto::kInitializerFieldNumber);
  const std::optional<size_t> graph_at =
      InsertionPoint(model_wire, onnx::ModelProto::kGraphFieldNumber);
  if (!initializers_at || !graph_at) return std::nullopt;

  constexpr int kRawData = onnx::TensorProto::kRawDataFieldNumber;
  constexpr int kInitializer = onnx::GraphProto::kInitializerFieldNumber;
  auto tensor_size = [](const Initializer& init) -> uint64_t {
    return init.wire.size() +
           (init.deferred ? FieldSize(kRawData, init.data.size()) : 0);
  };
  uint64_t graph_size = graph_wire.size();
  for (const Initializer& init : initializers) {
    graph_size += FieldSize(kInitializer, tensor_size(init));
  }

  SplicedModel out;
  Planner plan(&out);
  const absl::string_view model_view = model_wire;
  const absl::string_view graph_view = graph_wire;
  plan.Own(std::string(model_view.substr(0, *graph_at)));
  plan.Header(onnx::ModelProto::kGraphFieldNumber, graph_size);
  plan.Own(std::string(graph_view.substr(0, *initializers_at)));
  for (Initializer& init : initializers) {
    plan.Header(kInitializer, tensor_size(init));
    if (!init.deferred) {
      plan.Own(std::move(init.wire));
      continue;
    }
    const absl::string_view wire = init.wire;
    plan.Own(std::string(wire.substr(0, init.raw_data_at)));
    plan.Header(kRawData, init.data.size());
    plan.View(init.data);
    plan.Own(std::string(wire.substr(init.raw_data_at)));
  }
  plan.Own(std::string(graph_view.substr(*initializers_at)));
  plan.Own(std::string(model_view.substr(*graph_at)));
  return out;
}

}  // namespace jax2onnx::api
