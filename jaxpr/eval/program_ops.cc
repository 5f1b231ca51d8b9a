// Interpreter kernels of the primitives current JAX emits for ordinary code
// (see jaxpr/typecheck/rules_program.cc for their params):
//   stack / unstack / tile: byte copies by index math, as XLA's
//     concatenate-of-reshapes, slice-and-reshape and broadcast-reshape;
//   empty / empty2 / zeros_like: zeros. JAX leaves `empty`'s values
//     unspecified (XLA's AllocateBuffer on GPU/TPU); its CPU lowering
//     (`_empty_lower`) broadcasts a zero, which is what we compute;
//   tie: its second operand; shard_alike, xla_metadata_value, random_clone
//     (a copy of the key): identities;
//   dce_sink, debug_print, debug_callback: no results and no effect on any
//     value (the host print is dropped);
//   platform_index: the index JAX's CPU backend takes (program_params.h);
//   dim_as_value: the dimension's value under this run's symbol bindings;
//   dimension_size: the operand's size along `dimension`;
//   shape_assertion: an error quoting its message (with {k} formatted) when
//     the asserted operand is false, as jax.export's check of the argument
//     shapes fails the call;
//   eval_jaxpr, xla_metadata_call, composite, custom_jvp_call_jaxpr,
//     linear_call, remat_opt: evaluate the callee (composite: its
//     decomposition; linear_call: the forward callee; remat_opt: fwd_jaxpr,
//     whose outputs are the residuals then the primal outputs).
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "jaxpr/array.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/eval/kernels.h"
#include "jaxpr/eval/shape_util.h"
#include "jaxpr/program_params.h"

