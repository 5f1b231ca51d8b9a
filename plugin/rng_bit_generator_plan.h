// Pipeline-independent lowering of `rng_bit_generator` (lax.rng_bit_generator,
// the bits of JAX's rbg/unsafe_rbg keys): XLA's RngBitGenerator exactly as
// its CPU backend expands it (jaxpr/xla_rng.h, the interpreter's kernel, is
// the reference; RNG_DEFAULT is PHILOX there).
//
// Words are int64 values in [0, 2^32) with explicit mod 2^32 wraparound, as
// in plugin/random_plan.h (ONNX Runtime's CPU Add/Mul lack uint32/uint64
// kernels); Philox's products are split into 16-bit halves (MulHiLo).
//
// Refused with a precise error: symbolic result shapes (JAX lowers those to
// stablehlo.dynamic_rng_bit_generator) and 2^32 or more values.
#ifndef JAX2ONNX_PLUGIN_RNG_BIT_GENERATOR_PLAN_H_
#define JAX2ONNX_PLUGIN_RNG_BIT_GENERATOR_PLAN_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/xla_rng.h"
#include "plugin/random_plan.h"

namespace jax2onnx::plugin::random {

std::vector<std::string> RngBitGeneratorOnnxOps();
std::string RngBitGeneratorNotes();

namespace rbg {

// The word arithmetic of random_plan.h.
using internal::Add32;
using internal::I64;
using internal::Iota;
using internal::Join64;
using internal::kTwo32;
using internal::MulHiLo;
using internal::Philox;
using internal::Threefry;
using internal::ToI64;
using internal::ToU32;
using internal::Vec;
using internal::Xor;

// Adds `n` (int64 values < 2^32) to the 64-bit number (lo, hi): the new
// words and the carry out of hi.
template <class E>
std::array<V<E>, 3> Add64(E& e, V<E> lo, V<E> hi, V<E> n) {
  V<E> s = e.Op("Add", {lo, n}, DType::kI64);
  V<E> new_lo = e.Op("Mod", {s, I64(e, kTwo32)}, DType::kI64);
  V<E> t = e.Op("Add", {hi, e.Op("Div", {s, I64(e, kTwo32)}, DType::kI64)},
                DType::kI64);
  return {new_lo, e.Op("Mod", {t, I64(e, kTwo32)}, DType::kI64),
          e.Op("Div", {t, I64(e, kTwo32)}, DType::kI64)};
}

// The four state words (key lo, key hi, counter lo, counter hi) as int64
// scalars from a u32[4] or u64[2] key.
template <class E>
absl::StatusOr<std::array<V<E>, 4>> StateWords(E& e) {
  J2O_ASSIGN_OR_RETURN(V<E> key, e.In(0));
  std::array<V<E>, 4> w;
  if (e.InType(0) == DType::kU32) {
    for (int i = 0; i < 4; ++i) {
      w[i] = ToI64(
          e, e.Op("Gather", {key, I64(e, i)}, DType::kU32, {{"axis", 0}}));
    }
    return w;
  }
  V<E> thirty_two = elementwise::IConst(e, DType::kU64, 32);
  for (int i = 0; i < 2; ++i) {
    V<E> x = e.Op("Gather", {key, I64(e, i)}, DType::kU64, {{"axis", 0}});
    V<E> lo = e.BitShift(e.BitShift(x, thirty_two, /*left=*/true), thirty_two,
                         /*left=*/false);
    w[2 * i] = ToI64(e, lo);
    w[2 * i + 1] = ToI64(e, e.BitShift(x, thirty_two, /*left=*/false));
  }
  return w;
}

// The result key: (key, new counter) in the key's dtype and layout.
template <class E>
V<E> NewKey(E& e, const std::array<V<E>, 4>& w, V<E> lo, V<E> hi) {
  V<E> axis0 = Vec(e, {0});
  if (e.InType(0) == DType::kU32) {
    std::vector<V<E>> parts;
    for (V<E> x : {w[0], w[1], lo, hi}) {
      parts.push_back(e.Op("Unsqueeze", {ToU32(e, x), axis0}, DType::kU32));
    }
    return e.Op("Concat", parts, DType::kU32, {{"axis", 0}});
  }
  V<E> key = e.Op("Unsqueeze", {Join64(e, w[1], w[0]), axis0}, DType::kU64);
  V<E> counter = e.Op("Unsqueeze", {Join64(e, hi, lo), axis0}, DType::kU64);
  return e.Op("Concat", {key, counter}, DType::kU64, {{"axis", 0}});
}

// int64 words -> the result dtype (u8/u16 keep the low bits, as XLA's
// u32 -> u8/u16 conversion does).
template <class E>
V<E> Narrow(E& e, V<E> words, DType out) {
  if (out == DType::kU32) return ToU32(e, words);
  const int width = 8 * jaxpr::ItemSize(out);
  V<E> low = e.Op("Mod", {words, I64(e, int64_t{1} << width)}, DType::kI64);
  return elementwise::Cast(e, low, out);
}

int64_t NumElements(const std::vector<int64_t>& shape);

}  // namespace rbg

template <class E>
absl::Status LowerRngBitGenerator(E& e) {
  using internal::I64;
  using internal::Iota;
  using internal::Join64;
  using internal::kTwo32;
  using internal::MulHiLo;
  using internal::Philox;
  using internal::Threefry;
  using internal::Vec;
  using rbg::Add64;
  using rbg::Join64;
  using rbg::Narrow;
  using rbg::NewKey;
  using rbg::NumElements;
  using rbg::Philox;
  using rbg::StateWords;
  const jaxpr::Eqn& eqn = e.eqn();
  const jaxpr::ParamValue* alg = eqn.params.Find("algorithm");
  if (alg == nullptr) {
    return absl::InvalidArgumentError(
        "rng_bit_generator: missing param 'algorithm'");
  }
  J2O_ASSIGN_OR_RETURN(jaxpr::RngAlgorithm algorithm,
                       jaxpr::ParseRngAlgorithm(alg->ToString()));
  const jaxpr::Aval& out_aval = eqn.outputs[1]->aval;
  std::vector<int64_t> shape;
  for (const jaxpr::DimExpr& d : out_aval.shape) {
    if (!d.is_constant()) {
      return absl::UnimplementedError(absl::StrCat(
          "rng_bit_generator: symbolic result shape ", out_aval.ToString(),
          " (JAX lowers it to stablehlo.dynamic_rng_bit_generator) is not "
          "supported"));
    }
    shape.push_back(d.constant_value());
  }
  const int64_t n = NumElements(shape);
  if (n >= kTwo32) {
    return absl::UnimplementedError(absl::StrCat(
        "rng_bit_generator: ", n, " values (2^32 or more) are not supported"));
  }
  const DType out = out_aval.dtype;
  const int width = 8 * jaxpr::ItemSize(out);
  J2O_ASSIGN_OR_RETURN(auto w, StateWords(e));
  std::vector<int64_t> rounded = shape;
  V<E> value;
  int64_t advance = 0;
  if (jaxpr::CpuRngAlgorithm(algorithm) == jaxpr::RngAlgorithm::kThreeFry) {
    if (width == 64) {
      auto [c0, c1, carry] = Add64(e, w[2], w[3], Iota(e, 0, n));
      auto [y0, y1] = Threefry(e, w[0], w[1], c0, c1);
      value = e.Op("Reshape", {Join64(e, y1, y0), Vec(e, shape)}, DType::kU64);
      advance = n;
    } else {
      const jaxpr::ThreefrySplit32 split = jaxpr::SplitShapeIntoHalves(shape);
      const int64_t m = NumElements(split.half_shape);
      auto [c0, c1, carry] = Add64(e, w[2], w[3], Iota(e, 0, m));
      auto [y0, y1] = Threefry(e, w[0], w[1], c0, c1);
      advance = m;
      if (split.split_dim < 0) {
        value = Narrow(e, e.Op("Reshape", {y0, Vec(e, {})}, DType::kI64), out);
      } else {
        // The pairs sit side by side along a new axis after the split one.
        const int s = split.split_dim;
        std::vector<int64_t> half = split.half_shape;
        half.insert(half.begin() + s + 1, 1);
        V<E> both = e.Op("Concat",
                         {e.Op("Reshape", {y0, Vec(e, half)}, DType::kI64),
                          e.Op("Reshape", {y1, Vec(e, half)}, DType::kI64)},
                         DType::kI64, {{"axis", s + 1}});
        rounded[s] = 2 * split.half_shape[s];
        value = e.Op("Reshape", {both, Vec(e, rounded)}, DType::kI64);
        if (rounded[s] != shape[s]) {
          value = e.Op("Slice",
                       {value, Vec(e, {0}), Vec(e, {shape[s]}), Vec(e, {s})},
                       DType::kI64);
        }
        value = Narrow(e, value, out);
      }
    }
  } else {
    const int64_t words = width == 64 ? 2 * n : n;
    const int64_t blocks = (words + 3) / 4;
    // The 128-bit counter (low = state counter, high = state key) + j.
    auto [c0, c1, carry1] = Add64(e, w[2], w[3], Iota(e, 0, blocks));
    auto [c2, c3, carry3] = Add64(e, w[0], w[1], carry1);
    std::array<V<E>, 4> y = Philox(e, {c0, c1, c2, c3}, w[0], w[1]);
    V<E> last = Vec(e, {-1});
    std::vector<V<E>> columns;
    if (width == 64) {
      columns = {Join64(e, y[1], y[0]), Join64(e, y[3], y[2])};
    } else {
      columns = {y[0], y[1], y[2], y[3]};
    }
    const DType col_type = width == 64 ? DType::kU64 : DType::kI64;
    for (V<E>& c : columns) c = e.Op("Unsqueeze", {c, last}, col_type);
    V<E> flat =
        e.Op("Reshape",
             {e.Op("Concat", columns, col_type, {{"axis", -1}}), Vec(e, {-1})},
             col_type);
    const int64_t per_block = width == 64 ? 2 : 4;
    if (blocks * per_block != n) {
      flat = e.Op("Slice", {flat, Vec(e, {0}), Vec(e, {n}), Vec(e, {0})},
                  col_type);
    }
    value = e.Op("Reshape", {flat, Vec(e, shape)}, col_type);
    if (width != 64) value = Narrow(e, value, out);
    advance = blocks;
  }
  auto [lo, hi, carry] = Add64(e, w[2], w[3], I64(e, advance));
  J2O_RETURN_IF_ERROR(e.SetOutAt(0, NewKey(e, w, lo, hi)));
  return e.SetOutAt(1, value);
}

}  // namespace jax2onnx::plugin::random

#endif  // JAX2ONNX_PLUGIN_RNG_BIT_GENERATOR_PLAN_H_
