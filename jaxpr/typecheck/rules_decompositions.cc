// Type rules of the matrix factorizations and solves, after JAX's
// jax/_src/lax/linalg.py shape rules (linalg_primitive: operands of rank >=
// 2 whose leading dims are a batch shared by every operand).
#include <algorithm>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/linear_solve_params.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/typecheck/rules.h"

namespace jax2onnx::jaxpr::typecheck {
namespace {

constexpr unsigned kInexact = kClassFloat | kClassComplex;

absl::Status MatrixOperand(const RuleContext& ctx, int i) {
  if (ctx.in(i).rank() < 2) {
    return ctx.Fail(absl::StrCat("operand ", i,
                                 " must have rank >= 2 (a batch of matrices)"));
  }
  return absl::OkStatus();
}

std::vector<DimExpr> Batch(const Aval& a, int trailing) {
  return std::vector<DimExpr>(a.shape.begin(), a.shape.end() - trailing);
}

// cholesky(a): a square [..., n, n] float/complex matrix; same type back.
absl::Status CholeskyRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kInexact));
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 0));
  const Aval& a = ctx.in(0);
  if (!DimEqual(a.shape[a.rank() - 1], a.shape[a.rank() - 2])) {
    return ctx.Fail(absl::StrCat("the input to cholesky must be square, got ",
                                 ShapeString(a.shape)));
  }
  ctx.SetResult(a);
  return absl::OkStatus();
}

// triangular_solve(a, b): a [..., m, m], b [..., m, n] (left_side) or
// [..., n, m]; result b's type.
absl::Status TriangularSolveRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(2));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kInexact));
  J2O_RETURN_IF_ERROR(ctx.SameDTypes());
  for (const char* key :
       {"left_side", "lower", "transpose_a", "conjugate_a", "unit_diagonal"}) {
    J2O_RETURN_IF_ERROR(ctx.Bool(key).status());
  }
  J2O_ASSIGN_OR_RETURN(bool left_side, ctx.Bool("left_side"));
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 0));
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 1));
  const Aval& a = ctx.in(0);
  const Aval& b = ctx.in(1);
  const int ra = a.rank();
  const int rb = b.rank();
  if (!DimEqual(a.shape[ra - 1], a.shape[ra - 2])) {
    return ctx.Fail(absl::StrCat("triangular_solve: a must be square, got ",
                                 ShapeString(a.shape)));
  }
  if (ra != rb || !ShapeEqual(Batch(a, 2), Batch(b, 2))) {
    return ctx.Fail(absl::StrCat(
        "triangular_solve: a and b must have the same batch dims, got ",
        ShapeString(a.shape), " and ", ShapeString(b.shape)));
  }
  const DimExpr& common = b.shape[left_side ? rb - 2 : rb - 1];
  if (!DimEqual(a.shape[ra - 1], common)) {
    return ctx.Fail(absl::StrCat(
        "triangular_solve: a ", ShapeString(a.shape), " does not match b ",
        ShapeString(b.shape),
        left_side ? " (left_side: b's rows)" : " (right side: b's columns)"));
  }
  ctx.SetResult(b);
  return absl::OkStatus();
}

// lu(a) -> (lu: a's type, pivots: i32[..., min(m, n)], permutation:
// i32[..., m]).
absl::Status LuRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(3));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kInexact));
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 0));
  const Aval& a = ctx.in(0);
  const DimExpr& m = a.shape[a.rank() - 2];
  const DimExpr& n = a.shape[a.rank() - 1];
  std::optional<DimExpr> k;
  if (DimEqual(m, n)) {
    k = m;
  } else if (DimConst(m) && DimConst(n)) {
    k = C(std::min(*DimConst(m), *DimConst(n)));
  }
  std::vector<std::optional<Aval>> results = {a, std::nullopt, std::nullopt};
  std::vector<DimExpr> batch = Batch(a, 2);
  if (k.has_value()) {
    std::vector<DimExpr> piv = batch;
    piv.push_back(*k);
    results[1] = MakeAval(DType::kI32, piv);
  } else if (ctx.out(1).is_shaped()) {
    results[1] = ctx.out(1);  // min of two symbolic dims: not derived
  }
  std::vector<DimExpr> perm = batch;
  perm.push_back(m);
  results[2] = MakeAval(DType::kI32, perm);
  ctx.SetResults(std::move(results));
  return absl::OkStatus();
}

