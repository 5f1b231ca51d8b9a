// Iterative formatter, a transcription of JAX's `_format`/`_fits` (no
// colours, no annotations): explicit agendas avoid recursion on deep docs.
#include "jaxpr/text/pretty.h"

#include <utility>

namespace jax2onnx::jaxpr::pretty {
namespace {

// Python's len() counts code points, not bytes.
int32_t DisplayWidth(const std::string& s) {
  int32_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

}  // namespace

DocId DocArena::Add(Node node) {
  nodes_.push_back(std::move(node));
  return static_cast<DocId>(nodes_.size() - 1);
}

DocId DocArena::Nil() { return Add(Node{Kind::kNil}); }

DocId DocArena::Text(std::string text) {
  Node n{Kind::kText};
  n.width = DisplayWidth(text);
  n.text = std::move(text);
  return Add(std::move(n));
}

DocId DocArena::Break(std::string text) {
  Node n{Kind::kBreak};
  n.width = DisplayWidth(text);
  n.text = std::move(text);
  return Add(std::move(n));
}

DocId DocArena::Concat(std::vector<DocId> children) {
  if (children.size() == 1) return children[0];
  Node n{Kind::kConcat};
  n.children = std::move(children);
  return Add(std::move(n));
}

DocId DocArena::Group(DocId child) {
  Node n{Kind::kGroup};
  n.children = {child};
  return Add(std::move(n));
}

DocId DocArena::Nest(int indent, DocId child) {
  Node n{Kind::kNest};
  n.indent = indent;
  n.children = {child};
  return Add(std::move(n));
}

DocId DocArena::Join(DocId separator, const std::vector<DocId>& docs) {
  if (docs.empty()) return Nil();
  std::vector<DocId> xs;
  xs.reserve(docs.size() * 2);
  xs.push_back(docs[0]);
  for (size_t i = 1; i < docs.size(); ++i) {
    xs.push_back(separator);
    xs.push_back(docs[i]);
  }
  return Concat(std::move(xs));
}

// Whether `doc` printed flat fits in `width` columns. Only the group
// itself is measured (as JAX does), and the walk stops once it overflows.
bool DocArena::Fits(DocId doc, int64_t width) const {
  std::vector<DocId> agenda = {doc};
  while (width >= 0 && !agenda.empty()) {
    const Node& n = nodes_[agenda.back()];
    agenda.pop_back();
    switch (n.kind) {
      case Kind::kNil:
        break;
      case Kind::kText:
      case Kind::kBreak:
        width -= n.width;
        break;
      case Kind::kConcat:
        for (auto it = n.children.rbegin(); it != n.children.rend(); ++it) {
          agenda.push_back(*it);
        }
        break;
      case Kind::kGroup:
      case Kind::kNest:
        agenda.push_back(n.children[0]);
        break;
    }
  }
  return width >= 0;
}

std::string DocArena::Format(DocId root, int width) const {
  struct State {
    int32_t indent;
    bool flat;
    DocId doc;
  };
  std::string out;
  std::vector<State> agenda = {{0, false, root}};
  int64_t k = 0;  // current column
  while (!agenda.empty()) {
    const State st = agenda.back();
    agenda.pop_back();
    const Node& n = nodes_[st.doc];
    switch (n.kind) {
      case Kind::kNil:
        break;
      case Kind::kText:
        out += n.text;
        k += n.width;
        break;
      case Kind::kBreak:
        if (!st.flat) {
          out.push_back('\n');
          out.append(static_cast<size_t>(st.indent), ' ');
          k = st.indent;
        } else {
          out += n.text;
          k += n.width;
        }
        break;
      case Kind::kConcat:
        for (auto it = n.children.rbegin(); it != n.children.rend(); ++it) {
          agenda.push_back({st.indent, st.flat, *it});
        }
        break;
      case Kind::kNest:
        agenda.push_back({st.indent + n.indent, st.flat, n.children[0]});
        break;
      case Kind::kGroup:
        agenda.push_back({st.indent, st.flat || Fits(n.children[0], width - k),
                          n.children[0]});
        break;
    }
  }
  return out;
}

}  // namespace jax2onnx::jaxpr::pretty
