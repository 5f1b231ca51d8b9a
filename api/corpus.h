// The corpus runner: checks many bundles through one pipeline in one process
// with one OrtRunner (batched), honouring the bundles' header markers,
// `expect_graph` lines and `opset`, adding generated f64, bf16 and opset-17
// variants, and reporting one PASS/FAIL/XFAIL/XPASS/SKIP line per case.
// docs/testing.md documents the header grammar.
#ifndef JAX2ONNX_API_CORPUS_H_
#define JAX2ONNX_API_CORPUS_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/bundle_access.h"
#include "api/check.h"
#include "api/ort_runner.h"
#include "api/router.h"
#include "jax2onnx/jax2onnx.h"

namespace jax2onnx::api {

// One marker of a `# markers:` header line:
//   markers-line := marker ("," marker)* [":" reason]
//   marker       := name ["(" "strict" ")"]
// The reason (the rest of the line after the first ':' that follows the
// marker list) applies to every marker of that line. Several `# markers:`
// lines may be given.
struct Marker {
  std::string name;  // one of KnownMarkers()
  bool strict = false;
  std::string reason;
};

// legacy_only, ir_only, legacy_xfail, ir_xfail, f64_xfail, no_f64,
// opset17_xfail, bf16_xfail, no_bf16.
const std::vector<std::string>& KnownMarkers();

// Parses one `# markers:` value. Unknown names, `strict` on a marker that is
// not an xfail, and malformed text are InvalidArgument errors naming the
// offending text.
absl::StatusOr<std::vector<Marker>> ParseMarkersLine(absl::string_view value);

// Every `# markers:` line of the file.
absl::StatusOr<std::vector<Marker>> ParseMarkers(const jaxpr::JaxprFile& file);

// The `# fuse_attention: true|false` header (ConvertOptions::fuse_attention
// for the bundle's IR cases); false when absent, InvalidArgument for any
// other value.
absl::StatusOr<bool> HeaderFuseAttention(const jaxpr::JaxprFile& file);

// The jaxpr text with every f32 type (`f32[...]`, `float32`) outside the
// `#` header lines promoted to f64.
std::string PromoteF32ToF64(absl::string_view jaxpr_text);
// The same with f32 / float32 replaced by `to`'s short and numpy names
// (bf16 / bfloat16, ...).
std::string PromoteF32(absl::string_view jaxpr_text, jaxpr::DType to);

// True when every invar and outvar is f32 (and there is at least one).
bool AllF32Signature(const jaxpr::ClosedJaxpr& jaxpr);

// onnx::checker::check_model (full check), then
// onnx::shape_inference::InferShapes in strict mode with data propagation, on
// a copy stamped ir_version 8 (libonnx 1.12 knows opsets <= 17 and IR <= 8).
// CheckLoadedBundle's opset-17 stage adds UntypedValues (every node output
// typed, api/untyped_values.h).
absl::Status ValidateWithOnnxChecker(const onnx::ModelProto& model);

struct CaseResult;

struct CorpusOptions {
  Pipeline pipeline = Pipeline::kLegacy;
  int opset = 23;             // a bundle's `# opset:` header overrides it
  bool also_opset17 = false;  // add a NAME[opset17] case per bundle
  bool f64_variants = true;   // add NAME[f64] for all-f32 npz-less bundles
  // Add NAME[bf16] for every bundle with an f32 type (npz arrays rounded).
  bool bf16_variants = false;
  uint64_t seed = 0;
  // Generated inputs are special values (CheckOptions::special_values).
  bool special_values = false;
  // Case names are bundle paths relative to this directory (when inside it),
  // without the .jaxpr suffix.
  std::string display_root;
  // Where the per-case lines go (nullptr: nowhere).
  std::FILE* out = stdout;
  // When set, receives each case instead of `out` (the CLI prints it around
  // its progress display).
  std::function<void(const CaseResult&)> on_case;
  // Called before each bundle with (bundles done, total, bundle path).
  std::function<void(int, int, const std::string&)> progress;
  // Case name (as printed, without a [variant] suffix) -> reason: failures
  // expected for bundles that cannot carry markers (read-only vectors).
  // Applies like a non-strict xfail marker to every variant of the bundle.
  std::map<std::string, std::string> expected_failures;
  // Opset-17 cases: case name (with its [variant] suffix) -> how many node
  // outputs may keep an unknown rank after strict shape inference with data
  // propagation (api/untyped_values.h). When set, a case with more fails at
  // the `untyped` stage, an unlisted case may have none, and a case with
  // fewer passes with a note to lower its count. Unset: ranks unchecked
  // (element types always are).
  std::optional<std::map<std::string, int>> rank_unknown_allowed;
};

// Reads a rank-unknown allowance file: `COUNT NAME` per line, `#` comments.
absl::StatusOr<std::map<std::string, int>> ReadRankUnknownAllowance(
    const std::string& path);

enum class Outcome { kPass, kFail, kXfail, kXpass, kSkip };
const char* OutcomeName(Outcome outcome);  // "PASS", ...

struct CaseResult {
  std::string name;  // e.g. primitives/add/add_f32[f64]
  Outcome outcome = Outcome::kFail;
  bool strict_xpass = false;  // an XPASS under a strict marker: fails the run
  std::string reason;         // stage and message, marker reason, ...
  int rank_unknown = 0;       // opset-17 cases: values of unknown rank
};

// `OUTCOME NAME [pipeline] reason`, the line `corpus` prints per case.
std::string CaseLine(const CaseResult& r, Pipeline pipeline);

struct CorpusSummary {
  std::vector<CaseResult> cases;
  int passed = 0;
  int failed = 0;  // includes strict XPASSes
  int skipped = 0;
  int xfailed = 0;
  int xpassed = 0;
  bool ok() const { return failed == 0; }
  // `N passed, M failed, K skipped, X xfailed, Y xpassed`.
  std::string Line() const;
};

// CheckBundle on a loaded (possibly generated) bundle through an explicit
// pipeline (the environment does not route it), followed by the
// `expect_graph` lines and, when options.convert.opset is 17, the ONNX
// checker. Never fails as a whole; `converted` (optional) receives the model,
// `failure_code` (optional) the status code of the failure (kOk on a pass).
CheckResult CheckLoadedBundle(const Bundle& bundle, Pipeline pipeline,
                              const CheckOptions& options, OrtRunner& runner,
                              const std::vector<std::string>& expect_graph,
                              onnx::ModelProto* converted = nullptr,
                              absl::StatusCode* failure_code = nullptr);

// Runs every bundle (paths of .jaxpr files) through options.pipeline.
CorpusSummary RunCorpus(const std::vector<std::string>& bundle_paths,
                        const CorpusOptions& options, OrtRunner& runner);

// Sorted .jaxpr files under each argument (files are kept as given); an
// argument that does not exist is a NotFound error.
absl::StatusOr<std::vector<std::string>> FindBundles(
    const std::vector<std::string>& paths_or_dirs);

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_CORPUS_H_
