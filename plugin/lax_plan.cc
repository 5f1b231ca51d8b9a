// Planning shared by the shape, reduction and linalg lowerings of both
// pipelines (see lax_plan.h).
#include "plugin/lax_plan.h"

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/text/dim_parser.h"

namespace jax2onnx::plugin {
namespace {

using jaxpr::DType;

const jaxpr::Aval& OperandAval(const jaxpr::Eqn& eqn, int i) {
  static const jaxpr::Aval* unknown = new jaxpr::Aval();
  if (i >= static_cast<int>(eqn.inputs.size())) return *unknown;
  const jaxpr::Atom& a = eqn.inputs[i];
  if (!a.is_literal()) return a.var->aval;
  return a.literal->aval ? *a.literal->aval : *unknown;
}

std::string IntsText(const std::vector<int64_t>& v) {
  return absl::StrCat("(", absl::StrJoin(v, ", "), ")");
}

// The four index lists of `dimension_numbers=((lc, rc), (lb, rb))`.
struct DotDims {
  std::vector<int64_t> lc, rc, lb, rb;
};

absl::StatusOr<DotDims> ParseDotDims(const jaxpr::Eqn& eqn) {
  auto dn = eqn.params.Get("dimension_numbers");
  if (!dn.ok()) return dn.status();
  const jaxpr::ParamValue& v = **dn;
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "param 'dimension_numbers' must be ((lhs_contract, rhs_contract), "
        "(lhs_batch, rhs_batch)), got ",
        v.ToString()));
  };
  if (v.items().size() != 2 || v.items()[0].items().size() != 2 ||
      v.items()[1].items().size() != 2) {
    return bad();
  }
  DotDims d;
  auto lc = v.items()[0].items()[0].AsIntList("lhs contracting dims");
  auto rc = v.items()[0].items()[1].AsIntList("rhs contracting dims");
  auto lb = v.items()[1].items()[0].AsIntList("lhs batch dims");
  auto rb = v.items()[1].items()[1].AsIntList("rhs batch dims");
  if (!lc.ok() || !rc.ok() || !lb.ok() || !rb.ok()) return bad();
  d.lc = *lc;
  d.rc = *rc;
  d.lb = *lb;
  d.rb = *rb;
  if (d.lc.size() != d.rc.size() || d.lb.size() != d.rb.size()) return bad();
  return d;
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// `limit_indices` as ints. Under shape polymorphism a limit that is a whole
// symbolic dim prints as that dim's expression (`(B, 7)`); it becomes
// INT64_MAX, which ONNX Slice clamps to the dim. Any other symbolic limit is
// refused.
absl::StatusOr<std::vector<int64_t>> SliceLimits(const jaxpr::Eqn& eqn,
                                                 const jaxpr::Aval& in) {
  auto param = eqn.params.Get("limit_indices");
  if (!param.ok()) return param.status();
  std::vector<int64_t> limits;
  const auto& items = (*param)->items();
  for (size_t d = 0; d < items.size(); ++d) {
    auto v = items[d].AsInt("limit_indices");
    if (v.ok()) {
      limits.push_back(*v);
      continue;
    }
    if (d < in.shape.size() && !in.shape[d].is_constant() &&
        items[d].ToString() == in.shape[d].ToString()) {
      limits.push_back(std::numeric_limits<int64_t>::max());
      continue;
    }
    return absl::UnimplementedError(absl::StrCat(
        "slice limit ", items[d].ToString(), " on axis ", d, " of ",
        in.ToString(), " is symbolic and not the whole dimension"));
  }
  if ((*param)->kind() != jaxpr::ParamValue::Kind::kTuple &&
      (*param)->kind() != jaxpr::ParamValue::Kind::kList) {
    return absl::InvalidArgumentError(absl::StrCat(
        "param 'limit_indices' must be a tuple, got ", (*param)->ToString()));
  }
  return limits;
}

}  // namespace

