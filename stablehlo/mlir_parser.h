// Parser for the MLIR text of StableHLO programs (mlir_ast.h). Errors read
// `FILE:LINE:COL: error: ...`. Linear in the input: attribute values are
// scanned once and kept as views.
#ifndef JAX2ONNX_STABLEHLO_MLIR_PARSER_H_
#define JAX2ONNX_STABLEHLO_MLIR_PARSER_H_

#include <memory>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "stablehlo/mlir_ast.h"

namespace jax2onnx::stablehlo {

absl::StatusOr<MlirFile> ParseMlirText(std::shared_ptr<const std::string> text,
                                       std::string path);

// Parses a type spelling ("tensor<2x?xf32>", "!stablehlo.token", "i32").
MlirType ParseTypeText(absl::string_view text);

// `FILE:LINE:COL: error: message`.
absl::Status MlirError(const std::string& path, Loc loc,
                       absl::string_view message);

}  // namespace jax2onnx::stablehlo

#endif  // JAX2ONNX_STABLEHLO_MLIR_PARSER_H_
