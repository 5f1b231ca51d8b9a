// ONNX value types for the IR: element types (the ONNX TensorProto enum),
// shapes whose dims are ints, symbolic names or unknown, and the general
// ONNX type tree (tensor, sparse tensor, sequence, optional, map).
#ifndef JAX2ONNX_IR_TYPE_H_
#define JAX2ONNX_IR_TYPE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::ir {

using DataType = onnx::TensorProto::DataType;

// "f32", "i64", "bool", "bf16", "str", ...; "undef" for UNDEFINED and
// "dtype<N>" for values outside the enum this libonnx knows.
std::string DataTypeShortName(int dtype);
// Bytes per element; 0 for STRING, UNDEFINED and unknown values.
int DataTypeSize(int dtype);

// One dimension: a known size, a symbolic name (ONNX dim_param) or unknown.
// The denotation is carried only so serialization is lossless.
class Dim {
 public:
  enum class Kind : uint8_t { kUnknown, kValue, kParam };

  Dim() = default;
  // Template so that a literal 0 picks this and not the string constructor.
  template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  Dim(T value) : kind_(Kind::kValue), value_(static_cast<int64_t>(value)) {}
  Dim(const char* param) : kind_(Kind::kParam), param_(param) {}
  Dim(std::string param) : kind_(Kind::kParam), param_(std::move(param)) {}
  static Dim Unknown() { return Dim(); }

  Kind kind() const { return kind_; }
  bool is_value() const { return kind_ == Kind::kValue; }
  bool is_param() const { return kind_ == Kind::kParam; }
  bool is_unknown() const { return kind_ == Kind::kUnknown; }
  int64_t value() const { return value_; }
  const std::string& param() const { return param_; }
  const std::string& denotation() const { return denotation_; }
  void set_denotation(std::string d) { denotation_ = std::move(d); }

  // "3", "B", "?".
  std::string ToString() const;

  friend bool operator==(const Dim& a, const Dim& b) {
    return a.kind_ == b.kind_ && a.value_ == b.value_ && a.param_ == b.param_ &&
           a.denotation_ == b.denotation_;
  }
  friend bool operator!=(const Dim& a, const Dim& b) { return !(a == b); }

 private:
  Kind kind_ = Kind::kUnknown;
  int64_t value_ = 0;
  std::string param_;
  std::string denotation_;
};

// A ranked shape. An unranked value has no Shape at all (std::nullopt).
class Shape {
 public:
  Shape() = default;
  Shape(std::vector<Dim> dims) : dims_(std::move(dims)) {}
  Shape(std::initializer_list<Dim> dims) : dims_(dims) {}

  size_t rank() const { return dims_.size(); }
  const Dim& operator[](size_t i) const { return dims_[i]; }
  Dim& operator[](size_t i) { return dims_[i]; }
  const std::vector<Dim>& dims() const { return dims_; }
  std::vector<Dim>& mutable_dims() { return dims_; }
  // True when every dim is a known size.
  bool IsStatic() const;
  // "[B,3]".
  std::string ToString() const;

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.dims_ == b.dims_;
  }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  std::vector<Dim> dims_;
};

// The ONNX type tree. Most values are tensors: kind kTensor with an element
// type and an optional shape. Sequence/optional hold `element`; a map holds
// `key_type` and `element` (the value type). kNone is a TypeProto with no
// value case set (seen in some hand-written models), kept for losslessness.
class Type {
 public:
  enum class Kind : uint8_t {
    kTensor,
    kSparseTensor,
    kSequence,
    kOptional,
    kMap,
    kNone
  };

  Type() = default;
  Type(const Type& other);
  Type& operator=(const Type& other);
  Type(Type&&) = default;
  Type& operator=(Type&&) = default;

  static Type Tensor(int dtype, std::optional<Shape> shape = std::nullopt);
  static Type SparseTensor(int dtype,
                           std::optional<Shape> shape = std::nullopt);
  static Type Sequence(Type element);
  static Type Optional(Type element);
  static Type Map(int key_type, Type value);
  static Type None();

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  // Element type of a (sparse) tensor; UNDEFINED otherwise.
  int elem_type() const { return elem_type_; }
  void set_elem_type(int dtype) { elem_type_ = dtype; }
  const std::optional<Shape>& shape() const { return shape_; }
  std::optional<Shape>& mutable_shape() { return shape_; }
  int key_type() const { return key_type_; }
  // Sequence/optional element or map value type; nullptr otherwise.
  const Type* element() const { return element_.get(); }
  Type* mutable_element() { return element_.get(); }
  const std::string& denotation() const { return denotation_; }
  void set_denotation(std::string d) { denotation_ = std::move(d); }

  // "f32[B,3]", "f32[*]" (unranked), "seq(f32[3])", "opt(i64[])",
  // "map(i64,f32[*])", "sparse(f32[3,4])", "none".
  std::string ToString() const;

  friend bool operator==(const Type& a, const Type& b);
  friend bool operator!=(const Type& a, const Type& b) { return !(a == b); }

 private:
  Kind kind_ = Kind::kTensor;
  int elem_type_ = onnx::TensorProto::UNDEFINED;
  int key_type_ = onnx::TensorProto::UNDEFINED;
  std::optional<Shape> shape_;
  std::unique_ptr<Type> element_;
  std::string denotation_;
};

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_TYPE_H_
