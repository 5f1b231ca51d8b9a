// Primitives that current JAX emits for ordinary program code
// (jax/_src/lax/lax.py, debugging.py, core.py, xla_metadata.py,
// shard_alike.py, export/shape_poly.py, custom_derivatives.py,
// control_flow/conditionals.py at jax-v0.11.0 and main):
//
//   stack[axis]               operands of one type -> one more axis at `axis`
//   unstack[axis]             one operand -> shape[axis] results, axis removed
//   tile[reps]                shape * reps (len(reps) == rank)
//   empty[dtype out_sharding shape] / empty[dtype] (<= 0.7.1, rank 0)
//   empty2[dtype memory_space] (>= 0.8.0) / empty2[dtype] (0.7.2): rank 0
//   zeros_like, random_clone  the operand's type
//   tie                       (x, y) -> y
//   shard_alike               (x, y) -> (x, y), shapes equal
//   xla_metadata_value[xla_metadata_kvs]   identity
//   dce_sink[prevent_mlir_dce] (>= 0.7.0; no param before)   no results
//   debug_print[fmt has_placeholders in_tree logging_record np_printoptions
//               ordered partitioned static_args]              no results
//   debug_callback[callback effect partitioned]               no results
//   platform_index[platforms] -> i32[]
//   dim_as_value[dim]         -> an integer scalar (i32, or i64 under x64)
//   dimension_size[dimension] x -> x.shape[dimension] as such a scalar
//   shape_assertion[error_message] ok *inputs  (jax.export's checks of the
//                             argument shapes: ok a bool scalar, the inputs
//                             integer scalars its message quotes as {k})
//                             no results
//   calls: eval_jaxpr[call_jaxpr] (main) / eval_jaxpr[jaxpr] (loops.py),
//   xla_metadata_call[ad_metadata jaxpr xla_metadata], composite[attributes
//   jaxpr name version], custom_jvp_call_jaxpr[fun_jaxpr jvp_jaxpr_thunk
//   num_consts symbolic_zeros], linear_call[callee num_callee_consts num_res
//   transpose_thunk], remat_opt[fun_jaxpr_thunk fwd_jaxpr num_consts num_res]:
//   the callee's signature against the operands; the results are the callee's
//   outputs.
//
// Every rule reads each param the primitive prints, so a missing one is a
// located error.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jaxpr/program_params.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/typecheck/rules.h"

namespace jax2onnx::jaxpr::typecheck {
namespace {

absl::Status StackRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.ArityRange(1, -1));
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.SameDTypes());
  J2O_ASSIGN_OR_RETURN(int64_t axis, ctx.Int("axis"));
  int typed = 0;
  while (typed + 1 < ctx.num_in() && ctx.weak(typed)) ++typed;
  const Aval& first = ctx.in(typed);
  // JAX canonicalizes the axis against rank + 1 before binding.
  J2O_RETURN_IF_ERROR(ctx.Axis(axis, first.rank() + 1, "axis"));
  for (int i = 0; i < ctx.num_in(); ++i) {
    if (!ShapeEqual(ctx.in(i).shape, first.shape)) {
      return ctx.Fail(absl::StrCat("all operands must have the same shape; ",
                                   "operand ", i, " is ",
                                   ShapeString(ctx.in(i).shape), ", operand ",
                                   typed, " is ", ShapeString(first.shape)));
    }
  }
  std::vector<DimExpr> shape = first.shape;
  shape.insert(shape.begin() + axis, C(ctx.num_in()));
  ctx.SetResult(WithShape(first, std::move(shape)));
  return absl::OkStatus();
}

absl::Status UnstackRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Shaped(0));
  J2O_ASSIGN_OR_RETURN(int64_t axis, ctx.Int("axis"));
  const Aval& x = ctx.in(0);
  if (x.rank() == 0) return ctx.Fail("requires an operand of rank > 0");
  J2O_RETURN_IF_ERROR(ctx.Axis(axis, x.rank(), "axis"));
  const std::optional<int64_t> n = DimConst(x.shape[axis]);
  if (!n) {
    return ctx.Fail(absl::StrCat("axis ", axis, " has symbolic size ",
                                 x.shape[axis].ToString(),
                                 "; the number of results must be known"));
  }
  std::vector<DimExpr> shape = x.shape;
  shape.erase(shape.begin() + axis);
  ctx.SetResults(std::vector<std::optional<Aval>>(
      static_cast<size_t>(*n), WithShape(x, std::move(shape))));
  return absl::OkStatus();
}

