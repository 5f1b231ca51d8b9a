// Indexing kernels of the reference interpreter: gather, scatter and its
// combining variants, dynamic_slice and dynamic_update_slice. They follow
// the StableHLO spec's per-element definitions literally, plus XLA's
// out-of-bounds behaviour for every GatherScatterMode (gather clamps or
// fills whole windows; scatter clamps or drops whole windows).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/eval/kernels.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/params.h"

namespace jax2onnx::jaxpr {
namespace {

using Shape = std::vector<int64_t>;

#define IDX_ASSIGN_OR_RETURN_IMPL(var, decl, expr) \
  auto var = (expr);                               \
  if (!var.ok()) return var.status();              \
  decl = *std::move(var)
#define IDX_CONCAT_INNER(a, b) a##b
#define IDX_CONCAT(a, b) IDX_CONCAT_INNER(a, b)
#define IDX_ASSIGN_OR_RETURN(decl, expr) \
  IDX_ASSIGN_OR_RETURN_IMPL(IDX_CONCAT(status_or_, __LINE__), decl, expr)
#define IDX_RETURN_IF_ERROR(expr)      \
  do {                                 \
    absl::Status status_ = (expr);     \
    if (!status_.ok()) return status_; \
  } while (false)

absl::Status Invalid(absl::string_view primitive, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(primitive, ": ", message));
}

std::string ShapeText(absl::Span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

// Advances `index` to the next position of `shape` in row-major order;
// false after the last one.
bool Increment(Shape& index, const Shape& shape) {
  for (int d = static_cast<int>(index.size()) - 1; d >= 0; --d) {
    if (++index[d] < shape[d]) return true;
    index[d] = 0;
  }
  return false;
}

// Calls fn(index) for every index of `shape` in row-major order.
template <typename Fn>
absl::Status ForEachIndex(const Shape& shape, Fn&& fn) {
  if (NumElements(shape) == 0) return absl::OkStatus();
  Shape index(shape.size(), 0);
  do {
    IDX_RETURN_IF_ERROR(fn(index));
  } while (Increment(index, shape));
  return absl::OkStatus();
}

// Element `flat` of an integer array as int64. u64 values above INT64_MAX
// saturate: they stay above every bound, which is what XLA's unsigned
// comparisons and clamps see.
int64_t ReadIndex(const Array& a, int64_t flat) {
  if (a.dtype() == DType::kU64) {
    const uint64_t v = a.GetAsUInt64(flat);
    return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
               ? std::numeric_limits<int64_t>::max()
               : static_cast<int64_t>(v);
  }
  return a.GetAsInt64(flat);
}

absl::Status CheckIndexDType(absl::string_view primitive, const Array& a,
                             absl::string_view what) {
  if (!IsInteger(a.dtype())) {
    return Invalid(primitive,
                   absl::StrCat(what, " has dtype ", ShortName(a.dtype()),
                                "; an integer dtype is required"));
  }
  return absl::OkStatus();
}

absl::Status CheckCopyable(absl::string_view primitive, const Array& a,
                           absl::string_view what) {
  if (ItemSize(a.dtype()) == 0) {
    return absl::UnimplementedError(
        absl::StrCat(primitive, ": ", what, " of dtype ", ShortName(a.dtype()),
                     " is not supported by the interpreter"));
  }
  return absl::OkStatus();
}

void CopyElement(const Array& src, int64_t src_flat, Array& dst,
                 int64_t dst_flat) {
  const int item = ItemSize(src.dtype());
  std::memcpy(dst.data() + dst_flat * item, src.data() + src_flat * item, item);
}

bool Contains(absl::Span<const int64_t> dims, int64_t d) {
  return std::find(dims.begin(), dims.end(), d) != dims.end();
}

// Every entry in [0, rank) and no repeats.
absl::Status CheckDims(absl::string_view primitive, absl::string_view what,
                       absl::Span<const int64_t> dims, int64_t rank) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= rank) {
      return Invalid(primitive,
                     absl::StrCat(what, " ", ShapeText(dims), " has dim ",
                                  dims[i], " outside [0, ", rank, ")"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (dims[j] == dims[i]) {
        return Invalid(primitive, absl::StrCat(what, " ", ShapeText(dims),
                                               " repeats dim ", dims[i]));
      }
    }
  }
  return absl::OkStatus();
}

// The declared output must have the computed type; a mismatch means the
// jaxpr and these semantics disagree, which must never pass silently.
absl::Status CheckOutput(const EvalContext& ctx, DType dtype,
                         const Shape& shape) {
  if (ctx.OutputDType(0) != dtype) {
    return Invalid(
        ctx.eqn().primitive,
        absl::StrCat("declared output dtype ", ShortName(ctx.OutputDType(0)),
                     " differs from the operand dtype ", ShortName(dtype)));
  }
  IDX_ASSIGN_OR_RETURN(Shape declared, ctx.OutputShape(0));
  if (declared != shape) {
    return Invalid(
        ctx.eqn().primitive,
        absl::StrCat("declared output shape ", ShapeText(declared),
                     " differs from the computed shape ", ShapeText(shape)));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Params shared by gather and scatter.

enum class Mode { kClip, kFillOrDrop, kPromiseInBounds };

// GatherScatterMode as printed (`GatherScatterMode.CLIP`), as the enum's int
// value (enum.auto(): CLIP=1, FILL_OR_DROP=2, PROMISE_IN_BOUNDS=3,
// ONE_HOT=4), as the user-facing string, or None (JAX's from_any maps None
// to FILL_OR_DROP).
absl::StatusOr<Mode> ParseMode(absl::string_view primitive,
                               const Params& params) {
  const ParamValue* v = params.Find("mode");
  if (v == nullptr || v->is_none()) return Mode::kFillOrDrop;
  std::string name;
  if (v->kind() == ParamValue::Kind::kInt) {
    switch (v->int_value()) {
      case 1:
        return Mode::kClip;
      case 2:
        return Mode::kFillOrDrop;
      case 3:
        return Mode::kPromiseInBounds;
      case 4:
        name = "ONE_HOT";
        break;
      default:
        return Invalid(primitive, absl::StrCat("unknown mode ", v->ToString()));
    }
  } else if (v->kind() == ParamValue::Kind::kName ||
             v->kind() == ParamValue::Kind::kString) {
    name = v->text();
    const size_t dot = name.rfind('.');
    if (dot != std::string::npos) name = name.substr(dot + 1);
  } else {
    return Invalid(primitive, absl::StrCat("unknown mode ", v->ToString()));
  }
  if (name == "CLIP" || name == "clip") return Mode::kClip;
  if (name == "FILL_OR_DROP" || name == "fill" || name == "drop") {
    return Mode::kFillOrDrop;
  }
  if (name == "PROMISE_IN_BOUNDS" || name == "promise_in_bounds") {
    return Mode::kPromiseInBounds;
  }
  if (name == "ONE_HOT" || name == "one_hot") {
    // JAX has no gather/scatter lowering for it (it only exists as a dense
    // one-hot matmul inside jnp helpers), so there is no XLA behaviour to
    // reproduce.
    return absl::UnimplementedError(absl::StrCat(
        primitive, ": mode GatherScatterMode.ONE_HOT has no XLA semantics"));
  }
  return Invalid(primitive, absl::StrCat("unknown mode ", v->ToString()));
}

// A field of a Gather/ScatterDimensionNumbers call, by keyword or by
// position. The batching fields appeared in JAX 0.4.35; older texts lack
// them, which means no batching dims.
absl::StatusOr<Shape> DnumField(absl::string_view primitive,
                                const ParamValue& dnums, absl::string_view name,
                                size_t position, bool optional) {
  const ParamValue* field = dnums.Field(name);
  if (field == nullptr && position < dnums.call_args().size() &&
      dnums.call_args()[position].first.empty()) {
    field = &dnums.call_args()[position].second;
  }
  if (field == nullptr || field->is_none()) {
    if (optional) return Shape{};
    return Invalid(primitive, absl::StrCat("dimension_numbers has no field '",
                                           name, "': ", dnums.ToString()));
  }
  return field->AsIntList(absl::StrCat("dimension_numbers.", name));
}

// ---------------------------------------------------------------------------
// gather

// gather's FILL_OR_DROP value in the operand dtype. JAX resolves a None
// fill_value to NaN (inexact), the minimum (signed), the maximum (unsigned)
// or True (bool).
absl::StatusOr<Array> FillScalar(DType dtype, const ParamValue* fill) {
  Array out(dtype, {});
  const bool is_default = fill == nullptr || fill->is_none();
  if (IsFloat(dtype) || IsComplex(dtype)) {
    double v = std::numeric_limits<double>::quiet_NaN();
    if (!is_default) {
      IDX_ASSIGN_OR_RETURN(v, fill->AsFloat("gather fill_value"));
    }
    out.SetFromDouble(0, v);
    return out;
  }
  const int bits = 8 * ItemSize(dtype);
  if (dtype == DType::kBool) {
    bool v = true;
    if (!is_default) {
      if (fill->kind() == ParamValue::Kind::kBool) {
        v = fill->bool_value();
      } else {
        IDX_ASSIGN_OR_RETURN(double d, fill->AsFloat("gather fill_value"));
        v = d != 0;
      }
    }
    out.SetFromInt64(0, v ? 1 : 0);
    return out;
  }
  if (is_default) {
    if (IsSignedInt(dtype)) {
      out.SetFromInt64(0, bits == 64 ? std::numeric_limits<int64_t>::min()
                                     : -(int64_t{1} << (bits - 1)));
    } else {
      std::memset(out.data(), 0xff, ItemSize(dtype));
    }
    return out;
  }
  if (fill->kind() == ParamValue::Kind::kInt) {
    uint64_t u = 0;
    // u64 values above INT64_MAX only survive in the source spelling.
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
  IDX_ASSIGN_OR_RETURN(double d, fill->AsFloat("gather fill_value"));
  if (!std::isfinite(d)) {
    return Invalid("gather",
                   absl::StrCat("fill_value ", fill->ToString(),
                                " is not representable in ", ShortName(dtype)));
  }
  out.SetFromDouble(0, d);
  return out;
}

absl::StatusOr<std::vector<Array>> GatherKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  const absl::string_view prim = "gather";
  if (inputs.size() != 2) {
    return Invalid(prim, absl::StrCat("expects 2 operands (operand, "
                                      "start_indices), got ",
                                      inputs.size()));
  }
  const Array& operand = inputs[0];
  const Array& indices = inputs[1];
  IDX_RETURN_IF_ERROR(CheckCopyable(prim, operand, "operand"));
  IDX_RETURN_IF_ERROR(CheckIndexDType(prim, indices, "start_indices"));
  const Params& params = ctx.params();
  IDX_ASSIGN_OR_RETURN(const ParamValue* dnums,
                       params.GetCall("dimension_numbers"));
  IDX_ASSIGN_OR_RETURN(Shape offset_dims,
                       DnumField(prim, *dnums, "offset_dims", 0, false));
  IDX_ASSIGN_OR_RETURN(
      Shape collapsed_dims,
      DnumField(prim, *dnums, "collapsed_slice_dims", 1, false));
  IDX_ASSIGN_OR_RETURN(Shape start_index_map,
                       DnumField(prim, *dnums, "start_index_map", 2, false));
  IDX_ASSIGN_OR_RETURN(
      Shape operand_batching_dims,
      DnumField(prim, *dnums, "operand_batching_dims", 3, true));
  IDX_ASSIGN_OR_RETURN(
      Shape indices_batching_dims,
      DnumField(prim, *dnums, "start_indices_batching_dims", 4, true));
  IDX_ASSIGN_OR_RETURN(Shape slice_sizes, ctx.IntListParam("slice_sizes"));
  IDX_ASSIGN_OR_RETURN(Mode mode, ParseMode(prim, params));

  const Shape& operand_shape = operand.shape();
  const int64_t operand_rank = operand.rank();
  // JAX always puts the index vector in the last dim of start_indices.
  if (indices.rank() < 1) {
    return Invalid(prim,
                   "start_indices must have rank >= 1 (the last dim "
                   "is the index vector)");
  }
  const int64_t index_vector_dim = indices.rank() - 1;
  const int64_t num_batch_dims = index_vector_dim;
  if (indices.shape().back() != static_cast<int64_t>(start_index_map.size())) {
    return Invalid(
        prim,
        absl::StrCat("start_indices ", indices.TypeString(),
                     " has an index vector of size ", indices.shape().back(),
                     " but start_index_map ", ShapeText(start_index_map),
                     " has ", start_index_map.size(), " entries"));
  }
  if (static_cast<int64_t>(slice_sizes.size()) != operand_rank) {
    return Invalid(
        prim, absl::StrCat("slice_sizes ", ShapeText(slice_sizes),
                           " does not match operand ", operand.TypeString()));
  }
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > operand_shape[d]) {
      return Invalid(prim, absl::StrCat("slice_sizes ", ShapeText(slice_sizes),
                                        " exceeds operand ",
                                        operand.TypeString(), " in dim ", d));
    }
  }
  const int64_t out_rank =
      static_cast<int64_t>(offset_dims.size()) + num_batch_dims;
  IDX_RETURN_IF_ERROR(CheckDims(prim, "offset_dims", offset_dims, out_rank));
  IDX_RETURN_IF_ERROR(
      CheckDims(prim, "collapsed_slice_dims", collapsed_dims, operand_rank));
  IDX_RETURN_IF_ERROR(
      CheckDims(prim, "start_index_map", start_index_map, operand_rank));
  IDX_RETURN_IF_ERROR(CheckDims(prim, "operand_batching_dims",
                                operand_batching_dims, operand_rank));
  IDX_RETURN_IF_ERROR(CheckDims(prim, "start_indices_batching_dims",
                                indices_batching_dims, num_batch_dims));
  if (operand_batching_dims.size() != indices_batching_dims.size()) {
    return Invalid(prim,
                   "operand_batching_dims and "
                   "start_indices_batching_dims differ in length");
  }
  for (size_t i = 0; i < operand_batching_dims.size(); ++i) {
    if (operand_shape[operand_batching_dims[i]] !=
        indices.shape()[indices_batching_dims[i]]) {
      return Invalid(prim,
                     "operand and start_indices batching dims differ "
                     "in size");
    }
    if (Contains(collapsed_dims, operand_batching_dims[i]) ||
        Contains(start_index_map, operand_batching_dims[i])) {
      return Invalid(prim,
                     "an operand batching dim is also collapsed or "
                     "indexed");
    }
  }
  // Operand dims that receive offset coordinates, in increasing order.
  Shape window_operand_dims;
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (!Contains(collapsed_dims, d) && !Contains(operand_batching_dims, d)) {
      window_operand_dims.push_back(d);
    }
  }
  if (window_operand_dims.size() != offset_dims.size()) {
    return Invalid(prim, absl::StrCat("offset_dims ", ShapeText(offset_dims),
                                      " do not cover the operand dims that "
                                      "are neither collapsed nor batching"));
  }
  for (int64_t d : collapsed_dims) {
    if (slice_sizes[d] > 1) {
      return Invalid(prim, absl::StrCat("collapsed dim ", d, " has slice size ",
                                        slice_sizes[d]));
    }
  }
  // Output shape: offset dims take the slice sizes, the others the batch
  // dims of start_indices in order.
  Shape out_shape(out_rank);
  Shape batch_out_dims;
  for (int64_t d = 0, b = 0; d < out_rank; ++d) {
    if (Contains(offset_dims, d)) {
      // offset_dims is sorted in valid jaxprs; pair them by rank order.
      const int64_t rank_in_offsets =
          std::count_if(offset_dims.begin(), offset_dims.end(),
                        [d](int64_t o) { return o < d; });
      out_shape[d] = slice_sizes[window_operand_dims[rank_in_offsets]];
    } else {
      out_shape[d] = indices.shape()[b++];
      batch_out_dims.push_back(d);
    }
  }
  IDX_RETURN_IF_ERROR(CheckOutput(ctx, operand.dtype(), out_shape));
  Array fill;
  if (mode == Mode::kFillOrDrop) {
    IDX_ASSIGN_OR_RETURN(
        fill, FillScalar(operand.dtype(), params.Find("fill_value")));
  }
  // offset_dims sorted, so the k-th offset dim of the output feeds the
  // k-th window operand dim.
  Shape sorted_offsets = offset_dims;
  std::sort(sorted_offsets.begin(), sorted_offsets.end());

