// slices-to-split: static Slices of one value along one axis become one
// Split. An unrolled Python loop over the elements of an array (`x[i]` for
// every i, a 10,000-term sum) prints one `slice` per element; ONNX Runtime
// takes time superlinear in the number of nodes to create a session for
// such a graph (docs/performance.md), and one Split with 10,000 outputs
// loads in linear time. Exact: Split copies the same elements each Slice
// copied, in the same order; slices that repeat a range keep their Slice.
//
// A group is the Slices (in one graph) of the same data value whose
// starts/ends/axes/steps are constants, with steps 1, that cut exactly one
// axis of static size (every other listed axis taken whole: start 0 and
// end >= its size or INT64_MAX). Their ranges, normalized as ONNX does
// (negative + size, clamped to [0, size]), must be non-empty and pairwise
// disjoint. The Split covers the whole axis: the gaps between the ranges
// become outputs nobody reads. Each Slice output's name moves to its Split
// output (graph output names survive); the Slices are left for
// dead-node-elimination. Over 64 pieces the Split is two levels deep
// (about sqrt(n) outputs per node): ONNX Runtime's session creation is
// quadratic in the outputs of one node.
//
// Refuses (keeps the Slices): fewer than two ranges; overlapping ranges;
// ranges covering less than half the axis (a Split would copy more than
// the Slices did); steps other than 1; non-constant starts/ends/axes/steps;
// a data value without a known rank or with the cut axis of unknown size;
// the attribute form of Slice (opset < 10) and opsets < 11 (no Split with
// uneven sizes).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/passes/passes.h"
#include "ir/passes/rewrite_util.h"

