#include "jaxpr/dim_expr.h"

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace jax2onnx::jaxpr {
namespace {

int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t FloorModInt(int64_t a, int64_t b) { return a - FloorDivInt(a, b) * b; }

}  // namespace

DimExpr DimExpr::Make(Kind kind, std::vector<DimExpr> operands, int64_t value) {
  auto node = std::make_shared<Node>();
  node->kind = kind;
  node->value = value;
  node->operands = std::move(operands);
  return DimExpr(std::move(node));
}

DimExpr DimExpr::Constant(int64_t value) {
  DimExpr d(nullptr);
  d.constant_ = value;
  return d;
}

const std::vector<DimExpr>& DimExpr::NoOperands() {
  static const std::vector<DimExpr>* none = new std::vector<DimExpr>();
  return *none;
}

DimExpr DimExpr::Symbol(std::string name) {
  auto node = std::make_shared<Node>();
  node->kind = Kind::kSymbol;
  node->name = std::move(name);
  return DimExpr(std::move(node));
}

DimExpr DimExpr::Sum(std::vector<DimExpr> terms) {
  // A sum of sums is one flat sum, as its printed form (`a - b + c`) reads
  // back: a nested sum would print `a + - b + c`.
  std::vector<DimExpr> flat;
  for (DimExpr& t : terms) {
    if (t.kind() == Kind::kSum) {
      flat.insert(flat.end(), t.operands().begin(), t.operands().end());
    } else {
      flat.push_back(std::move(t));
    }
  }
  if (flat.size() == 1) return flat[0];
  return Make(Kind::kSum, std::move(flat));
}

DimExpr DimExpr::Product(std::vector<DimExpr> factors) {
  if (factors.size() == 1) return factors[0];
  return Make(Kind::kProduct, std::move(factors));
}

DimExpr DimExpr::Pow(DimExpr base, int64_t exponent) {
  return Make(Kind::kPow, {std::move(base)}, exponent);
}
DimExpr DimExpr::FloorDiv(DimExpr a, DimExpr b) {
  return Make(Kind::kFloorDiv, {std::move(a), std::move(b)});
}
DimExpr DimExpr::Mod(DimExpr a, DimExpr b) {
  return Make(Kind::kMod, {std::move(a), std::move(b)});
}
DimExpr DimExpr::Max(DimExpr a, DimExpr b) {
  return Make(Kind::kMax, {std::move(a), std::move(b)});
}
DimExpr DimExpr::Min(DimExpr a, DimExpr b) {
  return Make(Kind::kMin, {std::move(a), std::move(b)});
}
DimExpr DimExpr::NonNegative(DimExpr a) {
  return Make(Kind::kNonNegative, {std::move(a)});
}

absl::StatusOr<int64_t> DimExpr::Evaluate(const DimBindings& bindings) const {
  switch (kind()) {
    case Kind::kConstant:
      return constant_value();
    case Kind::kSymbol: {
      auto it = bindings.find(symbol());
      if (it == bindings.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("symbolic dimension '", symbol(), "' is not bound"));
      }
      return it->second;
    }
    default:
      break;
  }
  std::vector<int64_t> vals;
  for (const DimExpr& op : operands()) {
    auto v = op.Evaluate(bindings);
    if (!v.ok()) return v.status();
    vals.push_back(*v);
  }
  // Dims come from input: overflow is an error, never undefined behaviour.
  auto overflow = [&]() {
    return absl::InvalidArgumentError(
        absl::StrCat("evaluating '", ToString(), "' overflows int64"));
  };
  switch (kind()) {
    case Kind::kSum: {
      int64_t s = 0;
      for (int64_t v : vals) {
        if (__builtin_add_overflow(s, v, &s)) return overflow();
      }
      return s;
    }
    case Kind::kProduct: {
      int64_t p = 1;
      for (int64_t v : vals) {
        if (__builtin_mul_overflow(p, v, &p)) return overflow();
      }
      return p;
    }
    case Kind::kPow: {
      const int64_t base = vals[0];
      if (base == 0 || base == 1) return exponent() == 0 ? 1 : base;
      if (base == -1) return exponent() % 2 == 0 ? 1 : -1;
      int64_t p = 1;
      // |base| >= 2: at most 63 multiplications before overflow.
      for (int64_t i = 0; i < exponent(); ++i) {
        if (__builtin_mul_overflow(p, base, &p)) return overflow();
      }
      return p;
    }
    case Kind::kFloorDiv:
    case Kind::kMod:
      if (vals[1] == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("division by zero evaluating '", ToString(), "'"));
      }
      if (vals[1] == -1 && vals[0] == std::numeric_limits<int64_t>::min()) {
        return overflow();
      }
      return kind() == Kind::kFloorDiv ? FloorDivInt(vals[0], vals[1])
                                       : FloorModInt(vals[0], vals[1]);
    case Kind::kMax:
      return std::max(vals[0], vals[1]);
    case Kind::kMin:
      return std::min(vals[0], vals[1]);
    case Kind::kNonNegative:
      return std::max<int64_t>(vals[0], 0);
    default:
      return absl::InternalError("bad DimExpr kind");
  }
}

