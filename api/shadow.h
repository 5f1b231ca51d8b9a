// Shadow compare (DESIGN.md §4): converts one bundle with both pipelines and
// says how the two models relate — the same canonical graph, numerically
// equal in ONNX Runtime, or different — with a structural diff that does not
// depend on value names and per-output errors against each other and the
// oracle. Used by `jax2onnx shadow`, the parity dashboard, and ToOnnx under
// JAX2ONNX_SHADOW_COMPARE.
#ifndef JAX2ONNX_API_SHADOW_H_
#define JAX2ONNX_API_SHADOW_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/output_compare.h"
#include "api/bundle_access.h"
#include "api/check.h"
#include "api/ort_runner.h"
#include "api/router.h"
#include "jax2onnx/jax2onnx.h"
#include "nlohmann/json.hpp"
#include "onnx/onnx_pb.h"

namespace jax2onnx::api {

enum class Verdict {
  kIdentical,     // same canonical graph
  kEquivalent,    // graphs differ, every output agrees within tolerance
  kDifferent,     // some output disagrees (or the models' outputs mismatch)
  kLegacyFailed,  // legacy did not convert or its model did not run
  kIrFailed,      // same for IR
  kBothFailed,
  kNotRun,  // graphs differ and ONNX Runtime was unavailable
};
// "IDENTICAL", "EQUIVALENT", ...
const char* VerdictName(Verdict verdict);

// ---------------------------------------------------------------------------
// Canonical form of a model, independent of value and node names.
//
// Values are identified by structure: graph input i, an initializer by its
// content digest, or output k of the node that computes it. Nodes are listed
// in a canonical topological order: among the nodes whose inputs are ready,
// the one with the smallest key (op type, domain, attributes, and the
// structural hashes of its inputs) comes first, so reordering independent
// nodes or renaming values does not change the form.

struct CanonicalNode {
  std::string op_type;  // "Add", or "domain::Op" outside the default domain
  // name=value, sorted by name; tensors print as dtype[dims]#digest,
  // subgraphs as graph{N nodes}#digest of their canonical text.
  std::vector<std::pair<std::string, std::string>> attributes;
  // Canonical references: "in0", "init#<digest>", "n3.0" (output 0 of
  // canonical node 3), "outer:<ref>" inside a subgraph, "" for an omitted
  // optional input.
  std::vector<std::string> inputs;
  int num_outputs = 0;
  std::string Text(int index) const;  // "n3 = Add(in0, n2.0) {...}"
};

struct CanonicalGraph {
  // "in0: float[B,3]"; graph input and output names are the model's public
  // interface and are kept.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;  // "out_0: float[B,3] = n4.0"
  std::vector<CanonicalNode> nodes;
  // Initializer digest -> "dtype[dims]", sorted by digest.
  std::vector<std::pair<std::string, std::string>> initializers;
  // ir_version and opset imports, e.g. "ir_version 10", "opset ai.onnx 23".
  std::vector<std::string> header;

