// The in-memory ONNX IR (in the spirit of the Python onnx_ir package):
// a Model owns a main Graph and Functions; a Graph owns its input and
// initializer Values and a list of Nodes; a Node owns its output Values and
// its Attrs (which may own subgraphs). Values know their producer and their
// uses, so rewrites (ReplaceInputWith, ReplaceAllUsesWith, node removal) are
// O(1) per edge. Subgraph nodes may use values of enclosing graphs; those
// uses are recorded on the outer value like any other.
//
// Iterating a graph's nodes tolerates erasing (and inserting) nodes during
// the loop: an erased node stays allocated, unlinked, until
// Graph::ReleaseErasedNodes(), and iteration steps past it.
#ifndef JAX2ONNX_IR_IR_H_
#define JAX2ONNX_IR_IR_H_

#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/tensor.h"
#include "ir/type.h"

namespace jax2onnx::ir {

class Graph;
class Node;
class Value;

using AttrType = onnx::AttributeProto::AttributeType;

// One named attribute. The payload is one of the ONNX attribute kinds; a
// GRAPH(S) attribute owns its subgraph(s). `ref_attr_name` is set for
// attributes of function-body nodes that refer to a function attribute.
class Attr {
 public:
  Attr() = default;
  Attr(Attr&&) = default;
  Attr& operator=(Attr&&) = default;

  static Attr Float(std::string name, float v);
  static Attr Int(std::string name, int64_t v);
  static Attr String(std::string name, std::string v);
  static Attr TensorValue(std::string name, Tensor v);
  static Attr GraphValue(std::string name, std::unique_ptr<Graph> v);
  static Attr SparseTensorValue(std::string name, SparseTensor v);
  static Attr TypeValue(std::string name, Type v);
  static Attr Floats(std::string name, std::vector<float> v);
  static Attr Ints(std::string name, std::vector<int64_t> v);
  static Attr Strings(std::string name, std::vector<std::string> v);
  static Attr Tensors(std::string name, std::vector<Tensor> v);
  static Attr Graphs(std::string name, std::vector<std::unique_ptr<Graph>> v);
  static Attr SparseTensors(std::string name, std::vector<SparseTensor> v);
  static Attr Types(std::string name, std::vector<Type> v);
  // A reference to attribute `ref_attr_name` of the enclosing function.
  static Attr Ref(std::string name, AttrType type, std::string ref_attr_name);

  const std::string& name() const { return name_; }
  AttrType type() const { return type_; }
  const std::string& ref_attr_name() const { return ref_attr_name_; }
  bool is_ref() const { return !ref_attr_name_.empty(); }
  const std::string& doc_string() const { return doc_string_; }
  void set_doc_string(std::string d) { doc_string_ = std::move(d); }

  // Typed accessors; CHECK-fail when the payload is of another kind.
  float f() const;
  int64_t i() const;
  const std::string& s() const;
  const Tensor& t() const;
  Graph* g() const;
  const SparseTensor& sparse_tensor() const;
  const Type& tp() const;
  const std::vector<float>& floats() const;
  const std::vector<int64_t>& ints() const;
  const std::vector<std::string>& strings() const;
  const std::vector<Tensor>& tensors() const;
  const std::vector<std::unique_ptr<Graph>>& graphs() const;
  const std::vector<SparseTensor>& sparse_tensors() const;
  const std::vector<Type>& types() const;
  bool has_payload() const {
    return !std::holds_alternative<std::monostate>(value_);
  }

  // Subgraphs owned by this attribute (GRAPH or GRAPHS), else empty.
  std::vector<Graph*> Subgraphs() const;
  // The same, appended to `out` (no vector of its own: walks of every
  // graph after every pass call it per node).
  void AppendSubgraphs(std::vector<Graph*>* out) const;
  // Whether this attribute holds a GRAPH or GRAPHS payload.
  bool holds_graphs() const;

