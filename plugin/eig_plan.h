// Pipeline-independent lowerings of eigh and svd by Jacobi rotations in one
// ONNX Loop (constant graph size in n, symbolic n included).
//
// The recipes rotate in the round-robin parallel ordering (RoundOf): each
// Loop step applies n/2 disjoint rotations at once with whole-matrix ops, so
// a sweep is n - 1 (or n) steps of O(n^2) work. eig_complex_plan.h applies
// the same scheme to Hermitian and complex matrices.
//
// eigh: two-sided Jacobi on the symmetric matrix read from the `lower` (or
// upper) triangle (Golub & Van Loan, sym.schur2: tau = (a_qq - a_pp) /
// (2 a_pq), t = sign(tau) / (|tau| + sqrt(1 + tau²)), c = 1/sqrt(1 + t²),
// s = t c), updating the rows and columns of A and the columns of V. The
// eigenvalues are the Rayleigh quotients of the final V (re-orthogonalized),
// sorted ascending (LAPACK syevd's order) with the eigenvector columns
// permuted alike.
// svd: one-sided (Hestenes) Jacobi on the columns of A (of Aᵀ when m < n):
// the pair rotation that makes columns p and q orthogonal; singular values
// are the column norms of A V (V re-orthogonalized), sorted descending, U
// the normalized rotated columns, Vᵀ from the accumulated rotations.
//
// Jacobi converges quadratically once the off-diagonal part is small: the
// Loops stop after the first sweep with nothing left to rotate
// (EndOfSweepTest, at most kMaxSweeps). Eigen/singular vectors are unique
// only up to sign (and rotation within repeated values): they can differ
// from LAPACK's, so tests compare reconstructions.
#ifndef JAX2ONNX_PLUGIN_EIG_PLAN_H_
#define JAX2ONNX_PLUGIN_EIG_PLAN_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/linalg_plan.h"

