// The syntax tree of the MLIR text JAX prints for StableHLO programs
// (`jax.jit(f).lower(...).as_text()`, `jax.export(...).mlir_module()`, and
// StableHLO's own test files). It is deliberately generic: an operation keeps
// its operands, bare words, keyword attributes and type signature as the
// pretty or generic form spelled them, with attribute values as raw text
// (string_views into the file, so a multi-megabyte hex constant is never
// copied); the translation (translate.h) interprets them per op.
#ifndef JAX2ONNX_STABLEHLO_MLIR_AST_H_
#define JAX2ONNX_STABLEHLO_MLIR_AST_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <utility>
#include <vector>

namespace jax2onnx::stablehlo {

struct Loc {
  int line = 0;  // 1-based
  int col = 0;   // 1-based
};

// A type as written: tensor<2x?xf32>, tensor<i1>, !stablehlo.token,
// tuple<...>, complex<f32>, a bare element type (i64), or anything else
// (kept as text).
struct MlirType {
  enum class Kind { kTensor, kToken, kTuple, kScalar, kOther };
  Kind kind = Kind::kOther;
  std::string element;         // "f32", "i1", "ui8", "complex<f64>", "bf16"
  std::vector<int64_t> dims;   // -1 for `?`
  std::string encoding;        // text after `,` inside tensor<...>
  std::vector<MlirType> tuple;  // kTuple
  std::string text;            // the whole spelling
};

struct Operation;

struct Block {
  std::vector<std::pair<std::string, MlirType>> args;  // ^bb0(%a: t, ...)
  std::vector<Operation> ops;
  Loc loc;
};

struct Region {
  std::vector<Block> blocks;
  Loc loc;
};

struct Operation {
  std::string name;  // "stablehlo.add", "func.return", "check.expect_eq"
  Loc loc;
  bool generic = false;  // printed as "name"(...)
  // Result value names, expanded: `%0:2 =` gives "%0#0", "%0#1".
  std::vector<std::string> results;
  // Operand references in order ("%0", "%0#1", "%arg0").
  std::vector<std::string> operands;
  // Pretty-form bare words in order: "LT", "FLOAT", "applies",
  // "stablehlo.add", "across".
  std::vector<absl::string_view> words;
  // Pretty-form positional attribute values: "[0:2, 1:3]" of slice,
  // "dense<...>" of constant.
  std::vector<absl::string_view> positional;
  // `name = value` pairs of the pretty form, the properties `<{...}>` and the
  // attribute dictionary `{...}` (values raw; a trailing `: type` kept).
  std::vector<std::pair<absl::string_view, absl::string_view>> attrs;
  std::string symbol;  // @callee of call / custom_call
  // Pretty reduce: `(%x init: %y)` groups, and chlo.scan's `(%x) inits(%y)`:
  // operands are inputs then inits.
  int num_reduce_inputs = -1;
  // Pretty while: `%iterArg = %x` names, bound as the regions' block args.
  std::vector<std::string> iter_args;
  // Signature: `(a, b) -> (c)` sets both lists; a plain list `: a, b` only
  // `plain_types`.
  bool has_arrow = false;
  std::vector<MlirType> input_types;
  std::vector<MlirType> result_types;
  std::vector<MlirType> plain_types;
  std::vector<Region> regions;

  // The attribute's raw value, or nullopt.
  std::optional<absl::string_view> Attr(absl::string_view key) const;
  bool HasWord(absl::string_view word) const;
};

struct FuncArg {
  std::string name;  // %arg0
  MlirType type;
  absl::string_view attrs;  // raw `{...}` or empty
};

struct Func {
  std::string name;  // without @
  bool is_public = true;
  std::vector<FuncArg> args;
  std::vector<MlirType> results;
  std::vector<absl::string_view> result_attrs;
  Region body;
  Loc loc;
};

struct Module {
  std::string name;  // @jit_f, or "" for a bare list of functions
  absl::string_view attrs;
  std::vector<Func> funcs;
  Loc loc;
  int first_line = 1;  // of its `// -----` split
};

struct MlirFile {
  std::string path;
  std::shared_ptr<const std::string> text;  // the views point into this
  std::vector<Module> modules;  // one per `// -----` split (or per module)
};

}  // namespace jax2onnx::stablehlo

#endif  // JAX2ONNX_STABLEHLO_MLIR_AST_H_
