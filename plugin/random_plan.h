// Pipeline-independent lowerings of JAX's PRNG primitives (random_seed,
// random_wrap, random_unwrap, random_bits, random_split, random_fold_in,
// threefry2x32, threefry4x32, philox2x32, philox4x32, iota_2x32_shape),
// written against the elementwise emitter interface
// (plugin/elementwise_plan.h) plus SetOutAt(i, v) for multi-result
// primitives.
//
// Keys: a `key<TAG>[S]` value is its key data, uint32[S, W], in ONNX
// (jaxpr/prng.h: fry W = 2, fry4 W = 4, phx2 W = 1, phx4 W = 2). The block
// functions run on int64 values in [0, 2^32): ONNX Runtime's CPU Add/Mul
// have no uint32 kernels, and int64 holds every sum exactly, so the
// mod-2^32 wraparound is explicit (Mod) and exact; Philox's 32 x 32 ->
// 64-bit products are split into 16-bit halves (MulHiLo). Rotations are
// (x * 2^r mod 2^32) + x div 2^(32 - r); xor is BitwiseXor (opset >= 18) or
// the bit-plane form of elementwise::BitwiseBin (opset 17). The counter
// layouts follow jax/_src/random/{threefry2x32,threefry4x32,philox2x32,
// philox4x32}.py; threefry2x32's mode is the emitter's
// threefry_partitionable(), from the conversion options (the others have
// one layout).
#ifndef JAX2ONNX_PLUGIN_RANDOM_PLAN_H_
#define JAX2ONNX_PLUGIN_RANDOM_PLAN_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/array.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/prng.h"
#include "jaxpr/status_macros.h"
#include "plugin/elementwise_plan.h"

