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
#include <cstdint>
#include <cstring>
#include <memory>
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
#include "jaxpr/text/parser_internal.h"

namespace jax2onnx::jaxpr {

// Defined in printer.cc: installs the ParamValue printing/equality hooks.
void InstallTextHooks();

namespace parser_internal {

static bool IsTokenChar(char c) { return IsIdentChar(c) || c == '.'; }
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

}  // namespace parser_internal

using parser_internal::Parser;

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
