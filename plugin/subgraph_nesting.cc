#include "plugin/subgraph_nesting.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace jax2onnx::plugin {
namespace {

bool HasSubgraphs(const onnx::NodeProto& node) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.has_g() || a.graphs_size() > 0) return true;
  }
  return false;
}

// The names a node reads that it does not define: its inputs and the outer
// values its subgraphs read, in first-read order. Scoped like ONNX: a
// subgraph sees its own inputs, initializers and earlier node outputs, and
// those of the subgraphs enclosing it inside the node.
class FreeNames {
 public:
  std::vector<std::string> Of(const onnx::NodeProto& node) {
    for (const std::string& in : node.input()) Read(in);
    VisitSubgraphs(node);
    return std::move(free_);
  }

 private:
  void Read(const std::string& name) {
    if (name.empty() || bound_.contains(name)) return;
    if (free_set_.insert(name).second) free_.push_back(name);
  }
  void Bind(const std::string& name, std::vector<std::string>* added) {
    if (!name.empty() && bound_.insert(name).second) added->push_back(name);
  }
  void VisitSubgraphs(const onnx::NodeProto& node) {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g()) VisitGraph(a.g());
      for (const onnx::GraphProto& g : a.graphs()) VisitGraph(g);
    }
  }
  // Recursion follows the nesting of subgraphs, which the parser bounds.
  void VisitGraph(const onnx::GraphProto& g) {
    std::vector<std::string> added;
    for (const onnx::ValueInfoProto& v : g.input()) Bind(v.name(), &added);
    for (const onnx::TensorProto& t : g.initializer()) Bind(t.name(), &added);
    for (const onnx::SparseTensorProto& s : g.sparse_initializer()) {
      Bind(s.values().name(), &added);
    }
    for (const onnx::NodeProto& n : g.node()) {
      for (const std::string& in : n.input()) Read(in);
      VisitSubgraphs(n);
      for (const std::string& out : n.output()) Bind(out, &added);
    }
    for (const onnx::ValueInfoProto& v : g.output()) Read(v.name());
    for (const std::string& name : added) bound_.erase(name);
  }

  absl::flat_hash_set<std::string> bound_;
  absl::flat_hash_set<std::string> free_set_;
  std::vector<std::string> free_;
};

class Mover {
 public:
  Mover(onnx::ModelProto& model, int max_levels)
      : model_(model), max_levels_(max_levels) {
    for (const onnx::FunctionProto& f : model_.functions()) {
      if (f.domain() == kNestingDomain) taken_.insert(f.name());
    }
  }

  int Run() {
    VisitNodes(model_.mutable_graph()->mutable_node(), 0);
    // Function bodies start at level 0 again; the moved nodes' functions
    // are appended as they are made and visited in turn.
    for (int i = 0; i < model_.functions_size(); ++i) {
      VisitNodes(model_.mutable_functions(i)->mutable_node(), 0);
    }
    if (moved_.empty()) return 0;
    bool imported = false;
    for (const onnx::OperatorSetIdProto& o : model_.opset_import()) {
      imported |= o.domain() == kNestingDomain;
    }
    if (!imported) {
      onnx::OperatorSetIdProto* o = model_.add_opset_import();
      o->set_domain(kNestingDomain);
      o->set_version(1);
    }
    // Each function imports what the model imports (its body is the
    // model's nodes; a nested move calls the nesting domain itself).
    for (onnx::FunctionProto* f : moved_) {
      *f->mutable_opset_import() = model_.opset_import();
    }
    return static_cast<int>(moved_.size());
  }

 private:
  // Recursion is bounded by max_levels: deeper nodes are moved, not entered.
  void VisitNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes,
                  int level) {
    for (onnx::NodeProto& n : *nodes) {
      if (!HasSubgraphs(n)) continue;
      if (level >= max_levels_) {
        Move(n, level);
        continue;
      }
      for (onnx::AttributeProto& a : *n.mutable_attribute()) {
        if (a.has_g()) VisitNodes(a.mutable_g()->mutable_node(), level + 1);
        for (onnx::GraphProto& g : *a.mutable_graphs()) {
          VisitNodes(g.mutable_node(), level + 1);
        }
      }
    }
  }

  std::string FreshFunctionName(const std::string& op_type) {
    for (;;) {
      std::string name = absl::StrCat("nested_", op_type, "_", counter_++);
      if (taken_.insert(name).second) return name;
    }
  }

  // Replaces `node` by a call of a new function whose body is `node`.
  void Move(onnx::NodeProto& node, int level) {
    const std::string name = FreshFunctionName(node.op_type());
    onnx::FunctionProto* f = model_.add_functions();
    f->set_name(name);
    f->set_domain(kNestingDomain);
    f->set_doc_string(absl::StrCat(
        "node '", node.name(), "' (", node.op_type(), ") moved out of ", level,
        " levels of subgraphs: ONNX Runtime parses at most 100 nested "
        "protobuf messages"));
    onnx::NodeProto call;
    call.set_op_type(name);
    call.set_domain(kNestingDomain);
    if (!node.name().empty()) call.set_name(node.name());
    for (std::string& input : FreeNames().Of(node)) {
      f->add_input(input);
      call.add_input(std::move(input));
    }
    for (int i = 0; i < node.output_size(); ++i) {
      // A function output needs a name; an absent optional output gets one
      // nothing reads.
      if (node.output(i).empty()) {
        node.set_output(i, absl::StrCat(name, "_unused_", i));
      }
      f->add_output(node.output(i));
      call.add_output(node.output(i));
    }
    f->add_node()->Swap(&node);
    node.Swap(&call);
    moved_.push_back(f);
  }

  onnx::ModelProto& model_;
  const int max_levels_;
  int counter_ = 0;
  absl::flat_hash_set<std::string> taken_;
  std::vector<onnx::FunctionProto*> moved_;
};

}  // namespace

int BoundSubgraphNesting(onnx::ModelProto& model, int max_levels) {
  return Mover(model, max_levels).Run();
}

}  // namespace jax2onnx::plugin