  Array out(operand.dtype(), out_shape);
  Shape index_pos(indices.rank(), 0);
  Shape operand_index(operand_rank);
  int64_t out_flat = 0;
  IDX_RETURN_IF_ERROR(
      ForEachIndex(out_shape, [&](const Shape& out_index) -> absl::Status {
        for (int64_t i = 0; i < num_batch_dims; ++i) {
          index_pos[i] = out_index[batch_out_dims[i]];
        }
        std::fill(operand_index.begin(), operand_index.end(), 0);
        bool in_bounds = true;
        for (size_t k = 0; k < start_index_map.size(); ++k) {
          index_pos[index_vector_dim] = static_cast<int64_t>(k);
          int64_t start = ReadIndex(indices, indices.FlatIndex(index_pos));
          const int64_t d = start_index_map[k];
          const int64_t hi = operand_shape[d] - slice_sizes[d];
          if (start < 0 || start > hi) {
            in_bounds = false;
            start = std::clamp<int64_t>(start, 0, hi);
          }
          operand_index[d] = start;
        }
        for (size_t i = 0; i < operand_batching_dims.size(); ++i) {
          operand_index[operand_batching_dims[i]] +=
              out_index[batch_out_dims[indices_batching_dims[i]]];
        }
        for (size_t k = 0; k < sorted_offsets.size(); ++k) {
          operand_index[window_operand_dims[k]] += out_index[sorted_offsets[k]];
        }
        if (mode == Mode::kFillOrDrop && !in_bounds) {
          CopyElement(fill, 0, out, out_flat++);
          return absl::OkStatus();
        }
        for (int64_t d = 0; d < operand_rank; ++d) {
          if (operand_index[d] < 0 || operand_index[d] >= operand_shape[d]) {
            return absl::InternalError(absl::StrCat(
                "gather: computed operand index ", ShapeText(operand_index),
                " outside ", operand.TypeString()));
          }
        }
        CopyElement(operand, operand.FlatIndex(operand_index), out, out_flat++);
        return absl::OkStatus();
      }));
  std::vector<Array> result;
  result.push_back(std::move(out));
  return result;
}