 private:
  friend class Node;
  using Payload =
      std::variant<std::monostate, float, int64_t, std::string,
                   std::unique_ptr<Tensor>, std::unique_ptr<Graph>,
                   std::unique_ptr<SparseTensor>, std::unique_ptr<Type>,
                   std::vector<float>, std::vector<int64_t>,
                   std::vector<std::string>, std::vector<Tensor>,
                   std::vector<std::unique_ptr<Graph>>,
                   std::vector<SparseTensor>, std::vector<Type>>;
  Attr(std::string name, AttrType type, Payload value)
      : name_(std::move(name)), type_(type), value_(std::move(value)) {}

  std::string name_;
  AttrType type_ = onnx::AttributeProto::UNDEFINED;
  std::string ref_attr_name_;
  std::string doc_string_;
  Payload value_;
};

// One consumer edge of a value: `node->input(input_index) == value`.
struct Use {
  Node* node;
  int input_index;
  friend bool operator==(const Use& a, const Use& b) {
    return a.node == b.node && a.input_index == b.input_index;
  }
};

// A named SSA value: a graph input, an initializer (both owned by a Graph)
// or a node output (owned by its Node). An empty name on a node output
// means the optional output is absent.
class Value {
 public:
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;
  // Allocated from a pool (ir/object_pool.h).
  static void* operator new(size_t size);
  static void operator delete(void* p);

  const std::string& name() const { return name_; }
  // Renames; the new name is noted by the root graph's fresh-name table.
  void SetName(std::string name);

  // The full type, or nullptr when unknown.
  const Type* type() const { return type_ ? &*type_ : nullptr; }
  void SetType(std::optional<Type> type) { type_ = std::move(type); }
  // Tensor conveniences: dtype (UNDEFINED when unknown or not a tensor) and
  // shape (nullptr when unranked or unknown).
  int dtype() const;
  const Shape* shape() const;
  // Sets the dtype, making the type a tensor type (keeps a tensor shape).
  void SetDtype(int dtype);
  // Sets the shape, making the type a tensor type (keeps the dtype).
  void SetShape(std::optional<Shape> shape);

  const std::string& doc_string() const { return doc_string_; }
  void set_doc_string(std::string d) { doc_string_ = std::move(d); }

  // The node producing this value (nullptr for graph inputs/initializers).
  Node* producer() const { return producer_; }
  int output_index() const { return output_index_; }
  // The graph this value is defined in: its producer's graph, or the graph
  // owning it as input/initializer.
  Graph* graph() const;

  bool is_graph_input() const { return is_graph_input_; }
  bool is_initializer() const { return is_initializer_; }
  bool is_graph_output() const { return !output_of_.empty(); }
  // Graphs listing this value among their outputs (with multiplicity).
  absl::Span<Graph* const> output_of() const { return output_of_; }

  // Consumers, in no particular order (removal swaps with the last).
  absl::Span<const Use> uses() const { return uses_; }
  size_t num_uses() const { return uses_.size(); }
  // Consumer nodes without repetition, in first-use order.
  std::vector<Node*> Consumers() const;

  // The constant of an initializer (nullptr otherwise).
  const Tensor* const_value() const { return const_value_.get(); }
  const std::shared_ptr<Tensor>& shared_const_value() const {
    return const_value_;
  }

 private:
  friend class Graph;
  friend class Node;
  friend class Function;
  friend size_t ReplaceAllUsesWith(Value* old_value, Value* new_value);
  friend class IrTestPeer;  // tests corrupt internals to exercise Verify
  explicit Value(std::string name) : name_(std::move(name)) {}

  std::string name_;
  std::optional<Type> type_;
  std::string doc_string_;
  Node* producer_ = nullptr;
  int output_index_ = -1;
  Graph* owner_ = nullptr;  // for graph inputs and initializers
  uint32_t owner_slot_ = 0;
  bool is_graph_input_ = false;
  bool is_initializer_ = false;
  std::vector<Graph*> output_of_;
  std::vector<Use> uses_;
  std::shared_ptr<Tensor> const_value_;
};

// An operator application. Inputs may be nullptr (absent optional input).
class Node {
 public:
  // Creates a detached node with `num_outputs` outputs named
  // `output_names[i]` (missing names are empty: give names later or let
  // Graph::Append assign fresh ones via Graph::NameOutputs).
  static std::unique_ptr<Node> Create(absl::string_view domain,
                                      absl::string_view op_type,
                                      absl::Span<Value* const> inputs,
                                      std::vector<std::string> output_names,
                                      std::vector<Attr> attrs = {},
                                      absl::string_view name = "");
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // Allocated from a pool (ir/object_pool.h): nodes created together lie
  // together, which is what every walk over a graph reads.
  static void* operator new(size_t size);
  static void operator delete(void* p);

