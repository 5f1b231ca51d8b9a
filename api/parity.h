// The parity dashboard (DESIGN.md §4): every case of a corpus through both
// pipelines (shadow compare), attributed to the primitives it uses, rendered
// as parity.json, PARITY.md and a static index.html with an inline SVG
// chart. It decides when the IR pipeline may become the default: when it
// passes every case legacy passes (IrCoversLegacy).
#ifndef JAX2ONNX_API_PARITY_H_
#define JAX2ONNX_API_PARITY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/ort_runner.h"
#include "api/shadow.h"
#include "nlohmann/json.hpp"

namespace jax2onnx::api {

struct ParityOptions {
  int opset = 23;  // a bundle's `# opset:` header overrides it
  uint64_t seed = 0;
  // Like the corpus runner: all-f32 bundles without npz also run as
  // NAME[f64] with f32 promoted to f64 (unless marked no_f64).
  bool f64_variants = true;
  // Every bundle without its own `# opset:` header also runs as
  // NAME[opset17] at opset 17 (marker opset17_xfail), as the corpus ctests do.
  bool opset17_variants = false;
  // Called after each case: (cases done, cases known so far, case name).
  std::function<void(int, int, const std::string&)> progress;
  // More directories (or .jaxpr files) whose programs are counted, with the
  // parity inputs, to order "Next ports" by use (CountPrimitiveUses); a
  // missing one is skipped. The CLI passes ../shared/corpus/real.
  std::vector<std::string> usage_roots;
};

// A JAX primitive (docs/parity/jax_primitives.txt, embedded at build time)
// and whether each pipeline has a lowering for it.
struct PrimitiveCoverage {
  std::string primitive;
  std::string defined_in;  // the list's comment: module and JAX versions
  bool legacy = false;
  bool ir = false;
  // Rewritten away before either pipeline lowers (the ref/state
  // primitives, jaxpr/state/discharge.h): handled, though not registered.
  bool discharged = false;
  // Programs (.jaxpr files under the parity inputs and usage roots) that
  // bind it; RunParity fills it.
  int uses = 0;
};

// Every primitive of the checked-in JAX list, sorted, with its lowerings in
// the global registry (registered on first use).
std::vector<PrimitiveCoverage> JaxPrimitiveCoverage();

// For each primitive, how many .jaxpr files under `roots` (directories
// recursively, or files) bind it at least once. Read as text, not parsed,
// so a program the converter refuses still counts: an equation's primitive
// is the word after ` = ` (`b:f32[3] = sin a`, `c d = scan[`); `#` comment
// lines are skipped. Missing roots are skipped.
std::map<std::string, int> CountPrimitiveUses(
    const std::vector<std::string>& roots);

// The primitive a failure is charged to: of the case's `primitives`, the one
// quoted in `error` ('scatter-add') whose last mention comes last (errors
// nest outer to inner: "equation #2 'jit' ...: equation #0 'scatter-add'
// ..."); "" when the error quotes none of them (the failure then belongs to
// the case only, never to every primitive it contains).
std::string AttributedPrimitive(absl::string_view error,
                                const std::vector<std::string>& primitives);

struct ParityCase {
  // Path relative to the argument directory, prefixed with that directory's
  // name and without .jaxpr ("testdata/primitives/add/add_f32[f64]"); a file
  // argument keeps its path.
  std::string name;
  std::string bundle;                   // .jaxpr path as found
  std::vector<std::string> primitives;  // sorted, nested jaxprs included
  std::string markers;                  // `# markers:` text, "; "-joined
  // The case is marked to fail on that pipeline (legacy_xfail / ir_xfail,
  // or f64_xfail for a [f64] variant).
  bool legacy_xfail = false;
  bool ir_xfail = false;
  Verdict verdict = Verdict::kBothFailed;
  std::string reason;
  PipelineRun legacy;
  PipelineRun ir;
};

struct PrimitiveParity {
  std::string primitive;
  int cases = 0;
  int legacy_pass = 0;
  int ir_pass = 0;
  int both_pass = 0;
  int identical = 0;
  int equivalent = 0;
  int different = 0;
  int ir_only = 0;      // IR passes, legacy does not
  int legacy_only = 0;  // legacy passes, IR does not
  // Per primitive rows only: failures charged to this primitive by
  // AttributedPrimitive (the counts above are facts about the cases that
  // use it; ir_only/legacy_only count only when the failing side's error is
  // charged to it). xfail: of those, in cases marked to fail there.
  int legacy_failures = 0;
  int ir_failures = 0;
  int xfail = 0;
  std::vector<std::string> charged_cases;  // names, in report order
};

struct ParityReport {
  std::vector<ParityCase> cases;
  std::string ort_version;
  // The JAX primitive list with lowering state (RunParity fills it); drives
  // the "not lowered yet" section. Empty: the section is left out.
  std::vector<PrimitiveCoverage> coverage;
  // The roots CountPrimitiveUses read for coverage[].uses, as given.
  std::vector<std::string> usage_roots;

  // Totals (a PrimitiveParity with primitive "(all)"; its failure counts
  // are every failing case, charged or not).
  PrimitiveParity Totals() const;
  // One row per primitive, sorted by name.
  std::vector<PrimitiveParity> ByPrimitive() const;
  // Failing cases whose errors quote none of their primitives.
  std::vector<std::string> UnattributedFailures() const;
  // "parity: 412 cases; legacy 398 pass, ir 405 pass, both 396; identical
  // 120, equivalent 270, different 6".
  std::string SummaryLine() const;
  // The flip rule: the IR pipeline passes every case legacy passes.
  bool IrCoversLegacy() const;
  // Names of the cases legacy passes and IR does not.
  std::vector<std::string> LegacyOnlyCases() const;
};

// Runs every .jaxpr under the arguments (directories recursively, sorted;
// files as given) through ShadowCompare with the one `runner`. A missing
// argument is NotFound; ONNX Runtime being unavailable is
// FailedPrecondition. Case failures are results, not errors.
absl::StatusOr<ParityReport> RunParity(const std::vector<std::string>& args,
                                       const ParityOptions& options,
                                       OrtRunner& runner);

// Stable JSON (schema "jax2onnx.parity/1", docs/shadow_and_parity.md);
// deterministic for the same results (no timings or dates).
nlohmann::json ParityToJson(const ParityReport& report);
// `page_dir`: the directory the page will be written to, so that links to
// bundle files are relative to it; "" links the bundle paths as found.
std::string ParityMarkdown(const ParityReport& report,
                           const std::string& page_dir = "");
// One self-contained page: no scripts, fonts or external references (links
// only to the bundle files, relative to `page_dir`).
std::string ParityHtml(const ParityReport& report,
                       const std::string& page_dir = "");

// Writes parity.json, PARITY.md and index.html into `out_dir` (created).
absl::Status WriteParityDashboard(const ParityReport& report,
                                  const std::string& out_dir);

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_PARITY_H_