// lu_pivots_to_permutation(pivots: i32[..., k])[permutation_size=m] ->
// i32[..., m].
absl::Status LuPivotsToPermutationRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kClassInt));
  J2O_ASSIGN_OR_RETURN(int64_t m, ctx.Int("permutation_size"));
  const Aval& p = ctx.in(0);
  if (p.rank() < 1) return ctx.Fail("pivots must have rank >= 1");
  if (auto k = DimConst(p.shape.back()); k.has_value() && *k > m) {
    return ctx.Fail(absl::StrCat("permutation_size ", m,
                                 " is smaller than the number of pivots ", *k));
  }
  std::vector<DimExpr> shape = Batch(p, 1);
  shape.push_back(C(m));
  ctx.SetResult(MakeAval(DType::kI32, shape));
  return absl::OkStatus();
}

// custom_linear_solve(consts..., b...): b's types, which the solve jaxpr
// (checked on its own) must return from (its consts, b).
absl::Status CustomLinearSolveRule(RuleContext& ctx) {
  J2O_ASSIGN_OR_RETURN(LinearSolveParts parts,
                       ReadLinearSolveParams(ctx.params()));
  if (parts.all_consts > ctx.num_in()) {
    return ctx.Fail(absl::StrCat("const_lengths name ", parts.all_consts,
                                 " consts but there are ", ctx.num_in(),
                                 " operands"));
  }
  std::vector<Aval> b(ctx.ins().begin() + parts.all_consts, ctx.ins().end());
  J2O_RETURN_IF_ERROR(ctx.Outputs(static_cast<int>(b.size())));
  J2O_RETURN_IF_ERROR(ctx.CheckJaxpr(*parts.solve));
  std::vector<Aval> solve_in(
      ctx.ins().begin() + parts.solve_consts_begin,
      ctx.ins().begin() + parts.solve_consts_begin + parts.solve_consts);
  solve_in.insert(solve_in.end(), b.begin(), b.end());
  J2O_RETURN_IF_ERROR(MatchTypes(ctx, "solve jaxpr inputs",
                                 InvarAvals(*parts.solve), solve_in));
  J2O_RETURN_IF_ERROR(
      MatchTypes(ctx, "solve jaxpr outputs", OutvarAvals(*parts.solve), b));
  ctx.SetResults(std::vector<std::optional<Aval>>(b.begin(), b.end()));
  return absl::OkStatus();
}

DType RealOf(DType d) {
  if (d == DType::kC64) return DType::kF32;
  if (d == DType::kC128) return DType::kF64;
  return d;
}

// min(m, n) when it is decidable (equal dims or constants).
std::optional<DimExpr> MinDim(const DimExpr& m, const DimExpr& n) {
  if (DimEqual(m, n)) return m;
  if (DimConst(m) && DimConst(n))
    return C(std::min(*DimConst(m), *DimConst(n)));
  return std::nullopt;
}

// eigh(a) -> (v: a's type, w: real [..., n]); subset_by_index=None only.
absl::Status EighRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(2));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kInexact));
  J2O_RETURN_IF_ERROR(ctx.Bool("lower").status());
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 0));
  const Aval& a = ctx.in(0);
  const DimExpr& n = a.shape[a.rank() - 1];
  if (!DimEqual(n, a.shape[a.rank() - 2])) {
    return ctx.Fail(
        absl::StrCat("eigh needs [..., n, n], got ", ShapeString(a.shape)));
  }
  if (const ParamValue* sub = ctx.params().Find("subset_by_index");
      sub != nullptr && !sub->is_none()) {
    ctx.SetResults({a, std::nullopt});  // the subset's size: not derived
    return absl::OkStatus();
  }
  std::vector<DimExpr> w = Batch(a, 2);
  w.push_back(n);
  ctx.SetResults({a, MakeAval(RealOf(a.dtype), w)});
  return absl::OkStatus();
}