  const std::string& domain() const { return domain_; }
  void set_domain(std::string d) { domain_ = std::move(d); }
  const std::string& op_type() const { return op_type_; }
  void set_op_type(std::string op) { op_type_ = std::move(op); }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const std::string& doc_string() const { return doc_string_; }
  void set_doc_string(std::string d) { doc_string_ = std::move(d); }
  // Serialization hint (import sets it so protos round-trip exactly): write
  // the domain field even when it is empty.
  bool write_empty_domain() const { return write_empty_domain_; }
  void set_write_empty_domain(bool b) { write_empty_domain_ = b; }

  // The graph whose node list holds this node (nullptr when detached).
  Graph* graph() const { return graph_; }
  bool erased() const { return erased_; }
  // Live neighbours in the graph's node list (nullptr at the ends).
  Node* prev() const;
  Node* next() const;

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  Value* input(int i) const { return inputs_[i]; }
  absl::Span<Value* const> inputs() const { return inputs_; }
  void AppendInput(Value* value);
  // Points input `i` at `value` (nullptr makes it absent), fixing use lists.
  void ReplaceInputWith(int i, Value* value);
  // Drops trailing inputs so that `n` remain.
  void TruncateInputs(int n);

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  Value* output(int i) const { return outputs_[i].get(); }
  std::vector<Value*> outputs() const;
  Value* AppendOutput(std::string name);

  const std::vector<Attr>& attributes() const { return attrs_; }
  const Attr* attr(absl::string_view name) const;
  // Adds or replaces the attribute with the same name.
  void SetAttr(Attr attr);
  bool RemoveAttr(absl::string_view name);
  // All subgraphs of all attributes, in attribute order.
  std::vector<Graph*> Subgraphs() const;
  // The same, appended to `out` (GraphAndSubgraphs: no vector per node).
  void AppendSubgraphs(std::vector<Graph*>* out) const;
  bool has_subgraphs() const { return graph_attrs_ > 0; }

 private:
  friend class Graph;
  friend class NodeIterator;
  friend class IrTestPeer;
  Node() = default;
  // Removes this node from the use lists of its inputs, recursively for the
  // nodes of its subgraphs (so outer values forget inner uses).
  void DropAllReferences();
  void RemoveUse(int i);
  void AddUse(int i);
  // Keeps the graph's count of nodes with subgraphs after an attribute
  // change (had_subgraphs: has_subgraphs() before it; graphs_changed: a
  // subgraph attribute was set or removed, which SubgraphStructureVersion
  // counts while the node is linked).
  void NoteSubgraphChange(bool had_subgraphs, bool graphs_changed);

  // The list links and what passes test on every node come first, so that
  // a walk over a graph (every pass does several) can touch one cache line
  // per node instead of two.
  Node* prev_ = nullptr;
  Node* next_ = nullptr;
  Graph* graph_ = nullptr;
  bool erased_ = false;
  bool write_empty_domain_ = false;
  // How many of attrs_ hold graphs; kept so that walks over all graphs can
  // skip the (usual) graphs without control flow.
  int graph_attrs_ = 0;
  std::string op_type_;
  std::string domain_;
  std::vector<Value*> inputs_;
  std::vector<Attr> attrs_;
  std::vector<uint32_t> use_slots_;  // position of each input's Use
  std::vector<std::unique_ptr<Value>> outputs_;
  std::string name_;
  std::string doc_string_;
};

// Iteration over a graph's live nodes that survives erasure of the current
// node (an erased node keeps its link to where it was).
class NodeIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = Node*;
  using difference_type = std::ptrdiff_t;
  using pointer = Node**;
  using reference = Node*;