// ---------------------------------------------------------------------------
// scatter, scatter-add, scatter-sub, scatter-mul, scatter-min, scatter-max

enum class Combine {
  kReplace,
  kAdd,
  kSub,
  kMul,
  kMin,
  kMax,
  kAnd,
  kOr,
  kXor,
  kCallJaxpr,
};

std::optional<Combine> CombineFromPrimitive(absl::string_view name) {
  if (name == "scatter") return Combine::kReplace;
  if (name == "scatter-add" || name == "scatter_add" || name == "add" ||
      name == "add_any") {
    return Combine::kAdd;
  }
  if (name == "scatter-sub" || name == "scatter_sub" || name == "sub") {
    return Combine::kSub;
  }
  if (name == "scatter-mul" || name == "scatter_mul" || name == "mul") {
    return Combine::kMul;
  }
  if (name == "scatter-min" || name == "scatter_min" || name == "min") {
    return Combine::kMin;
  }
  if (name == "scatter-max" || name == "scatter_max" || name == "max") {
    return Combine::kMax;
  }
  if (name == "and") return Combine::kAnd;
  if (name == "or") return Combine::kOr;
  if (name == "xor") return Combine::kXor;
  return std::nullopt;
}

// The combiner an update_jaxpr computes when it is the plain
// `lambda x, y: op(x, y)` (or `lambda x, y: y`) JAX builds; anything else
// is evaluated by calling the jaxpr.
Combine CombineFromJaxpr(const ClosedJaxpr& jaxpr) {
  if (jaxpr.invars.size() != 2 || jaxpr.outvars.size() != 1 ||
      !jaxpr.constvars.empty() || jaxpr.outvars[0].is_literal()) {
    return Combine::kCallJaxpr;
  }
  const Var* x = jaxpr.invars[0];
  const Var* y = jaxpr.invars[1];
  const Var* result = jaxpr.outvars[0].var;
  if (jaxpr.eqns.empty()) {
    return result == y ? Combine::kReplace : Combine::kCallJaxpr;
  }
  if (jaxpr.eqns.size() != 1) return Combine::kCallJaxpr;
  const Eqn& eqn = jaxpr.eqns[0];
  if (!eqn.params.empty() || eqn.inputs.size() != 2 ||
      eqn.outputs.size() != 1 || eqn.outputs[0] != result ||
      eqn.inputs[0].is_literal() || eqn.inputs[1].is_literal()) {
    return Combine::kCallJaxpr;
  }
  const std::optional<Combine> op = CombineFromPrimitive(eqn.primitive);
  if (!op.has_value() || eqn.primitive.rfind("scatter", 0) == 0) {
    return Combine::kCallJaxpr;
  }
  if (eqn.inputs[0].var == x && eqn.inputs[1].var == y) return *op;
  // Every op but sub is commutative.
  if (eqn.inputs[0].var == y && eqn.inputs[1].var == x &&
      *op != Combine::kSub) {
    return *op;
  }
  return Combine::kCallJaxpr;
}

