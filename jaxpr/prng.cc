#include "jaxpr/prng.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace jax2onnx::jaxpr {
namespace {

uint32_t RotateLeft(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

}  // namespace

bool IsPrngKey(const Aval& aval) {
  return aval.is_shaped() && aval.dtype == DType::kOther &&
         aval.dtype_name.size() > 5 &&
         absl::string_view(aval.dtype_name).substr(0, 4) == "key<";
}

bool IsThreefryKey(const Aval& aval) {
  return IsPrngKey(aval) && aval.dtype_name == "key<fry>";
}

absl::StatusOr<Aval> PhysicalAval(const Aval& aval) {
  if (!IsPrngKey(aval)) return aval;
  if (!IsThreefryKey(aval)) {
    return absl::UnimplementedError(absl::StrCat(
        "PRNG keys of type ", aval.dtype_name,
        " are not supported (only key<fry>, JAX's default threefry2x32)"));
  }
  Aval physical = aval;
  physical.dtype = DType::kU32;
  physical.dtype_name = "u32";
  physical.shape.push_back(DimExpr::Constant(2));
  if (!physical.dim_sharding.empty()) physical.dim_sharding.emplace_back();
  return physical;
}

bool IsPrngPrimitive(absl::string_view primitive) {
  static constexpr absl::string_view kNames[] = {
      "random_seed",    "random_wrap", "random_unwrap", "random_split",
      "random_fold_in", "random_bits", "threefry2x32",  "iota_2x32_shape",
      "random_gamma"};
  for (absl::string_view n : kNames) {
    if (n == primitive) return true;
  }
  return false;
}

bool MovesKeys(const Eqn& eqn) {
  if (IsPrngPrimitive(eqn.primitive)) return false;
  bool any_key = false;
  for (const Atom& a : eqn.inputs) {
    any_key |= !a.is_literal() && IsThreefryKey(a.var->aval);
  }
  for (const Var* v : eqn.outputs) any_key |= IsThreefryKey(v->aval);
  if (!any_key) return false;
  for (const auto& entry : eqn.params.entries()) {
    const ParamValue::Kind kind = entry.second.kind();
    if (kind == ParamValue::Kind::kJaxpr ||
        kind == ParamValue::Kind::kJaxprTuple) {
      return false;
    }
  }
  return true;
}

absl::Status CheckMovesWholeKeys(const Eqn& eqn) {
  for (const Var* v : eqn.outputs) {
    if (v->is_drop || IsThreefryKey(v->aval)) continue;
    return absl::UnimplementedError(absl::StrCat(
        "'", eqn.primitive, "' on PRNG key arrays with a result of type ",
        v->aval.ToString(),
        " is not supported (only primitives that move whole keys are)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> ThreefryModeOf(const JaxprFile& file, bool fallback) {
  std::optional<std::string> text = file.Header("threefry_partitionable");
  if (!text.has_value()) return fallback;
  const absl::string_view v = absl::StripAsciiWhitespace(*text);
  if (v == "true") return true;
  if (v == "false") return false;
  return absl::InvalidArgumentError(
      absl::StrCat("header '# threefry_partitionable: ", *text,
                   "' is neither true nor false"));
}

std::array<uint32_t, 2> Threefry2x32(ThreefryKey key,
                                     std::array<uint32_t, 2> count) {
  // _threefry2x32_lowering with use_rolled_loops=False, transcribed.
  static constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const uint32_t ks[3] = {key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDAu};
  uint32_t x0 = count[0] + ks[0];
  uint32_t x1 = count[1] + ks[1];
  for (int block = 0; block < 5; ++block) {
    for (int r : kRotations[block % 2]) {
      x0 += x1;
      x1 = RotateLeft(x1, r);
      x1 ^= x0;
    }
    x0 += ks[(block + 1) % 3];
    x1 += ks[(block + 2) % 3] + static_cast<uint32_t>(block + 1);
  }
  return {x0, x1};
}

std::vector<uint32_t> Threefry2x32Flat(ThreefryKey key,
                                       const std::vector<uint32_t>& counts) {
  const size_t n = counts.size();
  const size_t half = (n + 1) / 2;
  auto padded = [&](size_t i) { return i < n ? counts[i] : 0u; };
  std::vector<uint32_t> out(2 * half);
  for (size_t i = 0; i < half; ++i) {
    const auto y = Threefry2x32(key, {padded(i), padded(half + i)});
    out[i] = y[0];
    out[half + i] = y[1];
  }
  out.resize(n);
  return out;
}

ThreefryKey ThreefrySeed(uint64_t seed_bits, int seed_bit_width) {
  // shift_right_logical by 32 is 0 for seeds of 32 bits or fewer (XLA: a
  // shift by at least the width gives 0).
  const uint32_t hi =
      seed_bit_width == 64 ? static_cast<uint32_t>(seed_bits >> 32) : 0u;
  return {hi, static_cast<uint32_t>(seed_bits & 0xFFFFFFFFu)};
}

std::vector<ThreefryKey> ThreefrySplit(ThreefryKey key, int64_t num,
                                       bool partitionable) {
  std::vector<ThreefryKey> keys(num);
  if (partitionable) {
    // _threefry_split_foldlike: threefry2x32(k, iota_2x32_shape(shape)).
    for (int64_t i = 0; i < num; ++i) {
      const uint64_t c = static_cast<uint64_t>(i);
      const auto y = Threefry2x32(
          key, {static_cast<uint32_t>(c >> 32), static_cast<uint32_t>(c)});
      keys[i] = {y[0], y[1]};
    }
    return keys;
  }
  // _threefry_split_original: threefry_2x32(k, iota(2 * num)) as (num, 2).
  std::vector<uint32_t> counts(2 * num);
  for (int64_t i = 0; i < 2 * num; ++i) counts[i] = static_cast<uint32_t>(i);
  const std::vector<uint32_t> bits = Threefry2x32Flat(key, counts);
  for (int64_t i = 0; i < num; ++i) keys[i] = {bits[2 * i], bits[2 * i + 1]};
  return keys;
}

ThreefryKey ThreefryFoldIn(ThreefryKey key, uint32_t data) {
  const ThreefryKey seed = ThreefrySeed(data, 32);
  const std::vector<uint32_t> bits = Threefry2x32Flat(key, {seed[0], seed[1]});
  return {bits[0], bits[1]};
}

absl::StatusOr<std::vector<uint64_t>> ThreefryRandomBits(ThreefryKey key,
                                                         int bit_width,
                                                         int64_t size,
                                                         bool partitionable) {
  if (bit_width != 8 && bit_width != 16 && bit_width != 32 && bit_width != 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "random_bits: bit_width ", bit_width, " is not one of 8, 16, 32, 64"));
  }
  std::vector<uint64_t> out(size);
  if (partitionable) {
    // _threefry_random_bits_partitionable: the 64-bit counter of element i
    // is split into (hi, lo) by iota_2x32_shape.
    for (int64_t i = 0; i < size; ++i) {
      const uint64_t c = static_cast<uint64_t>(i);
      const auto y = Threefry2x32(
          key, {static_cast<uint32_t>(c >> 32), static_cast<uint32_t>(c)});
      if (bit_width == 64) {
        out[i] = (uint64_t{y[0]} << 32) | y[1];
      } else {
        const uint32_t x = y[0] ^ y[1];
        out[i] = bit_width == 32 ? x : x & ((1u << bit_width) - 1);
      }
    }
    return out;
  }
  // _threefry_random_bits_original.
  const int64_t max_count = (bit_width * size + 31) / 32;
  if (max_count >= int64_t{0xFFFFFFFF}) {
    return absl::UnimplementedError(absl::StrCat(
        "random_bits of ", size, " ", bit_width,
        "-bit values: JAX's non-partitionable mode splits the key into "
        "blocks beyond 2^32 - 1 counters; not supported"));
  }
  std::vector<uint32_t> counts(max_count);
  for (int64_t i = 0; i < max_count; ++i) counts[i] = static_cast<uint32_t>(i);
  const std::vector<uint32_t> bits = Threefry2x32Flat(key, counts);
  if (bit_width == 64) {
    // The two halves of the bits are the high and low words.
    for (int64_t i = 0; i < size; ++i) {
      out[i] = (uint64_t{bits[i]} << 32) | bits[size + i];
    }
  } else if (bit_width == 32) {
    for (int64_t i = 0; i < size; ++i) out[i] = bits[i];
  } else {
    // bits.view(uint8/uint16)[:size]: little-endian pieces of each word.
    const int per_word = 32 / bit_width;
    const uint32_t mask = (1u << bit_width) - 1;
    for (int64_t i = 0; i < size; ++i) {
      out[i] = (bits[i / per_word] >> (bit_width * (i % per_word))) & mask;
    }
  }
  return out;
}

}  // namespace jax2onnx::jaxpr
