// `check --bisect`: where a converted model first departs from the program.
//
// The model is copied into a harness whose graph outputs also expose the
// ONNX value of each equation's results, top-level and inside the calls the
// IR pipeline inlines (jit/pjit, closed_call, remat, custom_jvp/vjp calls:
// their equations come before the call's own results, named with the
// enclosing call's path; scan/while/cond bodies become ONNX Loop/If
// subgraphs whose values cannot be graph outputs, so a divergence inside
// one is reported at the enclosing equation, saying so; the IR pipeline names
// the value computing result `v` of a `p` equation `v/p`, docs/ir.md), the
// program is run by the reference interpreter with every equation's results
// as outputs, and both are compared in program order. The first equation
// whose value differs beyond tolerance is named with its FILE:LINE:COL,
// primitive, params and max error. A result the model has no value for
// (computed inside a fused node, folded into a constant, aliased to an
// earlier value, or lowered by the legacy pipeline) is listed as not
// observable; the comparison goes on around it.
#ifndef JAX2ONNX_API_BISECT_H_
#define JAX2ONNX_API_BISECT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/check.h"
#include "api/ort_runner.h"
#include "api/output_compare.h"
#include "jaxpr/array.h"
#include "jaxpr/io/bundle.h"
#include "onnx/onnx_pb.h"

namespace jax2onnx::api {

struct BisectStep {
  int eqn_index = 0;
  std::string var;    // the jaxpr result, e.g. "c"
  std::string where;  // FILE:LINE:COL of the equation
  std::string primitive;
  std::string equation;   // the printed equation, params included
  std::string onnx_name;  // the model's value, "" when not observable
  bool observed = false;
  bool ok = true;            // within tolerance (true when not observed)
  double max_abs_error = 0;  // observed values only
  std::string summary;       // the comparison, or why it is not observable
  // Nested equations (inside an inlined jit/pjit/closed_call/custom_jvp/...
  // body): the enclosing calls, outermost first, as "#2 'pjit' at
  // FILE:L:C > "; "" at the top level. eqn_index is within its own jaxpr.
  std::string within;
  int depth = 0;
  // The equation holds a scan/while/cond body the harness cannot look into.
  bool opaque_body = false;
};

struct BisectResult {
  std::vector<BisectStep> steps;  // every result, in program order
  int first_diverging = -1;       // index into steps, -1 when none
  int observed = 0;
  // One line: "first diverging equation: FILE:L:C: PRIM ... (max |error|
  // E)", or that every observable result agrees.
  std::string Summary() const;
};

// Compares `model` (converted from `bundle`) with the interpreter on
// `inputs`, equation by equation (see above).
absl::StatusOr<BisectResult> Bisect(const jaxpr::Bundle& bundle,
                                    const onnx::ModelProto& model,
                                    const std::vector<jaxpr::Array>& inputs,
                                    const ToleranceOverride& tolerance,
                                    const ConvertOptions& convert,
                                    OrtRunner& runner);

// `check --bisect BUNDLE`: converts the bundle as CheckBundle does (same
// pipeline routing, options and inputs) and bisects that model.
absl::StatusOr<BisectResult> BisectBundle(const std::string& bundle_path,
                                          const CheckOptions& options,
                                          OrtRunner& runner);

// `check MODEL.onnx BUNDLE --bisect`: bisects the model file as shipped
// (nothing is converted). Equations are found by the value names the
// converter writes, so a model jax2onnx wrote (IR pipeline) is observable
// where its values kept those names, and any other model's equations are
// reported not observable. External data is read into the harness (up to
// protobuf's 2 GiB). The graph inputs must be the program's inputs in
// order: a model with NCHW adapters, or inputs renamed or reordered by
// --input_names / the bundle's `# input_names:`, is refused with the
// reason (bisect the bundle instead).
absl::StatusOr<BisectResult> BisectModelFile(const std::string& model_path,
                                             const std::string& bundle_path,
                                             const CheckOptions& options,
                                             OrtRunner& runner);

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_BISECT_H_
