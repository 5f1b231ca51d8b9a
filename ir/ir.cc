// Core IR operations: use-list maintenance, node list editing, ownership.
#include "ir/ir.h"

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "ir/object_pool.h"
#include "jaxpr/status_macros.h"

namespace jax2onnx::ir {
namespace {

std::string Describe(const Node* node) {
  return absl::StrCat("node '", node->name(), "' (", node->op_type(), ")");
}

std::atomic<uint64_t> subgraph_structure_version{0};

void BumpSubgraphStructureVersion() {
  subgraph_structure_version.fetch_add(1, std::memory_order_relaxed);
}

void EraseOne(std::vector<Graph*>* v, Graph* g) {
  auto it = std::find(v->begin(), v->end(), g);
  CHECK(it != v->end());
  v->erase(it);
}

}  // namespace

uint64_t SubgraphStructureVersion() {
  return subgraph_structure_version.load(std::memory_order_relaxed);
}

// ---------------------------------------------------------------- Value

void Value::SetName(std::string name) {
  name_ = std::move(name);
  if (Graph* g = graph()) g->root()->NoteName(name_);
}

Graph* Value::graph() const {
  return producer_ != nullptr ? producer_->graph() : owner_;
}

int Value::dtype() const {
  if (!type_ || !type_->is_tensor()) return onnx::TensorProto::UNDEFINED;
  return type_->elem_type();
}

const Shape* Value::shape() const {
  if (!type_ || !type_->is_tensor() || !type_->shape()) return nullptr;
  return &*type_->shape();
}

void Value::SetDtype(int dtype) {
  if (!type_ || !type_->is_tensor()) {
    type_ = Type::Tensor(dtype);
  } else {
    type_->set_elem_type(dtype);
  }
}

void Value::SetShape(std::optional<Shape> shape) {
  if (!type_ || !type_->is_tensor()) {
    type_ = Type::Tensor(onnx::TensorProto::UNDEFINED, std::move(shape));
  } else {
    type_->mutable_shape() = std::move(shape);
  }
}

std::vector<Node*> Value::Consumers() const {
  std::vector<Node*> out;
  absl::flat_hash_set<Node*> seen;
  for (const Use& u : uses_) {
    if (seen.insert(u.node).second) out.push_back(u.node);
  }
  return out;
}

// ---------------------------------------------------------------- Node

namespace {

using NodePool = internal::ObjectPool<internal::PoolBlockSize(sizeof(Node))>;
using ValuePool = internal::ObjectPool<internal::PoolBlockSize(sizeof(Value))>;

NodePool& Nodes() {
  static NodePool* pool = new NodePool();
  return *pool;
}

ValuePool& Values() {
  static ValuePool* pool = new ValuePool();
  return *pool;
}

}  // namespace

void* Node::operator new(size_t size) {
  CHECK_EQ(size, sizeof(Node));
  return Nodes().Allocate();
}

void Node::operator delete(void* p) {
  if (p != nullptr) Nodes().Free(p);
}

void* Value::operator new(size_t size) {
  CHECK_EQ(size, sizeof(Value));
  return Values().Allocate();
}

void Value::operator delete(void* p) {
  if (p != nullptr) Values().Free(p);
}

std::unique_ptr<Node> Node::Create(absl::string_view domain,
                                   absl::string_view op_type,
                                   absl::Span<Value* const> inputs,
                                   std::vector<std::string> output_names,
                                   std::vector<Attr> attrs,
                                   absl::string_view name) {
  std::unique_ptr<Node> node(new Node());
  node->domain_ = std::string(domain);
  node->op_type_ = std::string(op_type);
  node->name_ = std::string(name);
  node->inputs_.reserve(inputs.size());
  node->use_slots_.reserve(inputs.size());
  for (Value* v : inputs) node->AppendInput(v);
  node->outputs_.reserve(output_names.size());
  for (std::string& out : output_names) node->AppendOutput(std::move(out));
  node->attrs_.reserve(attrs.size());
  for (Attr& a : attrs) node->SetAttr(std::move(a));
  return node;
}

Node::~Node() {
  DropAllReferences();
  // A detached node destroyed while its outputs are still consumed: leave
  // the consumers with absent inputs rather than dangling pointers.
  for (auto& out : outputs_) {
    for (const Use& u : out->uses_) {
      u.node->inputs_[u.input_index] = nullptr;
    }
    out->uses_.clear();
    for (Graph* g : std::vector<Graph*>(out->output_of_)) {
      auto& outs = g->outputs_;
      outs.erase(std::remove(outs.begin(), outs.end(), out.get()), outs.end());
    }
  }
}

Node* Node::prev() const { return erased_ ? nullptr : prev_; }
Node* Node::next() const { return erased_ ? nullptr : next_; }

void Node::AddUse(int i) {
  Value* v = inputs_[i];
  use_slots_[i] = static_cast<uint32_t>(v->uses_.size());
  v->uses_.push_back(Use{this, i});
}

void Node::RemoveUse(int i) {
  Value* v = inputs_[i];
  uint32_t slot = use_slots_[i];
  DCHECK_LT(slot, v->uses_.size());
  DCHECK(v->uses_[slot] == (Use{this, i}));
  Use last = v->uses_.back();
  v->uses_[slot] = last;
  last.node->use_slots_[last.input_index] = slot;
  v->uses_.pop_back();
}

void Node::AppendInput(Value* value) {
  inputs_.push_back(value);
  use_slots_.push_back(0);
  if (value != nullptr) AddUse(static_cast<int>(inputs_.size()) - 1);
}

void Node::ReplaceInputWith(int i, Value* value) {
  CHECK_GE(i, 0);
  CHECK_LT(i, num_inputs());
  if (inputs_[i] == value) return;
  if (inputs_[i] != nullptr) RemoveUse(i);
  inputs_[i] = value;
  if (value != nullptr) AddUse(i);
}

void Node::TruncateInputs(int n) {
  CHECK_GE(n, 0);
  while (num_inputs() > n) {
    int last = num_inputs() - 1;
    if (inputs_[last] != nullptr) RemoveUse(last);
    inputs_.pop_back();
    use_slots_.pop_back();
  }
}

std::vector<Value*> Node::outputs() const {
  std::vector<Value*> out;
  out.reserve(outputs_.size());
  for (const auto& v : outputs_) out.push_back(v.get());
  return out;
}

Value* Node::AppendOutput(std::string name) {
  std::unique_ptr<Value> v(new Value(std::move(name)));
  v->producer_ = this;
  v->output_index_ = static_cast<int>(outputs_.size());
  outputs_.push_back(std::move(v));
  Value* out = outputs_.back().get();
  if (graph_ != nullptr && !out->name_.empty()) {
    graph_->root()->NoteName(out->name_);
  }
  return out;
}

const Attr* Node::attr(absl::string_view name) const {
  for (const Attr& a : attrs_) {
    if (a.name_ == name) return &a;
  }
  return nullptr;
}

void Node::SetAttr(Attr attr) {
  for (Graph* g : attr.Subgraphs()) {
    CHECK(g->parent_node_ == nullptr || g->parent_node_ == this)
        << "subgraph '" << g->name() << "' already belongs to another node";
    g->parent_node_ = this;
  }
  if (graph_ != nullptr) {
    Graph* root = graph_->root();
    for (Graph* g : attr.Subgraphs()) {
      if (root->names_built_) g->CollectNames(&root->names_);
    }
  }
  const bool had_subgraphs = has_subgraphs();
  const bool adds_graphs = attr.holds_graphs();
  bool replaced = false;
  bool drops_graphs = false;
  for (Attr& a : attrs_) {
    if (a.name_ == attr.name_) {
      drops_graphs = a.holds_graphs();
      graph_attrs_ -= drops_graphs ? 1 : 0;
      a = std::move(attr);
      replaced = true;
      break;
    }
  }
  if (!replaced) attrs_.push_back(std::move(attr));
  graph_attrs_ += adds_graphs ? 1 : 0;
  NoteSubgraphChange(had_subgraphs, adds_graphs || drops_graphs);
}

bool Node::RemoveAttr(absl::string_view name) {
  for (auto it = attrs_.begin(); it != attrs_.end(); ++it) {
    if (it->name_ == name) {
      const bool had_subgraphs = has_subgraphs();
      const bool drops_graphs = it->holds_graphs();
      graph_attrs_ -= drops_graphs ? 1 : 0;
      attrs_.erase(it);
      NoteSubgraphChange(had_subgraphs, drops_graphs);
      return true;
    }
  }
  return false;
}

void Node::NoteSubgraphChange(bool had_subgraphs, bool graphs_changed) {
  if (graph_ == nullptr || erased_) return;
  if (graphs_changed) BumpSubgraphStructureVersion();
  if (had_subgraphs == has_subgraphs()) return;
  if (has_subgraphs()) {
    ++graph_->num_subgraph_nodes_;
  } else {
    --graph_->num_subgraph_nodes_;
  }
}

std::vector<Graph*> Node::Subgraphs() const {
  std::vector<Graph*> out;
  AppendSubgraphs(&out);
  return out;
}

void Node::AppendSubgraphs(std::vector<Graph*>* out) const {
  if (!has_subgraphs()) return;
  for (const Attr& a : attrs_) a.AppendSubgraphs(out);
}

void Node::DropAllReferences() {
  for (int i = 0; i < num_inputs(); ++i) {
    if (inputs_[i] != nullptr) {
      RemoveUse(i);
      inputs_[i] = nullptr;
    }
  }
  for (Graph* g : Subgraphs()) g->DropAllReferences();
}

// ---------------------------------------------------------------- iteration

NodeIterator& NodeIterator::operator++() {
  do {
    node_ = reverse_ ? node_->prev_ : node_->next_;
  } while (node_ != nullptr && node_->erased_);
  return *this;
}

// ---------------------------------------------------------------- Graph

Graph::Graph(std::string name) : name_(std::move(name)) {}

Graph::~Graph() {
  DropAllReferences();
  for (Node* n = head_; n != nullptr;) {
    Node* next = n->next_;
    delete n;
    n = next;
  }
  head_ = tail_ = nullptr;
}

void Graph::DropAllReferences() {
  ClearOutputs();
  for (Node* n = head_; n != nullptr; n = n->next_) n->DropAllReferences();
}

Graph* Graph::parent_graph() const {
  return parent_node_ != nullptr ? parent_node_->graph() : nullptr;
}

Graph* Graph::root() {
  Graph* g = this;
  while (g->parent_node_ != nullptr && g->parent_node_->graph_ != nullptr) {
    g = g->parent_node_->graph_;
  }
  return g;
}

Value* Graph::NewOwnedValue(std::string name) {
  std::unique_ptr<Value> v(new Value(std::move(name)));
  v->owner_ = this;
  v->owner_slot_ = static_cast<uint32_t>(owned_values_.size());
  owned_values_.push_back(std::move(v));
  Value* out = owned_values_.back().get();
  if (!out->name_.empty()) root()->NoteName(out->name_);
  return out;
}

void Graph::FreeOwnedValue(Value* value) {
  CHECK(value->owner_ == this);
  uint32_t slot = value->owner_slot_;
  std::unique_ptr<Value> dead = std::move(owned_values_[slot]);
  if (slot + 1 != owned_values_.size()) {
    owned_values_[slot] = std::move(owned_values_.back());
    owned_values_[slot]->owner_slot_ = slot;
  }
  owned_values_.pop_back();
}

Value* Graph::AddInput(std::string name, std::optional<Type> type) {
  Value* v = NewOwnedValue(std::move(name));
  v->is_graph_input_ = true;
  v->type_ = std::move(type);
  inputs_.push_back(v);
  return v;
}

absl::Status Graph::RemoveInput(Value* input) {
  auto it = std::find(inputs_.begin(), inputs_.end(), input);
  if (it == inputs_.end()) {
    return absl::NotFoundError(absl::StrCat(
        "graph '", name_, "': '", input->name(), "' is not one of its inputs"));
  }
  if (input->num_uses() > 0 || input->is_graph_output() ||
      input->is_initializer_) {
    return absl::FailedPreconditionError(
        absl::StrCat("graph '", name_, "': input '", input->name(),
                     "' is still used, an output or an initializer"));
  }
  inputs_.erase(it);
  FreeOwnedValue(input);
  return absl::OkStatus();
}

void Graph::AddOutput(Value* value) {
  CHECK(value != nullptr);
  outputs_.push_back(value);
  value->output_of_.push_back(this);
}

void Graph::SetOutput(int i, Value* value) {
  CHECK(value != nullptr);
  CHECK_LT(static_cast<size_t>(i), outputs_.size());
  EraseOne(&outputs_[i]->output_of_, this);
  outputs_[i] = value;
  value->output_of_.push_back(this);
}

void Graph::ClearOutputs() {
  for (Value* v : outputs_) EraseOne(&v->output_of_, this);
  outputs_.clear();
}

absl::StatusOr<Value*> Graph::AddInitializer(std::string name, Tensor tensor) {
  return AddInitializer(std::move(name),
                        std::make_shared<Tensor>(std::move(tensor)));
}

absl::StatusOr<Value*> Graph::AddInitializer(std::string name,
                                             std::shared_ptr<Tensor> tensor) {
  CHECK(tensor != nullptr);
  if (initializer_index_.contains(name)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "graph '", name_, "' already has an initializer named '", name, "'"));
  }
  Value* v = NewOwnedValue(name);
  std::vector<Dim> dims(tensor->dims().begin(), tensor->dims().end());
  v->type_ = Type::Tensor(tensor->dtype(), Shape(std::move(dims)));
  v->is_initializer_ = true;
  v->const_value_ = std::move(tensor);
  initializer_index_.emplace(std::move(name), initializer_order_.size());
  initializer_order_.push_back(v);
  return v;
}

