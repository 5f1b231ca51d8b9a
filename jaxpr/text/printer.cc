// Prints jaxprs the way current JAX does (core.py pp_jaxpr & friends laid
// out by the width-80 pretty printer), and compares parsed files
// structurally. Names, literal spellings and param order come from the
// model as stored, so print(parse(x)) reproduces x up to layout.
#include "jaxpr/text/printer.h"

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jaxpr/text/pretty.h"

namespace jax2onnx::jaxpr {

void InstallTextHooks();

namespace {

using pretty::DocArena;
using pretty::DocId;

std::string LiteralText(const Literal& lit) {
  if (!lit.aval.has_value()) return lit.text;
  return absl::StrCat(lit.text, ":", lit.aval->ToString());
}

std::string AtomText(const Atom& atom) {
  if (atom.is_literal()) return LiteralText(*atom.literal);
  if (atom.var == nullptr) return "?";
  return atom.var->name;
}

std::string BinderText(const Var* v) {
  return absl::StrCat(v->name, ":", v->aval.ToString());
}

// Ref syntax for get/swap/addupdate (see parser.cc, §8 of the format).
bool IsRefForm(const Eqn& eqn) {
  if (eqn.params.entries().size() != 1) return false;
  const auto& [key, value] = eqn.params.entries()[0];
  if (key != "idx" || value.kind() != ParamValue::Kind::kOpaque) return false;
  if (eqn.inputs.empty() || eqn.inputs[0].is_literal() ||
      eqn.inputs[0].var == nullptr) {
    return false;
  }
  // Operands after the ref (and value) are the index's dynamic parts, which
  // the index text names.
  if (eqn.primitive == "get") {
    return eqn.inputs.size() >= 1 && eqn.outputs.size() == 1;
  }
  if (eqn.primitive == "swap") {
    return eqn.inputs.size() >= 2 && eqn.outputs.size() <= 1;
  }
  if (eqn.primitive == "addupdate") {
    return eqn.inputs.size() >= 2 && eqn.outputs.empty();
  }
  return false;
}

class DocPrinter {
 public:
  DocArena& arena() { return arena_; }

  // pp_vars: fill-style list, each break in its own group.
  DocId Vars(const std::vector<std::string>& texts, absl::string_view sep) {
    // Without breaks the nest/group wrappers cannot change the layout.
    if (texts.empty()) return arena_.Nil();
    if (texts.size() == 1) return arena_.Text(texts[0]);
    std::vector<DocId> docs;
    docs.reserve(texts.size());
    for (const std::string& t : texts) docs.push_back(arena_.Text(t));
    const DocId separator = arena_.Concat(
        {arena_.Text(std::string(sep)), arena_.Group(arena_.Break())});
    return arena_.Nest(2, arena_.Group(arena_.Join(separator, docs)));
  }

  DocId Binders(const std::vector<Var*>& vars) {
    std::vector<std::string> texts;
    texts.reserve(vars.size());
    for (const Var* v : vars) texts.push_back(BinderText(v));
    return Vars(texts, "");
  }

  DocId Atoms(const std::vector<Atom>& atoms, absl::string_view sep) {
    std::vector<std::string> texts;
    texts.reserve(atoms.size());
    for (const Atom& a : atoms) texts.push_back(AtomText(a));
    return Vars(texts, sep);
  }

  DocId JaxprDoc(const ClosedJaxpr& j) {
    std::vector<DocId> eqns;
    eqns.reserve(j.eqns.size());
    for (const Eqn& e : j.eqns) eqns.push_back(EqnDoc(e));
    const DocId eqns_doc = arena_.Join(arena_.Break("; "), eqns);
    const DocId outs =
        arena_.Concat({arena_.Text("("), Atoms(j.outvars, ","),
                       arena_.Text(j.outvars.size() == 1 ? ",)" : ")")});
    std::vector<DocId> body = {
        arena_.Text("{ "),
        arena_.Text("lambda "),
        Binders(j.constvars),
        arena_.Text("; "),
        Binders(j.invars),
        arena_.Text(". "),
        arena_.Text("let"),
        arena_.Nest(2, arena_.Concat({arena_.Break(), eqns_doc})),
        arena_.Break(),
        arena_.Text("in "),
        outs};
    if (!j.effects.empty()) {
      body.push_back(arena_.Text(
          absl::StrCat(" : { ", absl::StrJoin(j.effects, ", "), " }")));
    }
    return arena_.Group(arena_.Concat(
        {arena_.Nest(2, arena_.Concat(std::move(body))), arena_.Text(" }")}));
  }

