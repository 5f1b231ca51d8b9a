// StableHLO (MLIR text) -> ClosedJaxpr of lax primitives, so that the type
// checker, the reference interpreter and both ONNX pipelines run StableHLO
// programs unchanged. docs/stablehlo.md lists the ops and their status.
//
// A file is either an ordinary program (its public `@main`, or its only
// public function, becomes the jaxpr: arguments -> invars, results ->
// outvars), or a StableHLO test (it contains `check.expect_*` ops): then
// every checked value becomes an output and the check's reference value its
// `expected_i`; `call @inputs()` results whose function only returns
// constants become the program inputs (`input_i`); `// -----` splits are
// concatenated into one program.
#ifndef JAX2ONNX_STABLEHLO_TRANSLATE_H_
#define JAX2ONNX_STABLEHLO_TRANSLATE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/array.h"
#include "jaxpr/jaxpr.h"
#include "stablehlo/mlir_ast.h"

namespace jax2onnx::stablehlo {

struct StablehloProgram {
  jaxpr::JaxprFile file;  // main jaxpr; header: source, rtol/atol notes
  // const_i (main constvars in order), input_i, expected_i.
  std::vector<std::pair<std::string, jaxpr::Array>> arrays;
  // Test files: the tolerance their check ops ask for (docs/stablehlo.md);
  // nullopt = the dtype defaults.
  std::optional<double> rtol;
  std::optional<double> atol;
  bool is_test = false;
};

absl::StatusOr<StablehloProgram> TranslateMlir(const MlirFile& file);

// Reads, parses and translates a `.mlir` / `.stablehlo` file.
absl::StatusOr<StablehloProgram> LoadStablehloFile(const std::string& path);
absl::StatusOr<StablehloProgram> StablehloFromText(absl::string_view text,
                                                   const std::string& path);

// True for paths this frontend reads (`.mlir`, `.stablehlo`).
bool IsStablehloPath(absl::string_view path);

}  // namespace jax2onnx::stablehlo

#endif  // JAX2ONNX_STABLEHLO_TRANSLATE_H_