// svd(a) -> (s: real [..., k][, u: [..., m, m|k], vt: [..., n|k, n]]).
absl::Status SvdRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kInexact));
  J2O_ASSIGN_OR_RETURN(bool compute_uv, ctx.Bool("compute_uv"));
  J2O_ASSIGN_OR_RETURN(bool full, ctx.Bool("full_matrices"));
  J2O_RETURN_IF_ERROR(ctx.Outputs(compute_uv ? 3 : 1));
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 0));
  const Aval& a = ctx.in(0);
  const DimExpr& m = a.shape[a.rank() - 2];
  const DimExpr& n = a.shape[a.rank() - 1];
  std::optional<DimExpr> k = MinDim(m, n);
  if (const ParamValue* sub = ctx.params().Find("subset_by_index");
      (sub != nullptr && !sub->is_none()) || !k.has_value()) {
    std::vector<std::optional<Aval>> partial(compute_uv ? 3 : 1);
    ctx.SetResults(partial);
    return absl::OkStatus();
  }
  const std::vector<DimExpr> batch = Batch(a, 2);
  auto shape = [&](std::vector<DimExpr> tail) {
    std::vector<DimExpr> s = batch;
    s.insert(s.end(), tail.begin(), tail.end());
    return s;
  };
  std::vector<std::optional<Aval>> results = {
      MakeAval(RealOf(a.dtype), shape({*k}))};
  if (compute_uv) {
    results.push_back(WithShape(a, shape({m, full ? m : *k})));
    results.push_back(WithShape(a, shape({full ? n : *k, n})));
  }
  ctx.SetResults(std::move(results));
  return absl::OkStatus();
}

// qr(a) -> (q: [..., m, k], r: [..., k, n]), k = m (full_matrices) or
// min(m, n); pivoting adds p: i32[..., n].
absl::Status QrRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kInexact));
  J2O_ASSIGN_OR_RETURN(bool full, ctx.Bool("full_matrices"));
  bool pivoting = false;
  if (ctx.params().Has("pivoting")) {
    J2O_ASSIGN_OR_RETURN(pivoting, ctx.Bool("pivoting"));
  }
  J2O_RETURN_IF_ERROR(ctx.Outputs(pivoting ? 3 : 2));
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 0));
  const Aval& a = ctx.in(0);
  const DimExpr& m = a.shape[a.rank() - 2];
  const DimExpr& n = a.shape[a.rank() - 1];
  std::optional<DimExpr> k = full ? std::optional<DimExpr>(m) : MinDim(m, n);
  if (!k.has_value()) {
    ctx.SetResults(std::vector<std::optional<Aval>>(pivoting ? 3 : 2));
    return absl::OkStatus();
  }
  std::vector<DimExpr> q = Batch(a, 2), r = Batch(a, 2);
  q.push_back(m);
  q.push_back(*k);
  r.push_back(*k);
  r.push_back(n);
  std::vector<std::optional<Aval>> results = {WithShape(a, q), WithShape(a, r)};
  if (pivoting) {
    std::vector<DimExpr> p = Batch(a, 2);
    p.push_back(n);
    results.push_back(MakeAval(DType::kI32, p));
  }
  ctx.SetResults(std::move(results));
  return absl::OkStatus();
}

// geqrf(a) -> (a's type, taus: [..., min(m, n)]).
absl::Status GeqrfRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(2));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kInexact));
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 0));
  const Aval& a = ctx.in(0);
  std::optional<DimExpr> k =
      MinDim(a.shape[a.rank() - 2], a.shape[a.rank() - 1]);
  if (!k.has_value()) {
    ctx.SetResults({a, std::nullopt});
    return absl::OkStatus();
  }
  std::vector<DimExpr> taus = Batch(a, 2);
  taus.push_back(*k);
  ctx.SetResults({a, WithShape(a, taus)});
  return absl::OkStatus();
}