template <typename T>
T LoadAs(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void StoreAs(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Integer arithmetic wraps like XLA's; computing in uint64 keeps it defined.
template <typename T>
absl::StatusOr<T> CombineInts(Combine op, T a, T b) {
  const uint64_t ua = static_cast<uint64_t>(a);
  const uint64_t ub = static_cast<uint64_t>(b);
  switch (op) {
    case Combine::kAdd:
      return static_cast<T>(ua + ub);
    case Combine::kSub:
      return static_cast<T>(ua - ub);
    case Combine::kMul:
      return static_cast<T>(ua * ub);
    case Combine::kMin:
      return std::min(a, b);
    case Combine::kMax:
      return std::max(a, b);
    case Combine::kAnd:
      return static_cast<T>(ua & ub);
    case Combine::kOr:
      return static_cast<T>(ua | ub);
    case Combine::kXor:
      return static_cast<T>(ua ^ ub);
    default:
      return absl::InternalError("unexpected integer combiner");
  }
}

// lax.max/lax.min propagate NaN and order -0 below +0 (IEEE 754-2019).
template <typename F>
absl::StatusOr<F> CombineFloats(Combine op, F a, F b) {
  switch (op) {
    case Combine::kAdd:
      return static_cast<F>(a + b);
    case Combine::kSub:
      return static_cast<F>(a - b);
    case Combine::kMul:
      return static_cast<F>(a * b);
    case Combine::kMin:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      if (a == b) return std::signbit(a) ? a : b;  // -0 < +0 (IEEE minimum)
      return b < a ? b : a;
    case Combine::kMax:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      if (a == b) return std::signbit(a) ? b : a;  // +0 > -0 (IEEE maximum)
      return a < b ? b : a;
    default:
      return absl::UnimplementedError(
          "bitwise combiner on a floating-point scatter");
  }
}

// Complex max/min compare lexicographically (real part, then imaginary),
// as JAX lowers lax.max/lax.min on complex values.
template <typename F>
absl::StatusOr<std::complex<F>> CombineComplex(Combine op, std::complex<F> a,
                                               std::complex<F> b) {
  switch (op) {
    case Combine::kAdd:
      return a + b;
    case Combine::kSub:
      return a - b;
    case Combine::kMul:
      return a * b;
    case Combine::kMin:
    case Combine::kMax: {
      const bool is_max = op == Combine::kMax;
      auto pick = [is_max](F x, F y) { return is_max ? x > y : x < y; };
      const bool pick_a = a.real() == b.real() ? pick(a.imag(), b.imag())
                                               : pick(a.real(), b.real());
      return pick_a ? a : b;
    }
    default:
      return absl::UnimplementedError("bitwise combiner on a complex scatter");
  }
}

// XLA's pred arithmetic: add/max are or, mul/min are and.
absl::StatusOr<uint8_t> CombineBools(Combine op, uint8_t a, uint8_t b) {
  switch (op) {
    case Combine::kAdd:
    case Combine::kMax:
    case Combine::kOr:
      return static_cast<uint8_t>(a | b);
    case Combine::kMul:
    case Combine::kMin:
    case Combine::kAnd:
      return static_cast<uint8_t>(a & b);
    case Combine::kXor:
      return static_cast<uint8_t>(a ^ b);
    default:
      return absl::UnimplementedError("subtraction on a bool scatter");
  }
}

template <typename T>
absl::Status CombineIntAt(Combine op, uint8_t* acc, const uint8_t* upd) {
  IDX_ASSIGN_OR_RETURN(T v, CombineInts<T>(op, LoadAs<T>(acc), LoadAs<T>(upd)));
  StoreAs<T>(acc, v);
  return absl::OkStatus();
}

template <typename F>
absl::Status CombineFloatAt(Combine op, uint8_t* acc, const uint8_t* upd) {
  IDX_ASSIGN_OR_RETURN(F v,
                       CombineFloats<F>(op, LoadAs<F>(acc), LoadAs<F>(upd)));
  StoreAs<F>(acc, v);
  return absl::OkStatus();
}

template <typename F>
absl::Status CombineComplexAt(Combine op, uint8_t* acc, const uint8_t* upd) {
  using C = std::complex<F>;
  IDX_ASSIGN_OR_RETURN(C v,
                       CombineComplex<F>(op, LoadAs<C>(acc), LoadAs<C>(upd)));
  StoreAs<C>(acc, v);
  return absl::OkStatus();
}

// Half types are combined in f32 and rounded once, as XLA's CPU backend
// does for each elementwise op.
template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
absl::Status CombineHalfAt(Combine op, uint8_t* acc, const uint8_t* upd) {
  IDX_ASSIGN_OR_RETURN(float v,
                       CombineFloats<float>(op, ToFloat(LoadAs<uint16_t>(acc)),
                                            ToFloat(LoadAs<uint16_t>(upd))));
  StoreAs<uint16_t>(acc, FromFloat(v));
  return absl::OkStatus();
}

// acc = op(acc, upd) on one element of `dtype`.
absl::Status CombineAt(Combine op, DType dtype, uint8_t* acc,
                       const uint8_t* upd) {
  if (op == Combine::kReplace) {
    std::memcpy(acc, upd, ItemSize(dtype));
    return absl::OkStatus();
  }
  switch (dtype) {
    case DType::kBool: {
      IDX_ASSIGN_OR_RETURN(uint8_t v, CombineBools(op, *acc != 0, *upd != 0));
      *acc = v;
      return absl::OkStatus();
    }
    case DType::kI8:
      return CombineIntAt<int8_t>(op, acc, upd);
    case DType::kI16:
      return CombineIntAt<int16_t>(op, acc, upd);
    case DType::kI32:
      return CombineIntAt<int32_t>(op, acc, upd);
    case DType::kI64:
      return CombineIntAt<int64_t>(op, acc, upd);
    case DType::kU8:
      return CombineIntAt<uint8_t>(op, acc, upd);
    case DType::kU16:
      return CombineIntAt<uint16_t>(op, acc, upd);
    case DType::kU32:
      return CombineIntAt<uint32_t>(op, acc, upd);
    case DType::kU64:
      return CombineIntAt<uint64_t>(op, acc, upd);
    case DType::kF16:
      return CombineHalfAt<HalfToFloat, FloatToHalf>(op, acc, upd);
    case DType::kBF16:
      return CombineHalfAt<BFloat16ToFloat, FloatToBFloat16>(op, acc, upd);
    case DType::kF32:
      return CombineFloatAt<float>(op, acc, upd);
    case DType::kF64:
      return CombineFloatAt<double>(op, acc, upd);
    case DType::kC64:
      return CombineComplexAt<float>(op, acc, upd);
    case DType::kC128:
      return CombineComplexAt<double>(op, acc, upd);
    default:
      return absl::UnimplementedError(
          absl::StrCat("scatter combiner on dtype ", ShortName(dtype)));
  }
}

absl::StatusOr<std::vector<Array>> ScatterKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  const std::string& prim = ctx.eqn().primitive;
  if (inputs.size() != 3) {
    return Invalid(prim, absl::StrCat("expects 3 operands (operand, "
                                      "scatter_indices, updates), got ",
                                      inputs.size()));
  }
  const Array& operand = inputs[0];
  const Array& indices = inputs[1];
  const Array& updates = inputs[2];
  IDX_RETURN_IF_ERROR(CheckCopyable(prim, operand, "operand"));
  IDX_RETURN_IF_ERROR(CheckIndexDType(prim, indices, "scatter_indices"));
  if (updates.dtype() != operand.dtype()) {
    return Invalid(prim, absl::StrCat("updates ", updates.TypeString(),
                                      " differ in dtype from operand ",
                                      operand.TypeString()));
  }
  const Params& params = ctx.params();
  IDX_ASSIGN_OR_RETURN(const ParamValue* dnums,
                       params.GetCall("dimension_numbers"));
  IDX_ASSIGN_OR_RETURN(Shape update_window_dims,
                       DnumField(prim, *dnums, "update_window_dims", 0, false));
  IDX_ASSIGN_OR_RETURN(
      Shape inserted_dims,
      DnumField(prim, *dnums, "inserted_window_dims", 1, false));
  IDX_ASSIGN_OR_RETURN(
      Shape scatter_to_operand,
      DnumField(prim, *dnums, "scatter_dims_to_operand_dims", 2, false));
  IDX_ASSIGN_OR_RETURN(
      Shape operand_batching_dims,
      DnumField(prim, *dnums, "operand_batching_dims", 3, true));
  IDX_ASSIGN_OR_RETURN(
      Shape indices_batching_dims,
      DnumField(prim, *dnums, "scatter_indices_batching_dims", 4, true));
  IDX_ASSIGN_OR_RETURN(Mode mode, ParseMode(prim, params));

  // The combiner: update_jaxpr when given (XLA lowers it as the scatter
  // region), else the primitive's own op. JAX only builds the standard
  // combiner for scatter-add/-mul/..., so a reference the parser could not
  // resolve falls back to the primitive name too.
  Combine combine = Combine::kReplace;
  const ClosedJaxpr* update_jaxpr = nullptr;
  const ParamValue* jaxpr_param = params.Find("update_jaxpr");
  if (jaxpr_param != nullptr &&
      jaxpr_param->kind() == ParamValue::Kind::kJaxpr &&
      jaxpr_param->jaxpr() != nullptr) {
    update_jaxpr = jaxpr_param->jaxpr().get();
    combine = CombineFromJaxpr(*update_jaxpr);
  } else {
    std::optional<Combine> op = CombineFromPrimitive(prim);
    if (!op.has_value()) {
      return absl::UnimplementedError(
          absl::StrCat(prim, ": no combiner known for this primitive"));
    }
    combine = *op;
  }
  if (combine == Combine::kCallJaxpr) {
    const ParamValue* consts = params.Find("update_consts");
    if (consts != nullptr && !consts->items().empty()) {
      return absl::UnimplementedError(
          absl::StrCat(prim, ": update_consts ", consts->ToString(),
                       " cannot be evaluated (values are not in the text)"));
    }
  }

  const Shape& operand_shape = operand.shape();
  const int64_t operand_rank = operand.rank();
  if (indices.rank() < 1) {
    return Invalid(prim,
                   "scatter_indices must have rank >= 1 (the last dim "
                   "is the index vector)");
  }
  const int64_t index_vector_dim = indices.rank() - 1;
  if (indices.shape().back() !=
      static_cast<int64_t>(scatter_to_operand.size())) {
    return Invalid(prim, absl::StrCat("scatter_indices ", indices.TypeString(),
                                      " has an index vector of size ",
                                      indices.shape().back(),
                                      " but scatter_dims_to_operand_dims ",
                                      ShapeText(scatter_to_operand), " has ",
                                      scatter_to_operand.size(), " entries"));
  }
  if (updates.rank() !=
      static_cast<int64_t>(update_window_dims.size()) + index_vector_dim) {
    return Invalid(
        prim, absl::StrCat("updates ", updates.TypeString(), " must have rank ",
                           update_window_dims.size() + index_vector_dim));
  }
  IDX_RETURN_IF_ERROR(CheckDims(prim, "update_window_dims", update_window_dims,
                                updates.rank()));
  IDX_RETURN_IF_ERROR(
      CheckDims(prim, "inserted_window_dims", inserted_dims, operand_rank));
  IDX_RETURN_IF_ERROR(CheckDims(prim, "scatter_dims_to_operand_dims",
                                scatter_to_operand, operand_rank));
  IDX_RETURN_IF_ERROR(CheckDims(prim, "operand_batching_dims",
                                operand_batching_dims, operand_rank));
  IDX_RETURN_IF_ERROR(CheckDims(prim, "scatter_indices_batching_dims",
                                indices_batching_dims, index_vector_dim));
  if (operand_batching_dims.size() != indices_batching_dims.size()) {
    return Invalid(prim,
                   "operand_batching_dims and "
                   "scatter_indices_batching_dims differ in length");
  }
  for (size_t i = 0; i < operand_batching_dims.size(); ++i) {
    if (operand_shape[operand_batching_dims[i]] !=
        indices.shape()[indices_batching_dims[i]]) {
      return Invalid(prim,
                     "operand and scatter_indices batching dims differ "
                     "in size");
    }
    if (Contains(inserted_dims, operand_batching_dims[i]) ||
        Contains(scatter_to_operand, operand_batching_dims[i])) {
      return Invalid(prim,
                     "an operand batching dim is also inserted or "
                     "indexed");
    }
  }
  // Operand dims spanned by the update window, in increasing order; the
  // k-th is indexed by updates dim update_window_dims[k] (sorted).
  Shape sorted_window_dims = update_window_dims;
  std::sort(sorted_window_dims.begin(), sorted_window_dims.end());
  Shape window_operand_dims;
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (!Contains(inserted_dims, d) && !Contains(operand_batching_dims, d)) {
      window_operand_dims.push_back(d);
    }
  }
  if (window_operand_dims.size() != sorted_window_dims.size()) {
    return Invalid(
        prim, absl::StrCat("update_window_dims ", ShapeText(update_window_dims),
                           " do not cover the operand dims that "
                           "are neither inserted nor batching"));
  }
  Shape window_size(operand_rank, 1);
  Shape window_shape;
  for (size_t k = 0; k < sorted_window_dims.size(); ++k) {
    const int64_t size = updates.shape()[sorted_window_dims[k]];
    const int64_t d = window_operand_dims[k];
    if (size > operand_shape[d]) {
      return Invalid(
          prim,
          absl::StrCat("update window dim ", sorted_window_dims[k],
                       " of updates ", updates.TypeString(),
                       " exceeds operand ", operand.TypeString(), " dim ", d));
    }
    window_size[d] = size;
    window_shape.push_back(size);
  }
  // Updates dims that walk the scatter indices, in order; they must match
  // the batch dims of scatter_indices.
  Shape update_scatter_dims;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (!Contains(update_window_dims, d)) update_scatter_dims.push_back(d);
  }
  const Shape scatter_shape(indices.shape().begin(),
                            indices.shape().begin() + index_vector_dim);
  for (int64_t i = 0; i < index_vector_dim; ++i) {
    if (updates.shape()[update_scatter_dims[i]] != scatter_shape[i]) {
      return Invalid(prim, absl::StrCat("updates ", updates.TypeString(),
                                        " scatter dims do not match "
                                        "scatter_indices ",
                                        indices.TypeString()));
    }
  }
  IDX_RETURN_IF_ERROR(CheckOutput(ctx, operand.dtype(), operand_shape));

  Array out = operand;
  const int item = ItemSize(operand.dtype());
  Shape index_pos(indices.rank(), 0);
  Shape window_start(operand_rank);
  Shape update_index(updates.rank());
  Shape operand_index(operand_rank);

  auto apply = [&](int64_t out_flat, int64_t update_flat) -> absl::Status {
    uint8_t* acc = out.data() + out_flat * item;
    const uint8_t* upd = updates.data() + update_flat * item;
    if (combine != Combine::kCallJaxpr) {
      return CombineAt(combine, operand.dtype(), acc, upd);
    }
    Array a(operand.dtype(), {});
    Array b(operand.dtype(), {});
    std::memcpy(a.data(), acc, item);
    std::memcpy(b.data(), upd, item);
    IDX_ASSIGN_OR_RETURN(std::vector<Array> r,
                         ctx.Call(*update_jaxpr, {}, {a, b}));
    if (r.size() != 1 || r[0].dtype() != operand.dtype() ||
        r[0].num_elements() != 1) {
      return Invalid(prim,
                     "update_jaxpr must return one scalar of the "
                     "operand dtype");
    }
    std::memcpy(acc, r[0].data(), item);
    return absl::OkStatus();
  };

  // Scatter indices outermost, window innermost: XLA applies one whole
  // window per scatter index, so duplicates combine in scatter-index order.
  IDX_RETURN_IF_ERROR(ForEachIndex(
      scatter_shape, [&](const Shape& scatter_pos) -> absl::Status {
        std::copy(scatter_pos.begin(), scatter_pos.end(), index_pos.begin());
        std::fill(window_start.begin(), window_start.end(), 0);
        bool in_bounds = true;
        for (size_t k = 0; k < scatter_to_operand.size(); ++k) {
          index_pos[index_vector_dim] = static_cast<int64_t>(k);
          int64_t start = ReadIndex(indices, indices.FlatIndex(index_pos));
          const int64_t d = scatter_to_operand[k];
          const int64_t hi = operand_shape[d] - window_size[d];
          if (mode == Mode::kClip) start = std::clamp<int64_t>(start, 0, hi);
          if (start < 0 || start > hi) in_bounds = false;
          window_start[d] = start;
        }
        // XLA drops the whole window when any of it is out of bounds.
        if (!in_bounds) return absl::OkStatus();
        for (size_t i = 0; i < operand_batching_dims.size(); ++i) {
          window_start[operand_batching_dims[i]] +=
              scatter_pos[indices_batching_dims[i]];
        }
        for (int64_t i = 0; i < index_vector_dim; ++i) {
          update_index[update_scatter_dims[i]] = scatter_pos[i];
        }
        return ForEachIndex(
            window_shape, [&](const Shape& window_pos) -> absl::Status {
              operand_index = window_start;
              for (size_t k = 0; k < window_pos.size(); ++k) {
                update_index[sorted_window_dims[k]] = window_pos[k];
                operand_index[window_operand_dims[k]] += window_pos[k];
              }
              return apply(out.FlatIndex(operand_index),
                           updates.FlatIndex(update_index));
            });
      }));
  std::vector<Array> result;
  result.push_back(std::move(out));
  return result;
}