  DocId ParamValueDoc(const ParamValue& v) {
    if (v.kind() == ParamValue::Kind::kJaxpr) {
      if (!v.text().empty() || v.jaxpr() == nullptr) {
        return arena_.Text(v.ToString());
      }
      return JaxprDoc(*v.jaxpr());
    }
    if (v.kind() == ParamValue::Kind::kJaxprTuple) {
      std::vector<DocId> items;
      for (const ParamValue& item : v.items()) {
        items.push_back(ParamValueDoc(item));
      }
      return arena_.Group(arena_.Concat(
          {arena_.Nest(2, arena_.Concat({arena_.Text("("), arena_.Break(""),
                                         arena_.Join(arena_.Break(), items)})),
           arena_.Break(""), arena_.Text(")")}));
    }
    return arena_.Text(v.ToString());
  }

  DocId ParamsDoc(const Params& params) {
    if (params.empty()) return arena_.Nil();
    std::vector<DocId> kvs;
    for (const auto& [key, value] : params.entries()) {
      kvs.push_back(arena_.Concat(
          {arena_.Text(absl::StrCat(key, "=")), ParamValueDoc(value)}));
    }
    return arena_.Group(arena_.Concat(
        {arena_.Nest(2, arena_.Concat({arena_.Text("["), arena_.Break(""),
                                       arena_.Join(arena_.Break(), kvs)})),
         arena_.Break(""), arena_.Text("]")}));
  }

  DocId EqnDoc(const Eqn& eqn) {
    if (eqn.primitive == "..." && eqn.inputs.empty() && eqn.outputs.empty() &&
        eqn.params.empty()) {
      return arena_.Text("...");
    }
    if (IsRefForm(eqn)) {
      const std::string ref =
          absl::StrCat(eqn.inputs[0].var->name, "[",
                       eqn.params.entries()[0].second.text(), "]");
      if (eqn.primitive == "get") {
        return arena_.Concat(
            {Binders(eqn.outputs), arena_.Text(" <- "), arena_.Text(ref)});
      }
      const std::string value = AtomText(eqn.inputs[1]);
      if (eqn.primitive == "addupdate") {
        return arena_.Text(absl::StrCat(ref, " += ", value));
      }
      if (eqn.outputs.empty()) {
        return arena_.Text(absl::StrCat(ref, " <- ", value));
      }
      return arena_.Concat(
          {Binders(eqn.outputs),
           arena_.Text(absl::StrCat(", ", ref, " <- ", ref, ", ", value))});
    }
    std::vector<DocId> parts;
    if (!eqn.outputs.empty()) {
      parts.push_back(Binders(eqn.outputs));
      parts.push_back(arena_.Text(" = "));
    }
    parts.push_back(arena_.Text(eqn.primitive));
    parts.push_back(ParamsDoc(eqn.params));
    parts.push_back(arena_.Concat({arena_.Text(" "), Atoms(eqn.inputs, "")}));
    return arena_.Concat(std::move(parts));
  }

  DocId FileDoc(const JaxprFile& file) {
    std::vector<DocId> docs;
    for (const auto& [name, jaxpr] : file.shared) {
      docs.push_back(arena_.Text(absl::StrCat("let ", name, " = ")));
      docs.push_back(jaxpr != nullptr ? JaxprDoc(*jaxpr) : arena_.Nil());
      docs.push_back(arena_.Text(" in"));
      docs.push_back(arena_.Break());
    }
    if (file.main != nullptr) docs.push_back(JaxprDoc(*file.main));
    return arena_.Concat(std::move(docs));
  }

 private:
  DocArena arena_;
};

// ---- structural comparison ----

class Comparer {
 public:
  explicit Comparer(std::string* diff) : diff_(diff) {}

  bool Fail(const std::string& path, const std::string& what) {
    if (diff_ != nullptr) *diff_ = absl::StrCat(path, ": ", what);
    return false;
  }

  static std::string Quote(const std::string& s) {
    std::string shown = s.size() > 120 ? s.substr(0, 117) + "..." : s;
    return absl::StrCat("'", shown, "'");
  }

  bool VarList(const std::vector<Var*>& a, const std::vector<Var*>& b,
               const std::string& path) {
    if (a.size() != b.size()) {
      return Fail(path, absl::StrCat(a.size(), " vs ", b.size(), " vars"));
    }
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string p = absl::StrCat(path, "[", i, "]");
      if (a[i]->name != b[i]->name || a[i]->is_drop != b[i]->is_drop) {
        return Fail(p, absl::StrCat("name ", Quote(a[i]->name), " vs ",
                                    Quote(b[i]->name)));
      }
      if (a[i]->aval != b[i]->aval) {
        return Fail(p, absl::StrCat("type of '", a[i]->name, "' ",
                                    Quote(a[i]->aval.ToString()), " vs ",
                                    Quote(b[i]->aval.ToString())));
      }
    }
    return true;
  }

