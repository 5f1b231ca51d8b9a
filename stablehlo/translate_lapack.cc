// The LAPACK FFI custom_call targets that jax.export emits on CPU for
// jnp.linalg / lax.linalg (jaxlib/cpu/lapack_kernels.cc), mapped onto the
// data model's linalg primitives with the operands and results the
// surrounding StableHLO expects:
//   lapack_{s,d,c,z}potrf_ffi(a) -> (factor, info)   uplo = 'L' only
//     cholesky (potrf's own semantics: the strict upper triangle keeps the
//     input); info = 0 on success, 1 where the matrix is not positive
//     definite (LAPACK gives the order of the failing minor; JAX only tests
//     info == 0) and the factor is then NaN (JAX replaces it by NaN anyway).
//   lapack_{s,d,c,z}getrf_ffi(a) -> (lu, ipiv, info)
//     lu; ipiv = lu's 0-based pivots + 1 (LAPACK's 1-based rows); info =
//     the 1-based index of the first zero on U's diagonal, else 0 (getrf's
//     definition).
//   lapack_{s,d,c,z}geqrf_ffi(a) -> (a', taus): geqrf.
//   lapack_{s,d}orgqr_ffi / lapack_{c,z}ungqr_ffi(a, taus) -> q:
//     householder_product.
//   lapack_{s,d,c,z}trsm_ffi(a, b) -> x: triangular_solve with side, uplo,
//     trans_x and diag of the backend_config.
//   lapack_{s,d}syevd_ffi / lapack_{c,z}heevd_ffi(a) -> (v, w, info)
//     eigh reading the `uplo` triangle, eigenvalues ascending (syevd's
//     order); mode 'N' still binds the eigenvectors (LAPACK leaves them
//     unspecified and JAX never reads them).
//   lapack_{s,d,c,z}gesdd_ffi / gesvd_ffi(a) -> (a', s, u, vt, info)
//     svd with mode 'A' (full_matrices), 'S' (economy) or 'N' (values
//     only: u and vt are zeros, LAPACK leaves them unspecified); a' (the
//     destroyed input) is the input, which JAX never reads.
//   For both, info is 1 where the input or the computed values hold a NaN
//   and 0 elsewhere: the Jacobi recipes always stop within their sweep
//   bound, and JAX replaces every output of a batch with info != 0 by NaN,
//   which is what a NaN input gives in LAPACK's result either way.
//   Eigen- and singular vectors are unique only up to sign (phase), and may
//   differ from LAPACK's by that.
//   lapack_{s,d,c,z}geev_ffi: eig (see Geev).
//   lapack_{s,d,c,z}gees_ffi: schur (see Gees).
//   lapack_{s,d,c,z}gehrd_ffi(a) -> (a', taus, info), backend_config low =
//     1, high = n (what JAX's hessenberg emits): hessenberg; info = 0
//     (gehrd only reports illegal arguments).
//   lapack_{s,d}sytrd_ffi(a) -> (a', d, e, taus, info), uplo L/U:
//     tridiagonal[lower] (jaxpr/text/tridiagonal.h); info = 0 (sytrd only
//     reports illegal arguments); lapack_{c,z}hetrd_ffi alike (the
//     Hermitian reduction, d and e real).
//   lapack_{s,d,c,z}gtsv_ffi(dl, d, du, b) -> (dl', d', du', b', info):
//     tridiagonal_solve (gtsv's elimination with partial pivoting,
//     plugin/gtsv_plan.h; a singular member is all NaN); dl', d', du'
//     (gtsv's destroyed factorization, which JAX never reads) are the
//     inputs; info = 1 where the solution holds a NaN or an infinity while
//     dl, d, du and b hold none (a zero pivot: gtsv reports the singular
//     U(i, i)), else 0.
// Every matrix operand and result must have LAPACK's column-major layout
// (minor-to-major [r-2, r-1, r-3, ..., 0], what JAX passes): another layout
// would make the kernel see the transposed matrix, and is refused. Any other
// lapack_*, cusolver/hipsolver (cu*/hip*) or ducc target is refused, naming
// it.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

// `key = 76 : ui8` inside the backend_config dictionary, or -1.
int64_t BackendConfigInt(OpContext& ctx, absl::string_view key) {
  auto cfg = ctx.op().Attr("mhlo.backend_config");
  if (!cfg.has_value()) return -1;
  const std::string needle = absl::StrCat(key, " = ");
  size_t at = cfg->find(needle);
  while (at != absl::string_view::npos && at > 0 &&
         ((*cfg)[at - 1] != ' ' && (*cfg)[at - 1] != '{' &&
          (*cfg)[at - 1] != ',')) {
    at = cfg->find(needle, at + 1);
  }
  if (at == absl::string_view::npos) return -1;
  absl::string_view rest = cfg->substr(at + needle.size());
  size_t end = 0;
  while (end < rest.size() &&
         (rest[end] == '-' || (rest[end] >= '0' && rest[end] <= '9')))
    ++end;
  int64_t v = -1;
  if (!absl::SimpleAtoi(rest.substr(0, end), &v)) return -1;
  return v;
}

