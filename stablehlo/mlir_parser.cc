#include "stablehlo/mlir_parser.h"

#include <cctype>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace jax2onnx::stablehlo {

std::optional<absl::string_view> Operation::Attr(absl::string_view key) const {
  for (const auto& [k, v] : attrs) {
    if (k == key) return v;
  }
  return std::nullopt;
}

bool Operation::HasWord(absl::string_view word) const {
  for (auto w : words) {
    if (w == word) return true;
  }
  return false;
}

absl::Status MlirError(const std::string& path, Loc loc,
                       absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ":", loc.line, ":", loc.col, ": error: ", message));
}

namespace {

#define J2O_EXPECT(ch)                                                       \
  do {                                                                       \
    if (!Peek(ch)) {                                                         \
      return Error(Here(), absl::StrCat("expected `", std::string(1, ch),    \
                                        "`, found `", Snippet(), "`"));      \
    }                                                                        \
    ++p_;                                                                    \
  } while (0)
#define J2O_RETURN_IF_ERROR_P(expr)        \
  do {                                     \
    absl::Status s_ = (expr);              \
    if (!s_.ok()) return s_;               \
  } while (0)

bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '$';
}
bool IsValueChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '$' || c == '-';
}

absl::string_view Trim(absl::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

class Parser {
 public:
  Parser(std::shared_ptr<const std::string> text, std::string path)
      : text_(std::move(text)), path_(std::move(path)) {
    begin_ = p_ = text_->data();
    end_ = begin_ + text_->size();
    line_start_ = begin_;
  }

  absl::StatusOr<MlirFile> Run() {
    MlirFile file;
    file.path = path_;
    file.text = text_;
    Module loose;  // functions outside a `module`
    bool loose_used = false;
    int split_line = 1;
    auto flush_loose = [&]() {
      if (loose_used) {
        file.modules.push_back(std::move(loose));
        loose = Module();
        loose_used = false;
      }
    };
    while (true) {
      SkipWs();
      if (split_seen_) {
        split_seen_ = false;
        flush_loose();
        split_line = line_;
      }
      if (p_ >= end_) break;
      if (*p_ == '#') {  // #loc = loc(...) alias, or other attribute alias
        SkipAlias();
        continue;
      }
      Loc loc = Here();
      absl::string_view word = PeekIdent();
      if (word == "module") {
        flush_loose();
        auto m = ParseModule();
        if (!m.ok()) return m.status();
        m->first_line = split_line;
        file.modules.push_back(std::move(*m));
        continue;
      }
      if (word == "func.func") {
        if (!loose_used) {
          loose.loc = loc;
          loose.first_line = split_line;
        }
        loose_used = true;
        auto f = ParseFunc();
        if (!f.ok()) return f.status();
        loose.funcs.push_back(std::move(*f));
        continue;
      }
      return Error(loc, absl::StrCat("expected `module` or `func.func`, found `",
                                     Snippet(), "`"));
    }
    flush_loose();
    if (file.modules.empty()) {
      return Error(Here(), "no module or function in the file");
    }
    return file;
  }

 private:
  Loc Here() const {
    return Loc{line_, static_cast<int>(p_ - line_start_) + 1};
  }
  absl::Status Error(Loc loc, absl::string_view msg) const {
    return MlirError(path_, loc, msg);
  }
  std::string Snippet() const {
    const char* e = p_;
    while (e < end_ && e - p_ < 30 && *e != '\n') ++e;
    return std::string(p_, e);
  }

  void Advance() {
    if (*p_ == '\n') {
      ++line_;
      line_start_ = p_ + 1;
    }
    ++p_;
  }

  void SkipWs() {
    while (p_ < end_) {
      char c = *p_;
      if (c == '\n') {
        ++line_;
        ++p_;
        line_start_ = p_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++p_;
      } else if (c == '/' && p_ + 1 < end_ && p_[1] == '/') {
        const char* nl = static_cast<const char*>(
            std::memchr(p_, '\n', static_cast<size_t>(end_ - p_)));
        absl::string_view comment(p_, (nl ? nl : end_) - p_);
        if (comment.substr(0, 8) == "// -----") split_seen_ = true;
        p_ = nl ? nl : end_;
      } else {
        break;
      }
    }
  }

  bool Peek(char c) {
    SkipWs();
    return p_ < end_ && *p_ == c;
  }
  bool PeekStr(absl::string_view s) {
    SkipWs();
    return static_cast<size_t>(end_ - p_) >= s.size() &&
           absl::string_view(p_, s.size()) == s;
  }
  bool Consume(absl::string_view s) {
    if (!PeekStr(s)) return false;
    p_ += s.size();
    return true;
  }
  absl::Status Expect(absl::string_view s) {
    if (Consume(s)) return absl::OkStatus();
    return Error(Here(), absl::StrCat("expected `", s, "`, found `", Snippet(),
                                      "`"));
  }

  absl::string_view PeekIdent() {
    SkipWs();
    if (p_ >= end_ || !IsIdentStart(*p_)) return {};
    const char* e = p_;
    while (e < end_ && IsIdentChar(*e)) ++e;
    return absl::string_view(p_, e - p_);
  }
  absl::string_view ReadIdent() {
    absl::string_view id = PeekIdent();
    p_ += id.size();
    return id;
  }

  // %name or %name#k (a use). Empty when not at `%`.
  std::string ReadValueRef() {
    SkipWs();
    if (p_ >= end_ || *p_ != '%') return "";
    const char* s = p_++;
    while (p_ < end_ && IsValueChar(*p_)) ++p_;
    if (p_ < end_ && *p_ == '#') {
      ++p_;
      while (p_ < end_ && std::isdigit(static_cast<unsigned char>(*p_))) ++p_;
    }
    return std::string(s, p_ - s);
  }

  // p_ at an opening bracket; returns the text through the matching close.
  absl::StatusOr<absl::string_view> ReadBalanced() {
    Loc loc = Here();
    const char* s = p_;
    char stack[256];
    Loc opened[256];
    int depth = 0;
    while (p_ < end_) {
      char c = *p_;
      if (c == '"') {
        Advance();
        while (p_ < end_ && *p_ != '"') {
          if (*p_ == '\\' && p_ + 1 < end_) Advance();
          Advance();
        }
        if (p_ >= end_) break;
        Advance();
        if (depth == 0) return absl::string_view(s, p_ - s);
        continue;
      }
      if (c == '-' && p_ + 1 < end_ && p_[1] == '>') {
        p_ += 2;
        continue;
      }
      if (c == '(' || c == '[' || c == '{' || c == '<') {
        if (depth == 256) return Error(loc, "brackets nested too deeply");
        opened[depth] = Here();
        stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : '>';
      } else if (c == ')' || c == ']' || c == '}' || c == '>') {
        if (depth == 0 || stack[depth - 1] != c) {
          if (c == '>' && depth > 0) {  // a stray `>` (e.g. in a comparison)
            Advance();
            continue;
          }
          if (depth > 0) {
            return Error(opened[depth - 1],
                         absl::StrCat("`", std::string(1, stack[depth - 1]),
                                      "` expected to close this bracket, found `",
                                      std::string(1, c), "`"));
          }
          return Error(Here(), absl::StrCat("unbalanced `", std::string(1, c),
                                            "`"));
        }
        --depth;
        Advance();
        if (depth == 0) return absl::string_view(s, p_ - s);
        continue;
      }
      Advance();
    }
    return Error(loc, "unterminated bracket");
  }

  // An attribute value: a string, bracketed group, #dialect<...>,
  // dense<...>, number, @symbol, identifier; `[..] x [..]` and
  // `[..]x[..]->[..]` join. With `typed`, a trailing `: type` is included.
  absl::StatusOr<absl::string_view> ReadAttrValue(bool typed) {
    SkipWs();
    const char* s = p_;
    if (p_ >= end_) return Error(Here(), "expected an attribute value");
    char c = *p_;
    if (c == '"' || c == '[' || c == '(' || c == '{' || c == '<') {
      auto b = ReadBalanced();
      if (!b.ok()) return b.status();
    } else if (c == '#' || c == '!' || IsIdentStart(c)) {
      ++p_;
      while (p_ < end_ && (IsIdentChar(*p_))) ++p_;
      if (p_ < end_ && *p_ == '<') {
        auto b = ReadBalanced();
        if (!b.ok()) return b.status();
      }
    } else if (c == '@') {
      ++p_;
      if (p_ < end_ && *p_ == '"') {
        auto b = ReadBalanced();
        if (!b.ok()) return b.status();
      } else {
        while (p_ < end_ && IsValueChar(*p_)) ++p_;
      }
    } else if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c))) {
      ++p_;
      while (p_ < end_ && (std::isalnum(static_cast<unsigned char>(*p_)) ||
                           *p_ == '.' ||
                           ((*p_ == '-' || *p_ == '+') &&
                            (p_[-1] == 'e' || p_[-1] == 'E')))) {
        ++p_;
      }
    } else {
      return Error(Here(), absl::StrCat("unexpected `", Snippet(),
                                        "` where an attribute value belongs"));
    }
    // Joined forms.
    while (true) {
      const char* save = p_;
      int save_line = line_;
      const char* save_ls = line_start_;
      SkipWs();
      if (p_ < end_ && *p_ == 'x') {
        const char* q = p_ + 1;
        while (q < end_ && (*q == ' ')) ++q;
        if (q < end_ && *q == '[') {
          p_ = q;
          auto b = ReadBalanced();
          if (!b.ok()) return b.status();
          continue;
        }
      }
      if (p_ + 2 < end_ && p_[0] == '-' && p_[1] == '>' && p_[2] == '[') {
        p_ += 2;
        auto b = ReadBalanced();
        if (!b.ok()) return b.status();
        continue;
      }
      if (typed && p_ < end_ && *p_ == ':' && (p_ + 1 >= end_ || p_[1] != ':')) {
        ++p_;
        auto t = ReadTypeText();
        if (!t.ok()) return t.status();
        continue;
      }
      p_ = save;
      line_ = save_line;
      line_start_ = save_ls;
      break;
    }
    return absl::string_view(s, p_ - s);
  }

  // A type spelling (through matching brackets).
  absl::StatusOr<absl::string_view> ReadTypeText() {
    SkipWs();
    const char* s = p_;
    if (p_ < end_ && *p_ == '(') {  // function type
      auto b = ReadBalanced();
      if (!b.ok()) return b.status();
      if (Consume("->")) {
        auto r = ReadTypeText();
        if (!r.ok()) return r.status();
      }
      return absl::string_view(s, p_ - s);
    }
    if (p_ < end_ && *p_ == '!') ++p_;
    while (p_ < end_ && IsIdentChar(*p_)) ++p_;
    if (p_ == s) return Error(Here(), absl::StrCat("expected a type, found `",
                                                   Snippet(), "`"));
    if (p_ < end_ && *p_ == '<') {
      auto b = ReadBalanced();
      if (!b.ok()) return b.status();
    }
    return absl::string_view(s, p_ - s);
  }

  absl::StatusOr<MlirType> ReadType() {
    auto t = ReadTypeText();
    if (!t.ok()) return t.status();
    return ParseTypeText(*t);
  }

  // `{ k = v, unit, ... }` into `out`; p_ at `{`.
  absl::Status ReadAttrDict(
      std::vector<std::pair<absl::string_view, absl::string_view>>* out) {
    J2O_EXPECT('{');
    while (true) {
      SkipWs();
      if (p_ < end_ && *p_ == '}') {
        ++p_;
        return absl::OkStatus();
      }
      absl::string_view key;
      if (p_ < end_ && *p_ == '"') {
        auto k = ReadBalanced();
        if (!k.ok()) return k.status();
        key = k->substr(1, k->size() - 2);
      } else {
        key = ReadIdent();
      }
      if (key.empty()) {
        return Error(Here(), absl::StrCat("expected an attribute name, found `",
                                          Snippet(), "`"));
      }
      absl::string_view value = "unit";
      if (Consume("=")) {
        auto v = ReadAttrValue(/*typed=*/true);
        if (!v.ok()) return v.status();
        value = *v;
      }
      out->emplace_back(key, value);
      if (Consume(",")) continue;
      if (!Peek('}')) {
        return Error(Here(), absl::StrCat("expected `,` or `}` in attributes, "
                                          "found `", Snippet(), "`"));
      }
    }
  }

  void SkipLoc() {
    while (PeekStr("loc(")) {
      p_ += 3;
      (void)ReadBalanced();
    }
  }

  void SkipAlias() {
    // #name = value (to the end of the value).
    ++p_;
    while (p_ < end_ && IsValueChar(*p_)) ++p_;
    if (Consume("=")) {
      SkipWs();
      if (PeekStr("loc(")) {
        p_ += 3;
        (void)ReadBalanced();
      } else {
        (void)ReadAttrValue(true);
      }
    }
  }

  absl::StatusOr<Module> ParseModule() {
    Module m;
    m.loc = Here();
    ReadIdent();  // module
    SkipWs();
    if (p_ < end_ && *p_ == '@') {
      ++p_;
      const char* s = p_;
      while (p_ < end_ && IsValueChar(*p_)) ++p_;
      m.name = std::string(s, p_ - s);
    }
    if (PeekIdent() == "attributes") {
      ReadIdent();
      SkipWs();
      const char* s = p_;
      std::vector<std::pair<absl::string_view, absl::string_view>> ignored;
      J2O_RETURN_IF_ERROR_P(ReadAttrDict(&ignored));
      m.attrs = absl::string_view(s, p_ - s);
    }
    J2O_EXPECT('{');
    while (true) {
      auto closed = ConsumeClose(m.loc, "module");
      if (!closed.ok()) return closed.status();
      if (*closed) break;
      if (*p_ == '#') {
        SkipAlias();
        continue;
      }
      absl::string_view w = PeekIdent();
      if (w == "func.func") {
        auto f = ParseFunc();
        if (!f.ok()) return f.status();
        m.funcs.push_back(std::move(*f));
        continue;
      }
      if (w == "sdy.mesh") {
        // sdy.mesh @mesh = <["a"=2, ...]> loc(...): read from the text by
        // sdy.manual_computation (translate_sdy.cc); skipped here.
        ReadIdent();
        SkipWs();
        if (!Consume("@")) return Error(Here(), "sdy.mesh: expected `@name`");
        while (p_ < end_ && IsValueChar(*p_)) ++p_;
        SkipWs();
        if (!Consume("=")) return Error(Here(), "sdy.mesh: expected `=`");
        SkipWs();
        if (p_ >= end_ || *p_ != '<') return Error(Here(), "sdy.mesh: expected `<`");
        auto body = ReadBalanced();
        if (!body.ok()) return body.status();
        SkipLoc();
        continue;
      }
      return Error(Here(), absl::StrCat("expected `func.func` in module, found `",
                                        Snippet(), "`"));
    }
    SkipLoc();
    return m;
  }

  absl::StatusOr<Func> ParseFunc() {
    Func f;
    f.loc = Here();
    ReadIdent();  // func.func
    absl::string_view vis = PeekIdent();
    if (vis == "public" || vis == "private" || vis == "nested") {
      ReadIdent();
      f.is_public = vis == "public";
    }
    J2O_EXPECT('@');
    if (p_ < end_ && *p_ == '"') {  // @"<lambda>"
      auto q = ReadBalanced();
      if (!q.ok()) return q.status();
      f.name = std::string(q->substr(1, q->size() - 2));
    } else {
      const char* s = p_;
      while (p_ < end_ && IsValueChar(*p_)) ++p_;
      f.name = std::string(s, p_ - s);
    }
    J2O_EXPECT('(');
    if (!Consume(")")) {
      while (true) {
        FuncArg arg;
        arg.name = ReadValueRef();
        if (arg.name.empty()) {
          return Error(Here(), "expected a function argument `%name: type`");
        }
        J2O_RETURN_IF_ERROR_P(Expect(":"));
        auto t = ReadType();
        if (!t.ok()) return t.status();
        arg.type = std::move(*t);
        if (Peek('{')) {
          const char* s = p_;
          std::vector<std::pair<absl::string_view, absl::string_view>> ignored;
          J2O_RETURN_IF_ERROR_P(ReadAttrDict(&ignored));
          arg.attrs = absl::string_view(s, p_ - s);
        }
        SkipLoc();
        f.args.push_back(std::move(arg));
        if (Consume(",")) continue;
        J2O_RETURN_IF_ERROR_P(Expect(")"));
        break;
      }
    }
    if (Consume("->")) {
      if (Consume("(")) {
        if (!Consume(")")) {
          while (true) {
            auto t = ReadType();
            if (!t.ok()) return t.status();
            f.results.push_back(std::move(*t));
            absl::string_view attrs;
            if (Peek('{')) {
              const char* s = p_;
              std::vector<std::pair<absl::string_view, absl::string_view>> ign;
              J2O_RETURN_IF_ERROR_P(ReadAttrDict(&ign));
              attrs = absl::string_view(s, p_ - s);
            }
            f.result_attrs.push_back(attrs);
            if (Consume(",")) continue;
            J2O_RETURN_IF_ERROR_P(Expect(")"));
            break;
          }
        }
      } else {
        auto t = ReadType();
        if (!t.ok()) return t.status();
        f.results.push_back(std::move(*t));
        f.result_attrs.push_back({});
      }
    }
    if (PeekIdent() == "attributes") {
      ReadIdent();
      std::vector<std::pair<absl::string_view, absl::string_view>> ignored;
      J2O_RETURN_IF_ERROR_P(ReadAttrDict(&ignored));
    }
    auto body = ParseRegion();
    if (!body.ok()) return body.status();
    f.body = std::move(*body);
    SkipLoc();
    return f;
  }

  // `{ [^bb(args):] ops... }`
  // Inside `{ ... }` of a module or region: true (consumed) at its `}`, an
  // error at the end of the text.
  absl::StatusOr<bool> ConsumeClose(Loc open, absl::string_view what) {
    SkipWs();
    if (p_ >= end_) return Error(open, absl::StrCat("unterminated ", what));
    if (*p_ != '}') return false;
    ++p_;
    return true;
  }

  // At `{`: whether a region with a block label (`{ ^bb0(...)`) follows
  // rather than an attribute dictionary.
  bool RegionFollows() const {
    const char* q = p_ + 1;
    while (q < end_ && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) ++q;
    return q < end_ && *q == '^';
  }

  absl::StatusOr<Region> ParseRegion() {
    Region r;
    r.loc = Here();
    J2O_EXPECT('{');
    Block block;
    block.loc = Here();
    bool any = false;
    while (true) {
      auto closed = ConsumeClose(r.loc, "region");
      if (!closed.ok()) return closed.status();
      if (*closed) break;
      if (*p_ == '^') {
        if (any) r.blocks.push_back(std::move(block));
        block = Block();
        block.loc = Here();
        ++p_;
        while (p_ < end_ && IsValueChar(*p_)) ++p_;
        if (Consume("(")) {
          if (!Consume(")")) {
            while (true) {
              std::string name = ReadValueRef();
              if (name.empty()) return Error(Here(), "expected a block argument");
              J2O_RETURN_IF_ERROR_P(Expect(":"));
              auto t = ReadType();
              if (!t.ok()) return t.status();
              SkipLoc();
              block.args.emplace_back(std::move(name), std::move(*t));
              if (Consume(",")) continue;
              J2O_RETURN_IF_ERROR_P(Expect(")"));
              break;
            }
          }
        }
        J2O_RETURN_IF_ERROR_P(Expect(":"));
        any = true;
        continue;
      }
      auto op = ParseOp();
      if (!op.ok()) return op.status();
      block.ops.push_back(std::move(*op));
      any = true;
    }
    r.blocks.push_back(std::move(block));
    return r;
  }

  // `(%a: t, %b: t)` block-argument list of a pretty region.
  absl::Status ReadArgList(std::vector<std::pair<std::string, MlirType>>* out) {
    J2O_RETURN_IF_ERROR_P(Expect("("));
    if (Consume(")")) return absl::OkStatus();
    while (true) {
      std::string name = ReadValueRef();
      if (name.empty()) return Error(Here(), "expected a block argument");
      J2O_RETURN_IF_ERROR_P(Expect(":"));
      auto t = ReadType();
      if (!t.ok()) return t.status();
      SkipLoc();
      out->emplace_back(std::move(name), std::move(*t));
      if (Consume(",")) continue;
      return Expect(")");
    }
  }

  absl::Status ReadTypeList(std::vector<MlirType>* out) {
    J2O_RETURN_IF_ERROR_P(Expect("("));
    if (Consume(")")) return absl::OkStatus();
    while (true) {
      auto t = ReadType();
      if (!t.ok()) return t.status();
      out->push_back(std::move(*t));
      if (Consume(",")) continue;
      return Expect(")");
    }
  }

  absl::Status ReadSignature(Operation* op) {
    SkipWs();
    if (p_ < end_ && *p_ == '(') {
      // A function type `(a, b) -> r`; `(...)` alone would be odd here.
      J2O_RETURN_IF_ERROR_P(ReadTypeList(&op->input_types));
      if (Consume("->")) {
        op->has_arrow = true;
        if (Peek('(')) {
          J2O_RETURN_IF_ERROR_P(ReadTypeList(&op->result_types));
        } else {
          auto t = ReadType();
          if (!t.ok()) return t.status();
          op->result_types.push_back(std::move(*t));
        }
      } else {
        op->plain_types = op->input_types;
        op->input_types.clear();
      }
      return absl::OkStatus();
    }
    while (true) {
      auto t = ReadType();
      if (!t.ok()) return t.status();
      op->plain_types.push_back(std::move(*t));
      if (!Consume(",")) break;
    }
    if (Consume("->")) {  // `: t -> r` (chlo unary ops)
      op->has_arrow = true;
      op->input_types = std::move(op->plain_types);
      op->plain_types.clear();
      if (Peek('(')) return ReadTypeList(&op->result_types);
      auto t = ReadType();
      if (!t.ok()) return t.status();
      op->result_types.push_back(std::move(*t));
    }
    return absl::OkStatus();
  }

  // Pretty `( ... )` groups: operands, `%x init: %y`, `%a = %b`, `k = v`.
  absl::Status ReadParenGroup(Operation* op) {
    J2O_RETURN_IF_ERROR_P(Expect("("));
    while (true) {
      SkipWs();
      if (p_ >= end_) return Error(Here(), "unterminated `(`");
      if (*p_ == ')') {
        ++p_;
        return absl::OkStatus();
      }
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ == '%') {
        std::string v = ReadValueRef();
        if (Consume("=")) {  // %iterArg = %init
          op->iter_args.push_back(v);
          std::string init = ReadValueRef();
          if (init.empty()) return Error(Here(), "expected a value after `=`");
          op->operands.push_back(init);
          continue;
        }
        if (PeekIdent() == "init") {  // reduce: %x init: %y
          ReadIdent();
          J2O_RETURN_IF_ERROR_P(Expect(":"));
          std::string init = ReadValueRef();
          reduce_inputs_.push_back(v);
          reduce_inits_.push_back(init);
          continue;
        }
        op->operands.push_back(v);
        continue;
      }
      absl::string_view id = PeekIdent();
      if (!id.empty()) {
        ReadIdent();
        if (Consume("=")) {
          auto v = ReadAttrValue(false);
          if (!v.ok()) return v.status();
          op->attrs.emplace_back(id, *v);
        } else {
          op->words.push_back(id);
        }
        continue;
      }
      auto v = ReadAttrValue(false);
      if (!v.ok()) return v.status();
      op->positional.push_back(*v);
    }
  }

  absl::StatusOr<Operation> ParseOp() {
    Operation op;
    op.loc = Here();
    if (Peek('%')) {
      while (true) {
        std::string name = ReadValueRef();
        if (name.empty()) return Error(Here(), "expected a result name");
        if (Consume(":")) {
          SkipWs();
          int n = 0;
          while (p_ < end_ && std::isdigit(static_cast<unsigned char>(*p_))) {
            n = n * 10 + (*p_ - '0');
            ++p_;
          }
          for (int i = 0; i < n; ++i) op.results.push_back(absl::StrCat(name, "#", i));
        } else {
          op.results.push_back(name);
        }
        if (Consume(",")) continue;
        break;
      }
      J2O_RETURN_IF_ERROR_P(Expect("="));
    }
    SkipWs();
    op.loc = Here();
    if (p_ < end_ && *p_ == '"') {
      auto n = ReadBalanced();
      if (!n.ok()) return n.status();
      op.name = std::string(n->substr(1, n->size() - 2));
      op.generic = true;
      J2O_RETURN_IF_ERROR_P(ParseGenericTail(&op));
    } else {
      op.name = std::string(ReadIdent());
      if (op.name.empty()) {
        return Error(op.loc, absl::StrCat("expected an operation, found `",
                                          Snippet(), "`"));
      }
      J2O_RETURN_IF_ERROR_P(ParsePrettyTail(&op));
    }
    SkipLoc();
    return op;
  }

  absl::Status ParseGenericTail(Operation* op) {
    J2O_RETURN_IF_ERROR_P(Expect("("));
    if (!Consume(")")) {
      while (true) {
        std::string v = ReadValueRef();
        if (v.empty()) return Error(Here(), "expected an operand");
        op->operands.push_back(v);
        if (Consume(",")) continue;
        J2O_RETURN_IF_ERROR_P(Expect(")"));
        break;
      }
    }
    if (PeekStr("<{")) {
      ++p_;
      J2O_RETURN_IF_ERROR_P(ReadAttrDict(&op->attrs));
      J2O_RETURN_IF_ERROR_P(Expect(">"));
    }
    if (PeekStr("({")) {
      ++p_;
      while (true) {
        auto r = ParseRegion();
        if (!r.ok()) return r.status();
        op->regions.push_back(std::move(*r));
        if (Consume(",")) continue;
        J2O_RETURN_IF_ERROR_P(Expect(")"));
        break;
      }
    }
    if (Peek('{')) J2O_RETURN_IF_ERROR_P(ReadAttrDict(&op->attrs));
    J2O_RETURN_IF_ERROR_P(Expect(":"));
    return ReadSignature(op);
  }

  // `(%name:` after the `(` at p_.
  bool TypedArgsFollow() const {
    const char* q = p_ + 1;
    while (q < end_ && (*q == ' ' || *q == '\t' || *q == '\n')) ++q;
    if (q >= end_ || *q != '%') return false;
    while (q < end_ && *q != ':' && *q != ',' && *q != ')' && *q != ' ') ++q;
    return q < end_ && *q == ':';
  }

  absl::Status ParsePrettyTail(Operation* op) {
    std::optional<std::vector<std::pair<std::string, MlirType>>> typed_args;
    bool after_comma = true;
    bool any = false;
    reduce_inputs_.clear();
    reduce_inits_.clear();
    while (true) {
      SkipWs();
      if (p_ >= end_) break;
      char c = *p_;
      if (c == ':' ) {
        ++p_;
        J2O_RETURN_IF_ERROR_P(ReadSignature(op));
        SkipLoc();
        if (Peek('{')) J2O_RETURN_IF_ERROR_P(ReadAttrDict(&op->attrs));
        break;
      }
      if (c == '}' || c == '^') break;
      if (c == ',') {
        ++p_;
        after_comma = true;
        continue;
      }
      if (!after_comma && any && (c == '%' || c == '"') &&
          !(c == '%' && op->operands.empty() && op->positional.size() == 1 &&
            !op->positional[0].empty() && op->positional[0][0] == '"')) {
        break;
      }
      if (c == '%') {
        op->operands.push_back(ReadValueRef());
      } else if (c == '(' && TypedArgsFollow()) {
        // `(%arg1: tensor<...>) { body }` (sdy.manual_computation): the
        // block arguments of the region that follows.
        typed_args.emplace();
        J2O_RETURN_IF_ERROR_P(ReadArgList(&*typed_args));
      } else if (c == '(') {
        J2O_RETURN_IF_ERROR_P(ReadParenGroup(op));
      } else if (c == '{' && typed_args.has_value()) {
        auto r = ParseRegion();
        if (!r.ok()) return r.status();
        if (r->blocks.empty()) r->blocks.emplace_back();
        r->blocks[0].args = std::move(*typed_args);
        typed_args.reset();
        op->regions.push_back(std::move(*r));
      } else if (c == '{' && RegionFollows()) {
        // A pretty form's region given inline (chlo.scan's body).
        auto r = ParseRegion();
        if (!r.ok()) return r.status();
        op->regions.push_back(std::move(*r));
      } else if (c == '{') {
        J2O_RETURN_IF_ERROR_P(ReadAttrDict(&op->attrs));
      } else if (c == '<' && p_ + 1 < end_ && p_[1] == '{') {
        ++p_;
        J2O_RETURN_IF_ERROR_P(ReadAttrDict(&op->attrs));
        J2O_RETURN_IF_ERROR_P(Expect(">"));
      } else if (c == '@') {
        ++p_;
        const char* s = p_;
        if (p_ < end_ && *p_ == '"') {
          auto b = ReadBalanced();
          if (!b.ok()) return b.status();
          op->symbol = std::string(b->substr(1, b->size() - 2));
        } else {
          while (p_ < end_ && IsValueChar(*p_)) ++p_;
          op->symbol = std::string(s, p_ - s);
        }
      } else if (IsIdentStart(c)) {
        absl::string_view id = PeekIdent();
        const char* after = p_ + id.size();
        const char* q = after;
        while (q < end_ && (*q == ' ' || *q == '\t')) ++q;
        if (id == "loc" && q < end_ && *q == '(') {
          SkipLoc();
          continue;
        }
        if (q < end_ && *q == '=' && (q + 1 >= end_ || q[1] != '=')) {
          p_ = q + 1;
          auto v = ReadAttrValue(false);
          if (!v.ok()) return v.status();
          op->attrs.emplace_back(id, *v);
        } else if (after < end_ && *after == '<') {
          auto v = ReadAttrValue(false);
          if (!v.ok()) return v.status();
          op->positional.push_back(*v);
        } else {
          if (!after_comma && any && id.find('.') != absl::string_view::npos &&
              !op->words.empty() && op->words.back() != "applies") {
            break;
          }
          p_ = after;
          op->words.push_back(id);
          // chlo.scan(%xs...) inits(%carries...): inputs then inits, as
          // the pretty reduce.
          if (id == "inits" && op->num_reduce_inputs < 0) {
            op->num_reduce_inputs = static_cast<int>(op->operands.size());
          }
        }
      } else {
        auto v = ReadAttrValue(false);
        if (!v.ok()) return v.status();
        op->positional.push_back(*v);
      }
      any = true;
      after_comma = false;
    }
    if (!reduce_inputs_.empty()) {
      op->num_reduce_inputs = static_cast<int>(reduce_inputs_.size());
      std::vector<std::string> ops = reduce_inputs_;
      ops.insert(ops.end(), reduce_inits_.begin(), reduce_inits_.end());
      ops.insert(ops.end(), op->operands.begin(), op->operands.end());
      op->operands = std::move(ops);
    }
    SkipLoc();
    // Trailing regions of pretty forms: while's `cond {..} do {..}`,
    // reduce's `reducer(%a: t, %b: t) (...) {..}`.
    while (true) {
      absl::string_view w = PeekIdent();
      if (w == "cond" || w == "do") {
        ReadIdent();
        auto r = ParseRegion();
        if (!r.ok()) return r.status();
        op->regions.push_back(std::move(*r));
        continue;
      }
      if (w == "reducer") {
        ReadIdent();
        std::vector<std::vector<std::pair<std::string, MlirType>>> pairs;
        while (Peek('(')) {
          pairs.emplace_back();
          J2O_RETURN_IF_ERROR_P(ReadArgList(&pairs.back()));
        }
        auto r = ParseRegion();
        if (!r.ok()) return r.status();
        std::vector<std::pair<std::string, MlirType>> args;
        for (int side = 0; side < 2; ++side) {
          for (auto& pr : pairs) {
            if (pr.size() != 2) return Error(r->loc, "reducer arguments come in pairs");
            args.push_back(pr[side]);
          }
        }
        if (r->blocks.empty()) r->blocks.emplace_back();
        r->blocks[0].args = std::move(args);
        op->regions.push_back(std::move(*r));
        continue;
      }
      break;
    }
    return absl::OkStatus();
  }

  std::shared_ptr<const std::string> text_;
  std::string path_;
  const char* begin_;
  const char* p_;
  const char* end_;
  const char* line_start_;
  int line_ = 1;
  bool split_seen_ = false;
  std::vector<std::string> reduce_inputs_;
  std::vector<std::string> reduce_inits_;
};

}  // namespace