namespace jax2onnx::plugin::random {

using elementwise::V;
using jaxpr::DType;

// Names of the primitives lowered here, with the ONNX ops they use.
std::vector<std::string> RandomPrimitives();
std::vector<std::string> RandomOnnxOps();
std::string RandomNotes(const std::string& primitive);

namespace internal {

inline constexpr int64_t kTwo32 = int64_t{1} << 32;

template <class E>
V<E> I64(E& e, int64_t v) {
  return elementwise::IConst(e, DType::kI64, v);
}
template <class E>
V<E> Vec(E& e, std::vector<int64_t> xs) {
  jaxpr::Array a(DType::kI64, {static_cast<int64_t>(xs.size())});
  for (size_t i = 0; i < xs.size(); ++i) a.SetFromInt64(i, xs[i]);
  return e.Const(a);
}
// (a + b) mod 2^32 for a, b in [0, 2^32) held in int64.
template <class E>
V<E> Add32(E& e, V<E> a, V<E> b) {
  return e.Op("Mod", {e.Op("Add", {a, b}, DType::kI64), I64(e, kTwo32)},
              DType::kI64);
}
template <class E>
V<E> RotateLeft32(E& e, V<E> x, int r) {
  V<E> low = e.Op(
      "Mod",
      {e.Op("Mul", {x, I64(e, int64_t{1} << r)}, DType::kI64), I64(e, kTwo32)},
      DType::kI64);
  V<E> high = e.Op("Div", {x, I64(e, int64_t{1} << (32 - r))}, DType::kI64);
  // Disjoint bits: the sum is the or.
  return e.Op("Add", {low, high}, DType::kI64);
}
template <class E>
V<E> Xor(E& e, V<E> a, V<E> b) {
  if (e.opset() >= 18) {
    return elementwise::BitwiseBin(e, elementwise::BitOp::kXor, a, b);
  }
  // Bit planes of the 32 value bits only.
  V<E> x = elementwise::BitwiseBin(e, elementwise::BitOp::kXor,
                                   elementwise::Cast(e, a, DType::kU32),
                                   elementwise::Cast(e, b, DType::kU32));
  return elementwise::Cast(e, x, DType::kI64);
}

// threefry2x32 on int64 words in [0, 2^32), broadcasting like ONNX (and
// JAX: equal ranks or scalars). Mirrors jaxpr::Threefry2x32.
template <class E>
std::pair<V<E>, V<E>> Threefry(E& e, V<E> k0, V<E> k1, V<E> c0, V<E> c1) {
  static constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  V<E> ks[3] = {k0, k1, Xor(e, Xor(e, k0, k1), I64(e, 0x1BD11BDA))};
  V<E> x0 = Add32(e, c0, ks[0]);
  V<E> x1 = Add32(e, c1, ks[1]);
  for (int block = 0; block < 5; ++block) {
    for (int r : kRotations[block % 2]) {
      x0 = Add32(e, x0, x1);
      x1 = Xor(e, RotateLeft32(e, x1, r), x0);
    }
    x0 = Add32(e, x0, ks[(block + 1) % 3]);
    x1 = Add32(e, x1, Add32(e, ks[(block + 2) % 3], I64(e, block + 1)));
  }
  return {x0, x1};
}

// (high, low) words of x * m for int64 words x in [0, 2^32): with x * M =
// u * 2^16 + t (u = x * M_hi, t = x * M_lo, both < 2^48), the low word is
// ((u mod 2^16) * 2^16 + t) mod 2^32 and the high word
// (u + t div 2^16) div 2^16, all exact in int64.
template <class E>
std::pair<V<E>, V<E>> MulHiLo(E& e, V<E> x, uint32_t m) {
  V<E> t = e.Op("Mul", {x, I64(e, m & 0xFFFF)}, DType::kI64);
  V<E> u = e.Op("Mul", {x, I64(e, m >> 16)}, DType::kI64);
  V<E> two16 = I64(e, 1 << 16);
  V<E> hi =
      e.Op("Div",
           {e.Op("Add", {u, e.Op("Div", {t, two16}, DType::kI64)}, DType::kI64),
            two16},
           DType::kI64);
  V<E> lo =
      e.Op("Mod",
           {e.Op("Add",
                 {e.Op("Mul", {e.Op("Mod", {u, two16}, DType::kI64), two16},
                       DType::kI64),
                  t},
                 DType::kI64),
            I64(e, kTwo32)},
           DType::kI64);
  return {hi, lo};
}

// Philox-4x32-10 on int64 words (broadcasting), as jaxpr::Philox4x32.
template <class E>
std::array<V<E>, 4> Philox(E& e, std::array<V<E>, 4> c, V<E> k0, V<E> k1) {
  for (int round = 0; round < 10; ++round) {
    auto [hi0, lo0] = MulHiLo(e, c[0], 0xD2511F53u);
    auto [hi1, lo1] = MulHiLo(e, c[2], 0xCD9E8D57u);
    c = {Xor(e, Xor(e, hi1, c[1]), k0), lo1, Xor(e, Xor(e, hi0, c[3]), k1),
         lo0};
    if (round + 1 < 10) {
      k0 = Add32(e, k0, I64(e, 0x9E3779B9u));
      k1 = Add32(e, k1, I64(e, 0xBB67AE85u));
    }
  }
  return c;
}

// Philox-2x32-10 on int64 words, as jaxpr::Philox2x32.
template <class E>
std::pair<V<E>, V<E>> Philox2(E& e, V<E> k, V<E> c0, V<E> c1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) k = Add32(e, k, I64(e, 0x9E3779B9u));
    auto [hi, lo] = MulHiLo(e, c0, 0xD256D193u);
    c0 = Xor(e, Xor(e, hi, c1), k);
    c1 = lo;
  }
  return {c0, c1};
}

