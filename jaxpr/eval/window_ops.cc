// Reference kernels for windowed ops with XLA semantics: reduce_window_sum /
// _max / _min, generic reduce_window (a reducer jaxpr applied pairwise),
// select_and_scatter_add, generic select_and_scatter and
// select_and_gather_add.
//
// Windows follow XLA ReduceWindow: the operand is base-dilated and padded;
// window element k of output y sits at padded position
// y*stride + k*window_dilation. Padding and dilation holes hold the init
// value, which is also where every accumulator starts, so they are simply
// skipped. Elements are visited in row-major window order, which decides
// ties in select_and_scatter_add (the first max/min wins).
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/eval/linalg_internal.h"

namespace jax2onnx::jaxpr::linalg_internal {
namespace {

enum class WindowOp { kSum, kMax, kMin };

// Extremes of a dtype as its wide type.
template <typename W>
W Lowest(DType dtype);
template <typename W>
W Highest(DType dtype);

template <>
double Lowest<double>(DType) {
  return -std::numeric_limits<double>::infinity();
}
template <>
double Highest<double>(DType) {
  return std::numeric_limits<double>::infinity();
}
template <>
int64_t Lowest<int64_t>(DType d) {
  const int bits = ItemSize(d) * 8;
  return bits == 64 ? std::numeric_limits<int64_t>::min()
                    : -(int64_t{1} << (bits - 1));
}
template <>
int64_t Highest<int64_t>(DType d) {
  const int bits = ItemSize(d) * 8;
  return bits == 64 ? std::numeric_limits<int64_t>::max()
                    : (int64_t{1} << (bits - 1)) - 1;
}
template <>
uint64_t Lowest<uint64_t>(DType) {
  return 0;
}
template <>
uint64_t Highest<uint64_t>(DType d) {
  if (d == DType::kBool) return 1;
  const int bits = ItemSize(d) * 8;
  return bits == 64 ? std::numeric_limits<uint64_t>::max()
                    : (uint64_t{1} << bits) - 1;
}

// XLA max/min propagate NaN and order -0 below +0 (IEEE 754-2019
// maximum/minimum, as the StableHLO spec defines them for floats).
template <typename W>
W Max(W a, W b) {
  return a > b ? a : b;
}
template <typename W>
W Min(W a, W b) {
  return a < b ? a : b;
}
template <>
double Max<double>(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
template <>
double Min<double>(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// XLA sums f16/bf16 windows in the element type: the accumulator is
// rounded to it after every element. The double sum of two such values
// rounded to f32 and then to the element type is that rounding (f32 and
// double hold more than 2p+2 bits).
double RoundToNarrowFloat(double x, DType dtype) {
  if (dtype == DType::kBF16) {
    return BFloat16ToFloat(FloatToBFloat16(static_cast<float>(x)));
  }
  if (dtype == DType::kF16) return HalfToFloat(FloatToHalf(static_cast<float>(x)));
  return x;
}

template <typename W>
absl::StatusOr<Array> ReduceWindowTyped(const Array& operand,
                                        const WindowSpec& spec, WindowOp op) {
  const std::vector<W> in = Widen<W>(operand);
  const std::vector<int64_t> out_shape =
      WindowOutputShape(spec, operand.shape());
  std::vector<W> out(NumElements(out_shape));
  if (out.empty()) return Narrow(out, operand.dtype(), out_shape);
  W init{};
  if constexpr (!std::is_same_v<W, Complex>) {
    if (op == WindowOp::kMax) init = Lowest<W>(operand.dtype());
    if (op == WindowOp::kMin) init = Highest<W>(operand.dtype());
  }
  std::vector<int64_t> out_index(out_shape.size(), 0);
  int64_t flat = 0;
  do {
    W acc = init;
    for (int64_t p : WindowElements(spec, operand.shape(), out_index)) {
      if constexpr (std::is_same_v<W, Complex>) {
        acc = WAdd(acc, in[p]);  // the caller allows only sums on complex
      } else if (op == WindowOp::kSum) {
        acc = WAdd(acc, in[p]);
        if constexpr (std::is_same_v<W, double>) {
          acc = RoundToNarrowFloat(acc, operand.dtype());
        }
      } else if (op == WindowOp::kMax) {
        acc = Max(acc, in[p]);
      } else {
        acc = Min(acc, in[p]);
      }
    }
    out[flat++] = acc;
  } while (NextIndex(out_index, out_shape));
  return Narrow(out, operand.dtype(), out_shape);
}

template <WindowOp kOp>
absl::StatusOr<std::vector<Array>> ReduceWindowMonoidKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        ctx.eqn().primitive, " takes 1 operand, got ", inputs.size()));
  }
  const Array& operand = inputs[0];
  auto spec = GetWindowSpec(ctx.params(), operand.rank());
  if (!spec.ok()) return spec.status();
  auto family = FamilyOf(operand.dtype(), ctx.eqn().primitive);
  if (!family.ok()) return family.status();
  absl::StatusOr<Array> out;
  switch (*family) {
    case Family::kFloat:
      out = ReduceWindowTyped<double>(operand, *spec, kOp);
      break;
    case Family::kSigned:
      out = ReduceWindowTyped<int64_t>(operand, *spec, kOp);
      break;
    case Family::kUnsigned:
      out = ReduceWindowTyped<uint64_t>(operand, *spec, kOp);
      break;
    case Family::kComplex:
      if (kOp != WindowOp::kSum) {
        return absl::InvalidArgumentError(absl::StrCat(
            ctx.eqn().primitive, " is not defined on complex operands"));
      }
      out = ReduceWindowTyped<Complex>(operand, *spec, kOp);
      break;
  }
  if (!out.ok()) return out.status();
  return std::vector<Array>{*std::move(out)};
}