MlirType ParseTypeText(absl::string_view text) {
  MlirType t;
  t.text = std::string(text);
  absl::string_view s = Trim(text);
  if (s.substr(0, 7) == "tensor<" && s.back() == '>') {
    t.kind = MlirType::Kind::kTensor;
    absl::string_view body = s.substr(7, s.size() - 8);
    while (!body.empty()) {
      size_t i = 0;
      if (body[0] == '?') {
        i = 1;
      } else {
        while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i;
      }
      if (i == 0 || i >= body.size() || body[i] != 'x') break;
      int64_t dim = -1;
      if (body[0] != '?' && !absl::SimpleAtoi(body.substr(0, i), &dim)) {
        dim = -2;  // out of range: AvalOfType refuses it
      }
      t.dims.push_back(dim);
      body.remove_prefix(i + 1);
    }
    // element type, then an optional `, encoding` at depth 0
    int depth = 0;
    size_t comma = absl::string_view::npos;
    for (size_t i = 0; i < body.size(); ++i) {
      char c = body[i];
      if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
      else if (c == '>' || c == ')' || c == ']' || c == '}') --depth;
      else if (c == ',' && depth == 0) {
        comma = i;
        break;
      }
    }
    t.element = std::string(Trim(body.substr(0, comma)));
    if (comma != absl::string_view::npos) t.encoding = std::string(Trim(body.substr(comma + 1)));
    return t;
  }
  if (s == "!stablehlo.token" || s == "!mhlo.token") {
    t.kind = MlirType::Kind::kToken;
    return t;
  }
  if (s.substr(0, 6) == "tuple<" && s.back() == '>') {
    t.kind = MlirType::Kind::kTuple;
    absl::string_view body = s.substr(6, s.size() - 7);
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= body.size(); ++i) {
      char c = i < body.size() ? body[i] : ',';
      if (c == '<' || c == '(') ++depth;
      else if (c == '>' || c == ')') --depth;
      else if (c == ',' && depth == 0) {
        absl::string_view part = Trim(body.substr(start, i - start));
        if (!part.empty()) t.tuple.push_back(ParseTypeText(part));
        start = i + 1;
      }
    }
    return t;
  }
  if (!s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])))) {
    t.kind = MlirType::Kind::kScalar;
    t.element = std::string(s);
  }
  return t;
}

absl::StatusOr<MlirFile> ParseMlirText(std::shared_ptr<const std::string> text,
                                       std::string path) {
  Parser parser(std::move(text), std::move(path));
  return parser.Run();
}

}  // namespace jax2onnx::stablehlo
