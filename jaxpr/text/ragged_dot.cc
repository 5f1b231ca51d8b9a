#include "jaxpr/text/ragged_dot.h"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
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

absl::Status Invalid(const Eqn& eqn, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(eqn.primitive, ": ", what));
}

absl::StatusOr<std::vector<int64_t>> Ints(const ParamValue& v,
                                          absl::string_view what) {
  return v.AsIntList(what);
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Dims of 0..rank-1 in neither list (numpy's `remaining`).
std::vector<int64_t> Remaining(int rank, const std::vector<int64_t>& a,
                               const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(a, d) && !Contains(b, d)) out.push_back(d);
  }
  return out;
}

std::string Tuple(const std::vector<int64_t>& v) {
  if (v.size() == 1) return absl::StrCat("(", v[0], ",)");
  return absl::StrCat("(", absl::StrJoin(v, ", "), ")");
}
std::string List(const std::vector<int64_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
}
std::vector<int64_t> Incr(std::vector<int64_t> v) {
  for (int64_t& d : v) ++d;
  return v;
}

absl::StatusOr<std::vector<int64_t>> StaticDims(const Eqn& eqn,
                                                const Aval& a) {
  std::vector<int64_t> out;
  for (const DimExpr& d : a.shape) {
    if (!d.is_constant()) {
      return absl::UnimplementedError(absl::StrCat(
          eqn.primitive, ": symbolic shape ", a.ToString(), " not supported"));
    }
    out.push_back(d.constant_value());
  }
  return out;
}

std::string Type(absl::string_view dtype, const std::vector<int64_t>& dims) {
  return absl::StrCat(dtype, "[", absl::StrJoin(dims, ","), "]");
}

// _ragged_dot_prefix_dims.
std::vector<int64_t> PrefixDims(RaggedDotMode mode, int rank, int64_t ragged,
                                const std::vector<int64_t>& batch,
                                const std::vector<int64_t>& contract) {
  std::vector<int64_t> out = batch;
  if (mode == RaggedDotMode::kBatch) {
    out.assign(batch.begin(),
               std::find(batch.begin(), batch.end(), ragged));
    return out;
  }
  const std::vector<int64_t> pool =
      mode == RaggedDotMode::kContracting ? contract
                                          : Remaining(rank, contract, batch);
  for (int64_t d : pool) {
    if (d == ragged) break;
    out.push_back(d);
  }
  return out;
}

class Text {
 public:
  std::string Eq(const std::string& type, const std::string& rhs) {
    std::string v = Fresh();
    absl::StrAppend(&text_, "    ", v, ":", type, " = ", rhs, "\n");
    return v;
  }
  std::string Fresh() { return JaxVarName(next_++); }
  const std::string& text() const { return text_; }

 private:
  int next_ = 26;
  std::string text_;
};

}  // namespace

absl::StatusOr<RaggedDotDims> RaggedDotDimsOf(const Eqn& eqn) {
  RaggedDotDims d;
  if (eqn.primitive == "ragged_dot") {
    // lax.ragged_dot before JAX 0.6.0: [m,k] x [g,k,n] -> [m,n].
    d.lhs_contract = {1};
    d.rhs_contract = {1};
    d.lhs_ragged = 0;
    d.rhs_group = {0};
    return d;
  }
  J2O_ASSIGN_OR_RETURN(
      const ParamValue* dn,
      eqn.params.GetCall("ragged_dot_dimension_numbers",
                         "RaggedDotDimensionNumbers"));
  const ParamValue* dot = dn->Field("dot_dimension_numbers");
  const ParamValue* ragged = dn->Field("lhs_ragged_dimensions");
  const ParamValue* group = dn->Field("rhs_group_dimensions");
  if (dot == nullptr || ragged == nullptr || group == nullptr ||
      dot->items().size() != 2 || dot->items()[0].items().size() != 2 ||
      dot->items()[1].items().size() != 2) {
    return Invalid(eqn,
                   absl::StrCat("malformed ragged_dot_dimension_numbers ",
                                dn->ToString()));
  }
  J2O_ASSIGN_OR_RETURN(d.lhs_contract,
                       Ints(dot->items()[0].items()[0], "lhs contracting"));
  J2O_ASSIGN_OR_RETURN(d.rhs_contract,
                       Ints(dot->items()[0].items()[1], "rhs contracting"));
  J2O_ASSIGN_OR_RETURN(d.lhs_batch,
                       Ints(dot->items()[1].items()[0], "lhs batch"));
  J2O_ASSIGN_OR_RETURN(d.rhs_batch,
                       Ints(dot->items()[1].items()[1], "rhs batch"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> r,
                       Ints(*ragged, "lhs_ragged_dimensions"));
  if (r.size() != 1) {
    return Invalid(eqn, "expects exactly one lhs ragged dimension");
  }
  d.lhs_ragged = r[0];
  J2O_ASSIGN_OR_RETURN(d.rhs_group, Ints(*group, "rhs_group_dimensions"));
  return d;
}

absl::StatusOr<RaggedDotMode> RaggedDotModeOf(const RaggedDotDims& d,
                                              int lhs_rank) {
  if (d.lhs_ragged < 0 || d.lhs_ragged >= lhs_rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lhs ragged dimension ", d.lhs_ragged, " out of range for rank ",
        lhs_rank));
  }
  if (Contains(d.lhs_contract, d.lhs_ragged)) {
    return RaggedDotMode::kContracting;
  }
  if (Contains(d.lhs_batch, d.lhs_ragged)) return RaggedDotMode::kBatch;
  return RaggedDotMode::kNonContracting;
}