// The reducer jaxpr of a generic window op; its `consts` param must be empty
// because constant values cannot be recovered from the printed text.
absl::StatusOr<const ClosedJaxpr*> ReducerJaxpr(const Params& params,
                                                absl::string_view key,
                                                absl::string_view consts_key) {
  auto jaxpr = params.GetJaxpr(key);
  if (!jaxpr.ok()) return jaxpr.status();
  if (const ParamValue* consts = params.Find(consts_key);
      consts != nullptr && !consts->items().empty()) {
    return absl::UnimplementedError(absl::StrCat(
        "param '", consts_key, "' is not empty (", consts->ToString(),
        "): reducer constants are not supported"));
  }
  if (!(*jaxpr)->constvars.empty()) {
    return absl::UnimplementedError(
        absl::StrCat("param '", key,
                     "' has constvars: reducer constants are not supported"));
  }
  return *jaxpr;
}

// reduce_window[jaxpr=...] *operands *init_values: accumulators start at the
// init values and absorb each window element as jaxpr(*accs, *elements).
absl::StatusOr<std::vector<Array>> ReduceWindowGenericKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.empty() || inputs.size() % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reduce_window takes operands then as many init values, got ",
        inputs.size(), " inputs"));
  }
  const size_t n = inputs.size() / 2;
  auto reducer = ReducerJaxpr(ctx.params(), "jaxpr", "consts");
  if (!reducer.ok()) return reducer.status();
  const std::vector<int64_t>& shape = inputs[0].shape();
  for (size_t i = 0; i < n; ++i) {
    if (inputs[i].shape() != shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reduce_window operands differ in shape: ", inputs[0].TypeString(),
          " vs ", inputs[i].TypeString()));
    }
    if (inputs[n + i].rank() != 0 ||
        inputs[n + i].dtype() != inputs[i].dtype()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reduce_window init value ", i, " is ", inputs[n + i].TypeString(),
          ", expected a scalar of the operand dtype ",
          ShortName(inputs[i].dtype())));
    }
  }
  auto spec = GetWindowSpec(ctx.params(), shape.size());
  if (!spec.ok()) return spec.status();
  const std::vector<int64_t> out_shape = WindowOutputShape(*spec, shape);
  std::vector<Array> outs;
  for (size_t i = 0; i < n; ++i)
    outs.emplace_back(inputs[i].dtype(), out_shape);
  if (NumElements(out_shape) == 0) return outs;
  std::vector<int64_t> out_index(out_shape.size(), 0);
  int64_t flat = 0;
  do {
    std::vector<Array> accs(inputs.begin() + n, inputs.end());
    for (int64_t p : WindowElements(*spec, shape, out_index)) {
      std::vector<Array> args = accs;
      for (size_t i = 0; i < n; ++i) args.push_back(ScalarAt(inputs[i], p));
      auto result = ctx.Call(**reducer, {}, args);
      if (!result.ok()) return result.status();
      if (result->size() != n) {
        return absl::InvalidArgumentError(
            absl::StrCat("reduce_window reducer returns ", result->size(),
                         " values, expected ", n));
      }
      accs = *std::move(result);
    }
    for (size_t i = 0; i < n; ++i) StoreScalar(accs[i], flat, &outs[i]);
    ++flat;
  } while (NextIndex(out_index, out_shape));
  return outs;
}

