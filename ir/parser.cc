// The IR text parser: recursive descent over the printer's grammar
// (ir/printer.cc), one scope of value names per graph.
#include "ir/parser.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ir/float16.h"
#include "ir/printer.h"

namespace jax2onnx::ir {
namespace {

using TP = onnx::TensorProto;
using AP = onnx::AttributeProto;

// The element types and attribute kinds the printer names, looked up by
// the names DataTypeShortName and AttrKindName give them.
constexpr int kMaxDtypeCode = TP::BFLOAT16;
constexpr AttrType kAttrKinds[] = {
    AP::FLOAT,          AP::INT,           AP::STRING,     AP::TENSOR,
    AP::GRAPH,          AP::SPARSE_TENSOR, AP::TYPE_PROTO, AP::FLOATS,
    AP::INTS,           AP::STRINGS,       AP::TENSORS,    AP::GRAPHS,
    AP::SPARSE_TENSORS, AP::TYPE_PROTOS,
};

bool IsWordChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' ||
         c == '.' || c == '-';
}

// A character the printer writes in a name without quoting it.
bool IsPlainNameChar(char c) { return IsPlainName(absl::string_view(&c, 1)); }

// A use of a name not yet defined when its node was read.
struct PendingUse {
  Node* node;
  int input_index;
  std::string name;
  size_t pos;
};

struct Scope {
  Graph* graph;
  absl::flat_hash_map<std::string, Value*> values;
  std::vector<PendingUse> pending;
};

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<Model> Run() {
    Model model;
    SkipWs();
    if (Word() == "model") {
      if (absl::Status s = ModelHeader(model); !s.ok()) return s;
    }
    SkipWs();
    if (!ConsumeWord("graph")) return Error("expected `graph`");
    if (absl::Status s = GraphInto(model.graph()); !s.ok()) return s;
    SkipWs();
    while (ConsumeWord("function")) {
      if (absl::Status s = FunctionInto(model); !s.ok()) return s;
      SkipWs();
    }
    if (pos_ < text_.size()) return Error("expected `function` or the end");
    return model;
  }

 private:
  // ---- Lexing ----

  absl::Status Error(absl::string_view message) const {
    return ErrorAt(pos_, message);
  }
  absl::Status ErrorAt(size_t pos, absl::string_view message) const {
    int line = 1, col = 1;
    for (size_t i = 0; i < pos && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat(line, ":", col, ": error: ", message));
  }

  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void SkipSpaces() {
    while (Peek() == ' ' || Peek() == '\t') ++pos_;
  }
  void SkipWs() {
    while (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' || Peek() == '\r')
      ++pos_;
  }
  bool Consume(absl::string_view lit) {
    SkipWs();
    if (text_.substr(pos_, lit.size()) != lit) return false;
    pos_ += lit.size();
    return true;
  }
  absl::Status Expect(absl::string_view lit) {
    if (Consume(lit)) return absl::OkStatus();
    return Error(absl::StrCat("expected `", lit, "`"));
  }
  // The word (letters, digits, `_`, `.`, `-`) at the cursor, not consumed.
  absl::string_view Word() const {
    size_t end = pos_;
    while (end < text_.size() && IsWordChar(text_[end])) ++end;
    return text_.substr(pos_, end - pos_);
  }
  bool ConsumeWord(absl::string_view word) {
    SkipWs();
    if (Word() != word) return false;
    pos_ += word.size();
    return true;
  }

  absl::StatusOr<std::string> Quoted() {
    SkipWs();
    if (Peek() != '"') return Error("expected a quoted string");
    size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\') ++pos_;
      ++pos_;
    }
    if (pos_ >= text_.size()) return ErrorAt(start - 1, "unterminated string");
    std::string out, error;
    if (!absl::CUnescape(text_.substr(start, pos_ - start), &out, &error)) {
      return ErrorAt(start, absl::StrCat("bad escape: ", error));
    }
    ++pos_;
    return out;
  }

