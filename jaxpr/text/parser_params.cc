// The jaxpr text parser's literals and params (parser_internal.h): typed
// and untyped literals with their range checks, `[key=value ...]` params,
// nested and shared jaxprs in params, and NamedTuples of jaxprs.
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/text/py_value.h"
#include "jaxpr/text/parser_internal.h"

namespace jax2onnx::jaxpr::parser_internal {
namespace {

// Param keys whose bare-name values are references to shared jaxprs (§5).
// `name=f` stays a plain name even when `f` is a shared jaxpr.
bool IsJaxprKey(absl::string_view key) {
  if (key == "branches") return true;
  return absl::EndsWith(key, "jaxpr") || absl::EndsWith(key, "jaxprs");
}

// Why a typed literal's value does not fit its dtype ("" when it does). JAX
// prints a literal from a value of that dtype, so `300:u8[]`, `-1:u32[]`,
// `4294967296:i32[]` or `2:bool[]` cannot come from JAX; wrapping them
// silently would change the program's meaning. Float literals round (see
// below).
std::string LiteralRangeProblem(const Literal& lit) {
  const DType d = lit.aval->dtype;
  const std::string what =
      absl::StrCat("literal '", lit.text, "' does not fit its dtype ",
                   ShortName(d));
  const bool negative = !lit.text.empty() && lit.text[0] == '-';
  if (lit.kind == Literal::Kind::kInt) {
    // int_value is exact unless the text only fit as u64 (uint_value).
    const bool beyond_i64 = !negative && lit.int_value < 0;
    if (d == DType::kBool) {
      return lit.int_value == 0 || lit.int_value == 1
                 ? ""
                 : absl::StrCat(what, " (a bool literal is True or False)");
    }
    if (IsUnsignedInt(d)) {
      if (negative) return absl::StrCat(what, " (negative)");
      const int bits = ItemSize(d) * 8;
      if (bits < 64 && (beyond_i64 || lit.uint_value >> bits != 0)) {
        return absl::StrCat(what, " (above ", (uint64_t{1} << bits) - 1, ")");
      }
      return "";
    }
    if (IsSignedInt(d)) {
      const int bits = ItemSize(d) * 8;
      const int64_t hi = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
      const int64_t lo = -hi - 1;
      if (beyond_i64 || lit.int_value > hi || lit.int_value < lo) {
        return absl::StrCat(what, " (range ", lo, "..", hi, ")");
      }
      return "";
    }
    return "";
  }
  if (lit.kind == Literal::Kind::kFloat) {
    if (IsInteger(d) || d == DType::kBool) {
      return absl::StrCat(what, " (a float literal for an integer type)");
    }
    // A float literal that overflows its dtype is no error: JAX prints the
    // Python float it was given (bf16 promotion prints f32's largest finite
    // value, -3.4028234663852886e+38, which rounds to -inf in bf16) and
    // numpy/ml_dtypes round it, to the nearest value or to infinity, when the
    // array is made; Array::SetFromDouble rounds the same way.
  }
  return "";
}

// Length of a Python number token at `s` (`-1.5e-05`, `inf`, `-nan`, `2j`),
// or 0. `allow_sign` admits a leading '-'.
size_t NumberLength(absl::string_view s, bool allow_sign) {
  size_t i = 0;
  if (allow_sign && i < s.size() && s[i] == '-') ++i;
  if (s.substr(i, 3) == "inf" || s.substr(i, 3) == "nan") {
    i += 3;
  } else {
    const size_t digits = i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && IsDigit(s[i])) ++i;
    }
    if (i == digits || (i == digits + 1 && s[digits] == '.')) return 0;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      size_t k = i + 1;
      if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
      const size_t exp_digits = k;
      while (k < s.size() && IsDigit(s[k])) ++k;
      if (k == exp_digits) return 0;
      i = k;
    }
  }
  if (i < s.size() && s[i] == 'j') ++i;
  return i;
}

bool ParseDouble(absl::string_view text, double* out) {
  if (!text.empty() && text.back() == 'j') text.remove_suffix(1);
  auto res = std::from_chars(text.data(), text.data() + text.size(), *out);
  if (res.ec == std::errc::result_out_of_range) {
    // Python prints 1e+309-style values only as inf; keep a best effort.
    *out = std::strtod(std::string(text).c_str(), nullptr);
    return true;
  }
  return res.ec == std::errc() && res.ptr == text.data() + text.size();
}

}  // namespace