absl::Status Graph::SetInputDefault(Value* input,
                                    std::shared_ptr<Tensor> tensor) {
  CHECK(tensor != nullptr);
  if (!input->is_graph_input_ || input->owner_ != this) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", input->name(), "' is not an input of graph '", name_, "'"));
  }
  if (input->is_initializer_ || initializer_index_.contains(input->name())) {
    return absl::AlreadyExistsError(
        absl::StrCat("graph '", name_, "' already has an initializer named '",
                     input->name(), "'"));
  }
  input->is_initializer_ = true;
  input->const_value_ = std::move(tensor);
  initializer_index_.emplace(input->name(), initializer_order_.size());
  initializer_order_.push_back(input);
  return absl::OkStatus();
}

Value* Graph::initializer(absl::string_view name) const {
  auto it = initializer_index_.find(name);
  return it == initializer_index_.end() ? nullptr
                                        : initializer_order_[it->second];
}

std::vector<Value*> Graph::initializers() const {
  std::vector<Value*> out;
  out.reserve(initializer_index_.size());
  for (Value* v : initializer_order_) {
    if (v != nullptr) out.push_back(v);
  }
  return out;
}

absl::Status Graph::CheckRemovableInitializer(const Value* value) const {
  if (value->num_uses() > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("graph '", name_, "': cannot remove initializer '",
                     value->name(), "': it has ", value->num_uses(),
                     " uses, e.g. ", Describe(value->uses()[0].node)));
  }
  if (value->is_graph_output()) {
    return absl::FailedPreconditionError(
        absl::StrCat("graph '", name_, "': cannot remove initializer '",
                     value->name(), "': it is a graph output"));
  }
  return absl::OkStatus();
}

