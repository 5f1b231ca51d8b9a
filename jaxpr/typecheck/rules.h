// Internal interface between the type-check driver (typecheck.cc) and the
// per-family rule files (rules_*.cc). A rule sees one equation through a
// RuleContext, checks arity, operand dtypes and params, and states the result
// types it computes with SetResult; the driver compares those with the
// declared binders and formats every error with the equation's location.
#ifndef JAX2ONNX_JAXPR_TYPECHECK_RULES_H_
#define JAX2ONNX_JAXPR_TYPECHECK_RULES_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/mesh.h"

namespace jax2onnx::jaxpr::typecheck {

// ---- dims ----

// JAX's `definitely_equal` on dims: equal constants, structurally equal
// expressions, or symbolic expressions that agree at several assignments of
// their symbols (symbolic dims are >= 1; a disagreement proves them
// different, and an expression that cannot be evaluated is not rejected).
bool DimEqual(const DimExpr& a, const DimExpr& b);
// The value when the dim is a constant.
std::optional<int64_t> DimConst(const DimExpr& d);
DimExpr DimAdd(const DimExpr& a, const DimExpr& b);
DimExpr DimSub(const DimExpr& a, const DimExpr& b);
DimExpr DimMul(const DimExpr& a, const DimExpr& b);
DimExpr DimMulConst(const DimExpr& a, int64_t k);
// floor(a / b) for b > 0.
DimExpr DimFloorDiv(const DimExpr& a, const DimExpr& b);
DimExpr DimMax(const DimExpr& a, const DimExpr& b);
DimExpr DimMin(const DimExpr& a, const DimExpr& b);
DimExpr C(int64_t v);  // constant dim
bool ShapeEqual(const std::vector<DimExpr>& a, const std::vector<DimExpr>& b);
std::string ShapeString(const std::vector<DimExpr>& shape);

// ---- dtypes ----

// Dtype classes as JAX's naryop tables name them.
enum DTypeClass : unsigned {
  kClassBool = 1u << 0,
  kClassSignedInt = 1u << 1,
  kClassUnsignedInt = 1u << 2,
  kClassFloat = 1u << 3,
  kClassComplex = 1u << 4,
  kClassOther = 1u << 5,  // f8_*, i4, key<...>, float0: passed through
  kClassInt = kClassSignedInt | kClassUnsignedInt,
  kClassNum = kClassInt | kClassFloat | kClassComplex,
  kClassAny = kClassNum | kClassBool,
  kClassBoolOrInt = kClassInt | kClassBool,
  kClassOrdered = kClassInt | kClassFloat | kClassBool,
};
unsigned ClassOf(const Aval& aval);
std::string ClassName(unsigned classes);  // "floating or complex"

// ---- the context a rule sees ----

class RuleContext {
 public:
  // `check_jaxpr` type checks a nested jaxpr (with this equation as the
  // enclosing location) and is provided by the driver.
  // `in` points at the operand avals (the vars' own, or avals the caller
  // keeps alive for literals): the rule context runs once per equation and
  // copying every operand's aval was most of the type checker's cost.
  // `mesh_axis_sizes`: TypeCheckOptions::mesh_axis_sizes (outlives the
  // context).
  RuleContext(const Eqn& eqn, std::vector<const Aval*> in,
              std::vector<bool> weak,
              std::function<absl::Status(const ClosedJaxpr&)> check_jaxpr,
              const std::vector<MeshAxis>& mesh_axis_sizes)
      : eqn_(eqn),
        in_(std::move(in)),
        weak_(std::move(weak)),
        check_jaxpr_(std::move(check_jaxpr)),
        mesh_axis_sizes_(mesh_axis_sizes) {}

  const Eqn& eqn() const { return eqn_; }
  const Params& params() const { return eqn_.params; }
  const std::vector<MeshAxis>& mesh_axis_sizes() const {
    return mesh_axis_sizes_;
  }
  int num_in() const { return static_cast<int>(in_.size()); }
  int num_out() const { return static_cast<int>(eqn_.outputs.size()); }
  const Aval& in(int i) const { return *in_[i]; }
  // All operand avals as one vector (copied on first use; the common rules
  // read in(i)).
  const std::vector<Aval>& ins() const;
  const Aval& out(int i) const { return eqn_.outputs[i]->aval; }
  bool is_literal(int i) const { return eqn_.inputs[i].is_literal(); }
  // An untyped literal (printed before JAX 0.6.1 as a bare `2.0`): its dtype
  // was guessed from context, so dtype-equality rules do not apply to it.
  bool weak(int i) const { return weak_[i]; }

  // An error message (the driver adds location and primitive).
  absl::Status Fail(absl::string_view message) const {
    return absl::InvalidArgumentError(message);
  }

