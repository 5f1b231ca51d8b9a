// Dim arithmetic, dtype classes and the RuleContext checks shared by every
// rule family.
#include <algorithm>
#include <array>
#include <limits>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/dim_parser.h"
#include "jaxpr/typecheck/rules.h"

namespace jax2onnx::jaxpr::typecheck {

// ---- dims ----

std::optional<int64_t> DimConst(const DimExpr& d) {
  if (d.is_constant()) return d.constant_value();
  return std::nullopt;
}

DimExpr C(int64_t v) { return DimExpr::Constant(v); }

bool DimEqual(const DimExpr& a, const DimExpr& b) {
  if (a.is_constant() && b.is_constant()) {
    return a.constant_value() == b.constant_value();
  }
  if (a == b) return true;
  std::vector<std::string> symbols;
  a.CollectSymbols(&symbols);
  b.CollectSymbols(&symbols);
  // Assignments chosen so that distinct low-degree polynomials, floordiv and
  // mod terms disagree on at least one of them.
  static constexpr std::array<std::array<int64_t, 4>, 4> kValues = {
      {{2, 3, 5, 7}, {11, 13, 17, 19}, {6, 4, 9, 10}, {23, 29, 31, 37}}};
  for (size_t trial = 0; trial < kValues.size(); ++trial) {
    DimBindings bindings;
    for (size_t i = 0; i < symbols.size(); ++i) {
      bindings[symbols[i]] = kValues[trial][i % 4] + 41 * (i / 4);
    }
    auto va = a.Evaluate(bindings);
    auto vb = b.Evaluate(bindings);
    if (!va.ok() || !vb.ok()) return true;  // cannot tell: do not reject
    if (*va != *vb) return false;
  }
  return true;
}

// Constant arithmetic saturates instead of overflowing (dims from input can
// be near INT64_MAX): a saturated size never equals a declared one that is
// valid, so the mismatch is reported rather than wrapped.
int64_t SaturatingAdd(int64_t x, int64_t y) {
  int64_t r;
  if (__builtin_add_overflow(x, y, &r)) {
    return x > 0 ? std::numeric_limits<int64_t>::max()
                 : std::numeric_limits<int64_t>::min();
  }
  return r;
}

int64_t SaturatingMul(int64_t x, int64_t y) {
  int64_t r;
  if (__builtin_mul_overflow(x, y, &r)) {
    return (x > 0) == (y > 0) ? std::numeric_limits<int64_t>::max()
                              : std::numeric_limits<int64_t>::min();
  }
  return r;
}

DimExpr DimAdd(const DimExpr& a, const DimExpr& b) {
  if (a.is_constant() && b.is_constant()) {
    return C(SaturatingAdd(a.constant_value(), b.constant_value()));
  }
  if (a.is_constant() && a.constant_value() == 0) return b;
  if (b.is_constant() && b.constant_value() == 0) return a;
  return DimExpr::Sum({a, b});
}

DimExpr DimMulConst(const DimExpr& a, int64_t k) {
  if (a.is_constant()) return C(SaturatingMul(a.constant_value(), k));
  if (k == 1) return a;
  return DimExpr::Product({C(k), a});
}

DimExpr DimSub(const DimExpr& a, const DimExpr& b) {
  return DimAdd(a, DimMulConst(b, -1));
}

DimExpr DimMul(const DimExpr& a, const DimExpr& b) {
  if (a.is_constant()) return DimMulConst(b, a.constant_value());
  if (b.is_constant()) return DimMulConst(a, b.constant_value());
  return DimExpr::Product({a, b});
}

DimExpr DimFloorDiv(const DimExpr& a, const DimExpr& b) {
  if (a.is_constant() && b.is_constant() && b.constant_value() > 0) {
    const int64_t x = a.constant_value();
    const int64_t y = b.constant_value();
    int64_t q = x / y;
    if ((x % y != 0) && (x < 0)) --q;
    return C(q);
  }
  if (b.is_constant() && b.constant_value() == 1) return a;
  return DimExpr::FloorDiv(a, b);
}

DimExpr DimMax(const DimExpr& a, const DimExpr& b) {
  if (a.is_constant() && b.is_constant()) {
    return C(std::max(a.constant_value(), b.constant_value()));
  }
  return DimExpr::Max(a, b);
}

DimExpr DimMin(const DimExpr& a, const DimExpr& b) {
  if (a.is_constant() && b.is_constant()) {
    return C(std::min(a.constant_value(), b.constant_value()));
  }
  return DimExpr::Min(a, b);
}

bool ShapeEqual(const std::vector<DimExpr>& a, const std::vector<DimExpr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!DimEqual(a[i], b[i])) return false;
  }
  return true;
}

