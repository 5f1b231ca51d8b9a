// PRNG primitives (jax/_src/random/prng.py abstract evals: random_seed,
// random_wrap, random_unwrap, random_split, random_fold_in, random_bits,
// iota_2x32_shape; jax/_src/random/{threefry2x32,threefry4x32,philox2x32,
// philox4x32}.py: the block primitives; jax/_src/lax/lax.py:
// rng_bit_generator). Keys are `key<TAG>` arrays; their key data is
// u32[..., W] (jaxpr/prng.h).
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jaxpr/prng.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/typecheck/rules.h"
#include "jaxpr/xla_rng.h"

namespace jax2onnx::jaxpr::typecheck {
namespace {

Aval KeyAval(const Aval& like, std::vector<DimExpr> shape,
             std::string dtype_name) {
  Aval key = WithShape(like, std::move(shape));
  key.dtype = DType::kOther;
  key.dtype_name = std::move(dtype_name);
  return key;
}

std::string KeyDTypeName(KeyImpl impl) {
  return absl::StrCat("key<", KeyTag(impl), ">");
}

absl::Status KeyIn(const RuleContext& ctx, int i) {
  J2O_RETURN_IF_ERROR(ctx.Shaped(i));
  J2O_RETURN_IF_ERROR(ctx.Variable(i));
  if (!IsPrngKey(ctx.in(i))) {
    return ctx.Fail(absl::StrCat("operand ", i,
                                 " must be a PRNG key array, got ",
                                 ctx.in(i).ToString()));
  }
  return absl::OkStatus();
}

// `impl=fry4` (the key type's tag) or the implementation's name.
absl::StatusOr<KeyImpl> ImplParam(const RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Has("impl"));
  const std::string text = ctx.params().Find("impl")->ToString();
  const std::optional<KeyImpl> impl = KeyImplOfParam(text);
  if (!impl.has_value()) {
    return ctx.Fail(absl::StrCat(
        "impl=", text,
        ": only the threefry2x32 (fry), threefry4x32 (fry4), philox2x32 "
        "(phx2) and philox4x32 (phx4) implementations are supported"));
  }
  return *impl;
}

absl::Status RandomSeedRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.Shaped(0));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(0, kClassInt));
  J2O_ASSIGN_OR_RETURN(KeyImpl impl, ImplParam(ctx));
  ctx.SetResult(KeyAval(ctx.in(0), ctx.in(0).shape, KeyDTypeName(impl)));
  return absl::OkStatus();
}

absl::Status RandomWrapRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.Shaped(0));
  J2O_ASSIGN_OR_RETURN(KeyImpl impl, ImplParam(ctx));
  const Aval& data = ctx.in(0);
  if (data.dtype != DType::kU32 || data.rank() < 1 ||
      DimConst(data.shape.back()) != KeyWords(impl)) {
    return ctx.Fail(absl::StrCat(KeyName(impl), " key data must be u32[..., ",
                                 KeyWords(impl), "], got ", data.ToString()));
  }
  std::vector<DimExpr> shape = data.shape;
  shape.pop_back();
  ctx.SetResult(KeyAval(data, std::move(shape), KeyDTypeName(impl)));
  return absl::OkStatus();
}

absl::Status RandomUnwrapRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(KeyIn(ctx, 0));
  J2O_ASSIGN_OR_RETURN(Aval physical, PhysicalAval(ctx.in(0)));
  ctx.SetResult(std::move(physical));
  return absl::OkStatus();
}

absl::Status RandomSplitRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(KeyIn(ctx, 0));
  std::vector<DimExpr> shape = ctx.in(0).shape;
  if (ctx.params().Has("shape")) {
    J2O_ASSIGN_OR_RETURN(std::vector<int64_t> split, ctx.Ints("shape"));
    for (int64_t d : split) shape.push_back(C(d));
  } else {
    // Before JAX 0.4.16: random_split[count=n].
    J2O_ASSIGN_OR_RETURN(int64_t count, ctx.Int("count"));
    shape.push_back(C(count));
  }
  ctx.SetResult(KeyAval(ctx.in(0), std::move(shape), ctx.in(0).dtype_name));
  return absl::OkStatus();
}