  // A value, graph or function name: plain characters or a quoted string.
  absl::StatusOr<std::string> Name() {
    SkipWs();
    if (Peek() == '"') return Quoted();
    size_t start = pos_;
    while (pos_ < text_.size() && IsPlainNameChar(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  // Characters up to a separator of lists and blocks.
  absl::string_view Token() {
    SkipWs();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           std::strchr(",)}] \t\n\r", text_[pos_]) == nullptr) {
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }

  absl::StatusOr<int64_t> Int() {
    size_t at = (SkipWs(), pos_);
    std::string token(Token());
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(token.c_str(), &end, 10);
    if (token.empty() || *end != '\0' || errno == ERANGE) {
      return ErrorAt(at,
                     absl::StrCat("expected an integer, got `", token, "`"));
    }
    return static_cast<int64_t>(v);
  }

  // ---- Types and tensors ----

  absl::StatusOr<int> Dtype() {
    SkipWs();
    size_t at = pos_;
    absl::string_view w = Word();
    for (int code = 0; code <= kMaxDtypeCode; ++code) {
      if (w == DataTypeShortName(code)) {
        pos_ += w.size();
        return code;
      }
    }
    int code = 0;
    if (absl::StartsWith(w, "dtype") && absl::SimpleAtoi(w.substr(5), &code)) {
      pos_ += w.size();
      return code;
    }
    return ErrorAt(at, absl::StrCat("unknown element type `", w, "`"));
  }

  absl::StatusOr<Dim> ParseDim() {
    SkipWs();
    if (Peek() == '"') {
      absl::StatusOr<std::string> param = Quoted();
      if (!param.ok()) return param.status();
      return Dim(*param);
    }
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != ']' &&
           text_[pos_] != '\n') {
      ++pos_;
    }
    std::string text(text_.substr(start, pos_ - start));
    if (text.empty()) return ErrorAt(start, "expected a dimension");
    if (text == "?") return Dim::Unknown();
    int64_t value = 0;
    if (text.find_first_not_of("-0123456789") == std::string::npos &&
        absl::SimpleAtoi(text, &value)) {
      return Dim(value);
    }
    return Dim(std::move(text));
  }

  // Types and graphs nest; the bound keeps the recursion off the stack's
  // end on any input (the jaxpr parser's bound is the same).
  static constexpr int kMaxNesting = 256;
  struct Nest {
    explicit Nest(int* depth) : depth(depth) { ++*depth; }
    ~Nest() { --*depth; }
    int* depth;
  };
  absl::Status CheckNesting() const {
    if (depth_ <= kMaxNesting) return absl::OkStatus();
    return Error(absl::StrCat("nested more than ", kMaxNesting, " deep"));
  }

  absl::StatusOr<Type> ParseType() {
    Nest nest(&depth_);
    if (absl::Status s = CheckNesting(); !s.ok()) return s;
    SkipWs();
    for (auto [word, kind] : {std::pair{"seq", Type::Kind::kSequence},
                              std::pair{"opt", Type::Kind::kOptional}}) {
      if (Word() == word && Peek(std::strlen(word)) == '(') {
        pos_ += std::strlen(word) + 1;
        absl::StatusOr<Type> element = ParseType();
        if (!element.ok()) return element.status();
        if (absl::Status s = Expect(")"); !s.ok()) return s;
        return kind == Type::Kind::kSequence ? Type::Sequence(*element)
                                             : Type::Optional(*element);
      }
    }
    if (Word() == "map" && Peek(3) == '(') {
      pos_ += 4;
      absl::StatusOr<int> key = Dtype();
      if (!key.ok()) return key.status();
      if (absl::Status s = Expect(","); !s.ok()) return s;
      absl::StatusOr<Type> value = ParseType();
      if (!value.ok()) return value.status();
      if (absl::Status s = Expect(")"); !s.ok()) return s;
      return Type::Map(*key, *value);
    }
    if (Word() == "sparse" && Peek(6) == '(') {
      pos_ += 7;
      absl::StatusOr<Type> tensor = ParseType();
      if (!tensor.ok()) return tensor.status();
      if (absl::Status s = Expect(")"); !s.ok()) return s;
      return Type::SparseTensor(tensor->elem_type(), tensor->shape());
    }
    if (ConsumeWord("none")) return Type::None();
    absl::StatusOr<int> dtype = Dtype();
    if (!dtype.ok()) return dtype.status();
    if (absl::Status s = Expect("["); !s.ok()) return s;
    if (Consume("*")) {
      if (absl::Status s = Expect("]"); !s.ok()) return s;
      return Type::Tensor(*dtype);
    }
    std::vector<Dim> dims;
    if (!Consume("]")) {
      do {
        absl::StatusOr<Dim> dim = ParseDim();
        if (!dim.ok()) return dim.status();
        dims.push_back(*std::move(dim));
      } while (Consume(","));
      if (absl::Status s = Expect("]"); !s.ok()) return s;
    }
    return Type::Tensor(*dtype, Shape(std::move(dims)));
  }

  // One element of a numeric tensor, appended to `bytes` little-endian.
  absl::Status Element(int dtype, size_t at, absl::string_view token,
                       std::string* bytes) {
    auto put = [bytes](auto v) {
      bytes->append(reinterpret_cast<const char*>(&v), sizeof(v));
    };
    std::string t(token);
    auto bad = [&]() {
      return ErrorAt(at, absl::StrCat("`", t, "` is not a ",
                                      DataTypeShortName(dtype), " value"));
    };
    char* end = nullptr;
    errno = 0;
    switch (dtype) {
      case TP::FLOAT:
      case TP::FLOAT16:
      case TP::BFLOAT16: {
        float f = std::strtof(t.c_str(), &end);
        if (t.empty() || *end != '\0') return bad();
        if (dtype == TP::FLOAT) {
          put(f);
        } else {
          put(dtype == TP::FLOAT16 ? FloatToHalf(f) : FloatToBFloat16(f));
        }
        return absl::OkStatus();
      }
      case TP::DOUBLE: {
        double d = std::strtod(t.c_str(), &end);
        if (t.empty() || *end != '\0') return bad();
        put(d);
        return absl::OkStatus();
      }
      case TP::COMPLEX64:
      case TP::COMPLEX128: {
        // `re+imi`: the `+` that is not an exponent's sign splits the parts.
        size_t plus = std::string::npos;
        for (size_t i = 1; i < t.size(); ++i) {
          if (t[i] == '+' && t[i - 1] != 'e' && t[i - 1] != 'E') {
            plus = i;
            break;
          }
        }
        if (plus == std::string::npos || t.back() != 'i') return bad();
        std::string re = t.substr(0, plus);
        std::string im = t.substr(plus + 1, t.size() - plus - 2);
        char* end_im = nullptr;
        double r = std::strtod(re.c_str(), &end);
        double i = std::strtod(im.c_str(), &end_im);
        if (re.empty() || im.empty() || *end != '\0' || *end_im != '\0') {
          return bad();
        }
        if (dtype == TP::COMPLEX64) {
          put(std::strtof(re.c_str(), nullptr));
          put(std::strtof(im.c_str(), nullptr));
        } else {
          put(r);
          put(i);
        }
        return absl::OkStatus();
      }
      case TP::BOOL:
        if (t != "true" && t != "false") return bad();
        put(static_cast<uint8_t>(t == "true"));
        return absl::OkStatus();
      case TP::UINT8:
      case TP::UINT16:
      case TP::UINT32:
      case TP::UINT64: {
        unsigned long long v = std::strtoull(t.c_str(), &end, 10);
        int size = DataTypeSize(dtype);
        if (t.empty() || t[0] == '-' || *end != '\0' || errno == ERANGE ||
            (size < 8 && v >> (8 * size) != 0)) {
          return bad();
        }
        bytes->append(reinterpret_cast<const char*>(&v), size);
        return absl::OkStatus();
      }
      case TP::INT8:
      case TP::INT16:
      case TP::INT32:
      case TP::INT64: {
        long long v = std::strtoll(t.c_str(), &end, 10);
        int size = DataTypeSize(dtype);
        long long lim = size == 8 ? 0 : (1LL << (8 * size - 1));
        if (t.empty() || *end != '\0' || errno == ERANGE ||
            (size < 8 && (v < -lim || v >= lim))) {
          return bad();
        }
        bytes->append(reinterpret_cast<const char*>(&v), size);
        return absl::OkStatus();
      }
      default:
        return ErrorAt(at, absl::StrCat("cannot read elements of ",
                                        DataTypeShortName(dtype)));
    }
  }

  absl::StatusOr<Tensor> ParseTensor() {
    absl::StatusOr<int> dtype = Dtype();
    if (!dtype.ok()) return dtype.status();
    if (absl::Status s = Expect("["); !s.ok()) return s;
    std::vector<int64_t> dims;
    if (!Consume("]")) {
      do {
        absl::StatusOr<int64_t> d = Int();
        if (!d.ok()) return d.status();
        dims.push_back(*d);
      } while (Consume(","));
      if (absl::Status s = Expect("]"); !s.ok()) return s;
    }
    if (absl::Status s = Expect("{"); !s.ok()) return s;
    if (ConsumeWord("external")) {
      std::vector<std::pair<std::string, std::string>> location;
      while (!Consume("}")) {
        if (!location.empty()) {
          if (absl::Status s = Expect(","); !s.ok()) return s;
        }
        SkipWs();
        std::string key(Word());
        pos_ += key.size();
        if (absl::Status s = Expect("="); !s.ok()) return s;
        absl::StatusOr<std::string> value = Quoted();
        if (!value.ok()) return value.status();
        location.emplace_back(std::move(key), *std::move(value));
      }
      return Tensor::External(*dtype, std::move(dims), std::move(location));
    }
    int64_t n = 1;
    for (int64_t d : dims) {
      if (d < 0) return Error("negative tensor dimension");
      if (d > 0 && n > std::numeric_limits<int64_t>::max() / d) {
        return Error("tensor has too many elements");
      }
      n *= d;
    }
    std::vector<std::string> strings;
    std::string bytes;
    int64_t count = 0;
    size_t start = pos_;
    while (!Consume("}")) {
      if (count > 0) {
        if (absl::Status s = Expect(","); !s.ok()) return s;
      }
      SkipWs();
      size_t at = pos_;
      if (text_.substr(pos_, 3) == "...") {
        return Error(
            "a tensor printed with a digest cannot be read back; print with "
            "PrintOptions{.exact = true}");
      }
      if (*dtype == TP::STRING) {
        absl::StatusOr<std::string> s = Quoted();
        if (!s.ok()) return s.status();
        strings.push_back(*std::move(s));
      } else if (absl::Status s = Element(*dtype, at, Token(), &bytes);
                 !s.ok()) {
        return s;
      }
      ++count;
    }
    if (count != n) {
      return ErrorAt(start,
                     absl::StrCat("tensor of ", n, " elements lists ", count));
    }
    if (*dtype == TP::STRING) {
      return Tensor::Strings(std::move(dims), std::move(strings));
    }
    if (DataTypeSize(*dtype) == 0) {
      return ErrorAt(start, "tensor of an element type without a size");
    }
    return Tensor(*dtype, std::move(dims), std::move(bytes));
  }

  absl::StatusOr<SparseTensor> ParseSparse() {
    // `sparse` is consumed; `[dims](values=T, indices=T)` follows.
    SparseTensor s;
    if (absl::Status st = Expect("["); !st.ok()) return st;
    if (!Consume("]")) {
      do {
        absl::StatusOr<int64_t> d = Int();
        if (!d.ok()) return d.status();
        s.dims.push_back(*d);
      } while (Consume(","));
      if (absl::Status st = Expect("]"); !st.ok()) return st;
    }
    for (absl::string_view lit : {"(", "values", "="}) {
      if (absl::Status st = Expect(lit); !st.ok()) return st;
    }
    absl::StatusOr<Tensor> values = ParseTensor();
    if (!values.ok()) return values.status();
    for (absl::string_view lit : {",", "indices", "="}) {
      if (absl::Status st = Expect(lit); !st.ok()) return st;
    }
    absl::StatusOr<Tensor> indices = ParseTensor();
    if (!indices.ok()) return indices.status();
    if (absl::Status st = Expect(")"); !st.ok()) return st;
    s.values = *std::move(values);
    s.indices = *std::move(indices);
    return s;
  }

  // ---- Attributes ----

  // `[a, b, ...]` read by `one`, the `[` already consumed.
  template <typename T, typename F>
  absl::StatusOr<std::vector<T>> List(F one) {
    std::vector<T> out;
    while (!Consume("]")) {
      if (!out.empty()) {
        if (absl::Status s = Expect(","); !s.ok()) return s;
      }
      absl::StatusOr<T> v = one();
      if (!v.ok()) return v.status();
      out.push_back(*std::move(v));
    }
    return out;
  }

  absl::StatusOr<float> FloatToken() {
    size_t at = (SkipWs(), pos_);
    std::string t(Token());
    char* end = nullptr;
    float f = std::strtof(t.c_str(), &end);
    if (t.empty() || *end != '\0') {
      return ErrorAt(at, absl::StrCat("expected a float, got `", t, "`"));
    }
    return f;
  }

  static bool LooksFloat(absl::string_view token) {
    return token.find_first_of(".eEin") != absl::string_view::npos;
  }

  absl::StatusOr<std::unique_ptr<Graph>> SubGraph() {
    auto g = std::make_unique<Graph>();
    if (absl::Status s = GraphInto(*g); !s.ok()) return s;
    return g;
  }

  absl::StatusOr<Attr> ParseAttr() {
    SkipWs();
    size_t at = pos_;
    std::string name(Word());
    if (name.empty()) return Error("expected an attribute name");
    pos_ += name.size();
    if (absl::Status s = Expect("="); !s.ok()) return s;
    SkipWs();
    if (Consume("@")) {
      absl::StatusOr<std::string> ref = Name();
      if (!ref.ok()) return ref.status();
      if (absl::Status s = Expect(":"); !s.ok()) return s;
      SkipWs();
      absl::string_view kind = Word();
      for (AttrType type : kAttrKinds) {
        if (kind == AttrKindName(type)) {
          pos_ += kind.size();
          return Attr::Ref(std::move(name), type, *std::move(ref));
        }
      }
      return Error(absl::StrCat("unknown attribute kind `", kind, "`"));
    }
    if (Peek() == '"') {
      absl::StatusOr<std::string> s = Quoted();
      if (!s.ok()) return s.status();
      return Attr::String(std::move(name), *std::move(s));
    }
    absl::string_view word = Word();
    if (word == "tensor") {
      pos_ += word.size();
      absl::StatusOr<Tensor> t = ParseTensor();
      if (!t.ok()) return t.status();
      return Attr::TensorValue(std::move(name), *std::move(t));
    }
    if (word == "type") {
      pos_ += word.size();
      absl::StatusOr<Type> t = ParseType();
      if (!t.ok()) return t.status();
      return Attr::TypeValue(std::move(name), *std::move(t));
    }
    if (word == "graph") {
      pos_ += word.size();
      absl::StatusOr<std::unique_ptr<Graph>> g = SubGraph();
      if (!g.ok()) return g.status();
      return Attr::GraphValue(std::move(name), *std::move(g));
    }
    if (word == "sparse" && Peek(6) == '[') {
      pos_ += word.size();
      absl::StatusOr<SparseTensor> s = ParseSparse();
      if (!s.ok()) return s.status();
      return Attr::SparseTensorValue(std::move(name), *std::move(s));
    }
    // A list with its kind named: `tensors [...]`, `types [...]` and the
    // empty lists of any kind.
    for (AttrType type : kAttrKinds) {
      if (word != AttrKindName(type)) continue;
      pos_ += word.size();
      if (absl::Status s = Expect("["); !s.ok()) return s;
      switch (type) {
        case AP::TENSORS: {
          auto v = List<Tensor>([&] { return ParseTensor(); });
          if (!v.ok()) return v.status();
          return Attr::Tensors(std::move(name), *std::move(v));
        }
        case AP::TYPE_PROTOS: {
          auto v = List<Type>([&] { return ParseType(); });
          if (!v.ok()) return v.status();
          return Attr::Types(std::move(name), *std::move(v));
        }
        default:
          if (absl::Status s = Expect("]"); !s.ok()) return s;
          return EmptyList(std::move(name), type, at);
      }
    }
    if (Consume("[")) return NonEmptyList(std::move(name));
    size_t token_at = pos_;
    absl::string_view token = Token();
    if (token.empty()) return ErrorAt(token_at, "expected an attribute value");
    if (LooksFloat(token)) {
      pos_ = token_at;
      absl::StatusOr<float> f = FloatToken();
      if (!f.ok()) return f.status();
      return Attr::Float(std::move(name), *f);
    }
    pos_ = token_at;
    absl::StatusOr<int64_t> i = Int();
    if (!i.ok()) return i.status();
    return Attr::Int(std::move(name), *i);
  }

  absl::StatusOr<Attr> EmptyList(std::string name, AttrType type, size_t at) {
    switch (type) {
      case AP::FLOATS:
        return Attr::Floats(std::move(name), {});
      case AP::INTS:
        return Attr::Ints(std::move(name), {});
      case AP::STRINGS:
        return Attr::Strings(std::move(name), {});
      case AP::GRAPHS:
        return Attr::Graphs(std::move(name), {});
      case AP::SPARSE_TENSORS:
        return Attr::SparseTensors(std::move(name), {});
      default:
        return ErrorAt(at, "only a list kind can precede `[]`");
    }
  }

  absl::StatusOr<Attr> NonEmptyList(std::string name) {
    SkipWs();
    if (Peek() == '"') {
      auto v = List<std::string>([&] { return Quoted(); });
      if (!v.ok()) return v.status();
      return Attr::Strings(std::move(name), *std::move(v));
    }
    if (Word() == "graph") {
      auto v = List<std::unique_ptr<Graph>>(
          [&]() -> absl::StatusOr<std::unique_ptr<Graph>> {
            if (!ConsumeWord("graph")) return Error("expected `graph`");
            return SubGraph();
          });
      if (!v.ok()) return v.status();
      return Attr::Graphs(std::move(name), *std::move(v));
    }
    if (Word() == "sparse") {
      auto v = List<SparseTensor>([&]() -> absl::StatusOr<SparseTensor> {
        if (!ConsumeWord("sparse")) return Error("expected `sparse`");
        return ParseSparse();
      });
      if (!v.ok()) return v.status();
      return Attr::SparseTensors(std::move(name), *std::move(v));
    }
    // Numbers: floats when any element reads as one.
    size_t start = pos_;
    bool floats = false;
    while (pos_ < text_.size() && text_[pos_] != ']') {
      absl::string_view token = Token();
      floats |= LooksFloat(token);
      if (!Consume(",")) break;
    }
    pos_ = start;
    if (floats) {
      auto v = List<float>([&] { return FloatToken(); });
      if (!v.ok()) return v.status();
      return Attr::Floats(std::move(name), *std::move(v));
    }
    auto v = List<int64_t>([&] { return Int(); });
    if (!v.ok()) return v.status();
    return Attr::Ints(std::move(name), *std::move(v));
  }

  // ---- Values and graphs ----

  absl::Status Define(const std::string& name, Value* v, size_t at) {
    if (name.empty()) return absl::OkStatus();
    if (!scopes_.back()->values.emplace(name, v).second) {
      return ErrorAt(at, absl::StrCat("%", name, " is defined twice"));
    }
    return absl::OkStatus();
  }

  Value* Lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = (*it)->values.find(name);
      if (found != (*it)->values.end()) return found->second;
    }
    return nullptr;
  }

