// Kernels of JAX's PRNG primitives (random_seed, random_wrap,
// random_unwrap, random_bits, random_split, random_fold_in, threefry2x32,
// threefry4x32, philox2x32, philox4x32, iota_2x32_shape) on the keys of
// the converted implementations, and rng_bit_generator (XLA's algorithms,
// jaxpr/xla_rng.h). A `key<TAG>[S]` value is its key data, a uint32[S, W]
// array (jaxpr/prng.h); the bit-level work is in jaxpr/prng.cc, pinned to
// Random123's and JAX's published values by tests/eval/random_test.cc and
// tests/eval/random_impls_test.cc. The threefry2x32 counter mode is
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

absl::StatusOr<KeyImpl> ImplOf(const EvalContext& ctx) {
  return KeyImplOfEqn(ctx.eqn());
}

// The key data of a key array: u32[S, W].
absl::Status CheckKeyData(const EvalContext& ctx, const Array& keys,
                          KeyImpl impl) {
  const int words = KeyWords(impl);
  if (keys.dtype() != DType::kU32 || keys.rank() == 0 ||
      keys.shape().back() != words) {
    return Fail(ctx,
                absl::StrCat("key data must be u32[..., ", words, "] (",
                             KeyName(impl), " keys), got ", keys.TypeString()));
  }
  return absl::OkStatus();
}

KeyData KeyAt(const Array& keys, int64_t i, int words) {
  const uint32_t* d = keys.typed_data<uint32_t>();
  KeyData k = {0, 0, 0, 0};
  for (int w = 0; w < words; ++w) k[w] = d[words * i + w];
  return k;
}

void SetKey(Array& keys, int64_t i, const KeyData& k, int words) {
  uint32_t* d = keys.typed_data<uint32_t>();
  for (int w = 0; w < words; ++w) d[words * i + w] = k[w];
}

std::vector<int64_t> WithKeyDim(std::vector<int64_t> shape, int words) {
  shape.push_back(words);
  return shape;
}

int64_t Product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// random_seed[impl=TAG] seeds: one key per seed (the impl's seed).
Result RandomSeedKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  J2O_RETURN_IF_ERROR(CheckArity(ctx, in, 1));
  const Array& seeds = in[0];
  if (!IsInteger(seeds.dtype())) {
    return Fail(
        ctx, absl::StrCat("seeds must be integers, got ", seeds.TypeString()));
  }
  J2O_ASSIGN_OR_RETURN(const KeyImpl impl, ImplOf(ctx));
  const int words = KeyWords(impl);
  const int width = 8 * ItemSize(seeds.dtype());
  Array keys(DType::kU32, WithKeyDim(seeds.shape(), words));
  for (int64_t i = 0; i < seeds.num_elements(); ++i) {
    // Two's-complement bits (sign-extended for signed seeds).
    const uint64_t bits = IsSignedInt(seeds.dtype())
                              ? static_cast<uint64_t>(seeds.GetAsInt64(i))
                              : seeds.GetAsUInt64(i);
    SetKey(keys, i, ImplSeed(impl, bits, width), words);
  }
  return std::vector<Array>{std::move(keys)};
}

// random_wrap / random_unwrap: the key data is the value.
Result KeyDataIdentityKernel(const EvalContext& ctx,
                             absl::Span<const Array> in) {
  J2O_RETURN_IF_ERROR(CheckArity(ctx, in, 1));
  J2O_ASSIGN_OR_RETURN(const KeyImpl impl, ImplOf(ctx));
  J2O_RETURN_IF_ERROR(CheckKeyData(ctx, in[0], impl));
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
  J2O_ASSIGN_OR_RETURN(const KeyImpl impl, ImplOf(ctx));
  J2O_RETURN_IF_ERROR(CheckKeyData(ctx, in[0], impl));
  const int words = KeyWords(impl);
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape, SplitShape(ctx));
  const int64_t num = Product(shape);
  const int64_t num_keys = in[0].num_elements() / words;
  std::vector<int64_t> out_shape(in[0].shape().begin(),
                                 in[0].shape().end() - 1);
  out_shape.insert(out_shape.end(), shape.begin(), shape.end());
  Array out(DType::kU32, WithKeyDim(out_shape, words));
  const bool partitionable = ctx.threefry_partitionable();
  for (int64_t k = 0; k < num_keys; ++k) {
    const std::vector<KeyData> keys =
        ImplSplit(impl, KeyAt(in[0], k, words), num, partitionable);
    for (int64_t j = 0; j < num; ++j) SetKey(out, k * num + j, keys[j], words);
  }
  return std::vector<Array>{std::move(out)};
}