// householder_product(a: [..., m, n], taus: [..., k]) -> a's type; m >= n
// >= k.
absl::Status HouseholderProductRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(2));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kInexact));
  J2O_RETURN_IF_ERROR(ctx.SameDTypes());
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 0));
  const Aval& a = ctx.in(0);
  const Aval& t = ctx.in(1);
  if (t.rank() != a.rank() - 1 || !ShapeEqual(Batch(t, 1), Batch(a, 2))) {
    return ctx.Fail(absl::StrCat("taus ", ShapeString(t.shape),
                                 " must be a's batch dims plus one"));
  }
  auto m = DimConst(a.shape[a.rank() - 2]);
  auto n = DimConst(a.shape[a.rank() - 1]);
  auto k = DimConst(t.shape.back());
  if (m && n && *m < *n) {
    return ctx.Fail("a must have at least as many rows as columns");
  }
  if (n && k && *k > *n) {
    return ctx.Fail("taus must not be longer than min(m, n)");
  }
  ctx.SetResult(a);
  return absl::OkStatus();
}

// ormqr(a: [..., m, n], taus: [..., k], c) -> c's type: c [..., m, cols]
// (left) or [..., rows, m]; k <= n.
absl::Status OrmqrRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(3));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kInexact));
  J2O_RETURN_IF_ERROR(ctx.SameDTypes());
  J2O_ASSIGN_OR_RETURN(bool left, ctx.Bool("left"));
  J2O_RETURN_IF_ERROR(ctx.Bool("transpose").status());
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 0));
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 2));
  const Aval& a = ctx.in(0);
  const Aval& t = ctx.in(1);
  const Aval& c = ctx.in(2);
  const int r = a.rank();
  if (t.rank() != r - 1 || !ShapeEqual(Batch(t, 1), Batch(a, 2)) ||
      c.rank() != r || !ShapeEqual(Batch(c, 2), Batch(a, 2))) {
    return ctx.Fail(absl::StrCat(
        "ormqr expects a [..., m, n], taus [..., k] and c [..., rows, cols] "
        "with one batch, got ",
        ShapeString(a.shape), ", ", ShapeString(t.shape), " and ",
        ShapeString(c.shape)));
  }
  auto n = DimConst(a.shape[r - 1]);
  auto k = DimConst(t.shape.back());
  if (n && k && *k > *n) {
    return ctx.Fail("taus must not be longer than a's columns");
  }
  if (!DimEqual(c.shape[left ? r - 2 : r - 1], a.shape[r - 2])) {
    return ctx.Fail(absl::StrCat("c ", ShapeString(c.shape),
                                 " must have as many ",
                                 left ? "rows" : "columns", " as a has rows (",
                                 a.shape[r - 2].ToString(), ")"));
  }
  ctx.SetResult(c);
  return absl::OkStatus();
}

// hessenberg(a: [..., n, n]) -> (a's type, taus [..., n - 1]).
absl::Status HessenbergRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(2));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kInexact));
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 0));
  const Aval& a = ctx.in(0);
  const int r = a.rank();
  if (!DimEqual(a.shape[r - 1], a.shape[r - 2])) {
    return ctx.Fail(absl::StrCat("hessenberg needs square matrices, got ",
                                 ShapeString(a.shape)));
  }
  auto n = DimConst(a.shape[r - 1]);
  if (!n) {
    ctx.SetResults({a, std::nullopt});
    return absl::OkStatus();
  }
  std::vector<DimExpr> taus = Batch(a, 2);
  taus.push_back(DimExpr::Constant(std::max<int64_t>(*n - 1, 0)));
  ctx.SetResults({a, WithShape(a, taus)});
  return absl::OkStatus();
}