  // `%name` or `%name: type` (`type` stays empty when absent); `_` is an
  // absent value (empty name).
  absl::Status Decl(std::string* name, std::optional<Type>* type,
                    bool with_type) {
    SkipWs();
    if (Peek() == '_' && !IsPlainNameChar(Peek(1))) {
      ++pos_;
      name->clear();
      return absl::OkStatus();
    }
    if (!Consume("%")) return Error("expected `%name` or `_`");
    absl::StatusOr<std::string> n = Name();
    if (!n.ok()) return n.status();
    if (n->empty()) return Error("expected a value name after `%`");
    *name = *std::move(n);
    type->reset();
    if (with_type && Consume(":")) {
      absl::StatusOr<Type> t = ParseType();
      if (!t.ok()) return t.status();
      *type = *std::move(t);
    }
    return absl::OkStatus();
  }

  // `NAME(%in: T, ...) -> (%out: T, ...) { body }`, the keyword consumed.
  absl::Status GraphInto(Graph& g) {
    Nest nest(&depth_);
    if (absl::Status s = CheckNesting(); !s.ok()) return s;
    absl::StatusOr<std::string> name = Name();
    if (!name.ok()) return name.status();
    g.set_name(*name);
    Scope scope{&g, {}, {}};
    scopes_.push_back(&scope);
    absl::Status s = GraphSignatureAndBody(g, scope);
    scopes_.pop_back();
    if (!s.ok()) return s;
    // Uses this graph does not define go to the enclosing graph.
    for (PendingUse& use : scope.pending) {
      if (scopes_.empty()) {
        return ErrorAt(use.pos, absl::StrCat("%", use.name, " is not defined"));
      }
      scopes_.back()->pending.push_back(std::move(use));
    }
    return absl::OkStatus();
  }

