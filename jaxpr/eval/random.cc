// Kernels of JAX's PRNG primitives (random_seed, random_wrap,
// random_unwrap, random_bits, random_split, random_fold_in, threefry2x32,
// iota_2x32_shape) on threefry keys, and rng_bit_generator (XLA's
// algorithms, jaxpr/xla_rng.h). A `key<fry>[S]` value is its key data,
// a uint32[S, 2] array (jaxpr/prng.h); the bit-level work is in
// jaxpr/prng.cc, pinned to Random123's and JAX's published values by
// tests/eval/random_test.cc. The counter mode is
// EvalOptions::threefry_partitionable.
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "jaxpr/array.h"
#include "jaxpr/eval/eval_util.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/eval/kernels.h"
#include "jaxpr/prng.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/ragged_dot.h"
#include "jaxpr/text/random_gamma.h"
#include "jaxpr/xla_rng.h"

namespace jax2onnx::jaxpr {
namespace {

using Result = absl::StatusOr<std::vector<Array>>;

absl::Status Fail(const EvalContext& ctx, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("'", ctx.eqn().primitive, "': ", what));
}

absl::Status CheckArity(const EvalContext& ctx, absl::Span<const Array> in,
                        size_t n) {
  if (in.size() == n) return absl::OkStatus();
  return Fail(ctx, absl::StrCat("expects ", n, " operands, got ", in.size()));
}

// The key data of a threefry key array: u32[S, 2].
absl::Status CheckKeyData(const EvalContext& ctx, const Array& keys) {
  if (keys.dtype() != DType::kU32 || keys.rank() == 0 ||
      keys.shape().back() != 2) {
    return Fail(ctx, absl::StrCat("key data must be u32[..., 2] (threefry "
                                  "keys), got ",
                                  keys.TypeString()));
  }
  return absl::OkStatus();
}

ThreefryKey KeyAt(const Array& keys, int64_t i) {
  const uint32_t* d = keys.typed_data<uint32_t>();
  return {d[2 * i], d[2 * i + 1]};
}

void SetKey(Array& keys, int64_t i, ThreefryKey k) {
  uint32_t* d = keys.typed_data<uint32_t>();
  d[2 * i] = k[0];
  d[2 * i + 1] = k[1];
}

std::vector<int64_t> WithKeyDim(std::vector<int64_t> shape) {
  shape.push_back(2);
  return shape;
}

int64_t Product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// random_seed[impl=fry] seeds: one key per seed (threefry_seed).
Result RandomSeedKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  J2O_RETURN_IF_ERROR(CheckArity(ctx, in, 1));
  const Array& seeds = in[0];
  if (!IsInteger(seeds.dtype())) {
    return Fail(
        ctx, absl::StrCat("seeds must be integers, got ", seeds.TypeString()));
  }
  const int width = 8 * ItemSize(seeds.dtype());
  Array keys(DType::kU32, WithKeyDim(seeds.shape()));
  for (int64_t i = 0; i < seeds.num_elements(); ++i) {
    // Two's-complement bits (sign-extended for signed seeds).
    const uint64_t bits = IsSignedInt(seeds.dtype())
                              ? static_cast<uint64_t>(seeds.GetAsInt64(i))
                              : seeds.GetAsUInt64(i);
    SetKey(keys, i, ThreefrySeed(bits, width));
  }
  return std::vector<Array>{std::move(keys)};
}

// random_wrap / random_unwrap: the key data is the value.
Result KeyDataIdentityKernel(const EvalContext& ctx,
                             absl::Span<const Array> in) {
  J2O_RETURN_IF_ERROR(CheckArity(ctx, in, 1));
  J2O_RETURN_IF_ERROR(CheckKeyData(ctx, in[0]));
  return std::vector<Array>{in[0]};
}

// random_split[shape=(..)] (JAX >= 0.4.16) or random_split[count=n].
absl::StatusOr<std::vector<int64_t>> SplitShape(const EvalContext& ctx) {
  if (ctx.params().Has("shape")) return ctx.IntListParam("shape");
  J2O_ASSIGN_OR_RETURN(int64_t count, ctx.params().GetInt("count"));
  return std::vector<int64_t>{count};
}

Result RandomSplitKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  J2O_RETURN_IF_ERROR(CheckArity(ctx, in, 1));
  J2O_RETURN_IF_ERROR(CheckKeyData(ctx, in[0]));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape, SplitShape(ctx));
  const int64_t num = Product(shape);
  const int64_t num_keys = in[0].num_elements() / 2;
  std::vector<int64_t> out_shape(in[0].shape().begin(),
                                 in[0].shape().end() - 1);
  out_shape.insert(out_shape.end(), shape.begin(), shape.end());
  Array out(DType::kU32, WithKeyDim(out_shape));
  const bool partitionable = ctx.threefry_partitionable();
  for (int64_t k = 0; k < num_keys; ++k) {
    const std::vector<ThreefryKey> keys =
        ThreefrySplit(KeyAt(in[0], k), num, partitionable);
    for (int64_t j = 0; j < num; ++j) SetKey(out, k * num + j, keys[j]);
  }
  return std::vector<Array>{std::move(out)};
}