absl::Status TileRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Shaped(0));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> reps, ctx.Ints("reps"));
  const Aval& x = ctx.in(0);
  if (static_cast<int>(reps.size()) != x.rank()) {
    return ctx.Fail(absl::StrCat("reps has ", reps.size(),
                                 " entries for an operand of rank ", x.rank()));
  }
  std::vector<DimExpr> shape = x.shape;
  for (size_t a = 0; a < reps.size(); ++a) {
    if (reps[a] < 0) return ctx.Fail("reps must be >= 0");
    shape[a] = DimMulConst(shape[a], reps[a]);
  }
  ctx.SetResult(WithShape(x, std::move(shape)));
  return absl::OkStatus();
}

// A dtype JAX can allocate: arrays of numbers or bools (not keys, float0).
absl::StatusOr<DType> AllocDType(RuleContext& ctx) {
  J2O_ASSIGN_OR_RETURN(DType dtype, ctx.DTypeParam("dtype"));
  if (dtype == DType::kOther) {
    return ctx.Fail(absl::StrCat("dtype ",
                                 ctx.params().Find("dtype")->ToString(),
                                 " is not an array dtype"));
  }
  return dtype;
}

absl::Status EmptyRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(0));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_ASSIGN_OR_RETURN(DType dtype, AllocDType(ctx));
  std::vector<DimExpr> shape;
  // JAX <= 0.7.1 binds empty with only `dtype` (a scalar); newer releases
  // print `shape` and `out_sharding` (None or a sharding: no computation).
  if (ctx.params().Has("shape")) {
    J2O_RETURN_IF_ERROR(ctx.Has("out_sharding"));
    J2O_ASSIGN_OR_RETURN(shape, ctx.Dims("shape"));
    for (const DimExpr& d : shape) {
      if (DimConst(d).value_or(0) < 0) return ctx.Fail("negative size");
    }
  }
  ctx.SetResult(MakeAval(dtype, std::move(shape)));
  return absl::OkStatus();
}

absl::Status Empty2Rule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(0));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_ASSIGN_OR_RETURN(DType dtype, AllocDType(ctx));
  // `memory_space` (MemorySpace.Device/Host/Any) since 0.8.0: placement only.
  if (const ParamValue* m = ctx.params().Find("memory_space")) {
    if (m->kind() != ParamValue::Kind::kName) {
      return ctx.Fail(absl::StrCat("memory_space ", m->ToString(),
                                   " is not a MemorySpace"));
    }
  }
  ctx.SetResult(MakeAval(dtype, {}));
  return absl::OkStatus();
}

absl::Status ZerosLikeRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  ctx.SetResult(ctx.in(0));
  return absl::OkStatus();
}

absl::Status TieRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(2));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  ctx.SetResult(ctx.in(1));
  return absl::OkStatus();
}

absl::Status ShardAlikeRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(2));
  J2O_RETURN_IF_ERROR(ctx.Outputs(2));
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  if (!ShapeEqual(ctx.in(0).shape, ctx.in(1).shape)) {
    return ctx.Fail(absl::StrCat("operand shapes ",
                                 ShapeString(ctx.in(0).shape), " and ",
                                 ShapeString(ctx.in(1).shape), " differ"));
  }
  ctx.SetResults({ctx.in(0), ctx.in(1)});
  return absl::OkStatus();
}

absl::Status XlaMetadataValueRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.Has("xla_metadata_kvs"));
  ctx.SetResult(ctx.in(0));
  return absl::OkStatus();
}

absl::Status DceSinkRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(0));
  if (ctx.params().Has("prevent_mlir_dce")) {
    J2O_RETURN_IF_ERROR(ctx.Bool("prevent_mlir_dce").status());
  }
  ctx.SetResults({});
  return absl::OkStatus();
}