namespace jax2onnx::jaxpr {
namespace {

using Result = absl::StatusOr<std::vector<Array>>;

int64_t Product(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Result StackKernel(const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.empty()) return absl::InvalidArgumentError("stack of nothing");
  auto axis = ctx.params().GetInt("axis");
  if (!axis.ok()) return axis.status();
  const std::vector<int64_t>& shape = inputs[0].shape();
  if (*axis < 0 || *axis > static_cast<int64_t>(shape.size())) {
    return absl::InvalidArgumentError("stack axis out of range");
  }
  auto out = ctx.NewOutput(0);
  if (!out.ok()) return out.status();
  const int64_t n = static_cast<int64_t>(inputs.size());
  const int64_t outer = Product(absl::MakeSpan(shape).subspan(0, *axis));
  const size_t inner = static_cast<size_t>(
      Product(absl::MakeSpan(shape).subspan(*axis)) * ItemSize(out->dtype()));
  for (int64_t i = 0; i < n; ++i) {
    if (inputs[i].shape() != shape || inputs[i].dtype() != out->dtype()) {
      return absl::InvalidArgumentError("stack operands differ in type");
    }
    for (int64_t j = 0; j < outer; ++j) {
      std::memcpy(out->data() + (j * n + i) * inner,
                  inputs[i].data() + j * inner, inner);
    }
  }
  return std::vector<Array>{*std::move(out)};
}

Result UnstackKernel(const EvalContext& ctx, absl::Span<const Array> inputs) {
  auto axis = ctx.params().GetInt("axis");
  if (!axis.ok()) return axis.status();
  const Array& x = inputs[0];
  const std::vector<int64_t>& shape = x.shape();
  if (*axis < 0 || *axis >= static_cast<int64_t>(shape.size())) {
    return absl::InvalidArgumentError("unstack axis out of range");
  }
  const int64_t n = shape[*axis];
  if (n != ctx.num_outputs()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unstack of ", n, " rows declares ", ctx.num_outputs(), " results"));
  }
  const int64_t outer = Product(absl::MakeSpan(shape).subspan(0, *axis));
  const size_t inner = static_cast<size_t>(
      Product(absl::MakeSpan(shape).subspan(*axis + 1)) * ItemSize(x.dtype()));
  std::vector<Array> outs;
  for (int64_t i = 0; i < n; ++i) {
    auto out = ctx.NewOutput(static_cast<int>(i));
    if (!out.ok()) return out.status();
    for (int64_t j = 0; j < outer; ++j) {
      std::memcpy(out->data() + j * inner, x.data() + (j * n + i) * inner,
                  inner);
    }
    outs.push_back(*std::move(out));
  }
  return outs;
}

// out[i_0, ..., i_k] = x[i_0 mod d_0, ..., i_k mod d_k].
Result TileKernel(const EvalContext& ctx, absl::Span<const Array> inputs) {
  const Array& x = inputs[0];
  auto out = ctx.NewOutput(0);
  if (!out.ok()) return out.status();
  const std::vector<int64_t>& in_shape = x.shape();
  const std::vector<int64_t> out_shape = out->shape();
  if (out_shape.size() != in_shape.size()) {
    return absl::InvalidArgumentError("tile changes the rank");
  }
  std::vector<int64_t> src(in_shape.size());
  int64_t flat = 0;
  shape_util::ForEachIndex(out_shape, [&](const std::vector<int64_t>& index) {
    for (size_t a = 0; a < index.size(); ++a) src[a] = index[a] % in_shape[a];
    shape_util::CopyElement(x, shape_util::FlatIndexIn(in_shape, src), *out,
                            flat++);
  });
  return std::vector<Array>{*std::move(out)};
}

Result ZerosKernel(const EvalContext& ctx, absl::Span<const Array>) {
  auto out = ctx.NewOutput(0);
  if (!out.ok()) return out.status();
  return std::vector<Array>{*std::move(out)};
}

Result TieKernel(const EvalContext&, absl::Span<const Array> inputs) {
  return std::vector<Array>{inputs[1]};
}

Result IdentityKernel(const EvalContext&, absl::Span<const Array> inputs) {
  return std::vector<Array>(inputs.begin(), inputs.end());
}

Result NoResultsKernel(const EvalContext&, absl::Span<const Array>) {
  return std::vector<Array>{};
}

Result PlatformIndexKernel(const EvalContext& ctx, absl::Span<const Array>) {
  auto index = PlatformIndexForCpu(ctx.eqn());
  if (!index.ok()) return index.status();
  return std::vector<Array>{Array::ScalarFromInt64(DType::kI32, *index)};
}

Result DimAsValueKernel(const EvalContext& ctx, absl::Span<const Array>) {
  auto dim = DimAsValueExpr(ctx.eqn());
  if (!dim.ok()) return dim.status();
  auto value = dim->Evaluate(ctx.bindings());
  if (!value.ok()) return value.status();
  return std::vector<Array>{Array::ScalarFromInt64(ctx.OutputDType(0), *value)};
}

Result DimensionSizeKernel(const EvalContext& ctx,
                           absl::Span<const Array> inputs) {
  const ParamValue* p = ctx.eqn().params.Find("dimension");
  const int64_t dimension = p == nullptr ? -1 : p->int_value();
  if (dimension < 0 || dimension >= inputs[0].rank()) {
    return absl::InvalidArgumentError("dimension_size: dimension out of range");
  }
  return std::vector<Array>{
      Array::ScalarFromInt64(ctx.OutputDType(0), inputs[0].shape()[dimension])};
}

Result ShapeAssertionKernel(const EvalContext& ctx,
                            absl::Span<const Array> inputs) {
  if (inputs[0].GetAsInt64(0) != 0) return std::vector<Array>{};
  std::vector<std::optional<int64_t>> values;
  for (size_t i = 1; i < inputs.size(); ++i) {
    values.push_back(inputs[i].GetAsInt64(0));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "shape assertion failed: ",
      FormatShapeAssertionMessage(ShapeAssertionMessage(ctx.eqn()), values)));
}

// The callee param of each call-like primitive.
absl::string_view CalleeKey(const Eqn& eqn) {
  const std::string& primitive = eqn.primitive;
  if (primitive == "eval_jaxpr") {
    return eqn.params.Has("jaxpr") ? "jaxpr" : "call_jaxpr";
  }
  if (primitive == "custom_jvp_call_jaxpr") return "fun_jaxpr";
  if (primitive == "linear_call") return "callee";
  if (primitive == "remat_opt") return "fwd_jaxpr";
  return "jaxpr";  // xla_metadata_call, composite
}

Result CallLikeKernel(const EvalContext& ctx, absl::Span<const Array> inputs) {
  const absl::string_view key = CalleeKey(ctx.eqn());
  auto callee = ctx.params().GetJaxpr(key);
  if (!callee.ok()) return callee.status();
  if (!(*callee)->constvars.empty()) {
    return absl::UnimplementedError(absl::StrCat(
        "the nested jaxpr in param '", key, "' has ",
        (*callee)->constvars.size(),
        " constvars whose values are not part of the printed program"));
  }
  return ctx.Call(**callee, {}, inputs);
}

}  // namespace

void RegisterProgramKernels() {
  RegisterEvalKernel("stack", &StackKernel);
  RegisterEvalKernel("unstack", &UnstackKernel);
  RegisterEvalKernel("tile", &TileKernel);
  for (const char* name : {"empty", "empty2", "zeros_like"}) {
    RegisterEvalKernel(name, &ZerosKernel);
  }
  RegisterEvalKernel("tie", &TieKernel);
  for (const char* name :
       {"shard_alike", "xla_metadata_value", "random_clone"}) {
    RegisterEvalKernel(name, &IdentityKernel);
  }
  for (const char* name : {"dce_sink", "debug_print", "debug_callback"}) {
    RegisterEvalKernel(name, &NoResultsKernel);
  }
  RegisterEvalKernel("platform_index", &PlatformIndexKernel);
  RegisterEvalKernel("dim_as_value", &DimAsValueKernel);
  RegisterEvalKernel("dimension_size", &DimensionSizeKernel);
  RegisterEvalKernel("shape_assertion", &ShapeAssertionKernel);
  for (const char* name :
       {"eval_jaxpr", "xla_metadata_call", "composite", "custom_jvp_call_jaxpr",
        "linear_call", "remat_opt"}) {
    RegisterEvalKernel(name, &CallLikeKernel);
  }
}

}  // namespace jax2onnx::jaxpr