// Threefry-4x32-20 on int64 words, as jaxpr::Threefry4x32.
template <class E>
std::array<V<E>, 4> Threefry4(E& e, const std::array<V<E>, 4>& k,
                              std::array<V<E>, 4> x) {
  static constexpr int kRotations[8][2] = {{10, 26}, {11, 21}, {13, 27},
                                           {23, 5},  {6, 20},  {17, 11},
                                           {25, 10}, {18, 20}};
  V<E> ks[5] = {k[0], k[1], k[2], k[3],
                Xor(e, Xor(e, Xor(e, Xor(e, k[0], k[1]), k[2]), k[3]),
                    I64(e, 0x1BD11BDA))};
  for (int i = 0; i < 4; ++i) x[i] = Add32(e, x[i], ks[i]);
  for (int round = 0; round < 20; ++round) {
    const int r0 = kRotations[round % 8][0];
    const int r1 = kRotations[round % 8][1];
    const int a = round % 2 == 0 ? 1 : 3;  // mixed into x0
    const int b = round % 2 == 0 ? 3 : 1;  // mixed into x2
    x[0] = Add32(e, x[0], x[a]);
    x[a] = Xor(e, RotateLeft32(e, x[a], r0), x[0]);
    x[2] = Add32(e, x[2], x[b]);
    x[b] = Xor(e, RotateLeft32(e, x[b], r1), x[2]);
    if (round % 4 == 3) {
      const int inject = round / 4;
      for (int i = 0; i < 4; ++i)
        x[i] = Add32(e, x[i], ks[(i + 1 + inject) % 5]);
      x[3] = Add32(e, x[3], I64(e, 1 + inject));
    }
  }
  return x;
}

// hi * 2^32 + lo as u64 for int64 words (disjoint bits: the int64 sum
// cannot overflow past the sign because lo < 2^32 fills only zero bits).
template <class E>
V<E> Join64(E& e, V<E> hi, V<E> lo) {
  V<E> h = e.BitShift(elementwise::Cast(e, hi, DType::kU64),
                      elementwise::IConst(e, DType::kU64, 32), true);
  V<E> sum =
      e.Op("Add", {elementwise::Cast(e, h, DType::kI64), lo}, DType::kI64);
  return elementwise::Cast(e, sum, DType::kU64);
}

// The block function of a key implementation on key words `k`
// (KeyWords(impl) of them) and counter (c0, c1, c2, c3), as
// jaxpr::ImplBlock. The 2x32 ones read (c0, c1) and make two words,
// repeated as words 2 and 3 (callers use the first CounterWords(impl)).
template <class E>
std::array<V<E>, 4> ImplBlock(E& e, jaxpr::KeyImpl impl,
                              const std::vector<V<E>>& k,
                              const std::array<V<E>, 4>& c) {
  switch (impl) {
    case jaxpr::KeyImpl::kThreefry4x32:
      return Threefry4(e, {k[0], k[1], k[2], k[3]}, c);
    case jaxpr::KeyImpl::kPhilox4x32:
      return Philox(e, c, k[0], k[1]);
    case jaxpr::KeyImpl::kPhilox2x32:
    case jaxpr::KeyImpl::kThreefry2x32: {
      auto [y0, y1] = impl == jaxpr::KeyImpl::kPhilox2x32
                          ? Philox2(e, k[0], c[0], c[1])
                          : Threefry(e, k[0], k[1], c[0], c[1]);
      return {y0, y1, y0, y1};
    }
  }
  return c;
}

template <class E>
V<E> ToI64(E& e, V<E> v) {
  return elementwise::Cast(e, v, DType::kI64);
}
template <class E>
V<E> ToU32(E& e, V<E> v) {
  return elementwise::Cast(e, v, DType::kU32);
}