  bool AtomList(const std::vector<Atom>& a, const std::vector<Atom>& b,
                const std::string& path) {
    if (a.size() != b.size()) {
      return Fail(path, absl::StrCat(a.size(), " vs ", b.size(), " atoms"));
    }
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string p = absl::StrCat(path, "[", i, "]");
      if (a[i].is_literal() != b[i].is_literal()) {
        return Fail(
            p, absl::StrCat(Quote(AtomText(a[i])), " vs ",
                            Quote(AtomText(b[i])), " (literal vs variable)"));
      }
      if (!a[i].is_literal()) {
        const std::string na = a[i].var ? a[i].var->name : "";
        const std::string nb = b[i].var ? b[i].var->name : "";
        if (na != nb) return Fail(p, Quote(na) + " vs " + Quote(nb));
        continue;
      }
      const Literal& la = *a[i].literal;
      const Literal& lb = *b[i].literal;
      if (la.kind != lb.kind || la.text != lb.text || la.aval != lb.aval ||
          la.elided_index != lb.elided_index) {
        return Fail(p, absl::StrCat("literal ", Quote(LiteralText(la)), " vs ",
                                    Quote(LiteralText(lb))));
      }
    }
    return true;
  }

  bool Value(const ParamValue& a, const ParamValue& b,
             const std::string& path) {
    using K = ParamValue::Kind;
    if (a.kind() != b.kind()) {
      return Fail(path, absl::StrCat(Quote(a.ToString()), " vs ",
                                     Quote(b.ToString()), " (kinds differ)"));
    }
    switch (a.kind()) {
      case K::kJaxpr:
        if (a.text() != b.text()) {
          return Fail(path, absl::StrCat("jaxpr reference ", Quote(a.text()),
                                         " vs ", Quote(b.text())));
        }
        // References are compared by name; the definitions are compared
        // once at file level.
        if (!a.text().empty()) return true;
        if (a.jaxpr() == nullptr || b.jaxpr() == nullptr) {
          return a.jaxpr() == b.jaxpr() || Fail(path, "missing jaxpr");
        }
        return JaxprEq(*a.jaxpr(), *b.jaxpr(), path);
      case K::kJaxprTuple:
      case K::kTuple:
      case K::kList:
        if (a.items().size() != b.items().size()) {
          return Fail(path, absl::StrCat(a.items().size(), " vs ",
                                         b.items().size(), " items"));
        }
        for (size_t i = 0; i < a.items().size(); ++i) {
          if (!Value(a.items()[i], b.items()[i],
                     absl::StrCat(path, "[", i, "]"))) {
            return false;
          }
        }
        return true;
      case K::kCall:
        if (a.text() != b.text() ||
            a.call_args().size() != b.call_args().size()) {
          return Fail(path, absl::StrCat(Quote(a.ToString()), " vs ",
                                         Quote(b.ToString())));
        }
        for (size_t i = 0; i < a.call_args().size(); ++i) {
          if (a.call_args()[i].first != b.call_args()[i].first) {
            return Fail(
                path,
                absl::StrCat("field ", i, " is ", Quote(a.call_args()[i].first),
                             " vs ", Quote(b.call_args()[i].first)));
          }
          if (!Value(a.call_args()[i].second, b.call_args()[i].second,
                     absl::StrCat(path, ".", a.call_args()[i].first))) {
            return false;
          }
        }
        return true;
      default:
        if (!(a == b)) {
          return Fail(path, absl::StrCat(Quote(a.ToString()), " vs ",
                                         Quote(b.ToString())));
        }
        return true;
    }
  }