// ---------------------------------------------------------------------------
// dynamic_slice / dynamic_update_slice

// Start indices clamped like XLA: each to [0, dim - size].
absl::StatusOr<Shape> ClampedStarts(absl::string_view prim,
                                    absl::Span<const Array> starts,
                                    const Shape& operand_shape,
                                    const Shape& sizes) {
  Shape out(operand_shape.size());
  for (size_t d = 0; d < operand_shape.size(); ++d) {
    const Array& s = starts[d];
    IDX_RETURN_IF_ERROR(
        CheckIndexDType(prim, s, absl::StrCat("start index ", d)));
    if (s.num_elements() != 1) {
      return Invalid(prim, absl::StrCat("start index ", d, " is ",
                                        s.TypeString(), ", not a scalar"));
    }
    if (sizes[d] < 0 || sizes[d] > operand_shape[d]) {
      return Invalid(prim,
                     absl::StrCat("size ", sizes[d], " in dim ", d,
                                  " exceeds operand dim ", operand_shape[d]));
    }
    out[d] =
        std::clamp<int64_t>(ReadIndex(s, 0), 0, operand_shape[d] - sizes[d]);
  }
  return out;
}

absl::StatusOr<std::vector<Array>> DynamicSliceKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  const absl::string_view prim = "dynamic_slice";
  if (inputs.empty()) return Invalid(prim, "missing operand");
  const Array& operand = inputs[0];
  IDX_RETURN_IF_ERROR(CheckCopyable(prim, operand, "operand"));
  if (inputs.size() != static_cast<size_t>(1 + operand.rank())) {
    return Invalid(prim, absl::StrCat("operand ", operand.TypeString(),
                                      " needs ", operand.rank(),
                                      " start indices, got ", inputs.size() - 1,
                                      " (dynamic slice sizes are not "
                                      "supported)"));
  }
  IDX_ASSIGN_OR_RETURN(Shape sizes, ctx.IntListParam("slice_sizes"));
  if (static_cast<int64_t>(sizes.size()) != operand.rank()) {
    return Invalid(
        prim, absl::StrCat("slice_sizes ", ShapeText(sizes),
                           " does not match operand ", operand.TypeString()));
  }
  IDX_ASSIGN_OR_RETURN(Shape starts, ClampedStarts(prim, inputs.subspan(1),
                                                   operand.shape(), sizes));
  IDX_RETURN_IF_ERROR(CheckOutput(ctx, operand.dtype(), sizes));
  Array out(operand.dtype(), sizes);
  Shape src(operand.rank());
  int64_t out_flat = 0;
  IDX_RETURN_IF_ERROR(ForEachIndex(sizes, [&](const Shape& index) {
    for (int d = 0; d < operand.rank(); ++d) src[d] = starts[d] + index[d];
    CopyElement(operand, operand.FlatIndex(src), out, out_flat++);
    return absl::OkStatus();
  }));
  std::vector<Array> result;
  result.push_back(std::move(out));
  return result;
}