// random_fold_in keys msgs: keys and msgs broadcast (numpy rules on the
// key shape); msgs are converted to uint32 as threefry_fold_in does.
Result RandomFoldInKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  J2O_RETURN_IF_ERROR(CheckArity(ctx, in, 2));
  J2O_RETURN_IF_ERROR(CheckKeyData(ctx, in[0]));
  if (!IsInteger(in[1].dtype())) {
    return Fail(
        ctx, absl::StrCat("msgs must be integers, got ", in[1].TypeString()));
  }
  const std::vector<int64_t> key_shape(in[0].shape().begin(),
                                       in[0].shape().end() - 1);
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                       eval::BroadcastShapes({key_shape, in[1].shape()}));
  J2O_ASSIGN_OR_RETURN(Array keys, eval::BroadcastTo(in[0], WithKeyDim(shape)));
  J2O_ASSIGN_OR_RETURN(Array msgs, eval::BroadcastTo(in[1], shape));
  Array out(DType::kU32, WithKeyDim(shape));
  for (int64_t i = 0; i < msgs.num_elements(); ++i) {
    const uint32_t data = static_cast<uint32_t>(msgs.GetAsUInt64(i));
    SetKey(out, i, ThreefryFoldIn(KeyAt(keys, i), data));
  }
  return std::vector<Array>{std::move(out)};
}

// random_bits[bit_width=w shape=(..)] keys: uint{w}[keys.shape + shape].
Result RandomBitsKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  J2O_RETURN_IF_ERROR(CheckArity(ctx, in, 1));
  J2O_RETURN_IF_ERROR(CheckKeyData(ctx, in[0]));
  J2O_ASSIGN_OR_RETURN(int64_t bit_width, ctx.params().GetInt("bit_width"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.IntListParam("shape"));
  J2O_ASSIGN_OR_RETURN(Array out, ctx.NewOutput(0));
  const int64_t size = Product(shape);
  const int64_t num_keys = in[0].num_elements() / 2;
  if (out.num_elements() != num_keys * size ||
      8 * ItemSize(out.dtype()) != bit_width) {
    return Fail(ctx, absl::StrCat("result ", out.TypeString(),
                                  " does not hold ", num_keys, " x ", size,
                                  " values of ", bit_width, " bits"));
  }
  const bool partitionable = ctx.threefry_partitionable();
  for (int64_t k = 0; k < num_keys; ++k) {
    J2O_ASSIGN_OR_RETURN(
        std::vector<uint64_t> bits,
        ThreefryRandomBits(KeyAt(in[0], k), static_cast<int>(bit_width), size,
                           partitionable));
    for (int64_t i = 0; i < size; ++i) {
      out.SetFromInt64(k * size + i, static_cast<int64_t>(bits[i]));
    }
  }
  return std::vector<Array>{std::move(out)};
}

// threefry2x32 k1 k2 x1 x2 -> (y1, y2), elementwise with broadcasting.
Result Threefry2x32Kernel(const EvalContext& ctx, absl::Span<const Array> in) {
  J2O_RETURN_IF_ERROR(CheckArity(ctx, in, 4));
  std::vector<std::vector<int64_t>> shapes;
  for (const Array& a : in) {
    if (a.dtype() != DType::kU32) {
      return Fail(ctx,
                  absl::StrCat("operands must be u32, got ", a.TypeString()));
    }
    shapes.push_back(a.shape());
  }
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                       eval::BroadcastShapes(shapes));
  J2O_ASSIGN_OR_RETURN(std::vector<Array> ops, eval::BroadcastAll(in, shape));
  Array y1(DType::kU32, shape);
  Array y2(DType::kU32, shape);
  const uint32_t* k1 = ops[0].typed_data<uint32_t>();
  const uint32_t* k2 = ops[1].typed_data<uint32_t>();
  const uint32_t* x1 = ops[2].typed_data<uint32_t>();
  const uint32_t* x2 = ops[3].typed_data<uint32_t>();
  uint32_t* o1 = y1.typed_data<uint32_t>();
  uint32_t* o2 = y2.typed_data<uint32_t>();
  for (int64_t i = 0; i < y1.num_elements(); ++i) {
    const auto y = Threefry2x32({k1[i], k2[i]}, {x1[i], x2[i]});
    o1[i] = y[0];
    o2[i] = y[1];
  }
  return std::vector<Array>{std::move(y1), std::move(y2)};
}

