// The data model of a printed ClosedJaxpr: avals, variables, literals,
// equations, (closed) jaxprs, and a parsed file with its shared `let` jaxprs
// and `# key: value` bundle header.
#ifndef JAX2ONNX_JAXPR_JAXPR_H_
#define JAX2ONNX_JAXPR_JAXPR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/dim_expr.h"
#include "jaxpr/dtype.h"
#include "jaxpr/params.h"

namespace jax2onnx::jaxpr {

// The type of a value: dtype + shape (ints or symbolic), or an aval the
// converter does not compute with (Tok, Ref{...}, MemRef<...>{...}), which is
// kept as text.
struct Aval {
  enum class Kind { kShaped, kToken, kOpaque };
  Kind kind = Kind::kShaped;
  DType dtype = DType::kInvalid;
  // The printed dtype ("f32", "f8_e4m3fn", "key<fry>"); authoritative when
  // dtype == kOther.
  std::string dtype_name;
  std::vector<DimExpr> shape;
  // Per-dim explicit-mesh sharding text after `@` ("data", "(x,y)"), or ""
  // for all dims. Empty vector when no dim is sharded.
  std::vector<std::string> dim_sharding;
  std::string memory_space;  // "host" for f32<host>[8]; "" for device
  std::string suffix;        // "{V:x}" groups after `]`, verbatim
  std::string opaque_text;   // kOpaque / kToken: the whole printed aval

  static Aval Shaped(DType dtype, std::vector<DimExpr> shape);
  static Aval Static(DType dtype, const std::vector<int64_t>& shape);

  int rank() const { return static_cast<int>(shape.size()); }
  bool is_shaped() const { return kind == Kind::kShaped; }
  // True when every dim is a constant.
  bool IsStatic() const;
  std::optional<std::vector<int64_t>> StaticShape() const;
  // Concrete shape under symbol bindings.
  absl::StatusOr<std::vector<int64_t>> ConcreteShape(
      const DimBindings& bindings) const;
  // As JAX prints it: "f32[2*b + 1,4]", "Tok", "Ref{f32[3]}".
  std::string ToString() const;

  friend bool operator==(const Aval& a, const Aval& b);
  friend bool operator!=(const Aval& a, const Aval& b) { return !(a == b); }
};

// A variable binding. `is_drop` marks `_` (DropVar) outputs. Identity is the
// object: each jaxpr owns its Vars and atoms point at them.
struct Var {
  std::string name;
  Aval aval;
  bool is_drop = false;
};

struct Literal {
  enum class Kind { kInt, kFloat, kBool, kComplex, kElidedArray };
  Kind kind = Kind::kInt;
  std::string text;  // value as printed: "1.0", "-2147483648", "[...]"
  int64_t int_value = 0;
  uint64_t uint_value = 0;  // exact for u64 literals above INT64_MAX
  double float_value = 0;   // also the real part of complex
  double imag_value = 0;
  bool bool_value = false;
  // Typed literals (`3.0:f32[]`, >= 0.6.1) carry their aval; untyped ones
  // take their dtype from context.
  std::optional<Aval> aval;
  // For `[...]` literals: k-th elided literal of the file (npz literal_k).
  int elided_index = -1;
};

// An operand or output: a variable or a literal.
struct Atom {
  Var* var = nullptr;
  std::shared_ptr<Literal> literal;

  static Atom OfVar(Var* v) { return Atom{v, nullptr}; }
  static Atom OfLiteral(Literal lit) {
    return Atom{nullptr, std::make_shared<Literal>(std::move(lit))};
  }
  bool is_literal() const { return literal != nullptr; }
};

struct SourceLoc {
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based
};

struct Eqn {
  std::string primitive;
  Params params;
  std::vector<Atom> inputs;
  std::vector<Var*> outputs;  // DropVars included (is_drop)
  SourceLoc loc;
};

class ClosedJaxpr {
 public:
  std::vector<Var*> constvars;
  std::vector<Var*> invars;
  std::vector<Eqn> eqns;
  std::vector<Atom> outvars;
  std::vector<std::string> effects;  // `: { ... }` when printed
  SourceLoc loc;                     // of the opening `{`

  // Creates a Var owned by this jaxpr.
  Var* NewVar(std::string name, Aval aval, bool is_drop = false);
  const std::vector<std::unique_ptr<Var>>& owned_vars() const { return vars_; }

 private:
  std::vector<std::unique_ptr<Var>> vars_;
};

// One parsed `.jaxpr` file.
struct JaxprFile {
  std::string path;  // for messages
  // `# key: value` header lines in order (keys lower-cased as written).
  std::vector<std::pair<std::string, std::string>> header;
  // `let NAME = { ... } in` definitions in order.
  std::vector<std::pair<std::string, std::shared_ptr<ClosedJaxpr>>> shared;
  std::shared_ptr<ClosedJaxpr> main;
  // Number of `[...]` literals in the whole file (npz literal_0..n-1).
  int num_elided_literals = 0;

  // First header value for `key`, or nullopt.
  std::optional<std::string> Header(absl::string_view key) const;
};

// The dtype of a literal: its printed aval when typed (JAX >= 0.6.1);
// otherwise (older texts print bare `2.0`) that of a variable operand of the
// same kind in `context` (an int literal may also take a float operand's
// dtype), else JAX's default (bool / int32 / float32 / complex64).
DType LiteralDType(const Literal& literal, const Eqn* context);

// A dimension as a param, in the form the jaxpr parser reads back: an int,
// a name (`dim=b`), or an opaque expression (`dim=2*b + 1`).
inline ParamValue DimParam(const DimExpr& d) {
  if (d.is_constant()) return ParamValue::Int(d.constant_value());
  if (d.kind() == DimExpr::Kind::kSymbol) return ParamValue::Name(d.symbol());
  return ParamValue::Opaque(d.ToString());
}

// Visits every equation of a jaxpr and, depth-first, of the jaxprs in its
// params (each shared jaxpr once per reference).
void ForEachEqn(const ClosedJaxpr& jaxpr,
                const std::function<void(const Eqn&)>& fn);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_JAXPR_H_