namespace jax2onnx::ir {
namespace {

struct Cut {
  Node* slice;
  int64_t begin;  // in [0, size)
  int64_t end;    // in (begin, size]
};

// The axis and range a Slice cuts, when it is a candidate (see the top
// comment).
std::optional<std::pair<int64_t, Cut>> AsCut(Node* slice) {
  if (!IsOp(slice, "Slice") || slice->num_inputs() < 3 ||
      slice->num_outputs() != 1 || slice->input(0) == nullptr ||
      slice->input(1) == nullptr || slice->input(2) == nullptr) {
    return std::nullopt;
  }
  const Shape* shape = slice->input(0)->shape();
  if (shape == nullptr) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(shape->rank());
  std::optional<std::vector<int64_t>> starts = ConstInts(slice->input(1));
  std::optional<std::vector<int64_t>> ends = ConstInts(slice->input(2));
  if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
  std::vector<int64_t> axes;
  if (slice->num_inputs() > 3 && slice->input(3) != nullptr) {
    std::optional<std::vector<int64_t>> a = ConstInts(slice->input(3));
    if (!a) return std::nullopt;
    axes = *std::move(a);
  } else {
    for (int64_t i = 0; i < static_cast<int64_t>(starts->size()); ++i) {
      axes.push_back(i);
    }
  }
  if (axes.size() != starts->size()) return std::nullopt;
  if (slice->num_inputs() > 4 && slice->input(4) != nullptr) {
    std::optional<std::vector<int64_t>> steps = ConstInts(slice->input(4));
    if (!steps || steps->size() != axes.size()) return std::nullopt;
    for (int64_t s : *steps) {
      if (s != 1) return std::nullopt;
    }
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::optional<std::pair<int64_t, Cut>> cut;
  absl::flat_hash_set<int64_t> seen;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank || !seen.insert(axis).second) {
      return std::nullopt;
    }
    const Dim& dim = (*shape)[axis];
    const int64_t begin = (*starts)[i], end = (*ends)[i];
    if (begin == 0 && (end == kMax || (dim.is_value() && end >= dim.value()))) {
      continue;  // the whole axis
    }
    if (!dim.is_value() || cut.has_value()) return std::nullopt;
    const int64_t size = dim.value();
    auto clamp = [size](int64_t x) {
      if (x < 0) x += size;
      return std::clamp<int64_t>(x, 0, size);
    };
    const int64_t b = clamp(begin), e = clamp(end);
    if (b >= e) return std::nullopt;
    cut = std::make_pair(axis, Cut{slice, b, e});
  }
  return cut;
}

// ONNX Runtime's session creation takes time quadratic in the number of
// outputs of one node (a Split into 10,000 pieces: ~20 s before any graph
// optimization, docs/performance.md); more pieces than this are split in
// two levels of about sqrt(n) outputs each.
constexpr int64_t kMaxSplitOutputs = 64;

// Inserts Split(input) along `axis` into pieces of `sizes` named `names`
// before `anchor`, with their types set; returns the pieces.
std::vector<Value*> EmitSplit(Graph& graph, Node* anchor, Value* input,
                              int64_t axis, const std::vector<int64_t>& sizes,
                              std::vector<std::string> names, int opset) {
  std::vector<Value*> inputs = {input};
  std::vector<Attr> attrs;
  attrs.push_back(Attr::Int("axis", axis));
  if (opset >= 13) {
    inputs.push_back(AddI64Initializer(&graph, "split_sizes", sizes));
  } else {
    attrs.push_back(Attr::Ints("split", sizes));
  }
  Node* split = graph.InsertBefore(
      anchor, Node::Create("", "Split", inputs, std::move(names),
                           std::move(attrs), DerivedNodeName(anchor, "Split")));
  split->set_doc_string(anchor->doc_string());
  std::vector<Value*> pieces;
  for (size_t i = 0; i < sizes.size(); ++i) {
    Value* piece = split->output(static_cast<int>(i));
    Shape piece_shape = *input->shape();
    piece_shape[axis] = Dim(sizes[i]);
    piece->SetType(Type::Tensor(input->dtype(), std::move(piece_shape)));
    pieces.push_back(piece);
  }
  return pieces;
}

// Replaces the Slices of one group by a Split; false when refused.
bool SplitGroup(Graph& graph, Value* data, int64_t axis, std::vector<Cut> cuts,
                int opset) {
  std::stable_sort(cuts.begin(), cuts.end(), [](const Cut& a, const Cut& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  // Repeated ranges keep their Slice (one value cannot carry two names).
  std::vector<Cut> distinct;
  for (const Cut& c : cuts) {
    if (!distinct.empty() && distinct.back().begin == c.begin &&
        distinct.back().end == c.end) {
      continue;
    }
    distinct.push_back(c);
  }
  if (distinct.size() < 2) return false;
  const int64_t size = (*data->shape())[axis].value();
  int64_t covered = 0;
  for (size_t i = 0; i < distinct.size(); ++i) {
    if (i > 0 && distinct[i].begin < distinct[i - 1].end) return false;
    covered += distinct[i].end - distinct[i].begin;
  }
  if (2 * covered < size) return false;

  // The pieces, gaps included, in order along the axis.
  std::vector<int64_t> sizes;
  std::vector<const Cut*> piece_cut;  // nullptr for a gap
  int64_t cursor = 0;
  for (const Cut& c : distinct) {
    if (c.begin > cursor) {
      sizes.push_back(c.begin - cursor);
      piece_cut.push_back(nullptr);
    }
    sizes.push_back(c.end - c.begin);
    piece_cut.push_back(&c);
    cursor = c.end;
  }
  if (cursor < size) {
    sizes.push_back(size - cursor);
    piece_cut.push_back(nullptr);
  }

  // Before the first Slice of the group in graph order: after `data` and
  // before every reader of a piece.
  Node* anchor = nullptr;
  absl::flat_hash_set<Node*> members;
  for (const Cut& c : distinct) members.insert(c.slice);
  for (Node* n : graph.nodes()) {
    if (members.contains(n)) {
      anchor = n;
      break;
    }
  }
  Graph* root = graph.root();
  std::vector<std::string> names;
  for (const Cut* c : piece_cut) {
    names.push_back(root->FreshName(
        c == nullptr ? "split_gap" : c->slice->output(0)->name() + "_split"));
  }
  const int64_t num_pieces = static_cast<int64_t>(sizes.size());
  std::vector<Value*> pieces;
  if (num_pieces <= kMaxSplitOutputs) {
    pieces =
        EmitSplit(graph, anchor, data, axis, sizes, std::move(names), opset);
  } else {
    // Two levels: consecutive groups of about sqrt(n) pieces, then each
    // group split into its pieces (a group of one piece is that piece).
    const int64_t group = static_cast<int64_t>(
        std::ceil(std::sqrt(static_cast<double>(num_pieces))));
    std::vector<int64_t> group_sizes;
    std::vector<std::string> group_names;
    for (int64_t first = 0; first < num_pieces; first += group) {
      const int64_t last = std::min(num_pieces, first + group);
      int64_t total = 0;
      for (int64_t i = first; i < last; ++i) total += sizes[i];
      group_sizes.push_back(total);
      group_names.push_back(last - first == 1 ? names[first]
                                              : root->FreshName("split_group"));
    }
    std::vector<Value*> groups =
        EmitSplit(graph, anchor, data, axis, group_sizes, group_names, opset);
    for (size_t g = 0; g < groups.size(); ++g) {
      const int64_t first = static_cast<int64_t>(g) * group;
      const int64_t last = std::min(num_pieces, first + group);
      if (last - first == 1) {
        pieces.push_back(groups[g]);
        continue;
      }
      std::vector<Value*> inner = EmitSplit(
          graph, anchor, groups[g], axis,
          std::vector<int64_t>(sizes.begin() + first, sizes.begin() + last),
          std::vector<std::string>(names.begin() + first, names.begin() + last),
          opset);
      pieces.insert(pieces.end(), inner.begin(), inner.end());
    }
  }
  for (size_t i = 0; i < piece_cut.size(); ++i) {
    Value* piece = pieces[i];
    if (piece_cut[i] == nullptr) continue;
    Value* old = piece_cut[i]->slice->output(0);
    // The piece takes the Slice output's name (a graph output keeps its
    // name); the Slice output gets the piece's fresh one.
    std::string name = old->name();
    old->SetName(piece->name());
    piece->SetName(std::move(name));
    ReplaceAllUsesWith(old, piece);
  }
  return true;
}

class SlicesToSplit : public Pass {
 public:
  absl::string_view name() const override { return "slices-to-split"; }
  std::vector<absl::string_view> AnchorOps() const override {
    return {"Slice"};
  }
  absl::StatusOr<bool> Run(Model& model) override {
    std::optional<int64_t> opset = model.OpsetVersion("");
    if (!opset.has_value() || *opset < 11) return false;
    bool changed = false;
    for (Graph* g : AllGraphs(model)) {
      // Groups keyed by (data, axis), in the order of their first Slice.
      absl::flat_hash_map<std::pair<Value*, int64_t>, size_t> index;
      std::vector<std::pair<std::pair<Value*, int64_t>, std::vector<Cut>>>
          groups;
      for (Node* n : g->nodes()) {
        if (!IsOp(n, "Slice")) continue;
        std::optional<std::pair<int64_t, Cut>> cut = AsCut(n);
        if (!cut.has_value()) continue;
        const std::pair<Value*, int64_t> key(n->input(0), cut->first);
        auto [it, inserted] = index.emplace(key, groups.size());
        if (inserted) groups.push_back({key, {}});
        groups[it->second].second.push_back(cut->second);
      }
      for (auto& [key, cuts] : groups) {
        if (cuts.size() < 2) continue;
        changed |= SplitGroup(*g, key.first, key.second, std::move(cuts),
                              static_cast<int>(*opset));
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateSlicesToSplitPass() {
  return std::make_unique<SlicesToSplit>();
}

}  // namespace jax2onnx::ir