// Word `i` (0 or 1) of key data [K..., 2] as int64 [K...].
template <class E>
V<E> KeyWord(E& e, V<E> keys, int i) {
  V<E> w = e.Op("Gather", {keys, I64(e, i)}, DType::kU32, {{"axis", -1}});
  return ToI64(e, w);
}
// [K..., W] key data from W int64 words [K...].
template <class E>
V<E> StackKeyWords(E& e, const std::vector<V<E>>& words) {
  V<E> last = Vec(e, {-1});
  std::vector<V<E>> parts;
  for (const V<E>& w : words) {
    parts.push_back(e.Op("Unsqueeze", {ToU32(e, w), last}, DType::kU32));
  }
  return e.Op("Concat", parts, DType::kU32, {{"axis", -1}});
}
template <class E>
V<E> StackKey(E& e, V<E> w0, V<E> w1) {
  return StackKeyWords(e, {w0, w1});
}
// The W words of key data [K..., W] as int64 [K...].
template <class E>
std::vector<V<E>> KeyWordsOf(E& e, V<E> keys, int words) {
  std::vector<V<E>> out;
  for (int w = 0; w < words; ++w) out.push_back(KeyWord(e, keys, w));
  return out;
}
// The first KeyWords(impl) words of a block's result, as key data.
template <class E>
V<E> BlockKey(E& e, jaxpr::KeyImpl impl, const std::array<V<E>, 4>& y) {
  return StackKeyWords(
      e, std::vector<V<E>>(y.begin(), y.begin() + jaxpr::KeyWords(impl)));
}
// Appends `n` axes of size 1 to a value of rank `rank`.
template <class E>
V<E> AppendUnitAxes(E& e, V<E> v, int rank, int n) {
  if (n == 0) return v;
  std::vector<int64_t> axes;
  for (int i = 0; i < n; ++i) axes.push_back(rank + i);
  return e.Op("Unsqueeze", {v, Vec(e, axes)}, e.TypeOf(v));
}
// int64 0..n-1 starting at `start`.
template <class E>
V<E> Iota(E& e, int64_t start, int64_t n) {
  return e.Op("Range", {I64(e, start), I64(e, start + n), I64(e, 1)},
              DType::kI64);
}
// iota_2x32_shape: (hi, lo) words of the row-major index, shaped `shape`.
template <class E>
std::pair<V<E>, V<E>> IotaHiLo(E& e, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  V<E> idx = Iota(e, 0, n);
  V<E> hi = e.Op("Div", {idx, I64(e, kTwo32)}, DType::kI64);
  V<E> lo = e.Op("Mod", {idx, I64(e, kTwo32)}, DType::kI64);
  V<E> target = Vec(e, shape);
  return {e.Op("Reshape", {hi, target}, DType::kI64),
          e.Op("Reshape", {lo, target}, DType::kI64)};
}
// JAX's threefry_2x32(key, iota(count)) for keys [K...] (int64 words):
// words [K..., count] (the pairs are the first and second halves of the
// padded counts; the output halves are concatenated and the pad dropped).
template <class E>
V<E> ThreefryOverIota(E& e, V<E> k0, V<E> k1, int key_rank, int64_t count) {
  const int64_t half = (count + 1) / 2;
  V<E> c0 = Iota(e, 0, half);
  V<E> c1 = Iota(e, half, half);
  if (count % 2 == 1) {
    // The pad is a zero count (its output is dropped below).
    c1 = e.Op("Where",
              {e.Op("Less", {c1, I64(e, count)}, DType::kBool), c1, I64(e, 0)},
              DType::kI64);
  }
  V<E> a = AppendUnitAxes(e, k0, key_rank, 1);
  V<E> b = AppendUnitAxes(e, k1, key_rank, 1);
  auto [y0, y1] = Threefry(e, a, b, c0, c1);
  V<E> words = e.Op("Concat", {y0, y1}, DType::kI64, {{"axis", -1}});
  if (count % 2 == 1) {
    words = e.Op("Slice", {words, Vec(e, {0}), Vec(e, {count}), Vec(e, {-1})},
                 DType::kI64);
  }
  return words;
}

}  // namespace internal

// The mode's error for symbolic shapes in params (never reached: JAX's
// random_bits/split shapes are concrete).
template <class E>
absl::StatusOr<std::vector<int64_t>> StaticShapeParam(E& e,
                                                      absl::string_view key) {
  const jaxpr::Params& p = e.eqn().params;
  if (key == "shape" && !p.Has("shape") && p.Has("count")) {
    J2O_ASSIGN_OR_RETURN(int64_t count, p.GetInt("count"));
    return std::vector<int64_t>{count};
  }
  return p.GetIntList(key);
}

