// Scannerless recursive-descent parser for printed jaxprs
// (shared/JAXPR_FORMAT.md). Whitespace between tokens is insignificant, so
// the parser never looks at line structure except for `#` header lines at
// the top of a file. Operand lists have no terminator: an identifier is an
// operand only when it is bound in the current (lexical, per-jaxpr) scope,
// otherwise it starts the next equation (§2 "bound-variable rule"). Scopes
// are hash maps keyed by views into the source, so parsing is linear.
#include "jaxpr/text/parser.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "jaxpr/text/dim_parser.h"
#include "jaxpr/text/printer.h"
#include "jaxpr/text/py_value.h"

namespace jax2onnx::jaxpr {

// Defined in printer.cc: installs the ParamValue printing/equality hooks.
void InstallTextHooks();

namespace {

#define J2O_RETURN_IF_ERROR(expr)      \
  do {                                 \
    absl::Status _status = (expr);     \
    if (!_status.ok()) return _status; \
  } while (0)

bool IsWs(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}
bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }
bool IsPrimChar(char c) { return IsIdentChar(c) || c == '-'; }

// Param keys whose bare-name values are references to shared jaxprs (§5).
// `name=f` stays a plain name even when `f` is a shared jaxpr.
bool IsJaxprKey(absl::string_view key) {
  if (key == "branches") return true;
  return absl::EndsWith(key, "jaxpr") || absl::EndsWith(key, "jaxprs");
}

// Removes ANSI CSI sequences (`ESC[...m` colours and friends) between
// tokens, as a coloured terminal copy of JAX's output has them. A sequence
// inside a token (between two name or number characters) is no colouring:
// `*in_token` gets the output position of the first such one (else npos),
// which the parser reports as an error rather than joining the halves.
bool IsTokenChar(char c) { return IsIdentChar(c) || c == '.'; }
std::string StripAnsi(absl::string_view text, size_t* in_token) {
  *in_token = absl::string_view::npos;
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      size_t j = i + 2;
      while (j < text.size() &&
             (IsDigit(text[j]) || text[j] == ';' || text[j] == '?')) {
        ++j;
      }
      if (j < text.size() && ((text[j] >= 'A' && text[j] <= 'Z') ||
                              (text[j] >= 'a' && text[j] <= 'z'))) {
        if (*in_token == absl::string_view::npos && !out.empty() &&
            IsTokenChar(out.back()) && j + 1 < text.size() &&
            IsTokenChar(text[j + 1])) {
          *in_token = out.size();
        }
        i = j;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

using Scope = absl::flat_hash_map<absl::string_view, Var*>;

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

class Parser {
 public:
  Parser(absl::string_view text, absl::string_view filename,
         const ParseOptions& options)
      : filename_(filename), options_(options) {
    if (text.find('\x1b') != absl::string_view::npos) {
      storage_ = StripAnsi(text, &ansi_in_token_);
      s_ = storage_;
    } else {
      s_ = text;
    }
    line_starts_.push_back(0);
    for (size_t i = s_.find('\n'); i != absl::string_view::npos;
         i = s_.find('\n', i + 1)) {
      line_starts_.push_back(i + 1);
    }
  }

  ~Parser() {
    // Break reference cycles between shared jaxprs (possible only in
    // invalid input that referenced a definition from itself).
    for (auto& [name, slot] : shared_) {
      if (slot.jaxpr != nullptr && !slot.keep) slot.jaxpr->eqns.clear();
    }
  }

  absl::StatusOr<JaxprFile> ParseFile();
  absl::StatusOr<std::vector<Eqn>> ParseFragment(ClosedJaxpr* scope);

 private:
  struct SharedSlot {
    std::shared_ptr<ClosedJaxpr> jaxpr;
    bool defined = false;
    bool keep = false;  // set on success: the file owns the jaxprs now
    size_t first_ref = 0;
    std::vector<std::string> refs;  // shared names used inside the definition
  };

  // ---- positions and errors ----
  std::pair<int, int> LineCol(size_t pos) const {
    pos = std::min(pos, s_.size());
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), pos);
    const size_t line = static_cast<size_t>(it - line_starts_.begin());
    return {static_cast<int>(line),
            static_cast<int>(pos - line_starts_[line - 1] + 1)};
  }

  // Equation starts are visited in increasing order, so a forward-moving
  // cursor makes locations O(1) amortized.
  SourceLoc Loc(size_t pos) {
    if (loc_line_ >= line_starts_.size() || line_starts_[loc_line_] > pos) {
      auto [line, col] = LineCol(pos);
      loc_line_ = line - 1;
      return {line, col};
    }
    while (loc_line_ + 1 < line_starts_.size() &&
           line_starts_[loc_line_ + 1] <= pos) {
      ++loc_line_;
    }
    return {static_cast<int>(loc_line_ + 1),
            static_cast<int>(pos - line_starts_[loc_line_] + 1)};
  }

  absl::Status ErrorAt(size_t pos, absl::string_view message) const {
    pos = std::min(pos, s_.size());
    auto [line, col] = LineCol(pos);
    const size_t begin = line_starts_[line - 1];
    size_t end = s_.find('\n', begin);
    if (end == absl::string_view::npos) end = s_.size();
    if (end > begin && s_[end - 1] == '\r') --end;
    // Show at most ~160 bytes of very long (one-line) sources.
    size_t show_begin = begin;
    size_t show_end = end;
    constexpr size_t kWindow = 80;
    if (end - begin > 2 * kWindow) {
      show_begin = pos > begin + kWindow ? pos - kWindow : begin;
      show_end = std::min(end, show_begin + 2 * kWindow);
    }
    // Control characters are echoed escaped (`\x1b`), never raw: the
    // terminal showing the error must not act on them.
    std::string source;
    std::string caret;
    for (size_t i = show_begin; i < show_end; ++i) {
      const unsigned char c = static_cast<unsigned char>(s_[i]);
      const bool control = (c < 0x20 && c != '\t') || c == 0x7f;
      const std::string piece = control
                                    ? absl::StrFormat("\\x%02x", c)
                                    : std::string(1, static_cast<char>(c));
      source += piece;
      if (i < pos) {
        caret.append(c == '\t' ? "\t" : std::string(piece.size(), ' '));
      }
    }
    caret.push_back('^');
    return absl::InvalidArgumentError(absl::StrCat(filename_, ":", line, ":",
                                                   col, ": error: ", message,
                                                   "\n", source, "\n", caret));
  }

  // Text shown for what the parser found at `pos`.
  std::string Found(size_t pos) const {
    if (pos >= s_.size()) return "end of input";
    const char c = s_[pos];
    if (IsIdentStart(c)) {
      size_t e = pos;
      while (e < s_.size() && IsPrimChar(s_[e]) && e - pos < 40) ++e;
      return absl::StrCat("'", s_.substr(pos, e - pos), "'");
    }
    if (static_cast<unsigned char>(c) >= 0x20 &&
        static_cast<unsigned char>(c) < 0x7f) {
      return absl::StrCat("'", std::string(1, c), "'");
    }
    static const char* kHex = "0123456789abcdef";
    const unsigned char u = static_cast<unsigned char>(c);
    return absl::StrCat("byte 0x", std::string(1, kHex[u >> 4]),
                        std::string(1, kHex[u & 15]));
  }

  absl::Status Expected(absl::string_view what) const {
    return ErrorAt(p_, absl::StrCat("expected ", what, ", found ", Found(p_)));
  }

  class DepthGuard {
   public:
    explicit DepthGuard(Parser* parser) : parser_(parser) { ++parser_->depth_; }
    ~DepthGuard() { --parser_->depth_; }

   private:
    Parser* parser_;
  };
  absl::Status CheckDepth(size_t pos) const {
    if (depth_ > options_.max_nesting_depth) {
      return ErrorAt(
          pos, absl::StrCat("nesting deeper than ", options_.max_nesting_depth,
                            " levels (ParseOptions::"
                            "max_nesting_depth)"));
    }
    return absl::OkStatus();
  }

  // ---- low-level scanning ----
  bool AtEnd() const { return p_ >= s_.size(); }
  char At(size_t i) const { return i < s_.size() ? s_[i] : '\0'; }
  void SkipWs() {
    while (p_ < s_.size() && IsWs(s_[p_])) ++p_;
  }
  size_t NextNonWs(size_t i) const {
    while (i < s_.size() && IsWs(s_[i])) ++i;
    return i;
  }
  bool StartsWithAt(size_t i, absl::string_view prefix) const {
    return s_.substr(std::min(i, s_.size()), prefix.size()) == prefix;
  }
  // `[A-Za-z_][A-Za-z0-9_]*` at `i`, or empty.
  absl::string_view IdentAt(size_t i) const {
    if (i >= s_.size() || !IsIdentStart(s_[i])) return {};
    size_t e = i + 1;
    while (e < s_.size() && IsIdentChar(s_[e])) ++e;
    return s_.substr(i, e - i);
  }
  absl::string_view PrimAt(size_t i) const {
    if (i >= s_.size() || !IsIdentStart(s_[i])) return {};
    size_t e = i + 1;
    while (e < s_.size() && IsPrimChar(s_[e])) ++e;
    return s_.substr(i, e - i);
  }
  bool ConsumeIdent(absl::string_view word) {
    if (IdentAt(p_) == word) {
      p_ += word.size();
      return true;
    }
    return false;
  }
  // The keyword `in` of `in (outs)`; a variable may also be named `in`.
  bool IsKeywordIn(size_t i) const {
    return IdentAt(i) == "in" && At(NextNonWs(i + 2)) == '(';
  }
  bool IsLambdaAt(size_t brace) const {
    return At(brace) == '{' && IdentAt(NextNonWs(brace + 1)) == "lambda";
  }
  // End of the balanced group opened at `i` (one past the closer), or npos.
  size_t MatchGroup(size_t i) const {
    int depth = 0;
    for (size_t k = i; k < s_.size(); ++k) {
      const char c = s_[k];
      if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if (c == ')' || c == ']' || c == '}') {
        if (--depth == 0) return k + 1;
        if (depth < 0) return absl::string_view::npos;
      }
    }
    return absl::string_view::npos;
  }

  // ---- grammar ----
  absl::Status ParseHeaderLines(JaxprFile* file);
  absl::Status ParseJaxpr(ClosedJaxpr* jaxpr);
  absl::Status ParseBinders(ClosedJaxpr* jaxpr, Scope* scope, char terminator,
                            std::vector<Var*>* out);
  absl::Status ParseAval(Aval* aval);
  absl::Status ParseAvalUncached(Aval* aval);
  absl::Status ParseShape(Aval* aval);
  absl::Status ParseEqn(ClosedJaxpr* owner, Scope* scope, Eqn* eqn);
  absl::Status ParseRefIndex(absl::string_view* ref_name, std::string* index,
                             size_t* index_pos = nullptr);
  absl::Status AppendRefIndexOperands(ClosedJaxpr* owner, Scope* scope,
                                      size_t index_pos,
                                      absl::string_view index, Eqn* eqn);
  absl::Status ParseRefForm(ClosedJaxpr* owner, Scope* scope,
                            std::vector<Var*> outs, Eqn* eqn);
  absl::Status ParseOperands(ClosedJaxpr* owner, Scope* scope, Eqn* eqn);
  absl::Status ParseAtom(ClosedJaxpr* owner, Scope* scope,
                         absl::string_view context, Atom* atom);
  absl::Status ParseLiteral(Literal* lit);
  absl::Status ParseParams(Eqn* eqn);
  absl::Status ParseParamValue(absl::string_view key, ParamValue* out);
  absl::Status ParseJaxprTuple(ParamValue* out);
  // `Name(key={ lambda ... }, key=VALUE, ...)`: a NamedTuple of jaxprs
  // (custom_linear_solve's `jaxprs=_LinearSolveTuple(...)`), at `Name`.
  bool IsCallWithJaxprsAt(size_t at) const;
  absl::Status ParseCallWithJaxprs(ParamValue* out);
  absl::Status ParseEffects(ClosedJaxpr* jaxpr);
  ParamValue MakeRef(absl::string_view name, size_t pos);
  absl::Status ResolveShared(JaxprFile* file);
  bool LooksLikeBinderStart(size_t i);
  Var* Lookup(const Scope& scope, absl::string_view name) const {
    auto it = scope.find(name);
    return it == scope.end() ? nullptr : it->second;
  }
  Var* UnknownOperand(ClosedJaxpr* owner, Scope* scope,
                      absl::string_view name) {
    Var* v = owner->NewVar(std::string(name), Aval());
    v->aval.kind = Aval::Kind::kOpaque;
    (*scope)[v->name] = v;
    return v;
  }

  std::string storage_;
  absl::string_view s_;
  // Source position of the last lambda binder of each name, for duplicate
  // binder errors (ParseBinders).
  absl::flat_hash_map<absl::string_view, size_t> binder_pos_;
  // Where an ANSI escape sequence sat inside a token (npos: nowhere).
  size_t ansi_in_token_ = absl::string_view::npos;
  absl::Status AnsiInTokenError() const {
    return ErrorAt(ansi_in_token_,
                   "terminal escape sequence (ESC[...) inside a token; "
                   "remove it (colour codes may only sit between tokens)");
  }
  std::string filename_;
  ParseOptions options_;
  size_t p_ = 0;
  int depth_ = 0;
  std::vector<size_t> line_starts_;
  size_t loc_line_ = 0;
  int elided_count_ = 0;
  bool fragment_ = false;
  absl::flat_hash_map<std::string, SharedSlot> shared_;
  std::vector<std::string> shared_order_;
  std::string current_def_;  // shared definition being parsed, or ""
  absl::flat_hash_map<absl::string_view, Aval> aval_cache_;
};

absl::Status Parser::ParseHeaderLines(JaxprFile* file) {
  if (StartsWithAt(0, "\xEF\xBB\xBF")) p_ = 3;  // UTF-8 BOM
  for (;;) {
    SkipWs();
    if (AtEnd() || s_[p_] != '#') return absl::OkStatus();
    size_t end = s_.find('\n', p_);
    if (end == absl::string_view::npos) end = s_.size();
    absl::string_view line = s_.substr(p_ + 1, end - p_ - 1);
    line = absl::StripAsciiWhitespace(line);
    const size_t colon = line.find(':');
    std::string key, value;
    if (colon == absl::string_view::npos) {
      key = std::string(line);
    } else {
      key = std::string(absl::StripAsciiWhitespace(line.substr(0, colon)));
      value = std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
    absl::AsciiStrToLower(&key);
    file->header.emplace_back(std::move(key), std::move(value));
    p_ = end;
  }
}

absl::StatusOr<JaxprFile> Parser::ParseFile() {
  if (ansi_in_token_ != absl::string_view::npos) return AnsiInTokenError();
  JaxprFile file;
  file.path = filename_;
  if (s_.size() > options_.max_input_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(filename_, ": error: input is ", s_.size(),
                     " bytes, more than ParseOptions::max_input_bytes (",
                     options_.max_input_bytes, ")"));
  }
  J2O_RETURN_IF_ERROR(ParseHeaderLines(&file));
  // Shared `let NAME = { ... } in` definitions.
  for (;;) {
    SkipWs();
    if (IdentAt(p_) != "let") break;
    const size_t let_pos = p_;
    p_ += 3;
    SkipWs();
    const absl::string_view name = IdentAt(p_);
    if (name.empty()) return Expected("a shared jaxpr name after 'let'");
    const size_t name_pos = p_;
    p_ += name.size();
    SkipWs();
    if (At(p_) != '=') return Expected("'=' after 'let NAME'");
    ++p_;
    SkipWs();
    if (!IsLambdaAt(p_)) return Expected("'{ lambda' after 'let NAME ='");
    SharedSlot& slot = shared_[name];
    if (slot.defined) {
      return ErrorAt(
          name_pos, absl::StrCat("shared jaxpr '", name, "' is defined twice"));
    }
    if (slot.jaxpr == nullptr) {
      slot.jaxpr = std::make_shared<ClosedJaxpr>();
      slot.first_ref = name_pos;
    }
    slot.defined = true;
    std::shared_ptr<ClosedJaxpr> target = slot.jaxpr;
    shared_order_.emplace_back(name);
    current_def_ = std::string(name);
    J2O_RETURN_IF_ERROR(ParseJaxpr(target.get()));
    current_def_.clear();
    SkipWs();
    if (!ConsumeIdent("in")) {
      return Expected(absl::StrCat("'in' after the shared jaxpr '", name,
                                   "' (started at line ",
                                   LineCol(let_pos).first, ")"));
    }
  }
  SkipWs();
  if (AtEnd()) return Expected("a jaxpr '{ lambda ... }'");
  if (s_[p_] == '#') {
    return ErrorAt(p_,
                   "'#' header lines are only allowed at the top of the "
                   "file, before the jaxpr");
  }
  if (!IsLambdaAt(p_)) return Expected("a jaxpr '{ lambda ... }'");
  file.main = std::make_shared<ClosedJaxpr>();
  J2O_RETURN_IF_ERROR(ParseJaxpr(file.main.get()));
  SkipWs();
  if (!AtEnd()) {
    if (s_[p_] == '#') {
      return ErrorAt(p_,
                     "'#' header lines are only allowed at the top of the "
                     "file, before the jaxpr");
    }
    return ErrorAt(p_, absl::StrCat("unexpected ", Found(p_),
                                    " after the end of the jaxpr"));
  }
  J2O_RETURN_IF_ERROR(ResolveShared(&file));
  file.num_elided_literals = elided_count_;
  return file;
}

absl::Status Parser::ResolveShared(JaxprFile* file) {
  for (const auto& [name, slot] : shared_) {
    if (!slot.defined) {
      return ErrorAt(slot.first_ref, absl::StrCat("reference to shared jaxpr '",
                                                  name, "', but no 'let ", name,
                                                  " = { ... } in' defines it"));
    }
  }
  // Definitions may refer to each other in any order, but not in a cycle:
  // iterative DFS with colours.
  absl::flat_hash_map<absl::string_view, int> colour;  // 1 open, 2 done
  for (const std::string& root : shared_order_) {
    if (colour[root] == 2) continue;
    std::vector<std::pair<absl::string_view, size_t>> stack = {{root, 0}};
    colour[root] = 1;
    while (!stack.empty()) {
      auto& [name, next] = stack.back();
      const SharedSlot& slot = shared_.find(name)->second;
      if (next < slot.refs.size()) {
        const absl::string_view child = slot.refs[next++];
        int& c = colour[child];
        if (c == 1) {
          return ErrorAt(
              shared_.find(child)->second.first_ref,
              absl::StrCat("shared jaxpr '", child,
                           "' refers to itself (through '", name, "')"));
        }
        if (c == 0) {
          c = 1;
          stack.emplace_back(child, 0);
        }
      } else {
        colour[name] = 2;
        stack.pop_back();
      }
    }
  }
  for (const std::string& name : shared_order_) {
    SharedSlot& slot = shared_[name];
    slot.keep = true;
    file->shared.emplace_back(name, slot.jaxpr);
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseJaxpr(ClosedJaxpr* jaxpr) {
  DepthGuard guard(this);
  J2O_RETURN_IF_ERROR(CheckDepth(p_));
  const size_t open = p_;
  jaxpr->loc = Loc(p_);
  ++p_;  // '{'
  SkipWs();
  if (!ConsumeIdent("lambda")) return Expected("'lambda' after '{'");
  Scope scope;
  J2O_RETURN_IF_ERROR(ParseBinders(jaxpr, &scope, ';', &jaxpr->constvars));
  ++p_;
  J2O_RETURN_IF_ERROR(ParseBinders(jaxpr, &scope, '.', &jaxpr->invars));
  ++p_;
  SkipWs();
  if (!ConsumeIdent("let")) return Expected("'let' after the input binders");
  for (;;) {
    SkipWs();
    if (AtEnd()) {
      return ErrorAt(p_, absl::StrCat("unexpected end of input in the jaxpr "
                                      "opened at line ",
                                      LineCol(open).first,
                                      ": expected an equation or 'in (...)'"));
    }
    if (s_[p_] == ';') {
      ++p_;
      continue;
    }
    if (IsKeywordIn(p_)) break;
    Eqn eqn;
    J2O_RETURN_IF_ERROR(ParseEqn(jaxpr, &scope, &eqn));
    jaxpr->eqns.push_back(std::move(eqn));
  }
  p_ += 2;  // 'in'
  SkipWs();
  ++p_;  // '('
  SkipWs();
  if (At(p_) != ')') {
    for (;;) {
      Atom atom;
      J2O_RETURN_IF_ERROR(ParseAtom(jaxpr, &scope, "the output tuple", &atom));
      jaxpr->outvars.push_back(std::move(atom));
      SkipWs();
      if (At(p_) == ',') {
        ++p_;
        SkipWs();
        if (At(p_) == ')') break;
        continue;
      }
      if (At(p_) == ')') break;
      return Expected("',' or ')' in the output tuple");
    }
  }
  ++p_;  // ')'
  SkipWs();
  if (At(p_) == ':') J2O_RETURN_IF_ERROR(ParseEffects(jaxpr));
  SkipWs();
  if (At(p_) != '}') {
    return Expected(absl::StrCat("'}' closing the jaxpr opened at line ",
                                 LineCol(open).first));
  }
  ++p_;
  return absl::OkStatus();
}

absl::Status Parser::ParseEffects(ClosedJaxpr* jaxpr) {
  ++p_;  // ':'
  SkipWs();
  if (At(p_) != '{') return Expected("'{' starting the effects");
  const size_t end = MatchGroup(p_);
  if (end == absl::string_view::npos) {
    return ErrorAt(p_, "unbalanced brackets in the effects");
  }
  // Split on commas at depth 0 inside the braces.
  int depth = 0;
  size_t item = p_ + 1;
  for (size_t k = p_ + 1; k < end; ++k) {
    const char c = s_[k];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if ((c == ',' && depth == 0) || k == end - 1) {
      absl::string_view e =
          absl::StripAsciiWhitespace(s_.substr(item, k - item));
      if (!e.empty()) jaxpr->effects.emplace_back(e);
      item = k + 1;
    }
  }
  p_ = end;
  return absl::OkStatus();
}

absl::Status Parser::ParseBinders(ClosedJaxpr* jaxpr, Scope* scope,
                                  char terminator, std::vector<Var*>* out) {
  for (;;) {
    SkipWs();
    if (AtEnd()) {
      return Expected(absl::StrCat("a binder 'name:type' or '",
                                   std::string(1, terminator), "'"));
    }
    if (s_[p_] == terminator) return absl::OkStatus();
    const absl::string_view name = IdentAt(p_);
    if (name.empty()) {
      return Expected(absl::StrCat(terminator == ';'
                                       ? "a constvar binder 'name:type' or ';'"
                                       : "an input binder 'name:type' or '.'"));
    }
    if (At(p_ + name.size()) != ':') {
      return ErrorAt(
          p_, absl::StrCat(
                  "binder '", name,
                  "' has no ':type'. Untyped binders are the legacy pre-2021 "
                  "jaxpr format (`{ lambda  ; a. let b = exp a ...`) or "
                  "pretty_print(print_shapes=False) output, which carry no "
                  "types and are not supported; print the jaxpr with JAX >= "
                  "0.4.30 default settings"));
    }
    const size_t name_pos = p_;
    p_ += name.size() + 1;
    Aval aval;
    J2O_RETURN_IF_ERROR(ParseAval(&aval));
    const bool drop = name == "_";
    if (!drop) {
      // Both binders' own positions (the type checker only knows the
      // lambda's, so it used to report both at 1:1).
      if (auto it = binder_pos_.find(name);
          it != binder_pos_.end() && Lookup(*scope, name) != nullptr) {
        const auto [line, col] = LineCol(it->second);
        return ErrorAt(name_pos,
                       absl::StrCat("duplicate binder '", name,
                                    "' (first bound at ", filename_, ":", line,
                                    ":", col, ")"));
      }
      binder_pos_[name] = name_pos;
    }
    Var* v = jaxpr->NewVar(std::string(name), std::move(aval), drop);
    out->push_back(v);
    if (!drop) (*scope)[name] = v;
  }
}

// aval ::= DTYPE ('<' MEMSPACE '>')? '[' dims ']' ('{' ... '}')*
//        | 'Tok' | IDENT ( <...> | {...} | [...] | (...) )*   (kept as text)
absl::Status Parser::ParseAval(Aval* aval) {
  const size_t start = p_;
  const absl::string_view ident = IdentAt(p_);
  if (ident.empty()) return Expected("a type such as 'f32[3]'");
  // Fast path: the same plain `dtype[dims]` text recurs in almost every
  // binder of a jaxpr; reuse the parsed Aval (its DimExprs are shared).
  size_t plain_end = absl::string_view::npos;
  if (At(p_ + ident.size()) == '[') {
    const size_t close = s_.find(']', p_ + ident.size());
    if (close != absl::string_view::npos && close - p_ < 256 &&
        At(close + 1) != '{') {
      plain_end = close + 1;
      auto it = aval_cache_.find(s_.substr(p_, plain_end - p_));
      if (it != aval_cache_.end()) {
        *aval = it->second;
        p_ = plain_end;
        return absl::OkStatus();
      }
    }
  }
  absl::Status status = ParseAvalUncached(aval);
  if (status.ok() && plain_end == p_ && aval->kind == Aval::Kind::kShaped) {
    aval_cache_.emplace(s_.substr(start, p_ - start), *aval);
  }
  return status;
}

absl::Status Parser::ParseAvalUncached(Aval* aval) {
  const size_t start = p_;
  const absl::string_view ident = IdentAt(p_);
  p_ += ident.size();
  std::string dtype_name(ident);
  std::string memory_space;
  if (At(p_) == '<' && ident == "key") {
    // PRNG key dtypes: key<fry>.
    const size_t close = s_.find('>', p_);
    if (close == absl::string_view::npos || close - p_ > 64) {
      return ErrorAt(p_, "unterminated '<' in a key dtype");
    }
    dtype_name = std::string(s_.substr(start, close + 1 - start));
    p_ = close + 1;
  } else if (At(p_) == '{' && ident == "bint") {
    const size_t close = s_.find('}', p_);
    if (close == absl::string_view::npos || close - p_ > 64) {
      return ErrorAt(p_, "unterminated '{' in a bint dtype");
    }
    dtype_name = std::string(s_.substr(start, close + 1 - start));
    p_ = close + 1;
  }
  if (At(p_) == '<') {
    size_t close = p_ + 1;
    while (close < s_.size() && IsIdentChar(s_[close])) ++close;
    if (At(close) == '>' && At(close + 1) == '[') {
      memory_space = std::string(s_.substr(p_ + 1, close - p_ - 1));
      p_ = close + 1;
    }
  }
  if (At(p_) == '[') {
    if (!IsKnownDTypeName(dtype_name)) {
      // A misspelt or invented dtype (`f33`, `i31`) would otherwise travel as
      // a pass-through kOther dtype and fail far from here.
      return ErrorAt(start, absl::StrCat("unknown dtype '", dtype_name, "'"));
    }
    aval->kind = Aval::Kind::kShaped;
    aval->dtype_name = dtype_name;
    if (auto d = DTypeFromShortName(dtype_name)) {
      aval->dtype = *d;
    } else {
      aval->dtype = DType::kOther;
    }
    aval->memory_space = std::move(memory_space);
    J2O_RETURN_IF_ERROR(ParseShape(aval));
    if (aval->kind == Aval::Kind::kShaped) {
      // vma / unreduced suffix groups `{V:x}` directly after `]`.
      const size_t suffix_start = p_;
      while (At(p_) == '{') {
        const size_t end = MatchGroup(p_);
        if (end == absl::string_view::npos) {
          return ErrorAt(p_, "unbalanced '{' after a type");
        }
        p_ = end;
      }
      aval->suffix = std::string(s_.substr(suffix_start, p_ - suffix_start));
      return absl::OkStatus();
    }
    p_ = start;  // named shape: re-scan the whole aval as opaque text
  } else {
    p_ = start + ident.size();
  }
  if (ident == "Tok" && !IsIdentChar(At(p_)) && At(p_) != '<' &&
      At(p_) != '{' && At(p_) != '[') {
    aval->kind = Aval::Kind::kToken;
    aval->opaque_text = "Tok";
    return absl::OkStatus();
  }
  // Unknown aval (Ref{...}, MemRef<None>{...}, AbstractFuture{...}, ...).
  p_ = start + ident.size();
  for (;;) {
    const char c = At(p_);
    if (c == '<') {
      int depth = 0;
      size_t k = p_;
      for (; k < s_.size(); ++k) {
        if (s_[k] == '<') ++depth;
        if (s_[k] == '>' && --depth == 0) break;
        if (s_[k] == '\n') break;
      }
      if (k >= s_.size() || s_[k] != '>') {
        return ErrorAt(p_, "unterminated '<' in a type");
      }
      p_ = k + 1;
    } else if (c == '{' || c == '[' || c == '(') {
      const size_t end = MatchGroup(p_);
      if (end == absl::string_view::npos) {
        return ErrorAt(
            p_, absl::StrCat("unbalanced '", std::string(1, c), "' in a type"));
      }
      p_ = end;
    } else {
      break;
    }
  }
  aval->kind = Aval::Kind::kOpaque;
  aval->dtype = DType::kInvalid;
  aval->opaque_text = std::string(s_.substr(start, p_ - start));
  return absl::OkStatus();
}

// dims inside `[...]`, split on ',' at parenthesis depth 0; a dim may carry
// an explicit-mesh sharding `@axis` / `@(x,y)`.
absl::Status Parser::ParseShape(Aval* aval) {
  const size_t open = p_;
  size_t close = open + 1;
  int depth = 0;
  bool named_shape = false;
  for (; close < s_.size(); ++close) {
    const char c = s_[close];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ']' && depth <= 0) break;
    if (c == ';') named_shape = true;
    const bool allowed = IsIdentChar(c) || c == ' ' || c == ',' || c == '(' ||
                         c == ')' || c == '*' || c == '^' || c == '+' ||
                         c == '-' || c == '@' || c == ';' || c == ':';
    if (!allowed) {
      return ErrorAt(close, absl::StrCat("unexpected ", Found(close),
                                         " in the shape of a type"));
    }
  }
  if (close >= s_.size()) {
    return ErrorAt(open, "unterminated '[' in the shape of a type");
  }
  if (named_shape) {
    // 0.4.30 named shapes `f32[3;i:4]`: keep the aval as text.
    aval->kind = Aval::Kind::kOpaque;
    return absl::OkStatus();
  }
  p_ = close + 1;
  aval->shape.clear();
  if (close == open + 1) return absl::OkStatus();
  size_t item = open + 1;
  depth = 0;
  bool any_sharding = false;
  std::vector<std::string> sharding;
  for (size_t k = open + 1; k <= close; ++k) {
    const char c = s_[k];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (!(k == close || (c == ',' && depth == 0))) continue;
    absl::string_view dim = s_.substr(item, k - item);
    std::string shard;
    // `@` at depth 0 separates the sharding.
    int d2 = 0;
    for (size_t m = 0; m < dim.size(); ++m) {
      if (dim[m] == '(') ++d2;
      if (dim[m] == ')') --d2;
      if (dim[m] == '@' && d2 == 0) {
        shard = std::string(absl::StripAsciiWhitespace(dim.substr(m + 1)));
        // `4@` names no mesh axis: no JAX print has it, and the printer,
        // which writes `@` only before an axis name, could not give it back.
        if (shard.empty()) {
          return ErrorAt(item + m, "expected a mesh axis name after '@'");
        }
        dim = dim.substr(0, m);
        any_sharding = true;
        break;
      }
    }
    const size_t lead =
        dim.size() - absl::StripLeadingAsciiWhitespace(dim).size();
    absl::string_view trimmed = absl::StripAsciiWhitespace(dim);
    if (trimmed.empty()) {
      return ErrorAt(item, "empty dimension in the shape of a type");
    }
    DimExpr expr;
    std::string error;
    size_t error_offset = 0;
    if (!ParseDimExpr(trimmed, options_.max_nesting_depth, &expr, &error,
                      &error_offset)) {
      return ErrorAt(item + lead + error_offset, error);
    }
    aval->shape.push_back(std::move(expr));
    sharding.push_back(std::move(shard));
    item = k + 1;
  }
  if (any_sharding) aval->dim_sharding = std::move(sharding);
  return absl::OkStatus();
}

// True when an identifier followed by ':' at `i` starts the binders of a
// new equation (`x:f32[] y:f32[] = ...`) rather than being a typed literal
// such as `inf:f32[]`. Only consulted for `inf`/`nan`, which are both
// literals and valid variable names.
bool Parser::LooksLikeBinderStart(size_t i) {
  // A new equation starts on a new line or after ';'.
  size_t b = i;
  bool fresh = false;
  while (b > 0 && IsWs(s_[b - 1])) {
    if (s_[b - 1] == '\n') fresh = true;
    --b;
  }
  if (b > 0 && s_[b - 1] == ';') fresh = true;
  if (!fresh) return false;
  const size_t saved = p_;
  p_ = i;
  bool result = false;
  for (;;) {
    const absl::string_view name = IdentAt(p_);
    if (name.empty() || At(p_ + name.size()) != ':') break;
    p_ += name.size() + 1;
    Aval aval;
    if (!ParseAval(&aval).ok()) break;
    SkipWs();
    if ((At(p_) == '=' && At(p_ + 1) != '=') || StartsWithAt(p_, "<-") ||
        At(p_) == ',') {
      result = true;
      break;
    }
  }
  p_ = saved;
  return result;
}

absl::Status Parser::ParseEqn(ClosedJaxpr* owner, Scope* scope, Eqn* eqn) {
  const size_t start = p_;
  eqn->loc = Loc(p_);
  if (StartsWithAt(p_, "...")) {
    // Elided equations in error messages (pp_jaxpr_eqn_range).
    eqn->primitive = "...";
    p_ += 3;
    return absl::OkStatus();
  }
  std::vector<Var*> outs;
  const absl::string_view first = IdentAt(p_);
  if (!first.empty() && At(p_ + first.size()) == ':') {
    for (;;) {
      const absl::string_view name = IdentAt(p_);
      p_ += name.size() + 1;
      Aval aval;
      J2O_RETURN_IF_ERROR(ParseAval(&aval));
      outs.push_back(
          owner->NewVar(std::string(name), std::move(aval), name == "_"));
      SkipWs();
      const absl::string_view next = IdentAt(p_);
      if (!next.empty() && At(p_ + next.size()) == ':') continue;
      break;
    }
    if (StartsWithAt(p_, "<-") || At(p_) == ',') {
      return ParseRefForm(owner, scope, std::move(outs), eqn);
    }
    if (At(p_) != '=') return Expected("'=' after the output binders");
    ++p_;
    SkipWs();
  } else if (!first.empty() && At(p_ + first.size()) == '[' &&
             Lookup(*scope, first) != nullptr) {
    // `r[idx] <- v` / `r[idx] += v` where r is a bound ref.
    const size_t end = MatchGroup(p_ + first.size());
    if (end != absl::string_view::npos) {
      const size_t after = NextNonWs(end);
      if (StartsWithAt(after, "<-") || StartsWithAt(after, "+=")) {
        return ParseRefForm(owner, scope, {}, eqn);
      }
    }
  }
  const absl::string_view prim = PrimAt(p_);
  if (prim.empty()) {
    return Expected(outs.empty() ? "an equation" : "a primitive name");
  }
  // An equation without outputs named like a bound variable cannot be
  // printed back: on its own line it reads as more operands of the equation
  // before it (`b = foo\n  d f` is `b = foo d f`). Found by parser_fuzzer.
  if (outs.empty() && !fragment_ && Lookup(*scope, prim) != nullptr) {
    return ErrorAt(start, absl::StrCat("'", prim,
                                       "' is a variable bound in this jaxpr, "
                                       "not a primitive: an equation with no "
                                       "outputs cannot be named like one"));
  }
  eqn->primitive = std::string(prim);
  p_ += prim.size();
  if (At(p_) == '[') J2O_RETURN_IF_ERROR(ParseParams(eqn));
  J2O_RETURN_IF_ERROR(ParseOperands(owner, scope, eqn));
  if (outs.empty() && eqn->params.empty() && eqn->inputs.empty() &&
      !fragment_) {
    return ErrorAt(start,
                   absl::StrCat("'", prim,
                                "' is not a variable bound in this jaxpr, and "
                                "an equation with no outputs, params or "
                                "operands is not valid"));
  }
  for (Var* v : outs) {
    if (!v->is_drop) (*scope)[v->name] = v;
  }
  eqn->outputs = std::move(outs);
  return absl::OkStatus();
}

// `r[idx]` at p_: the ref name and the index text between the brackets.
absl::Status Parser::ParseRefIndex(absl::string_view* ref_name,
                                   std::string* index, size_t* index_pos) {
  *ref_name = IdentAt(p_);
  if (ref_name->empty() || At(p_ + ref_name->size()) != '[') {
    return Expected("a ref expression 'ref[index]'");
  }
  p_ += ref_name->size();
  const size_t end = MatchGroup(p_);
  if (end == absl::string_view::npos) {
    return ErrorAt(p_, "unbalanced '[' in a ref index");
  }
  *index = std::string(s_.substr(p_ + 1, end - p_ - 2));
  if (index_pos != nullptr) *index_pos = p_ + 1;
  p_ = end;
  return absl::OkStatus();
}

// The dynamic parts of a printed NDIndexer (state/indexing.py pretty_print)
// are operands of the equation after the ref (and value), in print order, as
// JAX flattens them: an entry `i` (int indexer: a variable or an integer
// literal), `i:i+n` (dynamic start i), `a:a+j` / `:j` (dynamic size j).
// Static slices (`:`, `a:b`, `:b`, `a:`) and `...` add none.
absl::Status Parser::AppendRefIndexOperands(ClosedJaxpr* owner, Scope* scope,
                                            size_t index_pos,
                                            absl::string_view index,
                                            Eqn* eqn) {
  if (index == "...") return absl::OkStatus();
  const size_t saved = p_;
  auto var_at = [&](size_t pos, absl::string_view name) -> absl::Status {
    Var* v = Lookup(*scope, name);
    if (v == nullptr) {
      if (!fragment_) {
        return ErrorAt(pos, absl::StrCat("unknown variable '", name,
                                         "' in a ref index"));
      }
      v = UnknownOperand(owner, scope, name);
    }
    eqn->inputs.push_back(Atom::OfVar(v));
    return absl::OkStatus();
  };
  auto is_int = [](absl::string_view t) {
    if (!t.empty() && t[0] == '-') t.remove_prefix(1);
    if (t.empty()) return false;
    for (char c : t) {
      if (!IsDigit(c)) return false;
    }
    return true;
  };
  size_t offset = 0;
  for (absl::string_view entry : absl::StrSplit(index, ',')) {
    const size_t pos = index_pos + offset;
    offset += entry.size() + 1;
    const size_t colon = entry.find(':');
    if (colon == absl::string_view::npos) {
      if (entry.empty()) return ErrorAt(pos, "empty entry in a ref index");
      p_ = pos;
      Atom atom;
      J2O_RETURN_IF_ERROR(ParseAtom(owner, scope, "a ref index", &atom));
      if (p_ != pos + entry.size()) {
        p_ = saved;
        return ErrorAt(pos, absl::StrCat("unrecognised ref index entry '",
                                         entry, "'"));
      }
      eqn->inputs.push_back(std::move(atom));
      continue;
    }
    const absl::string_view start = entry.substr(0, colon);
    const absl::string_view rest = entry.substr(colon + 1);
    if (!start.empty() && !is_int(start)) {
      if (IdentAt(pos) != start) {
        return ErrorAt(pos, absl::StrCat("unrecognised slice start '", start,
                                         "' in a ref index"));
      }
      J2O_RETURN_IF_ERROR(var_at(pos, start));
    }
    const size_t plus = rest.find('+');
    if (plus == absl::string_view::npos) {
      if (!rest.empty() && !is_int(rest)) {
        return ErrorAt(pos + colon + 1,
                       absl::StrCat("unrecognised slice end '", rest,
                                    "' in a ref index (expected an integer, "
                                    "or START+SIZE)"));
      }
      if (!start.empty() && !is_int(start)) {
        return ErrorAt(pos, "a dynamic slice start prints as 'i:i+size'");
      }
      continue;
    }
    if (rest.substr(0, plus) != start) {
      return ErrorAt(pos + colon + 1,
                     absl::StrCat("slice end '", rest, "' must read '", start,
                                  "+SIZE' in a ref index"));
    }
    const absl::string_view size = rest.substr(plus + 1);
    const size_t size_pos = pos + colon + 2 + plus;
    if (is_int(size)) continue;
    if (IdentAt(size_pos) != size) {
      return ErrorAt(size_pos, absl::StrCat("unrecognised slice size '", size,
                                            "' in a ref index"));
    }
    J2O_RETURN_IF_ERROR(var_at(size_pos, size));
  }
  p_ = saved;
  return absl::OkStatus();
}

// State primitives in ref syntax (§8):
//   y:T <- r[idx]              get
//   r[idx] <- v                swap (result dropped)
//   y:T, r[idx] <- r[idx], v   swap
//   r[idx] += v                addupdate
// The index text is kept verbatim as the opaque param `idx`.
absl::Status Parser::ParseRefForm(ClosedJaxpr* owner, Scope* scope,
                                  std::vector<Var*> outs, Eqn* eqn) {
  auto ref_atom = [&](absl::string_view name, size_t pos,
                      Atom* atom) -> absl::Status {
    Var* v = Lookup(*scope, name);
    if (v == nullptr) {
      if (!fragment_) {
        return ErrorAt(pos, absl::StrCat("unknown ref variable '", name, "'"));
      }
      v = UnknownOperand(owner, scope, name);
    }
    *atom = Atom::OfVar(v);
    return absl::OkStatus();
  };
  absl::string_view ref;
  std::string index;
  if (outs.empty()) {
    const size_t ref_pos = p_;
    size_t index_pos = 0;
    J2O_RETURN_IF_ERROR(ParseRefIndex(&ref, &index, &index_pos));
    SkipWs();
    eqn->primitive = StartsWithAt(p_, "+=") ? "addupdate" : "swap";
    p_ += 2;
    Atom r, value;
    J2O_RETURN_IF_ERROR(ref_atom(ref, ref_pos, &r));
    SkipWs();
    J2O_RETURN_IF_ERROR(ParseAtom(owner, scope, "a ref update", &value));
    eqn->inputs = {r, value};
    J2O_RETURN_IF_ERROR(
        AppendRefIndexOperands(owner, scope, index_pos, index, eqn));
  } else if (StartsWithAt(p_, "<-")) {
    if (outs.size() != 1) {
      return ErrorAt(p_, "a ref read 'x:T <- r[idx]' has exactly one output");
    }
    p_ += 2;
    SkipWs();
    const size_t ref_pos = p_;
    size_t index_pos = 0;
    J2O_RETURN_IF_ERROR(ParseRefIndex(&ref, &index, &index_pos));
    Atom r;
    J2O_RETURN_IF_ERROR(ref_atom(ref, ref_pos, &r));
    eqn->primitive = "get";
    eqn->inputs = {r};
    J2O_RETURN_IF_ERROR(
        AppendRefIndexOperands(owner, scope, index_pos, index, eqn));
  } else {
    // y:T, r[idx] <- r[idx], v
    ++p_;  // ','
    SkipWs();
    const size_t ref_pos = p_;
    size_t index_pos = 0;
    J2O_RETURN_IF_ERROR(ParseRefIndex(&ref, &index, &index_pos));
    SkipWs();
    if (!StartsWithAt(p_, "<-")) return Expected("'<-' in a ref swap");
    p_ += 2;
    SkipWs();
    absl::string_view ref2;
    std::string index2;
    J2O_RETURN_IF_ERROR(ParseRefIndex(&ref2, &index2));
    if (ref2 != ref || index2 != index) {
      return ErrorAt(ref_pos, "a ref swap must read and write the same ref");
    }
    SkipWs();
    if (At(p_) != ',') return Expected("',' before the swapped-in value");
    ++p_;
    SkipWs();
    Atom r, value;
    J2O_RETURN_IF_ERROR(ref_atom(ref, ref_pos, &r));
    J2O_RETURN_IF_ERROR(ParseAtom(owner, scope, "a ref swap", &value));
    eqn->primitive = "swap";
    eqn->inputs = {r, value};
    J2O_RETURN_IF_ERROR(
        AppendRefIndexOperands(owner, scope, index_pos, index, eqn));
  }
  eqn->params.Set("idx", ParamValue::Opaque(std::move(index)));
  for (Var* v : outs) {
    if (!v->is_drop) (*scope)[v->name] = v;
  }
  eqn->outputs = std::move(outs);
  return absl::OkStatus();
}

absl::Status Parser::ParseOperands(ClosedJaxpr* owner, Scope* scope, Eqn* eqn) {
  for (;;) {
    SkipWs();
    if (AtEnd()) return absl::OkStatus();
    const char c = s_[p_];
    if (c == ';' || c == '}' || c == ')' || c == ']') return absl::OkStatus();
    if (IsIdentStart(c)) {
      const absl::string_view id = IdentAt(p_);
      const char after = At(p_ + id.size());
      if (id == "in" && At(NextNonWs(p_ + 2)) == '(') return absl::OkStatus();
      if (after == '[' || after == '-') return absl::OkStatus();
      Var* bound = Lookup(*scope, id);
      const bool literal_word =
          id == "True" || id == "False" || id == "inf" || id == "nan";
      if (after == ':') {
        if (id == "True" || id == "False" ||
            ((id == "inf" || id == "nan") &&
             (bound != nullptr || !LooksLikeBinderStart(p_)))) {
          Literal lit;
          J2O_RETURN_IF_ERROR(ParseLiteral(&lit));
          eqn->inputs.push_back(Atom::OfLiteral(std::move(lit)));
          continue;
        }
        return absl::OkStatus();  // binders of the next equation
      }
      if (bound != nullptr) {
        eqn->inputs.push_back(Atom::OfVar(bound));
        p_ += id.size();
        continue;
      }
      if (literal_word) {
        Literal lit;
        J2O_RETURN_IF_ERROR(ParseLiteral(&lit));
        eqn->inputs.push_back(Atom::OfLiteral(std::move(lit)));
        continue;
      }
      if (fragment_) {
        eqn->inputs.push_back(Atom::OfVar(UnknownOperand(owner, scope, id)));
        p_ += id.size();
        continue;
      }
      return absl::OkStatus();  // a primitive with no outputs starts here
    }
    if (IsDigit(c) || c == '-' || c == '.' || c == '(' || c == '[') {
      if (c == '.' && StartsWithAt(p_, "...")) return absl::OkStatus();
      Literal lit;
      J2O_RETURN_IF_ERROR(ParseLiteral(&lit));
      eqn->inputs.push_back(Atom::OfLiteral(std::move(lit)));
      continue;
    }
    return ErrorAt(
        p_, absl::StrCat("unexpected ", Found(p_), " in the operands of '",
                         eqn->primitive, "'"));
  }
}

absl::Status Parser::ParseAtom(ClosedJaxpr* owner, Scope* scope,
                               absl::string_view context, Atom* atom) {
  const absl::string_view id = IdentAt(p_);
  if (!id.empty() && id != "True" && id != "False") {
    Var* v = Lookup(*scope, id);
    if (v != nullptr && At(p_ + id.size()) != ':') {
      p_ += id.size();
      *atom = Atom::OfVar(v);
      return absl::OkStatus();
    }
    if (id != "inf" && id != "nan") {
      if (fragment_) {
        p_ += id.size();
        *atom = Atom::OfVar(UnknownOperand(owner, scope, id));
        return absl::OkStatus();
      }
      return ErrorAt(p_,
                     absl::StrCat("unknown variable '", id, "' in ", context));
    }
  }
  Literal lit;
  J2O_RETURN_IF_ERROR(ParseLiteral(&lit));
  *atom = Atom::OfLiteral(std::move(lit));
  return absl::OkStatus();
}

namespace {

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

absl::StatusOr<std::vector<Eqn>> Parser::ParseFragment(ClosedJaxpr* owner) {
  fragment_ = true;
  if (ansi_in_token_ != absl::string_view::npos) return AnsiInTokenError();
  if (s_.size() > options_.max_input_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(filename_,
                     ": error: input larger than "
                     "ParseOptions::max_input_bytes"));
  }
  Scope scope;
  for (const auto& v : owner->owned_vars()) {
    if (!v->is_drop) scope[v->name] = v.get();
  }
  JaxprFile ignored;
  J2O_RETURN_IF_ERROR(ParseHeaderLines(&ignored));
  std::vector<Eqn> eqns;
  for (;;) {
    SkipWs();
    if (AtEnd()) break;
    if (s_[p_] == ';') {
      ++p_;
      continue;
    }
    Eqn eqn;
    const size_t before = p_;
    J2O_RETURN_IF_ERROR(ParseEqn(owner, &scope, &eqn));
    if (p_ == before) return Expected("an equation");
    eqns.push_back(std::move(eqn));
  }
  return eqns;
}

}  // namespace

absl::StatusOr<JaxprFile> ParseJaxprText(absl::string_view text,
                                         absl::string_view filename,
                                         const ParseOptions& options) {
  InstallTextHooks();
  Parser parser(text, filename, options);
  return parser.ParseFile();
}

absl::StatusOr<JaxprFile> ParseJaxprFile(const std::string& path,
                                         const ParseOptions& options) {
  // The size limit is enforced before and while reading: a regular file's
  // size comes from fstat, and anything else (a FIFO, /dev/zero) is read at
  // most max_input_bytes + 1 bytes, so no input is ever held past the limit.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) {
      return absl::NotFoundError(absl::StrCat("cannot open '", path,
                                              "': no such file"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot open '", path, "': ", std::strerror(error)));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot stat '", path, "': ", std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is a directory, not a .jaxpr file"));
  }
  const uint64_t limit = options.max_input_bytes;
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > limit) {
    return absl::ResourceExhaustedError(absl::StrCat(
        path, ": the file is ", st.st_size, " bytes, over the limit of ",
        limit, " bytes for jaxpr text"));
  }
  // Blocking reads from here on (O_NONBLOCK only kept open() of a FIFO
  // without a writer from hanging; reading then waits for the writer).
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<size_t>(st.st_size));
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InvalidArgumentError(
          absl::StrCat("cannot read '", path, "': ", std::strerror(errno)));
    }
    if (n == 0) break;
    if (text.size() + static_cast<uint64_t>(n) > limit) {
      return absl::ResourceExhaustedError(absl::StrCat(
          path, ": more than ", limit, " bytes of jaxpr text",
          S_ISREG(st.st_mode) ? "" : " (read from a file that is not regular)"));
    }
    text.append(chunk, static_cast<size_t>(n));
  }
  return ParseJaxprText(text, path, options);
}

absl::StatusOr<std::vector<Eqn>> ParseEquations(absl::string_view text,
                                                absl::string_view filename,
                                                ClosedJaxpr* scope,
                                                const ParseOptions& options) {
  InstallTextHooks();
  if (scope == nullptr) {
    return absl::InvalidArgumentError("ParseEquations needs a scope jaxpr");
  }
  Parser parser(text, filename, options);
  return parser.ParseFragment(scope);
}

}  // namespace jax2onnx::jaxpr