  absl::Status GraphSignatureAndBody(Graph& g, Scope& scope) {
    if (absl::Status s = Expect("("); !s.ok()) return s;
    while (!Consume(")")) {
      if (!g.inputs().empty()) {
        if (absl::Status s = Expect(","); !s.ok()) return s;
      }
      SkipWs();
      size_t at = pos_;
      std::string name;
      std::optional<Type> type;
      if (absl::Status s = Decl(&name, &type, true); !s.ok()) return s;
      if (name.empty()) return ErrorAt(at, "a graph input needs a name");
      Value* v = g.AddInput(name, std::move(type));
      if (absl::Status s = Define(name, v, at); !s.ok()) return s;
    }
    if (absl::Status s = Expect("->"); !s.ok()) return s;
    if (absl::Status s = Expect("("); !s.ok()) return s;
    struct Output {
      std::string name;
      std::optional<Type> type;
      size_t pos;
    };
    std::vector<Output> outputs;
    while (!Consume(")")) {
      if (!outputs.empty()) {
        if (absl::Status s = Expect(","); !s.ok()) return s;
      }
      Output o;
      o.pos = (SkipWs(), pos_);
      if (absl::Status s = Decl(&o.name, &o.type, true); !s.ok()) return s;
      if (o.name.empty()) return ErrorAt(o.pos, "a graph output needs a name");
      outputs.push_back(std::move(o));
    }
    if (absl::Status s = Expect("{"); !s.ok()) return s;
    while (!Consume("}")) {
      if (pos_ >= text_.size()) return Error("expected `}`");
      if (absl::Status s = Statement(g); !s.ok()) return s;
    }
    // Uses before definitions, now that the whole body is read.
    std::vector<PendingUse> unresolved;
    for (PendingUse& use : scope.pending) {
      auto found = scope.values.find(use.name);
      if (found == scope.values.end()) {
        unresolved.push_back(std::move(use));
      } else {
        use.node->ReplaceInputWith(use.input_index, found->second);
      }
    }
    scope.pending = std::move(unresolved);
    for (Output& o : outputs) {
      Value* v = Lookup(o.name);
      if (v == nullptr) {
        return ErrorAt(o.pos, absl::StrCat("%", o.name, " is not defined"));
      }
      if (o.type.has_value() && v->type() == nullptr) v->SetType(*o.type);
      if (o.type.has_value() && *v->type() != *o.type) {
        return ErrorAt(
            o.pos, absl::StrCat("%", o.name, " is declared ",
                                v->type()->ToString(), " where it is defined"));
      }
      g.AddOutput(v);
    }
    return absl::OkStatus();
  }