void Graph::DropInitializer(Value* value) {
  value->is_initializer_ = false;
  value->const_value_.reset();
  if (!value->is_graph_input_) FreeOwnedValue(value);
}

void Graph::CompactInitializers() {
  std::vector<Value*> live = initializers();
  initializer_order_ = live;
  for (size_t i = 0; i < live.size(); ++i) {
    initializer_index_[live[i]->name()] = i;
  }
}

absl::Status Graph::RemoveInitializer(Value* value) {
  auto it = initializer_index_.find(value->name());
  if (it == initializer_index_.end() ||
      initializer_order_[it->second] != value) {
    return absl::NotFoundError(
        absl::StrCat("graph '", name_, "': '", value->name(),
                     "' is not one of its initializers"));
  }
  J2O_RETURN_IF_ERROR(CheckRemovableInitializer(value));
  initializer_order_[it->second] = nullptr;
  initializer_index_.erase(it);
  DropInitializer(value);
  // Compact the holes once they dominate, keeping removal amortized O(1).
  if (initializer_order_.size() > 16 &&
      initializer_index_.size() * 2 < initializer_order_.size()) {
    CompactInitializers();
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> Graph::RemoveInitializersIf(
    absl::FunctionRef<bool(const Value*)> remove) {
  // Check every candidate first, so that a refusal removes nothing.
  size_t candidates = 0;
  for (const Value* v : initializer_order_) {
    if (v == nullptr || !remove(v)) continue;
    J2O_RETURN_IF_ERROR(CheckRemovableInitializer(v));
    ++candidates;
  }
  if (candidates == 0) return 0;
  size_t kept = 0;
  for (Value* v : initializer_order_) {
    if (v == nullptr) continue;
    if (remove(v)) {
      DropInitializer(v);
    } else {
      initializer_order_[kept++] = v;
    }
  }
  initializer_order_.resize(kept);
  initializer_index_.clear();
  initializer_index_.reserve(kept);
  for (size_t i = 0; i < kept; ++i) {
    initializer_index_.emplace(initializer_order_[i]->name(), i);
  }
  return candidates;
}

void Graph::Link(Node* node, Node* before) {
  CHECK(node->graph_ == nullptr || node->graph_ == this);
  node->graph_ = this;
  node->erased_ = false;
  if (before == nullptr) {
    node->prev_ = tail_;
    node->next_ = nullptr;
    if (tail_ != nullptr) {
      tail_->next_ = node;
    } else {
      head_ = node;
    }
    tail_ = node;
  } else {
    CHECK(before->graph_ == this && !before->erased_);
    node->next_ = before;
    node->prev_ = before->prev_;
    if (before->prev_ != nullptr) {
      before->prev_->next_ = node;
    } else {
      head_ = node;
    }
    before->prev_ = node;
  }
  ++num_nodes_;
  if (node->has_subgraphs()) {
    ++num_subgraph_nodes_;
    BumpSubgraphStructureVersion();
  }
}

void Graph::Unlink(Node* node) {
  // The node keeps its own prev_/next_ so an iterator standing on it can
  // still step forward (or backward).
  if (node->prev_ != nullptr) {
    node->prev_->next_ = node->next_;
  } else {
    head_ = node->next_;
  }
  if (node->next_ != nullptr) {
    node->next_->prev_ = node->prev_;
  } else {
    tail_ = node->prev_;
  }
  --num_nodes_;
  if (node->has_subgraphs()) {
    --num_subgraph_nodes_;
    BumpSubgraphStructureVersion();
  }
}

Node* Graph::Append(std::unique_ptr<Node> node) {
  CHECK(node != nullptr && node->graph_ == nullptr);
  Node* n = node.release();
  Link(n, nullptr);
  NoteNamesIn(n);
  return n;
}

Node* Graph::InsertBefore(Node* anchor, std::unique_ptr<Node> node) {
  CHECK(node != nullptr && node->graph_ == nullptr);
  Node* n = node.release();
  Link(n, anchor);
  NoteNamesIn(n);
  return n;
}

Node* Graph::InsertAfter(Node* anchor, std::unique_ptr<Node> node) {
  CHECK(anchor->graph_ == this && !anchor->erased_);
  CHECK(node != nullptr && node->graph_ == nullptr);
  Node* n = node.release();
  Link(n, anchor->next_);
  NoteNamesIn(n);
  return n;
}

Node* Graph::AddNode(absl::string_view op_type, absl::Span<Value* const> inputs,
                     int num_outputs, std::vector<Attr> attrs,
                     absl::string_view domain) {
  Node* n = Append(Node::Create(domain, op_type, inputs,
                                std::vector<std::string>(num_outputs),
                                std::move(attrs)));
  NameOutputs(n, op_type);
  return n;
}

void Graph::MoveBefore(Node* node, Node* anchor) {
  CHECK(node->graph_ == this && !node->erased_);
  if (node == anchor) return;
  Unlink(node);
  Link(node, anchor);
}

void Graph::MoveAfter(Node* node, Node* anchor) {
  CHECK(anchor->graph_ == this && !anchor->erased_);
  if (node == anchor) return;
  CHECK(node->graph_ == this && !node->erased_);
  Unlink(node);
  Link(node, anchor->next_);
}

absl::Status Graph::Erase(Node* node, bool force) {
  CHECK(node->graph_ == this)
      << Describe(node) << " is not in graph '" << name_ << "'";
  CHECK(!node->erased_) << Describe(node) << " was already erased";
  if (!force) {
    for (int i = 0; i < node->num_outputs(); ++i) {
      Value* out = node->output(i);
      if (out->num_uses() > 0) {
        const Use& u = out->uses()[0];
        return absl::FailedPreconditionError(absl::StrCat(
            "cannot erase ", Describe(node), ": output ", i, " '", out->name(),
            "' is still used by ", Describe(u.node), " input ", u.input_index));
      }
      if (out->is_graph_output()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "cannot erase ", Describe(node), ": output ", i, " '", out->name(),
            "' is an output of graph '", out->output_of()[0]->name(), "'"));
      }
    }
  }
  for (auto& out : node->outputs_) {
    while (!out->uses_.empty()) {
      Use u = out->uses_.back();
      u.node->ReplaceInputWith(u.input_index, nullptr);
    }
    for (Graph* g : std::vector<Graph*>(out->output_of_)) {
      auto& outs = g->outputs_;
      outs.erase(std::remove(outs.begin(), outs.end(), out.get()), outs.end());
    }
    out->output_of_.clear();
  }
  node->DropAllReferences();
  Unlink(node);
  node->erased_ = true;
  erased_nodes_.emplace_back(node);
  return absl::OkStatus();
}