std::string ShapeString(const std::vector<DimExpr>& shape) {
  return absl::StrCat("[",
                      absl::StrJoin(shape, ",",
                                    [](std::string* out, const DimExpr& d) {
                                      out->append(d.ToString());
                                    }),
                      "]");
}

// ---- dtypes ----

unsigned ClassOf(const Aval& aval) {
  if (!aval.is_shaped()) return 0;
  const DType d = aval.dtype;
  if (d == DType::kBool) return kClassBool;
  if (IsSignedInt(d)) return kClassSignedInt;
  if (IsUnsignedInt(d)) return kClassUnsignedInt;
  if (IsFloat(d)) return kClassFloat;
  if (IsComplex(d)) return kClassComplex;
  // Narrow JAX dtypes the enum keeps as kOther.
  const std::string& n = aval.dtype_name;
  if (n == "i1" || n == "i2" || n == "i4") return kClassSignedInt;
  if (n == "u1" || n == "u2" || n == "u4") return kClassUnsignedInt;
  if (n.rfind("f8_", 0) == 0 || n.rfind("f4_", 0) == 0 ||
      n.rfind("f6_", 0) == 0) {
    return kClassFloat;
  }
  return kClassOther;
}

std::string ClassName(unsigned classes) {
  std::vector<std::string> names;
  if ((classes & kClassInt) == kClassInt) {
    names.push_back("integer");
  } else if (classes & kClassSignedInt) {
    names.push_back("signed integer");
  } else if (classes & kClassUnsignedInt) {
    names.push_back("unsigned integer");
  }
  if (classes & kClassBool) names.push_back("bool");
  if (classes & kClassFloat) names.push_back("floating");
  if (classes & kClassComplex) names.push_back("complex");
  return absl::StrJoin(names, " or ");
}

Aval MakeAval(DType dtype, std::vector<DimExpr> shape) {
  return Aval::Shaped(dtype, std::move(shape));
}

Aval WithShape(const Aval& aval, std::vector<DimExpr> shape) {
  // Field by field: copying `aval` whole would copy the shape it replaces.
  Aval out;
  out.kind = aval.kind;
  out.dtype = aval.dtype;
  out.dtype_name = aval.dtype_name;
  out.shape = std::move(shape);
  out.memory_space = aval.memory_space;
  out.opaque_text = aval.opaque_text;
  return out;
}

Aval WithDType(const Aval& aval, DType dtype) {
  Aval out = aval;
  out.dtype = dtype;
  out.dtype_name = std::string(ShortName(dtype));
  return out;
}

bool SameDType(const Aval& a, const Aval& b) {
  if (a.dtype != b.dtype) return false;
  return a.dtype != DType::kOther || a.dtype_name == b.dtype_name;
}

bool SameType(const Aval& a, const Aval& b) {
  if (a.is_shaped() != b.is_shaped()) return false;
  if (!a.is_shaped()) return a.opaque_text == b.opaque_text;
  return SameDType(a, b) && ShapeEqual(a.shape, b.shape);
}

std::string TypesString(const std::vector<Aval>& avals) {
  return absl::StrJoin(avals, ", ", [](std::string* out, const Aval& a) {
    out->append(a.ToString());
  });
}

absl::Status MatchTypes(const RuleContext& ctx, absl::string_view what,
                        const std::vector<Aval>& actual,
                        const std::vector<Aval>& expected) {
  if (actual.size() != expected.size()) {
    return ctx.Fail(absl::StrCat(what, ": expected ", expected.size(),
                                 " values (", TypesString(expected), "), got ",
                                 actual.size(), " (", TypesString(actual),
                                 ")"));
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    // Opaque avals (refs, keys' internals) are not compared.
    if (!actual[i].is_shaped() || !expected[i].is_shaped()) continue;
    if (!SameType(actual[i], expected[i])) {
      return ctx.Fail(absl::StrCat(what, ": expected ", TypesString(expected),
                                   ", got ", TypesString(actual)));
    }
  }
  return absl::OkStatus();
}

std::vector<Aval> InvarAvals(const ClosedJaxpr& jaxpr) {
  std::vector<Aval> out;
  for (const Var* v : jaxpr.invars) out.push_back(v->aval);
  return out;
}

std::vector<Aval> OutvarAvals(const ClosedJaxpr& jaxpr) {
  std::vector<Aval> out;
  for (const Atom& a : jaxpr.outvars) {
    if (a.is_literal()) {
      if (a.literal->aval.has_value()) {
        out.push_back(*a.literal->aval);
      } else {
        out.push_back(MakeAval(LiteralDType(*a.literal, nullptr), {}));
      }
    } else {
      out.push_back(a.var->aval);
    }
  }
  return out;
}

// ---- RuleContext checks ----

absl::Status RuleContext::Arity(int n) const {
  if (num_in() != n) {
    return Fail(absl::StrCat("takes ", n, " operand", n == 1 ? "" : "s",
                             ", got ", num_in()));
  }
  return AllShaped();
}