  absl::Status Statement(Graph& g) {
    SkipWs();
    size_t at = pos_;
    if (ConsumeWord("init")) {
      std::string name;
      std::optional<Type> type;
      if (absl::Status s = Decl(&name, &type, true); !s.ok()) return s;
      if (absl::Status s = Expect("="); !s.ok()) return s;
      SkipWs();
      absl::StatusOr<Tensor> t = ParseTensor();
      if (!t.ok()) return t.status();
      auto existing = scopes_.back()->values.find(name);
      if (existing != scopes_.back()->values.end() &&
          existing->second->is_graph_input()) {
        return g.SetInputDefault(existing->second,
                                 std::make_shared<Tensor>(*std::move(t)));
      }
      absl::StatusOr<Value*> v = g.AddInitializer(name, *std::move(t));
      if (!v.ok()) return ErrorAt(at, v.status().message());
      if (type.has_value()) (*v)->SetType(std::move(type));
      return Define(name, *v, at);
    }
    if (ConsumeWord("sparse_init")) {
      if (!ConsumeWord("sparse")) return Error("expected `sparse`");
      absl::StatusOr<SparseTensor> s = ParseSparse();
      if (!s.ok()) return s.status();
      g.sparse_initializers().push_back(*std::move(s));
      return absl::OkStatus();
    }
    return NodeStatement(g);
  }

