// Pipeline-independent lowering recipes for the dense linear-algebra
// primitives (cholesky, triangular_solve, lu, lu_pivots_to_permutation),
// written once against the emitter interface of plugin/emit.h.
//
// Every factorization is one ONNX Loop over the pivot/column index k whose
// body works on whole [..., n, n] tensors: the column or row k is read with
// Gather (scalar index: the axis disappears), and written back with Where on
// an iota == k mask. The body is a fixed handful of nodes, so the graph has
// the same size for every n, static or symbolic (bench/linalg_graph_size.sh
// prints the counts), and leading batch dims are carried through by
// broadcasting. Arithmetic follows LAPACK's unblocked algorithms (potf2,
// trsm, getf2): the same operations per element in the same order up to the
// dot-product summation order, so f32 results agree to rounding.
//
// The recipes here take f32 and f64: JAX's CPU kernels (LAPACK) take f32,
// f64, c64 and c128. On c64/c128, cholesky, triangular_solve, lu and
// tridiagonal_solve are lowered by linalg_complex_plan.h, qr, geqrf,
// householder_product by qr_complex_plan.h and eigh, svd by
// eig_complex_plan.h (reached through the complex dispatch of complex_plan.h,
// so the real recipes never see a complex dtype). f16/bf16, which JAX itself
// rejects, are refused with a precise error.
#ifndef JAX2ONNX_PLUGIN_LINALG_PLAN_H_
#define JAX2ONNX_PLUGIN_LINALG_PLAN_H_

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/linear_solve_params.h"
#include "jaxpr/status_macros.h"
#include "plugin/elementwise_plan.h"
#include "plugin/emit.h"
#include "plugin/onnx_types.h"
#include "plugin/registry.h"

namespace jax2onnx::plugin {
namespace linalg_plan {

template <class E>
using V = typename E::Value;

// f32/f64 or a precise refusal naming the primitive.
inline absl::Status CheckRealFloat(jaxpr::DType dtype, absl::string_view prim) {
  if (dtype == jaxpr::DType::kF32 || dtype == jaxpr::DType::kF64) {
    return absl::OkStatus();
  }
  if (jaxpr::IsComplex(dtype)) {
    return absl::UnimplementedError(
        absl::StrCat(prim, " on ", jaxpr::ShortName(dtype),
                     ": complex operands are lowered by the complex recipes "
                     "(plugin/complex_plan.h), not by this real one"));
  }
  return absl::UnimplementedError(absl::StrCat(
      prim, " on ", jaxpr::ShortName(dtype),
      ": only f32 and f64 are lowered (JAX's LAPACK kernels take f32, f64, "
      "c64, c128)"));
}

// Small graph-building helpers over an emitter, for one float dtype.
template <class E>
struct Builder {
  E& e;
  jaxpr::DType dt;

