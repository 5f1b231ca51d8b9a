// Pipeline-independent lowerings of JAX's PRNG primitives (random_seed,
// random_wrap, random_unwrap, random_bits, random_split, random_fold_in,
// threefry2x32, iota_2x32_shape) and of bitcast_convert_type, written
// against the elementwise emitter interface (plugin/elementwise_plan.h) plus
// SetOutAt(i, v) for multi-result primitives.
//
// Keys: a `key<fry>[S]` value is its key data, uint32[S, 2], in ONNX
// (jaxpr/prng.h). Threefry-2x32 runs on int64 values in [0, 2^32): ONNX
// Runtime's CPU Add/Mul have no uint32 kernels, and int64 holds every sum
// and every product below exactly, so the mod-2^32 wraparound is explicit
// (Mod) and exact. Rotations are (x * 2^r mod 2^32) + x div 2^(32 - r); xor
// is BitwiseXor (opset >= 18) or the bit-plane form of
// elementwise::BitwiseBin (opset 17). The counter layout of each mode
// follows jax/_src/random/threefry2x32.py; the mode is
// the emitter's threefry_partitionable(), from the conversion options.
#ifndef JAX2ONNX_PLUGIN_RANDOM_PLAN_H_
#define JAX2ONNX_PLUGIN_RANDOM_PLAN_H_

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
// [K..., 2] key data from two int64 words [K...].
template <class E>
V<E> StackKey(E& e, V<E> w0, V<E> w1) {
  V<E> last = Vec(e, {-1});
  V<E> a = e.Op("Unsqueeze", {ToU32(e, w0), last}, DType::kU32);
  V<E> b = e.Op("Unsqueeze", {ToU32(e, w1), last}, DType::kU32);
  return e.Op("Concat", {a, b}, DType::kU32, {{"axis", -1}});
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
  return e.SetOut(in::StackKey(e, in::ToI64(e, hi), in::ToI64(e, lo)));
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
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                       StaticShapeParam(e, "shape"));
  const int key_rank = KeyRank(e);
  int64_t num = 1;
  for (int64_t d : shape) num *= d;
  J2O_ASSIGN_OR_RETURN(V<E> keys, e.In(0));
  V<E> k0 = in::KeyWord(e, keys, 0);
  V<E> k1 = in::KeyWord(e, keys, 1);
  std::vector<jaxpr::DimExpr> out_dims = e.eqn().inputs[0].var->aval.shape;
  for (int64_t d : shape) out_dims.push_back(jaxpr::DimExpr::Constant(d));
  out_dims.push_back(jaxpr::DimExpr::Constant(2));
  J2O_ASSIGN_OR_RETURN(V<E> out_shape, e.ShapeValue(out_dims));
  if (e.threefry_partitionable()) {
    auto [hi, lo] = in::IotaHiLo(e, shape);
    auto [y0, y1] = in::Threefry(
        e, in::AppendUnitAxes(e, k0, key_rank, static_cast<int>(shape.size())),
        in::AppendUnitAxes(e, k1, key_rank, static_cast<int>(shape.size())), hi,
        lo);
    V<E> out = in::StackKey(e, y0, y1);
    return e.SetOut(e.Op("Reshape", {out, out_shape}, DType::kU32));
  }
  V<E> words = in::ThreefryOverIota(e, k0, k1, key_rank, 2 * num);
  return e.SetOut(
      e.Op("Reshape", {in::ToU32(e, words), out_shape}, DType::kU32));
}

template <class E>
absl::Status LowerRandomFoldIn(E& e) {
  namespace in = internal;
  J2O_ASSIGN_OR_RETURN(V<E> keys, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> msgs, e.In(1));
  // jnp.asarray(data, 'uint32'): wraps modulo 2^32.
  V<E> data =
      e.Op("Mod", {in::ToI64(e, msgs), in::I64(e, in::kTwo32)}, DType::kI64);
  // threefry_2x32(key, [0, data]): one pair (0, data).
  auto [y0, y1] = in::Threefry(e, in::KeyWord(e, keys, 0),
                               in::KeyWord(e, keys, 1), in::I64(e, 0), data);
  // A scalar key with array msgs broadcasts through the rounds already.
  return e.SetOut(in::StackKey(e, y0, y1));
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
  const DType out_dtype = e.OutType();
  const int key_rank = KeyRank(e);
  int64_t size = 1;
  for (int64_t d : shape) size *= d;
  J2O_ASSIGN_OR_RETURN(V<E> keys, e.In(0));
  V<E> k0 = in::KeyWord(e, keys, 0);
  V<E> k1 = in::KeyWord(e, keys, 1);
  // hi * 2^32 + lo as u64 (disjoint bits; the int64 sum cannot overflow
  // past the sign because lo < 2^32 fills only zero bits).
  auto join64 = [&](V<E> hi, V<E> lo) {
    V<E> h = e.BitShift(elementwise::Cast(e, hi, DType::kU64),
                        elementwise::IConst(e, DType::kU64, 32), true);
    V<E> sum =
        e.Op("Add", {elementwise::Cast(e, h, DType::kI64), lo}, DType::kI64);
    return elementwise::Cast(e, sum, DType::kU64);
  };
  if (e.threefry_partitionable()) {
    auto [hi, lo] = in::IotaHiLo(e, shape);
    const int n = static_cast<int>(shape.size());
    auto [y0, y1] =
        in::Threefry(e, in::AppendUnitAxes(e, k0, key_rank, n),
                     in::AppendUnitAxes(e, k1, key_rank, n), hi, lo);
    if (bit_width == 64) return e.SetOut(join64(y0, y1));
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
    bits = join64(hi, lo);
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

template <class E>
absl::Status LowerThreefry2x32(E& e) {
  namespace in = internal;
  std::vector<V<E>> ops;
  for (int i = 0; i < 4; ++i) {
    J2O_ASSIGN_OR_RETURN(V<E> x, e.In(i));
    ops.push_back(in::ToI64(e, x));
  }
  auto [y0, y1] = in::Threefry(e, ops[0], ops[1], ops[2], ops[3]);
  J2O_RETURN_IF_ERROR(e.SetOutAt(0, in::ToU32(e, y0)));
  return e.SetOutAt(1, in::ToU32(e, y1));
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
  if (p == "threefry2x32") return LowerThreefry2x32(e);
  if (p == "iota_2x32_shape") return LowerIota2x32Shape(e);
  return absl::InternalError(absl::StrCat("no random lowering for ", p));
}

}  // namespace jax2onnx::plugin::random

#endif  // JAX2ONNX_PLUGIN_RANDOM_PLAN_H_
