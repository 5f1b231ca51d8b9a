// A Wadler/Lindig document layout engine that reproduces JAX's
// `pretty_printer` (jax/_src/pretty_printer.py): a group prints flat when
// its own flat width fits in the rest of the line, otherwise its breaks
// become newlines at the current nesting. Nodes live in an arena.
#ifndef JAX2ONNX_JAXPR_TEXT_PRETTY_H_
#define JAX2ONNX_JAXPR_TEXT_PRETTY_H_

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace jax2onnx::jaxpr::pretty {

using DocId = int32_t;

class DocArena {
 public:
  DocId Nil();
  DocId Text(std::string text);
  DocId Break(std::string text = " ");
  DocId Concat(std::vector<DocId> children);
  DocId Group(DocId child);
  DocId Nest(int indent, DocId child);
  // `docs` separated by `separator` (the same node reused).
  DocId Join(DocId separator, const std::vector<DocId>& docs);

  std::string Format(DocId root, int width = 80) const;

 private:
  enum class Kind : uint8_t { kNil, kText, kBreak, kConcat, kGroup, kNest };
  struct Node {
    Kind kind;
    int32_t indent = 0;  // kNest
    int32_t width = 0;   // kText/kBreak: display width of `text`
    std::string text;
    std::vector<DocId> children;
  };
  DocId Add(Node node);
  bool Fits(DocId doc, int64_t width) const;

  // A deque: growing never moves existing nodes (large docs stay linear).
  std::deque<Node> nodes_;
};

}  // namespace jax2onnx::jaxpr::pretty

#endif  // JAX2ONNX_JAXPR_TEXT_PRETTY_H_
