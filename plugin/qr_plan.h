// Pipeline-independent lowering of qr (geqrf + householder_product, as
// JAX's _qr_lowering composes them) by Householder reflections in one ONNX
// Loop over the columns k < min(m, n), with LAPACK's dlarfg conventions:
//   alpha = R[k, k], xnorm = |R[k+1:, k]|; xnorm == 0: tau = 0 (H = I);
//   else beta = -sign(alpha) hypot(alpha, xnorm), tau = (beta - alpha) /
//   beta, v = (1, R[k+1:, k] / (alpha - beta)), R[k, k] = beta.
// Each step applies H = I - tau v vᵀ to the trailing columns of R and
// accumulates Q = Q H (an [..., m, m] product; the thin Q is its first k
// columns). Same reflectors as LAPACK, so Q and R match JAX's up to
// rounding (R's diagonal may be negative, as LAPACK's is).
// pivoting=True: LAPACK geqp3's column pivoting (dlaqp2) in the same Loop,
// see qr_plan::Pivots; p = the column order, int32, 0-based (A[:, p] = Q R;
// JAX subtracts 1 from geqp3's jpvt).
#ifndef JAX2ONNX_PLUGIN_QR_PLAN_H_
#define JAX2ONNX_PLUGIN_QR_PLAN_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/gtsv_plan.h"
#include "plugin/linalg_plan.h"