namespace {

struct Prepared {
  RaggedDotDims d;
  RaggedDotMode mode;
  std::vector<int64_t> lhs, rhs, gs;
  DType out_dtype;
};

absl::StatusOr<Prepared> Prepare(const Eqn& eqn) {
  if (eqn.inputs.size() != 3 || eqn.outputs.size() != 1) {
    return Invalid(eqn, "expects (lhs, rhs, group_sizes) and one result");
  }
  if (const ParamValue* off = eqn.params.Find("group_offset");
      off != nullptr && !off->is_none()) {
    return absl::UnimplementedError(absl::StrCat(
        eqn.primitive,
        ": group_offset is not supported (JAX's own implementation raises "
        "NotImplementedError for it)"));
  }
  Prepared p;
  J2O_ASSIGN_OR_RETURN(p.d, RaggedDotDimsOf(eqn));
  auto aval = [&](int i) -> const Aval& {
    return eqn.inputs[i].is_literal() ? eqn.outputs[0]->aval
                                      : eqn.inputs[i].var->aval;
  };
  for (int i = 0; i < 3; ++i) {
    if (eqn.inputs[i].is_literal()) {
      return Invalid(eqn, "literal operands are not supported");
    }
  }
  J2O_ASSIGN_OR_RETURN(p.lhs, StaticDims(eqn, aval(0)));
  J2O_ASSIGN_OR_RETURN(p.rhs, StaticDims(eqn, aval(1)));
  J2O_ASSIGN_OR_RETURN(p.gs, StaticDims(eqn, aval(2)));
  if (!IsInteger(aval(2).dtype)) {
    return Invalid(eqn, "group_sizes must have an integer dtype");
  }
  if (p.gs.empty()) return Invalid(eqn, "group_sizes must have rank >= 1");
  J2O_ASSIGN_OR_RETURN(p.mode,
                       RaggedDotModeOf(p.d, static_cast<int>(p.lhs.size())));
  const int64_t groups = p.gs.back();
  if (p.mode == RaggedDotMode::kNonContracting) {
    if (p.d.rhs_group.size() != 1) {
      return Invalid(eqn,
                     "needs exactly one rhs group dimension when the lhs "
                     "ragged dimension is non-contracting");
    }
    const int64_t g = p.d.rhs_group[0];
    if (g < 0 || g >= static_cast<int64_t>(p.rhs.size()) ||
        p.rhs[g] != groups) {
      return Invalid(eqn, absl::StrCat("rhs group dimension ", g,
                                       " must have size ", groups));
    }
  } else if (!p.d.rhs_group.empty()) {
    return Invalid(eqn,
                   "needs no rhs group dimension when the lhs ragged "
                   "dimension is contracting or batch");
  }
  if (p.gs.size() != 1) {
    const std::vector<int64_t> prefix =
        PrefixDims(p.mode, static_cast<int>(p.lhs.size()), p.d.lhs_ragged,
                   p.d.lhs_batch, p.d.lhs_contract);
    std::vector<int64_t> want;
    for (int64_t i : prefix) want.push_back(p.lhs[i]);
    want.push_back(groups);
    if (want != p.gs) {
      return Invalid(eqn, absl::StrCat("expected group_sizes of shape ",
                                       Tuple(want), ", got ", Tuple(p.gs)));
    }
  }
  p.out_dtype = eqn.outputs[0]->aval.dtype;
  return p;
}

}  // namespace

