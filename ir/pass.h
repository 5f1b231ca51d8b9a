// The pass interface and the pass manager. A pass rewrites a Model in place
// and reports whether it changed anything; the manager runs passes (single
// or as a fixpoint group), verifies the IR around each pass when asked
// (always in debug builds), frees erased nodes between passes and hands the
// model to an optional dump callback after each pass.
#ifndef JAX2ONNX_IR_PASS_H_
#define JAX2ONNX_IR_PASS_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/ir.h"
#include "ir/verifier.h"

namespace jax2onnx::ir {

class Pass {
 public:
  virtual ~Pass() = default;
  // Stable kebab-case name, e.g. "dead-node-elimination".
  virtual absl::string_view name() const = 0;
  // Returns whether the model changed; an error leaves the model in an
  // unspecified but verifiable state.
  virtual absl::StatusOr<bool> Run(Model& model) = 0;
  // Op types without which the pass cannot change anything (its rewrites
  // all start at a node of one of these types, in any domain); empty: it
  // may act on any model. The manager skips the pass on a model that has
  // none of them: every pass walks every node, and on a 100k-node graph
  // most of the generic passes' anchors (Einsum, Expand, Cast, ...) are
  // absent.
  virtual std::vector<absl::string_view> AnchorOps() const { return {}; }
};

// Every pass by name, generic passes and fusions (with default
// FusionOptions); nullptr for an unknown name.
std::unique_ptr<Pass> CreatePass(absl::string_view name);
std::vector<std::string> RegisteredPassNames();

#ifdef NDEBUG
inline constexpr bool kVerifyPassesByDefault = false;
#else
inline constexpr bool kVerifyPassesByDefault = true;
#endif

struct PassManagerOptions {
  // Run the verifier before and after every pass.
  bool verify_each_pass = kVerifyPassesByDefault;
  VerifyOptions verify_options;
  // Fixpoint groups give up with an error after this many rounds in which
  // some pass still reported a change.
  int max_fixpoint_iterations = 16;
  // Called after every pass run with a running step number (0, 1, ...), the
  // pass name and the model (e.g. to write JAX2ONNX_DEBUG_IR_DUMP files).
  std::function<void(int step, absl::string_view pass_name, const Model&)> dump;
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions options = {});
  ~PassManager();

  void Add(std::unique_ptr<Pass> pass);
  // Adds a generic pass by name; NotFound (listing the known names) if
  // there is none.
  absl::Status AddByName(absl::string_view name);
  // Adds a group run round after round until no pass in it changes the
  // model (at most options.max_fixpoint_iterations rounds).
  void AddFixpoint(std::string group_name,
                   std::vector<std::unique_ptr<Pass>> passes);

  // Runs every step in order; returns whether anything changed.
  absl::StatusOr<bool> Run(Model& model);

 private:
  struct Step {
    std::string group_name;  // empty for a single pass
    std::vector<std::unique_ptr<Pass>> passes;
  };
  absl::StatusOr<bool> RunOne(Pass& pass, Model& model);
  // Whether some node of the model has one of `ops` as op type, from the
  // census of op types, taken again after any pass that changed the model.
  bool HasAnyOp(Model& model, const std::vector<absl::string_view>& ops);

  PassManagerOptions options_;
  std::optional<absl::flat_hash_set<std::string>> op_census_;
  // Skipping what cannot change anything: `epoch_` counts the passes of
  // this Run() that changed the model; `clean_at_[name]` is the epoch at
  // which the pass of that name last ran without a change. A pass is a
  // deterministic function of the model (and passes of one name behave
  // alike within one manager), so rerunning it at the same epoch would
  // change nothing again: it is skipped. This drops a fixpoint group's
  // rounds after a step that changed nothing (the generic passes after
  // fusions that fused nothing) and a repeated final pass.
  uint64_t epoch_ = 0;
  absl::flat_hash_map<std::string, uint64_t> clean_at_;
  std::vector<Step> steps_;
  int dump_step_ = 0;
};

// Graphs a pass should visit: the main graph and every function body,
// each followed by its subgraphs. Cached in the model until
// SubgraphStructureVersion() changes, so asking after every step is cheap.
std::vector<Graph*> AllGraphs(Model& model);

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_PASS_H_