absl::StatusOr<std::vector<PadDim>> ParsePaddingConfig(const jaxpr::Eqn& eqn,
                                                       int rank) {
  auto config = eqn.params.Get("padding_config");
  if (!config.ok()) return config.status();
  const auto& items = (*config)->items();
  if (static_cast<int>(items.size()) != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("padding_config ", (*config)->ToString(), " has ",
                     items.size(), " entries for an operand of rank ", rank));
  }
  std::vector<PadDim> dims;
  for (const jaxpr::ParamValue& item : items) {
    std::vector<jaxpr::DimExpr> triple;
    if (item.kind() == jaxpr::ParamValue::Kind::kTuple ||
        item.kind() == jaxpr::ParamValue::Kind::kList) {
      for (const jaxpr::ParamValue& entry : item.items()) {
        // An integer, a symbol (`b`) or an expression of symbols (`2*b +
        // 1`, as the StableHLO translation and the jaxpr parser hold it).
        jaxpr::DimExpr dim;
        if (entry.kind() == jaxpr::ParamValue::Kind::kInt) {
          dim = jaxpr::DimExpr::Constant(entry.int_value());
        } else if (entry.kind() == jaxpr::ParamValue::Kind::kName) {
          dim = jaxpr::DimExpr::Symbol(entry.text());
        } else if (!jaxpr::ParseDimExpr(entry.ToString(), 64, &dim, nullptr,
                                        nullptr)) {
          triple.clear();
          break;
        }
        triple.push_back(std::move(dim));
      }
    }
    if (triple.size() != 3 || !triple[2].is_constant() ||
        triple[2].constant_value() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("padding_config entry ", item.ToString(),
                       " is not (lo, hi, interior >= 0) with integer or "
                       "symbolic lo/hi and a constant interior"));
    }
    PadDim p;
    p.lo = triple[0].is_constant() ? triple[0].constant_value() : 0;
    p.hi = triple[1].is_constant() ? triple[1].constant_value() : 0;
    p.interior = triple[2].constant_value();
    p.lo_dim = triple[0];
    p.hi_dim = triple[1];
    dims.push_back(std::move(p));
  }
  return dims;
}

absl::StatusOr<SlicePlan> PlanSlice(const jaxpr::Eqn& eqn) {
  const jaxpr::Aval& in = OperandAval(eqn, 0);
  auto starts = eqn.params.GetIntList("start_indices");
  if (!starts.ok()) return starts.status();
  auto limits = SliceLimits(eqn, in);
  if (!limits.ok()) return limits.status();
  auto strides = eqn.params.GetOptionalIntList("strides");
  if (!strides.ok()) return strides.status();
  const size_t rank = in.shape.size();
  if (starts->size() != rank || limits->size() != rank ||
      (*strides && (*strides)->size() != rank)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "slice start_indices ", IntsText(*starts), ", limit_indices ",
        IntsText(*limits), " do not match operand ", in.ToString()));
  }
  SlicePlan plan;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t stride = *strides ? (**strides)[d] : 1;
    if (stride < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("slice stride ", stride, " on axis ", d, " is < 1"));
    }
    const int64_t limit = (*limits)[d];
    const bool whole =
        (*starts)[d] == 0 && stride == 1 &&
        (limit == std::numeric_limits<int64_t>::max() ||
         (in.shape[d].is_constant() && in.shape[d].constant_value() == limit));
    if (whole) continue;
    plan.starts.push_back((*starts)[d]);
    plan.ends.push_back((*limits)[d]);
    plan.axes.push_back(static_cast<int64_t>(d));
    plan.steps.push_back(stride);
  }
  return plan;
}

absl::StatusOr<std::vector<int64_t>> BroadcastInsertedAxes(
    const std::vector<int64_t>& bd, int operand_rank, int out_rank) {
  if (static_cast<int>(bd.size()) != operand_rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("broadcast_dimensions ", IntsText(bd), " has ", bd.size(),
                     " entries for an operand of rank ", operand_rank));
  }
  for (size_t i = 0; i < bd.size(); ++i) {
    if (bd[i] < 0 || bd[i] >= out_rank || (i > 0 && bd[i] <= bd[i - 1])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "broadcast_dimensions ", IntsText(bd),
          " is not strictly increasing within output rank ", out_rank));
    }
  }
  std::vector<int64_t> inserted;
  for (int64_t a = 0; a < out_rank; ++a) {
    if (!Contains(bd, a)) inserted.push_back(a);
  }
  return inserted;
}