template <class E>
absl::Status LowerRandomSeed(E& e) {
  namespace in = internal;
  const DType d = e.InType(0);
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  // Two's-complement bits in u64 (sign-extended for signed seeds).
  x = elementwise::Cast(
      e,
      elementwise::Cast(e, x,
                        jaxpr::IsSignedInt(d) ? DType::kI64 : DType::kU64),
      DType::kU64);
  V<E> lo = e.BitShift(e.BitShift(x, elementwise::IConst(e, DType::kU64, 32),
                                  /*left=*/true),
                       elementwise::IConst(e, DType::kU64, 32), false);
  V<E> hi = jaxpr::ItemSize(d) == 8
                ? e.BitShift(x, elementwise::IConst(e, DType::kU64, 32), false)
                : e.Op("Mul", {in::ToI64(e, lo), in::I64(e, 0)}, DType::kI64);
  J2O_ASSIGN_OR_RETURN(const jaxpr::KeyImpl impl, jaxpr::KeyImplOfEqn(e.eqn()));
  if (impl == jaxpr::KeyImpl::kThreefry2x32) {
    return e.SetOut(in::StackKey(e, in::ToI64(e, hi), in::ToI64(e, lo)));
  }
  // The other seeds hash (hi, lo) once: threefry4x32 as key words 0-1 over
  // a zero counter, philox4x32 as counter words 0-1 under a zero key,
  // philox2x32 as the counter under key 0.
  V<E> zero = in::I64(e, 0);
  V<E> h = in::ToI64(e, hi);
  V<E> l = in::ToI64(e, lo);
  std::array<V<E>, 4> y =
      impl == jaxpr::KeyImpl::kThreefry4x32
          ? in::ImplBlock(e, impl, {h, l, zero, zero}, {zero, zero, zero, zero})
          : in::ImplBlock(e, impl, {zero, zero}, {h, l, zero, zero});
  return e.SetOut(in::BlockKey(e, impl, y));
}

template <class E>
absl::Status LowerKeyDataIdentity(E& e) {
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  return e.SetOut(e.Op("Identity", {x}, DType::kU32));
}

// Rank of the key array operand 0 (its key data has one more axis).
template <class E>
int KeyRank(E& e) {
  return e.eqn().inputs[0].var->aval.rank();
}

template <class E>
absl::Status LowerRandomSplit(E& e) {
  namespace in = internal;
  J2O_ASSIGN_OR_RETURN(const jaxpr::KeyImpl impl, jaxpr::KeyImplOfEqn(e.eqn()));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                       StaticShapeParam(e, "shape"));
  const int key_rank = KeyRank(e);
  int64_t num = 1;
  for (int64_t d : shape) num *= d;
  J2O_ASSIGN_OR_RETURN(V<E> keys, e.In(0));
  std::vector<V<E>> k = in::KeyWordsOf(e, keys, jaxpr::KeyWords(impl));
  std::vector<jaxpr::DimExpr> out_dims = e.eqn().inputs[0].var->aval.shape;
  for (int64_t d : shape) out_dims.push_back(jaxpr::DimExpr::Constant(d));
  out_dims.push_back(jaxpr::DimExpr::Constant(jaxpr::KeyWords(impl)));
  J2O_ASSIGN_OR_RETURN(V<E> out_shape, e.ShapeValue(out_dims));
  if (impl != jaxpr::KeyImpl::kThreefry2x32 || e.threefry_partitionable()) {
    auto [hi, lo] = in::IotaHiLo(e, shape);
    const int n = static_cast<int>(shape.size());
    V<E> out;
    if (impl == jaxpr::KeyImpl::kThreefry2x32) {
      auto [y0, y1] =
          in::Threefry(e, in::AppendUnitAxes(e, k[0], key_rank, n),
                       in::AppendUnitAxes(e, k[1], key_rank, n), hi, lo);
      out = in::StackKey(e, y0, y1);
    } else {
      for (V<E>& w : k) w = in::AppendUnitAxes(e, w, key_rank, n);
      // The split counts are counter words 2-3 (philox2x32: 0-1).
      V<E> zero = in::I64(e, 0);
      out = in::BlockKey(e, impl,
                         impl == jaxpr::KeyImpl::kPhilox2x32
                             ? in::ImplBlock(e, impl, k, {hi, lo, zero, zero})
                             : in::ImplBlock(e, impl, k, {zero, zero, hi, lo}));
    }
    return e.SetOut(e.Op("Reshape", {out, out_shape}, DType::kU32));
  }
  V<E> words = in::ThreefryOverIota(e, k[0], k[1], key_rank, 2 * num);
  return e.SetOut(
      e.Op("Reshape", {in::ToU32(e, words), out_shape}, DType::kU32));
}