  NodeIterator(Node* node, bool reverse) : node_(node), reverse_(reverse) {}
  Node* operator*() const { return node_; }
  NodeIterator& operator++();
  NodeIterator operator++(int) {
    NodeIterator old = *this;
    ++*this;
    return old;
  }
  friend bool operator==(const NodeIterator& a, const NodeIterator& b) {
    return a.node_ == b.node_;
  }
  friend bool operator!=(const NodeIterator& a, const NodeIterator& b) {
    return a.node_ != b.node_;
  }

 private:
  Node* node_;
  bool reverse_;
};

class NodeRange {
 public:
  NodeRange(Node* first, bool reverse) : first_(first), reverse_(reverse) {}
  NodeIterator begin() const { return NodeIterator(first_, reverse_); }
  NodeIterator end() const { return NodeIterator(nullptr, reverse_); }

 private:
  Node* first_;
  bool reverse_;
};

class Graph {
 public:
  explicit Graph(std::string name = "");
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const std::string& doc_string() const { return doc_string_; }
  void set_doc_string(std::string d) { doc_string_ = std::move(d); }

  // The node whose attribute owns this graph (nullptr for a main graph or
  // function body), and the graph at the top of the nesting.
  Node* parent_node() const { return parent_node_; }
  Graph* parent_graph() const;
  Graph* root();

  // ---- inputs ----
  Value* AddInput(std::string name, std::optional<Type> type = std::nullopt);
  const std::vector<Value*>& inputs() const { return inputs_; }
  // Removes an unused input (refuses if it has uses or is an initializer).
  absl::Status RemoveInput(Value* input);

  // ---- outputs ----
  void AddOutput(Value* value);
  void SetOutput(int i, Value* value);
  void ClearOutputs();
  const std::vector<Value*>& outputs() const { return outputs_; }

  // ---- initializers (ordered, keyed by name) ----
  // Adds a named constant; fails if the name is already an initializer.
  absl::StatusOr<Value*> AddInitializer(std::string name, Tensor tensor);
  absl::StatusOr<Value*> AddInitializer(std::string name,
                                        std::shared_ptr<Tensor> tensor);
  // Makes an existing graph input also an initializer (its default value).
  absl::Status SetInputDefault(Value* input, std::shared_ptr<Tensor> tensor);
  Value* initializer(absl::string_view name) const;
  // In insertion order (erased entries removed).
  std::vector<Value*> initializers() const;
  size_t num_initializers() const { return initializer_index_.size(); }
  // Removes an initializer. Refuses if it still has uses or is a graph
  // output; an initializer that is also a graph input stays an input.
  absl::Status RemoveInitializer(Value* value);
  // Removes every initializer for which `remove` returns true, with the
  // same refusals (one refusal removes nothing), in one sweep
  // (RemoveInitializer one at a time rebuilds the name index as holes
  // accumulate). `remove` must depend on the value alone: it is asked twice.
  // Returns how many it removed.
  absl::StatusOr<size_t> RemoveInitializersIf(
      absl::FunctionRef<bool(const Value*)> remove);

  // ---- nodes ----
  NodeRange nodes() const { return NodeRange(FirstLive(head_), false); }
  NodeRange nodes_reversed() const { return NodeRange(LastLive(tail_), true); }
  size_t num_nodes() const { return num_nodes_; }
  // How many of the nodes have subgraphs (Node::has_subgraphs).
  size_t num_subgraph_nodes() const { return num_subgraph_nodes_; }
  Node* first_node() const { return FirstLive(head_); }
  Node* last_node() const { return LastLive(tail_); }
  // Inserts a detached node; returns it. `anchor` must be a live node of
  // this graph.
  Node* Append(std::unique_ptr<Node> node);
  Node* InsertBefore(Node* anchor, std::unique_ptr<Node> node);
  Node* InsertAfter(Node* anchor, std::unique_ptr<Node> node);
  // Convenience: creates and appends a node whose outputs get fresh names
  // derived from `op_type` where `output_names` leaves them empty.
  Node* AddNode(absl::string_view op_type, absl::Span<Value* const> inputs,
                int num_outputs = 1, std::vector<Attr> attrs = {},
                absl::string_view domain = "");
  // Moves a live node of this graph before/after another one.
  void MoveBefore(Node* node, Node* anchor);
  void MoveAfter(Node* node, Node* anchor);
  // Unlinks `node` and drops its input edges. Refuses while any output is
  // used or is a graph output, unless `force`, which then detaches those
  // consumers (their inputs become absent) and graph outputs.
  absl::Status Erase(Node* node, bool force = false);
  // Frees erased nodes (never call while iterating this graph).
  void ReleaseErasedNodes();
  // Rebuilds the node list in the given order (a permutation of the live
  // nodes), in O(n).
  void Reorder(absl::Span<Node* const> order);

