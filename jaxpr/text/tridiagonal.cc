#include "jaxpr/text/tridiagonal.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/decomposition.h"
#include "jaxpr/var_names.h"

namespace jax2onnx::jaxpr {
namespace {

// Dimensions as JAX prints them: numbers, or symbolic batch dims (`b`).
using Dims = std::vector<std::string>;

template <typename T>
std::string Tuple(const std::vector<T>& v) {
  if (v.size() == 1) return absl::StrCat("(", v[0], ",)");
  return absl::StrCat("(", absl::StrJoin(v, ", "), ")");
}

std::string Type(absl::string_view dtype, const Dims& dims) {
  return absl::StrCat(dtype, "[", absl::StrJoin(dims, ","), "]");
}

class Body {
 public:
  std::string Eq(const std::string& type, const std::string& rhs) {
    std::string v = Fresh();
    absl::StrAppend(&text_, "    ", v, ":", type, " = ", rhs, "\n");
    return v;
  }
  // An equation with two results.
  std::pair<std::string, std::string> Eq2(const std::string& type0,
                                          const std::string& type1,
                                          const std::string& rhs) {
    std::string v0 = Fresh(), v1 = Fresh();
    absl::StrAppend(&text_, "    ", v0, ":", type0, " ", v1, ":", type1, " = ",
                    rhs, "\n");
    return {v0, v1};
  }
  std::string Fresh() { return JaxVarName(next_++); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  int64_t next_ = 0;
};

// The text of one tridiagonal equation: operand a of `dt` [batch..., n, n].
class Writer {
 public:
  Writer(Body& body, std::string dt, Dims batch)
      : b_(body), dt_(std::move(dt)), batch_(std::move(batch)) {}

  Dims Shape(const std::vector<int64_t>& tail) const {
    Dims s = batch_;
    for (int64_t d : tail) s.push_back(absl::StrCat(d));
    return s;
  }
  int Rank(size_t tail) const { return static_cast<int>(batch_.size() + tail); }

  std::string Iota(int64_t k, int dim) {
    return b_.Eq(Type("i32", Shape({k, k})),
                 absl::StrCat("iota[dimension=", dim, " dtype=int32 shape=",
                              Tuple(Shape({k, k})), " sharding=None]"));
  }
  // rows `cmp` cols as bool [batch..., k, k].
  std::string Mask(int64_t k, const char* cmp) {
    const int r = Rank(2);
    std::string rows = Iota(k, r - 2), cols = Iota(k, r - 1);
    return b_.Eq(Type("bool", Shape({k, k})),
                 absl::StrCat(cmp, " ", rows, " ", cols));
  }
  std::string Zeros(const std::vector<int64_t>& tail) {
    return b_.Eq(
        Type(dt_, Shape(tail)),
        absl::StrCat("broadcast_in_dim[broadcast_dimensions=() shape=",
                     Tuple(Shape(tail)), " sharding=None] 0.0:", dt_, "[]"));
  }
  // x[..., i, i] for i < k of x [batch..., k, k], as [batch..., k].
  std::string Diagonal(const std::string& x, int64_t k) {
    std::string eye = Mask(k, "eq");
    std::string masked =
        b_.Eq(Type(dt_, Shape({k, k})),
              absl::StrCat("select_n ", eye, " ", Zeros({k, k}), " ", x));
    return b_.Eq(Type(dt_, Shape({k})),
                 absl::StrCat("reduce_sum[axes=(", Rank(2) - 1,
                              ",) out_sharding=None] ", masked));
  }
  // x[..., 1:, :-1] of x [batch..., n, n].
  std::string Subdiagonal(const std::string& x, int64_t n) {
    std::vector<int64_t> start(Rank(2), 0);
    Dims limit = Shape({n, n});
    start[Rank(2) - 2] = 1;
    limit[Rank(2) - 1] = absl::StrCat(n - 1);
    std::string sub = b_.Eq(
        Type(dt_, Shape({n - 1, n - 1})),
        absl::StrCat("slice[limit_indices=", Tuple(limit),
                     " start_indices=", Tuple(start), " strides=None] ", x));
    return Diagonal(sub, n - 1);
  }
  std::string Reverse(const std::string& x, const std::vector<int64_t>& tail,
                      std::vector<int64_t> dims) {
    return b_.Eq(Type(dt_, Shape(tail)),
                 absl::StrCat("rev[dimensions=", Tuple(dims), "] ", x));
  }