absl::Status RuleContext::ArityRange(int lo, int hi) const {
  if (num_in() < lo || (hi >= 0 && num_in() > hi)) {
    return Fail(absl::StrCat("takes ",
                             hi < 0     ? absl::StrCat("at least ", lo)
                             : lo == hi ? absl::StrCat(lo)
                                        : absl::StrCat(lo, " to ", hi),
                             " operands, got ", num_in()));
  }
  return absl::OkStatus();
}

absl::Status RuleContext::Outputs(int n) const {
  if (num_out() != n) {
    return Fail(absl::StrCat("has ", n, " result", n == 1 ? "" : "s",
                             ", declared ", num_out()));
  }
  return absl::OkStatus();
}

absl::Status RuleContext::Shaped(int i) const {
  if (!in(i).is_shaped()) {
    return Fail(absl::StrCat("operand ", i, " must be an array, got ",
                             in(i).ToString()));
  }
  return absl::OkStatus();
}

absl::Status RuleContext::AllShaped() const {
  for (int i = 0; i < num_in(); ++i) J2O_RETURN_IF_ERROR(Shaped(i));
  return absl::OkStatus();
}

absl::Status RuleContext::Variable(int i) const {
  if (is_literal(i)) {
    return Fail(absl::StrCat("operand ", i,
                             " must be a variable, got the literal ",
                             eqn_.inputs[i].literal->text));
  }
  return absl::OkStatus();
}

const std::vector<Aval>& RuleContext::ins() const {
  if (!ins_copy_.has_value()) {
    ins_copy_.emplace();
    ins_copy_->reserve(in_.size());
    for (const Aval* a : in_) ins_copy_->push_back(*a);
  }
  return *ins_copy_;
}

absl::Status RuleContext::DTypeIn(int i, unsigned classes) const {
  J2O_RETURN_IF_ERROR(Shaped(i));
  const unsigned c = ClassOf(in(i));
  if ((c & classes) == 0) {
    // An untyped literal's dtype is a guess; JAX would have typed it to fit.
    if (weak_[i] && c != kClassBool) return absl::OkStatus();
    return Fail(absl::StrCat("operand ", i, " must be ", ClassName(classes),
                             ", got ", in(i).ToString()));
  }
  return absl::OkStatus();
}

absl::Status RuleContext::SameDTypes(std::vector<int> indices) const {
  if (indices.empty()) {
    for (int i = 0; i < num_in(); ++i) indices.push_back(i);
  }
  int first = -1;
  for (int i : indices) {
    if (weak_[i]) continue;
    if (first < 0) {
      first = i;
      continue;
    }
    if (!SameDType(in(first), in(i))) {
      return Fail(absl::StrCat("operands must have the same dtype, got ",
                               TypesString(ins())));
    }
  }
  // An untyped literal takes the dtype of a typed operand of its kind
  // (LiteralDType). A bool, integer or complex operation has no untyped
  // literal of another kind: JAX prints those literals as True, 1 and
  // (1+0j), and it would have promoted a float one (`and 1.0 b` with a bool
  // b is no JAX program, and the converters lowered its 1.0 as an f32
  // constant ONNX Runtime refuses).
  if (first >= 0) {
    const DType context = in(first).dtype;
    for (int i : indices) {
      if (!weak_[i]) continue;
      const Literal::Kind kind = eqn_.inputs[i].literal->kind;
      const bool fits = kind == Literal::Kind::kElidedArray ? true
                        : context == DType::kBool ? kind == Literal::Kind::kBool
                        : IsInteger(context)      ? kind == Literal::Kind::kInt
                        : IsComplex(context) ? kind == Literal::Kind::kComplex
                                             : true;
      if (fits) continue;
      return Fail(absl::StrCat(
          "the untyped literal ", eqn_.inputs[i].literal->text, " (operand ", i,
          ") cannot be a ", in(first).ToString(), " like operand ", first));
    }
  }
  return absl::OkStatus();
}

absl::Status RuleContext::Rank(int i, int rank) const {
  J2O_RETURN_IF_ERROR(Shaped(i));
  if (in(i).rank() != rank) {
    return Fail(absl::StrCat("operand ", i, " must have rank ", rank, ", got ",
                             in(i).ToString()));
  }
  return absl::OkStatus();
}

absl::Status RuleContext::Axis(int64_t axis, int rank,
                               absl::string_view what) const {
  if (axis < 0 || axis >= rank) {
    return Fail(
        absl::StrCat(what, "=", axis, " is out of range for rank ", rank));
  }
  return absl::OkStatus();
}

