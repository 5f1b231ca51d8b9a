// Array: copies share their bytes until one of them is written.
#include "jaxpr/array.h"

#include <cstdint>
#include <utility>

#include "gtest/gtest.h"

namespace jax2onnx::jaxpr {
namespace {

TEST(ArrayCopyOnWriteTest, CopySharesBytesUntilAWrite) {
  Array a(DType::kI32, {3});
  a.SetFromInt64(0, 7);
  const Array b = a;  // NOLINT(performance-unnecessary-copy-initialization)
  const Array& read_a = a;
  EXPECT_EQ(read_a.data(), b.data()) << "a fresh copy shares the bytes";

  a.typed_data<int32_t>()[0] = 9;
  EXPECT_NE(read_a.data(), b.data());
  EXPECT_EQ(a.GetAsInt64(0), 9);
  EXPECT_EQ(b.GetAsInt64(0), 7) << "the copy keeps its value";
}

TEST(ArrayCopyOnWriteTest, EverySetterDetaches) {
  Array a(DType::kF32, {2});
  Array b = a;
  b.SetFromDouble(1, 2.5);
  EXPECT_EQ(a.GetAsDouble(1), 0.0);
  Array c = a;
  c.SetFromInt64(0, 4);
  EXPECT_EQ(a.GetAsInt64(0), 0);
  Array d = a;
  d.bytes()[0] = 1;
  EXPECT_EQ(a.bytes()[0], 0);
  EXPECT_EQ(c.GetAsInt64(0), 4);
}

TEST(ArrayCopyOnWriteTest, UniqueArrayWritesInPlace) {
  Array a(DType::kU8, {4});
  const uint8_t* before = static_cast<const Array&>(a).data();
  a.data()[2] = 5;
  EXPECT_EQ(static_cast<const Array&>(a).data(), before);
}

TEST(ArrayCopyOnWriteTest, MovedFromAndDefaultArraysAreEmpty) {
  Array a(DType::kI64, {2});
  Array b = std::move(a);
  EXPECT_EQ(b.num_bytes(), 16u);
  Array empty;
  EXPECT_EQ(empty.num_bytes(), 0u);
  EXPECT_EQ(empty, Array());
  EXPECT_EQ(b, Array(DType::kI64, {2}));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