namespace jax2onnx::plugin {

// qr's operand, params and static matrix dims (the real and complex recipes
// share them): one variable operand of rank >= 2, 2 results (3 with
// pivoting), static nonzero m, n.
struct QrShape {
  int rank = 0;
  int64_t m = 0, n = 0, k = 0;  // k = min(m, n)
  bool full = false;            // full_matrices
  bool pivoting = false;        // geqp3 column pivoting, p as a 3rd result
};
inline absl::StatusOr<QrShape> ReadQrShape(const jaxpr::Eqn& eqn) {
  if (eqn.inputs.size() != 1 || eqn.inputs[0].is_literal()) {
    return absl::InvalidArgumentError("qr takes 1 variable operand");
  }
  const jaxpr::Aval& aval = eqn.inputs[0].var->aval;
  QrShape shape;
  shape.rank = aval.rank();
  if (shape.rank < 2) {
    return absl::InvalidArgumentError("qr: rank must be >= 2");
  }
  if (const jaxpr::ParamValue* p = eqn.params.Find("pivoting")) {
    J2O_ASSIGN_OR_RETURN(shape.pivoting, p->AsBool("param 'pivoting'"));
  }
  J2O_ASSIGN_OR_RETURN(shape.full, eqn.params.GetBool("full_matrices"));
  if (eqn.outputs.size() != (shape.pivoting ? 3u : 2u)) {
    return absl::InvalidArgumentError(
        shape.pivoting ? "qr with pivoting has 3 results"
                       : "qr without pivoting has 2 results");
  }
  const jaxpr::DimExpr& m_dim = aval.shape[shape.rank - 2];
  const jaxpr::DimExpr& n_dim = aval.shape[shape.rank - 1];
  if (!m_dim.is_constant() || !n_dim.is_constant()) {
    return absl::UnimplementedError(
        "qr needs static matrix dims (min(m, n) sizes the results)");
  }
  shape.m = m_dim.constant_value();
  shape.n = n_dim.constant_value();
  shape.k = std::min(shape.m, shape.n);
  if (shape.k == 0) return absl::UnimplementedError("qr of an empty matrix");
  return shape;
}

namespace qr_plan {

template <class E>
using V = typename E::Value;

// LAPACK geqp3's column pivoting (dlaqp2 / zlaqp2 with every column free),
// on a matrix given as its real parts ({r} or {re, im}, [..., m, n]):
// perm (int64 [..., n], the original column at each position), vn1 (partial
// column norms of rows k.., [..., n]) and vn2 (the norms last computed).
template <class E>
struct Pivots {
  V<E> perm, vn1, vn2;
};

// sqrt of the sum over the parts of x² along `axis` (keepdims 0).
template <class E>
V<E> PartsNorm(linalg_plan::Builder<E>& b, const std::vector<V<E>>& parts,
               int64_t axis) {
  V<E> sq;
  for (size_t i = 0; i < parts.size(); ++i) {
    V<E> x2 = b.Bin("Mul", parts[i], parts[i], b.dt);
    sq = i == 0 ? x2 : b.Bin("Add", sq, x2, b.dt);
  }
  return b.e.Op("Sqrt",
                {b.e.Op("ReduceSum", {sq, b.Axes({axis})}, b.dt,
                        {OpAttr::Int("keepdims", 0)})},
                b.dt);
}

template <class E>
Pivots<E> StartPivots(linalg_plan::Builder<E>& b,
                      const std::vector<V<E>>& parts, V<E> iota_n, int rank) {
  V<E> vn1 = PartsNorm(b, parts, rank - 2);
  V<E> perm =
      b.e.Op("Expand", {iota_n, b.e.Op("Shape", {vn1}, jaxpr::DType::kI64)},
             jaxpr::DType::kI64);
  return {perm, vn1, vn1};
}

// pivoting=True: the Loop's carries perm, vn1, vn2 (after the factors'
// parts in `init` / `types`) start from the matrix's parts; each is
// [..., n] for the matrix shape [..., m, n].
template <class E>
void AppendPivotCarries(linalg_plan::Builder<E>& b,
                        const std::vector<V<E>>& parts, V<E> iota_n, int rank,
                        const std::vector<jaxpr::DimExpr>& matrix_shape,
                        std::vector<V<E>>& init,
                        std::vector<plugin::CarriedType>& types) {
  Pivots<E> piv = StartPivots(b, parts, iota_n, rank);
  init.insert(init.end(), {piv.perm, piv.vn1, piv.vn2});
  std::vector<jaxpr::DimExpr> columns = matrix_shape;
  columns.erase(columns.end() - 2);
  types.push_back(plugin::CarriedType(jaxpr::DType::kI64, columns));
  types.push_back(plugin::CarriedType(b.dt, columns));
  types.push_back(plugin::CarriedType(b.dt, columns));
}

// The first `count` entries of x along `axis` (qr's thin factors).
template <class E>
V<E> Leading(linalg_plan::Builder<E>& b, V<E> x, int64_t count, int axis) {
  auto& e = b.e;
  return e.Op("Slice",
              {x, e.ConstI64({0}), e.ConstI64({count}), e.ConstI64({axis})},
              b.dt);
}

// Swaps the first column of largest vn1 among k.. (ArgMax keeps the first,
// as idamax) into column k of every part and of perm; vn1, vn2 of the
// pivot's old position take column k's.
template <class E>
void SwapInPivot(linalg_plan::Builder<E>& b, std::vector<V<E>>& parts,
                 Pivots<E>& piv, V<E> k, V<E> iota_n, int rank) {
  using jaxpr::DType;
  auto& e = b.e;
  const DType dt = b.dt;
  // idamax from column k: a later column is taken only when its norm is
  // strictly larger, so a NaN norm is never taken after column k, and a
  // NaN at column k itself keeps column k (ONNX ArgMax's NaN order is
  // unspecified, so NaNs are masked out first).
  V<E> rest = b.Where(b.Bin("GreaterOrEqual", iota_n, k, DType::kBool), piv.vn1,
                      b.Scalar(-1), dt);
  rest = b.Where(e.Op("IsNaN", {rest}, DType::kBool), b.Scalar(-1), rest, dt);
  V<E> argmax = e.Op(
      "ArgMax", {rest}, DType::kI64,
      {OpAttr::Int("axis", rank - 2), OpAttr::Int("keepdims", 1)});  // [..., 1]
  V<E> vn1_k = b.Unsqueeze(b.Take(piv.vn1, k, rank - 2, dt), rank - 2, dt);
  V<E> pvt = b.Where(e.Op("IsNaN", {vn1_k}, DType::kBool),
                     b.Unsqueeze(k, 0, DType::kI64), argmax, DType::kI64);
  V<E> at_k = b.Bin("Equal", iota_n, k, DType::kBool);
  V<E> at_p = b.Bin("Equal", iota_n, pvt, DType::kBool);   // [..., n]
  V<E> at_p2 = b.Unsqueeze(at_p, rank - 2, DType::kBool);  // [..., 1, n]
  // Column pvt of x (Where + ReduceSum: one nonzero term, exact).
  auto pick = [&](V<E> x, V<E> mask, int64_t axis, DType d) {
    V<E> zero = e.Const(jaxpr::Array::ScalarFromDouble(d, 0));
    return e.Op("ReduceSum", {b.Where(mask, x, zero, d), b.Axes({axis})}, d,
                {OpAttr::Int("keepdims", 1)});
  };
  for (V<E>& x : parts) {
    V<E> col_k = b.Unsqueeze(b.Take(x, k, rank - 1, dt), rank - 1, dt);
    V<E> col_p = pick(x, at_p2, rank - 1, dt);  // [..., m, 1]
    x = b.Where(at_k, col_p, b.Where(at_p2, col_k, x, dt), dt);
  }
  auto swap = [&](V<E> v, DType d, bool both) {
    V<E> v_k = b.Unsqueeze(b.Take(v, k, rank - 2, d), rank - 2, d);
    V<E> out = b.Where(at_p, v_k, v, d);
    return both ? b.Where(at_k, pick(v, at_p, rank - 2, d), out, d) : out;
  };
  piv.perm = swap(piv.perm, DType::kI64, true);
  piv.vn1 = swap(piv.vn1, dt, false);  // vn1[k], vn2[k] are not read again
  piv.vn2 = swap(piv.vn2, dt, false);
}

// After reflection k: for the columns c > k with vn1 != 0, temp = max(0, 1 -
// (|r_kc| / vn1)²); vn1 = vn2 = |r[k+1:, c]| when temp (vn1 / vn2)² <=
// tol3z, else vn1 *= sqrt(temp). tol3z = sqrt(eps), eps = dlamch('E') of
// the part dtype (2^-24 or 2^-53).
template <class E>
void UpdateNorms(linalg_plan::Builder<E>& b, const std::vector<V<E>>& parts,
                 Pivots<E>& piv, V<E> k, V<E> iota_m, V<E> iota_n, int rank) {
  using jaxpr::DType;
  auto& e = b.e;
  const DType dt = b.dt;
  const double tol3z =
      std::sqrt(std::ldexp(1.0, dt == DType::kF32 ? -24 : -53));
  V<E> zero = b.Scalar(0), one = b.Scalar(1);
  V<E> under = b.Unsqueeze(b.Bin("Greater", iota_m, k, DType::kBool), 1,
                           DType::kBool);  // [m, 1]
  std::vector<V<E>> row_k, below;          // row k as [..., 1, n]; rows k+1..
  for (V<E> x : parts) {
    row_k.push_back(b.Unsqueeze(b.Take(x, k, rank - 2, dt), rank - 2, dt));
    below.push_back(b.Where(under, x, zero, dt));
  }
  V<E> abs_rk = PartsNorm(b, row_k, rank - 2);  // |r_kc|, [..., n]
  V<E> live = e.Op("And",
                   {b.Bin("Greater", iota_n, k, DType::kBool),
                    e.Op("Not", {b.Bin("Equal", piv.vn1, zero, DType::kBool)},
                         DType::kBool)},
                   DType::kBool);
  V<E> vn1_safe = b.Where(live, piv.vn1, one, dt);
  V<E> vn2_safe =
      b.Where(b.Bin("Equal", piv.vn2, zero, DType::kBool), one, piv.vn2, dt);
  V<E> ratio = b.Bin("Div", abs_rk, vn1_safe, dt);
  // MAX(TEMP, ZERO) as dlaqp2 gets it from Fortran's MAX (and the
  // interpreter from std::max(0, t)): a NaN TEMP gives 0, so the norm is
  // recomputed from the rows below; ONNX Max would keep the NaN.
  V<E> temp_raw = b.Bin("Sub", one, b.Bin("Mul", ratio, ratio, dt), dt);
  V<E> temp = b.Where(b.Bin("Greater", temp_raw, zero, DType::kBool), temp_raw,
                      zero, dt);
  V<E> scaled = b.Bin("Div", vn1_safe, vn2_safe, dt);
  V<E> recompute = e.Op(
      "And",
      {live, b.Bin("LessOrEqual",
                   b.Bin("Mul", temp, b.Bin("Mul", scaled, scaled, dt), dt),
                   b.Scalar(tol3z), DType::kBool)},
      DType::kBool);
  V<E> fresh = PartsNorm(b, below, rank - 2);
  piv.vn1 =
      b.Where(recompute, fresh,
              b.Where(live, b.Bin("Mul", piv.vn1, e.Op("Sqrt", {temp}, dt), dt),
                      piv.vn1, dt),
              dt);
  piv.vn2 = b.Where(recompute, fresh, piv.vn2, dt);
}

// LAPACK dlarfg on column `column` of r from row `row` down: alpha =
// r[row][column], beta = -sign(alpha) ||r[row:, column]||, tau = (beta -
// alpha) / beta, v = (0.., 1 at row, r[row+1:, column] / (alpha - beta));
// H = I - tau v vᵀ is the identity (tau = 0, beta = alpha) where
// r[row+1:, column] is zero.
template <class E>
struct Reflector {
  V<E> v, v_below;        // [..., m]: v, and its part below `row`
  V<E> tau, tau2;         // [...] and [..., 1, 1]
  V<E> col, alpha, beta;  // the column before; [...] scalars
  V<E> identity;          // H = I
  V<E> below, at;         // rows > row, row == row ([m] bool)
};
template <class E>
Reflector<E> Larfg(linalg_plan::Builder<E>& b, V<E> r, V<E> column, V<E> row,
                   V<E> iota_m, V<E> zero, V<E> one, int rank) {
  using jaxpr::DType;
  auto& e = b.e;
  const DType dt = b.dt;
  Reflector<E> h;
  h.below = b.Bin("Greater", iota_m, row, DType::kBool);
  h.at = b.Bin("Equal", iota_m, row, DType::kBool);
  h.col = b.Take(r, column, rank - 1, dt);     // [..., m]
  h.alpha = b.Take(h.col, row, rank - 2, dt);  // [...]
  V<E> x = b.Where(h.below, h.col, zero, dt);
  V<E> xnorm =
      e.Op("Sqrt",
           {e.Op("ReduceSum", {b.Bin("Mul", x, x, dt), b.Axes({rank - 2})}, dt,
                 {OpAttr::Int("keepdims", 0)})},
           dt);
  V<E> norm = e.Op("Sqrt",
                   {b.Bin("Add", b.Bin("Mul", h.alpha, h.alpha, dt),
                          b.Bin("Mul", xnorm, xnorm, dt), dt)},
                   dt);
  // beta = -sign(norm, alpha): -norm for alpha >= +0.
  h.beta = b.Where(b.Bin("Less", h.alpha, zero, DType::kBool), norm,
                   e.Op("Neg", {norm}, dt), dt);
  h.identity = b.Bin("Equal", xnorm, zero, DType::kBool);
  h.tau =
      b.Where(h.identity, zero,
              b.Bin("Div", b.Bin("Sub", h.beta, h.alpha, dt), h.beta, dt), dt);
  V<E> denom = b.Where(h.identity, one, b.Bin("Sub", h.alpha, h.beta, dt), dt);
  h.v_below = b.Where(h.below,
                      b.Bin("Div", h.col, b.Unsqueeze(denom, rank - 2, dt), dt),
                      zero, dt);
  h.v = b.Where(h.at, one, h.v_below, dt);  // [..., m]
  h.tau2 = b.Unsqueeze(b.Unsqueeze(h.tau, rank - 2, dt), rank - 1,
                       dt);  // [..., 1, 1]
  return h;
}

// H r = r - tau v (vᵀ r) on the columns after `column` (the reflector's
// own column and those before it are kept).
template <class E>
V<E> ReflectFromLeft(linalg_plan::Builder<E>& b, V<E> r, const Reflector<E>& h,
                     V<E> column, V<E> iota_n, int rank) {
  const jaxpr::DType dt = b.dt;
  V<E> w = b.e.Op("MatMul", {b.Unsqueeze(h.v, rank - 2, dt), r},
                  dt);  // [..., 1, n]
  V<E> update = b.Bin("Mul", h.tau2,
                      b.Bin("Mul", b.Unsqueeze(h.v, rank - 1, dt), w, dt), dt);
  V<E> trailing = b.Bin("Greater", iota_n, column, jaxpr::DType::kBool);
  return b.Where(trailing, b.Bin("Sub", r, update, dt), r, dt);
}

// m H = m - tau (m v) vᵀ with tau as [..., 1, 1]: the right-hand
// application of a reflector (Q's accumulation in qr and
// householder_product, hessenberg's A H, ormqr's C Q).
template <class E>
V<E> ReflectFromRight(linalg_plan::Builder<E>& b, V<E> m, V<E> v, V<E> tau,
                      int rank) {
  const jaxpr::DType dt = b.dt;
  V<E> mv = b.e.Op("MatMul", {m, b.Unsqueeze(v, rank - 1, dt)},
                   dt);  // [..., rows, 1]
  return b.Bin(
      "Sub", m,
      b.Bin("Mul", tau, b.Bin("Mul", mv, b.Unsqueeze(v, rank - 2, dt), dt), dt),
      dt);
}

// dlarfg on column k of r below row k and the reflection of the trailing
// columns (k+1:), shared by qr and geqrf. Column k itself is left for the
// caller to write (beta, or alpha for H = I, on the diagonal).
template <class E>
struct ReflectedColumn : Reflector<E> {
  V<E> r;     // trailing columns reflected
  V<E> diag;  // column k's new diagonal entry [...]
};
template <class E>
ReflectedColumn<E> ReflectColumn(linalg_plan::Builder<E>& b, V<E> r, V<E> k,
                                 V<E> iota_m, V<E> iota_n, V<E> zero, V<E> one,
                                 int rank) {
  ReflectedColumn<E> out;
  static_cast<Reflector<E>&>(out) = Larfg(b, r, k, k, iota_m, zero, one, rank);
  // R[:, k+1:] -= tau v (vᵀ R[:, k+1:]).
  out.r = ReflectFromLeft(b, r, out, k, iota_n, rank);
  out.diag = b.Where(out.identity, out.alpha, out.beta, b.dt);
  return out;
}

// The zero taus [..., steps] a geqrf-style Loop fills in.
template <class E>
V<E> ZeroTaus(linalg_plan::Builder<E>& b, V<E> a, V<E> steps, V<E> zero,
              int rank) {
  using jaxpr::DType;
  auto& e = b.e;
  return e.Op("Expand",
              {zero, b.BatchShapeThen(a, rank - 2,
                                      {b.Unsqueeze(steps, 0, DType::kI64)})},
              b.dt);
}

// Stores a reflector the geqrf way: column `column` of r gets `diag` (beta,
// or alpha for H = I) at the reflector's row and its essential part below
// (rows above keep h.col), and taus[column] = tau.
template <class E>
std::pair<V<E>, V<E>> StoreReflector(linalg_plan::Builder<E>& b, V<E> r,
                                     V<E> taus, const Reflector<E>& h,
                                     V<E> diag, V<E> column, V<E> iota_cols,
                                     V<E> iota_k, int rank) {
  using jaxpr::DType;
  const DType dt = b.dt;
  V<E> new_col = b.Where(h.at, b.Unsqueeze(diag, rank - 2, dt),
                         b.Where(h.below, h.v_below, h.col, dt), dt);
  r = b.Where(b.Bin("Equal", iota_cols, column, DType::kBool),
              b.Unsqueeze(new_col, rank - 1, dt), r, dt);
  taus = b.Where(b.Bin("Equal", iota_k, column, DType::kBool),
                 b.Unsqueeze(h.tau, rank - 2, dt), taus, dt);
  return {r, taus};
}

// Reflector j of geqrf's output as householder_product and ormqr read it:
// v = (0.., 1, a[j+1:, j]) [..., m] and tau_j as [..., 1, 1].
template <class E>
std::pair<V<E>, V<E>> StoredReflector(linalg_plan::Builder<E>& b, V<E> a,
                                      V<E> taus, V<E> j, V<E> iota_m, V<E> zero,
                                      int rank) {
  using jaxpr::DType;
  const DType dt = b.dt;
  V<E> col = b.Take(a, j, rank - 1, dt);  // [..., m]
  V<E> v = b.Where(
      b.Bin("Equal", iota_m, j, DType::kBool), b.Scalar(1),
      b.Where(b.Bin("Greater", iota_m, j, DType::kBool), col, zero, dt), dt);
  V<E> tau =
      b.Unsqueeze(b.Unsqueeze(b.Take(taus, j, rank - 2, dt), rank - 2, dt),
                  rank - 1, dt);  // [..., 1, 1]
  return {v, tau};
}

}  // namespace qr_plan

template <class E>
absl::Status LowerQr(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_ASSIGN_OR_RETURN(QrShape shape, ReadQrShape(eqn));
  const jaxpr::Aval& aval = eqn.inputs[0].var->aval;
  const DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "qr"));
  const int rank = shape.rank;
  const bool full = shape.full;
  const int64_t m0 = shape.m, n0 = shape.n, k0 = shape.k;
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(Val a, e.In(0));
  Val m = b.ScalarI64(m0);
  Val iota_m = b.Iota(m);
  Val iota_n = b.Iota(b.ScalarI64(n0));
  Val rows = b.Unsqueeze(iota_m, 1, DType::kI64);
  // Q starts as the identity of [..., m, m].
  Val eye = b.Bin("Equal", rows, iota_m, DType::kBool);
  Val q0 = e.Op(
      "Expand",
      {b.Cast(eye, dt), b.BatchShapeThen(a, rank - 2, {e.ConstI64({m0, m0})})},
      dt);
  Val zero = b.Scalar(0);
  Val one = b.Scalar(1);
  std::vector<Val> init = {a, q0};
  // R keeps a's shape, Q is [..., m, m].
  std::vector<jaxpr::DimExpr> q_shape(aval.shape.begin(), aval.shape.end() - 2);
  q_shape.push_back(jaxpr::DimExpr::Constant(m0));
  q_shape.push_back(jaxpr::DimExpr::Constant(m0));
  std::vector<plugin::CarriedType> carried_types = {
      plugin::CarriedType(dt, aval.shape), plugin::CarriedType(dt, q_shape)};
  if (shape.pivoting) {
    qr_plan::AppendPivotCarries(b, {a}, iota_n, rank, aval.shape, init,
                                carried_types);
  }
  J2O_ASSIGN_OR_RETURN(
      std::vector<Val> out,
      e.Loop(b.ScalarI64(k0), init, carried_types,
             [&](Val k, const std::vector<Val>& carried)
                 -> absl::StatusOr<std::vector<Val>> {
               Val r = carried[0];
               Val q = carried[1];
               qr_plan::Pivots<E> piv;
               if (shape.pivoting) {
                 piv = {carried[2], carried[3], carried[4]};
                 std::vector<Val> parts = {r};
                 qr_plan::SwapInPivot(b, parts, piv, k, iota_n, rank);
                 r = parts[0];
               }
               qr_plan::ReflectedColumn<E> h = qr_plan::ReflectColumn(
                   b, r, k, iota_m, iota_n, zero, one, rank);
               Val v = h.v;
               Val tau2 = h.tau2;
               // Column k: beta (alpha when H = I) on the diagonal, 0 below.
               Val new_col =
                   b.Where(h.at, b.Unsqueeze(h.diag, rank - 2, dt),
                           b.Where(h.below, zero, h.col, dt), dt);  // [..., m]
               r = b.Where(b.Bin("Equal", iota_n, k, DType::kBool),
                           b.Unsqueeze(new_col, rank - 1, dt), h.r, dt);
               // Q = Q - tau (Q v) vᵀ.
               q = qr_plan::ReflectFromRight(b, q, v, tau2, rank);
               if (!shape.pivoting) return std::vector<Val>{r, q};
               qr_plan::UpdateNorms(b, {r}, piv, k, iota_m, iota_n, rank);
               return std::vector<Val>{r, q, piv.perm, piv.vn1, piv.vn2};
             }));
  Val r = out[0];
  Val q = out[1];
  // R: upper triangle; the thin factors keep the first k rows / columns.
  Val upper = b.Bin("LessOrEqual", rows, iota_n, DType::kBool);
  r = b.Where(upper, r, zero, dt);
  const int64_t k_out = full ? m0 : k0;
  if (k_out != m0) {
    q = qr_plan::Leading(b, q, k_out, rank - 1);
    r = qr_plan::Leading(b, r, k_out, rank - 2);
  }
  J2O_RETURN_IF_ERROR(e.SetOut(0, q));
  J2O_RETURN_IF_ERROR(e.SetOut(1, r));
  if (!shape.pivoting) return absl::OkStatus();
  return e.SetOut(2, b.Cast(out[2], eqn.outputs[2]->aval.dtype));
}

