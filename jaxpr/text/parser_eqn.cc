// The jaxpr text parser's equations (parser_internal.h): the binders and
// `=` of an equation, its primitive, params and operands under the
// bound-variable rule, the ref forms of the state primitives (§8), and
// fragments of equations.
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "jaxpr/text/parser_internal.h"

namespace jax2onnx::jaxpr::parser_internal {

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

}  // namespace jax2onnx::jaxpr::parser_internal