namespace {

// A sum term split into sign and magnitude text, so sums print as JAX does:
// `- b + 4`, `b - 1`, `- 2*b + 1`.
std::pair<bool, std::string> SignedTerm(const DimExpr& term) {
  if (term.kind() == DimExpr::Kind::kConstant && term.constant_value() < 0) {
    return {true, absl::StrCat(-term.constant_value())};
  }
  if (term.kind() == DimExpr::Kind::kProduct && !term.operands().empty() &&
      term.operands()[0].is_constant() &&
      term.operands()[0].constant_value() < 0) {
    const int64_t c = -term.operands()[0].constant_value();
    std::vector<DimExpr> rest(term.operands().begin() + 1,
                              term.operands().end());
    std::string body = DimExpr::Product(rest).ToString();
    if (rest.empty()) body = "1";
    return {true, c == 1 ? body : absl::StrCat(c, "*", body)};
  }
  return {false, term.ToString()};
}

}  // namespace

std::string DimExpr::ToString() const {
  switch (kind()) {
    case Kind::kConstant:
      return absl::StrCat(constant_value());
    case Kind::kSymbol:
      return symbol();
    case Kind::kSum: {
      std::string out;
      for (size_t i = 0; i < operands().size(); ++i) {
        auto [negative, text] = SignedTerm(operands()[i]);
        if (i == 0) {
          out = negative ? absl::StrCat("- ", text) : text;
        } else {
          absl::StrAppend(&out, negative ? " - " : " + ", text);
        }
      }
      return out;
    }
    case Kind::kProduct: {
      std::string out;
      for (size_t i = 0; i < operands().size(); ++i) {
        const DimExpr& f = operands()[i];
        std::string text = f.ToString();
        if (f.kind() == Kind::kSum) text = absl::StrCat("(", text, ")");
        if (i == 0 && f.is_constant() && f.constant_value() == -1 &&
            operands().size() > 1) {
          out = "-";
          continue;
        }
        absl::StrAppend(&out, (i == 0 || out == "-") ? "" : "*", text);
      }
      return out;
    }
    case Kind::kPow: {
      std::string base = operands()[0].ToString();
      if (operands()[0].kind() != Kind::kSymbol) {
        base = absl::StrCat("(", base, ")");
      }
      return absl::StrCat(base, "^", exponent());
    }
    case Kind::kFloorDiv:
      return absl::StrCat("floordiv(", operands()[0].ToString(), ", ",
                          operands()[1].ToString(), ")");
    case Kind::kMod:
      return absl::StrCat("mod(", operands()[0].ToString(), ", ",
                          operands()[1].ToString(), ")");
    case Kind::kMax:
      return absl::StrCat("max(", operands()[0].ToString(), ", ",
                          operands()[1].ToString(), ")");
    case Kind::kMin:
      return absl::StrCat("min(", operands()[0].ToString(), ", ",
                          operands()[1].ToString(), ")");
    case Kind::kNonNegative:
      return absl::StrCat("non_negative(", operands()[0].ToString(), ")");
  }
  return "?";
}

void DimExpr::CollectSymbols(std::vector<std::string>* out) const {
  if (kind() == Kind::kSymbol) {
    if (std::find(out->begin(), out->end(), symbol()) == out->end()) {
      out->push_back(symbol());
    }
    return;
  }
  for (const DimExpr& op : operands()) op.CollectSymbols(out);
}

bool operator==(const DimExpr& a, const DimExpr& b) {
  if (a.is_constant() || b.is_constant()) {
    return a.is_constant() && b.is_constant() &&
           a.constant_value() == b.constant_value();
  }
  if (a.node_ == b.node_) return true;
  if (a.kind() != b.kind() || a.node_->value != b.node_->value ||
      a.node_->name != b.node_->name ||
      a.operands().size() != b.operands().size()) {
    return false;
  }
  for (size_t i = 0; i < a.operands().size(); ++i) {
    if (a.operands()[i] != b.operands()[i]) return false;
  }
  return true;
}

}  // namespace jax2onnx::jaxpr