// The layouts of `key` (operand_layouts / result_layouts) are LAPACK's
// column-major for every matrix entry: those of the first operand's rank
// (batch + 2). Vectors of a batch (pivots, taus, eigen/singular values) and
// info codes are ordinary row-major arrays.
absl::Status CheckColumnMajor(OpContext& ctx, absl::string_view key,
                              int64_t matrix_rank) {
  auto raw = ctx.op().Attr(key);
  if (!raw.has_value()) return absl::OkStatus();  // default: JAX's own
  absl::string_view s = StripSpace(*raw);
  if (s.size() < 2 || s.front() != '[') return absl::OkStatus();
  for (absl::string_view item : SplitTopLevel(s.substr(1, s.size() - 2), ',')) {
    auto dims = ParseIntList(StripSpace(item));
    if (!dims.ok()) {
      return ctx.Unsupported(
          absl::StrCat("cannot read ", key, " entry `", StripSpace(item), "`"));
    }
    const int64_t r = static_cast<int64_t>(dims->size());
    if (r < 2 || r != matrix_rank) continue;
    std::vector<int64_t> want = {r - 2, r - 1};
    for (int64_t d = r - 3; d >= 0; --d) want.push_back(d);
    if (*dims != want) {
      return ctx.Unsupported(absl::StrCat(
          key, " entry `", StripSpace(item),
          "` is not LAPACK's column-major layout (the kernel would see the "
          "transposed matrix)"));
    }
  }
  return absl::OkStatus();
}

// Shapes whose batch dims may be symbolic (jax.export with a symbolic
// batch); the matrix dims are static (LapackCustomCall checks).
using Dims = std::vector<jaxpr::DimExpr>;

Dims BatchShape(const Aval& a) {
  Dims s = a.shape;
  s.resize(s.size() - 2);
  return s;
}

// Result i's type with the batch dims of matrices `a`: a jax.export module
// with a symbolic batch prints them `?` in the result types.
absl::StatusOr<Aval> BatchedResultAval(OpContext& ctx, int i, const Aval& a) {
  J2O_ASSIGN_OR_RETURN(Aval r, ctx.ResultAval(i));
  const Dims batch = BatchShape(a);
  if (r.rank() < static_cast<int>(batch.size())) return r;
  for (size_t d = 0; d < batch.size(); ++d) r.shape[d] = batch[d];
  return r;
}

int64_t StaticDim(const Aval& a, int axis) {
  return a.shape[axis].constant_value();
}

Dims Append(Dims s, std::initializer_list<int64_t> tail) {
  for (int64_t d : tail) s.push_back(jaxpr::DimExpr::Constant(d));
  return s;
}

// The info result's type: i32 over the batch dims of matrices `a`, which
// may be symbolic (jax.export with a symbolic batch).
Aval InfoAval(const Aval& a) {
  return Aval::Shaped(DType::kI32, BatchShape(a));
}

// A scalar 0 of `dtype` (complex zeros are constvars: no complex literal).
Val Zero(OpContext& ctx, DType dtype) {
  if (!jaxpr::IsComplex(dtype)) return ctx.ScalarInt(dtype, 0);
  return *ctx.Constant(jaxpr::Array(dtype, {}));
}

// x[..., i, i] for i < k, as [..., k].
Val Diagonal(OpContext& ctx, const Val& x, int64_t k) {
  const int r = x.aval.rank();
  const Dims square = Append(BatchShape(x.aval), {k, k});
  Params sp;
  sp.Set("limit_indices", DimsParam(square));
  sp.Set("start_indices", IntTuple(std::vector<int64_t>(r, 0)));
  sp.Set("strides", ParamValue::None());
  Val sq = ctx.Emit1("slice", std::move(sp), {x},
                     Aval::Shaped(x.aval.dtype, square));
  Aval idx = Aval::Shaped(DType::kI32, square);
  Val rows = EmitIota(ctx, idx, r - 2);
  Val cols = EmitIota(ctx, idx, r - 1);
  Val eye = ctx.Emit1("eq", Params(), {rows, cols},
                      Aval::Shaped(DType::kBool, square));
  Val zeros = EmitBroadcastInDim(ctx, Zero(ctx, x.aval.dtype), {}, sq.aval);
  Val masked = ctx.Emit1("select_n", Params(), {eye, zeros, sq}, sq.aval);
  Params rp;
  rp.Set("axes", IntTuple({r - 1}));
  rp.Set("out_sharding", ParamValue::None());
  return ctx.Emit1("reduce_sum", std::move(rp), {masked},
                   Aval::Shaped(x.aval.dtype, Append(BatchShape(x.aval), {k})));
}