absl::Status DebugPrintRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Outputs(0));
  for (const char* key :
       {"fmt", "has_placeholders", "in_tree", "np_printoptions", "ordered",
        "partitioned", "static_args"}) {
    J2O_RETURN_IF_ERROR(ctx.Has(key));
  }
  J2O_RETURN_IF_ERROR(ctx.Bool("ordered").status());
  J2O_RETURN_IF_ERROR(ctx.Bool("partitioned").status());
  J2O_RETURN_IF_ERROR(ctx.Bool("has_placeholders").status());
  ctx.SetResults({});
  return absl::OkStatus();
}

// jax.debug.print / jax.debug.callback before 0.7.2: `callback` and `effect`
// (Debug or OrderedDebug), `partitioned` since 0.4.31.
absl::Status DebugCallbackRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Outputs(0));
  J2O_RETURN_IF_ERROR(ctx.Has("callback"));
  J2O_ASSIGN_OR_RETURN(const ParamValue* effect, ctx.params().Get("effect"));
  const std::string e = effect->ToString();
  if (e != "Debug" && e != "OrderedDebug") {
    return ctx.Fail(
        absl::StrCat("effect ", e, " is not Debug or OrderedDebug"));
  }
  if (ctx.params().Has("partitioned")) {
    J2O_RETURN_IF_ERROR(ctx.Bool("partitioned").status());
  }
  ctx.SetResults({});
  return absl::OkStatus();
}

absl::Status PlatformIndexRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(0));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_ASSIGN_OR_RETURN(const ParamValue* p, ctx.params().Get("platforms"));
  if (p->kind() != ParamValue::Kind::kTuple) {
    return ctx.Fail("platforms must be a tuple of platform tuples or None");
  }
  ctx.SetResult(MakeAval(DType::kI32, {}));
  return absl::OkStatus();
}

absl::Status DimAsValueRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(0));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(DimAsValueExpr(ctx.eqn()).status());
  // core.dim_value_dtype(): int64 under jax_enable_x64, else int32.
  const DType declared = ctx.out(0).dtype;
  const DType dtype = declared == DType::kI64 ? DType::kI64 : DType::kI32;
  ctx.SetResult(MakeAval(dtype, {}));
  return absl::OkStatus();
}

// jax.export's dimension_size_p (export/shape_poly.py): the operand's
// size along `dimension`, as core.dim_value_aval().
absl::Status DimensionSizeRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Shaped(0));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_ASSIGN_OR_RETURN(int64_t dimension, ctx.Int("dimension"));
  J2O_RETURN_IF_ERROR(ctx.Axis(dimension, ctx.in(0).rank(), "dimension"));
  const DType dtype =
      ctx.out(0).dtype == DType::kI64 ? DType::kI64 : DType::kI32;
  ctx.SetResult(MakeAval(dtype, {}));
  return absl::OkStatus();
}

// jax.export's shape_assertion_p: `ok` (bool[]) must hold; the remaining
// operands are the integer scalars `error_message` quotes as {0}, {1}, ...
absl::Status ShapeAssertionRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.ArityRange(1, -1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(0));
  J2O_RETURN_IF_ERROR(ctx.Has("error_message"));
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  if (ctx.in(0).dtype != DType::kBool || ctx.in(0).rank() != 0) {
    return ctx.Fail(absl::StrCat("the asserted operand must be bool[], not ",
                                 ctx.in(0).ToString()));
  }
  for (int i = 1; i < ctx.num_in(); ++i) {
    if (!IsInteger(ctx.in(i).dtype) || ctx.in(i).rank() != 0) {
      return ctx.Fail(absl::StrCat("message operand ", i - 1,
                                   " must be an integer scalar, not ",
                                   ctx.in(i).ToString()));
    }
  }
  ctx.SetResults({});
  return absl::OkStatus();
}