// select_prim of select_and_scatter_add / select_and_gather_add: `ge` picks
// the first maximum, `le` the first minimum.
template <typename W>
absl::StatusOr<bool (*)(W, W)> SelectFn(const Params& params) {
  auto prim = params.GetName("select_prim");
  if (!prim.ok()) return prim.status();
  if (*prim == "ge") return +[](W a, W b) { return a >= b; };
  if (*prim == "le") return +[](W a, W b) { return a <= b; };
  if (*prim == "gt") return +[](W a, W b) { return a > b; };
  if (*prim == "lt") return +[](W a, W b) { return a < b; };
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported select_prim '", *prim, "'"));
}

// Index (into WindowElements order) of the element selected in a window:
// the running choice is replaced whenever select(chosen, candidate) fails.
template <typename W>
int64_t SelectInWindow(const std::vector<int64_t>& elements,
                       const std::vector<W>& values, bool (*select)(W, W)) {
  int64_t chosen = elements[0];
  for (size_t i = 1; i < elements.size(); ++i) {
    if (!select(values[chosen], values[elements[i]])) chosen = elements[i];
  }
  return chosen;
}

// select_and_scatter_add source operand: XLA SelectAndScatter with init 0
// and add as the scatter function.
template <typename S, typename K>
absl::StatusOr<Array> SelectAndScatterAddTyped(const EvalContext& ctx,
                                               const Array& source,
                                               const Array& operand,
                                               const WindowSpec& spec) {
  auto select = SelectFn<K>(ctx.params());
  if (!select.ok()) return select.status();
  const std::vector<K> keys = Widen<K>(operand);
  const std::vector<S> src = Widen<S>(source);
  std::vector<S> out(operand.num_elements(), S{});
  const std::vector<int64_t>& src_shape = source.shape();
  if (source.num_elements() > 0) {
    std::vector<int64_t> index(src_shape.size(), 0);
    int64_t flat = 0;
    do {
      const std::vector<int64_t> elements =
          WindowElements(spec, operand.shape(), index);
      if (!elements.empty()) {
        const int64_t chosen = SelectInWindow(elements, keys, *select);
        out[chosen] = WAdd(out[chosen], src[flat]);
      }
      ++flat;
    } while (NextIndex(index, src_shape));
  }
  return Narrow(out, source.dtype(), operand.shape());
}

template <typename K>
absl::StatusOr<Array> SelectAndScatterAddBySource(const EvalContext& ctx,
                                                  const Array& source,
                                                  const Array& operand,
                                                  const WindowSpec& spec) {
  auto family = FamilyOf(source.dtype(), "select_and_scatter_add source");
  if (!family.ok()) return family.status();
  switch (*family) {
    case Family::kFloat:
      return SelectAndScatterAddTyped<double, K>(ctx, source, operand, spec);
    case Family::kSigned:
      return SelectAndScatterAddTyped<int64_t, K>(ctx, source, operand, spec);
    case Family::kUnsigned:
      return SelectAndScatterAddTyped<uint64_t, K>(ctx, source, operand, spec);
    case Family::kComplex:
      return SelectAndScatterAddTyped<Complex, K>(ctx, source, operand, spec);
  }
  return absl::InternalError("unreachable");
}