absl::Status Potrf(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val a, ctx.Input(0));
  const int64_t uplo = BackendConfigInt(ctx, "uplo");
  if (uplo != 'L') {
    return ctx.Unsupported(
        "potrf with uplo other than 'L' (JAX emits 'L') is not supported");
  }
  if (ctx.num_results() != 2 || a.aval.rank() < 2) {
    return ctx.Error("expects one matrix operand and 2 results (factor, info)");
  }
  Val l = ctx.Emit1("cholesky", Params(), {a}, a.aval);
  // A failed factorization is all NaN; a successful one has a positive
  // (or infinite) l[..., 0, 0].
  const Dims batch = BatchShape(a.aval);
  Val d = Diagonal(ctx, l, 1);
  Val first = EmitReshape(ctx, d, Aval::Shaped(a.aval.dtype, batch));
  Val failed = ctx.Emit1("ne", Params(), {first, first},
                         Aval::Shaped(DType::kBool, batch));
  Val info = ConvertTo(ctx, failed, DType::kI32);
  ctx.Bind(0, l);
  ctx.Bind(1, info);
  return absl::OkStatus();
}

absl::Status Getrf(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val a, ctx.Input(0));
  if (ctx.num_results() != 3 || a.aval.rank() < 2) {
    return ctx.Error(
        "expects one matrix operand and 3 results (lu, ipiv, info)");
  }
  const int r = a.aval.rank();
  const int64_t m = StaticDim(a.aval, r - 2), n = StaticDim(a.aval, r - 1);
  const int64_t k = std::min(m, n);
  const Dims batch = BatchShape(a.aval);
  const Dims kshape = Append(batch, {k}), mshape = Append(batch, {m});
  std::vector<Val> outs = ctx.Emit("lu", Params(), {a},
                                   {a.aval, Aval::Shaped(DType::kI32, kshape),
                                    Aval::Shaped(DType::kI32, mshape)});
  const Aval kaval = Aval::Shaped(DType::kI32, kshape);
  Val ipiv = ctx.Emit1("add", Params(),
                       {outs[1], ctx.ScalarInt(DType::kI32, 1)}, kaval);
  // info: the first (1-based) i with U[i, i] == 0, else 0.
  Val diag = Diagonal(ctx, outs[0], k);
  Val zero = ctx.Emit1("eq", Params(), {diag, Zero(ctx, a.aval.dtype)},
                       Aval::Shaped(DType::kBool, kshape));
  Val pos = ctx.Emit1(
      "add", Params(),
      {EmitIota(ctx, kaval, r - 2), ctx.ScalarInt(DType::kI32, 1)}, kaval);
  Val none =
      EmitBroadcastInDim(ctx, ctx.ScalarInt(DType::kI32, k + 1), {}, kaval);
  Val cand = ctx.Emit1("select_n", Params(), {zero, none, pos}, kaval);
  Params rp;
  rp.Set("axes", IntTuple({r - 2}));
  rp.Set("out_sharding", ParamValue::None());
  const Aval baval = Aval::Shaped(DType::kI32, batch);
  Val first = ctx.Emit1("reduce_min", std::move(rp), {cand}, baval);
  Val nonsingular =
      ctx.Emit1("eq", Params(), {first, ctx.ScalarInt(DType::kI32, k + 1)},
                Aval::Shaped(DType::kBool, batch));
  Val info = ctx.Emit1(
      "select_n", Params(),
      {nonsingular, first,
       EmitBroadcastInDim(ctx, ctx.ScalarInt(DType::kI32, 0), {}, baval)},
      baval);
  ctx.Bind(0, outs[0]);
  ctx.Bind(1, ipiv);
  ctx.Bind(2, info);
  return absl::OkStatus();
}

absl::Status Geqrf(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val a, ctx.Input(0));
  if (ctx.num_results() != 2) return ctx.Error("expects 2 results (a, taus)");
  J2O_ASSIGN_OR_RETURN(Aval taus, BatchedResultAval(ctx, 1, a.aval));
  std::vector<Val> outs = ctx.Emit("geqrf", Params(), {a}, {a.aval, taus});
  ctx.Bind(0, outs[0]);
  ctx.Bind(1, outs[1]);
  return absl::OkStatus();
}

absl::Status Orgqr(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val a, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Val taus, ctx.Input(1));
  J2O_ASSIGN_OR_RETURN(Aval out, BatchedResultAval(ctx, 0, a.aval));
  ctx.Bind(0, ctx.Emit1("householder_product", Params(), {a, taus}, out));
  return absl::OkStatus();
}