absl::StatusOr<DotPlan> PlanDotGeneral(const jaxpr::Eqn& eqn) {
  auto dims = ParseDotDims(eqn);
  if (!dims.ok()) return dims.status();
  const int lr = OperandAval(eqn, 0).rank();
  const int rr = OperandAval(eqn, 1).rank();
  auto check = [](const std::vector<int64_t>& v, int rank,
                  absl::string_view what) -> absl::Status {
    for (int64_t d : v) {
      if (d < 0 || d >= rank) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, " dim ", d, " is outside an operand of rank ", rank));
      }
    }
    return absl::OkStatus();
  };
  for (auto [v, rank, what] :
       {std::make_tuple(&dims->lc, lr, "lhs contracting"),
        std::make_tuple(&dims->rc, rr, "rhs contracting"),
        std::make_tuple(&dims->lb, lr, "lhs batch"),
        std::make_tuple(&dims->rb, rr, "rhs batch")}) {
    if (auto s = check(*v, rank, what); !s.ok()) return s;
  }
  DotPlan plan;
  const int nb = static_cast<int>(dims->lb.size());
  bool leading_batch = true;
  for (int i = 0; i < nb; ++i) {
    leading_batch &= dims->lb[i] == i && dims->rb[i] == i;
  }
  if (leading_batch && dims->lc.size() == 1 && dims->lc[0] == lr - 1 &&
      dims->rc[0] == nb) {
    // Batched MatMul: [b..., m, k] x [b..., k, n]. Without batch dims, lhs
    // may have any number of free dims (MatMul broadcasts a 2-D or 1-D rhs
    // over them) and either side may be a vector.
    if (nb == 0) {
      plan.use_matmul = (rr == 1 || rr == 2) && lr >= 1;
    } else {
      plan.use_matmul = lr == nb + 2 && rr == nb + 2;
    }
  }
  // Einsum letters: lhs dims get a, b, ...; rhs batch/contracting dims reuse
  // their lhs partner's letter.
  if (lr + rr > 52) {
    return absl::UnimplementedError(
        absl::StrCat("dot_general of ranks ", lr, " and ", rr,
                     " needs more than 52 einsum letters"));
  }
  auto letter = [](int i) {
    return static_cast<char>(i < 26 ? 'a' + i : 'A' + (i - 26));
  };
  std::string lhs, rhs(rr, '?'), out;
  for (int i = 0; i < lr; ++i) lhs.push_back(letter(i));
  for (size_t i = 0; i < dims->lc.size(); ++i) {
    rhs[dims->rc[i]] = lhs[dims->lc[i]];
  }
  for (int i = 0; i < nb; ++i) rhs[dims->rb[i]] = lhs[dims->lb[i]];
  int next = lr;
  for (int i = 0; i < rr; ++i) {
    if (rhs[i] == '?') rhs[i] = letter(next++);
  }
  for (int64_t d : dims->lb) out.push_back(lhs[d]);
  for (int i = 0; i < lr; ++i) {
    if (!Contains(dims->lc, i) && !Contains(dims->lb, i)) {
      out.push_back(lhs[i]);
    }
  }
  for (int i = 0; i < rr; ++i) {
    if (!Contains(dims->rc, i) && !Contains(dims->rb, i)) {
      out.push_back(rhs[i]);
    }
  }
  plan.einsum_equation = absl::StrCat(lhs, ",", rhs, "->", out);
  return plan;
}

absl::StatusOr<DType> ComputeDType(DType dtype, ArithUse use,
                                   absl::string_view what) {
  switch (dtype) {
    case DType::kF16:
    case DType::kBF16:
      return DType::kF32;
    case DType::kF32:
    case DType::kF64:
    case DType::kI32:
    case DType::kI64:
      return dtype;
    case DType::kBool:
      return use == ArithUse::kMoving ? DType::kBool : DType::kI32;
    case DType::kI8:
    case DType::kU8:
    case DType::kI16:
    case DType::kU16:
      return DType::kI32;
    case DType::kU32:
      return use == ArithUse::kMoving || use == ArithUse::kElementwiseOrdering
                 ? DType::kU32
                 : DType::kI64;
    case DType::kU64:
      if (use == ArithUse::kElementwiseOrdering) return DType::kU64;
      if (use == ArithUse::kOrdering) {
        return absl::UnimplementedError(absl::StrCat(
            what,
            " on u64: no ONNX Runtime kernel orders u64 values and no "
            "wider type holds them"));
      }
      return use == ArithUse::kMoving ? DType::kU64 : DType::kI64;
    default:
      // float8 / int4: f32 / i32 hold every value; the Cast back rounds
      // (float8, non-saturating) or wraps (int4; plugin/low_precision.cc).
      if (jaxpr::IsNarrowFloat(dtype)) return DType::kF32;
      if (jaxpr::IsNarrowInt(dtype)) return DType::kI32;
      return absl::UnimplementedError(
          absl::StrCat(what, " on ", jaxpr::ShortName(dtype),
                       ": no ONNX Runtime kernel for this dtype"));
  }
}

}  // namespace jax2onnx::plugin