  absl::Status NodeStatement(Graph& g) {
    std::vector<std::string> out_names;
    std::vector<std::optional<Type>> out_types;
    std::vector<size_t> out_pos;
    SkipWs();
    if (Peek() == '%' || (Peek() == '_' && !IsWordChar(Peek(1)))) {
      do {
        out_pos.push_back((SkipWs(), pos_));
        std::string name;
        std::optional<Type> type;
        if (absl::Status s = Decl(&name, &type, true); !s.ok()) return s;
        out_names.push_back(std::move(name));
        out_types.push_back(std::move(type));
      } while (Consume(","));
      if (absl::Status s = Expect("="); !s.ok()) return s;
    }
    SkipWs();
    std::string domain, op(Word());
    pos_ += op.size();
    if (text_.substr(pos_, 2) == "::") {
      pos_ += 2;
      domain = std::move(op);
      op = std::string(Word());
      pos_ += op.size();
    }
    if (op.empty()) return Error("expected an operator name");
    if (absl::Status s = Expect("("); !s.ok()) return s;
    std::vector<Value*> inputs;
    std::vector<PendingUse> pending;
    while (!Consume(")")) {
      if (!inputs.empty()) {
        if (absl::Status s = Expect(","); !s.ok()) return s;
      }
      size_t at = (SkipWs(), pos_);
      std::string name;
      std::optional<Type> unused;
      if (absl::Status s = Decl(&name, &unused, false); !s.ok()) return s;
      Value* v = name.empty() ? nullptr : Lookup(name);
      if (!name.empty() && v == nullptr) {
        pending.push_back(
            {nullptr, static_cast<int>(inputs.size()), std::move(name), at});
      }
      inputs.push_back(v);
    }
    std::vector<Attr> attrs;
    SkipSpaces();
    if (Peek() == '{') {
      ++pos_;
      while (!Consume("}")) {
        if (!attrs.empty()) {
          if (absl::Status s = Expect(","); !s.ok()) return s;
        }
        size_t at = (SkipWs(), pos_);
        absl::StatusOr<Attr> a = ParseAttr();
        if (!a.ok()) return a.status();
        // A second attribute of the same name would replace the first one
        // (and free its subgraphs, whose pending uses are still listed).
        for (const Attr& earlier : attrs) {
          if (earlier.name() == a->name()) {
            return ErrorAt(at, absl::StrCat("attribute ", a->name(),
                                            " is given twice"));
          }
        }
        attrs.push_back(*std::move(a));
      }
    }
    std::string node_name;
    SkipSpaces();
    if (Peek() == '#') {
      ++pos_;
      if (Peek() == ' ') ++pos_;
      size_t end = text_.find('\n', pos_);
      if (end == absl::string_view::npos) end = text_.size();
      node_name = std::string(text_.substr(pos_, end - pos_));
      pos_ = end;
    }
    Node* node = g.Append(Node::Create(domain, op, inputs, out_names,
                                       std::move(attrs), node_name));
    for (PendingUse& use : pending) {
      use.node = node;
      scopes_.back()->pending.push_back(std::move(use));
    }
    for (size_t i = 0; i < out_names.size(); ++i) {
      if (out_types[i].has_value()) {
        node->output(static_cast<int>(i))->SetType(std::move(out_types[i]));
      }
      if (absl::Status s = Define(
              out_names[i], node->output(static_cast<int>(i)), out_pos[i]);
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }

  // ---- Model and functions ----

  absl::Status OpsetsInto(std::vector<OpsetImport>* opsets) {
    if (absl::Status s = Expect("{"); !s.ok()) return s;
    while (!Consume("}")) {
      if (!opsets->empty()) {
        if (absl::Status s = Expect(","); !s.ok()) return s;
      }
      absl::StatusOr<std::string> domain = Quoted();
      if (!domain.ok()) return domain.status();
      if (absl::Status s = Expect(":"); !s.ok()) return s;
      absl::StatusOr<int64_t> version = Int();
      if (!version.ok()) return version.status();
      opsets->push_back(OpsetImport{*std::move(domain), *version});
    }
    return absl::OkStatus();
  }

  absl::Status ModelHeader(Model& model) {
    pos_ += 5;  // model
    for (absl::string_view lit : {"ir_version", "="}) {
      if (absl::Status s = Expect(lit); !s.ok()) return s;
    }
    absl::StatusOr<int64_t> ir_version = Int();
    if (!ir_version.ok()) return ir_version.status();
    model.set_ir_version(*ir_version);
    for (absl::string_view lit : {"opsets", "="}) {
      if (absl::Status s = Expect(lit); !s.ok()) return s;
    }
    if (absl::Status s = OpsetsInto(&model.opset_imports()); !s.ok()) return s;
    if (ConsumeWord("producer")) {
      if (absl::Status s = Expect("="); !s.ok()) return s;
      absl::StatusOr<std::string> producer = Quoted();
      if (!producer.ok()) return producer.status();
      // "NAME VERSION", split at the first space (the name has none).
      size_t space = producer->find(' ');
      model.set_producer_name(producer->substr(0, space));
      if (space != std::string::npos) {
        model.set_producer_version(producer->substr(space + 1));
      }
    }
    while (ConsumeWord("meta")) {
      absl::StatusOr<std::string> key = Quoted();
      if (!key.ok()) return key.status();
      if (absl::Status s = Expect("="); !s.ok()) return s;
      absl::StatusOr<std::string> value = Quoted();
      if (!value.ok()) return value.status();
      model.metadata_props().emplace_back(*std::move(key), *std::move(value));
    }
    return absl::OkStatus();
  }

  absl::Status FunctionInto(Model& model) {
    SkipWs();
    size_t at = pos_;
    std::string domain(Word());
    pos_ += domain.size();
    if (absl::Status s = Expect("::"); !s.ok()) return s;
    absl::StatusOr<std::string> name = Name();
    if (!name.ok()) return name.status();
    auto f = std::make_unique<Function>(domain, *name);
    for (absl::string_view lit : {"attrs", "=", "["}) {
      if (absl::Status s = Expect(lit); !s.ok()) return s;
    }
    while (!Consume("]")) {
      if (!f->attributes().empty()) {
        if (absl::Status s = Expect(","); !s.ok()) return s;
      }
      SkipWs();
      std::string attr(Word());
      if (attr.empty()) return Error("expected an attribute name");
      pos_ += attr.size();
      f->attributes().push_back(std::move(attr));
    }
    for (absl::string_view lit : {"opsets", "="}) {
      if (absl::Status s = Expect(lit); !s.ok()) return s;
    }
    if (absl::Status s = OpsetsInto(&f->opset_imports()); !s.ok()) return s;
    if (!ConsumeWord("body")) return Error("expected `body`");
    if (absl::Status s = GraphInto(f->body()); !s.ok()) return s;
    absl::StatusOr<Function*> added = model.AddFunction(std::move(f));
    if (!added.ok()) return ErrorAt(at, added.status().message());
    return absl::OkStatus();
  }

  absl::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::vector<Scope*> scopes_;
};

}  // namespace

absl::StatusOr<Model> ParseModel(absl::string_view text) {
  return Parser(text).Run();
}

}  // namespace jax2onnx::ir