absl::Status CheckSourceShape(const WindowSpec& spec, const Array& operand,
                              const Array& source, absl::string_view prim) {
  if (WindowOutputShape(spec, operand.shape()) != source.shape()) {
    return absl::InvalidArgumentError(
        absl::StrCat(prim, ": source ", source.TypeString(),
                     " does not match the window output shape of operand ",
                     operand.TypeString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Array>> SelectAndScatterAddKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("select_and_scatter_add takes (source, operand), got ",
                     inputs.size(), " operands"));
  }
  const Array& source = inputs[0];
  const Array& operand = inputs[1];
  auto spec = GetWindowSpec(ctx.params(), operand.rank());
  if (!spec.ok()) return spec.status();
  if (auto s =
          CheckSourceShape(*spec, operand, source, "select_and_scatter_add");
      !s.ok()) {
    return s;
  }
  auto family = FamilyOf(operand.dtype(), "select_and_scatter_add operand");
  if (!family.ok()) return family.status();
  absl::StatusOr<Array> out;
  switch (*family) {
    case Family::kFloat:
      out = SelectAndScatterAddBySource<double>(ctx, source, operand, *spec);
      break;
    case Family::kSigned:
      out = SelectAndScatterAddBySource<int64_t>(ctx, source, operand, *spec);
      break;
    case Family::kUnsigned:
      out = SelectAndScatterAddBySource<uint64_t>(ctx, source, operand, *spec);
      break;
    case Family::kComplex:
      return absl::InvalidArgumentError(
          "select_and_scatter_add: complex operands cannot be compared");
  }
  if (!out.ok()) return out.status();
  return std::vector<Array>{*std::move(out)};
}

// select_and_scatter[select_jaxpr scatter_jaxpr ...] operand source init:
// the output starts as init everywhere; each source value is combined into
// the position its window selects as scatter_jaxpr(source, current), the
// argument order of XLA's HloEvaluator.
absl::StatusOr<std::vector<Array>> SelectAndScatterKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "select_and_scatter takes (operand, source, init_value), got ",
        inputs.size(), " operands"));
  }
  const Array& operand = inputs[0];
  const Array& source = inputs[1];
  const Array& init = inputs[2];
  auto select = ReducerJaxpr(ctx.params(), "select_jaxpr", "select_consts");
  if (!select.ok()) return select.status();
  auto scatter = ReducerJaxpr(ctx.params(), "scatter_jaxpr", "scatter_consts");
  if (!scatter.ok()) return scatter.status();
  auto spec = GetWindowSpec(ctx.params(), operand.rank());
  if (!spec.ok()) return spec.status();
  if (auto s = CheckSourceShape(*spec, operand, source, "select_and_scatter");
      !s.ok()) {
    return s;
  }
  if (init.rank() != 0 || init.dtype() != source.dtype()) {
    return absl::InvalidArgumentError(
        absl::StrCat("select_and_scatter init value is ", init.TypeString(),
                     ", expected a scalar ", ShortName(source.dtype())));
  }
  Array out(source.dtype(), operand.shape());
  for (int64_t i = 0; i < out.num_elements(); ++i) StoreScalar(init, i, &out);
  if (source.num_elements() == 0) return std::vector<Array>{out};
  std::vector<int64_t> index(source.rank(), 0);
  int64_t flat = 0;
  do {
    const std::vector<int64_t> elements =
        WindowElements(*spec, operand.shape(), index);
    if (!elements.empty()) {
      int64_t chosen = elements[0];
      for (size_t i = 1; i < elements.size(); ++i) {
        auto keep = ctx.Call(
            **select, {},
            {ScalarAt(operand, chosen), ScalarAt(operand, elements[i])});
        if (!keep.ok()) return keep.status();
        if (keep->size() != 1 || (*keep)[0].dtype() != DType::kBool) {
          return absl::InvalidArgumentError(
              "select_and_scatter select_jaxpr must return one bool");
        }
        if ((*keep)[0].GetAsInt64(0) == 0) chosen = elements[i];
      }
      auto combined = ctx.Call(**scatter, {},
                               {ScalarAt(source, flat), ScalarAt(out, chosen)});
      if (!combined.ok()) return combined.status();
      if (combined->size() != 1) {
        return absl::InvalidArgumentError(
            "select_and_scatter scatter_jaxpr must return one value");
      }
      StoreScalar((*combined)[0], chosen, &out);
    }
    ++flat;
  } while (NextIndex(index, source.shape()));
  return std::vector<Array>{out};
}