  V<E> ScalarI64(int64_t v) {
    return e.Const(jaxpr::Array::ScalarFromInt64(jaxpr::DType::kI64, v));
  }
  V<E> Scalar(double v) {
    return e.Const(jaxpr::Array::ScalarFromDouble(dt, v));
  }
  V<E> Axes(std::vector<int64_t> axes) { return e.ConstI64(std::move(axes)); }
  V<E> Unsqueeze(V<E> x, int64_t axis, jaxpr::DType d) {
    return e.Op("Unsqueeze", {x, Axes({axis})}, d);
  }
  V<E> Squeeze(V<E> x, int64_t axis, jaxpr::DType d) {
    return e.Op("Squeeze", {x, Axes({axis})}, d);
  }
  // x[..., k, ...] on `axis` with a scalar int64 k (the axis disappears).
  V<E> Take(V<E> x, V<E> k, int64_t axis, jaxpr::DType d) {
    return e.Op("Gather", {x, k}, d, {OpAttr::Int("axis", axis)});
  }
  V<E> Bin(const char* op, V<E> a, V<E> b, jaxpr::DType d) {
    return e.Op(op, {a, b}, d);
  }
  V<E> Where(V<E> c, V<E> a, V<E> b, jaxpr::DType d) {
    return e.Op("Where", {c, a, b}, d);
  }
  // The size of a dim as an int64 scalar.
  absl::StatusOr<V<E>> Size(const jaxpr::DimExpr& d) {
    J2O_ASSIGN_OR_RETURN(V<E> v, e.DimValue(d));
    return Squeeze(v, 0, jaxpr::DType::kI64);
  }
  // int64 [n]: 0, 1, ..., n-1.
  V<E> Iota(V<E> n) {
    return e.Op("Range", {ScalarI64(0), n, ScalarI64(1)}, jaxpr::DType::kI64);
  }
  V<E> ZerosLike(V<E> x, jaxpr::DType d) {
    V<E> zero = e.Const(jaxpr::Array::ScalarFromDouble(d, 0));
    return e.Op("Expand", {zero, e.Op("Shape", {x}, jaxpr::DType::kI64)}, d);
  }
  // Swaps the last two axes of a rank-`rank` tensor.
  V<E> TransposeLast2(V<E> x, int rank, jaxpr::DType d) {
    std::vector<int64_t> perm;
    for (int i = 0; i < rank; ++i) perm.push_back(i);
    std::swap(perm[rank - 1], perm[rank - 2]);
    return e.Op("Transpose", {x}, d, {OpAttr::Ints("perm", perm)});
  }
  V<E> Cast(V<E> x, jaxpr::DType to) {
    return e.Op("Cast", {x}, to,
                {OpAttr::Int("to", elementwise::OnnxType(to))});
  }
  // The int64 shape x.shape[:batch_rank] ++ parts (each part 1-D int64),
  // an Expand target over x's batch dims. With no batch dims the
  // Shape(x, end=0) is left out rather than concatenated: it is empty, and
  // ONNX's strict shape inference with data propagation (libonnx 1.12)
  // rejects the Concat that reads it ("axis must be in [-rank, rank-1]").
  V<E> BatchShapeThen(V<E> x, int batch_rank, std::vector<V<E>> parts) {
    if (batch_rank > 0) {
      parts.insert(parts.begin(), e.Op("Shape", {x}, jaxpr::DType::kI64,
                                       {OpAttr::Int("end", batch_rank)}));
    }
    if (parts.size() == 1) return parts[0];
    return e.Op("Concat", parts, jaxpr::DType::kI64, {OpAttr::Int("axis", 0)});
  }
};

// getf2's bookkeeping, shared by the real and complex lu. The running
// permutation [..., m] and pivots [..., steps] (int64 in the loop) start as
// iotas over the batch dims of `a` (rank `rank`).
template <class E>
std::pair<V<E>, V<E>> LuIotas(Builder<E>& b, V<E> a, int rank, V<E> iota_m,
                              V<E> m, V<E> iota_k, V<E> steps) {
  using jaxpr::DType;
  E& e = b.e;
  auto over_batch = [&](V<E> iota, V<E> size) {
    return e.Op("Expand",
                {iota, b.BatchShapeThen(a, rank - 2,
                                        {b.Unsqueeze(size, 0, DType::kI64)})},
                DType::kI64);
  };
  V<E> perm0 = over_batch(iota_m, m);
  return {perm0, over_batch(iota_k, steps)};
}

// Step k's pivot row p ([..., 1]): the first i >= k of largest
// magnitude[..., i]; and the row index map [..., m] of the swap k <-> p.
// NaN magnitudes as (reference BLAS) idamax scans from row k: a later row
// is taken only when strictly larger, so a NaN below row k is never taken
// and a NaN at row k keeps row k (ONNX ArgMax's NaN order is unspecified).
template <class E>
std::pair<V<E>, V<E>> LuPivotRow(Builder<E>& b, V<E> magnitude, V<E> k,
                                 V<E> iota_m, int rank) {
  using jaxpr::DType;
  E& e = b.e;
  V<E> cand = b.Where(b.Bin("GreaterOrEqual", iota_m, k, DType::kBool),
                      magnitude, b.Scalar(-1), b.dt);
  cand = b.Where(e.Op("IsNaN", {cand}, DType::kBool), b.Scalar(-1), cand, b.dt);
  V<E> argmax =
      e.Op("ArgMax", {cand}, DType::kI64,
           {OpAttr::Int("axis", rank - 2), OpAttr::Int("keepdims", 1)});
  V<E> at_k = b.Unsqueeze(b.Take(magnitude, k, rank - 2, b.dt), rank - 2, b.dt);
  V<E> p = b.Where(e.Op("IsNaN", {at_k}, DType::kBool),
                   b.Unsqueeze(k, 0, DType::kI64), argmax, DType::kI64);
  V<E> swap = b.Where(
      b.Bin("Equal", iota_m, k, DType::kBool), p,
      b.Where(b.Bin("Equal", iota_m, p, DType::kBool), k, iota_m, DType::kI64),
      DType::kI64);
  return {p, swap};
}

// cholesky's failure test, shared by the real and complex recipes: a batch
// member fails when some diagonal entry of L (its real part, `l_re`) is not
// > 0 (sqrt of a non-positive or NaN pivot), as JAX replaces a failed potrf
// by NaN. Returns the [..., 1, 1] bool mask of failed members and a NaN
// scalar to fill them with.
template <class E>
std::pair<V<E>, V<E>> CholeskyFailed(Builder<E>& b, V<E> l_re, V<E> rows,
                                     V<E> iota, int rank) {
  using jaxpr::DType;
  E& e = b.e;
  const DType dt = b.dt;
  V<E> eye = b.Bin("Equal", rows, iota, DType::kBool);
  V<E> bad = b.Cast(
      e.Op(
          "And",
          {eye, e.Op("Not", {b.Bin("Greater", l_re, b.Scalar(0), DType::kBool)},
                     DType::kBool)},
          DType::kBool),
      dt);
  // ReduceMax takes its axes as an input from opset 18, an attribute before.
  V<E> any_bad = e.opset() >= 18
                     ? e.Op("ReduceMax", {bad, b.Axes({rank - 2, rank - 1})},
                            dt, {OpAttr::Int("keepdims", 1)})
                     : e.Op("ReduceMax", {bad}, dt,
                            {OpAttr::Ints("axes", {rank - 2, rank - 1}),
                             OpAttr::Int("keepdims", 1)});
  V<E> nan = b.Scalar(std::numeric_limits<double>::quiet_NaN());
  return {b.Bin("Greater", any_bad, b.Scalar(0), DType::kBool), nan};
}

// The [..., 1, 1] bool mask of batch members of `a` (rank `rank`, real
// dtype b.dt) holding a NaN anywhere: LAPACK's ?gesdd refuses a NaN matrix
// (ANRM = ?LANGE('M') is NaN: INFO = -4) and JAX's svd lowering replaces
// every output of a member with info != 0 by NaN.
template <class E>
V<E> AnyNaNMatrix(Builder<E>& b, V<E> a, int rank) {
  using jaxpr::DType;
  E& e = b.e;
  V<E> nan = b.Cast(e.Op("IsNaN", {a}, DType::kBool), b.dt);
  V<E> count = e.Op("ReduceSum", {nan, b.Axes({rank - 2, rank - 1})}, b.dt,
                    {OpAttr::Int("keepdims", 1)});
  return b.Bin("Greater", count, b.Scalar(0), DType::kBool);
}

// triangular_solve's params (the real and complex recipes share them) and
// the system they solve: op(A) X = B, the right side X op(A) = B solved as
// op(A)ᵀ Xᵀ = Bᵀ, so `transpose` says whether the matrix solved is
// transposed and `eff_lower` whether it is lower triangular (forward
// substitution) after that.
struct TriangularSolveParams {
  bool left_side = false, lower = false, transpose_a = false;
  bool unit_diagonal = false;
  bool transpose = false, eff_lower = false;
};
inline absl::StatusOr<TriangularSolveParams> ReadTriangularSolveParams(
    const jaxpr::Eqn& eqn) {
  TriangularSolveParams p;
  J2O_ASSIGN_OR_RETURN(p.left_side, eqn.params.GetBool("left_side"));
  J2O_ASSIGN_OR_RETURN(p.lower, eqn.params.GetBool("lower"));
  J2O_ASSIGN_OR_RETURN(p.transpose_a, eqn.params.GetBool("transpose_a"));
  J2O_ASSIGN_OR_RETURN(p.unit_diagonal, eqn.params.GetBool("unit_diagonal"));
  p.transpose = p.transpose_a != !p.left_side;
  p.eff_lower = p.lower != p.transpose;
  return p;
}

// The substitution's index space (real and complex triangular_solve): m,
// the order of A (`aval` the result's, rank `rank`), its iota, the row
// index column and the mask of the named triangle of A.
template <class E>
struct TriangularSolveIndex {
  V<E> m, iota, rows, tri;
};
template <class E>
absl::StatusOr<TriangularSolveIndex<E>> TriangularSolveIndices(
    Builder<E>& b, const jaxpr::Aval& aval, const TriangularSolveParams& p,
    int rank) {
  using jaxpr::DType;
  TriangularSolveIndex<E> ix;
  const jaxpr::DimExpr& m_dim = aval.shape[p.left_side ? rank - 2 : rank - 1];
  J2O_ASSIGN_OR_RETURN(ix.m, b.Size(m_dim));
  ix.iota = b.Iota(ix.m);
  ix.rows = b.Unsqueeze(ix.iota, 1, DType::kI64);
  ix.tri = b.Bin(p.lower ? "GreaterOrEqual" : "LessOrEqual", ix.rows, ix.iota,
                 DType::kBool);
  return ix;
}

// tridiagonal_solve's operand count and perturb_singular refusal (the real
// and complex recipes share them).
inline absl::Status CheckTridiagonalSolveEqn(const jaxpr::Eqn& eqn) {
  if (eqn.inputs.size() != 4 || eqn.outputs.size() != 1) {
    return absl::InvalidArgumentError(
        "tridiagonal_solve takes (dl, d, du, b), one result");
  }
  if (eqn.params.Has("perturb_singular")) {
    J2O_ASSIGN_OR_RETURN(bool perturb, eqn.params.GetBool("perturb_singular"));
    if (perturb) {
      return absl::UnimplementedError(
          "tridiagonal_solve with perturb_singular=True is not lowered");
    }
  }
  return absl::OkStatus();
}

// The sizes of a factorization of a [..., m, n] matrix (`mat`, rank `rank`)
// in `steps` Loop steps, and their iotas (lu and geqrf, real and complex).
template <class E>
struct StepDims {
  V<E> m, n, steps;
  V<E> iota_m, iota_n, iota_k;
};
template <class E>
absl::StatusOr<StepDims<E>> ReadStepDims(Builder<E>& b, const jaxpr::Aval& mat,
                                         const jaxpr::DimExpr& steps_dim,
                                         int rank) {
  StepDims<E> s;
  J2O_ASSIGN_OR_RETURN(s.m, b.Size(mat.shape[rank - 2]));
  J2O_ASSIGN_OR_RETURN(s.n, b.Size(mat.shape[rank - 1]));
  J2O_ASSIGN_OR_RETURN(s.steps, b.Size(steps_dim));
  s.iota_m = b.Iota(s.m);
  s.iota_n = b.Iota(s.n);
  s.iota_k = b.Iota(s.steps);
  return s;
}

// The [..., m, m] identity with the batch dims of `like` (rank `rank`), and
// that shape (an int64 [rank] tensor) for more tensors of the same size.
template <class E>
std::pair<V<E>, V<E>> BatchedEye(Builder<E>& b, V<E> like, V<E> iota_m, V<E> m,
                                 int rank) {
  using jaxpr::DType;
  E& e = b.e;
  V<E> rows = b.Unsqueeze(iota_m, 1, DType::kI64);
  V<E> eye = b.Cast(b.Bin("Equal", rows, iota_m, DType::kBool), b.dt);
  V<E> mm = b.Unsqueeze(m, 0, DType::kI64);
  V<E> shape = b.BatchShapeThen(like, rank - 2, {mm, mm});
  return {e.Op("Expand", {eye, shape}, b.dt), shape};
}

}  // namespace linalg_plan

// cholesky(a): LAPACK potrf (lower) as JAX's CPU lowering calls it. The lower
// triangle holds L with A = L Lᵀ, computed column by column (left-looking:
// v = A[:, k] - L L[k, :]ᵀ, L[k, k] = sqrt(v[k]), L[i, k] = v[i] / L[k, k]);
// only the lower triangle of `a` is read. The strict upper triangle keeps
// the input's values (potrf works in place and JAX wraps the primitive in
// tril). A matrix whose pivot is not > 0 (not positive definite, or NaN)
// becomes all NaN, as JAX replaces a failed factorization.
template <class E>
absl::Status LowerCholesky(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  using linalg_plan::V;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 1 || eqn.outputs.size() != 1) {
    return absl::InvalidArgumentError("cholesky takes 1 operand, 1 result");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "cholesky"));
  const int rank = aval.rank();
  if (rank < 2) {
    return absl::InvalidArgumentError("cholesky: operand rank must be >= 2");
  }
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(V<E> a, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> n, b.Size(aval.shape[rank - 1]));
  V<E> iota = b.Iota(n);
  V<E> l0 = b.ZerosLike(a, dt);
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(n, {l0}, {plugin::CarriedType(dt, aval.shape)},
             [&](V<E> k, const std::vector<V<E>>& carried)
                 -> absl::StatusOr<std::vector<V<E>>> {
               V<E> l = carried[0];
               V<E> a_col = b.Take(a, k, rank - 1, dt);  // [..., n]
               V<E> l_row = b.Take(l, k, rank - 2, dt);  // [..., n]
               V<E> dots = b.Squeeze(
                   e.Op("MatMul", {l, b.Unsqueeze(l_row, rank - 1, dt)}, dt),
                   rank - 1, dt);  // [..., n]
               V<E> v = b.Bin("Sub", a_col, dots, dt);
               V<E> diag = b.Unsqueeze(
                   e.Op("Sqrt", {b.Take(v, k, rank - 2, dt)}, dt), rank - 2,
                   dt);  // [..., 1]
               V<E> below = b.Bin("Greater", iota, k, DType::kBool);
               V<E> at_k = b.Bin("Equal", iota, k, DType::kBool);
               V<E> col = b.Where(
                   at_k, diag,
                   b.Where(below, b.Bin("Div", v, diag, dt), b.Scalar(0), dt),
                   dt);
               return std::vector<V<E>>{
                   b.Where(at_k, b.Unsqueeze(col, rank - 1, dt), l, dt)};
             }));
  V<E> l = out[0];
  // Lower triangle from L, strict upper triangle from the input.
  V<E> rows = b.Unsqueeze(iota, 1, DType::kI64);
  V<E> lower = b.Bin("GreaterOrEqual", rows, iota, DType::kBool);
  V<E> result = b.Where(lower, l, a, dt);
  // A failed member becomes all NaN.
  auto [failed, nan] = lp::CholeskyFailed(b, l, rows, iota, rank);
  result = b.Where(failed, nan, result, dt);
  return e.SetOut(0, result);
}