void Graph::ReleaseErasedNodes() { erased_nodes_.clear(); }

void Graph::Reorder(absl::Span<Node* const> order) {
  CHECK_EQ(order.size(), num_nodes_);
  Node* prev = nullptr;
  for (Node* n : order) {
    CHECK(n->graph_ == this && !n->erased_);
    n->prev_ = prev;
    if (prev != nullptr) {
      prev->next_ = n;
    } else {
      head_ = n;
    }
    prev = n;
  }
  if (prev != nullptr) prev->next_ = nullptr;
  tail_ = prev;
  // The subgraphs' order follows their nodes'.
  if (num_subgraph_nodes_ > 1) BumpSubgraphStructureVersion();
}

void Graph::NoteName(const std::string& name) {
  if (names_built_ && !name.empty()) names_.insert(name);
}

void Graph::NoteNamesIn(Node* node) {
  Graph* r = root();
  if (!r->names_built_) return;
  for (const auto& out : node->outputs_) r->NoteName(out->name_);
  for (Graph* g : node->Subgraphs()) g->CollectNames(&r->names_);
}

void Graph::CollectNames(absl::flat_hash_set<std::string>* names) const {
  for (const Graph* g : GraphAndSubgraphs(this)) {
    for (const auto& v : g->owned_values_) {
      if (!v->name_.empty()) names->insert(v->name_);
    }
    for (Node* n : g->nodes()) {
      for (const auto& out : n->outputs_) {
        if (!out->name_.empty()) names->insert(out->name_);
      }
    }
  }
}

