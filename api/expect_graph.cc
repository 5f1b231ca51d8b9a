#include "api/expect_graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace jax2onnx::api {
namespace {

using Kind = GraphExpectation::Kind;

absl::Status Malformed(absl::string_view line, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("expect_graph '", line, "': ", what));
}

bool IsOpTypeName(absl::string_view s) {
  if (s.empty() || absl::ascii_isdigit(s[0])) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '.') return false;
  }
  return true;
}

std::vector<absl::string_view> Words(absl::string_view s) {
  return absl::StrSplit(s, absl::ByAnyChar(" \t"), absl::SkipEmpty());
}

absl::StatusOr<PathStep> ParseStep(absl::string_view line,
                                   absl::string_view text) {
  PathStep step;
  text = absl::StripAsciiWhitespace(text);
  const size_t colon = text.find(':');
  const absl::string_view op =
      absl::StripAsciiWhitespace(text.substr(0, colon));
  if (!IsOpTypeName(op)) {
    return Malformed(line, absl::StrCat("'", op, "' is not an op type"));
  }
  step.op_type = std::string(op);
  if (colon == absl::string_view::npos) return step;
  step.has_shape = true;
  absl::string_view shape = absl::StripAsciiWhitespace(text.substr(colon + 1));
  if (shape == "scalar") return step;
  std::vector<absl::string_view> dims;
  if (absl::ConsumePrefix(&shape, "[")) {
    if (!absl::ConsumeSuffix(&shape, "]")) {
      return Malformed(line, absl::StrCat("shape '[", shape, "' lacks ']'"));
    }
    if (absl::StripAsciiWhitespace(shape).empty()) return step;  // `[]`
    dims = absl::StrSplit(shape, ',');
  } else {
    dims = absl::StrSplit(shape, 'x');
  }
  for (absl::string_view d : dims) {
    d = absl::StripAsciiWhitespace(d);
    if (d.empty()) {
      return Malformed(line,
                       absl::StrCat("shape of ", step.op_type,
                                    " has an empty dim (use `scalar` or `[]` "
                                    "for rank 0)"));
    }
    step.dims.emplace_back(d);
  }
  return step;
}

// Types of the main graph's values by name (inputs, outputs, value_info).
std::unordered_map<std::string, const onnx::TypeProto*> ValueTypes(
    const onnx::GraphProto& graph) {
  std::unordered_map<std::string, const onnx::TypeProto*> types;
  for (const auto& v : graph.value_info()) types[v.name()] = &v.type();
  for (const auto& v : graph.input()) types[v.name()] = &v.type();
  for (const auto& v : graph.output()) types[v.name()] = &v.type();
  return types;
}

// `Bx32x28x28`, `scalar`, `unranked` or `?` (no type recorded).
std::string ShapeText(const onnx::TypeProto* type) {
  if (type == nullptr || !type->has_tensor_type()) return "?";
  if (!type->tensor_type().has_shape()) return "unranked";
  const auto& dims = type->tensor_type().shape().dim();
  if (dims.empty()) return "scalar";
  std::vector<std::string> parts;
  for (const auto& d : dims) {
    if (d.has_dim_value()) {
      parts.push_back(absl::StrCat(d.dim_value()));
    } else if (d.has_dim_param()) {
      parts.push_back(d.dim_param());
    } else {
      parts.push_back("?");
    }
  }
  return absl::StrJoin(parts, "x");
}

bool ShapeMatches(const PathStep& step, const onnx::TypeProto* type) {
  if (!step.has_shape) return true;
  if (type == nullptr || !type->has_tensor_type() ||
      !type->tensor_type().has_shape()) {
    return false;
  }
  const auto& dims = type->tensor_type().shape().dim();
  if (dims.size() != static_cast<int>(step.dims.size())) return false;
  for (int i = 0; i < dims.size(); ++i) {
    const std::string& want = step.dims[i];
    if (want == "?") continue;
    int64_t value;
    if (absl::SimpleAtoi(want, &value)) {
      if (!dims[i].has_dim_value() || dims[i].dim_value() != value) {
        return false;
      }
    } else if (!dims[i].has_dim_param() || dims[i].dim_param() != want) {
      return false;
    }
  }
  return true;
}

std::string StepText(const PathStep& step) {
  if (!step.has_shape) return step.op_type;
  if (step.dims.empty()) return absl::StrCat(step.op_type, ":scalar");
  return absl::StrCat(step.op_type, ":", absl::StrJoin(step.dims, "x"));
}

// Finds a chain of nodes matching `path`; keeps the longest matching prefix
// and the shapes of op-type matches that failed on shape, for the message.
class PathMatcher {
 public:
  PathMatcher(const onnx::GraphProto& graph, const std::vector<PathStep>& path)
      : graph_(graph), path_(path), types_(ValueTypes(graph)) {
    for (int n = 0; n < graph.node_size(); ++n) {
      for (const std::string& in : graph.node(n).input()) {
        if (!in.empty()) consumers_[in].push_back(n);
      }
    }
  }