// 1 where `x` holds a NaN in the matrix (or vector) of a batch, else 0:
// i32 [batch] with `tail` trailing non-batch dims.
Val NanPerBatch(OpContext& ctx, const Val& x, int tail) {
  const int r = x.aval.rank();
  Dims shape = x.aval.shape;
  Val isnan =
      ctx.Emit1("ne", Params(), {x, x}, Aval::Shaped(DType::kBool, shape));
  Val as_int = ConvertTo(ctx, isnan, DType::kI32);
  std::vector<int64_t> axes;
  for (int d = r - tail; d < r; ++d) axes.push_back(d);
  shape.resize(r - tail);
  Params rp;
  rp.Set("axes", IntTuple(axes));
  rp.Set("out_sharding", ParamValue::None());
  return ctx.Emit1("reduce_max", std::move(rp), {as_int},
                   Aval::Shaped(DType::kI32, shape));
}

Val EitherNan(OpContext& ctx, const Val& input, const Val& values) {
  Val in = NanPerBatch(ctx, input, 2);
  Val out = NanPerBatch(ctx, values, 1);
  return ctx.Emit1("max", Params(), {in, out}, in.aval);
}

absl::Status Syevd(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val a, ctx.Input(0));
  const int64_t mode = BackendConfigInt(ctx, "mode");
  const int64_t uplo = BackendConfigInt(ctx, "uplo");
  if ((mode != 'V' && mode != 'N') || (uplo != 'L' && uplo != 'U')) {
    return ctx.Error(
        "backend_config needs mode (V/N) and uplo (L/U) as character codes");
  }
  if (ctx.num_results() != 3 || a.aval.rank() < 2) {
    return ctx.Error("expects one matrix operand and 3 results (v, w, info)");
  }
  J2O_ASSIGN_OR_RETURN(Aval w_aval, BatchedResultAval(ctx, 1, a.aval));
  Params p;
  p.Set("algorithm", ParamValue::None());
  p.Set("lower", ParamValue::Bool(uplo == 'L'));
  p.Set("sort_eigenvalues", ParamValue::Bool(true));
  p.Set("subset_by_index", ParamValue::None());
  std::vector<Val> vw = ctx.Emit("eigh", std::move(p), {a}, {a.aval, w_aval});
  ctx.Bind(0, vw[0]);
  ctx.Bind(1, vw[1]);
  ctx.Bind(2, EitherNan(ctx, a, vw[1]));
  return absl::OkStatus();
}

absl::Status Gesdd(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val a, ctx.Input(0));
  const int64_t mode = BackendConfigInt(ctx, "mode");
  if (mode != 'A' && mode != 'S' && mode != 'N') {
    return ctx.Unsupported(
        "svd with a mode other than 'A', 'S' or 'N' (what JAX emits) is not "
        "supported");
  }
  if (ctx.num_results() != 5 || a.aval.rank() < 2) {
    return ctx.Error(
        "expects one matrix operand and 5 results (a, s, u, vt, info)");
  }
  J2O_ASSIGN_OR_RETURN(Aval s_aval, BatchedResultAval(ctx, 1, a.aval));
  J2O_ASSIGN_OR_RETURN(Aval u_aval, BatchedResultAval(ctx, 2, a.aval));
  J2O_ASSIGN_OR_RETURN(Aval vt_aval, BatchedResultAval(ctx, 3, a.aval));
  const bool compute_uv = mode != 'N';
  Params p;
  p.Set("algorithm", ParamValue::None());
  p.Set("compute_uv", ParamValue::Bool(compute_uv));
  p.Set("full_matrices", ParamValue::Bool(mode == 'A'));
  p.Set("subset_by_index", ParamValue::None());
  std::vector<Aval> outs = {s_aval};
  if (compute_uv) {
    outs.push_back(u_aval);
    outs.push_back(vt_aval);
  }
  std::vector<Val> r = ctx.Emit("svd", std::move(p), {a}, outs);
  ctx.Bind(0, a);
  ctx.Bind(1, r[0]);
  if (compute_uv) {
    ctx.Bind(2, r[1]);
    ctx.Bind(3, r[2]);
  } else {
    ctx.Bind(2, EmitBroadcastInDim(ctx, Zero(ctx, u_aval.dtype), {}, u_aval));
    ctx.Bind(3, EmitBroadcastInDim(ctx, Zero(ctx, vt_aval.dtype), {}, vt_aval));
  }
  ctx.Bind(4, EitherNan(ctx, a, r[0]));
  return absl::OkStatus();
}