// triangular_solve(a, b): op(A) X = B (left_side) or X op(A) = B, op(A) =
// A or Aᵀ (transpose_a; conjugate_a is a no-op on real dtypes). Only the
// `lower` triangle of A is read; unit_diagonal reads no diagonal. The right
// side is solved as the left side of the transposed system. Substitution
// runs row by row (forward for a lower op(A), backward for an upper one):
// x_k = (b_k - op(A)[k, :] X) / op(A)[k, k], with the unsolved rows of X
// still zero.
template <class E>
absl::Status LowerTriangularSolve(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  using linalg_plan::V;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 2 || eqn.outputs.size() != 1) {
    return absl::InvalidArgumentError(
        "triangular_solve takes 2 operands, 1 result");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "triangular_solve"));
  const int rank = aval.rank();
  if (rank < 2) {
    return absl::InvalidArgumentError(
        "triangular_solve: operand rank must be >= 2");
  }
  J2O_ASSIGN_OR_RETURN(lp::TriangularSolveParams params,
                       lp::ReadTriangularSolveParams(eqn));
  const bool left_side = params.left_side;
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(V<E> a, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> rhs, e.In(1));
  J2O_ASSIGN_OR_RETURN(lp::TriangularSolveIndex<E> ix,
                       lp::TriangularSolveIndices(b, aval, params, rank));
  V<E> m = ix.m, iota = ix.iota, rows = ix.rows;
  // Keep the named triangle of A (the other is never read), set a unit
  // diagonal, then form op(A); X op(A) = B is op(A)ᵀ Xᵀ = Bᵀ.
  V<E> mat = b.Where(ix.tri, a, b.Scalar(0), dt);
  if (params.unit_diagonal) {
    mat =
        b.Where(b.Bin("Equal", rows, iota, DType::kBool), b.Scalar(1), mat, dt);
  }
  const bool eff_lower = params.eff_lower;
  if (params.transpose) mat = b.TransposeLast2(mat, rank, dt);
  if (!left_side) rhs = b.TransposeLast2(rhs, rank, dt);
  V<E> last = b.Bin("Sub", m, b.ScalarI64(1), DType::kI64);
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(m, {b.ZerosLike(rhs, dt)},
             {plugin::CarriedType(
                 dt, left_side ? aval.shape : plugin::SwapLast2(aval.shape))},
             [&](V<E> it, const std::vector<V<E>>& carried)
                 -> absl::StatusOr<std::vector<V<E>>> {
               V<E> x = carried[0];
               V<E> k = eff_lower ? it : b.Bin("Sub", last, it, DType::kI64);
               V<E> a_row = b.Take(mat, k, rank - 2, dt);  // [..., m]
               V<E> b_row = b.Take(rhs, k, rank - 2, dt);  // [..., n]
               V<E> dots = e.Op("MatMul", {b.Unsqueeze(a_row, rank - 2, dt), x},
                                dt);  // [..., 1, n]
               V<E> diag = b.Unsqueeze(
                   b.Unsqueeze(b.Take(a_row, k, rank - 2, dt), rank - 2, dt),
                   rank - 1, dt);  // [..., 1, 1]
               V<E> x_row = b.Bin(
                   "Div",
                   b.Bin("Sub", b.Unsqueeze(b_row, rank - 2, dt), dots, dt),
                   diag, dt);
               return std::vector<V<E>>{b.Where(
                   b.Bin("Equal", rows, k, DType::kBool), x_row, x, dt)};
             }));
  V<E> x = out[0];
  if (!left_side) x = b.TransposeLast2(x, rank, dt);
  return e.SetOut(0, x);
}