std::string Graph::FreshName(absl::string_view prefix) {
  Graph* r = root();
  if (!r->names_built_) {
    r->CollectNames(&r->names_);
    r->names_built_ = true;
  }
  const absl::string_view base = prefix.empty() ? "v" : prefix;
  // A base with a counter is taken (names are never forgotten), so only a
  // new base is tried bare: the lowering asks for "MatMul" 25k times.
  auto counter_it = r->name_counters_.find(base);
  if (counter_it == r->name_counters_.end()) {
    auto [it, inserted] = r->names_.emplace(base);
    if (inserted) return *it;
    counter_it = r->name_counters_.emplace(base, 0).first;
  }
  int64_t& counter = counter_it->second;
  while (true) {
    std::string candidate = absl::StrCat(base, "_", ++counter);
    if (r->names_.insert(candidate).second) return candidate;
  }
}

void Graph::NameOutputs(Node* node, absl::string_view prefix) {
  for (auto& out : node->outputs_) {
    if (out->name_.empty()) out->name_ = FreshName(prefix);
  }
}

size_t ReplaceAllUsesWith(Value* old_value, Value* new_value) {
  CHECK(old_value != nullptr && new_value != nullptr);
  if (old_value == new_value) return 0;
  size_t moved = 0;
  while (!old_value->uses_.empty()) {
    Use u = old_value->uses_.back();
    u.node->ReplaceInputWith(u.input_index, new_value);
    ++moved;
  }
  std::vector<Graph*> graphs = old_value->output_of_;
  std::sort(graphs.begin(), graphs.end());
  graphs.erase(std::unique(graphs.begin(), graphs.end()), graphs.end());
  for (Graph* g : graphs) {
    for (size_t i = 0; i < g->outputs().size(); ++i) {
      if (g->outputs()[i] == old_value) {
        g->SetOutput(static_cast<int>(i), new_value);
      }
    }
  }
  return moved;
}

std::vector<Graph*> GraphAndSubgraphs(Graph* graph) {
  std::vector<Graph*> out{graph};
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i]->num_subgraph_nodes() == 0) continue;
    for (Node* n : out[i]->nodes()) n->AppendSubgraphs(&out);
  }
  return out;
}

std::vector<const Graph*> GraphAndSubgraphs(const Graph* graph) {
  std::vector<Graph*> all = GraphAndSubgraphs(const_cast<Graph*>(graph));
  return std::vector<const Graph*>(all.begin(), all.end());
}

}  // namespace jax2onnx::ir
