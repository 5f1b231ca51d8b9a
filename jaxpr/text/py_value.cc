// Python-repr subset parser for param values. Values whose printed form the
// ParamValue tree could not reproduce (escaped strings, sets, complex
// numbers, ints beyond int64, `<function ...>`) are rejected so they stay
// opaque text, which keeps print(parse(x)) faithful.
#include "jaxpr/text/py_value.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/strings/string_view.h"
#include "jaxpr/text/dim_parser.h"

namespace jax2onnx::jaxpr {
namespace {

// A symbolic dimension expression that is neither a number nor a plain name
// (`4*b`, `b + 1`, `- b + 4`, `mod(b, 2)`): JAX prints such dims bare inside
// shape tuples (`new_sizes=(4*b,)`). They are kept as opaque items, the form
// the StableHLO translation builds and the type rules read, so a printed
// program re-parses to the same tree.
bool IsCompoundDimExpr(absl::string_view text, int max_depth) {
  DimExpr d;
  std::string error;
  size_t offset = 0;
  if (!ParseDimExpr(text, max_depth, &d, &error, &offset)) return false;
  return !d.is_constant() && d.kind() != DimExpr::Kind::kSymbol;
}

// numpy >= 2 reprs scalars as `np.int64(64)`, `np.float32(1.0)`,
// `np.bool_(True)`, `np.True_`;
// JAX prints such values wherever a param holds a numpy scalar (`sizes` of
// a split computed with numpy, `y` of integer_pow, ...). They are the plain
// number: an Int/Float/Bool keeping `text` as its spelling.
void NormalizeNumpyScalar(absl::string_view text, ParamValue* v) {
  if (v->kind() != ParamValue::Kind::kCall || v->call_args().size() != 1 ||
      !v->call_args()[0].first.empty()) {
    return;
  }
  absl::string_view callee = v->text();
  if (!absl::ConsumePrefix(&callee, "np.")) {
    if (!absl::ConsumePrefix(&callee, "numpy.")) return;
  }
  const ParamValue& arg = v->call_args()[0].second;
  static constexpr absl::string_view kInts[] = {
      "int8",  "int16",  "int32",  "int64",  "uint8", "uint16",
      "uint32", "uint64", "intc",  "uintc",  "intp",  "uintp",
      "longlong", "ulonglong", "int_", "short", "ushort", "byte", "ubyte"};
  static constexpr absl::string_view kFloats[] = {
      "float16", "float32", "float64", "float_", "double", "single", "half",
      "longdouble"};
  for (absl::string_view t : kInts) {
    if (callee == t && arg.kind() == ParamValue::Kind::kInt) {
      *v = ParamValue::Int(arg.int_value(), std::string(text));
      return;
    }
  }
  for (absl::string_view t : kFloats) {
    if (callee == t && (arg.kind() == ParamValue::Kind::kFloat ||
                        arg.kind() == ParamValue::Kind::kInt)) {
      const double value = arg.kind() == ParamValue::Kind::kFloat
                               ? arg.float_value()
                               : static_cast<double>(arg.int_value());
      *v = ParamValue::Float(value, std::string(text));
      return;
    }
  }
  // np.bool_(True) stays a call and np.True_ a name (a Bool would print
  // back as `True`); ParamValue::AsBool reads both.
}


bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsWs(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

class PyValueParser {
 public:
  PyValueParser(absl::string_view text, int max_depth)
      : s_(text), max_depth_(max_depth) {}

  bool ParseAll(ParamValue* out) {
    if (!Value(out, 0)) return false;
    Ws();
    if (i_ != s_.size()) return false;
    // `mod(b, 2)` is a dimension, not a call (a compound dim that is not a
    // call fails above and stays opaque text as a whole).
    if (out->kind() == ParamValue::Kind::kCall &&
        IsCompoundDimExpr(absl::StripAsciiWhitespace(s_), max_depth_)) {
      *out = ParamValue::Opaque(std::string(absl::StripAsciiWhitespace(s_)));
    }
    return true;
  }

 private:
  void Ws() {
    while (i_ < s_.size() && IsWs(s_[i_])) ++i_;
  }
  char Peek() {
    Ws();
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  bool StartsWith(absl::string_view p) const {
    return s_.substr(i_, p.size()) == p;
  }

  // Items up to `close`; `trailing_comma` reports `(x,)`.
  bool Items(char close, std::vector<ParamValue>* items, bool* trailing_comma,
             int depth) {
    *trailing_comma = false;
    if (Peek() == close) {
      ++i_;
      return true;
    }
    for (;;) {
      ParamValue v;
      Ws();
      const size_t start = i_;
      const bool parsed = Value(&v, depth + 1);
      const char next = Peek();
      if (!parsed || (next != ',' && next != close) ||
          v.kind() == ParamValue::Kind::kCall) {
        // Maybe a dimension expression: the text up to the `,` or `close`
        // at depth 0.
        const size_t end = ItemEnd(start, close);
        const absl::string_view text =
            absl::StripTrailingAsciiWhitespace(s_.substr(start, end - start));
        if (end < s_.size() && IsCompoundDimExpr(text, max_depth_)) {
          v = ParamValue::Opaque(std::string(text));
          i_ = end;
        } else if (!parsed) {
          return false;
        }
      }
      items->push_back(std::move(v));
      const char c = Peek();
      if (c == ',') {
        ++i_;
        if (Peek() == close) {
          ++i_;
          *trailing_comma = true;
          return true;
        }
        continue;
      }
      if (c == close) {
        ++i_;
        return true;
      }
      return false;
    }
  }

  // Where the item starting at `start` ends: the first `,` or `close` at
  // depth 0 (brackets balanced; quotes never occur in a dimension), or the
  // end of the text.
  size_t ItemEnd(size_t start, char close) const {
    int nesting = 0;
    for (size_t k = start; k < s_.size(); ++k) {
      const char d = s_[k];
      if (nesting == 0 && (d == ',' || d == close)) return k;
      if (d == '(' || d == '[' || d == '{') ++nesting;
      if (d == ')' || d == ']' || d == '}') {
        if (nesting == 0) return s_.size();
        --nesting;
      }
    }
    return s_.size();
  }

  bool Number(ParamValue* out) {
    const size_t start = i_;
    if (s_[i_] == '-') ++i_;
    if (StartsWith("inf") || StartsWith("nan")) {
      i_ += 3;
      if (i_ < s_.size() && IsIdentChar(s_[i_])) return false;
      const absl::string_view text = s_.substr(start, i_ - start);
      double v = 0;
      auto res = std::from_chars(text.data(), text.data() + text.size(), v);
      if (res.ec != std::errc()) return false;
      *out = ParamValue::Float(v, std::string(text));
      return true;
    }
    const size_t digits = i_;
    while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
    bool is_float = false;
    if (i_ < s_.size() && s_[i_] == '.') {
      is_float = true;
      ++i_;
      while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
    }
    if (i_ == digits || (i_ == digits + 1 && is_float)) return false;
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      is_float = true;
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      const size_t exp_digits = i_;
      while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
      if (i_ == exp_digits) return false;
    }
    // `1j`, `0x1f`, `1L`: not representable here.
    if (i_ < s_.size() && (IsIdentChar(s_[i_]) || s_[i_] == '.')) return false;
    const absl::string_view text = s_.substr(start, i_ - start);
    if (is_float) {
      double v = 0;
      auto res = std::from_chars(text.data(), text.data() + text.size(), v);
      if (res.ec != std::errc() && res.ec != std::errc::result_out_of_range) {
        return false;
      }
      *out = ParamValue::Float(v, std::string(text));
      return true;
    }
    int64_t v = 0;
    auto res = std::from_chars(text.data(), text.data() + text.size(), v);
    if (res.ec != std::errc()) return false;  // beyond int64: keep as text
    const std::string canonical = absl::StrCat(v);
    *out = ParamValue::Int(v, text == canonical ? "" : std::string(text));
    return true;
  }

  bool String(ParamValue* out) {
    const char quote = s_[i_];
    const size_t start = ++i_;
    while (i_ < s_.size() && s_[i_] != quote) {
      // Escapes and the other quote would not print back the same way.
      if (s_[i_] == '\\' || s_[i_] == '\'' || s_[i_] == '"' || s_[i_] == '\n') {
        return false;
      }
      ++i_;
    }
    if (i_ >= s_.size()) return false;
    *out = ParamValue::String(std::string(s_.substr(start, i_ - start)));
    ++i_;
    return true;
  }

  bool Name(ParamValue* out, int depth) {
    const size_t start = i_;
    for (;;) {
      while (i_ < s_.size() && IsIdentChar(s_[i_])) ++i_;
      if (i_ + 1 < s_.size() && s_[i_] == '.' && IsIdentStart(s_[i_ + 1])) {
        ++i_;
        continue;
      }
      break;
    }
    absl::string_view name = s_.substr(start, i_ - start);
    // PRNG key dtypes print as `key<fry>`.
    if (name == "key" && i_ < s_.size() && s_[i_] == '<') {
      const size_t close = s_.find('>', i_);
      if (close == absl::string_view::npos) return false;
      for (size_t k = i_ + 1; k < close; ++k) {
        if (!IsIdentChar(s_[k])) return false;
      }
      i_ = close + 1;
      name = s_.substr(start, i_ - start);
    }
    if (i_ < s_.size() && s_[i_] == '(') {
      ++i_;
      if (!Call(std::string(name), out, depth)) return false;
      NormalizeNumpyScalar(s_.substr(start, i_ - start), out);
      return true;
    }
    if (name == "None") {
      *out = ParamValue::None();
    } else if (name == "True" || name == "False") {
      *out = ParamValue::Bool(name == "True");
    } else if (name == "inf" || name == "nan") {
      *out = ParamValue::Float(name == "inf" ? HUGE_VAL : std::nan(""),
                               std::string(name));
    } else {
      *out = ParamValue::Name(std::string(name));
    }
    return true;
  }

  bool Call(std::string callee, ParamValue* out, int depth) {
    std::vector<std::pair<std::string, ParamValue>> args;
    if (Peek() == ')') {
      ++i_;
      *out = ParamValue::Call(std::move(callee), std::move(args));
      return true;
    }
    for (;;) {
      Ws();
      std::string key;
      // `name=` (but not `==`) introduces a keyword field.
      size_t j = i_;
      if (j < s_.size() && IsIdentStart(s_[j])) {
        while (j < s_.size() && IsIdentChar(s_[j])) ++j;
        if (j < s_.size() && s_[j] == '=' &&
            (j + 1 >= s_.size() || s_[j + 1] != '=')) {
          key = std::string(s_.substr(i_, j - i_));
          i_ = j + 1;
        }
      }
      ParamValue v;
      if (!Value(&v, depth + 1)) return false;
      args.emplace_back(std::move(key), std::move(v));
      const char c = Peek();
      if (c == ',') {
        ++i_;
        if (Peek() == ')') {
          // Only PartitionSpec's repr prints `P('x',)` (its partitions
          // tuple's repr without the parentheses).
          if (args.size() != 1 || !args[0].first.empty() ||
              (callee != "P" && callee != "PartitionSpec")) {
            return false;
          }
          ++i_;
          break;
        }
        continue;
      }
      if (c == ')') {
        ++i_;
        break;
      }
      return false;
    }
    *out = ParamValue::Call(std::move(callee), std::move(args));
    return true;
  }

  bool Dict(ParamValue* out, int depth) {
    std::vector<std::pair<ParamValue, ParamValue>> items;
    if (Peek() == '}') {
      ++i_;
      *out = ParamValue::Dict({});
      return true;
    }
    for (;;) {
      ParamValue key, value;
      if (!Value(&key, depth + 1)) return false;
      if (Peek() != ':') return false;  // a set: not representable
      ++i_;
      if (!Value(&value, depth + 1)) return false;
      items.emplace_back(std::move(key), std::move(value));
      const char c = Peek();
      if (c == ',') {
        ++i_;
        if (Peek() == '}') return false;
        continue;
      }
      if (c == '}') {
        ++i_;
        break;
      }
      return false;
    }
    *out = ParamValue::Dict(std::move(items));
    return true;
  }

  bool Value(ParamValue* out, int depth) {
    if (depth > max_depth_) return false;
    const char c = Peek();
    if (c == '\0' && i_ >= s_.size()) return false;
    if (c == '(') {
      ++i_;
      std::vector<ParamValue> items;
      bool trailing = false;
      if (!Items(')', &items, &trailing, depth)) return false;
      // `(x)` is a parenthesized expression, never a tuple repr.
      if (items.size() == 1 && !trailing) return false;
      if (items.size() > 1 && trailing) return false;
      *out = ParamValue::Tuple(std::move(items));
      return true;
    }
    if (c == '[') {
      ++i_;
      std::vector<ParamValue> items;
      bool trailing = false;
      if (!Items(']', &items, &trailing, depth) || trailing) return false;
      *out = ParamValue::List(std::move(items));
      return true;
    }
    if (c == '{') {
      ++i_;
      return Dict(out, depth);
    }
    if (c == '\'' || c == '"') return String(out);
    if (c == '-' || IsDigit(c)) return Number(out);
    if (c == '.' && StartsWith("...")) {
      i_ += 3;
      *out = ParamValue::Name("...");
      return true;
    }
    if (IsIdentStart(c)) return Name(out, depth);
    return false;
  }

  absl::string_view s_;
  int max_depth_;
  size_t i_ = 0;
};

}  // namespace

bool ParsePyValue(absl::string_view text, int max_depth, ParamValue* out) {
  PyValueParser parser(text, max_depth);
  return parser.ParseAll(out);
}

}  // namespace jax2onnx::jaxpr
