#include "jaxpr/prng.h"

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/xla_rng.h"

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

namespace {

struct ImplInfo {
  KeyImpl impl;
  absl::string_view tag;
  absl::string_view name;
  int words;
};
constexpr ImplInfo kImpls[] = {
    {KeyImpl::kThreefry2x32, "fry", "threefry2x32", 2},
    {KeyImpl::kThreefry4x32, "fry4", "threefry4x32", 4},
    {KeyImpl::kPhilox2x32, "phx2", "philox2x32", 1},
    {KeyImpl::kPhilox4x32, "phx4", "philox4x32", 2},
};
const ImplInfo& Info(KeyImpl impl) {
  for (const ImplInfo& i : kImpls) {
    if (i.impl == impl) return i;
  }
  return kImpls[0];
}

}  // namespace

std::optional<KeyImpl> KeyImplOf(const Aval& aval) {
  if (!IsPrngKey(aval)) return std::nullopt;
  const absl::string_view name = aval.dtype_name;
  const absl::string_view tag = name.substr(4, name.size() - 5);
  for (const ImplInfo& i : kImpls) {
    if (i.tag == tag && name.back() == '>') return i.impl;
  }
  return std::nullopt;
}

std::optional<KeyImpl> KeyImplOfParam(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  for (const ImplInfo& i : kImpls) {
    if (text == i.tag || text == i.name) return i.impl;
  }
  // A longer repr (`PRNGImpl(... name='philox4x32' ...)`, `{philox4x32}`):
  // the name it contains (no name is inside another).
  for (const ImplInfo& i : kImpls) {
    if (text.find(i.name) != absl::string_view::npos) return i.impl;
  }
  return std::nullopt;
}