// lapack_{s,d}geev_ffi(a) -> (wr, wi, vl, vr, info) and
// lapack_{c,z}geev_ffi(a) -> (w, vl, vr, info): eig with the backend_config's
// compute_left / compute_right ('V' or 'N'); vl and vr are complex either
// way (JAX's FFI kernel unpacks dgeev's conjugate pairs), zeros where not
// computed (LAPACK leaves them unspecified and JAX never reads them); info
// as for eigh and svd below (eig gives NaN where its QR iteration does not
// converge). Eigenvalue order and eigenvector phases may differ from
// LAPACK's (docs/linalg.md).
absl::Status Geev(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val a, ctx.Input(0));
  const bool real = !jaxpr::IsComplex(a.aval.dtype);
  const int64_t left = BackendConfigInt(ctx, "compute_left");
  const int64_t right = BackendConfigInt(ctx, "compute_right");
  if ((left != 'V' && left != 'N') || (right != 'V' && right != 'N')) {
    return ctx.Error(
        "backend_config needs compute_left and compute_right (V/N) as "
        "character codes");
  }
  const int values = real ? 2 : 1;
  if (ctx.num_results() != values + 3 || a.aval.rank() < 2) {
    return ctx.Error(real ? "expects one matrix operand and 5 results (wr, "
                            "wi, vl, vr, info)"
                          : "expects one matrix operand and 4 results (w, "
                            "vl, vr, info)");
  }
  J2O_ASSIGN_OR_RETURN(Aval vl_aval, BatchedResultAval(ctx, values, a.aval));
  J2O_ASSIGN_OR_RETURN(Aval vr_aval,
                       BatchedResultAval(ctx, values + 1, a.aval));
  J2O_ASSIGN_OR_RETURN(Aval w0_aval,
                       BatchedResultAval(ctx, 0, a.aval));  // w, or wr
  std::vector<Aval> outs = {WithDType(w0_aval, vl_aval.dtype)};
  if (left == 'V') outs.push_back(vl_aval);
  if (right == 'V') outs.push_back(vr_aval);
  Params p;
  p.Set("compute_left_eigenvectors", ParamValue::Bool(left == 'V'));
  p.Set("compute_right_eigenvectors", ParamValue::Bool(right == 'V'));
  p.Set("enable_eigvec_derivs", ParamValue::Bool(false));
  p.Set("implementation", ParamValue::None());
  std::vector<Val> r = ctx.Emit("eig", std::move(p), {a}, outs);
  const Val& w = r[0];
  if (real) {
    ctx.Bind(0, ctx.Emit1("real", Params(), {w}, w0_aval));
    ctx.Bind(1, ctx.Emit1("imag", Params(), {w}, w0_aval));
  } else {
    ctx.Bind(0, w);
  }
  size_t next = 1;
  for (int i = 0; i < 2; ++i) {
    const bool computed = (i == 0 ? left : right) == 'V';
    const Aval& aval = i == 0 ? vl_aval : vr_aval;
    ctx.Bind(values + i, computed ? r[next++]
                                  : EmitBroadcastInDim(
                                        ctx, Zero(ctx, aval.dtype), {}, aval));
  }
  ctx.Bind(values + 2, EitherNan(ctx, a, w));
  return absl::OkStatus();
}

// x[..., r0 + i, c0 + i] for i < n - 1 (r0, c0 in {0, 1}): the sub- or
// superdiagonal of square matrices, as [..., n - 1].
Val OffDiagonal(OpContext& ctx, const Val& x, int64_t r0, int64_t c0) {
  const int r = x.aval.rank();
  const int64_t k = StaticDim(x.aval, r - 1) - 1;
  std::vector<int64_t> start(r, 0);
  start[r - 2] = r0;
  start[r - 1] = c0;
  const Dims batch = BatchShape(x.aval);
  Params sp;
  sp.Set("limit_indices", DimsParam(Append(batch, {r0 + k, c0 + k})));
  sp.Set("start_indices", IntTuple(start));
  sp.Set("strides", ParamValue::None());
  return Diagonal(ctx,
                  ctx.Emit1("slice", std::move(sp), {x},
                            Aval::Shaped(x.aval.dtype, Append(batch, {k, k}))),
                  k);
}