  // A name not used by any value in the root graph and its subgraphs:
  // `prefix`, else `prefix_1`, `prefix_2`, ... The first call scans the whole
  // root (O(n)); later values added through this API are noted as they come.
  std::string FreshName(absl::string_view prefix);
  // Gives fresh names to the empty-named outputs of `node`.
  void NameOutputs(Node* node, absl::string_view prefix);

  // Sparse initializers are carried through unchanged.
  std::vector<SparseTensor>& sparse_initializers() {
    return sparse_initializers_;
  }
  const std::vector<SparseTensor>& sparse_initializers() const {
    return sparse_initializers_;
  }

 private:
  friend class Node;
  friend class Value;
  static Node* FirstLive(Node* n) { return n; }
  static Node* LastLive(Node* n) { return n; }
  void Link(Node* node, Node* before);  // before == nullptr: append
  void Unlink(Node* node);
  Value* NewOwnedValue(std::string name);
  void FreeOwnedValue(Value* value);
  absl::Status CheckRemovableInitializer(const Value* value) const;
  // Clears an initializer's constant and frees it unless it is an input.
  void DropInitializer(Value* value);
  // Drops the holes of initializer_order_ and reindexes.
  void CompactInitializers();
  void NoteName(const std::string& name);
  void NoteNamesIn(Node* node);
  void CollectNames(absl::flat_hash_set<std::string>* names) const;
  void DropAllReferences();

  std::string name_;
  std::string doc_string_;
  Node* parent_node_ = nullptr;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<Value*> initializer_order_;  // may hold nullptr holes
  absl::flat_hash_map<std::string, size_t> initializer_index_;
  std::vector<std::unique_ptr<Value>> owned_values_;
  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  size_t num_nodes_ = 0;
  // Linked nodes with subgraphs (Node::has_subgraphs): GraphAndSubgraphs
  // walks only graphs where this is non-zero. Passes walk every graph after
  // every step, and a walk of 100k nodes is ~10 ms.
  size_t num_subgraph_nodes_ = 0;
  std::vector<std::unique_ptr<Node>> erased_nodes_;
  std::vector<SparseTensor> sparse_initializers_;
  // Fresh-name state, used on root graphs only.
  bool names_built_ = false;
  absl::flat_hash_set<std::string> names_;
  absl::flat_hash_map<std::string, int64_t> name_counters_;
};

// Points input `i` of `node` at `value`.
inline void ReplaceInputWith(Node* node, int i, Value* value) {
  node->ReplaceInputWith(i, value);
}
// Makes every use of `old_value` (node inputs, in any graph, and graph
// outputs) refer to `new_value` instead. Returns the number of node uses
// moved.
size_t ReplaceAllUsesWith(Value* old_value, Value* new_value);

struct OpsetImport {
  std::string domain;
  int64_t version = 0;
  // Serialization hint: leave out an empty domain field (older models).
  bool omit_empty_domain = false;
  friend bool operator==(const OpsetImport& a, const OpsetImport& b) {
    return a.domain == b.domain && a.version == b.version;
  }
};

// A model-local function: a body graph whose inputs/outputs are the
// function's formal parameters (usually untyped), plus the names of the
// attributes it accepts.
class Function {
 public:
  Function(std::string domain, std::string name);