// lu(a) -> (lu, pivots, permutation): LAPACK getf2 with partial pivoting.
// Step k picks the first row p >= k of largest |a[p, k]|, swaps rows k and p
// of the whole working matrix, scales the column below the pivot by 1/pivot
// (skipped when the pivot is 0, as getf2 does) and subtracts the rank-1
// update from the trailing block. pivots[k] = p (0-based, int32);
// permutation is the row order those swaps produce (A[perm] = L U).
template <class E>
absl::Status LowerLu(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  using linalg_plan::V;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 1 || eqn.outputs.size() != 3) {
    return absl::InvalidArgumentError("lu takes 1 operand, 3 results");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "lu"));
  const int rank = aval.rank();
  if (rank < 2) {
    return absl::InvalidArgumentError("lu: operand rank must be >= 2");
  }
  const DType piv_dt = eqn.outputs[1]->aval.dtype;
  const DType perm_dt = eqn.outputs[2]->aval.dtype;
  const jaxpr::Aval& piv_aval = eqn.outputs[1]->aval;
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(V<E> a, e.In(0));
  J2O_ASSIGN_OR_RETURN(
      lp::StepDims<E> dims,
      lp::ReadStepDims(b, aval, piv_aval.shape[rank - 2], rank));
  V<E> m = dims.m, steps = dims.steps;
  V<E> iota_m = dims.iota_m, iota_n = dims.iota_n, iota_k = dims.iota_k;
  V<E> rows = b.Unsqueeze(iota_m, 1, DType::kI64);
  auto [perm0, piv0] = lp::LuIotas(b, a, rank, iota_m, m, iota_k, steps);
  V<E> shape_a = e.Op("Shape", {a}, DType::kI64);
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(
          steps, {a, perm0, piv0},
          {plugin::CarriedType(dt, aval.shape),
           plugin::CarriedType(DType::kI64, eqn.outputs[2]->aval.shape),
           plugin::CarriedType(DType::kI64, piv_aval.shape)},
          [&](V<E> k, const std::vector<V<E>>& carried)
              -> absl::StatusOr<std::vector<V<E>>> {
            V<E> w = carried[0];
            V<E> perm = carried[1];
            V<E> pivots = carried[2];
            // Pivot row: first max |w[i, k]| over i >= k.
            V<E> col = b.Take(w, k, rank - 1, dt);  // [..., m]
            auto [p, swap] =
                lp::LuPivotRow(b, e.Op("Abs", {col}, dt), k, iota_m, rank);
            V<E> swap_rows = e.Op(
                "Expand", {b.Unsqueeze(swap, rank - 1, DType::kI64), shape_a},
                DType::kI64);
            w = e.Op("GatherElements", {w, swap_rows}, dt,
                     {OpAttr::Int("axis", rank - 2)});
            perm = e.Op("GatherElements", {perm, swap}, DType::kI64,
                        {OpAttr::Int("axis", rank - 2)});
            pivots = b.Where(b.Bin("Equal", iota_k, k, DType::kBool), p, pivots,
                             DType::kI64);
            V<E> row_k = b.Take(w, k, rank - 2, dt);  // [..., n]
            V<E> col_k = b.Take(w, k, rank - 1, dt);  // [..., m]
            V<E> pivot = b.Unsqueeze(b.Take(row_k, k, rank - 2, dt), rank - 2,
                                     dt);  // [..., 1]
            V<E> zero = b.Scalar(0);
            V<E> nonzero =
                e.Op("Not", {b.Bin("Equal", pivot, zero, DType::kBool)},
                     DType::kBool);
            V<E> below = b.Bin("Greater", iota_m, k, DType::kBool);
            V<E> l =
                b.Where(e.Op("And", {below, nonzero}, DType::kBool),
                        b.Bin("Div", col_k, pivot, dt), zero, dt);  // [..., m]
            V<E> u = b.Where(b.Bin("Greater", iota_n, k, DType::kBool), row_k,
                             zero, dt);  // [..., n]
            V<E> update = b.Bin("Mul", b.Unsqueeze(l, rank - 1, dt),
                                b.Unsqueeze(u, rank - 2, dt), dt);
            w = b.Bin("Sub", w, update, dt);
            V<E> l_cells = e.Op("And",
                                {b.Bin("Greater", rows, k, DType::kBool),
                                 b.Bin("Equal", iota_n, k, DType::kBool)},
                                DType::kBool);
            V<E> scaled = e.Op(
                "And", {l_cells, b.Unsqueeze(nonzero, rank - 1, DType::kBool)},
                DType::kBool);
            w = b.Where(scaled, b.Unsqueeze(l, rank - 1, dt), w, dt);
            return std::vector<V<E>>{w, perm, pivots};
          }));
  J2O_RETURN_IF_ERROR(e.SetOut(0, out[0]));
  J2O_RETURN_IF_ERROR(e.SetOut(1, b.Cast(out[2], piv_dt)));
  return e.SetOut(2, b.Cast(out[1], perm_dt));
}