  // Everything above as text; two graphs are IDENTICAL when it is equal.
  std::string Text() const;
};

CanonicalGraph Canonicalize(const onnx::ModelProto& model);

// Content digest of a tensor (dtype, dims and element values, whatever
// field of TensorProto holds them): 16 hex digits of a 64-bit FNV-1a hash.
// Not cryptographic: it tells tensors apart, it does not authenticate them.
std::string TensorDigest(const onnx::TensorProto& tensor);

// ---------------------------------------------------------------------------
// Structural diff of two canonical graphs.

struct OpCountDelta {
  std::string op_type;
  int legacy = 0;
  int ir = 0;
};

struct NodeDiff {
  enum class Kind { kChanged, kLegacyOnly, kIrOnly };
  Kind kind = Kind::kChanged;
  int legacy_index = -1;  // canonical node index, -1 when absent
  int ir_index = -1;
  std::string op_type;
  // "attribute axis: legacy 1, ir 2", "input 1: legacy in0, ir init#..."
  std::vector<std::string> details;
};
const char* NodeDiffKindName(NodeDiff::Kind kind);  // changed, ...

struct StructuralDiff {
  bool identical = false;
  std::vector<OpCountDelta> op_histogram_delta;  // only ops whose count differs
  // Nodes are aligned by longest common subsequence of op types over the
  // canonical orders; matched nodes whose attributes or inputs differ are
  // kChanged, unmatched ones are kLegacyOnly / kIrOnly.
  std::vector<NodeDiff> nodes;
  int matched_nodes = 0;
  std::vector<std::string> signature_diffs;           // inputs, outputs, header
  std::vector<std::string> initializers_legacy_only;  // "digest dtype[dims]"
  std::vector<std::string> initializers_ir_only;
  int initializers_common = 0;
};

StructuralDiff DiffGraphs(const CanonicalGraph& legacy,
                          const CanonicalGraph& ir);

// ---------------------------------------------------------------------------
// Numeric errors.

struct ErrorStats {
  bool compared = false;  // false when a side is missing
  bool ok = false;        // within the tolerance (CompareArrays)
  double max_abs = 0;     // max |a - b| over elements
  // max |a - b| / |b| over elements with b != 0 (b is the reference side:
  // IR for legacy-vs-IR, the oracle otherwise); infinity when a NaN meets a
  // number or an infinity meets a different value.
  double max_rel = 0;
  std::string summary;  // CompareResult::Summary(), or why not compared
};

// Errors of `got` against `reference` with the given tolerance.
ErrorStats CompareForShadow(const jaxpr::Array& reference,
                            const jaxpr::Array& got, std::optional<double> rtol,
                            std::optional<double> atol);

struct OutputErrors {
  int index = 0;
  ErrorStats legacy_vs_ir;
  ErrorStats legacy_vs_oracle;
  ErrorStats ir_vs_oracle;
};

// ---------------------------------------------------------------------------
// One shadow comparison.

struct PipelineRun {
  bool converted = false;
  bool ran = false;
  // Converted, ran, every output matches the oracle and the bundle's
  // expect_graph lines hold: what `check`/the corpus call PASS.
  bool passed = false;
  std::string stage;  // where it failed: convert, run, oracle, compare, ...
  std::string error;  // one line
  int nodes = 0;
  int initializers = 0;
  double convert_seconds = 0;
};

struct ShadowOptions {
  CheckOptions check;  // conversion options, seed, symbolic sizes
  // Header expect_graph lines to check per pipeline (parity); empty: none.
  std::vector<std::string> expect_graph_legacy;
  std::vector<std::string> expect_graph_ir;
  // Run the models in ONNX Runtime (numbers and oracle). Without it, graphs
  // that differ get kNotRun.
  bool run_models = true;
};

struct ShadowResult {
  std::string bundle;  // .jaxpr path
  std::string name;    // display name (parity case name), else the path
  Verdict verdict = Verdict::kBothFailed;
  std::string reason;  // one line explaining the verdict
  PipelineRun legacy;
  PipelineRun ir;
  std::string oracle;        // "expected", "interpreter", or "" when none
  std::string oracle_error;  // why there is no oracle
  std::optional<StructuralDiff> diff;  // when both converted
  std::vector<OutputErrors> outputs;
  // The converted models (not serialized); empty when conversion failed.
  onnx::ModelProto legacy_model;
  onnx::ModelProto ir_model;
};

// Judges one pipeline's outputs against the oracle, one OutputCheck per
// output. ShadowCompare passes `check`'s rule (api/output_compare.h: the
// fixed tolerance, then the f32 noise bound), so shadow, parity and `check`
// agree on what passes.
using OracleJudge = std::function<std::vector<OutputCheck>(
    const std::vector<jaxpr::Array>& got)>;

// The comparison proper, on two conversion results: structural diff, runs
// on `inputs`, errors against each other and the oracle, per-pipeline pass
// (oracle only: expect_graph lines are ShadowCompare's) and the verdict.
// An error in `inputs` or `oracle` is reported, not fatal. A `judge` decides
// the vs-oracle `ok` and summary of each output; without one, an output is
// ok when within rtol/atol of the oracle (CompareForShadow).
ShadowResult CompareModels(
    const absl::StatusOr<onnx::ModelProto>& legacy,
    const absl::StatusOr<onnx::ModelProto>& ir,
    const absl::StatusOr<std::vector<jaxpr::Array>>& inputs,
    const absl::StatusOr<std::vector<jaxpr::Array>>& oracle,
    std::optional<double> rtol, std::optional<double> atol, OrtRunner* runner,
    const OracleJudge& judge = nullptr);

// Compares the two pipelines on a loaded bundle. Never fails as a whole:
// everything is reported in the result. `runner` may be null (no numbers).
ShadowResult ShadowCompare(const Bundle& bundle, const ShadowOptions& options,
                           OrtRunner* runner);

// Loads the bundle first (a load error makes BOTH_FAILED with stage load).
ShadowResult ShadowCompareFile(const std::string& bundle_path,
                               const ShadowOptions& options, OrtRunner* runner);

// The stable JSON form (docs/shadow_and_parity.md), schema
// "jax2onnx.shadow/1". Node diffs are capped at `max_node_diffs` with a
// "node_diffs_truncated" count.
nlohmann::json ShadowToJson(const ShadowResult& result,
                            int max_node_diffs = 200);

// A short human summary: verdict line, histogram delta, the first few node
// diffs, per-output errors.
std::string ShadowSummary(const ShadowResult& result, int max_node_diffs = 8);

// ---------------------------------------------------------------------------
// JAX2ONNX_SHADOW_COMPARE / JAX2ONNX_SHADOW_REPORT (ToOnnx).

inline constexpr char kShadowCompareEnv[] = "JAX2ONNX_SHADOW_COMPARE";
inline constexpr char kShadowReportEnv[] = "JAX2ONNX_SHADOW_REPORT";

enum class ShadowMode { kOff, kOn, kStrict };

// unset, "", 0/false/off -> kOff; 1/true/on -> kOn; "strict" -> kStrict (any
// case, blanks ignored); anything else is InvalidArgument naming the
// variable and the value.
absl::StatusOr<ShadowMode> ParseShadowMode(const char* env_value);
absl::StatusOr<ShadowMode> ShadowModeFromEnvironment();

// OK unless `mode` is kStrict and the verdict is DIFFERENT: then a
// FailedPrecondition naming the bundle and the first differing output.
absl::Status ShadowStrictStatus(ShadowMode mode, const ShadowResult& result);

// Appends one JSON line to `path` (created when missing).
absl::Status AppendJsonLine(const std::string& path,
                            const nlohmann::json& line);

// ToOnnx under shadow mode: converts with both pipelines, runs them in the
// shared OrtRunner, reports (one JSON line to JAX2ONNX_SHADOW_REPORT when
// set, else a one-line summary on stderr) and returns the `routed`
// pipeline's result. kStrict turns a DIFFERENT verdict into a
// FailedPrecondition error; a failing report file is an error too.
absl::StatusOr<onnx::ModelProto> ConvertWithShadow(
    Pipeline routed, ShadowMode mode, const Bundle& bundle,
    const ConvertOptions& options);

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_SHADOW_H_