  const std::string& domain() const { return domain_; }
  const std::string& name() const { return name_; }
  const std::string& doc_string() const { return doc_string_; }
  void set_doc_string(std::string d) { doc_string_ = std::move(d); }
  Graph& body() { return *body_; }
  const Graph& body() const { return *body_; }
  std::vector<std::string>& attributes() { return attributes_; }
  const std::vector<std::string>& attributes() const { return attributes_; }
  std::vector<OpsetImport>& opset_imports() { return opset_imports_; }
  const std::vector<OpsetImport>& opset_imports() const {
    return opset_imports_;
  }

 private:
  std::string domain_;
  std::string name_;
  std::string doc_string_;
  std::unique_ptr<Graph> body_;
  std::vector<std::string> attributes_;
  std::vector<OpsetImport> opset_imports_;
};

class Model {
 public:
  Model();
  explicit Model(std::unique_ptr<Graph> graph);

  int64_t ir_version() const { return ir_version_; }
  void set_ir_version(int64_t v) { ir_version_ = v; }
  std::vector<OpsetImport>& opset_imports() { return opset_imports_; }
  const std::vector<OpsetImport>& opset_imports() const {
    return opset_imports_;
  }
  // The imported version of `domain` ("" = ai.onnx), nullopt if absent.
  std::optional<int64_t> OpsetVersion(absl::string_view domain) const;
  // Sets (or adds) the imported version of `domain`.
  void SetOpsetVersion(absl::string_view domain, int64_t version);

  const std::string& producer_name() const { return producer_name_; }
  void set_producer_name(std::string s) { producer_name_ = std::move(s); }
  const std::string& producer_version() const { return producer_version_; }
  void set_producer_version(std::string s) { producer_version_ = std::move(s); }
  const std::string& domain() const { return domain_; }
  void set_domain(std::string s) { domain_ = std::move(s); }
  int64_t model_version() const { return model_version_; }
  void set_model_version(int64_t v) { model_version_ = v; }
  const std::string& doc_string() const { return doc_string_; }
  void set_doc_string(std::string d) { doc_string_ = std::move(d); }
  std::vector<std::pair<std::string, std::string>>& metadata_props() {
    return metadata_props_;
  }
  const std::vector<std::pair<std::string, std::string>>& metadata_props()
      const {
    return metadata_props_;
  }

  Graph& graph() { return *graph_; }
  const Graph& graph() const { return *graph_; }

  // Functions keyed by (domain, name), kept in insertion order.
  absl::StatusOr<Function*> AddFunction(std::unique_ptr<Function> function);
  Function* FindFunction(absl::string_view domain,
                         absl::string_view name) const;
  bool RemoveFunction(absl::string_view domain, absl::string_view name);
  std::vector<Function*> functions() const;

 private:
  int64_t ir_version_ = 0;
  std::vector<OpsetImport> opset_imports_;
  std::string producer_name_;
  std::string producer_version_;
  std::string domain_;
  int64_t model_version_ = 0;
  std::string doc_string_;
  std::vector<std::pair<std::string, std::string>> metadata_props_;
  std::unique_ptr<Graph> graph_;
  std::vector<std::unique_ptr<Function>> functions_;
  absl::flat_hash_map<std::pair<std::string, std::string>, size_t>
      function_index_;
  // AllGraphs(*this) as of SubgraphStructureVersion() ==
  // all_graphs_version_ (ir/pass_manager.cc): passes ask for it after every
  // step, and walking 100k nodes for it is ~10 ms.
  std::vector<Graph*> all_graphs_;
  uint64_t all_graphs_version_ = ~uint64_t{0};
  friend std::vector<Graph*> AllGraphs(Model& model);
};

// A counter that changes whenever the set or order of subgraphs of any
// graph may have changed: a node with subgraphs linked into or unlinked
// from a graph, nodes with subgraphs reordered, a subgraph attribute set on
// or removed from a linked node. Process-wide (a change in
// one model only makes another model's cached graph list rebuild).
uint64_t SubgraphStructureVersion();

// Every graph reachable from `graph` (itself first, then subgraphs depth
// first in node and attribute order).
std::vector<Graph*> GraphAndSubgraphs(Graph* graph);
std::vector<const Graph*> GraphAndSubgraphs(const Graph* graph);

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_IR_H_