absl::Status RuleContext::Permutation(const std::vector<int64_t>& perm, int n,
                                      absl::string_view what) const {
  std::vector<bool> seen(n, false);
  bool ok = static_cast<int>(perm.size()) == n;
  for (int64_t p : perm) {
    if (p < 0 || p >= n || seen[p]) {
      ok = false;
      break;
    }
    seen[p] = true;
  }
  if (!ok) {
    return Fail(absl::StrCat(what, "=(", absl::StrJoin(perm, ", "),
                             ") is not a permutation of 0..", n - 1));
  }
  return absl::OkStatus();
}

absl::Status RuleContext::AxesIn(const std::vector<int64_t>& axes, int rank,
                                 absl::string_view what) const {
  std::set<int64_t> seen;
  for (int64_t a : axes) {
    J2O_RETURN_IF_ERROR(Axis(a, rank, what));
    if (!seen.insert(a).second) {
      return Fail(absl::StrCat(what, " repeats axis ", a));
    }
  }
  return absl::OkStatus();
}

// ---- params ----

absl::StatusOr<int64_t> RuleContext::Int(absl::string_view key) const {
  return params().GetInt(key);
}
absl::StatusOr<std::vector<int64_t>> RuleContext::Ints(
    absl::string_view key) const {
  return params().GetIntList(key);
}
absl::StatusOr<bool> RuleContext::Bool(absl::string_view key) const {
  return params().GetBool(key);
}
absl::StatusOr<DType> RuleContext::DTypeParam(absl::string_view key) const {
  return params().GetDType(key);
}
absl::Status RuleContext::Has(absl::string_view key) const {
  return params().Get(key).status();
}

absl::StatusOr<std::vector<DimExpr>> RuleContext::DimsOf(
    const ParamValue& value, absl::string_view what) const {
  if (value.kind() == ParamValue::Kind::kOpaque && value.text().size() >= 2 &&
      value.text().front() == '(' && value.text().back() == ')') {
    // A tuple holding symbolic expressions (`(3*B,)`) kept as text: split
    // at depth-0 commas.
    const std::string& t = value.text();
    std::vector<DimExpr> out;
    const std::string inner = t.substr(1, t.size() - 2);
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= inner.size(); ++i) {
      const char c = i < inner.size() ? inner[i] : ',';
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if (c != ',' || depth != 0) continue;
      std::string item(
          absl::StripAsciiWhitespace(inner.substr(start, i - start)));
      start = i + 1;
      if (item.empty()) continue;
      DimExpr d;
      std::string error;
      size_t offset = 0;
      if (!ParseDimExpr(item, 64, &d, &error, &offset)) {
        return Fail(
            absl::StrCat(what, ": entry '", item, "' is not a dimension"));
      }
      out.push_back(std::move(d));
    }
    return out;
  }
  if (value.kind() != ParamValue::Kind::kTuple &&
      value.kind() != ParamValue::Kind::kList) {
    return Fail(
        absl::StrCat(what, " must be a tuple of dims, got ", value.ToString()));
  }
  std::vector<DimExpr> out;
  for (const ParamValue& item : value.items()) {
    if (item.kind() == ParamValue::Kind::kInt) {
      out.push_back(C(item.int_value()));
      continue;
    }
    if (item.kind() == ParamValue::Kind::kNone) {
      return Fail(absl::StrCat(what, " holds None"));
    }
    DimExpr d;
    std::string error;
    size_t offset = 0;
    if (!ParseDimExpr(item.ToString(), 64, &d, &error, &offset)) {
      return Fail(absl::StrCat(what, ": entry '", item.ToString(),
                               "' is not a dimension"));
    }
    out.push_back(std::move(d));
  }
  return out;
}

absl::StatusOr<std::vector<DimExpr>> RuleContext::Dims(
    absl::string_view key) const {
  J2O_ASSIGN_OR_RETURN(const ParamValue* v, params().Get(key));
  return DimsOf(*v, absl::StrCat("param '", key, "'"));
}

absl::StatusOr<const ClosedJaxpr*> RuleContext::Jaxpr(
    absl::string_view key) const {
  J2O_ASSIGN_OR_RETURN(const ClosedJaxpr* j, params().GetJaxpr(key));
  if (j == nullptr) return Fail(absl::StrCat("param '", key, "' is empty"));
  J2O_RETURN_IF_ERROR(CheckJaxpr(*j));
  return j;
}

absl::StatusOr<std::vector<const ClosedJaxpr*>> RuleContext::Jaxprs(
    absl::string_view key) const {
  J2O_ASSIGN_OR_RETURN(std::vector<const ClosedJaxpr*> js,
                       params().GetJaxprs(key));
  for (const ClosedJaxpr* j : js) {
    if (j == nullptr) return Fail(absl::StrCat("param '", key, "' is empty"));
    J2O_RETURN_IF_ERROR(CheckJaxpr(*j));
  }
  return js;
}

}  // namespace jax2onnx::jaxpr::typecheck