  bool JaxprEq(const ClosedJaxpr& a, const ClosedJaxpr& b,
               const std::string& path) {
    if (!VarList(a.constvars, b.constvars, path + ".constvars")) return false;
    if (!VarList(a.invars, b.invars, path + ".invars")) return false;
    if (a.eqns.size() != b.eqns.size()) {
      return Fail(path, absl::StrCat(a.eqns.size(), " vs ", b.eqns.size(),
                                     " equations"));
    }
    for (size_t i = 0; i < a.eqns.size(); ++i) {
      const Eqn& ea = a.eqns[i];
      const Eqn& eb = b.eqns[i];
      const std::string p =
          absl::StrCat(path, ".eqns[", i, "] (", ea.primitive, " at ",
                       ea.loc.line, ":", ea.loc.column, ")");
      if (ea.primitive != eb.primitive) {
        return Fail(p, absl::StrCat("primitive ", Quote(ea.primitive), " vs ",
                                    Quote(eb.primitive)));
      }
      if (!VarList(ea.outputs, eb.outputs, p + ".outputs")) return false;
      if (!AtomList(ea.inputs, eb.inputs, p + ".inputs")) return false;
      const auto& pa = ea.params.entries();
      const auto& pb = eb.params.entries();
      if (pa.size() != pb.size()) {
        return Fail(p, absl::StrCat(pa.size(), " vs ", pb.size(), " params"));
      }
      for (size_t k = 0; k < pa.size(); ++k) {
        if (pa[k].first != pb[k].first) {
          return Fail(p, absl::StrCat("param ", k, " is ", Quote(pa[k].first),
                                      " vs ", Quote(pb[k].first)));
        }
        if (!Value(pa[k].second, pb[k].second,
                   absl::StrCat(p, ".", pa[k].first))) {
          return false;
        }
      }
    }
    if (!AtomList(a.outvars, b.outvars, path + ".outvars")) return false;
    if (a.effects != b.effects) {
      return Fail(path + ".effects",
                  absl::StrCat(Quote(absl::StrJoin(a.effects, ", ")), " vs ",
                               Quote(absl::StrJoin(b.effects, ", "))));
    }
    return true;
  }

 private:
  std::string* diff_;
};

std::string HookPrint(const ClosedJaxpr& jaxpr) { return PrintJaxpr(jaxpr); }
bool HookEqual(const ClosedJaxpr& a, const ClosedJaxpr& b) {
  return StructurallyEqual(a, b, nullptr);
}

}  // namespace

// Called from every entry point of the text library (parser and printer),
// so the hooks are installed whenever the library is in use, without
// relying on static initializers surviving the link.
void InstallTextHooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    SetJaxprToStringHook(&HookPrint);
    SetJaxprEqualHook(&HookEqual);
  });
}

std::string PrintJaxprFile(const JaxprFile& file) {
  InstallTextHooks();
  DocPrinter printer;
  const DocId root = printer.FileDoc(file);
  return printer.arena().Format(root);
}

std::string PrintJaxpr(const ClosedJaxpr& jaxpr) {
  InstallTextHooks();
  DocPrinter printer;
  const DocId root = printer.JaxprDoc(jaxpr);
  return printer.arena().Format(root);
}

std::string PrintAtom(const Atom& atom) {
  InstallTextHooks();
  return AtomText(atom);
}

std::string PrintEqn(const Eqn& eqn) {
  InstallTextHooks();
  DocPrinter printer;
  const DocId root = printer.EqnDoc(eqn);
  return printer.arena().Format(root);
}

bool StructurallyEqual(const JaxprFile& a, const JaxprFile& b,
                       std::string* diff) {
  InstallTextHooks();
  Comparer cmp(diff);
  if (a.shared.size() != b.shared.size()) {
    return cmp.Fail("shared", absl::StrCat(a.shared.size(), " vs ",
                                           b.shared.size(), " shared jaxprs"));
  }
  for (size_t i = 0; i < a.shared.size(); ++i) {
    const std::string path = absl::StrCat("shared '", a.shared[i].first, "'");
    if (a.shared[i].first != b.shared[i].first) {
      return cmp.Fail(path, absl::StrCat("name vs '", b.shared[i].first, "'"));
    }
    if (a.shared[i].second == nullptr || b.shared[i].second == nullptr) {
      if (a.shared[i].second != b.shared[i].second) {
        return cmp.Fail(path, "missing jaxpr");
      }
      continue;
    }
    if (!cmp.JaxprEq(*a.shared[i].second, *b.shared[i].second, path)) {
      return false;
    }
  }
  if (a.num_elided_literals != b.num_elided_literals) {
    return cmp.Fail("file",
                    absl::StrCat(a.num_elided_literals, " vs ",
                                 b.num_elided_literals, " elided literals"));
  }
  if ((a.main == nullptr) != (b.main == nullptr)) {
    return cmp.Fail("main", "missing jaxpr");
  }
  if (a.main == nullptr) return true;
  return cmp.JaxprEq(*a.main, *b.main, "main");
}

bool StructurallyEqual(const ClosedJaxpr& a, const ClosedJaxpr& b,
                       std::string* diff) {
  InstallTextHooks();
  Comparer cmp(diff);
  return cmp.JaxprEq(a, b, "jaxpr");
}

}  // namespace jax2onnx::jaxpr