// The call-like primitives: `key` holds the callee, `ints` the count params.
absl::Status CheckCall(RuleContext& ctx, const char* key,
                       std::vector<const char*> ints,
                       std::vector<const char*> others) {
  for (const char* k : ints) {
    J2O_ASSIGN_OR_RETURN(int64_t v, ctx.Int(k));
    if (v < 0 || v > ctx.num_in()) {
      return ctx.Fail(absl::StrCat(k, "=", v, " is outside 0..", ctx.num_in()));
    }
  }
  for (const char* k : others) J2O_RETURN_IF_ERROR(ctx.Has(k));
  J2O_ASSIGN_OR_RETURN(const ClosedJaxpr* callee, ctx.Jaxpr(key));
  J2O_RETURN_IF_ERROR(
      MatchTypes(ctx, "callee inputs", InvarAvals(*callee), ctx.ins()));
  const std::vector<Aval> outs = OutvarAvals(*callee);
  ctx.SetResults(std::vector<std::optional<Aval>>(outs.begin(), outs.end()));
  return absl::OkStatus();
}

absl::Status EvalJaxprRule(RuleContext& ctx) {
  // core.eval_jaxpr_p (JAX main) prints `call_jaxpr`; the scan-internal
  // eval_jaxpr_p of control_flow/loops.py (0.4.30 .. 0.11) binds `jaxpr`.
  return CheckCall(ctx, ctx.params().Has("jaxpr") ? "jaxpr" : "call_jaxpr", {},
                   {});
}
absl::Status XlaMetadataCallRule(RuleContext& ctx) {
  return CheckCall(ctx, "jaxpr", {}, {"xla_metadata", "ad_metadata"});
}
absl::Status CompositeRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Int("version").status());
  return CheckCall(ctx, "jaxpr", {}, {"name", "attributes"});
}
absl::Status CustomJvpCallJaxprRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Bool("symbolic_zeros").status());
  return CheckCall(ctx, "fun_jaxpr", {"num_consts"}, {"jvp_jaxpr_thunk"});
}
absl::Status LinearCallRule(RuleContext& ctx) {
  return CheckCall(ctx, "callee", {"num_callee_consts", "num_res"},
                   {"transpose_thunk"});
}
absl::Status RematOptRule(RuleContext& ctx) {
  J2O_ASSIGN_OR_RETURN(int64_t num_res, ctx.Int("num_res"));
  if (num_res < 0 || num_res > ctx.num_out()) {
    return ctx.Fail(absl::StrCat("num_res=", num_res, " exceeds the ",
                                 ctx.num_out(), " results"));
  }
  return CheckCall(ctx, "fwd_jaxpr", {"num_consts"}, {"fun_jaxpr_thunk"});
}

}  // namespace

void RegisterProgramRules(RuleTable& table) {
  table["stack"] = {&StackRule};
  table["unstack"] = {&UnstackRule};
  table["tile"] = {&TileRule};
  table["empty"] = {&EmptyRule};
  table["empty2"] = {&Empty2Rule};
  table["zeros_like"] = {&ZerosLikeRule};
  // random_clone (jax/_src/random/core.py): abstract eval `lambda x: x`.
  table["random_clone"] = {&ZerosLikeRule};
  table["tie"] = {&TieRule};
  table["shard_alike"] = {&ShardAlikeRule};
  table["xla_metadata_value"] = {&XlaMetadataValueRule};
  table["dce_sink"] = {&DceSinkRule};
  table["debug_print"] = {&DebugPrintRule};
  table["debug_callback"] = {&DebugCallbackRule};
  table["platform_index"] = {&PlatformIndexRule};
  table["dim_as_value"] = {&DimAsValueRule};
  table["dimension_size"] = {&DimensionSizeRule};
  table["shape_assertion"] = {&ShapeAssertionRule};
  table["eval_jaxpr"] = {&EvalJaxprRule};
  table["xla_metadata_call"] = {&XlaMetadataCallRule};
  table["composite"] = {&CompositeRule};
  table["custom_jvp_call_jaxpr"] = {&CustomJvpCallJaxprRule};
  table["linear_call"] = {&LinearCallRule};
  table["remat_opt"] = {&RematOptRule};
}

}  // namespace jax2onnx::jaxpr::typecheck