// random_fold_in keys msgs: keys and msgs broadcast (numpy rules on the
// key shape); msgs are converted to uint32 as threefry_fold_in does (the
// other implementations take uint32 msgs only: the same).
Result RandomFoldInKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  J2O_RETURN_IF_ERROR(CheckArity(ctx, in, 2));
  J2O_ASSIGN_OR_RETURN(const KeyImpl impl, ImplOf(ctx));
  J2O_RETURN_IF_ERROR(CheckKeyData(ctx, in[0], impl));
  const int words = KeyWords(impl);
  if (!IsInteger(in[1].dtype())) {
    return Fail(
        ctx, absl::StrCat("msgs must be integers, got ", in[1].TypeString()));
  }
  const std::vector<int64_t> key_shape(in[0].shape().begin(),
                                       in[0].shape().end() - 1);
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                       eval::BroadcastShapes({key_shape, in[1].shape()}));
  J2O_ASSIGN_OR_RETURN(Array keys,
                       eval::BroadcastTo(in[0], WithKeyDim(shape, words)));
  J2O_ASSIGN_OR_RETURN(Array msgs, eval::BroadcastTo(in[1], shape));
  Array out(DType::kU32, WithKeyDim(shape, words));
  for (int64_t i = 0; i < msgs.num_elements(); ++i) {
    const uint32_t data = static_cast<uint32_t>(msgs.GetAsUInt64(i));
    SetKey(out, i, ImplFoldIn(impl, KeyAt(keys, i, words), data), words);
  }
  return std::vector<Array>{std::move(out)};
}

// random_bits[bit_width=w shape=(..)] keys: uint{w}[keys.shape + shape].
Result RandomBitsKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  J2O_RETURN_IF_ERROR(CheckArity(ctx, in, 1));
  J2O_ASSIGN_OR_RETURN(const KeyImpl impl, ImplOf(ctx));
  J2O_RETURN_IF_ERROR(CheckKeyData(ctx, in[0], impl));
  const int words = KeyWords(impl);
  J2O_ASSIGN_OR_RETURN(int64_t bit_width, ctx.params().GetInt("bit_width"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.IntListParam("shape"));
  J2O_ASSIGN_OR_RETURN(Array out, ctx.NewOutput(0));
  const int64_t size = Product(shape);
  const int64_t num_keys = in[0].num_elements() / words;
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
        ImplRandomBits(impl, KeyAt(in[0], k, words),
                       static_cast<int>(bit_width), size, partitionable));
    for (int64_t i = 0; i < size; ++i) {
      out.SetFromInt64(k * size + i, static_cast<int64_t>(bits[i]));
    }
  }
  return std::vector<Array>{std::move(out)};
}

// The block primitives, elementwise with broadcasting: the key words, then
// the counter words, to as many result words (threefry2x32 k1 k2 x1 x2,
// threefry4x32 k0..k3 x0..x3, philox2x32 k x0 x1, philox4x32 k0 k1 x0..x3).
template <KeyImpl kImpl>
Result BlockKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  const int words = KeyWords(kImpl);
  const int counts = CounterWords(kImpl);
  J2O_RETURN_IF_ERROR(CheckArity(ctx, in, words + counts));
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
  std::vector<Array> outs;
  for (int r = 0; r < counts; ++r) outs.emplace_back(DType::kU32, shape);
  std::vector<const uint32_t*> x;
  for (const Array& a : ops) x.push_back(a.typed_data<uint32_t>());
  std::vector<uint32_t*> out;
  for (Array& a : outs) out.push_back(a.typed_data<uint32_t>());
  for (int64_t i = 0; i < outs[0].num_elements(); ++i) {
    KeyData k = {0, 0, 0, 0};
    std::array<uint32_t, 4> c = {0, 0, 0, 0};
    for (int w = 0; w < words; ++w) k[w] = x[w][i];
    for (int j = 0; j < counts; ++j) c[j] = x[words + j][i];
    const std::array<uint32_t, 4> y = ImplBlock(kImpl, k, c);
    for (int r = 0; r < counts; ++r) out[r][i] = y[r];
  }
  return outs;
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
  RegisterEvalKernel("threefry2x32", &BlockKernel<KeyImpl::kThreefry2x32>);
  RegisterEvalKernel("threefry4x32", &BlockKernel<KeyImpl::kThreefry4x32>);
  RegisterEvalKernel("philox2x32", &BlockKernel<KeyImpl::kPhilox2x32>);
  RegisterEvalKernel("philox4x32", &BlockKernel<KeyImpl::kPhilox4x32>);
  RegisterEvalKernel("iota_2x32_shape", &Iota2x32ShapeKernel);
  RegisterEvalKernel("rng_bit_generator", &RngBitGeneratorKernel);
  RegisterEvalKernel("random_gamma", &RandomGammaKernel);
  RegisterEvalKernel("ragged_dot_general", &RaggedDotKernel);
  RegisterEvalKernel("ragged_dot", &RaggedDotKernel);
}

}  // namespace jax2onnx::jaxpr