// geqrf(a) -> (a', taus): LAPACK's compact QR, the same reflectors as qr
// above: R in the upper triangle of a', the essential part of each v below
// the diagonal, tau per column k < min(m, n).
template <class E>
absl::Status LowerGeqrf(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 1 || eqn.outputs.size() != 2) {
    return absl::InvalidArgumentError("geqrf takes 1 operand, 2 results");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const jaxpr::Aval& tau_aval = eqn.outputs[1]->aval;
  const DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "geqrf"));
  const int rank = aval.rank();
  if (rank < 2) return absl::InvalidArgumentError("geqrf: rank must be >= 2");
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(Val a, e.In(0));
  J2O_ASSIGN_OR_RETURN(
      lp::StepDims<E> dims,
      lp::ReadStepDims(b, aval, tau_aval.shape[rank - 2], rank));
  Val steps = dims.steps;
  Val iota_m = dims.iota_m, iota_n = dims.iota_n, iota_k = dims.iota_k;
  Val zero = b.Scalar(0);
  Val one = b.Scalar(1);
  Val taus0 = qr_plan::ZeroTaus(b, a, steps, zero, rank);
  J2O_ASSIGN_OR_RETURN(
      std::vector<Val> out,
      e.Loop(steps, {a, taus0},
             {plugin::CarriedType(dt, aval.shape),
              plugin::CarriedType(dt, tau_aval.shape)},
             [&](Val k, const std::vector<Val>& carried)
                 -> absl::StatusOr<std::vector<Val>> {
               qr_plan::ReflectedColumn<E> h = qr_plan::ReflectColumn(
                   b, carried[0], k, iota_m, iota_n, zero, one, rank);
               // Column k: beta (alpha when H = I), then v's essential part.
               auto [r, taus] = qr_plan::StoreReflector(
                   b, h.r, carried[1], h, h.diag, k, iota_n, iota_k, rank);
               return std::vector<Val>{r, taus};
             }));
  J2O_RETURN_IF_ERROR(e.SetOut(0, out[0]));
  return e.SetOut(1, out[1]);
}