// eig(a: [..., n, n]) -> (w [..., n][, vl][, vr] [..., n, n]), all complex of
// a's precision (JAX's _eig_dtype_rule: dtypes.to_complex_dtype, c128 for
// f64/c128 and c64 otherwise); vl and vr only when
// compute_left_eigenvectors / compute_right_eigenvectors.
absl::Status EigRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kInexact));
  J2O_ASSIGN_OR_RETURN(bool left, ctx.Bool("compute_left_eigenvectors"));
  J2O_ASSIGN_OR_RETURN(bool right, ctx.Bool("compute_right_eigenvectors"));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1 + left + right));
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 0));
  const Aval& a = ctx.in(0);
  const DimExpr& n = a.shape[a.rank() - 1];
  if (!DimEqual(n, a.shape[a.rank() - 2])) {
    return ctx.Fail(
        absl::StrCat("the input to eig must be a square matrix, got ",
                     ShapeString(a.shape)));
  }
  const DType c = a.dtype == DType::kF64 || a.dtype == DType::kC128
                      ? DType::kC128
                      : DType::kC64;
  std::vector<DimExpr> w = Batch(a, 2);
  w.push_back(n);
  std::vector<std::optional<Aval>> results = {MakeAval(c, w)};
  for (int i = 0; i < left + right; ++i) results.push_back(WithDType(a, c));
  ctx.SetResults(std::move(results));
  return absl::OkStatus();
}

// schur(a: [..., n, n]) -> (T[, Z]) of a's type (JAX's _schur_shape_rule /
// _schur_dtype_rule: float or complex, square; Z when compute_schur_vectors).
absl::Status SchurRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kInexact));
  J2O_ASSIGN_OR_RETURN(bool vectors, ctx.Bool("compute_schur_vectors"));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1 + vectors));
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 0));
  const Aval& a = ctx.in(0);
  if (!DimEqual(a.shape[a.rank() - 1], a.shape[a.rank() - 2])) {
    return ctx.Fail(
        absl::StrCat("the input to schur must be a square matrix, got ",
                     ShapeString(a.shape)));
  }
  std::vector<std::optional<Aval>> results = {a};
  if (vectors) results.push_back(a);
  ctx.SetResults(std::move(results));
  return absl::OkStatus();
}

// tridiagonal(a: [..., n, n], lower) -> (a's type, d: real [..., n],
// e: real [..., n - 1], taus: a's dtype [..., n - 1]) (JAX's
// _tridiagonal_shape_rule / _tridiagonal_dtype_rule; n >= 1).
absl::Status TridiagonalRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(4));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kInexact));
  J2O_RETURN_IF_ERROR(ctx.Bool("lower").status());
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 0));
  const Aval& a = ctx.in(0);
  const int r = a.rank();
  if (!DimEqual(a.shape[r - 1], a.shape[r - 2])) {
    return ctx.Fail(absl::StrCat("tridiagonal needs square matrices, got ",
                                 ShapeString(a.shape)));
  }
  auto n = DimConst(a.shape[r - 1]);
  if (!n) {
    ctx.SetResults({a, std::nullopt, std::nullopt, std::nullopt});
    return absl::OkStatus();
  }
  if (*n < 1) {
    return ctx.Fail(absl::StrCat("tridiagonal needs a non-empty matrix, got ",
                                 ShapeString(a.shape)));
  }
  std::vector<DimExpr> d = Batch(a, 2), e = Batch(a, 2);
  d.push_back(DimExpr::Constant(*n));
  e.push_back(DimExpr::Constant(*n - 1));
  ctx.SetResults({a, MakeAval(RealOf(a.dtype), d), MakeAval(RealOf(a.dtype), e),
                  WithShape(a, e)});
  return absl::OkStatus();
}