// lu_pivots_to_permutation(pivots)[permutation_size=m]: start from iota(m)
// and swap entries k and pivots[k] for k = 0, 1, ... in order.
template <class E>
absl::Status LowerLuPivotsToPermutation(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  using linalg_plan::V;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 1 || eqn.outputs.size() != 1) {
    return absl::InvalidArgumentError(
        "lu_pivots_to_permutation takes 1 operand, 1 result");
  }
  const jaxpr::Aval& out_aval = eqn.outputs[0]->aval;
  const int rank = out_aval.rank();
  const DType out_dt = out_aval.dtype;
  lp::Builder<E> b{e, DType::kI64};
  J2O_ASSIGN_OR_RETURN(V<E> pivots_in, e.In(0));
  V<E> pivots = b.Cast(pivots_in, DType::kI64);
  J2O_ASSIGN_OR_RETURN(V<E> m, b.Size(out_aval.shape[rank - 1]));
  V<E> steps = e.Op(
      "Gather", {e.Op("Shape", {pivots}, DType::kI64), b.ScalarI64(rank - 1)},
      DType::kI64, {OpAttr::Int("axis", 0)});
  V<E> iota_m = b.Iota(m);
  V<E> perm0 = e.Op(
      "Expand",
      {iota_m,
       b.BatchShapeThen(pivots, rank - 1, {b.Unsqueeze(m, 0, DType::kI64)})},
      DType::kI64);
  J2O_ASSIGN_OR_RETURN(
      std::vector<V<E>> out,
      e.Loop(steps, {perm0}, {plugin::CarriedType(DType::kI64, out_aval.shape)},
             [&](V<E> k, const std::vector<V<E>>& carried)
                 -> absl::StatusOr<std::vector<V<E>>> {
               V<E> p = b.Unsqueeze(b.Take(pivots, k, rank - 1, DType::kI64),
                                    rank - 1, DType::kI64);  // [..., 1]
               V<E> swap =
                   b.Where(b.Bin("Equal", iota_m, k, DType::kBool), p,
                           b.Where(b.Bin("Equal", iota_m, p, DType::kBool), k,
                                   iota_m, DType::kI64),
                           DType::kI64);
               return std::vector<V<E>>{e.Op("GatherElements",
                                             {carried[0], swap}, DType::kI64,
                                             {OpAttr::Int("axis", rank - 1)})};
             }));
  return e.SetOut(0, b.Cast(out[0], out_dt));
}