template <class E>
absl::Status LowerRandomFoldIn(E& e) {
  namespace in = internal;
  J2O_ASSIGN_OR_RETURN(const jaxpr::KeyImpl impl, jaxpr::KeyImplOfEqn(e.eqn()));
  J2O_ASSIGN_OR_RETURN(V<E> keys, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> msgs, e.In(1));
  // jnp.asarray(data, 'uint32'): wraps modulo 2^32.
  V<E> data =
      e.Op("Mod", {in::ToI64(e, msgs), in::I64(e, in::kTwo32)}, DType::kI64);
  // A scalar key with array msgs broadcasts through the rounds already.
  if (impl == jaxpr::KeyImpl::kThreefry2x32) {
    // threefry_2x32(key, [0, data]): one pair (0, data).
    auto [y0, y1] = in::Threefry(e, in::KeyWord(e, keys, 0),
                                 in::KeyWord(e, keys, 1), in::I64(e, 0), data);
    return e.SetOut(in::StackKey(e, y0, y1));
  }
  // The data is the last counter word: (0, data) for philox2x32, (0, 0, 0,
  // data) for the 4-word ones.
  V<E> zero = in::I64(e, 0);
  std::vector<V<E>> k = in::KeyWordsOf(e, keys, jaxpr::KeyWords(impl));
  return e.SetOut(
      in::BlockKey(e, impl,
                   impl == jaxpr::KeyImpl::kPhilox2x32
                       ? in::ImplBlock(e, impl, k, {zero, data, zero, zero})
                       : in::ImplBlock(e, impl, k, {zero, zero, zero, data})));
}

// random_bits for the implementations other than threefry2x32: element i
// hashes the (hi, lo) words of its row-major index as counter words 0-1.
// 64 bits: threefry4x32 joins (y0 ^ y2, y1 ^ y3), the Philox ones (y0, y1);
// 32 bits: the xor of all result words; 8 and 16: that xor's low bits.
template <class E>
absl::Status LowerImplRandomBits(E& e, jaxpr::KeyImpl impl, V<E> keys,
                                 int bit_width,
                                 const std::vector<int64_t>& shape) {
  namespace in = internal;
  const int n = static_cast<int>(shape.size());
  std::vector<V<E>> k = in::KeyWordsOf(e, keys, jaxpr::KeyWords(impl));
  for (V<E>& w : k) w = in::AppendUnitAxes(e, w, KeyRank(e), n);
  auto [hi, lo] = in::IotaHiLo(e, shape);
  V<E> zero = in::I64(e, 0);
  std::array<V<E>, 4> y = in::ImplBlock(e, impl, k, {hi, lo, zero, zero});
  const bool two_words = impl == jaxpr::KeyImpl::kPhilox2x32;
  if (bit_width == 64) {
    if (impl == jaxpr::KeyImpl::kThreefry4x32) {
      return e.SetOut(
          in::Join64(e, in::Xor(e, y[0], y[2]), in::Xor(e, y[1], y[3])));
    }
    return e.SetOut(in::Join64(e, y[0], y[1]));
  }
  V<E> x = in::Xor(e, y[0], y[1]);
  if (!two_words) x = in::Xor(e, in::Xor(e, x, y[2]), y[3]);
  if (bit_width < 32) {
    x = e.Op("Mod", {x, in::I64(e, int64_t{1} << bit_width)}, DType::kI64);
  }
  return e.SetOut(elementwise::Cast(e, x, e.OutType()));
}

