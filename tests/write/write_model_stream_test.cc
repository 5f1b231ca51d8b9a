// Inline output without a second copy of the weights
// (api/write_model_stream.h): the spliced serialization of a model whose
// initializers' data is deferred must be byte for byte protobuf's own
// serialization of the model with that data in raw_data (the oracle), and
// WriteModelWithDeferredData must write the same files as WriteModel on the
// model holding all its data, inline and with a sidecar.
#include "api/write_model_stream.h"

#include <cstdint>
#include <string>
#include <vector>

#include "api/write_model.h"
#include "gtest/gtest.h"
#include "jax2onnx/jax2onnx.h"
#include "tests/write/write_test_util.h"

namespace jax2onnx::write_test {
namespace {

using api::DeferredData;
using api::SpliceDeferredData;
using api::SplicedModel;

std::string Bytes(size_t n, uint8_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (char& c : s) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 23);
  }
  return s;
}

// A model with fields on both sides of every spliced field: ModelProto
// fields below graph = 7 (ir_version, producer_name, doc_string) and above
// (opset_import, metadata_props, functions); GraphProto fields below
// initializer = 5 (node, name) and above (doc_string, input, output,
// value_info, sparse_initializer); TensorProto fields below raw_data = 9
// (dims, data_type, name) and above (doc_string, data_location).
onnx::ModelProto RichModel() {
  onnx::ModelProto model;
  model.set_ir_version(9);
  model.set_producer_name("jax2onnx");
  model.set_doc_string("doc");
  model.add_opset_import()->set_version(21);
  auto* meta = model.add_metadata_props();
  meta->set_key("k");
  meta->set_value("v");
  model.add_functions()->set_name("f");
  onnx::GraphProto* g = model.mutable_graph();
  onnx::NodeProto* node = g->add_node();
  node->set_op_type("Add");
  node->add_input("x");
  node->add_input("w0");
  node->add_output("y");
  g->set_name("g");
  g->set_doc_string("graph doc");
  AddFloatInfo(g->mutable_input(), "x", {4});
  AddFloatInfo(g->mutable_output(), "y", {4});
  AddFloatInfo(g->mutable_value_info(), "z", {4});
  g->add_sparse_initializer()->mutable_values()->set_name("sparse");
  return model;
}

// Adds a float initializer of `bytes.size() / 4` elements without data.
onnx::TensorProto* AddHeader(onnx::GraphProto* g, const std::string& name,
                             size_t bytes) {
  onnx::TensorProto* t = g->add_initializer();
  t->add_dims(static_cast<int64_t>(bytes / 4));
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->set_name(name);
  return t;
}

std::string Deterministic(const onnx::ModelProto& model) {
  std::string out;
  EXPECT_TRUE(model.SerializeToString(&out));
  return out;
}

std::string Concatenate(const SplicedModel& spliced) {
  std::string out;
  for (absl::string_view piece : spliced.pieces)
    out.append(piece.data(), piece.size());
  EXPECT_EQ(out.size(), spliced.size);
  return out;
}

// Deferred data of several sizes (length prefixes of 1, 2 and 3 bytes, an
// empty one), interleaved with initializers holding their own data.
struct Fixture {
  onnx::ModelProto model = RichModel();
  std::vector<std::string> data;
  DeferredData deferred;
  onnx::ModelProto oracle;  // the model with the data in raw_data

  Fixture() {
    const std::vector<size_t> sizes = {0, 40, 4000, 1 << 16, 200000};
    data.reserve(sizes.size());
    onnx::GraphProto* g = model.mutable_graph();
    for (size_t i = 0; i < sizes.size(); ++i) {
      *g->add_initializer() =
          FloatTensor("own" + std::to_string(i), {1.5f, float(i)});
      data.push_back(Bytes(sizes[i], static_cast<uint8_t>(i)));
      onnx::TensorProto* t = AddHeader(g, "w" + std::to_string(i), sizes[i]);
      if (i == 2) {
        t->set_doc_string("tensor doc");
        t->set_data_location(onnx::TensorProto::DEFAULT);
      }
    }
    // Pointers are taken once the repeated field no longer grows.
    oracle = model;
    for (size_t i = 0; i < sizes.size(); ++i) {
      deferred[&g->initializer(2 * i + 1)] = data[i];
      oracle.mutable_graph()->mutable_initializer(2 * i + 1)->set_raw_data(
          data[i]);
    }
  }
};

TEST(SpliceDeferredDataTest, EqualsProtobufsSerializationWithRawData) {
  Fixture f;
  const std::string before = Deterministic(f.model);
  std::optional<SplicedModel> spliced =
      SpliceDeferredData(&f.model, f.deferred);
  ASSERT_TRUE(spliced.has_value());
  const std::string expected = Deterministic(f.oracle);
  const std::string got = Concatenate(*spliced);
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected);
  // The model is as it was, and the large data was not copied.
  EXPECT_EQ(Deterministic(f.model), before);
  bool viewed = false;
  for (absl::string_view piece : spliced->pieces) {
    viewed |= piece.data() == f.data[4].data();
  }
  EXPECT_TRUE(viewed);
}

TEST(SpliceDeferredDataTest, RefusesATensorOutsideTheInitializers) {
  Fixture f;
  onnx::AttributeProto* attribute =
      f.model.mutable_graph()->mutable_node(0)->add_attribute();
  attribute->set_name("value");
  const std::string data = Bytes(64, 9);
  DeferredData deferred = f.deferred;
  deferred[attribute->mutable_t()] = data;
  EXPECT_FALSE(SpliceDeferredData(&f.model, deferred).has_value());
}

TEST(SpliceDeferredDataTest, RefusesATensorAlreadyHoldingData) {
  Fixture f;
  f.model.mutable_graph()->mutable_initializer(3)->set_raw_data("x");
  EXPECT_FALSE(SpliceDeferredData(&f.model, f.deferred).has_value());
}

// WriteModelWithDeferredData against WriteModel of the oracle model: the
// same model file (and sidecar), for every external-data mode.
void ExpectSameFiles(ExternalData mode, uint64_t threshold) {
  const fs::path dir = TestDir();
  const fs::path want = dir / "want", got = dir / "got";
  fs::create_directories(want);
  fs::create_directories(got);
  WriteOptions options;
  options.external_data = mode;
  options.external_data_threshold = threshold;
  options.external_data_name = "data.bin";
  Fixture f;
  ASSERT_TRUE(WriteModel(f.oracle, (want / "m.onnx").string(), options).ok());
  ASSERT_TRUE(api::WriteModelWithDeferredData(std::move(f.model), f.deferred,
                                              (got / "m.onnx").string(),
                                              options)
                  .ok());
  EXPECT_EQ(ListDir(got), ListDir(want));
  for (const std::string& name : ListDir(want)) {
    EXPECT_TRUE(ReadFile(want / name) == ReadFile(got / name)) << name;
  }
}

TEST(WriteModelWithDeferredDataTest, InlineOutputEqualsProtobufs) {
  ExpectSameFiles(ExternalData::kNever, uint64_t{1} << 20);
}

TEST(WriteModelWithDeferredDataTest, MixedOutputEqualsProtobufs) {
  // Over 4096 bytes to the sidecar, the 4000-byte tensor spliced inline.
  ExpectSameFiles(ExternalData::kAuto, 4096);
}

TEST(WriteModelWithDeferredDataTest, ExternalOutputEqualsProtobufs) {
  ExpectSameFiles(ExternalData::kAlways, uint64_t{1} << 20);
}

}  // namespace
}  // namespace jax2onnx::write_test
