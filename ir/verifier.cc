// The IR verifier. One walk over the graph tree in node order keeps the set
// of values visible at each point (outer-scope values defined before the
// node owning a subgraph are visible inside it), then the use lists of all
// defined values are checked against the input edges seen. O(V + E).
#include "ir/verifier.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"

namespace jax2onnx::ir {
namespace {

std::string NodeRef(const Node* n) {
  return absl::StrCat("node '", n->name(), "' (", n->op_type(), ")");
}

class Verifier {
 public:
  explicit Verifier(bool require_io_types)
      : require_io_types_(require_io_types) {}

  absl::Status Run(const Graph& g) {
    // Sized for the top level up front (about one value per node): growing
    // tables of 100k entries rehashes each several times.
    const size_t values =
        g.num_nodes() + g.inputs().size() + g.num_initializers();
    visible_.reserve(values);
    names_.reserve(values);
    input_refs_.reserve(values);
    defined_.reserve(values);
    if (absl::Status s = VerifyGraph(g); !s.ok()) return s;
    return VerifyUseLists();
  }

 private:
  absl::Status Error(const Graph& g, std::string msg) {
    return absl::FailedPreconditionError(
        absl::StrCat("graph '", g.name(), "': ", msg));
  }

  // `what` names the definition in an error; it is built only then (this
  // runs once per value, and the verifier runs on every conversion).
  absl::Status Define(const Graph& g, const Value* v,
                      absl::FunctionRef<std::string()> what,
                      std::vector<const Value*>* level) {
    if (!visible_.insert(v).second) {
      return Error(g, absl::StrCat(what(), " '", v->name(),
                                   "' is defined more than once"));
    }
    level->push_back(v);
    defined_.push_back(v);
    if (!v->name().empty()) {
      auto [it, inserted] = names_.emplace(v->name(), v);
      if (!inserted) {
        return Error(
            g, absl::StrCat("value name '", v->name(), "' is defined twice (",
                            what(), " and an earlier definition)"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckVisible(const Graph& g, const Value* v,
                            absl::FunctionRef<std::string()> user) {
    if (!visible_.contains(v)) {
      return Error(
          g, absl::StrCat(user(), " '", v->name(),
                          "' is not defined before this point (not a graph "
                          "input, initializer or output of an earlier node "
                          "of this graph or an enclosing one)"));
    }
    return absl::OkStatus();
  }

  absl::Status VerifyGraph(const Graph& g) {
    std::vector<const Value*> level;
    absl::Status s = VerifyGraphBody(g, &level);
    for (const Value* v : level) {
      visible_.erase(v);
      if (!v->name().empty()) {
        auto it = names_.find(v->name());
        if (it != names_.end() && it->second == v) names_.erase(it);
      }
    }
    return s;
  }

  absl::Status VerifyGraphBody(const Graph& g,
                               std::vector<const Value*>* level) {
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const Value* v = g.inputs()[i];
      if (v == nullptr) return Error(g, absl::StrCat("input ", i, " is null"));
      if (v->graph() != &g || !v->is_graph_input()) {
        return Error(g, absl::StrCat("input ", i, " '", v->name(),
                                     "' is not owned by this graph"));
      }
      if (v->name().empty()) {
        return Error(g, absl::StrCat("input ", i, " has no name"));
      }
      if (require_io_types_ && v->type() == nullptr) {
        return Error(g, absl::StrCat("input '", v->name(), "' has no type"));
      }
      if (absl::Status s = Define(
              g, v, [] { return std::string("graph input"); }, level);
          !s.ok()) {
        return s;
      }
    }
    for (const Value* v : g.initializers()) {
      if (v->graph() != &g || !v->is_initializer()) {
        return Error(g, absl::StrCat("initializer '", v->name(),
                                     "' is not owned by this graph"));
      }
      if (v->const_value() == nullptr) {
        return Error(
            g, absl::StrCat("initializer '", v->name(), "' has no tensor"));
      }
      if (v->name().empty()) return Error(g, "an initializer has no name");
      if (v->is_graph_input()) continue;  // defined as an input above
      if (absl::Status s = Define(
              g, v, [] { return std::string("initializer"); }, level);
          !s.ok()) {
        return s;
      }
    }
    for (const Node* n : g.nodes()) {
      if (n->graph() != &g) {
        return Error(g, absl::StrCat(NodeRef(n),
                                     " is listed by this graph but owned by "
                                     "another"));
      }
      if (n->erased()) {
        return Error(g,
                     absl::StrCat(NodeRef(n), " is erased but still listed"));
      }
      for (int i = 0; i < n->num_inputs(); ++i) {
        const Value* v = n->input(i);
        if (v == nullptr) continue;
        if (absl::Status s = CheckVisible(
                g, v, [&] { return absl::StrCat(NodeRef(n), " input ", i); });
            !s.ok()) {
          return s;
        }
        ++input_refs_[v];
      }
      for (Graph* sub : n->Subgraphs()) {
        if (sub->parent_node() != n) {
          return Error(
              g, absl::StrCat("subgraph '", sub->name(), "' of ", NodeRef(n),
                              " does not name it as its parent"));
        }
        if (absl::Status s = VerifyGraph(*sub); !s.ok()) {
          return absl::Status(
              s.code(),
              absl::StrCat("in subgraph of ", NodeRef(n), ": ", s.message()));
        }
      }
      for (int i = 0; i < n->num_outputs(); ++i) {
        const Value* v = n->output(i);
        if (v->producer() != n || v->output_index() != i) {
          return Error(g,
                       absl::StrCat(NodeRef(n), " output ", i, " '", v->name(),
                                    "' does not name this node and index "
                                    "as its producer"));
        }
        if (absl::Status s = Define(
                g, v, [&] { return absl::StrCat("output of ", NodeRef(n)); },
                level);
            !s.ok()) {
          return s;
        }
      }
    }
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      const Value* v = g.outputs()[i];
      if (v == nullptr) return Error(g, absl::StrCat("output ", i, " is null"));
      if (absl::Status s = CheckVisible(
              g, v, [&] { return absl::StrCat("graph output ", i); });
          !s.ok()) {
        return s;
      }
      if (require_io_types_ && v->type() == nullptr) {
        return Error(g, absl::StrCat("output '", v->name(), "' has no type"));
      }
      bool listed = false;
      for (const Graph* og : v->output_of()) listed |= og == &g;
      if (!listed) {
        return Error(g, absl::StrCat("output '", v->name(),
                                     "' does not record this graph in its "
                                     "output_of list"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status VerifyUseLists() {
    absl::flat_hash_set<std::pair<const Node*, int>> seen;
    for (const Value* v : defined_) {
      for (const Use& u : v->uses()) {
        if (u.node == nullptr || u.node->erased() ||
            u.input_index >= u.node->num_inputs() ||
            u.node->input(u.input_index) != v) {
          return absl::FailedPreconditionError(absl::StrCat(
              "use list of value '", v->name(), "' names ",
              u.node == nullptr ? std::string("a null node") : NodeRef(u.node),
              " input ", u.input_index,
              ", which does not use it (stale or erased)"));
        }
        if (!seen.emplace(u.node, u.input_index).second) {
          return absl::FailedPreconditionError(absl::StrCat(
              "use list of value '", v->name(), "' names ", NodeRef(u.node),
              " input ", u.input_index, " twice"));
        }
      }
      auto it = input_refs_.find(v);
      size_t refs = it == input_refs_.end() ? 0 : it->second;
      if (refs != v->num_uses()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "value '", v->name(), "' is an input of ", refs,
            " node slots but its use list has ", v->num_uses(), " entries"));
      }
    }
    return absl::OkStatus();
  }

  bool require_io_types_;
  absl::flat_hash_set<const Value*> visible_;
  // Keys view the values' names, which outlive the verifier.
  absl::flat_hash_map<absl::string_view, const Value*> names_;
  absl::flat_hash_map<const Value*, size_t> input_refs_;
  std::vector<const Value*> defined_;
};

}  // namespace

absl::Status Verify(const Graph& graph, const VerifyOptions& options) {
  return Verifier(options.require_io_types).Run(graph);
}

absl::Status Verify(const Model& model, const VerifyOptions& options) {
  if (absl::Status s = Verify(model.graph(), options); !s.ok()) return s;
  for (const Function* f : model.functions()) {
    if (model.FindFunction(f->domain(), f->name()) != f) {
      return absl::FailedPreconditionError(
          absl::StrCat("function '", f->domain(), "::", f->name(),
                       "' is not reachable under its own key"));
    }
    if (absl::Status s = Verifier(false).Run(f->body()); !s.ok()) {
      return absl::Status(
          s.code(), absl::StrCat("in function '", f->domain(), "::", f->name(),
                                 "': ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx::ir