  bool Match() {
    for (int n = 0; n < graph_.node_size(); ++n) {
      chain_.clear();
      if (Extend(n, 0)) return true;
    }
    return false;
  }

  std::string Explain() const {
    std::string out;
    if (best_.empty()) {
      absl::StrAppend(&out, "no node matches the first step ",
                      StepText(path_[0]));
    } else {
      std::vector<std::string> found;
      for (int n : best_) {
        const onnx::NodeProto& node = graph_.node(n);
        found.push_back(
            absl::StrCat(node.op_type(), ":", ShapeText(TypeOf(node))));
      }
      absl::StrAppend(
          &out, "longest matching prefix: ", absl::StrJoin(found, " -> "));
      if (best_.size() < path_.size()) {
        std::vector<std::string> next;
        for (const std::string& output : graph_.node(best_.back()).output()) {
          auto it = consumers_.find(output);
          if (it == consumers_.end()) continue;
          for (int c : it->second) {
            next.push_back(absl::StrCat(graph_.node(c).op_type(), ":",
                                        ShapeText(TypeOf(graph_.node(c)))));
          }
        }
        absl::StrAppend(&out, "; its consumers: ",
                        next.empty() ? "none" : absl::StrJoin(next, ", "));
      }
    }
    if (!shape_misses_.empty()) {
      absl::StrAppend(
          &out, "; same op, other shape: ", absl::StrJoin(shape_misses_, ", "));
    }
    return out;
  }

 private:
  const onnx::TypeProto* TypeOf(const onnx::NodeProto& node) const {
    if (node.output_size() == 0) return nullptr;
    auto it = types_.find(node.output(0));
    return it == types_.end() ? nullptr : it->second;
  }

  bool Extend(int n, size_t step) {
    const onnx::NodeProto& node = graph_.node(n);
    if (node.op_type() != path_[step].op_type) return false;
    if (!ShapeMatches(path_[step], TypeOf(node))) {
      const std::string miss =
          absl::StrCat(node.op_type(), ":", ShapeText(TypeOf(node)));
      if (shape_misses_.size() < 4 &&
          std::find(shape_misses_.begin(), shape_misses_.end(), miss) ==
              shape_misses_.end()) {
        shape_misses_.push_back(miss);
      }
      return false;
    }
    chain_.push_back(n);
    if (chain_.size() > best_.size()) best_ = chain_;
    if (step + 1 == path_.size()) return true;
    // Each (node, step) pair fails at most once: memoizing keeps this linear.
    if (failed_.count({n, step})) {
      chain_.pop_back();
      return false;
    }
    for (const std::string& output : node.output()) {
      auto it = consumers_.find(output);
      if (it == consumers_.end()) continue;
      for (int c : it->second) {
        if (Extend(c, step + 1)) return true;
      }
    }
    failed_.insert({n, step});
    chain_.pop_back();
    return false;
  }

  const onnx::GraphProto& graph_;
  const std::vector<PathStep>& path_;
  std::unordered_map<std::string, const onnx::TypeProto*> types_;
  std::unordered_map<std::string, std::vector<int>> consumers_;
  std::set<std::pair<int, size_t>> failed_;
  std::vector<int> chain_;
  std::vector<int> best_;
  std::vector<std::string> shape_misses_;
};

std::map<std::string, int> Histogram(const onnx::GraphProto& graph) {
  std::map<std::string, int> counts;
  for (const auto& node : graph.node()) counts[node.op_type()]++;
  return counts;
}

// Every op type in the graph, its subgraphs (recursively) and `functions`.
void CollectOps(const onnx::GraphProto& graph, std::map<std::string, int>* ops);

void CollectNodeOps(const onnx::NodeProto& node,
                    std::map<std::string, int>* ops) {
  (*ops)[node.op_type()]++;
  for (const auto& attr : node.attribute()) {
    if (attr.has_g()) CollectOps(attr.g(), ops);
    for (const auto& g : attr.graphs()) CollectOps(g, ops);
  }
}

void CollectOps(const onnx::GraphProto& graph,
                std::map<std::string, int>* ops) {
  for (const auto& node : graph.node()) CollectNodeOps(node, ops);
}

// Names read by nodes of `graph` and of its subgraphs (outer-scope captures).
void CollectUses(const onnx::GraphProto& graph, std::set<std::string>* uses) {
  for (const auto& node : graph.node()) {
    for (const std::string& in : node.input()) uses->insert(in);
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) CollectUses(attr.g(), uses);
      for (const auto& g : attr.graphs()) CollectUses(g, uses);
    }
  }
}

absl::Status Failed(const GraphExpectation& e, absl::string_view why) {
  return absl::FailedPreconditionError(
      absl::StrCat("expect_graph '", e.text, "' failed: ", why));
}

}  // namespace

std::string OpHistogram(const onnx::GraphProto& graph) {
  std::vector<std::string> parts;
  for (const auto& [op, n] : Histogram(graph)) {
    parts.push_back(absl::StrCat(op, "=", n));
  }
  return parts.empty() ? "(no nodes)" : absl::StrJoin(parts, " ");
}

