// Names and equality for IR types.
#include "ir/type.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace jax2onnx::ir {

std::string DataTypeShortName(int dtype) {
  switch (dtype) {
    case onnx::TensorProto::UNDEFINED:
      return "undef";
    case onnx::TensorProto::FLOAT:
      return "f32";
    case onnx::TensorProto::UINT8:
      return "u8";
    case onnx::TensorProto::INT8:
      return "i8";
    case onnx::TensorProto::UINT16:
      return "u16";
    case onnx::TensorProto::INT16:
      return "i16";
    case onnx::TensorProto::INT32:
      return "i32";
    case onnx::TensorProto::INT64:
      return "i64";
    case onnx::TensorProto::STRING:
      return "str";
    case onnx::TensorProto::BOOL:
      return "bool";
    case onnx::TensorProto::FLOAT16:
      return "f16";
    case onnx::TensorProto::DOUBLE:
      return "f64";
    case onnx::TensorProto::UINT32:
      return "u32";
    case onnx::TensorProto::UINT64:
      return "u64";
    case onnx::TensorProto::COMPLEX64:
      return "c64";
    case onnx::TensorProto::COMPLEX128:
      return "c128";
    case onnx::TensorProto::BFLOAT16:
      return "bf16";
    default:
      return absl::StrCat("dtype", dtype);
  }
}

int DataTypeSize(int dtype) {
  switch (dtype) {
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::BOOL:
      return 1;
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      return 2;
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::UINT32:
      return 4;
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::COMPLEX64:
      return 8;
    case onnx::TensorProto::COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

std::string Dim::ToString() const {
  switch (kind_) {
    case Kind::kValue:
      return absl::StrCat(value_);
    case Kind::kParam: {
      // Quoted where the text would not read back as this param: empty,
      // `?`, an integer, or holding a separator, quote or control byte.
      bool plain = !param_.empty() && param_ != "?" &&
                   param_.find_first_not_of("-0123456789") != std::string::npos;
      for (unsigned char c : param_) {
        if (c < ' ' || c >= 0x7f || c == ',' || c == '[' || c == ']' ||
            c == '"' || c == '\\') {
          plain = false;
        }
      }
      if (plain) return param_;
      return absl::StrCat("\"", absl::CEscape(param_), "\"");
    }
    case Kind::kUnknown:
      break;
  }
  return "?";
}

bool Shape::IsStatic() const {
  for (const Dim& d : dims_) {
    if (!d.is_value()) return false;
  }
  return true;
}

std::string Shape::ToString() const {
  return absl::StrCat("[",
                      absl::StrJoin(dims_, ",",
                                    [](std::string* out, const Dim& d) {
                                      absl::StrAppend(out, d.ToString());
                                    }),
                      "]");
}

Type::Type(const Type& other)
    : kind_(other.kind_),
      elem_type_(other.elem_type_),
      key_type_(other.key_type_),
      shape_(other.shape_),
      element_(other.element_ ? std::make_unique<Type>(*other.element_)
                              : nullptr),
      denotation_(other.denotation_) {}

Type& Type::operator=(const Type& other) {
  if (this != &other) *this = Type(other);
  return *this;
}

Type Type::Tensor(int dtype, std::optional<Shape> shape) {
  Type t;
  t.kind_ = Kind::kTensor;
  t.elem_type_ = dtype;
  t.shape_ = std::move(shape);
  return t;
}

Type Type::SparseTensor(int dtype, std::optional<Shape> shape) {
  Type t = Tensor(dtype, std::move(shape));
  t.kind_ = Kind::kSparseTensor;
  return t;
}

Type Type::Sequence(Type element) {
  Type t;
  t.kind_ = Kind::kSequence;
  t.element_ = std::make_unique<Type>(std::move(element));
  return t;
}

Type Type::Optional(Type element) {
  Type t;
  t.kind_ = Kind::kOptional;
  t.element_ = std::make_unique<Type>(std::move(element));
  return t;
}

Type Type::Map(int key_type, Type value) {
  Type t;
  t.kind_ = Kind::kMap;
  t.key_type_ = key_type;
  t.element_ = std::make_unique<Type>(std::move(value));
  return t;
}

Type Type::None() {
  Type t;
  t.kind_ = Kind::kNone;
  return t;
}

std::string Type::ToString() const {
  auto tensor = [this]() {
    return absl::StrCat(DataTypeShortName(elem_type_),
                        shape_ ? shape_->ToString() : "[*]");
  };
  auto elem = [this]() {
    return element_ ? element_->ToString() : std::string("?");
  };
  switch (kind_) {
    case Kind::kTensor:
      return tensor();
    case Kind::kSparseTensor:
      return absl::StrCat("sparse(", tensor(), ")");
    case Kind::kSequence:
      return absl::StrCat("seq(", elem(), ")");
    case Kind::kOptional:
      return absl::StrCat("opt(", elem(), ")");
    case Kind::kMap:
      return absl::StrCat("map(", DataTypeShortName(key_type_), ",", elem(),
                          ")");
    case Kind::kNone:
      break;
  }
  return "none";
}

bool operator==(const Type& a, const Type& b) {
  if (a.kind_ != b.kind_ || a.elem_type_ != b.elem_type_ ||
      a.key_type_ != b.key_type_ || a.shape_ != b.shape_ ||
      a.denotation_ != b.denotation_) {
    return false;
  }
  if ((a.element_ == nullptr) != (b.element_ == nullptr)) return false;
  return a.element_ == nullptr || *a.element_ == *b.element_;
}

}  // namespace jax2onnx::ir