// custom_linear_solve: the solve jaxpr inlined on (its consts, b), which is
// the primitive's value (matvec/vecmat/transpose_solve only define its
// derivatives).
template <class E>
absl::Status LowerCustomLinearSolve(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_ASSIGN_OR_RETURN(jaxpr::LinearSolveParts parts,
                       jaxpr::ReadLinearSolveParams(eqn.params));
  const int64_t num_in = static_cast<int64_t>(eqn.inputs.size());
  if (parts.all_consts > num_in) {
    return absl::InvalidArgumentError(absl::StrCat(
        "custom_linear_solve: const_lengths name ", parts.all_consts,
        " consts but the equation has ", num_in, " operands"));
  }
  if (!parts.solve->constvars.empty()) {
    return absl::UnimplementedError(
        "custom_linear_solve: a solve jaxpr with constvars is not lowered");
  }
  std::vector<typename E::Value> args;
  for (int64_t i = parts.solve_consts_begin;
       i < parts.solve_consts_begin + parts.solve_consts; ++i) {
    J2O_ASSIGN_OR_RETURN(auto v, e.In(static_cast<int>(i)));
    args.push_back(v);
  }
  for (int64_t i = parts.all_consts; i < num_in; ++i) {
    J2O_ASSIGN_OR_RETURN(auto v, e.In(static_cast<int>(i)));
    args.push_back(v);
  }
  if (args.size() != parts.solve->invars.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("custom_linear_solve: the solve jaxpr takes ",
                     parts.solve->invars.size(), " values, the equation gives ",
                     args.size()));
  }
  J2O_ASSIGN_OR_RETURN(std::vector<typename E::Value> outs,
                       e.Inline(*parts.solve, args));
  if (outs.size() != eqn.outputs.size()) {
    return absl::InvalidArgumentError(
        "custom_linear_solve: the solve jaxpr's results do not match");
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    J2O_RETURN_IF_ERROR(e.SetOut(static_cast<int>(i), outs[i]));
  }
  return absl::OkStatus();
}