// The imaginary parts of a real Schur form's eigenvalues (dgees' wi), as
// [..., n]: a 2 x 2 block [[a, b], [c, a]] (c != 0 below the diagonal)
// gives +sqrt|b| sqrt|c| at its first index and the negation at its second
// (dlanv2's rt1i, rt2i); 0 elsewhere.
Val SchurImaginaryParts(OpContext& ctx, const Val& t) {
  const int r = t.aval.rank();
  const Dims vec(t.aval.shape.begin(), t.aval.shape.end() - 1);
  Val sub = OffDiagonal(ctx, t, 1, 0), sup = OffDiagonal(ctx, t, 0, 1);
  const Aval& off = sub.aval;
  auto unary = [&](const char* p, const Val& x) {
    return ctx.Emit1(p, Params(), {x}, x.aval);
  };
  Val prod = ctx.Emit1(
      "mul", Params(),
      {unary("sqrt", unary("abs", sup)), unary("sqrt", unary("abs", sub))},
      off);
  Val zero = Zero(ctx, t.aval.dtype);
  Val block =
      ctx.Emit1("ne", Params(), {sub, EmitBroadcastInDim(ctx, zero, {}, off)},
                WithDType(off, DType::kBool));
  Val im =
      ctx.Emit1("select_n", Params(),
                {block, EmitBroadcastInDim(ctx, zero, {}, off), prod}, off);
  auto padded = [&](int64_t lo, int64_t hi) {
    std::vector<ParamValue> cfg(r - 1, IntTuple({0, 0, 0}));
    cfg.back() = IntTuple({lo, hi, 0});
    Params p;
    p.Set("padding_config", ParamValue::Tuple(std::move(cfg)));
    return ctx.Emit1("pad", std::move(p), {im, zero},
                     Aval::Shaped(t.aval.dtype, vec));
  };
  return ctx.Emit1("sub", Params(), {padded(0, 1), padded(1, 0)},
                   Aval::Shaped(t.aval.dtype, vec));
}

// lapack_{s,d}gees_ffi(a) -> (t, vs, wr, wi, sdim, info) and
// lapack_{c,z}gees_ffi(a) -> (t, vs, w, sdim, info), backend_config mode
// (V/N) and sort (N): schur[compute_schur_vectors] (real operands: dgees's
// quasi-triangular form); vs is zeros for mode 'N' (LAPACK leaves it
// unspecified and JAX never reads it); w (wr) = t's diagonal, wi from its
// 2 x 2 blocks (SchurImaginaryParts); sdim = 0 (no eigenvalue is selected
// without sorting); info as for eig.
absl::Status Gees(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val a, ctx.Input(0));
  const bool real = !jaxpr::IsComplex(a.aval.dtype);
  const int64_t mode = BackendConfigInt(ctx, "mode");
  const int64_t sort = BackendConfigInt(ctx, "sort");
  if ((mode != 'V' && mode != 'N') || sort != 'N') {
    return ctx.Error(
        "backend_config needs mode (V/N) and sort (N: JAX never sorts) as "
        "character codes");
  }
  const int values = real ? 2 : 1;
  if (ctx.num_results() != values + 4 || a.aval.rank() < 2) {
    return ctx.Error(real ? "expects one matrix operand and 6 results (t, "
                            "vs, wr, wi, sdim, info)"
                          : "expects one matrix operand and 5 results (t, "
                            "vs, w, sdim, info)");
  }
  J2O_ASSIGN_OR_RETURN(Aval sdim_aval,
                       BatchedResultAval(ctx, values + 2, a.aval));
  Params p;
  p.Set("compute_schur_vectors", ParamValue::Bool(mode == 'V'));
  p.Set("select_callable", ParamValue::None());
  p.Set("sort_eig_vals", ParamValue::Bool(false));
  std::vector<Aval> outs = {a.aval};
  if (mode == 'V') outs.push_back(a.aval);
  std::vector<Val> r = ctx.Emit("schur", std::move(p), {a}, outs);
  ctx.Bind(0, r[0]);
  ctx.Bind(1, mode == 'V' ? r[1]
                          : EmitBroadcastInDim(ctx, Zero(ctx, a.aval.dtype), {},
                                               a.aval));
  Val w = Diagonal(ctx, r[0], StaticDim(a.aval, a.aval.rank() - 1));
  ctx.Bind(2, w);
  if (real) ctx.Bind(3, SchurImaginaryParts(ctx, r[0]));
  ctx.Bind(values + 2,
           EmitBroadcastInDim(ctx, Zero(ctx, sdim_aval.dtype), {}, sdim_aval));
  ctx.Bind(values + 3, EitherNan(ctx, a, w));
  return absl::OkStatus();
}

absl::Status Gehrd(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val a, ctx.Input(0));
  if (ctx.num_results() != 3 || a.aval.rank() < 2) {
    return ctx.Error(
        "expects one matrix operand and 3 results (a, taus, info)");
  }
  const int64_t n = StaticDim(a.aval, a.aval.rank() - 1);
  const int64_t low = BackendConfigInt(ctx, "low");
  const int64_t high = BackendConfigInt(ctx, "high");
  if (low != 1 || high != n) {
    return ctx.Unsupported(absl::StrCat(
        "gehrd with low = ", low, ", high = ", high,
        " is not supported (JAX's hessenberg emits low = 1, high = n = ", n,
        ")"));
  }
  J2O_ASSIGN_OR_RETURN(Aval taus, BatchedResultAval(ctx, 1, a.aval));
  std::vector<Val> outs = ctx.Emit("hessenberg", Params(), {a}, {a.aval, taus});
  ctx.Bind(0, outs[0]);
  ctx.Bind(1, outs[1]);
  ctx.Bind(2, EmitBroadcastInDim(ctx, ctx.ScalarInt(DType::kI32, 0), {},
                                 InfoAval(a.aval)));
  return absl::OkStatus();
}

