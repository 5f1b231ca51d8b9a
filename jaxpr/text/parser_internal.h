// Internals of the jaxpr text parser (jaxpr/text/parser.cc): the Parser
// class, shared by its three implementation files along the grammar's
// seams: parser.cc (files, shared jaxprs, lambdas, binders, avals and
// shapes), parser_eqn.cc (equations, operands and the ref forms of state
// primitives) and parser_params.cc (literals and params). Not a public
// header: include jaxpr/text/parser.h.
#ifndef JAX2ONNX_JAXPR_TEXT_PARSER_INTERNAL_H_
#define JAX2ONNX_JAXPR_TEXT_PARSER_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/text/parser.h"

#ifndef J2O_RETURN_IF_ERROR
#define J2O_RETURN_IF_ERROR(expr)      \
  do {                                 \
    absl::Status _status = (expr);     \
    if (!_status.ok()) return _status; \
  } while (0)
#endif

namespace jax2onnx::jaxpr::parser_internal {

inline bool IsWs(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}
inline bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }
inline bool IsPrimChar(char c) { return IsIdentChar(c) || c == '-'; }

// Removes ANSI CSI sequences (`ESC[...m` colours and friends) between
// tokens, as a coloured terminal copy of JAX's output has them. A sequence
// inside a token (between two name or number characters) is no colouring:
// `*in_token` gets the output position of the first such one (else npos),
// which the parser reports as an error rather than joining the halves.
std::string StripAnsi(absl::string_view text, size_t* in_token);

using Scope = absl::flat_hash_map<absl::string_view, Var*>;

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

}  // namespace jax2onnx::jaxpr::parser_internal

#endif  // JAX2ONNX_JAXPR_TEXT_PARSER_INTERNAL_H_