// Registry metadata (ONNX ops, notes) of the recipes above, the same for
// both pipelines.
inline LoweringInfo LinalgLoweringInfo(absl::string_view name) {
  const std::vector<std::string> common = {
      "Loop", "Gather", "Where", "Range", "Expand", "Unsqueeze", "Squeeze"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), common.begin(), common.end());
    return more;
  };
  const char* kWithComplex =
      "; f32/f64, and c64/c128 as real [..., 2] parts (f16/bf16 refused)";
  if (name == "cholesky") {
    return {with({"MatMul", "Sqrt", "Div", "ReduceMax"}), kMinOpset,
            absl::StrCat("one Loop over columns (graph size independent of "
                         "n); non-PD -> all NaN; upper triangle from the "
                         "input as LAPACK potrf; complex: A = L L^H, real "
                         "pivot as zpotrf",
                         kWithComplex)};
  }
  if (name == "triangular_solve") {
    return {with({"MatMul", "Div", "Transpose"}), kMinOpset,
            absl::StrCat("one Loop of row substitutions; left/right, "
                         "lower/upper, transpose_a, conjugate_a, "
                         "unit_diagonal",
                         kWithComplex)};
  }
  if (name == "lu") {
    return {with({"ArgMax", "GatherElements", "Div", "Mul"}), kMinOpset,
            absl::StrCat("LAPACK getf2 partial pivoting in one Loop; complex "
                         "pivots on |re| + |im| as izamax",
                         kWithComplex)};
  }
  if (name == "eigh" || name == "svd") {
    return {with({"Mod", "Div", "Sqrt", "TopK", "GatherElements", "ReduceSum",
                  "ReduceMax", "Transpose", "MatMul", "ArgMax"}),
            kMinOpset,
            absl::StrCat(name == "eigh"
                             ? "two-sided Jacobi in one Loop, n/2 disjoint "
                               "rotations per step (round-robin), until a "
                               "sweep finds nothing to rotate (<= 30); "
                               "Rayleigh quotients of the re-orthogonalized "
                               "V, ascending; vectors up to sign; complex: "
                               "Hermitian Jacobi (unitary pair rotations)"
                             : "one-sided Jacobi in one Loop, n/2 disjoint "
                               "column pairs per step, until a sweep finds "
                               "them orthogonal (dgesvj's test, <= 30); "
                               "static m, n; full_matrices completes U (or "
                               "V^H) by Gram-Schmidt on the unit vectors; "
                               "complex: unitary pair rotations, vh = V^H",
                         kWithComplex)};
  }
  if (name == "geqrf" || name == "householder_product") {
    return {with({"MatMul", "Sqrt", "Div", "ReduceSum", "Slice", "Concat"}),
            kMinOpset,
            absl::StrCat("LAPACK ", name == "geqrf" ? "geqrf" : "orgqr",
                         " reflectors in one Loop; complex: zlarfg (real "
                         "beta, H = I - tau v v^H)",
                         kWithComplex)};
  }
  if (name == "qr") {
    return {with({"MatMul", "Sqrt", "Div", "ReduceSum", "Slice", "Concat",
                  "ArgMax", "Max", "Cast"}),
            kMinOpset,
            absl::StrCat("Householder (LAPACK dlarfg signs) in one Loop; "
                         "static m, n; pivoting: geqp3 column pivoting "
                         "(dlaqp2 norms), p int32 0-based; "
                         "complex: zlarfg "
                         "(R's diagonal real)",
                         kWithComplex)};
  }
  if (name == "hessenberg") {
    return {with({"MatMul", "Sqrt", "Div", "ReduceSum", "Max"}), kMinOpset,
            absl::StrCat("LAPACK gehrd's reflectors (ilo = 1, ihi = n) in one "
                         "Loop; complex: zgehd2 (zlarfg, real subdiagonal)",
                         kWithComplex)};
  }
  if (name == "ormqr") {
    return {with({"MatMul", "Mul", "Sub"}), kMinOpset,
            "Q c, Q^T c, c Q, c Q^T from geqrf's reflectors in one Loop "
            "(JAX's own lowering); f32/f64 (complex refused)"};
  }
  if (name == "symmetric_product") {
    return {{"MatMul", "Transpose", "Mul", "Add"},
            kMinOpset,
            "alpha a a^T + beta c on the whole matrix (JAX's CPU lowering); "
            "f32/f64"};
  }
  if (name == "cholesky_update") {
    return {with({"Abs", "Div", "Sqrt", "Mul", "Sub", "Add", "Neg"}), kMinOpset,
            "JAX's Givens-rotation algorithm in one Loop over the rows; "
            "unbatched as JAX defines it; f32/f64"};
  }
  if (name == "tridiagonal_solve") {
    return {with({"Div", "Mul", "Sub", "Abs", "GreaterOrEqual", "Or", "And",
                  "Xor", "Neg"}),
            kMinOpset,
            absl::StrCat("LAPACK gtsv (partial pivoting) as JAX's CPU "
                         "lowering runs it, in two Loops; a singular member "
                         "is NaN; perturb_singular refused",
                         kWithComplex)};
  }
  if (name == "custom_linear_solve") {
    return {{},
            kMinOpset,
            "the solve jaxpr inlined on (its consts, b); any dtype its "
            "equations lower"};
  }
  return {with({"GatherElements", "Cast"}), kMinOpset,
          "swaps applied in order in one Loop"};
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_LINALG_PLAN_H_