absl::Status Sytrd(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val a, ctx.Input(0));
  if (ctx.num_results() != 5 || a.aval.rank() < 2) {
    return ctx.Error(
        "expects one matrix operand and 5 results (a, d, e, taus, info)");
  }
  const int64_t uplo = BackendConfigInt(ctx, "uplo");
  if (uplo != 'L' && uplo != 'U') {
    return ctx.Error("backend_config needs uplo (L/U) as a character code");
  }

  std::vector<Aval> outs = {a.aval};
  for (int i = 1; i < 4; ++i) {
    J2O_ASSIGN_OR_RETURN(Aval r, BatchedResultAval(ctx, i, a.aval));
    outs.push_back(r);
  }
  Params p;
  p.Set("lower", ParamValue::Bool(uplo == 'L'));
  std::vector<Val> r = ctx.Emit("tridiagonal", std::move(p), {a}, outs);
  for (int i = 0; i < 4; ++i) ctx.Bind(i, r[i]);
  ctx.Bind(4, EmitBroadcastInDim(ctx, ctx.ScalarInt(DType::kI32, 0), {},
                                 InfoAval(a.aval)));
  return absl::OkStatus();
}

// 1 where `x` holds a NaN or an infinity in the trailing `tail` dims of a
// batch, else 0: i32 [batch].
Val NonFinitePerBatch(OpContext& ctx, const Val& x, int tail) {
  const Dims& shape = x.aval.shape;
  const Aval flags = Aval::Shaped(DType::kBool, shape);
  Val finite;
  if (jaxpr::IsComplex(x.aval.dtype)) {  // both parts finite
    const Aval part = Aval::Shaped(
        x.aval.dtype == DType::kC64 ? DType::kF32 : DType::kF64, shape);
    Val re = ctx.Emit1("real", Params(), {x}, part);
    Val im = ctx.Emit1("imag", Params(), {x}, part);
    finite = ctx.Emit1("and", Params(),
                       {ctx.Emit1("is_finite", Params(), {re}, flags),
                        ctx.Emit1("is_finite", Params(), {im}, flags)},
                       flags);
  } else {
    finite = ctx.Emit1("is_finite", Params(), {x}, flags);
  }
  Val bad = ctx.Emit1("not", Params(), {finite}, finite.aval);
  Val as_int = ConvertTo(ctx, bad, DType::kI32);
  const int r = x.aval.rank();
  std::vector<int64_t> axes;
  for (int d = r - tail; d < r; ++d) axes.push_back(d);
  Dims out = shape;
  out.resize(r - tail);
  Params rp;
  rp.Set("axes", IntTuple(axes));
  rp.Set("out_sharding", ParamValue::None());
  return ctx.Emit1("reduce_max", std::move(rp), {as_int},
                   Aval::Shaped(DType::kI32, out));
}

absl::Status Gtsv(OpContext& ctx) {
  if (ctx.num_inputs() != 4 || ctx.num_results() != 5) {
    return ctx.Error(
        "expects 4 operands (dl, d, du, b) and 5 results (dl, d, du, b, info)");
  }
  std::vector<Val> in;
  for (int i = 0; i < 4; ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(i));
    in.push_back(std::move(v));
  }
  const Aval& b = in[3].aval;
  if (b.rank() < 2 || in[0].aval.rank() != b.rank() - 1) {
    return ctx.Error("expects diagonals [..., m] and b [..., m, n]");
  }
  Params p;
  p.Set("perturb_singular", ParamValue::Bool(false));
  Val x = ctx.Emit1("tridiagonal_solve", std::move(p), in, b);
  // info: a non-finite solution from finite operands (a zero pivot).
  Val bad_in = NonFinitePerBatch(ctx, in[3], 2);
  for (int i = 0; i < 3; ++i) {
    bad_in = ctx.Emit1("max", Params(),
                       {bad_in, NonFinitePerBatch(ctx, in[i], 1)}, bad_in.aval);
  }
  Val bad_out = NonFinitePerBatch(ctx, x, 2);
  Val clean_in = ctx.Emit1(
      "sub", Params(), {ctx.ScalarInt(DType::kI32, 1), bad_in}, bad_in.aval);
  Val info = ctx.Emit1("min", Params(), {bad_out, clean_in}, bad_out.aval);
  for (int i = 0; i < 3; ++i) ctx.Bind(i, in[i]);
  ctx.Bind(3, x);
  ctx.Bind(4, info);
  return absl::OkStatus();
}