namespace jax2onnx::plugin {
namespace eig_plan {

// The Jacobi Loops stop after the first sweep that found nothing left to
// rotate (EndOfSweepTest), at the latest after kMaxSweeps.
inline constexpr int64_t kMaxSweeps = 30;

template <class E>
using V = typename E::Value;

// (c, s) = the Jacobi rotation for zeta = (y - x) / (2 z); identity where
// !active or z == 0. Results have the shape of x with a trailing 1.
template <class E>
std::pair<V<E>, V<E>> Rotation(linalg_plan::Builder<E>& b, V<E> x, V<E> y,
                               V<E> z, V<E> active, int out_rank) {
  using jaxpr::DType;
  auto& e = b.e;
  const DType dt = b.dt;
  V<E> zero = b.Scalar(0);
  V<E> one = b.Scalar(1);
  V<E> on = e.Op("And",
                 {active, e.Op("Not", {b.Bin("Equal", z, zero, DType::kBool)},
                               DType::kBool)},
                 DType::kBool);
  V<E> z_safe = b.Where(on, z, one, dt);
  V<E> zeta = b.Bin("Div", b.Bin("Sub", y, x, dt),
                    b.Bin("Mul", b.Scalar(2), z_safe, dt), dt);
  V<E> sign = b.Where(b.Bin("GreaterOrEqual", zeta, zero, DType::kBool), one,
                      b.Scalar(-1), dt);
  V<E> root =
      e.Op("Sqrt", {b.Bin("Add", one, b.Bin("Mul", zeta, zeta, dt), dt)}, dt);
  V<E> t =
      b.Bin("Div", sign, b.Bin("Add", e.Op("Abs", {zeta}, dt), root, dt), dt);
  V<E> c = b.Bin(
      "Div", one,
      e.Op("Sqrt", {b.Bin("Add", one, b.Bin("Mul", t, t, dt), dt)}, dt), dt);
  V<E> s = b.Bin("Mul", t, c, dt);
  c = b.Where(on, c, one, dt);
  s = b.Where(on, s, zero, dt);
  return {b.Unsqueeze(c, out_rank - 1, dt), b.Unsqueeze(s, out_rank - 1, dt)};
}

// Rounds per sweep of RoundOf's ordering: n' - 1, n' = n + n mod 2.
template <class E>
V<E> RoundsPerSweep(linalg_plan::Builder<E>& b, V<E> n) {
  using jaxpr::DType;
  V<E> even = b.Bin("Add", n, b.Bin("Mod", n, b.ScalarI64(2), DType::kI64),
                    DType::kI64);
  return b.Bin("Sub", even, b.ScalarI64(1), DType::kI64);
}

// One round of the round-robin (circle method) parallel ordering: with
// n' = n + n mod 2 indices, round r = it mod (n' - 1) pairs n' - 1 with r
// and every other i with (2r - i) mod (n' - 1). Each pair meets once in a
// sweep of n' - 1 rounds and a round's n'/2 pairs are disjoint, so they
// rotate at once (Brent & Luk's parallel Jacobi; it converges like the
// cyclic order). For odd n the index n is a dummy: its partner stays put.
// All [n] int64/bool vectors: partner (i itself when inactive), `first`
// (i < partner: i plays p of the pair (p, q)) and `active`.
template <class E>
struct Round {
  V<E> partner, first, active;
};
template <class E>
Round<E> RoundOf(linalg_plan::Builder<E>& b, V<E> it, V<E> n, V<E> iota) {
  using jaxpr::DType;
  V<E> two = b.ScalarI64(2);
  V<E> last = RoundsPerSweep(b, n);
  V<E> r = b.Bin("Mod", it, last, DType::kI64);
  // ONNX integer Mod takes the divisor's sign, so this is in [0, n' - 1).
  V<E> partner = b.Bin(
      "Mod", b.Bin("Sub", b.Bin("Mul", two, r, DType::kI64), iota, DType::kI64),
      last, DType::kI64);
  partner = b.Where(b.Bin("Equal", iota, r, DType::kBool), last, partner,
                    DType::kI64);
  partner = b.Where(b.Bin("Equal", iota, last, DType::kBool), r, partner,
                    DType::kI64);
  V<E> active = b.Bin("Less", partner, n, DType::kBool);
  partner = b.Where(active, partner, iota, DType::kI64);
  return {partner, b.Bin("Less", iota, partner, DType::kBool), active};
}

// One-sided Jacobi's measure of a round (LAPACK dgesvj's): |cos| of the
// angle between each index's column and its partner's, |dot| /
// sqrt(norm2 * norm2_partner); 0 for inactive pairs and zero columns.
template <class E>
V<E> ColumnCosines(linalg_plan::Builder<E>& b, const Round<E>& round,
                   V<E> norms2, V<E> norms2_partner, V<E> abs_dot) {
  using jaxpr::DType;
  const DType dt = b.dt;
  V<E> scale = b.Bin("Mul", norms2, norms2_partner, dt);
  V<E> positive = b.Bin("Greater", scale, b.Scalar(0), DType::kBool);
  V<E> cosine = b.Bin(
      "Div", abs_dot,
      b.e.Op("Sqrt", {b.Where(positive, scale, b.Scalar(1), dt)}, dt), dt);
  return b.Where(b.e.Op("And", {round.active, positive}, DType::kBool), cosine,
                 b.Scalar(0), dt);
}

// Applies a round's rotations to the rows (axis = rank-2) or columns
// (axis = rank-1) of m: index i becomes c_i m_i + signed_s_i m_partner(i),
// with c and signed_s broadcast along the other axis (-s for the pair's p,
// +s for its q: p <- c p - s q, q <- s p + c q).
template <class E>
V<E> RotateRound(linalg_plan::Builder<E>& b, V<E> m, V<E> partner, V<E> c,
                 V<E> signed_s, int axis) {
  const jaxpr::DType dt = b.dt;
  return b.Bin("Add", b.Bin("Mul", c, m, dt),
               b.Bin("Mul", signed_s, b.Take(m, partner, axis, dt), dt), dt);
}

// The rotations (c, signed s) of a round for the pair quantities of every
// index i, given x_i, y_i for i's (p, q) order and z_i: as [..., n, 1] row
// coefficients and [..., 1, n] column coefficients.
template <class E>
struct RoundRotation {
  V<E> c_rows, s_rows, c_cols, s_cols;
};
template <class E>
RoundRotation<E> RotationOfRound(linalg_plan::Builder<E>& b,
                                 const Round<E>& round, V<E> self,
                                 V<E> partner_value, V<E> z, int rank) {
  const jaxpr::DType dt = b.dt;
  V<E> x = b.Where(round.first, self, partner_value, dt);
  V<E> y = b.Where(round.first, partner_value, self, dt);
  auto [c, s] = Rotation(b, x, y, z, round.active, rank);  // [..., n, 1]
  s = b.Where(b.Unsqueeze(round.first, 1, jaxpr::DType::kBool),
              b.e.Op("Neg", {s}, dt), s, dt);
  return {c, s, b.TransposeLast2(c, rank, dt), b.TransposeLast2(s, rank, dt)};
}

// The Jacobi Loops' early exit, a sweep-wise test like LAPACK
// dgesvj's: `worst` carries the largest off-diagonal measure (any shape,
// inactive pairs 0) seen in the current sweep, reset at its first round;
// the Loop goes on unless the sweep just ended with every measure <= tol,
// i.e. a whole sweep found nothing left to rotate (a NaN input may run
// all kMaxSweeps; its result is NaN either way).
template <class E>
struct SweepTest {
  V<E> keep_going, worst;
};
template <class E>
SweepTest<E> EndOfSweepTest(linalg_plan::Builder<E>& b, V<E> it, V<E> rounds,
                            V<E> worst, V<E> measure, V<E> tol) {
  using jaxpr::DType;
  const DType dt = b.dt;
  V<E> r = b.Bin("Mod", it, rounds, DType::kI64);
  V<E> round_max =
      b.e.Op("ReduceMax", {measure}, dt, {OpAttr::Int("keepdims", 0)});
  V<E> start = b.Bin("Equal", r, b.ScalarI64(0), DType::kBool);
  V<E> worst_now =
      b.Bin("Max", b.Where(start, b.Scalar(0), worst, dt), round_max, dt);
  V<E> at_end =
      b.Bin("Equal", r, b.Bin("Sub", rounds, b.ScalarI64(1), DType::kI64),
            DType::kBool);
  V<E> done = b.e.Op(
      "And", {at_end, b.Bin("LessOrEqual", worst_now, tol, DType::kBool)},
      DType::kBool);
  return {b.e.Op("Not", {done}, DType::kBool), worst_now};
}

// eigh's early-exit scale: ||A||_F as [..., 1] (1 for a zero matrix) from
// the elementwise squares [..., n, n] of the (Hermitian) matrix; an
// off-diagonal entry counts as rotated away below n eps of it.
template <class E>
V<E> FrobeniusScale(linalg_plan::Builder<E>& b, V<E> squares, int rank) {
  using jaxpr::DType;
  const DType dt = b.dt;
  V<E> fro =
      b.e.Op("Sqrt",
             {b.e.Op("ReduceSum", {squares, b.Axes({rank - 2, rank - 1})}, dt,
                     {OpAttr::Int("keepdims", 1)})},
             dt);                      // [..., 1, 1]
  fro = b.Squeeze(fro, rank - 1, dt);  // [..., 1]
  return b.Where(b.Bin("Greater", fro, b.Scalar(0), DType::kBool), fro,
                 b.Scalar(1), dt);
}

// Machine epsilon of the Builder's float dtype.
template <class E>
double Epsilon(const linalg_plan::Builder<E>& b) {
  return b.dt == jaxpr::DType::kF64 ? 0x1p-52 : 0x1p-23;
}

// One Newton-Schulz step towards the orthogonal polar factor of v
// [..., n, n]: v (3 I - vᵀ v) / 2. The accumulated rotations drift from
// orthogonality by about (rotations per element) x eps; the step squares
// that error and moves each column by no more than it (less than the
// vectors' own error).
template <class E>
V<E> Reorthogonalize(linalg_plan::Builder<E>& b, V<E> v, V<E> eye_mask,
                     int rank) {
  const jaxpr::DType dt = b.dt;
  V<E> gram = b.e.Op("MatMul", {b.TransposeLast2(v, rank, dt), v}, dt);
  V<E> three_i = b.Bin("Mul", b.Cast(eye_mask, dt), b.Scalar(3), dt);
  return b.Bin("Mul",
               b.e.Op("MatMul", {v, b.Bin("Sub", three_i, gram, dt)}, dt),
               b.Scalar(0.5), dt);
}

// Identity matrices of x's shape [..., n, n].
template <class E>
V<E> EyeLike(linalg_plan::Builder<E>& b, V<E> x, V<E> eye_mask) {
  using jaxpr::DType;
  V<E> eye = b.Cast(eye_mask, b.dt);
  return b.e.Op("Expand", {eye, b.e.Op("Shape", {x}, DType::kI64)}, b.dt);
}

// Sorts the last axis of `values` ([..., k]) and permutes the matching
// columns (column_axis) of `vectors`.
template <class E>
std::pair<V<E>, V<E>> SortWithVectors(linalg_plan::Builder<E>& b, V<E> values,
                                      V<E> k, V<E> vectors, int rank,
                                      bool ascending) {
  using jaxpr::DType;
  auto& e = b.e;
  std::vector<V<E>> top = e.OpMulti(
      "TopK", {values, b.Unsqueeze(k, 0, DType::kI64)}, {b.dt, DType::kI64},
      {OpAttr::Int("axis", rank - 2), OpAttr::Int("largest", ascending ? 0 : 1),
       OpAttr::Int("sorted", 1)});
  V<E> idx = e.Op("Expand",
                  {b.Unsqueeze(top[1], rank - 2, DType::kI64),
                   e.Op("Shape", {vectors}, DType::kI64)},
                  DType::kI64);
  V<E> permuted = e.Op("GatherElements", {vectors, idx}, b.dt,
                       {OpAttr::Int("axis", rank - 1)});
  return {top[0], permuted};
}

// batch ++ [rows, cols]: a matrix Loop carry's shape.
inline std::vector<jaxpr::DimExpr> MatrixShape(
    std::vector<jaxpr::DimExpr> batch, int64_t rows, int64_t cols) {
  batch.push_back(jaxpr::DimExpr::Constant(rows));
  batch.push_back(jaxpr::DimExpr::Constant(cols));
  return batch;
}

// FillColumns' steps that do not depend on the arithmetic (the real and
// complex versions share them): the iota over the r rows and the r x r
// identity the residual projector starts from,
template <class E>
std::pair<V<E>, V<E>> ResidualEye(linalg_plan::Builder<E>& b, int64_t r) {
  using jaxpr::DType;
  V<E> iota_r = b.Iota(b.ScalarI64(r));
  V<E> eye = b.Cast(
      b.Bin("Equal", b.Unsqueeze(iota_r, 1, DType::kI64), iota_r, DType::kBool),
      b.dt);
  return {iota_r, eye};
}

// the index [..., 1, 1] of the longest residual (norms [..., 1, r]; ArgMax
// keeps the first on ties),
template <class E>
V<E> LongestResidual(linalg_plan::Builder<E>& b, V<E> norms, int rank) {
  return b.e.Op("ArgMax", {norms}, jaxpr::DType::kI64,
                {OpAttr::Int("axis", rank - 1), OpAttr::Int("keepdims", 1)});
}

// and the cells of q [..., r, c] (`q_part`, one part of it) step `it`
// writes: column column(it), of the members where write(it) holds.
template <class E>
V<E> FilledCells(linalg_plan::Builder<E>& b, V<E> q_part, V<E> it, int rank,
                 const std::function<V<E>(V<E>)>& column,
                 const std::function<std::optional<V<E>>(V<E>)>& write) {
  using jaxpr::DType;
  auto& e = b.e;
  V<E> iota_c = b.Iota(e.Op(
      "Gather", {e.Op("Shape", {q_part}, DType::kI64), b.ScalarI64(rank - 1)},
      DType::kI64, {OpAttr::Int("axis", 0)}));
  V<E> at = b.Bin("Equal", iota_c, column(it), DType::kBool);
  if (std::optional<V<E>> w = write(it)) {
    at = e.Op("And", {at, *w}, DType::kBool);
  }
  return at;
}

// Rewrites columns of q [..., r, c] one Loop step at a time: at step `it`,
// column column(it) becomes, where write(it) holds, the standard basis
// vector with the longest residual against q's columns (P = I - Q Qᵀ,
// Gram-Schmidt applied twice: P <- P - Q Qᵀ P; first on ties), normalized.
// Columns being filled hold zeros, which project nothing. With orthonormal
// nonzero columns the squared residual norms sum to r minus their count, so
// the chosen one is >= sqrt(1 / r): no cancellation.
// `q_shape` is q's shape [..., r, c] (the Loop carries it).
template <class E>
absl::StatusOr<V<E>> FillColumns(
    linalg_plan::Builder<E>& b, V<E> q, int64_t r, V<E> trip, int rank,
    const std::function<V<E>(V<E>)>& column,
    const std::function<std::optional<V<E>>(V<E>)>& write,
    const std::vector<jaxpr::DimExpr>& q_shape) {
  using jaxpr::DType;
  auto& e = b.e;
  const DType dt = b.dt;
  // Named variables, not a structured binding: the loop bodies below
  // capture them, which clang before 16 refuses for bindings.
  const std::pair<V<E>, V<E>> residual = ResidualEye(b, r);
  const V<E> iota_r = residual.first, eye = residual.second;
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(trip, {q}, {CarriedType(dt, q_shape)},
             [&](V<E> it, const std::vector<V<E>>& carried)
                 -> absl::StatusOr<std::vector<V<E>>> {
               V<E> q = carried[0];
               V<E> qt = b.TransposeLast2(q, rank, dt);
               auto mm = [&](V<E> x, V<E> y) {
                 return e.Op("MatMul", {x, y}, dt);
               };
               V<E> p = b.Bin("Sub", eye, mm(q, qt), dt);
               p = b.Bin("Sub", p, mm(q, mm(qt, p)), dt);
               V<E> norms = e.Op(
                   "ReduceSum", {b.Bin("Mul", p, p, dt), b.Axes({rank - 2})},
                   dt, {OpAttr::Int("keepdims", 1)});  // [..., 1, r]
               V<E> j = LongestResidual(b, norms, rank);
               V<E> x = e.Op("ReduceSum",
                             {b.Where(b.Bin("Equal", iota_r, j, DType::kBool),
                                      p, b.Scalar(0), dt),
                              b.Axes({rank - 1})},
                             dt, {OpAttr::Int("keepdims", 1)});  // [..., r, 1]
               // x's length (ReduceSum: ReduceMax takes axes as an input only
               // from opset 18).
               V<E> len = e.Op("ReduceSum",
                               {b.Bin("Mul", x, x, dt), b.Axes({rank - 2})}, dt,
                               {OpAttr::Int("keepdims", 1)});
               x = b.Bin("Div", x, e.Op("Sqrt", {len}, dt), dt);
               V<E> at = FilledCells(b, q, it, rank, column, write);
               return std::vector<V<E>>{b.Where(at, x, q, dt)};
             }));
  return out[0];
}

// Extends u [..., r, k] (orthonormal columns) to [..., r, r] with
// orthonormal columns, for svd(full_matrices=True) on a non-square matrix:
// FillColumns over columns k .. r-1 of u widened with zeros. The completion
// is not unique (LAPACK gesdd's differs); only its orthonormality is
// specified.
template <class E>
absl::StatusOr<V<E>> CompleteColumns(linalg_plan::Builder<E>& b, V<E> u,
                                     int64_t r, int64_t k, int rank,
                                     const std::vector<jaxpr::DimExpr>& batch) {
  using jaxpr::DType;
  V<E> widen =
      b.Cast(b.Bin("Equal", b.Unsqueeze(b.Iota(b.ScalarI64(k)), 1, DType::kI64),
                   b.Iota(b.ScalarI64(r)), DType::kBool),
             b.dt);  // [k, r]: u's columns first
  return FillColumns<E>(
      b, b.e.Op("MatMul", {u, widen}, b.dt), r, b.ScalarI64(r - k), rank,
      [&](V<E> it) { return b.Bin("Add", it, b.ScalarI64(k), DType::kI64); },
      [](V<E>) { return std::optional<V<E>>(); }, MatrixShape(batch, r, r));
}

// The columns of u [..., r, k] whose singular value (sigma [..., k],
// descending) is exactly 0 come out zero from A V / s; LAPACK's U has unit
// columns there, orthogonal to the rest. FillColumns rewrites them from the
// last backwards, in a Loop of as many steps as the most zero singular
// values of any batch member (none for a full-rank input): this plan gives
// its trip count and, per step, the column and the members that write it.
// The real and the complex FillZeroColumns share it.
template <class E>
struct ZeroColumnPlan {
  V<E> trip;
  std::function<V<E>(V<E>)> column;
  std::function<std::optional<V<E>>(V<E>)> write;
};

template <class E>
ZeroColumnPlan<E> PlanZeroColumns(linalg_plan::Builder<E>& b, V<E> sigma,
                                  int64_t k, int rank) {
  using jaxpr::DType;
  auto& e = b.e;
  V<E> zero = b.Bin("Equal", sigma, b.Scalar(0), DType::kBool);  // [..., k]
  V<E> count =
      e.Op("ReduceSum", {b.Cast(zero, DType::kI64), b.Axes({rank - 2})},
           DType::kI64, {OpAttr::Int("keepdims", 0)});
  ZeroColumnPlan<E> plan;
  plan.trip = e.Op("ReduceMax",
                   {e.Op("Reshape", {count, e.ConstI64({-1})}, DType::kI64)},
                   DType::kI64, {OpAttr::Int("keepdims", 0)});
  plan.column = [&b, k](V<E> it) {
    return b.Bin("Sub", b.ScalarI64(k - 1), it, DType::kI64);
  };
  plan.write = [&b, zero, rank,
                column = plan.column](V<E> it) -> std::optional<V<E>> {
    // This member's singular value at the column: [..., 1, 1].
    V<E> z = b.e.Op("Gather", {zero, column(it)}, DType::kBool,
                    {OpAttr::Int("axis", rank - 2)});
    return b.Unsqueeze(b.Unsqueeze(z, rank - 2, DType::kBool), rank - 2,
                       DType::kBool);
  };
  return plan;
}

template <class E>
absl::StatusOr<V<E>> FillZeroColumns(linalg_plan::Builder<E>& b, V<E> u,
                                     V<E> sigma, int64_t r, int64_t k, int rank,
                                     const std::vector<jaxpr::DimExpr>& batch) {
  ZeroColumnPlan<E> plan = PlanZeroColumns(b, sigma, k, rank);
  return FillColumns<E>(b, u, r, plan.trip, rank, plan.column, plan.write,
                        MatrixShape(batch, r, k));
}

// svd's operand, params and static matrix dims (the real and complex
// recipes share them): one variable operand of rank >= 2, static nonzero
// m, n, no subset_by_index.
struct SvdShape {
  std::vector<jaxpr::DimExpr> batch;  // the operand's batch dims
  int rank = 0;
  int64_t m = 0, n = 0;
  bool compute_uv = false;
  bool full = false;  // full_matrices (and compute_uv) on a non-square matrix
};
inline absl::StatusOr<SvdShape> ReadSvdShape(const jaxpr::Eqn& eqn) {
  if (eqn.inputs.size() != 1 || eqn.inputs[0].is_literal()) {
    return absl::InvalidArgumentError("svd takes 1 variable operand");
  }
  const jaxpr::Aval& aval = eqn.inputs[0].var->aval;
  SvdShape shape;
  shape.rank = aval.rank();
  if (shape.rank < 2) {
    return absl::InvalidArgumentError("svd: rank must be >= 2");
  }
  J2O_ASSIGN_OR_RETURN(shape.compute_uv, eqn.params.GetBool("compute_uv"));
  J2O_ASSIGN_OR_RETURN(bool full, eqn.params.GetBool("full_matrices"));
  if (const jaxpr::ParamValue* sub = eqn.params.Find("subset_by_index");
      sub != nullptr && !sub->is_none()) {
    return absl::UnimplementedError("svd with subset_by_index is not lowered");
  }
  const jaxpr::DimExpr& m_dim = aval.shape[shape.rank - 2];
  const jaxpr::DimExpr& n_dim = aval.shape[shape.rank - 1];
  if (!m_dim.is_constant() || !n_dim.is_constant()) {
    return absl::UnimplementedError(
        "svd needs static matrix dims (which side is longer decides the "
        "algorithm's layout)");
  }
  shape.m = m_dim.constant_value();
  shape.n = n_dim.constant_value();
  shape.batch.assign(aval.shape.begin(), aval.shape.end() - 2);
  shape.full = full && shape.compute_uv && shape.m != shape.n;
  if (std::min(shape.m, shape.n) == 0) {
    return absl::UnimplementedError("svd of an empty matrix is not lowered");
  }
  return shape;
}

// eigh's `lower` param, and the refusal of subset_by_index (the real and
// complex recipes share them).
inline absl::StatusOr<bool> ReadEighLower(const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(bool lower, eqn.params.GetBool("lower"));
  if (const jaxpr::ParamValue* sub = eqn.params.Find("subset_by_index");
      sub != nullptr && !sub->is_none()) {
    return absl::UnimplementedError(
        "eigh with subset_by_index is not lowered (JAX's CPU lowering "
        "rejects it too)");
  }
  return lower;
}

}  // namespace eig_plan