template <class E>
absl::Status LowerRandomBits(E& e) {
  namespace in = internal;
  J2O_ASSIGN_OR_RETURN(int64_t bit_width, e.eqn().params.GetInt("bit_width"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                       StaticShapeParam(e, "shape"));
  if (bit_width != 8 && bit_width != 16 && bit_width != 32 && bit_width != 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "random_bits: bit_width ", bit_width, " is not one of 8, 16, 32, 64"));
  }
  J2O_ASSIGN_OR_RETURN(const jaxpr::KeyImpl impl, jaxpr::KeyImplOfEqn(e.eqn()));
  const DType out_dtype = e.OutType();
  const int key_rank = KeyRank(e);
  int64_t size = 1;
  for (int64_t d : shape) size *= d;
  J2O_ASSIGN_OR_RETURN(V<E> keys, e.In(0));
  if (impl != jaxpr::KeyImpl::kThreefry2x32) {
    return LowerImplRandomBits(e, impl, keys, static_cast<int>(bit_width),
                               shape);
  }
  V<E> k0 = in::KeyWord(e, keys, 0);
  V<E> k1 = in::KeyWord(e, keys, 1);
  if (e.threefry_partitionable()) {
    auto [hi, lo] = in::IotaHiLo(e, shape);
    const int n = static_cast<int>(shape.size());
    auto [y0, y1] =
        in::Threefry(e, in::AppendUnitAxes(e, k0, key_rank, n),
                     in::AppendUnitAxes(e, k1, key_rank, n), hi, lo);
    if (bit_width == 64) return e.SetOut(in::Join64(e, y0, y1));
    V<E> x = in::Xor(e, y0, y1);
    if (bit_width < 32) {
      x = e.Op("Mod", {x, in::I64(e, int64_t{1} << bit_width)}, DType::kI64);
    }
    return e.SetOut(elementwise::Cast(e, x, out_dtype));
  }
  const int64_t max_count = (bit_width * size + 31) / 32;
  if (max_count >= int64_t{0xFFFFFFFF}) {
    return absl::UnimplementedError(absl::StrCat(
        "random_bits of ", size, " values of ", bit_width,
        " bits in the non-partitionable threefry mode needs more than 2^32 - "
        "1 counters (JAX splits the key into blocks); not supported"));
  }
  std::vector<jaxpr::DimExpr> out_dims = e.eqn().inputs[0].var->aval.shape;
  for (int64_t d : shape) out_dims.push_back(jaxpr::DimExpr::Constant(d));
  J2O_ASSIGN_OR_RETURN(V<E> out_shape, e.ShapeValue(out_dims));
  V<E> words = in::ThreefryOverIota(e, k0, k1, key_rank, max_count);
  V<E> bits;
  if (bit_width == 64) {
    // The first half of the words are the high words, the second the low.
    V<E> hi = e.Op(
        "Slice", {words, in::Vec(e, {0}), in::Vec(e, {size}), in::Vec(e, {-1})},
        DType::kI64);
    V<E> lo = e.Op(
        "Slice",
        {words, in::Vec(e, {size}), in::Vec(e, {2 * size}), in::Vec(e, {-1})},
        DType::kI64);
    bits = in::Join64(e, hi, lo);
  } else if (bit_width == 32) {
    bits = elementwise::Cast(e, words, DType::kU32);
  } else {
    // bits.view(uint8/uint16)[:size]: word i holds elements i*k .. i*k+k-1,
    // lowest bits first.
    const int per_word = 32 / static_cast<int>(bit_width);
    std::vector<int64_t> divisors;
    for (int j = 0; j < per_word; ++j) {
      divisors.push_back(int64_t{1} << (bit_width * j));
    }
    V<E> w = e.Op("Unsqueeze", {words, in::Vec(e, {-1})}, DType::kI64);
    V<E> pieces = e.Op("Mod",
                       {e.Op("Div", {w, in::Vec(e, divisors)}, DType::kI64),
                        in::I64(e, int64_t{1} << bit_width)},
                       DType::kI64);
    std::vector<jaxpr::DimExpr> flat_dims = e.eqn().inputs[0].var->aval.shape;
    flat_dims.push_back(jaxpr::DimExpr::Constant(max_count * per_word));
    J2O_ASSIGN_OR_RETURN(V<E> flat_shape, e.ShapeValue(flat_dims));
    V<E> flat = e.Op("Reshape", {pieces, flat_shape}, DType::kI64);
    flat = e.Op("Slice",
                {flat, in::Vec(e, {0}), in::Vec(e, {size}), in::Vec(e, {-1})},
                DType::kI64);
    bits = elementwise::Cast(e, flat, out_dtype);
  }
  return e.SetOut(e.Op("Reshape", {bits, out_shape}, out_dtype));
}