absl::Status Trsm(OpContext& ctx) {
  if (ctx.num_inputs() != 2) {
    return ctx.Unsupported(
        "trsm with other than (a, b) operands (the pre-2025 form with an alpha "
        "operand) is not supported");
  }
  J2O_ASSIGN_OR_RETURN(Val a, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Val b, ctx.Input(1));
  const int64_t side = BackendConfigInt(ctx, "side");
  const int64_t uplo = BackendConfigInt(ctx, "uplo");
  const int64_t trans = BackendConfigInt(ctx, "trans_x");
  const int64_t diag = BackendConfigInt(ctx, "diag");
  if ((side != 'L' && side != 'R') || (uplo != 'L' && uplo != 'U') ||
      (trans != 'N' && trans != 'T' && trans != 'C') ||
      (diag != 'N' && diag != 'U')) {
    return ctx.Error(
        "backend_config needs side (L/R), uplo (L/U), trans_x (N/T/C) and "
        "diag (N/U) as character codes");
  }
  Params p;
  p.Set("conjugate_a", ParamValue::Bool(trans == 'C'));
  p.Set("left_side", ParamValue::Bool(side == 'L'));
  p.Set("lower", ParamValue::Bool(uplo == 'L'));
  p.Set("transpose_a", ParamValue::Bool(trans != 'N'));
  p.Set("unit_diagonal", ParamValue::Bool(diag == 'U'));
  ctx.Bind(0, ctx.Emit1("triangular_solve", std::move(p), {a, b}, b.aval));
  return absl::OkStatus();
}

}  // namespace

absl::Status LapackCustomCall(OpContext& ctx, const std::string& target) {
  // lapack_<t><routine>_ffi, t in s d c z.
  std::string routine;
  if (absl::StartsWith(target, "lapack_") && absl::EndsWith(target, "_ffi") &&
      target.size() > 12) {
    const char t = target[7];
    if (t == 's' || t == 'd' || t == 'c' || t == 'z') {
      routine = target.substr(8, target.size() - 12);
    }
  }
  using Fn = absl::Status (*)(OpContext&);
  Fn fn = nullptr;
  if (routine == "potrf") fn = &Potrf;
  if (routine == "getrf") fn = &Getrf;
  if (routine == "geqrf") fn = &Geqrf;
  if (routine == "orgqr" || routine == "ungqr") fn = &Orgqr;
  if (routine == "trsm") fn = &Trsm;
  if (routine == "syevd" || routine == "heevd") fn = &Syevd;
  if (routine == "gesdd" || routine == "gesvd") fn = &Gesdd;
  if (routine == "geev") fn = &Geev;
  if (routine == "gees") fn = &Gees;
  if (routine == "gehrd") fn = &Gehrd;
  if (routine == "gtsv") fn = &Gtsv;
  if (routine == "sytrd" || routine == "hetrd") fn = &Sytrd;
  if (fn == nullptr) {
    return ctx.Unsupported(absl::StrCat(
        "custom_call target @", target,
        " is not supported (LAPACK targets translated: lapack_?potrf_ffi, "
        "?getrf, ?geqrf, ?orgqr/?ungqr, ?trsm, ?syevd/?heevd, "
        "?gesdd/?gesvd, ?geev, ?gees, ?gehrd, ?sytrd/?hetrd, ?gtsv)"));
  }
  // The matrix operand: b for gtsv (its diagonals are vectors), else a.
  const int matrix = routine == "gtsv" && ctx.num_inputs() == 4 ? 3 : 0;
  J2O_ASSIGN_OR_RETURN(Val a, ctx.Input(matrix));
  // A symbolic batch (jax.export) is carried; the routines work on matrix
  // dims known at conversion (the decompositions unroll over them).
  for (int axis = std::max(0, a.aval.rank() - 2); axis < a.aval.rank();
       ++axis) {
    if (!a.aval.shape[axis].is_constant()) {
      return ctx.Unsupported(
          absl::StrCat("custom_call target @", target,
                       ": symbolic matrix dims in ", a.aval.ToString(),
                       " are not supported (only batch dims may be "
                       "symbolic)"));
    }
  }
  J2O_RETURN_IF_ERROR(CheckColumnMajor(ctx, "operand_layouts", a.aval.rank()));
  J2O_RETURN_IF_ERROR(CheckColumnMajor(ctx, "result_layouts", a.aval.rank()));
  return fn(ctx);
}

}  // namespace jax2onnx::stablehlo
