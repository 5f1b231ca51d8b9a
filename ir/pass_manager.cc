// The pass manager and the name -> factory table of the passes: the generic
// ones here, the fusions from their rule table (ir/passes/fusions.cc).
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/pass.h"
#include "ir/passes/fusions.h"
#include "ir/passes/passes.h"
#include "ir/passes/shape_folding.h"

namespace jax2onnx::ir {
namespace {

struct PassFactory {
  const char* name;
  std::unique_ptr<Pass> (*create)();
};

constexpr PassFactory kPassFactories[] = {
    {"cast-elimination", &CreateCastEliminationPass},
    {"common-subexpression-elimination",
     &CreateCommonSubexpressionEliminationPass},
    {"constant-folding", &CreateConstantFoldingPass},
    {"dead-node-elimination", &CreateDeadNodeEliminationPass},
    {"einsum-to-matmul", &CreateEinsumToMatMulPass},
    {"expand-elimination", &CreateExpandEliminationPass},
    {"gemm-bias-folding", &CreateGemmBiasFoldingPass},
    {"identity-elimination", &CreateIdentityEliminationPass},
    {"node-naming", &CreateNodeNamingPass},
    {"reduce-keepdims", &CreateReduceKeepdimsPass},
    {"reshape-folding", &CreateReshapeFoldingPass},
    {"shape-folding", &CreateShapeFoldingPass},
    {"slices-to-split", &CreateSlicesToSplitPass},
    {"squeeze-sinking", &CreateSqueezeSinkingPass},
    {"topological-sort", &CreateTopologicalSortPass},
    {"transpose-folding", &CreateTransposeFoldingPass},
    {"type-propagation", &CreateTypePropagationPass},
    {"unused-initializer-pruning", &CreateUnusedInitializerPruningPass},
};

std::vector<Graph*> WalkAllGraphs(Model& model) {
  std::vector<Graph*> out = GraphAndSubgraphs(&model.graph());
  for (Function* f : model.functions()) {
    for (Graph* g : GraphAndSubgraphs(&f->body())) out.push_back(g);
  }
  return out;
}

// With verification on: a change to the subgraph structure that did not
// move SubgraphStructureVersion() would leave AllGraphs stale.
absl::Status CheckAllGraphsCache(Model& model) {
  if (AllGraphs(model) == WalkAllGraphs(model)) return absl::OkStatus();
  return absl::InternalError(
      "the cached graph list (AllGraphs) differs from a fresh walk: a "
      "subgraph change did not bump SubgraphStructureVersion()");
}

void ReleaseErased(Model& model) {
  for (Graph* g : AllGraphs(model)) g->ReleaseErasedNodes();
}

}  // namespace

std::unique_ptr<Pass> CreatePass(absl::string_view name) {
  for (const PassFactory& f : kPassFactories) {
    if (name == f.name) return f.create();
  }
  return CreateFusionPass(name);
}

std::vector<std::string> RegisteredPassNames() {
  std::vector<std::string> names;
  for (const PassFactory& f : kPassFactories) names.push_back(f.name);
  for (const FusionRule& rule : FusionRules()) {
    names.emplace_back(rule.name);
  }
  return names;
}

std::vector<Graph*> AllGraphs(Model& model) {
  // Read before the walk: a change made meanwhile (by another thread, to
  // another model) leaves the list marked stale.
  const uint64_t version = SubgraphStructureVersion();
  if (model.all_graphs_version_ != version) {
    model.all_graphs_ = WalkAllGraphs(model);
    model.all_graphs_version_ = version;
  }
  return model.all_graphs_;
}

PassManager::PassManager(PassManagerOptions options)
    : options_(std::move(options)) {}
PassManager::~PassManager() = default;

void PassManager::Add(std::unique_ptr<Pass> pass) {
  Step step;
  step.passes.push_back(std::move(pass));
  steps_.push_back(std::move(step));
}

absl::Status PassManager::AddByName(absl::string_view name) {
  std::unique_ptr<Pass> pass = CreatePass(name);
  if (pass == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "unknown IR pass '", name,
        "'; known passes: ", absl::StrJoin(RegisteredPassNames(), ", ")));
  }
  Add(std::move(pass));
  return absl::OkStatus();
}

void PassManager::AddFixpoint(std::string group_name,
                              std::vector<std::unique_ptr<Pass>> passes) {
  Step step;
  step.group_name = std::move(group_name);
  step.passes = std::move(passes);
  steps_.push_back(std::move(step));
}

bool PassManager::HasAnyOp(Model& model,
                           const std::vector<absl::string_view>& ops) {
  if (!op_census_.has_value()) {
    op_census_.emplace();
    for (Graph* g : AllGraphs(model)) {
      for (Node* n : g->nodes()) op_census_->insert(n->op_type());
    }
  }
  for (absl::string_view op : ops) {
    if (op_census_->contains(op)) return true;
  }
  return false;
}

absl::StatusOr<bool> PassManager::RunOne(Pass& pass, Model& model) {
  auto clean = clean_at_.find(pass.name());
  if (clean != clean_at_.end() && clean->second == epoch_) return false;
  const std::vector<absl::string_view> anchors = pass.AnchorOps();
  if (!anchors.empty() && !HasAnyOp(model, anchors)) return false;
  if (options_.verify_each_pass) {
    if (absl::Status s = Verify(model, options_.verify_options); !s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat("IR verification failed before pass '",
                                       pass.name(), "': ", s.message()));
    }
  }
  absl::StatusOr<bool> changed = pass.Run(model);
  if (!changed.ok()) {
    return absl::Status(
        changed.status().code(),
        absl::StrCat("pass '", pass.name(), "': ", changed.status().message()));
  }
  ReleaseErased(model);
  // A pass that changed nothing left the census valid.
  if (*changed) {
    op_census_.reset();
    ++epoch_;
  } else {
    clean_at_[std::string(pass.name())] = epoch_;
  }
  if (options_.verify_each_pass) {
    absl::Status s = Verify(model, options_.verify_options);
    if (s.ok()) s = CheckAllGraphsCache(model);
    if (!s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat("IR verification failed after pass '",
                                       pass.name(), "': ", s.message()));
    }
  }
  if (options_.dump) options_.dump(dump_step_++, pass.name(), model);
  return *changed;
}

absl::StatusOr<bool> PassManager::Run(Model& model) {
  // The model may have changed since an earlier Run().
  op_census_.reset();
  clean_at_.clear();
  bool any_change = false;
  for (Step& step : steps_) {
    if (step.group_name.empty()) {
      absl::StatusOr<bool> changed = RunOne(*step.passes[0], model);
      if (!changed.ok()) return changed.status();
      any_change |= *changed;
      continue;
    }
    bool converged = false;
    std::vector<std::string> last_changers;
    for (int round = 0; round < options_.max_fixpoint_iterations; ++round) {
      bool round_changed = false;
      last_changers.clear();
      for (auto& pass : step.passes) {
        absl::StatusOr<bool> changed = RunOne(*pass, model);
        if (!changed.ok()) return changed.status();
        if (*changed) last_changers.emplace_back(pass->name());
        round_changed |= *changed;
      }
      any_change |= round_changed;
      if (!round_changed) {
        converged = true;
        break;
      }
    }
    if (!converged) {
      return absl::FailedPreconditionError(absl::StrCat(
          "pass group '", step.group_name, "' did not converge within ",
          options_.max_fixpoint_iterations,
          " rounds; still changing in the last round: ",
          absl::StrJoin(last_changers, ", ")));
    }
  }
  return any_change;
}

}  // namespace jax2onnx::ir