absl::StatusOr<KeyImpl> KeyImplOfEqn(const Eqn& eqn) {
  if (const ParamValue* impl = eqn.params.Find("impl")) {
    if (auto k = KeyImplOfParam(impl->ToString())) return *k;
    return absl::UnimplementedError(absl::StrCat(
        "'", eqn.primitive,
        "': unsupported PRNG implementation impl=", impl->ToString(),
        " (only threefry2x32, threefry4x32, philox2x32, philox4x32)"));
  }
  if (!eqn.inputs.empty() && !eqn.inputs[0].is_literal()) {
    const Aval& aval = eqn.inputs[0].var->aval;
    if (auto k = KeyImplOf(aval)) return *k;
    return absl::UnimplementedError(absl::StrCat(
        "'", eqn.primitive, "': operand 0 is ", aval.ToString(),
        ", not a key of a supported implementation (key<fry>, key<fry4>, "
        "key<phx2>, key<phx4>)"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", eqn.primitive, "': no PRNG key operand"));
}

int KeyWords(KeyImpl impl) { return Info(impl).words; }
absl::string_view KeyTag(KeyImpl impl) { return Info(impl).tag; }
absl::string_view KeyName(KeyImpl impl) { return Info(impl).name; }

bool IsSupportedKey(const Aval& aval) { return KeyImplOf(aval).has_value(); }

absl::StatusOr<Aval> PhysicalAval(const Aval& aval) {
  if (!IsPrngKey(aval)) return aval;
  const std::optional<KeyImpl> impl = KeyImplOf(aval);
  if (!impl.has_value()) {
    return absl::UnimplementedError(absl::StrCat(
        "PRNG keys of type ", aval.dtype_name,
        " are not supported (only key<fry>, key<fry4>, key<phx2> and "
        "key<phx4>: threefry2x32, threefry4x32, philox2x32, philox4x32)"));
  }
  Aval physical = aval;
  physical.dtype = DType::kU32;
  physical.dtype_name = "u32";
  physical.shape.push_back(DimExpr::Constant(KeyWords(*impl)));
  if (!physical.dim_sharding.empty()) physical.dim_sharding.emplace_back();
  return physical;
}

bool IsPrngPrimitive(absl::string_view primitive) {
  static constexpr absl::string_view kNames[] = {
      "random_seed",    "random_wrap",  "random_unwrap", "random_split",
      "random_fold_in", "random_bits",  "threefry2x32",  "iota_2x32_shape",
      "random_gamma",   "threefry4x32", "philox2x32",    "philox4x32"};
  for (absl::string_view n : kNames) {
    if (n == primitive) return true;
  }
  return false;
}

bool MovesKeys(const Eqn& eqn) {
  if (IsPrngPrimitive(eqn.primitive)) return false;
  // A leading dim of the u32[..., W] key data: the key array's own dim.
  if (eqn.primitive == "dimension_size") return false;
  bool any_key = false;
  for (const Atom& a : eqn.inputs) {
    any_key |= !a.is_literal() && IsSupportedKey(a.var->aval);
  }
  for (const Var* v : eqn.outputs) any_key |= IsSupportedKey(v->aval);
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

int MovedKeyWords(const Eqn& eqn) {
  for (const Atom& a : eqn.inputs) {
    if (a.is_literal()) continue;
    if (auto impl = KeyImplOf(a.var->aval)) return KeyWords(*impl);
  }
  for (const Var* v : eqn.outputs) {
    if (auto impl = KeyImplOf(v->aval)) return KeyWords(*impl);
  }
  return 0;
}

absl::Status CheckMovesWholeKeys(const Eqn& eqn) {
  std::optional<KeyImpl> first;
  auto same_impl = [&](const Aval& aval) -> absl::Status {
    const std::optional<KeyImpl> impl = KeyImplOf(aval);
    if (!impl.has_value()) return absl::OkStatus();
    if (!first.has_value()) first = impl;
    if (*first == *impl) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("'", eqn.primitive, "' mixes PRNG keys of types key<",
                     KeyTag(*first), "> and key<", KeyTag(*impl), ">"));
  };
  for (const Atom& a : eqn.inputs) {
    if (!a.is_literal()) J2O_RETURN_IF_ERROR(same_impl(a.var->aval));
  }
  for (const Var* v : eqn.outputs) J2O_RETURN_IF_ERROR(same_impl(v->aval));
  for (const Var* v : eqn.outputs) {
    if (v->is_drop || IsSupportedKey(v->aval)) continue;
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

std::array<uint32_t, 4> Threefry4x32(std::array<uint32_t, 4> key,
                                     std::array<uint32_t, 4> count) {
  // _threefry4x32_lowering, transcribed: 20 rounds, a key injection after
  // every fourth.
  static constexpr int kRotations[8][2] = {{10, 26}, {11, 21}, {13, 27},
                                           {23, 5},  {6, 20},  {17, 11},
                                           {25, 10}, {18, 20}};
  const uint32_t ks[5] = {key[0], key[1], key[2], key[3],
                          key[0] ^ key[1] ^ key[2] ^ key[3] ^ 0x1BD11BDAu};
  uint32_t x[4];
  for (int i = 0; i < 4; ++i) x[i] = count[i] + ks[i];
  for (int round = 0; round < 20; ++round) {
    const int r0 = kRotations[round % 8][0];
    const int r1 = kRotations[round % 8][1];
    if (round % 2 == 0) {
      x[0] += x[1];
      x[1] = RotateLeft(x[1], r0) ^ x[0];
      x[2] += x[3];
      x[3] = RotateLeft(x[3], r1) ^ x[2];
    } else {
      x[0] += x[3];
      x[3] = RotateLeft(x[3], r0) ^ x[0];
      x[2] += x[1];
      x[1] = RotateLeft(x[1], r1) ^ x[2];
    }
    if (round % 4 == 3) {
      const int inject = round / 4;
      for (int i = 0; i < 4; ++i) x[i] += ks[(i + 1 + inject) % 5];
      x[3] += static_cast<uint32_t>(1 + inject);
    }
  }
  return {x[0], x[1], x[2], x[3]};
}

std::array<uint32_t, 2> Philox2x32(uint32_t key,
                                   std::array<uint32_t, 2> count) {
  // _philox2x32_lowering: 10 rounds, the key bumped before each but the
  // first.
  for (int round = 0; round < 10; ++round) {
    if (round > 0) key += 0x9E3779B9u;
    const uint64_t p = uint64_t{count[0]} * 0xD256D193u;
    count = {static_cast<uint32_t>(p >> 32) ^ count[1] ^ key,
             static_cast<uint32_t>(p)};
  }
  return count;
}

int CounterWords(KeyImpl impl) {
  return impl == KeyImpl::kThreefry2x32 || impl == KeyImpl::kPhilox2x32 ? 2 : 4;
}

std::array<uint32_t, 4> ImplBlock(KeyImpl impl, const KeyData& k,
                                  std::array<uint32_t, 4> c) {
  switch (impl) {
    case KeyImpl::kThreefry4x32:
      return Threefry4x32(k, c);
    case KeyImpl::kPhilox4x32:
      return Philox4x32(c, {k[0], k[1]});
    case KeyImpl::kPhilox2x32: {
      const auto y = Philox2x32(k[0], {c[0], c[1]});
      return {y[0], y[1], 0, 0};
    }
    case KeyImpl::kThreefry2x32: {
      const auto y = Threefry2x32({k[0], k[1]}, {c[0], c[1]});
      return {y[0], y[1], 0, 0};
    }
  }
  return {};
}

KeyData ImplSeed(KeyImpl impl, uint64_t seed_bits, int seed_bit_width) {
  const ThreefryKey halves = ThreefrySeed(seed_bits, seed_bit_width);
  const uint32_t k0 = halves[0];
  const uint32_t k1 = halves[1];
  switch (impl) {
    case KeyImpl::kThreefry2x32:
      return {k0, k1, 0, 0};
    case KeyImpl::kThreefry4x32:
      // threefry4x32(k0, k1, 0, 0; 0, 0, 0, 0), all four words.
      return Threefry4x32({k0, k1, 0, 0}, {0, 0, 0, 0});
    case KeyImpl::kPhilox4x32: {
      // philox4x32(0, 0; k0, k1, 0, 0): the first two words.
      const auto y = Philox4x32({k0, k1, 0, 0}, {0, 0});
      return {y[0], y[1], 0, 0};
    }
    case KeyImpl::kPhilox2x32:
      // philox2x32(0; k0, k1): the first word.
      return {Philox2x32(0, {k0, k1})[0], 0, 0, 0};
  }
  return {};
}

namespace {

// The first KeyWords(impl) words of a block's result, as key data.
KeyData KeyOf(KeyImpl impl, const std::array<uint32_t, 4>& y) {
  KeyData k = {0, 0, 0, 0};
  for (int w = 0; w < KeyWords(impl); ++w) k[w] = y[w];
  return k;
}

// The counter the others' split and random_bits give element i: the (hi,
// lo) words of iota_2x32_shape, placed where each implementation puts them.
std::array<uint32_t, 4> IotaCounter(KeyImpl impl, uint64_t i, bool split) {
  const uint32_t hi = static_cast<uint32_t>(i >> 32);
  const uint32_t lo = static_cast<uint32_t>(i);
  if (impl == KeyImpl::kPhilox2x32) return {hi, lo, 0, 0};
  // threefry4x32 / philox4x32: split counts in words 2-3, bits in 0-1.
  return split ? std::array<uint32_t, 4>{0, 0, hi, lo}
               : std::array<uint32_t, 4>{hi, lo, 0, 0};
}

}  // namespace

std::vector<KeyData> ImplSplit(KeyImpl impl, const KeyData& key, int64_t num,
                               bool partitionable) {
  std::vector<KeyData> keys(num);
  if (impl == KeyImpl::kThreefry2x32) {
    const std::vector<ThreefryKey> k =
        ThreefrySplit({key[0], key[1]}, num, partitionable);
    for (int64_t i = 0; i < num; ++i) keys[i] = {k[i][0], k[i][1], 0, 0};
    return keys;
  }
  for (int64_t i = 0; i < num; ++i) {
    keys[i] = KeyOf(impl, ImplBlock(impl, key,
                                    IotaCounter(impl, static_cast<uint64_t>(i),
                                                /*split=*/true)));
  }
  return keys;
}

KeyData ImplFoldIn(KeyImpl impl, const KeyData& key, uint32_t data) {
  if (impl == KeyImpl::kThreefry2x32) {
    const ThreefryKey k = ThreefryFoldIn({key[0], key[1]}, data);
    return {k[0], k[1], 0, 0};
  }
  // The data is the last counter word: (0, data) for philox2x32, (0, 0, 0,
  // data) for the 4-word ones.
  const std::array<uint32_t, 4> c =
      impl == KeyImpl::kPhilox2x32 ? std::array<uint32_t, 4>{0, data, 0, 0}
                                   : std::array<uint32_t, 4>{0, 0, 0, data};
  return KeyOf(impl, ImplBlock(impl, key, c));
}

absl::StatusOr<std::vector<uint64_t>> ImplRandomBits(KeyImpl impl,
                                                     const KeyData& key,
                                                     int bit_width,
                                                     int64_t size,
                                                     bool partitionable) {
  if (impl == KeyImpl::kThreefry2x32) {
    return ThreefryRandomBits({key[0], key[1]}, bit_width, size, partitionable);
  }
  if (bit_width != 8 && bit_width != 16 && bit_width != 32 && bit_width != 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "random_bits: bit_width ", bit_width, " is not one of 8, 16, 32, 64"));
  }
  std::vector<uint64_t> out(size);
  for (int64_t i = 0; i < size; ++i) {
    const auto y = ImplBlock(
        impl, key, IotaCounter(impl, static_cast<uint64_t>(i), false));
    if (bit_width == 64) {
      // threefry4x32 folds words 2-3 into 0-1; the Philox ones join 0 and 1.
      const uint32_t hi = impl == KeyImpl::kThreefry4x32 ? y[0] ^ y[2] : y[0];
      const uint32_t lo = impl == KeyImpl::kThreefry4x32 ? y[1] ^ y[3] : y[1];
      out[i] = (uint64_t{hi} << 32) | lo;
      continue;
    }
    const uint32_t x = y[0] ^ y[1] ^ y[2] ^ y[3];  // philox2x32: y[2..3] = 0
    out[i] = bit_width == 32 ? x : x & ((1u << bit_width) - 1);
  }
  return out;
}

}  // namespace jax2onnx::jaxpr
