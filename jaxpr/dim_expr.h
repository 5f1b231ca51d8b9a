// Symbolic dimension expressions as JAX prints them in avals: `B`, `2*b + 1`,
// `- b + 4`, `b^2`, `mod(b, 2)`, `floordiv(b, 2)`, `max(a, b)`, `min(a, 4)`,
// `non_negative(b - 1)`. Immutable value type with cheap copies.
#ifndef JAX2ONNX_JAXPR_DIM_EXPR_H_
#define JAX2ONNX_JAXPR_DIM_EXPR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace jax2onnx::jaxpr {

// Symbol name -> concrete size.
using DimBindings = absl::flat_hash_map<std::string, int64_t>;

class DimExpr {
 public:
  enum class Kind {
    kConstant,
    kSymbol,
    kSum,          // operands added, printed in stored order
    kProduct,      // operands multiplied; a leading constant is the coefficient
    kPow,          // operands[0] ^ exponent()
    kFloorDiv,     // floordiv(a, b)
    kMod,          // mod(a, b)
    kMax,          // max(a, b)
    kMin,          // min(a, b)
    kNonNegative,  // non_negative(a) == max(a, 0)
  };

  DimExpr() : DimExpr(Constant(0)) {}

  static DimExpr Constant(int64_t value);
  static DimExpr Symbol(std::string name);
  static DimExpr Sum(std::vector<DimExpr> terms);
  static DimExpr Product(std::vector<DimExpr> factors);
  static DimExpr Pow(DimExpr base, int64_t exponent);
  static DimExpr FloorDiv(DimExpr a, DimExpr b);
  static DimExpr Mod(DimExpr a, DimExpr b);
  static DimExpr Max(DimExpr a, DimExpr b);
  static DimExpr Min(DimExpr a, DimExpr b);
  static DimExpr NonNegative(DimExpr a);

  Kind kind() const { return node_ ? node_->kind : Kind::kConstant; }
  bool is_constant() const { return node_ == nullptr; }
  int64_t constant_value() const {  // kConstant
    return node_ ? node_->value : constant_;
  }
  const std::string& symbol() const { return node_->name; }  // kSymbol
  int64_t exponent() const { return node_->value; }          // kPow
  const std::vector<DimExpr>& operands() const {
    return node_ ? node_->operands : NoOperands();
  }

  // Value under the bindings; an error names any unbound symbol. Division
  // and mod follow Python (floor) semantics; division by zero is an error.
  absl::StatusOr<int64_t> Evaluate(const DimBindings& bindings) const;

  // JAX's text: `2*b + 1`, `- b + 4`, `mod(b, 2)`.
  std::string ToString() const;

  // Distinct symbols in order of first appearance, appended to `out`.
  void CollectSymbols(std::vector<std::string>* out) const;

  friend bool operator==(const DimExpr& a, const DimExpr& b);
  friend bool operator!=(const DimExpr& a, const DimExpr& b) {
    return !(a == b);
  }

 private:
  struct Node {
    Kind kind;
    int64_t value = 0;
    std::string name;
    std::vector<DimExpr> operands;
  };
  explicit DimExpr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  // Not kConstant: constants live inline in `constant_`.
  static DimExpr Make(Kind kind, std::vector<DimExpr> operands,
                      int64_t value = 0);
  static const std::vector<DimExpr>& NoOperands();

  // Null for a constant, whose value is `constant_`: most dims are
  // constants, and a shape is copied with every aval, so a constant costs
  // no allocation and no reference count.
  std::shared_ptr<const Node> node_;
  int64_t constant_ = 0;
};

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_DIM_EXPR_H_
