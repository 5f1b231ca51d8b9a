// Shared pieces of the tests/write tests: a scratch directory per test,
// small hand-built models and directory listings.
#ifndef JAX2ONNX_TESTS_WRITE_WRITE_TEST_UTIL_H_
#define JAX2ONNX_TESTS_WRITE_WRITE_TEST_UTIL_H_

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::write_test {

namespace fs = std::filesystem;

// A fresh directory named after the running test, under gtest's TempDir.
inline fs::path TestDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir =
      fs::path(::testing::TempDir()) /
      absl::StrCat("write_", info->test_suite_name(), "_", info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Sorted file names in `dir`.
inline std::vector<std::string> ListDir(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void WriteFile(const fs::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

inline onnx::TensorProto FloatTensor(const std::string& name,
                                     const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(static_cast<int64_t>(values.size()));
  t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()),
                             values.size() * sizeof(float)));
  return t;
}

inline void AddFloatInfo(
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
    const std::string& name, std::vector<int64_t> dims) {
  onnx::ValueInfoProto* info = list->Add();
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
}

// y = x + w with w an initializer of `n` floats (w[i] = i).
inline onnx::ModelProto AddWeightModel(int n) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("add_weight");
  AddFloatInfo(g->mutable_input(), "x", {n});
  AddFloatInfo(g->mutable_output(), "y", {n});
  std::vector<float> w(n);
  for (int i = 0; i < n; ++i) w[i] = static_cast<float>(i);
  *g->add_initializer() = FloatTensor("w", w);
  onnx::NodeProto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("x");
  add->add_input("w");
  add->add_output("y");
  return model;
}

}  // namespace jax2onnx::write_test

#endif  // JAX2ONNX_TESTS_WRITE_WRITE_TEST_UTIL_H_