absl::Status RandomFoldInRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(2));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(KeyIn(ctx, 0));
  J2O_RETURN_IF_ERROR(ctx.Shaped(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(1, kClassInt));
  // lax.broadcasting_shape_rule: equal ranks (or a scalar), dims equal or 1.
  const Aval& keys = ctx.in(0);
  const Aval& msgs = ctx.in(1);
  std::vector<DimExpr> shape = keys.shape;
  if (keys.rank() == 0) {
    shape = msgs.shape;
  } else if (msgs.rank() != 0) {
    if (msgs.rank() != keys.rank()) {
      return ctx.Fail(absl::StrCat("keys ", keys.ToString(), " and msgs ",
                                   msgs.ToString(), " differ in rank"));
    }
    for (int i = 0; i < keys.rank(); ++i) {
      if (DimConst(shape[i]) == 1) {
        shape[i] = msgs.shape[i];
      } else if (DimConst(msgs.shape[i]) != 1 &&
                 !DimEqual(shape[i], msgs.shape[i])) {
        return ctx.Fail(absl::StrCat("keys ", keys.ToString(), " and msgs ",
                                     msgs.ToString(),
                                     " are not broadcast-compatible"));
      }
    }
  }
  ctx.SetResult(KeyAval(keys, std::move(shape), keys.dtype_name));
  return absl::OkStatus();
}

absl::Status RandomBitsRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(KeyIn(ctx, 0));
  J2O_ASSIGN_OR_RETURN(int64_t bit_width, ctx.Int("bit_width"));
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> dims, ctx.Dims("shape"));
  DType dtype;
  switch (bit_width) {
    case 8:
      dtype = DType::kU8;
      break;
    case 16:
      dtype = DType::kU16;
      break;
    case 32:
      dtype = DType::kU32;
      break;
    case 64:
      dtype = DType::kU64;
      break;
    default:
      return ctx.Fail(absl::StrCat("bit_width=", bit_width,
                                   " is not one of 8, 16, 32, 64"));
  }
  std::vector<DimExpr> shape = ctx.in(0).shape;
  shape.insert(shape.end(), dims.begin(), dims.end());
  ctx.SetResult(MakeAval(dtype, std::move(shape)));
  return absl::OkStatus();
}

// threefry2x32 (4 -> 2), threefry4x32 (8 -> 4), philox2x32 (3 -> 2),
// philox4x32 (6 -> 4): u32 operands under lax.broadcasting_shape_rule
// (equal ranks or scalars), every result u32 of the broadcast shape.
template <int kOperands, int kResults>
absl::Status BlockRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(kOperands));
  J2O_RETURN_IF_ERROR(ctx.Outputs(kResults));
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  std::vector<DimExpr> shape;
  for (int i = 0; i < kOperands; ++i) {
    if (ctx.in(i).dtype != DType::kU32) {
      return ctx.Fail(absl::StrCat("operand ", i, " must be u32, got ",
                                   ctx.in(i).ToString()));
    }
    if (ctx.in(i).rank() == 0) continue;
    if (shape.empty()) {
      shape = ctx.in(i).shape;
      continue;
    }
    if (ctx.in(i).rank() != static_cast<int>(shape.size())) {
      return ctx.Fail("operands differ in rank");
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      const DimExpr& x = ctx.in(i).shape[d];
      if (DimConst(shape[d]) == 1) {
        shape[d] = x;
      } else if (DimConst(x) != 1 && !DimEqual(shape[d], x)) {
        return ctx.Fail("operand shapes are not broadcast-compatible");
      }
    }
  }
  std::vector<std::optional<Aval>> results;
  for (int i = 0; i < kResults; ++i) {
    results.emplace_back(MakeAval(DType::kU32, shape));
  }
  ctx.SetResults(std::move(results));
  return absl::OkStatus();
}