// iota_2x32_shape[shape=S] -> (hi, lo) words of the row-major index.
Result Iota2x32ShapeKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  J2O_RETURN_IF_ERROR(CheckArity(ctx, in, 0));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.IntListParam("shape"));
  Array hi(DType::kU32, shape);
  Array lo(DType::kU32, shape);
  uint32_t* h = hi.typed_data<uint32_t>();
  uint32_t* l = lo.typed_data<uint32_t>();
  for (int64_t i = 0; i < hi.num_elements(); ++i) {
    const uint64_t c = static_cast<uint64_t>(i);
    h[i] = static_cast<uint32_t>(c >> 32);
    l[i] = static_cast<uint32_t>(c);
  }
  return std::vector<Array>{std::move(hi), std::move(lo)};
}

// rng_bit_generator[algorithm dtype shape] key -> (new key, bits). A u32[4]
// key is the u64[2] state in little-endian pairs (JAX's lowering bitcasts
// it); a u64[2] key is the state itself.
Result RngBitGeneratorKernel(const EvalContext& ctx,
                             absl::Span<const Array> in) {
  J2O_RETURN_IF_ERROR(CheckArity(ctx, in, 1));
  const Array& key = in[0];
  std::array<uint64_t, 2> state;
  if (key.dtype() == DType::kU32 && key.num_elements() == 4) {
    for (int i = 0; i < 2; ++i) {
      state[i] = key.GetAsUInt64(2 * i) | (key.GetAsUInt64(2 * i + 1) << 32);
    }
  } else if (key.dtype() == DType::kU64 && key.num_elements() == 2) {
    state = {key.GetAsUInt64(0), key.GetAsUInt64(1)};
  } else {
    return Fail(ctx, absl::StrCat("the key must be u32[4] or u64[2], got ",
                                  key.TypeString()));
  }
  const ParamValue* alg = ctx.params().Find("algorithm");
  if (alg == nullptr) return Fail(ctx, "missing param 'algorithm'");
  J2O_ASSIGN_OR_RETURN(RngAlgorithm algorithm,
                       ParseRngAlgorithm(alg->ToString()));
  J2O_ASSIGN_OR_RETURN(Array bits, ctx.NewOutput(1));
  J2O_ASSIGN_OR_RETURN(
      RngBitGeneratorResult r,
      XlaRngBitGenerator(state, bits.shape(), 8 * ItemSize(bits.dtype()),
                         algorithm));
  for (int64_t i = 0; i < bits.num_elements(); ++i) {
    bits.SetFromInt64(i, static_cast<int64_t>(r.bits[i]));
  }
  Array new_key(key.dtype(), key.shape());
  if (key.dtype() == DType::kU32) {
    for (int i = 0; i < 2; ++i) {
      new_key.SetFromInt64(2 * i, static_cast<uint32_t>(r.state[i]));
      new_key.SetFromInt64(2 * i + 1, static_cast<uint32_t>(r.state[i] >> 32));
    }
  } else {
    for (int i = 0; i < 2; ++i) {
      new_key.SetFromInt64(i, static_cast<int64_t>(r.state[i]));
    }
  }
  return std::vector<Array>{std::move(new_key), std::move(bits)};
}

// random_gamma[log_space] key a: JAX's sampler written out in the primitives
// it binds (jaxpr/text/random_gamma.h), evaluated by their kernels.
Result RandomGammaKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  J2O_RETURN_IF_ERROR(CheckArity(ctx, in, 2));
  J2O_ASSIGN_OR_RETURN(const ClosedJaxpr* decomposition,
                       RandomGammaDecomposition(ctx.eqn()));
  return ctx.Call(*decomposition, {}, in);
}

// ragged_dot_general / ragged_dot: JAX's _ragged_dot_general_impl written
// out (jaxpr/text/ragged_dot.h), evaluated by the kernels of its primitives.
Result RaggedDotKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  J2O_RETURN_IF_ERROR(CheckArity(ctx, in, 3));
  J2O_ASSIGN_OR_RETURN(const ClosedJaxpr* decomposition,
                       RaggedDotDecomposition(ctx.eqn()));
  return ctx.Call(*decomposition, {}, in);
}

}  // namespace

void RegisterRandomKernels() {
  RegisterEvalKernel("random_seed", &RandomSeedKernel);
  RegisterEvalKernel("random_wrap", &KeyDataIdentityKernel);
  RegisterEvalKernel("random_unwrap", &KeyDataIdentityKernel);
  RegisterEvalKernel("random_split", &RandomSplitKernel);
  RegisterEvalKernel("random_fold_in", &RandomFoldInKernel);
  RegisterEvalKernel("random_bits", &RandomBitsKernel);
  RegisterEvalKernel("threefry2x32", &Threefry2x32Kernel);
  RegisterEvalKernel("iota_2x32_shape", &Iota2x32ShapeKernel);
  RegisterEvalKernel("rng_bit_generator", &RngBitGeneratorKernel);
  RegisterEvalKernel("random_gamma", &RandomGammaKernel);
  RegisterEvalKernel("ragged_dot_general", &RaggedDotKernel);
  RegisterEvalKernel("ragged_dot", &RaggedDotKernel);
}

}  // namespace jax2onnx::jaxpr