absl::StatusOr<GraphExpectation> ParseGraphExpectation(absl::string_view line) {
  GraphExpectation e;
  line = absl::StripAsciiWhitespace(line);
  e.text = std::string(line);
  if (line.empty()) return Malformed(line, "empty expectation");
  std::vector<absl::string_view> words = Words(line);
  const absl::string_view head = words[0];
  if (head == "no_unused_inputs") {
    if (words.size() != 1) return Malformed(line, "takes no arguments");
    e.kind = Kind::kNoUnusedInputs;
    return e;
  }
  if (head == "must_absent") {
    if (words.size() < 2) return Malformed(line, "names no op type");
    e.kind = Kind::kMustAbsent;
    for (size_t i = 1; i < words.size(); ++i) {
      if (!IsOpTypeName(words[i])) {
        return Malformed(line,
                         absl::StrCat("'", words[i], "' is not an op type"));
      }
      e.absent_ops.emplace_back(words[i]);
    }
    return e;
  }
  if (head == "counts") {
    if (words.size() < 2) return Malformed(line, "names no `Op=N`");
    e.kind = Kind::kCounts;
    for (size_t i = 1; i < words.size(); ++i) {
      std::pair<absl::string_view, absl::string_view> kv =
          absl::StrSplit(words[i], absl::MaxSplits('=', 1));
      int n;
      if (!IsOpTypeName(kv.first) || !absl::SimpleAtoi(kv.second, &n) ||
          n < 0) {
        return Malformed(
            line, absl::StrCat("'", words[i], "' is not `Op=N` with N >= 0"));
      }
      e.counts.emplace_back(std::string(kv.first), n);
    }
    return e;
  }
  absl::string_view path = line;
  if (head == "exact") {
    e.kind = Kind::kExactPath;
    path = absl::StripAsciiWhitespace(path.substr(head.size()));
    if (path.empty()) return Malformed(line, "`exact` needs a path");
  }
  for (absl::string_view step_text : absl::StrSplit(path, "->")) {
    auto step = ParseStep(line, step_text);
    if (!step.ok()) return step.status();
    e.path.push_back(*std::move(step));
  }
  return e;
}

absl::Status CheckGraphExpectation(const onnx::ModelProto& model,
                                   const GraphExpectation& e) {
  const onnx::GraphProto& graph = model.graph();
  switch (e.kind) {
    case Kind::kPath:
    case Kind::kExactPath: {
      PathMatcher matcher(graph, e.path);
      if (!matcher.Match()) {
        return Failed(e, absl::StrCat("no such path; ", matcher.Explain(),
                                      "; ops: ", OpHistogram(graph)));
      }
      if (e.kind == Kind::kExactPath &&
          graph.node_size() != static_cast<int>(e.path.size())) {
        return Failed(
            e, absl::StrCat("the path is there but the graph has ",
                            graph.node_size(), " nodes, not ", e.path.size(),
                            "; ops: ", OpHistogram(graph)));
      }
      return absl::OkStatus();
    }
    case Kind::kCounts: {
      const std::map<std::string, int> hist = Histogram(graph);
      std::vector<std::string> wrong;
      for (const auto& [op, want] : e.counts) {
        auto it = hist.find(op);
        const int got = it == hist.end() ? 0 : it->second;
        if (got != want) {
          wrong.push_back(absl::StrCat(op, "=", got, " (want ", want, ")"));
        }
      }
      if (!wrong.empty()) {
        return Failed(e, absl::StrCat("found ", absl::StrJoin(wrong, ", "),
                                      "; ops: ", OpHistogram(graph)));
      }
      return absl::OkStatus();
    }
    case Kind::kMustAbsent: {
      std::map<std::string, int> ops;
      CollectOps(graph, &ops);
      for (const auto& f : model.functions()) {
        for (const auto& node : f.node()) CollectNodeOps(node, &ops);
      }
      std::vector<std::string> present;
      for (const std::string& op : e.absent_ops) {
        auto it = ops.find(op);
        if (it != ops.end()) {
          present.push_back(absl::StrCat(op, "=", it->second));
        }
      }
      if (!present.empty()) {
        return Failed(e,
                      absl::StrCat("present (graph, subgraphs and "
                                   "functions): ",
                                   absl::StrJoin(present, ", "),
                                   "; main graph ops: ", OpHistogram(graph)));
      }
      return absl::OkStatus();
    }
    case Kind::kNoUnusedInputs: {
      std::set<std::string> uses;
      CollectUses(graph, &uses);
      for (const auto& out : graph.output()) uses.insert(out.name());
      std::vector<std::string> unused;
      for (const auto& in : graph.input()) {
        if (!uses.count(in.name())) unused.push_back(in.name());
      }
      if (!unused.empty()) {
        return Failed(e, absl::StrCat("unused graph inputs: ",
                                      absl::StrJoin(unused, ", ")));
      }
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unknown expectation kind");
}

absl::Status CheckGraphExpectations(const onnx::ModelProto& model,
                                    const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    auto e = ParseGraphExpectation(line);
    if (!e.ok()) return e.status();
    absl::Status s = CheckGraphExpectation(model, *e);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx::api