absl::Status Iota2x32ShapeRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(0));
  J2O_RETURN_IF_ERROR(ctx.Outputs(2));
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> shape, ctx.Dims("shape"));
  const Aval out = MakeAval(DType::kU32, std::move(shape));
  ctx.SetResults({out, out});
  return absl::OkStatus();
}

// rng_bit_generator[algorithm dtype shape (out_sharding)] key ->
// (key, bits): _rng_bit_generator_shape_rule/_dtype_rule. The key is u32[4]
// (or u64[2], which the lowering also accepts); bits are u8/u16/u32/u64.
absl::Status RngBitGeneratorRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(2));
  J2O_RETURN_IF_ERROR(ctx.Shaped(0));
  const Aval& key = ctx.in(0);
  const bool u32x4 = key.dtype == DType::kU32 && key.rank() == 1 &&
                     DimConst(key.shape[0]) == 4;
  const bool u64x2 = key.dtype == DType::kU64 && key.rank() == 1 &&
                     DimConst(key.shape[0]) == 2;
  if (!u32x4 && !u64x2) {
    return ctx.Fail(
        absl::StrCat("the key must be u32[4] or u64[2], got ", key.ToString()));
  }
  J2O_RETURN_IF_ERROR(ctx.Has("algorithm"));
  J2O_RETURN_IF_ERROR(
      ParseRngAlgorithm(ctx.params().Find("algorithm")->ToString()).status());
  J2O_ASSIGN_OR_RETURN(DType dtype, ctx.DTypeParam("dtype"));
  if (dtype != DType::kU8 && dtype != DType::kU16 && dtype != DType::kU32 &&
      dtype != DType::kU64) {
    return ctx.Fail(absl::StrCat("dtype=", NumpyName(dtype),
                                 " is not one of uint8, uint16, uint32, "
                                 "uint64"));
  }
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> shape, ctx.Dims("shape"));
  ctx.SetResults({key, MakeAval(dtype, std::move(shape))});
  return absl::OkStatus();
}

// random_gamma[log_space] key a -> a's type (_random_gamma_abstract_eval);
// the key array's shape is a prefix of a's.
absl::Status RandomGammaRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(2));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(KeyIn(ctx, 0));
  J2O_RETURN_IF_ERROR(ctx.Shaped(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(1, kClassFloat));
  const Aval& key = ctx.in(0);
  const Aval& a = ctx.in(1);
  bool prefix = key.rank() <= a.rank();
  for (int i = 0; prefix && i < key.rank(); ++i) {
    prefix = DimEqual(key.shape[i], a.shape[i]);
  }
  if (!prefix) {
    return ctx.Fail(absl::StrCat("the key shape of ", key.ToString(),
                                 " is not a prefix of the shape of ",
                                 a.ToString()));
  }
  ctx.SetResult(a);
  return absl::OkStatus();
}

}  // namespace

void RegisterRaggedDotRules(RuleTable& table);  // rules_ragged_dot.cc

void RegisterRandomRules(RuleTable& table) {
  RegisterRaggedDotRules(table);
  table["random_seed"] = {&RandomSeedRule};
  table["random_wrap"] = {&RandomWrapRule};
  table["random_unwrap"] = {&RandomUnwrapRule};
  table["random_split"] = {&RandomSplitRule};
  table["random_fold_in"] = {&RandomFoldInRule};
  table["random_bits"] = {&RandomBitsRule};
  table["threefry2x32"] = {&BlockRule<4, 2>};
  table["threefry4x32"] = {&BlockRule<8, 4>};
  table["philox2x32"] = {&BlockRule<3, 2>};
  table["philox4x32"] = {&BlockRule<6, 4>};
  table["iota_2x32_shape"] = {&Iota2x32ShapeRule};
  table["rng_bit_generator"] = {&RngBitGeneratorRule};
  table["random_gamma"] = {&RandomGammaRule};
}

}  // namespace jax2onnx::jaxpr::typecheck