// eigh(a) -> (v, w): see the file comment.
template <class E>
absl::Status LowerEigh(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  namespace ep = eig_plan;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 1 || eqn.outputs.size() != 2) {
    return absl::InvalidArgumentError("eigh takes 1 operand, 2 results");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "eigh"));
  const int rank = aval.rank();
  J2O_ASSIGN_OR_RETURN(bool lower, ep::ReadEighLower(eqn));
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(Val a, e.In(0));
  J2O_ASSIGN_OR_RETURN(Val n, b.Size(aval.shape[rank - 1]));
  Val iota = b.Iota(n);
  Val rows = b.Unsqueeze(iota, 1, DType::kI64);
  Val strict = b.Bin(lower ? "Greater" : "Less", rows, iota, DType::kBool);
  Val eye = b.Bin("Equal", rows, iota, DType::kBool);
  // The symmetric matrix of the named triangle.
  Val off = b.Where(strict, a, b.Scalar(0), dt);
  Val sym = b.Bin("Add", b.Bin("Add", off, b.TransposeLast2(off, rank, dt), dt),
                  b.Where(eye, a, b.Scalar(0), dt), dt);
  // Rounds of n'/2 disjoint rotations (RoundOf): n' - 1 per sweep.
  Val rounds = ep::RoundsPerSweep(b, n);
  Val trip = b.Bin("Mul", rounds, b.ScalarI64(ep::kMaxSweeps), DType::kI64);
  // Off-diagonal entries are measured against ||A||_F (kept by the
  // rotations); a sweep whose entries are all <= n eps of it ends the Loop.
  Val fro = ep::FrobeniusScale(b, b.Bin("Mul", sym, sym, dt), rank);
  Val tol = b.Bin("Mul", b.Cast(n, dt), b.Scalar(ep::Epsilon(b)), dt);
  J2O_ASSIGN_OR_RETURN(
      std::vector<Val> out,
      e.Loop(
          trip, {sym, ep::EyeLike(b, sym, eye), b.Scalar(0)},
          {plugin::CarriedType(dt, aval.shape),
           plugin::CarriedType(dt, aval.shape), plugin::CarriedType(dt, {})},
          [&](Val it, const std::vector<Val>& carried)
              -> absl::StatusOr<std::vector<Val>> {
            Val m = carried[0];
            Val v = carried[1];
            ep::Round<E> round = ep::RoundOf(b, it, n, iota);
            Val diag =
                e.Op("ReduceSum",
                     {b.Where(eye, m, b.Scalar(0), dt), b.Axes({rank - 1})}, dt,
                     {OpAttr::Int("keepdims", 0)});
            // z_i = m[i, partner_i], read from the p row for both
            // members of a pair so that they rotate alike.
            Val at_partner =
                b.Bin("Equal", b.Unsqueeze(round.partner, 1, DType::kI64), iota,
                      DType::kBool);
            Val z_row = e.Op(
                "ReduceSum",
                {b.Where(at_partner, m, b.Scalar(0), dt), b.Axes({rank - 1})},
                dt, {OpAttr::Int("keepdims", 0)});
            Val z = b.Where(round.first, z_row,
                            b.Take(z_row, round.partner, rank - 2, dt), dt);
            ep::RoundRotation<E> rot = ep::RotationOfRound(
                b, round, diag, b.Take(diag, round.partner, rank - 2, dt), z,
                rank);
            m = ep::RotateRound(b, m, round.partner, rot.c_rows, rot.s_rows,
                                rank - 2);
            m = ep::RotateRound(b, m, round.partner, rot.c_cols, rot.s_cols,
                                rank - 1);
            v = ep::RotateRound(b, v, round.partner, rot.c_cols, rot.s_cols,
                                rank - 1);
            Val measure = b.Where(round.active,
                                  b.Bin("Div", e.Op("Abs", {z}, dt), fro, dt),
                                  b.Scalar(0), dt);
            ep::SweepTest<E> test =
                ep::EndOfSweepTest(b, it, rounds, carried[2], measure, tol);
            return std::vector<Val>{test.keep_going, m, v, test.worst};
          },
          /*early_exit=*/true));
  // The eigenvalues as Rayleigh quotients v_iᵀ A v_i of the symmetric
  // input and the re-orthogonalized V: their error is second order in the
  // eigenvectors' (the rotated diagonal carries every rotation's rounding).
  Val v_final = ep::Reorthogonalize(b, out[1], eye, rank);
  Val w = e.Op("ReduceSum",
               {b.Bin("Mul", v_final, e.Op("MatMul", {sym, v_final}, dt), dt),
                b.Axes({rank - 2})},
               dt, {OpAttr::Int("keepdims", 0)});
  auto [sorted_w, sorted_v] =
      ep::SortWithVectors(b, w, n, v_final, rank, /*ascending=*/true);
  J2O_RETURN_IF_ERROR(e.SetOut(0, sorted_v));
  return e.SetOut(1, sorted_w);
}