// threefry2x32 k1 k2 x1 x2, threefry4x32 k0..k3 x0..x3, philox2x32 k x0 x1,
// philox4x32 k0 k1 x0..x3: the block function elementwise (operands
// broadcast; every result word depends on every operand after the first
// rounds, so each has the broadcast shape).
template <class E>
absl::Status LowerBlockPrimitive(E& e, jaxpr::KeyImpl impl) {
  namespace in = internal;
  const int num_keys = jaxpr::KeyWords(impl);
  const int num_counts = jaxpr::CounterWords(impl);
  std::vector<V<E>> ops;
  for (int i = 0; i < num_keys + num_counts; ++i) {
    J2O_ASSIGN_OR_RETURN(V<E> x, e.In(i));
    ops.push_back(in::ToI64(e, x));
  }
  std::vector<V<E>> k(ops.begin(), ops.begin() + num_keys);
  std::array<V<E>, 4> c;
  for (int i = 0; i < 4; ++i) c[i] = ops[num_keys + i % num_counts];
  std::array<V<E>, 4> y = in::ImplBlock(e, impl, k, c);
  for (int r = 0; r < num_counts; ++r) {
    J2O_RETURN_IF_ERROR(e.SetOutAt(r, in::ToU32(e, y[r])));
  }
  return absl::OkStatus();
}

template <class E>
absl::Status LowerIota2x32Shape(E& e) {
  namespace in = internal;
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                       e.eqn().params.GetIntList("shape"));
  auto [hi, lo] = in::IotaHiLo(e, shape);
  J2O_RETURN_IF_ERROR(e.SetOutAt(0, in::ToU32(e, hi)));
  return e.SetOutAt(1, in::ToU32(e, lo));
}

template <class E>
absl::Status LowerRandom(E& e) {
  const std::string& p = e.eqn().primitive;
  if (p == "random_seed") return LowerRandomSeed(e);
  if (p == "random_wrap" || p == "random_unwrap") {
    return LowerKeyDataIdentity(e);
  }
  if (p == "random_split") return LowerRandomSplit(e);
  if (p == "random_fold_in") return LowerRandomFoldIn(e);
  if (p == "random_bits") return LowerRandomBits(e);
  if (p == "threefry2x32") {
    return LowerBlockPrimitive(e, jaxpr::KeyImpl::kThreefry2x32);
  }
  if (p == "threefry4x32") {
    return LowerBlockPrimitive(e, jaxpr::KeyImpl::kThreefry4x32);
  }
  if (p == "philox2x32") {
    return LowerBlockPrimitive(e, jaxpr::KeyImpl::kPhilox2x32);
  }
  if (p == "philox4x32") {
    return LowerBlockPrimitive(e, jaxpr::KeyImpl::kPhilox4x32);
  }
  if (p == "iota_2x32_shape") return LowerIota2x32Shape(e);
  return absl::InternalError(absl::StrCat("no random lowering for ", p));
}

}  // namespace jax2onnx::plugin::random

#endif  // JAX2ONNX_PLUGIN_RANDOM_PLAN_H_