 private:
  Body& b_;
  std::string dt_;
  Dims batch_;
};

}  // namespace

absl::StatusOr<std::string> TridiagonalJaxprText(const Eqn& eqn) {
  auto invalid = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("tridiagonal: ", what));
  };
  if (eqn.inputs.size() != 1 || eqn.outputs.size() != 4 ||
      eqn.inputs[0].is_literal()) {
    return invalid("takes one matrix operand and 4 results (a, d, e, taus)");
  }
  J2O_ASSIGN_OR_RETURN(bool lower, eqn.params.GetBool("lower"));
  const Aval& aval = eqn.inputs[0].var->aval;
  if (aval.dtype != DType::kF32 && aval.dtype != DType::kF64 &&
      aval.dtype != DType::kC64 && aval.dtype != DType::kC128) {
    return absl::UnimplementedError(absl::StrCat(
        "tridiagonal: ", aval.ToString(),
        " not supported (f32, f64, c64, c128: JAX's sytrd/hetrd kernels)"));
  }
  const bool complex = IsComplex(aval.dtype);
  const int rank = static_cast<int>(aval.shape.size());
  if (rank < 2) {
    return invalid(
        absl::StrCat("needs non-empty square matrices, got ", aval.ToString()));
  }
  // The reduction runs over the matrix dims, which must be static; batch
  // dims may be symbolic (jax.export's `b`): they are carried as printed.
  for (int i = rank - 2; i < rank; ++i) {
    if (!aval.shape[i].is_constant()) {
      return absl::UnimplementedError(
          absl::StrCat("tridiagonal: symbolic matrix dims in ", aval.ToString(),
                       " not supported (only batch dims may be symbolic)"));
    }
  }
  const int64_t n = aval.shape[rank - 1].constant_value();
  if (aval.shape[rank - 2].constant_value() != n || n < 1) {
    return invalid(
        absl::StrCat("needs non-empty square matrices, got ", aval.ToString()));
  }
  const std::string dt(ShortName(aval.dtype));
  const std::string real_dt(ShortName(aval.dtype == DType::kC64 ? DType::kF32
                                      : aval.dtype == DType::kC128
                                          ? DType::kF64
                                          : aval.dtype));
  Dims batch;
  for (int i = 0; i + 2 < rank; ++i) batch.push_back(aval.shape[i].ToString());
  Body b;
  Writer w(b, dt, batch);
  Writer real_w(b, real_dt, batch);
  const std::string a = b.Fresh();
  const std::vector<int64_t> nn = {n, n};
  const std::vector<int64_t> both = {rank - 2, rank - 1};
  // The 'U' reduction is the 'L' one of the reversed matrix.
  std::string x = lower ? a : w.Reverse(a, nn, both);
  std::vector<int64_t> perm;
  for (int i = 0; i < rank - 2; ++i) perm.push_back(i);
  perm.push_back(rank - 1);
  perm.push_back(rank - 2);
  std::string xt =
      b.Eq(Type(dt, w.Shape(nn)),
           absl::StrCat("transpose[permutation=", Tuple(perm), "] ", x));
  std::string on_or_below = w.Mask(n, "ge");
  // Hermitian (hetrd): the mirrored triangle is conjugated and only the
  // real part of the diagonal is read (zhetd2's DBLE(A(i, i))); the
  // reduced diagonal is real again (zher2 zeroes its imaginary parts).
  std::string eye = complex ? w.Mask(n, "eq") : "";
  auto real_diagonal = [&](const std::string& m) {
    std::string re = b.Eq(Type(real_dt, w.Shape(nn)), "real " + m);
    std::string re_c = b.Eq(
        Type(dt, w.Shape(nn)),
        absl::StrCat("convert_element_type[new_dtype=", NumpyName(aval.dtype),
                     " weak_type=False] ", re));
    return b.Eq(Type(dt, w.Shape(nn)),
                absl::StrCat("select_n ", eye, " ", m, " ", re_c));
  };
  if (complex) {
    xt = b.Eq(
        Type(dt, w.Shape(nn)),
        absl::StrCat("conj[input_dtype=", NumpyName(aval.dtype), "] ", xt));
  }
  std::string sym =
      b.Eq(Type(dt, w.Shape(nn)),
           absl::StrCat("select_n ", on_or_below, " ", xt, " ", x));
  if (complex) sym = real_diagonal(sym);
  auto [h, taus] = b.Eq2(Type(dt, w.Shape(nn)), Type(dt, w.Shape({n - 1})),
                         absl::StrCat("hessenberg ", sym));
  std::string d, e;
  if (complex) {
    h = real_diagonal(h);
    std::string re_h = b.Eq(Type(real_dt, w.Shape(nn)), "real " + h);
    d = real_w.Diagonal(re_h, n);
    e = real_w.Subdiagonal(re_h, n);
  } else {
    d = w.Diagonal(h, n);
    e = w.Subdiagonal(h, n);
  }
  std::string out;
  if (lower) {
    out = b.Eq(Type(dt, w.Shape(nn)),
               absl::StrCat("select_n ", on_or_below, " ", a, " ", h));
  } else {
    std::string back = w.Reverse(h, nn, both);
    std::string on_or_above = w.Mask(n, "le");
    out = b.Eq(Type(dt, w.Shape(nn)),
               absl::StrCat("select_n ", on_or_above, " ", a, " ", back));
    d = real_w.Reverse(d, {n}, {rank - 2});
    e = real_w.Reverse(e, {n - 1}, {rank - 2});
    taus = w.Reverse(taus, {n - 1}, {rank - 2});
  }
  return absl::StrCat("{ lambda ; ", a, ":", aval.ToString(), ". let\n",
                      b.text(), "  in (", out, ", ", d, ", ", e, ", ", taus,
                      ") }");
}

absl::StatusOr<const ClosedJaxpr*> TridiagonalDecomposition(const Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(std::string text, TridiagonalJaxprText(eqn));
  return ParseDecompositionOnce(text, "<tridiagonal decomposition>");
}

}  // namespace jax2onnx::jaxpr