// svd(a) -> (s[, u, vt]): see the file comment. full_matrices on a
// non-square matrix completes the longer side's factor (CompleteColumns).
template <class E>
absl::Status LowerSvd(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  namespace ep = eig_plan;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_ASSIGN_OR_RETURN(ep::SvdShape shape, ep::ReadSvdShape(eqn));
  const jaxpr::Aval& aval = eqn.inputs[0].var->aval;
  const DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "svd"));
  const int rank = shape.rank;
  const bool compute_uv = shape.compute_uv;
  const int64_t m0 = shape.m, n0 = shape.n;
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(Val a, e.In(0));
  const bool wide = m0 < n0;  // work on Aᵀ, tall
  if (wide) a = b.TransposeLast2(a, rank, dt);
  const int64_t cols = std::min(m0, n0);
  Val n = b.ScalarI64(cols);
  Val iota = b.Iota(n);
  Val eye =
      b.Bin("Equal", b.Unsqueeze(iota, 1, DType::kI64), iota, DType::kBool);
  // V starts as the identity of [..., cols, cols]: the Gram shape.
  Val gram = e.Op("MatMul", {b.TransposeLast2(a, rank, dt), a}, dt);
  // Rounds of disjoint column pairs (RoundOf): cols' - 1 per sweep.
  const int64_t rounds_per_sweep = cols + cols % 2 - 1;
  Val rounds = b.ScalarI64(rounds_per_sweep);
  Val trip = b.ScalarI64(rounds_per_sweep * ep::kMaxSweeps);
  // dgesvj's test: a sweep whose column pairs all have |cos| <= sqrt(m) eps
  // ends the Loop.
  Val tol = b.Scalar(std::sqrt(static_cast<double>(std::max(m0, n0))) *
                     ep::Epsilon(b));
  // The tall matrix [..., max(m, n), cols] and V [..., cols, cols].
  std::vector<jaxpr::DimExpr> tall_shape(aval.shape.begin(),
                                         aval.shape.end() - 2);
  std::vector<jaxpr::DimExpr> gram_shape = tall_shape;
  tall_shape.push_back(jaxpr::DimExpr::Constant(std::max(m0, n0)));
  tall_shape.push_back(jaxpr::DimExpr::Constant(cols));
  gram_shape.push_back(jaxpr::DimExpr::Constant(cols));
  gram_shape.push_back(jaxpr::DimExpr::Constant(cols));
  J2O_ASSIGN_OR_RETURN(
      std::vector<Val> out,
      e.Loop(
          trip, {a, ep::EyeLike(b, gram, eye), b.Scalar(0)},
          {plugin::CarriedType(dt, tall_shape),
           plugin::CarriedType(dt, gram_shape), plugin::CarriedType(dt, {})},
          [&](Val it, const std::vector<Val>& carried)
              -> absl::StatusOr<std::vector<Val>> {
            Val u = carried[0];
            Val v = carried[1];
            ep::Round<E> round = ep::RoundOf(b, it, n, iota);
            auto column_dots = [&](Val x, Val y) {  // [..., cols]
              return e.Op("ReduceSum",
                          {b.Bin("Mul", x, y, dt), b.Axes({rank - 2})}, dt,
                          {OpAttr::Int("keepdims", 0)});
            };
            Val u_partner = b.Take(u, round.partner, rank - 1, dt);
            Val norms2 = column_dots(u, u);
            // The same products in the same order for both members.
            Val gamma = column_dots(u, u_partner);
            Val norms2_partner = b.Take(norms2, round.partner, rank - 2, dt);
            ep::RoundRotation<E> rot = ep::RotationOfRound(
                b, round, norms2, norms2_partner, gamma, rank);
            u = b.Bin("Add", b.Bin("Mul", rot.c_cols, u, dt),
                      b.Bin("Mul", rot.s_cols, u_partner, dt), dt);
            v = ep::RotateRound(b, v, round.partner, rot.c_cols, rot.s_cols,
                                rank - 1);
            Val measure = ep::ColumnCosines(b, round, norms2, norms2_partner,
                                            e.Op("Abs", {gamma}, dt));
            ep::SweepTest<E> test =
                ep::EndOfSweepTest(b, it, rounds, carried[2], measure, tol);
            return std::vector<Val>{test.keep_going, u, v, test.worst};
          },
          /*early_exit=*/true));
  // The singular values are the column norms of A V from the input and the
  // re-orthogonalized V (the rotated columns' norms carry every rotation's
  // rounding): second-order accurate in V's error. U comes from the rotated
  // columns, which the sweeps made orthogonal to working precision whatever
  // their norms (A V / s would lose that for small s). A column rotated to
  // exactly 0 (an exactly rank-deficient input) has s = 0: it sorts last
  // and FillZeroColumns fills it.
  Val v_final = ep::Reorthogonalize(b, out[1], eye, rank);
  auto column_norms = [&](Val x) {  // [..., cols]
    return e.Op("Sqrt",
                {e.Op("ReduceSum", {b.Bin("Mul", x, x, dt), b.Axes({rank - 2})},
                      dt, {OpAttr::Int("keepdims", 0)})},
                dt);
  };
  Val rotated_norms = column_norms(out[0]);
  Val nonzero = b.Bin("Greater", rotated_norms, b.Scalar(0), DType::kBool);
  Val norms = b.Where(nonzero, column_norms(e.Op("MatMul", {a, v_final}, dt)),
                      b.Scalar(0), dt);
  auto [sigma, v_sorted] =
      ep::SortWithVectors(b, norms, n, v_final, rank, /*ascending=*/false);
  // A member with a NaN entry is NaN in every output, as JAX on CPU gives
  // it (AnyNaNMatrix); the Jacobi sweeps would turn its NaN into zeros.
  Val nan_member = lp::AnyNaNMatrix(b, a, rank);
  Val nan = b.Scalar(std::numeric_limits<double>::quiet_NaN());
  auto nan_where_bad = [&](Val x) { return b.Where(nan_member, nan, x, dt); };
  J2O_RETURN_IF_ERROR(e.SetOut(
      0,
      b.Where(b.Squeeze(nan_member, rank - 1, DType::kBool), nan, sigma, dt)));
  if (!compute_uv) return absl::OkStatus();
  Val safe = b.Where(nonzero, rotated_norms, b.Scalar(1), dt);
  auto [unused, u_unit] = ep::SortWithVectors(
      b, norms, n, b.Bin("Div", out[0], b.Unsqueeze(safe, rank - 2, dt), dt),
      rank, /*ascending=*/false);
  J2O_ASSIGN_OR_RETURN(
      u_unit, ep::FillZeroColumns(b, u_unit, sigma, std::max(m0, n0), cols,
                                  rank, shape.batch));
  if (shape.full) {
    J2O_ASSIGN_OR_RETURN(
        u_unit, ep::CompleteColumns(b, u_unit, std::max(m0, n0), cols, rank,
                                    shape.batch));
  }
  // A = U S Vᵀ (tall); for a wide A, Aᵀ = U' S V'ᵀ gives U = V', Vᵀ = U'ᵀ.
  if (wide) {
    J2O_RETURN_IF_ERROR(e.SetOut(1, nan_where_bad(v_sorted)));
    return e.SetOut(2, nan_where_bad(b.TransposeLast2(u_unit, rank, dt)));
  }
  J2O_RETURN_IF_ERROR(e.SetOut(1, nan_where_bad(u_unit)));
  return e.SetOut(2, nan_where_bad(b.TransposeLast2(v_sorted, rank, dt)));
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_EIG_PLAN_H_