// hessenberg(a) -> (h, taus): LAPACK gehrd with ilo = 1, ihi = n (JAX's
// CPU lowering; gehd2's unblocked steps, which gehrd's blocked form equals
// up to rounding) in one Loop over i < n - 1: the reflector of column i
// from row i + 1 (Larfg) is applied from the right to every row's columns
// after i, then from the left to the rows after i on those columns; column
// i gets beta (alpha for H = I) at row i + 1 and the reflector's essential
// part below. h holds the upper Hessenberg matrix on and above the first
// subdiagonal, the reflectors below it; taus [..., n - 1].
template <class E>
absl::Status LowerHessenberg(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 1 || eqn.outputs.size() != 2) {
    return absl::InvalidArgumentError("hessenberg takes 1 operand, 2 results");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "hessenberg"));
  const int rank = aval.rank();
  if (rank < 2) {
    return absl::InvalidArgumentError("hessenberg: rank must be >= 2");
  }
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(Val a, e.In(0));
  J2O_ASSIGN_OR_RETURN(Val n, b.Size(aval.shape[rank - 1]));
  Val steps = e.Op(
      "Max", {b.Bin("Sub", n, b.ScalarI64(1), DType::kI64), b.ScalarI64(0)},
      DType::kI64);
  Val iota = b.Iota(n);
  Val iota_k = b.Iota(steps);
  Val zero = b.Scalar(0);
  Val one = b.Scalar(1);
  Val taus0 = qr_plan::ZeroTaus(b, a, steps, zero, rank);
  J2O_ASSIGN_OR_RETURN(
      std::vector<Val> out,
      e.Loop(steps, {a, taus0},
             {plugin::CarriedType(dt, aval.shape),
              plugin::CarriedType(dt, eqn.outputs[1]->aval.shape)},
             [&](Val i, const std::vector<Val>& carried)
                 -> absl::StatusOr<std::vector<Val>> {
               Val m = carried[0];
               Val row = b.Bin("Add", i, b.ScalarI64(1), DType::kI64);
               qr_plan::Reflector<E> h =
                   qr_plan::Larfg(b, m, i, row, iota, zero, one, rank);
               // A <- A H: A[:, i+1:] -= tau (A v) vᵀ (v is 0 up to row i).
               m = qr_plan::ReflectFromRight(b, m, h.v, h.tau2, rank);
               // A <- H A on the columns after i.
               m = qr_plan::ReflectFromLeft(b, m, h, i, iota, rank);
               Val diag = b.Where(h.identity, h.alpha, h.beta, dt);
               auto [stored, taus] = qr_plan::StoreReflector(
                   b, m, carried[1], h, diag, i, iota, iota_k, rank);
               return std::vector<Val>{stored, taus};
             }));
  J2O_RETURN_IF_ERROR(e.SetOut(0, out[0]));
  return e.SetOut(1, out[1]);
}