  // ---- checks ----
  absl::Status Arity(int n) const;                // exactly n operands
  absl::Status ArityRange(int lo, int hi) const;  // lo <= n <= hi (hi<0: any)
  absl::Status Outputs(int n) const;              // exactly n binders
  absl::Status Shaped(int i) const;               // operand i is an array
  absl::Status AllShaped() const;
  absl::Status Variable(int i) const;  // operand i must not be a literal
  absl::Status DTypeIn(int i, unsigned classes) const;
  // Operands in `indices` (all when empty) share one dtype; untyped literals
  // are exempt.
  absl::Status SameDTypes(std::vector<int> indices = {}) const;
  absl::Status Rank(int i, int rank) const;
  absl::Status Axis(int64_t axis, int rank, absl::string_view what) const;
  // A permutation of 0..n-1.
  absl::Status Permutation(const std::vector<int64_t>& perm, int n,
                           absl::string_view what) const;
  // Distinct, in range.
  absl::Status AxesIn(const std::vector<int64_t>& axes, int rank,
                      absl::string_view what) const;

  // ---- params ----
  absl::StatusOr<int64_t> Int(absl::string_view key) const;
  absl::StatusOr<std::vector<int64_t>> Ints(absl::string_view key) const;
  absl::StatusOr<bool> Bool(absl::string_view key) const;
  absl::StatusOr<DType> DTypeParam(absl::string_view key) const;
  absl::Status Has(absl::string_view key) const;
  // A tuple of dims that may be symbolic (`new_sizes=(b, 4)`): ints, or
  // names resolved against the symbols of the operand/binder avals.
  absl::StatusOr<std::vector<DimExpr>> Dims(absl::string_view key) const;
  absl::StatusOr<std::vector<DimExpr>> DimsOf(const ParamValue& value,
                                              absl::string_view what) const;
  // Nested jaxprs: fetched and type checked.
  absl::StatusOr<const ClosedJaxpr*> Jaxpr(absl::string_view key) const;
  absl::StatusOr<std::vector<const ClosedJaxpr*>> Jaxprs(
      absl::string_view key) const;
  absl::Status CheckJaxpr(const ClosedJaxpr& jaxpr) const {
    return check_jaxpr_(jaxpr);
  }

  // ---- results ----
  // The result types the rule computes, one per binder (nullopt: not
  // computed, e.g. a partial rule). The count must match the binders.
  void SetResults(std::vector<std::optional<Aval>> results) {
    results_ = std::move(results);
    has_results_ = true;
  }
  void SetResult(Aval result) {
    // Not SetResults({...}): an initializer list would copy the aval.
    results_.clear();
    results_.emplace_back(std::move(result));
    has_results_ = true;
  }
  // Only the dtype of result i is known.
  bool has_results() const { return has_results_; }
  const std::vector<std::optional<Aval>>& results() const { return results_; }

 private:
  const Eqn& eqn_;
  std::vector<const Aval*> in_;
  mutable std::optional<std::vector<Aval>> ins_copy_;
  std::vector<bool> weak_;
  std::function<absl::Status(const ClosedJaxpr&)> check_jaxpr_;
  const std::vector<MeshAxis>& mesh_axis_sizes_;
  std::vector<std::optional<Aval>> results_;
  bool has_results_ = false;
};

// `aval` with the same dtype and a new shape.
Aval WithShape(const Aval& aval, std::vector<DimExpr> shape);
Aval WithDType(const Aval& aval, DType dtype);
Aval MakeAval(DType dtype, std::vector<DimExpr> shape);
// True when the avals have the same dtype (names compared for kOther).
bool SameDType(const Aval& a, const Aval& b);
// True when `a` and `b` are the same type (dtype and shape, dims compared
// with DimEqual); non-array avals compare by their text.
bool SameType(const Aval& a, const Aval& b);
// Checks that the avals of a nested jaxpr's invars (or outvars) match
// `expected`, naming `what` ("cond branch 1 inputs") on mismatch.
absl::Status MatchTypes(const RuleContext& ctx, absl::string_view what,
                        const std::vector<Aval>& actual,
                        const std::vector<Aval>& expected);
std::vector<Aval> InvarAvals(const ClosedJaxpr& jaxpr);
std::vector<Aval> OutvarAvals(const ClosedJaxpr& jaxpr);
std::string TypesString(const std::vector<Aval>& avals);

// ---- the rule table ----

using TypeRule = absl::Status (*)(RuleContext& ctx);

struct RuleEntry {
  TypeRule rule = nullptr;
  bool partial = false;  // does not compute every result type
};

using RuleTable = absl::flat_hash_map<std::string, RuleEntry>;

void RegisterElementwiseRules(RuleTable& table);
void RegisterShapeRules(RuleTable& table);
void RegisterReductionRules(RuleTable& table);
void RegisterLinalgRules(RuleTable& table);
void RegisterIndexingRules(RuleTable& table);
void RegisterControlFlowRules(RuleTable& table);
void RegisterMiscRules(RuleTable& table);
void RegisterCollectiveRules(RuleTable& table);
void RegisterRandomRules(RuleTable& table);

}  // namespace jax2onnx::jaxpr::typecheck

#endif  // JAX2ONNX_JAXPR_TYPECHECK_RULES_H_