absl::Status Parser::ParseLiteral(Literal* lit) {
  const size_t start = p_;
  const absl::string_view rest = s_.substr(p_);
  if (StartsWithAt(p_, "[...]")) {
    lit->kind = Literal::Kind::kElidedArray;
    lit->text = "[...]";
    lit->elided_index = elided_count_++;
    p_ += 5;
  } else if (At(p_) == '(') {
    // Python complex: (1+0j), (-0-1j), (nan+nanj)
    const size_t real_len = NumberLength(rest.substr(1), true);
    const size_t sign = 1 + real_len;
    const size_t imag_len = real_len == 0 || sign + 1 > rest.size()
                                ? 0
                                : NumberLength(rest.substr(sign + 1), false);
    const size_t close = sign + 1 + imag_len;
    if (real_len == 0 || (At(p_ + sign) != '+' && At(p_ + sign) != '-') ||
        imag_len == 0 || rest[close - 1] != 'j' || At(p_ + close) != ')') {
      return ErrorAt(p_, "expected a complex literal such as '(1+0j)'");
    }
    lit->kind = Literal::Kind::kComplex;
    double re = 0, im = 0;
    if (!ParseDouble(rest.substr(1, real_len), &re) ||
        !ParseDouble(rest.substr(sign + 1, imag_len), &im)) {
      return ErrorAt(p_, "malformed complex literal");
    }
    lit->float_value = re;
    lit->imag_value = At(p_ + sign) == '-' ? -im : im;
    lit->text = std::string(rest.substr(0, close + 1));
    p_ += close + 1;
  } else if (IdentAt(p_) == "True" || IdentAt(p_) == "False") {
    lit->kind = Literal::Kind::kBool;
    lit->bool_value = IdentAt(p_) == "True";
    lit->text = std::string(IdentAt(p_));
    p_ += lit->text.size();
  } else {
    const size_t len = NumberLength(rest, true);
    if (len == 0 || IsIdentChar(At(p_ + len)) || At(p_ + len) == '.') {
      return ErrorAt(p_, absl::StrCat("expected a literal or a variable, "
                                      "found ",
                                      Found(p_)));
    }
    const absl::string_view text = rest.substr(0, len);
    lit->text = std::string(text);
    if (text.back() == 'j') {
      lit->kind = Literal::Kind::kComplex;
      double im = 0;
      if (!ParseDouble(text, &im)) {
        return ErrorAt(p_, "malformed complex literal");
      }
      lit->imag_value = im;
    } else if (text.find_first_of(".eEin") != absl::string_view::npos) {
      lit->kind = Literal::Kind::kFloat;
      if (!ParseDouble(text, &lit->float_value)) {
        return ErrorAt(p_,
                       absl::StrCat("malformed float literal '", text, "'"));
      }
    } else {
      lit->kind = Literal::Kind::kInt;
      auto res = std::from_chars(text.data(), text.data() + text.size(),
                                 lit->int_value);
      if (res.ec == std::errc()) {
        if (lit->int_value >= 0) {
          lit->uint_value = static_cast<uint64_t>(lit->int_value);
        }
      } else {
        // Only u64 values above INT64_MAX are legitimate here.
        auto ures = std::from_chars(text.data(), text.data() + text.size(),
                                    lit->uint_value);
        if (ures.ec != std::errc()) {
          return ErrorAt(p_, absl::StrCat("integer literal '", text,
                                          "' does not fit in 64 bits"));
        }
        lit->int_value = static_cast<int64_t>(lit->uint_value);
      }
      lit->float_value = static_cast<double>(lit->int_value);
    }
    p_ += len;
  }
  if (At(p_) == ':') {
    ++p_;
    Aval aval;
    J2O_RETURN_IF_ERROR(ParseAval(&aval));
    lit->aval = std::move(aval);
    if (std::string problem = LiteralRangeProblem(*lit); !problem.empty()) {
      return ErrorAt(start, problem);
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseParams(Eqn* eqn) {
  DepthGuard guard(this);
  J2O_RETURN_IF_ERROR(CheckDepth(p_));
  const size_t open = p_;
  ++p_;  // '['
  constexpr size_t kMaxParams = 4096;
  for (;;) {
    SkipWs();
    if (AtEnd()) {
      return ErrorAt(
          open, absl::StrCat("unterminated params of '", eqn->primitive, "'"));
    }
    if (s_[p_] == ']') {
      ++p_;
      return absl::OkStatus();
    }
    const absl::string_view key = IdentAt(p_);
    if (key.empty()) return Expected("a param 'key=value' or ']'");
    const size_t key_pos = p_;
    p_ += key.size();
    if (At(p_) != '=') {
      return Expected(absl::StrCat("'=' after param key '", key, "'"));
    }
    ++p_;
    if (eqn->params.Has(key)) {
      return ErrorAt(key_pos, absl::StrCat("param '", key, "' of '",
                                           eqn->primitive, "' given twice"));
    }
    if (eqn->params.entries().size() >= kMaxParams) {
      return ErrorAt(key_pos, "too many params in one equation");
    }
    ParamValue value;
    J2O_RETURN_IF_ERROR(ParseParamValue(key, &value));
    eqn->params.Set(std::string(key), std::move(value));
    if (!AtEnd() && !IsWs(s_[p_]) && s_[p_] != ']') {
      return Expected(
          absl::StrCat("whitespace or ']' after the value of "
                       "param '",
                       key, "'"));
    }
  }
}

ParamValue Parser::MakeRef(absl::string_view name, size_t pos) {
  if (fragment_ && shared_.find(name) == shared_.end()) {
    return ParamValue::Name(std::string(name));
  }
  SharedSlot& slot = shared_[name];
  if (slot.jaxpr == nullptr) {
    slot.jaxpr = std::make_shared<ClosedJaxpr>();
    slot.first_ref = pos;
  }
  std::shared_ptr<ClosedJaxpr> jaxpr = slot.jaxpr;
  if (!current_def_.empty()) shared_[current_def_].refs.emplace_back(name);
  return ParamValue::Jaxpr(std::move(jaxpr), std::string(name));
}

absl::Status Parser::ParseJaxprTuple(ParamValue* out) {
  DepthGuard guard(this);
  J2O_RETURN_IF_ERROR(CheckDepth(p_));
  const size_t open = p_;
  ++p_;  // '('
  std::vector<ParamValue> items;
  for (;;) {
    SkipWs();
    if (AtEnd()) return ErrorAt(open, "unterminated tuple of jaxprs");
    if (s_[p_] == ')') {
      ++p_;
      break;
    }
    if (IsLambdaAt(p_)) {
      auto jaxpr = std::make_shared<ClosedJaxpr>();
      J2O_RETURN_IF_ERROR(ParseJaxpr(jaxpr.get()));
      items.push_back(ParamValue::Jaxpr(std::move(jaxpr)));
      continue;
    }
    const absl::string_view name = IdentAt(p_);
    if (name.empty()) {
      return Expected("a jaxpr '{ lambda ... }', a shared jaxpr name or ')'");
    }
    items.push_back(MakeRef(name, p_));
    p_ += name.size();
  }
  *out = ParamValue::JaxprTuple(std::move(items));
  return absl::OkStatus();
}

bool Parser::IsCallWithJaxprsAt(size_t at) const {
  const absl::string_view name = IdentAt(at);
  if (name.empty() || At(at + name.size()) != '(') return false;
  int depth = 0;
  for (size_t k = at + name.size(); k < s_.size(); ++k) {
    const char d = s_[k];
    if (d == '(' || d == '[') {
      ++depth;
    } else if (d == ')' || d == ']') {
      if (--depth <= 0) return false;
    } else if (d == '{' && depth == 1 && IsLambdaAt(k)) {
      return true;
    }
  }
  return false;
}

absl::Status Parser::ParseCallWithJaxprs(ParamValue* out) {
  const std::string callee(IdentAt(p_));
  p_ += callee.size() + 1;  // past `Name(`
  std::vector<std::pair<std::string, ParamValue>> args;
  for (;;) {
    SkipWs();
    if (AtEnd()) return Expected("')' closing a call value");
    if (s_[p_] == ')') {
      ++p_;
      break;
    }
    const std::string field(IdentAt(p_));
    if (field.empty() || At(p_ + field.size()) != '=') {
      return Expected("a 'field=' of a call value");
    }
    p_ += field.size() + 1;
    SkipWs();
    ParamValue value;
    if (IsLambdaAt(p_)) {
      auto jaxpr = std::make_shared<ClosedJaxpr>();
      J2O_RETURN_IF_ERROR(ParseJaxpr(jaxpr.get()));
      value = ParamValue::Jaxpr(std::move(jaxpr));
    } else {
      // A plain value up to the `,` or `)` at depth 0.
      const size_t start = p_;
      int depth = 0;
      for (; p_ < s_.size(); ++p_) {
        const char d = s_[p_];
        if (d == '(' || d == '[' || d == '{') ++depth;
        if (d == ')' || d == ']' || d == '}') {
          if (depth == 0) break;
          --depth;
        }
        if (d == ',' && depth == 0) break;
      }
      const absl::string_view text =
          absl::StripTrailingAsciiWhitespace(s_.substr(start, p_ - start));
      if (text.empty()) return Expected("a value of a call field");
      if (!ParsePyValue(text, options_.max_nesting_depth, &value)) {
        value = ParamValue::Opaque(std::string(text));
      }
    }
    args.emplace_back(field, std::move(value));
    SkipWs();
    if (At(p_) == ',') ++p_;
  }
  *out = ParamValue::Call(callee, std::move(args));
  return absl::OkStatus();
}

absl::Status Parser::ParseParamValue(absl::string_view key, ParamValue* out) {
  SkipWs();
  if (AtEnd()) return Expected(absl::StrCat("a value for param '", key, "'"));
  const char c = s_[p_];
  // No Python repr starts with '='; accepting one made `k= =v` print as
  // `k==v`, which the previous param's value then swallowed (the scan below
  // does not end a value at `KEY==`, a comparison inside opaque text).
  if (c == '=') {
    return Expected(absl::StrCat("a value for param '", key, "'"));
  }
  if (IsIdentStart(c) && IsCallWithJaxprsAt(p_))
    return ParseCallWithJaxprs(out);
  if (IsLambdaAt(p_)) {
    auto jaxpr = std::make_shared<ClosedJaxpr>();
    J2O_RETURN_IF_ERROR(ParseJaxpr(jaxpr.get()));
    *out = ParamValue::Jaxpr(std::move(jaxpr));
    return absl::OkStatus();
  }
  const bool jaxpr_key = IsJaxprKey(key);
  if (c == '(') {
    const size_t inner = NextNonWs(p_ + 1);
    bool jaxpr_tuple = IsLambdaAt(inner);
    if (!jaxpr_tuple && jaxpr_key) {
      // `(f g)` (names separated by blanks, no commas) or `()`.
      const absl::string_view name = IdentAt(inner);
      jaxpr_tuple =
          At(inner) == ')' ||
          (!name.empty() && name != "None" && name != "True" &&
           name != "False" &&
           (IsWs(At(inner + name.size())) || At(inner + name.size()) == ')'));
    }
    if (jaxpr_tuple) return ParseJaxprTuple(out);
  }
  if (jaxpr_key && IsIdentStart(c)) {
    const absl::string_view name = IdentAt(p_);
    const char after = At(p_ + name.size());
    if (name != "None" &&
        (after == ']' || IsWs(after) || p_ + name.size() >= s_.size())) {
      *out = MakeRef(name, p_);
      p_ += name.size();
      return absl::OkStatus();
    }
  }
  // OPAQUE extent (§6): balanced over ()[]{} until whitespace + `KEY=` or
  // the `]` closing the params, both at depth 0. Quoted strings that close
  // on the same line are skipped so brackets inside them do not count.
  const size_t start = p_;
  int depth = 0;
  size_t k = p_;
  for (; k < s_.size(); ++k) {
    const char d = s_[k];
    if (d == '\'' || d == '"') {
      size_t q = k + 1;
      while (q < s_.size() && s_[q] != d && s_[q] != '\n') ++q;
      if (q < s_.size() && s_[q] == d) k = q;
      continue;
    }
    if (d == '(' || d == '[' || d == '{') {
      ++depth;
    } else if (d == ')' || d == '}') {
      if (depth > 0) --depth;
    } else if (d == ']') {
      if (depth == 0) break;
      --depth;
    } else if (depth == 0 && IsWs(d)) {
      const size_t n = NextNonWs(k);
      if (At(n) == ']') break;
      const absl::string_view next_key = IdentAt(n);
      if (!next_key.empty() && At(n + next_key.size()) == '=' &&
          At(n + next_key.size() + 1) != '=') {
        break;
      }
    }
  }
  if (k >= s_.size()) {
    return ErrorAt(start, absl::StrCat("unterminated value of param '", key,
                                       "' (missing ']')"));
  }
  const absl::string_view text =
      absl::StripTrailingAsciiWhitespace(s_.substr(start, k - start));
  if (text.empty()) {
    return ErrorAt(start, absl::StrCat("empty value for param '", key, "'"));
  }
  if (!ParsePyValue(text, options_.max_nesting_depth, out)) {
    *out = ParamValue::Opaque(std::string(text));
  }
  p_ = start + text.size();
  return absl::OkStatus();
}
}  // namespace jax2onnx::jaxpr::parser_internal