// householder_product(a, taus) -> Q: the first n columns of H_0 ... H_{k-1}
// with v_j = (0, ..., 1, a[j+1:, j]) (LAPACK orgqr), accumulated as
// Q = Q - tau_j (Q v_j) v_jᵀ from the [..., m, m] identity.
template <class E>
absl::Status LowerHouseholderProduct(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 2 || eqn.outputs.size() != 1 ||
      eqn.inputs[1].is_literal()) {
    return absl::InvalidArgumentError(
        "householder_product takes (a, taus), one result");
  }
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;
  const jaxpr::Aval& tau_aval = eqn.inputs[1].var->aval;
  const DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "householder_product"));
  const int rank = aval.rank();
  if (rank < 2) {
    return absl::InvalidArgumentError("householder_product: rank must be >= 2");
  }
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(Val a, e.In(0));
  J2O_ASSIGN_OR_RETURN(Val taus, e.In(1));
  J2O_ASSIGN_OR_RETURN(Val m, b.Size(aval.shape[rank - 2]));
  J2O_ASSIGN_OR_RETURN(Val n, b.Size(aval.shape[rank - 1]));
  J2O_ASSIGN_OR_RETURN(Val steps, b.Size(tau_aval.shape[rank - 2]));
  Val iota_m = b.Iota(m);
  Val q0 = lp::BatchedEye(b, a, iota_m, m, rank).first;
  Val zero = b.Scalar(0);
  // Q is [..., m, m] (the result keeps its first n columns).
  std::vector<jaxpr::DimExpr> q_shape(aval.shape.begin(), aval.shape.end() - 1);
  q_shape.push_back(aval.shape[rank - 2]);
  J2O_ASSIGN_OR_RETURN(
      std::vector<Val> out,
      e.Loop(steps, {q0}, {plugin::CarriedType(dt, q_shape)},
             [&](Val j, const std::vector<Val>& carried)
                 -> absl::StatusOr<std::vector<Val>> {
               Val q = carried[0];
               auto [v, tau] =
                   qr_plan::StoredReflector(b, a, taus, j, iota_m, zero, rank);
               return std::vector<Val>{
                   qr_plan::ReflectFromRight(b, q, v, tau, rank)};
             }));
  Val q = e.Op("Slice",
               {out[0], e.ConstI64({0}), b.Unsqueeze(n, 0, DType::kI64),
                e.ConstI64({rank - 1})},
               dt);
  return e.SetOut(0, q);
}