absl::StatusOr<Aval> RaggedDotResultAval(const Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(Prepared p, Prepare(eqn));
  const RaggedDotDims& d = p.d;
  std::vector<int64_t> out;
  if (p.mode == RaggedDotMode::kContracting) out.push_back(p.gs.back());
  for (int64_t b : d.lhs_batch) out.push_back(p.lhs[b]);
  for (int64_t i : Remaining(static_cast<int>(p.lhs.size()), d.lhs_contract,
                             d.lhs_batch)) {
    out.push_back(p.lhs[i]);
  }
  std::vector<int64_t> rhs_skip = d.rhs_batch;
  rhs_skip.insert(rhs_skip.end(), d.rhs_group.begin(), d.rhs_group.end());
  for (int64_t i :
       Remaining(static_cast<int>(p.rhs.size()), d.rhs_contract, rhs_skip)) {
    out.push_back(p.rhs[i]);
  }
  DType dtype = eqn.inputs[0].var->aval.dtype;
  if (const ParamValue* pe = eqn.params.Find("preferred_element_type");
      pe != nullptr && !pe->is_none()) {
    J2O_ASSIGN_OR_RETURN(dtype, pe->AsDType("preferred_element_type"));
  }
  return Aval::Static(dtype, out);
}

absl::StatusOr<std::string> RaggedDotJaxprText(const Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(Prepared p, Prepare(eqn));
  const RaggedDotDims& d = p.d;
  const Aval& lhs_aval = eqn.inputs[0].var->aval;
  const Aval& rhs_aval = eqn.inputs[1].var->aval;
  const Aval& gs_aval = eqn.inputs[2].var->aval;
  const std::string gdt(ShortName(gs_aval.dtype));
  Text t;
  const std::string lhs = t.Fresh(), rhs = t.Fresh(), gs_in = t.Fresh();
  std::string precision = "None";
  if (const ParamValue* v = eqn.params.Find("precision")) {
    precision = v->ToString();
  }
  std::string preferred = "None";
  if (const ParamValue* v = eqn.params.Find("preferred_element_type")) {
    preferred = v->ToString();
  }
  auto dot = [&](const std::string& a, const std::string& b,
                 const std::vector<int64_t>& lc,
                 const std::vector<int64_t>& rc,
                 const std::vector<int64_t>& lb,
                 const std::vector<int64_t>& rb) {
    return t.Eq(eqn.outputs[0]->aval.ToString(),
                absl::StrCat("dot_general[dimension_numbers=((", List(lc),
                             ", ", List(rc), "), (", List(lb), ", ", List(rb),
                             ")) precision=", precision,
                             " preferred_element_type=", preferred, "] ", a,
                             " ", b));
  };
  std::string result;
  if (p.mode == RaggedDotMode::kBatch) {
    result = dot(lhs, rhs, d.lhs_contract, d.rhs_contract, d.lhs_batch,
                 d.rhs_batch);
  } else {
    const int64_t groups = p.gs.back();
    const std::vector<int64_t> l_prefix =
        PrefixDims(p.mode, static_cast<int>(p.lhs.size()), d.lhs_ragged,
                   d.lhs_batch, d.lhs_contract);
    // group_sizes of shape [lhs prefix sizes..., g].
    std::string gs = gs_in;
    std::vector<int64_t> gs_dims = p.gs;
    if (p.gs.size() == 1 && !l_prefix.empty()) {
      gs_dims.clear();
      for (int64_t i : l_prefix) gs_dims.push_back(p.lhs[i]);
      gs_dims.push_back(groups);
      gs = t.Eq(Type(gdt, gs_dims),
                absl::StrCat("broadcast_in_dim[broadcast_dimensions=(",
                             l_prefix.size(), ",) shape=", Tuple(gs_dims),
                             " sharding=None] ", gs_in));
    }
    const int last = static_cast<int>(gs_dims.size()) - 1;
    std::string ends = t.Eq(
        Type(gdt, gs_dims),
        absl::StrCat("cumsum[axis=", last, " reverse=False] ", gs));
    std::string starts =
        t.Eq(Type(gdt, gs_dims), absl::StrCat("sub ", ends, " ", gs));
    // expand(x, dim, axes): [g, x dims...], x masked to each group's range
    // along `dim`; gs axis i (< last) belongs to x axis axes[i].
    auto expand = [&](const std::string& x, const Aval& x_aval,
                      const std::vector<int64_t>& x_dims, int64_t dim,
                      const std::vector<int64_t>& axes) {
      std::vector<int64_t> shape = {groups};
      shape.insert(shape.end(), x_dims.begin(), x_dims.end());
      std::vector<int64_t> all(x_dims.size());
      std::iota(all.begin(), all.end(), 1);
      const std::string dt(ShortName(x_aval.dtype));
      std::string xb = t.Eq(Type(dt, shape),
                            absl::StrCat("broadcast_in_dim[broadcast_dimensions=",
                                         Tuple(all), " shape=", Tuple(shape),
                                         " sharding=None] ", x));
      std::string iota = t.Eq(
          Type(gdt, shape),
          absl::StrCat("iota[dimension=", dim + 1, " dtype=",
                       NumpyName(gs_aval.dtype), " shape=", Tuple(shape),
                       " sharding=None]"));
      // gs axes ordered by the x axis they belong to, the group axis first.
      std::vector<int64_t> order(axes.size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(),
                [&](int64_t a, int64_t b) { return axes[a] < axes[b]; });
      std::vector<int64_t> perm = {last};
      std::vector<int64_t> bdims = {0};
      std::vector<int64_t> t_dims = {groups};
      for (int64_t i : order) {
        perm.push_back(i);
        bdims.push_back(axes[i] + 1);
        t_dims.push_back(gs_dims[i]);
      }
      auto arranged = [&](const std::string& v) {
        std::string tv = v;
        bool identity = true;
        for (size_t i = 0; i < perm.size(); ++i) {
          identity &= perm[i] == static_cast<int64_t>(i);
        }
        if (!identity) {
          tv = t.Eq(Type(gdt, t_dims),
                    absl::StrCat("transpose[permutation=", Tuple(perm), "] ",
                                 v));
        }
        return t.Eq(Type(gdt, shape),
                    absl::StrCat("broadcast_in_dim[broadcast_dimensions=",
                                 Tuple(bdims), " shape=", Tuple(shape),
                                 " sharding=None] ", tv));
      };
      std::string s = arranged(starts);
      std::string e = arranged(ends);
      std::string ge = t.Eq(Type("bool", shape),
                            absl::StrCat("le ", s, " ", iota));
      std::string lt = t.Eq(Type("bool", shape),
                            absl::StrCat("lt ", iota, " ", e));
      std::string mask =
          t.Eq(Type("bool", shape), absl::StrCat("and ", ge, " ", lt));
      std::string zeros = t.Eq(
          Type(dt, shape),
          absl::StrCat("broadcast_in_dim[broadcast_dimensions=() shape=",
                       Tuple(shape), " sharding=None] ",
                       IsInteger(x_aval.dtype) ? "0" : "0.0", ":", dt, "[]"));
      return t.Eq(Type(dt, shape),
                  absl::StrCat("select_n ", mask, " ", zeros, " ", xb));
    };
    std::string lhs_dense =
        expand(lhs, lhs_aval, p.lhs, d.lhs_ragged, l_prefix);
    if (p.mode == RaggedDotMode::kNonContracting) {
      std::vector<int64_t> lc = Incr(d.lhs_contract);
      lc.push_back(0);
      std::vector<int64_t> rc = d.rhs_contract;
      rc.push_back(d.rhs_group[0]);
      result = dot(lhs_dense, rhs, lc, rc, Incr(d.lhs_batch), d.rhs_batch);
    } else {
      const auto pos = std::find(d.lhs_contract.begin(), d.lhs_contract.end(),
                                 d.lhs_ragged) -
                       d.lhs_contract.begin();
      const int64_t rhs_ragged = d.rhs_contract[pos];
      const std::vector<int64_t> r_prefix =
          PrefixDims(p.mode, static_cast<int>(p.rhs.size()), rhs_ragged,
                     d.rhs_batch, d.rhs_contract);
      std::string rhs_dense =
          expand(rhs, rhs_aval, p.rhs, rhs_ragged, r_prefix);
      std::vector<int64_t> lb = {0}, rb = {0};
      for (int64_t b : Incr(d.lhs_batch)) lb.push_back(b);
      for (int64_t b : Incr(d.rhs_batch)) rb.push_back(b);
      result = dot(lhs_dense, rhs_dense, Incr(d.lhs_contract),
                   Incr(d.rhs_contract), lb, rb);
    }
  }
  return absl::StrCat("{ lambda ; ", lhs, ":", lhs_aval.ToString(), " ", rhs,
                      ":", rhs_aval.ToString(), " ", gs_in, ":",
                      gs_aval.ToString(), ". let\n", t.text(), "  in (",
                      result, ",) }");
}

absl::StatusOr<const ClosedJaxpr*> RaggedDotDecomposition(const Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(std::string text, RaggedDotJaxprText(eqn));
  return ParseDecompositionOnce(text, "<ragged_dot decomposition>");
}

}  // namespace jax2onnx::jaxpr
