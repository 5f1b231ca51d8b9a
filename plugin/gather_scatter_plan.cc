// Decoding of gather/scatter parameters and the choice of ONNX strategy
// (see gather_scatter_plan.h). Validation mirrors the StableHLO constraints
// the reference interpreter checks, so a malformed jaxpr fails here with a
// message naming the offending field instead of producing a wrong model.
#include "plugin/gather_scatter_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "jaxpr/params.h"
#include "plugin/onnx_types.h"

namespace jax2onnx::plugin {
namespace {

using jaxpr::DimExpr;
using jaxpr::DType;
using jaxpr::ParamValue;

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string Text(const std::vector<int64_t>& v) {
  return absl::StrCat("(", absl::StrJoin(v, ", "), ")");
}

absl::Status Invalid(const std::string& prim, const std::string& msg) {
  return absl::InvalidArgumentError(absl::StrCat(prim, ": ", msg));
}

// A field of Gather/ScatterDimensionNumbers by keyword or position; the
// batching fields are optional (absent before JAX 0.4.35).
absl::StatusOr<std::vector<int64_t>> Field(const std::string& prim,
                                           const ParamValue& dnums,
                                           absl::string_view name,
                                           size_t position, bool optional) {
  const ParamValue* f = dnums.Field(name);
  if (f == nullptr && position < dnums.call_args().size() &&
      dnums.call_args()[position].first.empty()) {
    f = &dnums.call_args()[position].second;
  }
  if (f == nullptr || f->is_none()) {
    if (optional) return std::vector<int64_t>{};
    return Invalid(prim,
                   absl::StrCat("dimension_numbers has no field '", name, "'"));
  }
  return f->AsIntList(absl::StrCat("dimension_numbers.", name));
}

absl::Status CheckDims(const std::string& prim, absl::string_view what,
                       const std::vector<int64_t>& dims, int64_t rank) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= rank) {
      return Invalid(prim, absl::StrCat(what, " ", Text(dims), " has dim ",
                                        dims[i], " outside [0, ", rank, ")"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (dims[j] == dims[i]) {
        return Invalid(
            prim, absl::StrCat(what, " ", Text(dims), " repeats ", dims[i]));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

jaxpr::Aval InAvalOf(const jaxpr::Eqn& eqn, int i) {
  const jaxpr::Atom& a = eqn.inputs[i];
  if (!a.is_literal()) return a.var->aval;
  if (a.literal->aval.has_value()) return *a.literal->aval;
  return jaxpr::Aval::Shaped(jaxpr::LiteralDType(*a.literal, &eqn), {});
}

absl::StatusOr<IndexMode> ParseIndexMode(const jaxpr::Eqn& eqn) {
  const ParamValue* v = eqn.params.Find("mode");
  if (v == nullptr || v->is_none()) return IndexMode::kFillOrDrop;
  std::string name;
  if (v->kind() == ParamValue::Kind::kInt) {
    switch (v->int_value()) {
      case 1:
        return IndexMode::kClip;
      case 2:
        return IndexMode::kFillOrDrop;
      case 3:
        return IndexMode::kPromiseInBounds;
      default:
        break;
    }
  } else {
    name = v->text();
    const size_t dot = name.rfind('.');
    if (dot != std::string::npos) name = name.substr(dot + 1);
    if (name == "CLIP" || name == "clip") return IndexMode::kClip;
    if (name == "FILL_OR_DROP" || name == "fill" || name == "drop") {
      return IndexMode::kFillOrDrop;
    }
    if (name == "PROMISE_IN_BOUNDS" || name == "promise_in_bounds") {
      return IndexMode::kPromiseInBounds;
    }
  }
  return absl::UnimplementedError(absl::StrCat(
      eqn.primitive, ": mode ", v->ToString(),
      " is not supported (CLIP, FILL_OR_DROP, PROMISE_IN_BOUNDS are)"));
}

absl::StatusOr<jaxpr::Array> GatherFillValue(DType dtype,
                                             const ParamValue* fill) {
  jaxpr::Array out(dtype, {});
  const bool is_default = fill == nullptr || fill->is_none();
  if (jaxpr::IsFloat(dtype) || jaxpr::IsComplex(dtype)) {
    double v = std::numeric_limits<double>::quiet_NaN();
    if (!is_default) {
      J2O_ASSIGN_OR_RETURN(v, fill->AsFloat("gather fill_value"));
    }
    out.SetFromDouble(0, v);
    return out;
  }
  if (dtype == DType::kBool) {
    bool v = true;
    if (!is_default) {
      if (fill->kind() == ParamValue::Kind::kBool) {
        v = fill->bool_value();
      } else {
        J2O_ASSIGN_OR_RETURN(double d, fill->AsFloat("gather fill_value"));
        v = d != 0;
      }
    }
    out.SetFromInt64(0, v ? 1 : 0);
    return out;
  }
  const int bits = 8 * jaxpr::ItemSize(dtype);
  if (is_default) {
    if (jaxpr::IsSignedInt(dtype)) {
      out.SetFromInt64(0, bits == 64 ? std::numeric_limits<int64_t>::min()
                                     : -(int64_t{1} << (bits - 1)));
    } else {
      std::memset(out.data(), 0xff, jaxpr::ItemSize(dtype));
    }
    return out;
  }
  if (fill->kind() == ParamValue::Kind::kInt) {
    uint64_t u = 0;
    if (dtype == DType::kU64 && absl::SimpleAtoi(fill->text(), &u)) {
      std::memcpy(out.data(), &u, sizeof(u));
    } else {
      out.SetFromInt64(0, fill->int_value());
    }
    return out;
  }
  if (fill->kind() == ParamValue::Kind::kBool) {
    out.SetFromInt64(0, fill->bool_value() ? 1 : 0);
    return out;
  }
  J2O_ASSIGN_OR_RETURN(double d, fill->AsFloat("gather fill_value"));
  if (!std::isfinite(d)) {
    return absl::InvalidArgumentError(
        absl::StrCat("gather: fill_value ", fill->ToString(),
                     " is not representable in ", jaxpr::ShortName(dtype)));
  }
  out.SetFromDouble(0, d);
  return out;
}

absl::StatusOr<std::vector<DimExpr>> ParseSliceSizes(
    const jaxpr::Eqn& eqn, const std::vector<DimExpr>& operand_shape) {
  J2O_ASSIGN_OR_RETURN(const ParamValue* v, eqn.params.Get("slice_sizes"));
  if (v->items().size() != operand_shape.size()) {
    return Invalid(eqn.primitive, absl::StrCat("slice_sizes ", v->ToString(),
                                               " has ", v->items().size(),
                                               " entries for an operand "
                                               "of rank ",
                                               operand_shape.size()));
  }
  std::vector<DimExpr> out;
  for (size_t d = 0; d < operand_shape.size(); ++d) {
    const ParamValue& item = v->items()[d];
    if (item.kind() == ParamValue::Kind::kInt) {
      out.push_back(DimExpr::Constant(item.int_value()));
    } else if (item.ToString() == operand_shape[d].ToString()) {
      out.push_back(operand_shape[d]);
    } else {
      return absl::UnimplementedError(
          absl::StrCat(eqn.primitive, ": slice size ", item.ToString(),
                       " in dim ", d, " is symbolic and not the operand's dim ",
                       operand_shape[d].ToString()));
    }
  }
  return out;
}

absl::StatusOr<GatherPlan> PlanGather(const jaxpr::Eqn& eqn) {
  const std::string& prim = eqn.primitive;
  GatherPlan p;
  const jaxpr::Aval op = InAvalOf(eqn, 0);
  const jaxpr::Aval idx = InAvalOf(eqn, 1);
  if (!jaxpr::IsInteger(idx.dtype)) {
    return Invalid(prim, "start_indices must have an integer dtype");
  }
  if (idx.rank() < 1) {
    return Invalid(prim, "start_indices must have rank >= 1");
  }
  J2O_ASSIGN_OR_RETURN(const ParamValue* dn,
                       eqn.params.GetCall("dimension_numbers"));
  J2O_ASSIGN_OR_RETURN(p.offset_dims,
                       Field(prim, *dn, "offset_dims", 0, false));
  J2O_ASSIGN_OR_RETURN(p.collapsed,
                       Field(prim, *dn, "collapsed_slice_dims", 1, false));
  J2O_ASSIGN_OR_RETURN(p.start_index_map,
                       Field(prim, *dn, "start_index_map", 2, false));
  J2O_ASSIGN_OR_RETURN(p.operand_batching,
                       Field(prim, *dn, "operand_batching_dims", 3, true));
  J2O_ASSIGN_OR_RETURN(
      p.indices_batching,
      Field(prim, *dn, "start_indices_batching_dims", 4, true));
  J2O_ASSIGN_OR_RETURN(p.mode, ParseIndexMode(eqn));
  J2O_ASSIGN_OR_RETURN(p.slice_sizes, ParseSliceSizes(eqn, op.shape));
  p.operand_rank = op.rank();
  p.num_batch = idx.rank() - 1;
  const DimExpr& kdim = idx.shape.back();
  if (!kdim.is_constant() ||
      kdim.constant_value() != static_cast<int64_t>(p.start_index_map.size())) {
    return Invalid(
        prim, absl::StrCat("index vector of size ", kdim.ToString(),
                           " but start_index_map ", Text(p.start_index_map)));
  }
  J2O_RETURN_IF_ERROR(
      CheckDims(prim, "collapsed_slice_dims", p.collapsed, p.operand_rank));
  J2O_RETURN_IF_ERROR(
      CheckDims(prim, "start_index_map", p.start_index_map, p.operand_rank));
  J2O_RETURN_IF_ERROR(CheckDims(prim, "operand_batching_dims",
                                p.operand_batching, p.operand_rank));
  J2O_RETURN_IF_ERROR(CheckDims(prim, "start_indices_batching_dims",
                                p.indices_batching, p.num_batch));
  if (p.operand_batching.size() != p.indices_batching.size()) {
    return Invalid(prim,
                   "operand_batching_dims and "
                   "start_indices_batching_dims differ in length");
  }
  for (int d = 0; d < p.operand_rank; ++d) {
    if (!Contains(p.collapsed, d) && !Contains(p.operand_batching, d)) {
      p.window_dims.push_back(d);
    }
  }
  const int out_rank = p.num_batch + static_cast<int>(p.window_dims.size());
  if (p.offset_dims.size() != p.window_dims.size()) {
    return Invalid(prim, absl::StrCat("offset_dims ", Text(p.offset_dims),
                                      " do not match the ",
                                      p.window_dims.size(), " window dims"));
  }
  J2O_RETURN_IF_ERROR(CheckDims(prim, "offset_dims", p.offset_dims, out_rank));
  std::vector<int64_t> sorted_offsets = p.offset_dims;
  std::sort(sorted_offsets.begin(), sorted_offsets.end());
  for (int d = 0, b = 0; d < out_rank; ++d) {
    auto it = std::find(sorted_offsets.begin(), sorted_offsets.end(), d);
    if (it != sorted_offsets.end()) {
      p.output_tags.push_back({false, int(it - sorted_offsets.begin())});
    } else {
      p.output_tags.push_back({true, b++});
    }
  }
  if (p.mode == IndexMode::kFillOrDrop) {
    J2O_ASSIGN_OR_RETURN(
        p.fill, GatherFillValue(op.dtype, eqn.params.Find("fill_value")));
  }
  // Every indexed dim collapsed and every collapsed dim indexed: each index
  // tuple selects whole (possibly narrowed) slices -> Gather / GatherND.
  bool indexed_collapsed = true;
  for (int64_t d : p.start_index_map) {
    if (!Contains(p.collapsed, d)) indexed_collapsed = false;
  }
  for (int64_t d : p.collapsed) {
    if (!Contains(p.start_index_map, d)) indexed_collapsed = false;
  }
  if (indexed_collapsed && !p.start_index_map.empty()) {
    p.strategy = p.start_index_map.size() == 1 && p.operand_batching.empty()
                     ? GatherPlan::Strategy::kAxisGather
                     : GatherPlan::Strategy::kGatherND;
  } else {
    p.strategy = GatherPlan::Strategy::kIndexGrid;
  }
  return p;
}

absl::StatusOr<ScatterPlan> PlanScatter(const jaxpr::Eqn& eqn) {
  const std::string& prim = eqn.primitive;
  ScatterPlan p;
  if (eqn.inputs.size() != 3) {
    return Invalid(prim,
                   absl::StrCat("expects 3 operands, got ", eqn.inputs.size()));
  }
  const jaxpr::Aval op = InAvalOf(eqn, 0);
  const jaxpr::Aval idx = InAvalOf(eqn, 1);
  const jaxpr::Aval upd = InAvalOf(eqn, 2);
  if (!jaxpr::IsInteger(idx.dtype) || idx.rank() < 1) {
    return Invalid(prim,
                   "scatter_indices must be an integer array of rank "
                   ">= 1");
  }
  if (prim == "scatter") {
    p.reduction = ScatterReduction::kNone;
  } else if (prim == "scatter-add" || prim == "scatter_add") {
    p.reduction = ScatterReduction::kAdd;
  } else if (prim == "scatter-sub" || prim == "scatter_sub") {
    p.reduction = ScatterReduction::kSub;
  } else if (prim == "scatter-mul" || prim == "scatter_mul") {
    p.reduction = ScatterReduction::kMul;
  } else if (prim == "scatter-min" || prim == "scatter_min") {
    p.reduction = ScatterReduction::kMin;
  } else if (prim == "scatter-max" || prim == "scatter_max") {
    p.reduction = ScatterReduction::kMax;
  } else {
    return absl::UnimplementedError(
        absl::StrCat(prim, ": not a scatter primitive"));
  }
  // update_jaxpr, when given, must be the primitive's own combiner (JAX
  // builds `lambda x, y: op(x, y)`); anything else is not lowered.
  if (const ParamValue* uj = eqn.params.Find("update_jaxpr");
      uj != nullptr && uj->kind() == ParamValue::Kind::kJaxpr &&
      uj->jaxpr() != nullptr) {
    const jaxpr::ClosedJaxpr& j = *uj->jaxpr();
    static const char* kOps[] = {"", "add", "sub", "mul", "min", "max"};
    const char* want = kOps[static_cast<int>(p.reduction)];
    bool ok;
    if (p.reduction == ScatterReduction::kNone) {
      ok = j.eqns.empty() && j.outvars.size() == 1 &&
           !j.outvars[0].is_literal() && j.invars.size() == 2 &&
           j.outvars[0].var == j.invars[1];
    } else {
      ok = j.eqns.size() == 1 && j.eqns[0].primitive == want &&
           j.invars.size() == 2 && j.eqns[0].inputs.size() == 2 &&
           !j.eqns[0].inputs[0].is_literal() &&
           !j.eqns[0].inputs[1].is_literal() &&
           j.eqns[0].inputs[0].var == j.invars[0] &&
           j.eqns[0].inputs[1].var == j.invars[1];
    }
    if (!ok) {
      return absl::UnimplementedError(
          absl::StrCat(prim, ": update_jaxpr is not the plain '", want,
                       "' combiner; custom scatter combiners are not lowered"));
    }
  }
  J2O_ASSIGN_OR_RETURN(const ParamValue* dn,
                       eqn.params.GetCall("dimension_numbers"));
  J2O_ASSIGN_OR_RETURN(p.update_window_dims,
                       Field(prim, *dn, "update_window_dims", 0, false));
  J2O_ASSIGN_OR_RETURN(p.inserted,
                       Field(prim, *dn, "inserted_window_dims", 1, false));
  J2O_ASSIGN_OR_RETURN(
      p.scatter_to_operand,
      Field(prim, *dn, "scatter_dims_to_operand_dims", 2, false));
  J2O_ASSIGN_OR_RETURN(p.operand_batching,
                       Field(prim, *dn, "operand_batching_dims", 3, true));
  J2O_ASSIGN_OR_RETURN(
      p.indices_batching,
      Field(prim, *dn, "scatter_indices_batching_dims", 4, true));
  J2O_ASSIGN_OR_RETURN(p.mode, ParseIndexMode(eqn));
  if (const ParamValue* u = eqn.params.Find("unique_indices");
      u != nullptr && u->kind() == ParamValue::Kind::kBool) {
    p.unique_indices = u->bool_value();
  }
  p.operand_rank = op.rank();
  p.num_batch = idx.rank() - 1;
  const DimExpr& kdim = idx.shape.back();
  if (!kdim.is_constant() ||
      kdim.constant_value() !=
          static_cast<int64_t>(p.scatter_to_operand.size())) {
    return Invalid(prim, absl::StrCat("index vector of size ", kdim.ToString(),
                                      " but scatter_dims_to_operand_dims ",
                                      Text(p.scatter_to_operand)));
  }
  if (upd.rank() !=
      static_cast<int>(p.update_window_dims.size()) + p.num_batch) {
    return Invalid(prim, absl::StrCat("updates of rank ", upd.rank(),
                                      " do not match update_window_dims ",
                                      Text(p.update_window_dims), " and ",
                                      p.num_batch, " scatter dims"));
  }
  J2O_RETURN_IF_ERROR(
      CheckDims(prim, "update_window_dims", p.update_window_dims, upd.rank()));
  J2O_RETURN_IF_ERROR(
      CheckDims(prim, "inserted_window_dims", p.inserted, p.operand_rank));
  J2O_RETURN_IF_ERROR(CheckDims(prim, "scatter_dims_to_operand_dims",
                                p.scatter_to_operand, p.operand_rank));
  J2O_RETURN_IF_ERROR(CheckDims(prim, "operand_batching_dims",
                                p.operand_batching, p.operand_rank));
  J2O_RETURN_IF_ERROR(CheckDims(prim, "scatter_indices_batching_dims",
                                p.indices_batching, p.num_batch));
  if (p.operand_batching.size() != p.indices_batching.size()) {
    return Invalid(prim,
                   "operand_batching_dims and "
                   "scatter_indices_batching_dims differ in length");
  }
  for (int d = 0; d < p.operand_rank; ++d) {
    if (!Contains(p.inserted, d) && !Contains(p.operand_batching, d)) {
      p.window_dims.push_back(d);
    }
  }
  if (p.window_dims.size() != p.update_window_dims.size()) {
    return Invalid(
        prim, absl::StrCat("update_window_dims ", Text(p.update_window_dims),
                           " do not match the ", p.window_dims.size(),
                           " window dims"));
  }
  p.sorted_update_window_dims = p.update_window_dims;
  std::sort(p.sorted_update_window_dims.begin(),
            p.sorted_update_window_dims.end());
  for (int d = 0; d < upd.rank(); ++d) {
    if (!Contains(p.update_window_dims, d)) p.update_scatter_dims.push_back(d);
  }
  p.window_size.assign(p.operand_rank, DimExpr::Constant(1));
  bool full_windows = true;
  for (size_t k = 0; k < p.window_dims.size(); ++k) {
    const int64_t d = p.window_dims[k];
    p.window_size[d] = upd.shape[p.sorted_update_window_dims[k]];
    if (!(p.window_size[d] == op.shape[d])) full_windows = false;
  }
  // Slices: no batching, the indexed dims are exactly the inserted ones and
  // the window covers every other dim whole.
  bool indexed_inserted =
      p.operand_batching.empty() && !p.scatter_to_operand.empty();
  for (int64_t d : p.scatter_to_operand) {
    if (!Contains(p.inserted, d)) indexed_inserted = false;
  }
  for (int64_t d : p.inserted) {
    if (!Contains(p.scatter_to_operand, d)) indexed_inserted = false;
  }
  p.strategy = indexed_inserted && full_windows
                   ? ScatterPlan::Strategy::kSlices
                   : ScatterPlan::Strategy::kIndexGrid;
  return p;
}

}  // namespace jax2onnx::plugin