// ormqr(a, taus, c): Q c, Qᵀ c, c Q or c Qᵀ (left, transpose) for Q =
// H_0 ... H_{k-1} of geqrf's reflectors (householder_product's v_j), in one
// Loop over the reflectors as JAX's own lowering (_ormqr_lowering; LAPACK
// ormqr on CPU computes the same product): c <- c - tau v (vᵀ c) from the
// left, c <- c - tau (c v) vᵀ from the right, the reflectors in reverse
// where left != transpose. Real only (complex refused).
template <class E>
absl::Status LowerOrmqr(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 3 || eqn.outputs.size() != 1 ||
      eqn.inputs[0].is_literal() || eqn.inputs[1].is_literal()) {
    return absl::InvalidArgumentError("ormqr takes (a, taus, c), one result");
  }
  const jaxpr::Aval& a_aval = eqn.inputs[0].var->aval;
  const jaxpr::Aval& tau_aval = eqn.inputs[1].var->aval;
  const DType dt = eqn.outputs[0]->aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "ormqr"));
  J2O_ASSIGN_OR_RETURN(bool left, eqn.params.GetBool("left"));
  J2O_ASSIGN_OR_RETURN(bool transpose, eqn.params.GetBool("transpose"));
  const int rank = a_aval.rank();
  if (rank < 2) return absl::InvalidArgumentError("ormqr: rank must be >= 2");
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(Val a, e.In(0));
  J2O_ASSIGN_OR_RETURN(Val taus, e.In(1));
  J2O_ASSIGN_OR_RETURN(Val c, e.In(2));
  J2O_ASSIGN_OR_RETURN(Val m, b.Size(a_aval.shape[rank - 2]));
  J2O_ASSIGN_OR_RETURN(Val steps, b.Size(tau_aval.shape[rank - 2]));
  Val iota_m = b.Iota(m);
  Val zero = b.Scalar(0);
  const bool reverse = left != transpose;
  J2O_ASSIGN_OR_RETURN(
      std::vector<Val> out,
      e.Loop(steps, {c}, {plugin::CarriedType(dt, eqn.outputs[0]->aval.shape)},
             [&](Val i, const std::vector<Val>& carried)
                 -> absl::StatusOr<std::vector<Val>> {
               Val j =
                   reverse
                       ? b.Bin("Sub",
                               b.Bin("Sub", steps, b.ScalarI64(1), DType::kI64),
                               i, DType::kI64)
                       : i;
               auto [v, tau] =
                   qr_plan::StoredReflector(b, a, taus, j, iota_m, zero, rank);
               Val x = carried[0];
               if (!left) {
                 return std::vector<Val>{
                     qr_plan::ReflectFromRight(b, x, v, tau, rank)};
               }
               Val update =
                   b.Bin("Mul", b.Unsqueeze(v, rank - 1, dt),
                         e.Op("MatMul", {b.Unsqueeze(v, rank - 2, dt), x}, dt),
                         dt);  // v (vᵀ c)
               return std::vector<Val>{
                   b.Bin("Sub", x, b.Bin("Mul", tau, update, dt), dt)};
             }));
  return e.SetOut(0, out[0]);
}