// select_and_gather_add tangents operand: for each window, the tangent at
// the position select_prim picks among the operand values. This is JAX's
// pair reduction: (key, value) accumulators start at (-inf or +inf, 0) and
// keep the accumulator while select_prim(acc_key, key) holds.
template <typename K>
absl::StatusOr<Array> SelectAndGatherAddTyped(const EvalContext& ctx,
                                              const Array& tangents,
                                              const Array& operand,
                                              const WindowSpec& spec) {
  auto select = SelectFn<K>(ctx.params());
  if (!select.ok()) return select.status();
  auto prim = ctx.params().GetName("select_prim");
  if (!prim.ok()) return prim.status();
  const bool picks_max = *prim == "ge" || *prim == "gt";
  const K init =
      picks_max ? Lowest<K>(operand.dtype()) : Highest<K>(operand.dtype());
  const std::vector<K> keys = Widen<K>(operand);
  const std::vector<int64_t> out_shape =
      WindowOutputShape(spec, operand.shape());
  Array out(tangents.dtype(), out_shape);
  if (out.num_elements() == 0) return out;
  std::vector<int64_t> index(out_shape.size(), 0);
  int64_t flat = 0;
  do {
    K acc_key = init;
    int64_t acc_pos = -1;  // -1: the init value's tangent, zero
    for (int64_t p : WindowElements(spec, operand.shape(), index)) {
      if (!(*select)(acc_key, keys[p])) {
        acc_key = keys[p];
        acc_pos = p;
      }
    }
    if (acc_pos >= 0) StoreScalar(ScalarAt(tangents, acc_pos), flat, &out);
    ++flat;
  } while (NextIndex(index, out_shape));
  return out;
}

absl::StatusOr<std::vector<Array>> SelectAndGatherAddKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("select_and_gather_add takes (tangents, operand), got ",
                     inputs.size(), " operands"));
  }
  const Array& tangents = inputs[0];
  const Array& operand = inputs[1];
  if (tangents.shape() != operand.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "select_and_gather_add: tangents ", tangents.TypeString(),
        " and operand ", operand.TypeString(), " differ in shape"));
  }
  auto spec = GetWindowSpec(ctx.params(), operand.rank());
  if (!spec.ok()) return spec.status();
  auto family = FamilyOf(operand.dtype(), "select_and_gather_add operand");
  if (!family.ok()) return family.status();
  absl::StatusOr<Array> out;
  switch (*family) {
    case Family::kFloat:
      out = SelectAndGatherAddTyped<double>(ctx, tangents, operand, *spec);
      break;
    case Family::kSigned:
      out = SelectAndGatherAddTyped<int64_t>(ctx, tangents, operand, *spec);
      break;
    case Family::kUnsigned:
      out = SelectAndGatherAddTyped<uint64_t>(ctx, tangents, operand, *spec);
      break;
    case Family::kComplex:
      return absl::InvalidArgumentError(
          "select_and_gather_add: complex operands cannot be compared");
  }
  if (!out.ok()) return out.status();
  return std::vector<Array>{*std::move(out)};
}

}  // namespace

void RegisterWindowKernels() {
  RegisterEvalKernel("reduce_window_sum",
                     ReduceWindowMonoidKernel<WindowOp::kSum>);
  RegisterEvalKernel("reduce_window_max",
                     ReduceWindowMonoidKernel<WindowOp::kMax>);
  RegisterEvalKernel("reduce_window_min",
                     ReduceWindowMonoidKernel<WindowOp::kMin>);
  RegisterEvalKernel("reduce_window", ReduceWindowGenericKernel);
  RegisterEvalKernel("select_and_scatter_add", SelectAndScatterAddKernel);
  RegisterEvalKernel("select_and_scatter", SelectAndScatterKernel);
  RegisterEvalKernel("select_and_gather_add", SelectAndGatherAddKernel);
}

}  // namespace jax2onnx::jaxpr::linalg_internal