// tridiagonal_solve(dl, d, du: [..., m], b: [..., m, n]) -> b's type.
absl::Status TridiagonalSolveRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(4));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kInexact));
  J2O_RETURN_IF_ERROR(ctx.SameDTypes());
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 3));
  const Aval& b = ctx.in(3);
  const std::vector<DimExpr> diag = Batch(b, 1);  // [..., m]
  for (int i = 0; i < 3; ++i) {
    if (!ShapeEqual(ctx.in(i).shape, diag)) {
      return ctx.Fail(absl::StrCat(
          "the diagonals must have shape ", ShapeString(diag),
          " (b's leading dims), got ", ShapeString(ctx.in(i).shape)));
    }
  }
  ctx.SetResult(b);
  return absl::OkStatus();
}

// symmetric_product(a, c): a [..., n, k], c [..., n, n] of one f32/f64
// dtype, float params alpha and beta; result c's type.
absl::Status SymmetricProductRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(2));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kClassFloat));
  J2O_RETURN_IF_ERROR(ctx.SameDTypes());
  for (const char* key : {"alpha", "beta"}) {
    if (!ctx.params().GetFloat(key).ok()) {
      return ctx.Fail(absl::StrCat("param '", key, "' must be a float"));
    }
  }
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 0));
  J2O_RETURN_IF_ERROR(MatrixOperand(ctx, 1));
  const Aval& a = ctx.in(0);
  const Aval& c = ctx.in(1);
  const int rc = c.rank();
  if (a.rank() != rc || !ShapeEqual(Batch(a, 2), Batch(c, 2)) ||
      !DimEqual(c.shape[rc - 1], c.shape[rc - 2]) ||
      !DimEqual(a.shape[rc - 2], c.shape[rc - 1])) {
    return ctx.Fail(absl::StrCat(
        "symmetric_product expects a [..., n, k] and c [..., n, n], got ",
        ShapeString(a.shape), " and ", ShapeString(c.shape)));
  }
  ctx.SetResult(c);
  return absl::OkStatus();
}

// cholesky_update(r, w): r [n, n], w [n] of one f32/f64 dtype (JAX gives
// it no batching); result r's type.
absl::Status CholeskyUpdateRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(2));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kClassFloat));
  J2O_RETURN_IF_ERROR(ctx.SameDTypes());
  J2O_RETURN_IF_ERROR(ctx.Rank(0, 2));
  J2O_RETURN_IF_ERROR(ctx.Rank(1, 1));
  const Aval& r = ctx.in(0);
  if (!DimEqual(r.shape[0], r.shape[1]) ||
      !DimEqual(ctx.in(1).shape[0], r.shape[1])) {
    return ctx.Fail(absl::StrCat(
        "cholesky_update takes a square matrix and a vector of its size, got ",
        ShapeString(r.shape), " and ", ShapeString(ctx.in(1).shape)));
  }
  ctx.SetResult(r);
  return absl::OkStatus();
}

}  // namespace

// Called from RegisterLinalgRules (rules_linalg.cc).
void RegisterDecompositionRules(RuleTable& table) {
  table["cholesky"] = {&CholeskyRule};
  table["triangular_solve"] = {&TriangularSolveRule};
  table["lu"] = {&LuRule};
  table["lu_pivots_to_permutation"] = {&LuPivotsToPermutationRule};
  table["custom_linear_solve"] = {&CustomLinearSolveRule};
  table["eigh"] = {&EighRule};
  table["svd"] = {&SvdRule};
  table["qr"] = {&QrRule};
  table["geqrf"] = {&GeqrfRule};
  table["householder_product"] = {&HouseholderProductRule};
  table["tridiagonal_solve"] = {&TridiagonalSolveRule};
  table["symmetric_product"] = {&SymmetricProductRule};
  table["cholesky_update"] = {&CholeskyUpdateRule};
  table["ormqr"] = {&OrmqrRule};
  table["hessenberg"] = {&HessenbergRule};
  table["eig"] = {&EigRule};
  table["schur"] = {&SchurRule};
  table["tridiagonal"] = {&TridiagonalRule};
}

}  // namespace jax2onnx::jaxpr::typecheck