// tridiagonal_solve(dl, d, du, b) on f32/f64: LAPACK gtsv with partial
// pivoting, as JAX's CPU lowering runs it (plugin/gtsv_plan.h).
// perturb_singular is refused.
template <class E>
absl::Status LowerTridiagonalSolve(E& e) {
  using jaxpr::DType;
  namespace lp = linalg_plan;
  using Val = typename E::Value;
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_RETURN_IF_ERROR(lp::CheckTridiagonalSolveEqn(eqn));
  const jaxpr::Aval& aval = eqn.outputs[0]->aval;  // [..., m, n]
  const DType dt = aval.dtype;
  J2O_RETURN_IF_ERROR(lp::CheckRealFloat(dt, "tridiagonal_solve"));
  const int rank = aval.rank();
  if (rank < 2) {
    return absl::InvalidArgumentError("tridiagonal_solve: b needs rank >= 2");
  }
  lp::Builder<E> b{e, dt};
  J2O_ASSIGN_OR_RETURN(Val dl, e.In(0));
  J2O_ASSIGN_OR_RETURN(Val d, e.In(1));
  J2O_ASSIGN_OR_RETURN(Val du, e.In(2));
  J2O_ASSIGN_OR_RETURN(Val rhs, e.In(3));
  J2O_ASSIGN_OR_RETURN(Val m, b.Size(aval.shape[rank - 2]));
  const std::vector<jaxpr::DimExpr> diag_shape(aval.shape.begin(),
                                               aval.shape.end() - 1);
  gtsv::RealGtsv<E> algebra{b};
  J2O_ASSIGN_OR_RETURN(Val x, gtsv::Solve(e, algebra, b, dl, d, du, rhs, m,
                                          rank, diag_shape, aval.shape));
  return e.SetOut(0, x);
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_QR_PLAN_H_
