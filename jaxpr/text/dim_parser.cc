// Recursive-descent parser for symbolic dimensions as printed by JAX's
// `_DimExpr.__str__`: sums of terms (` + `, ` - `, a leading `- `), products
// with `*`, powers with `^`, and the functions mod/floordiv/max/min/
// non_negative. Subtraction is stored as a negated term so that the result
// prints back identically through DimExpr::ToString.
#include "jaxpr/text/dim_parser.h"

#include <charconv>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"

namespace jax2onnx::jaxpr {
namespace {

bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Largest exponent accepted in `b^N`; evaluation is O(N).
constexpr int64_t kMaxExponent = 1024;

class DimParser {
 public:
  DimParser(absl::string_view text, int max_depth)
      : s_(text), max_depth_(max_depth) {}

  bool Parse(DimExpr* out) {
    if (!Expr(out, 0)) return false;
    Ws();
    if (i_ != s_.size()) {
      return Fail(absl::StrCat("unexpected '", s_.substr(i_, 1),
                               "' in dimension '", s_, "'"));
    }
    return true;
  }

  const std::string& error() const { return error_; }
  size_t error_offset() const { return error_offset_; }

 private:
  void Ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  char Peek() {
    Ws();
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  bool Fail(std::string msg) {
    if (error_.empty()) {
      error_ = std::move(msg);
      error_offset_ = i_;
    }
    return false;
  }

  static DimExpr Negate(const DimExpr& e) {
    if (e.is_constant()) return DimExpr::Constant(-e.constant_value());
    if (e.kind() == DimExpr::Kind::kProduct && !e.operands().empty() &&
        e.operands()[0].is_constant()) {
      std::vector<DimExpr> ops = e.operands();
      ops[0] = DimExpr::Constant(-ops[0].constant_value());
      return DimExpr::Product(std::move(ops));
    }
    return DimExpr::Product({DimExpr::Constant(-1), e});
  }

  bool Expr(DimExpr* out, int depth) {
    if (depth > max_depth_) {
      return Fail(absl::StrCat("dimension nested deeper than ", max_depth_));
    }
    std::vector<DimExpr> terms;
    bool negate = false;
    if (Peek() == '-') {
      ++i_;
      negate = true;
    }
    for (;;) {
      DimExpr term;
      if (!Term(&term, depth)) return false;
      terms.push_back(negate ? Negate(term) : term);
      const char c = Peek();
      if (c == '+' || c == '-') {
        negate = c == '-';
        ++i_;
        continue;
      }
      break;
    }
    *out = DimExpr::Sum(std::move(terms));
    return true;
  }

  bool Term(DimExpr* out, int depth) {
    std::vector<DimExpr> factors;
    for (;;) {
      DimExpr f;
      if (!Factor(&f, depth)) return false;
      factors.push_back(std::move(f));
      if (Peek() == '*') {
        ++i_;
        continue;
      }
      break;
    }
    *out = DimExpr::Product(std::move(factors));
    return true;
  }

  bool Int(int64_t* v) {
    Ws();
    const size_t start = i_;
    while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
    if (start == i_) return Fail("expected an integer in a dimension");
    auto res = std::from_chars(s_.data() + start, s_.data() + i_, *v);
    if (res.ec != std::errc()) {
      const std::string digits(s_.substr(start, i_ - start));
      i_ = start;
      return Fail(
          absl::StrCat("dimension constant '", digits, "' is out of range"));
    }
    return true;
  }

  bool Factor(DimExpr* out, int depth) {
    if (!Primary(out, depth)) return false;
    if (Peek() == '^') {
      ++i_;
      int64_t exp = 0;
      if (!Int(&exp)) return false;
      if (exp > kMaxExponent) {
        return Fail(absl::StrCat("exponent ", exp, " is too large"));
      }
      *out = DimExpr::Pow(*out, exp);
    }
    return true;
  }

  bool Primary(DimExpr* out, int depth) {
    const char c = Peek();
    if (IsDigit(c)) {
      int64_t v = 0;
      if (!Int(&v)) return false;
      *out = DimExpr::Constant(v);
      return true;
    }
    if (c == '(') {
      ++i_;
      if (!Expr(out, depth + 1)) return false;
      if (Peek() != ')') return Fail("expected ')' in dimension");
      ++i_;
      return true;
    }
    if (!IsIdentStart(c)) {
      return Fail(c == '\0' ? std::string("dimension ends unexpectedly")
                            : absl::StrCat("unexpected '", s_.substr(i_, 1),
                                           "' in dimension"));
    }
    const size_t start = i_;
    while (i_ < s_.size() && IsIdentChar(s_[i_])) ++i_;
    const absl::string_view name = s_.substr(start, i_ - start);
    if (i_ < s_.size() && s_[i_] == '(') {
      ++i_;
      std::vector<DimExpr> args;
      for (;;) {
        DimExpr arg;
        if (!Expr(&arg, depth + 1)) return false;
        args.push_back(std::move(arg));
        const char d = Peek();
        if (d == ',') {
          ++i_;
          continue;
        }
        if (d == ')') {
          ++i_;
          break;
        }
        return Fail(absl::StrCat("expected ',' or ')' in call to '", name,
                                 "' in dimension"));
      }
      const size_t want = name == "non_negative" ? 1 : 2;
      if (name != "non_negative" && name != "mod" && name != "floordiv" &&
          name != "max" && name != "min") {
        i_ = start;
        return Fail(absl::StrCat("unknown dimension function '", name, "'"));
      }
      if (args.size() != want) {
        i_ = start;
        return Fail(absl::StrCat("'", name, "' takes ", want,
                                 " argument(s) in a dimension, got ",
                                 args.size()));
      }
      if (name == "non_negative") {
        *out = DimExpr::NonNegative(args[0]);
      } else if (name == "mod") {
        *out = DimExpr::Mod(args[0], args[1]);
      } else if (name == "floordiv") {
        *out = DimExpr::FloorDiv(args[0], args[1]);
      } else if (name == "max") {
        *out = DimExpr::Max(args[0], args[1]);
      } else {
        *out = DimExpr::Min(args[0], args[1]);
      }
      return true;
    }
    *out = DimExpr::Symbol(std::string(name));
    return true;
  }

  absl::string_view s_;
  int max_depth_;
  size_t i_ = 0;
  std::string error_;
  size_t error_offset_ = 0;
};

}  // namespace

bool ParseDimExpr(absl::string_view text, int max_depth, DimExpr* out,
                  std::string* error, size_t* error_offset) {
  // Fast path: the overwhelmingly common plain integer.
  if (!text.empty() && text.size() < 19) {
    int64_t v = 0;
    auto res = std::from_chars(text.data(), text.data() + text.size(), v);
    if (res.ec == std::errc() && res.ptr == text.data() + text.size() &&
        IsDigit(text[0])) {
      *out = DimExpr::Constant(v);
      return true;
    }
  }
  DimParser parser(text, max_depth);
  if (parser.Parse(out)) return true;
  if (error != nullptr) *error = parser.error();
  if (error_offset != nullptr) *error_offset = parser.error_offset();
  return false;
}

}  // namespace jax2onnx::jaxpr