absl::StatusOr<std::vector<Array>> DynamicUpdateSliceKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  const absl::string_view prim = "dynamic_update_slice";
  if (inputs.size() < 2) return Invalid(prim, "missing operand or update");
  const Array& operand = inputs[0];
  const Array& update = inputs[1];
  IDX_RETURN_IF_ERROR(CheckCopyable(prim, operand, "operand"));
  if (update.dtype() != operand.dtype() || update.rank() != operand.rank()) {
    return Invalid(
        prim,
        absl::StrCat("update ", update.TypeString(), " does not match operand ",
                     operand.TypeString(), " in dtype or rank"));
  }
  if (inputs.size() != static_cast<size_t>(2 + operand.rank())) {
    return Invalid(prim,
                   absl::StrCat("operand ", operand.TypeString(), " needs ",
                                operand.rank(), " start indices, got ",
                                inputs.size() - 2));
  }
  IDX_ASSIGN_OR_RETURN(
      Shape starts,
      ClampedStarts(prim, inputs.subspan(2), operand.shape(), update.shape()));
  IDX_RETURN_IF_ERROR(CheckOutput(ctx, operand.dtype(), operand.shape()));
  Array out = operand;
  Shape dst(operand.rank());
  int64_t update_flat = 0;
  IDX_RETURN_IF_ERROR(ForEachIndex(update.shape(), [&](const Shape& index) {
    for (int d = 0; d < operand.rank(); ++d) dst[d] = starts[d] + index[d];
    CopyElement(update, update_flat++, out, out.FlatIndex(dst));
    return absl::OkStatus();
  }));
  std::vector<Array> result;
  result.push_back(std::move(out));
  return result;
}

}  // namespace

void RegisterIndexingKernels() {
  RegisterEvalKernel("gather", GatherKernel);
  for (const char* name : {"scatter", "scatter-add", "scatter-sub",
                           "scatter-mul", "scatter-min", "scatter-max"}) {
    RegisterEvalKernel(name, ScatterKernel);
  }
  RegisterEvalKernel("dynamic_slice", DynamicSliceKernel);
  RegisterEvalKernel("dynamic_update_slice", DynamicUpdateSliceKernel);
}

}  // namespace jax2onnx::jaxpr
