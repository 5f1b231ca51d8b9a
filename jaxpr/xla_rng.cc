#include "jaxpr/xla_rng.h"

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/prng.h"

namespace jax2onnx::jaxpr {

absl::StatusOr<RngAlgorithm> ParseRngAlgorithm(absl::string_view text) {
  if (text == "RNG_DEFAULT" || text == "DEFAULT" || text == "0") {
    return RngAlgorithm::kDefault;
  }
  if (text == "RNG_THREE_FRY" || text == "THREE_FRY" || text == "1") {
    return RngAlgorithm::kThreeFry;
  }
  if (text == "RNG_PHILOX" || text == "PHILOX" || text == "2") {
    return RngAlgorithm::kPhilox;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown rng algorithm '", text,
                   "' (expected RNG_DEFAULT, RNG_THREE_FRY or RNG_PHILOX)"));
}

RngAlgorithm CpuRngAlgorithm(RngAlgorithm a) {
  return a == RngAlgorithm::kDefault ? RngAlgorithm::kPhilox : a;
}

std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> x,
                                   std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{x[0]} * 0xD2511F53u;
    const uint64_t p1 = uint64_t{x[2]} * 0xCD9E8D57u;
    x = {static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ key[0],
         static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ key[1],
         static_cast<uint32_t>(p0)};
    key[0] += 0x9E3779B9u;
    key[1] += 0xBB67AE85u;
  }
  return x;
}

ThreefrySplit32 SplitShapeIntoHalves(const std::vector<int64_t>& shape) {
  if (shape.empty()) return {-1, {1}};
  int split = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] % 2 == 0) {
      split = static_cast<int>(i);
      break;
    }
  }
  if (split == -1) {
    // No even dimension: the first largest one.
    split = 0;
    for (size_t i = 1; i < shape.size(); ++i) {
      if (shape[i] > shape[split]) split = static_cast<int>(i);
    }
  }
  std::vector<int64_t> half = shape;
  half[split] = (shape[split] + 1) / 2;
  return {split, half};
}

namespace {

std::array<uint32_t, 2> Words(uint64_t x) {
  return {static_cast<uint32_t>(x), static_cast<uint32_t>(x >> 32)};
}

int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

RngBitGeneratorResult ThreeFry(std::array<uint64_t, 2> state,
                               const std::vector<int64_t>& shape,
                               int bit_width) {
  const ThreefryKey key = Words(state[0]);
  const uint64_t counter = state[1];
  RngBitGeneratorResult r;
  const int64_t n = NumElements(shape);
  r.bits.resize(n);
  if (bit_width == 64) {
    // ThreeFryRngBit64: one block per element, (lo, hi) words.
    for (int64_t i = 0; i < n; ++i) {
      const auto y = Threefry2x32(key, Words(counter + uint64_t(i)));
      r.bits[i] = uint64_t{y[0]} | (uint64_t{y[1]} << 32);
    }
    r.state = {state[0], counter + uint64_t(n)};
    return r;
  }
  // ThreeFryRngBit32: one block per element of the halved shape; its two
  // outputs are the elements 2h and 2h + 1 along the split dimension.
  const ThreefrySplit32 split = SplitShapeIntoHalves(shape);
  const int64_t m = NumElements(split.half_shape);
  if (split.split_dim < 0) {
    r.bits[0] = Threefry2x32(key, Words(counter))[0];
  } else {
    const int s = split.split_dim;
    int64_t inner = 1;  // elements per step of the split dim in `shape`
    for (size_t d = s + 1; d < shape.size(); ++d) inner *= shape[d];
    for (int64_t h = 0; h < m; ++h) {
      // h = (outer, hs, in) in the halved shape, row-major.
      const int64_t in = h % inner;
      const int64_t hs = (h / inner) % split.half_shape[s];
      const int64_t outer = h / inner / split.half_shape[s];
      const auto y = Threefry2x32(key, Words(counter + uint64_t(h)));
      for (int j = 0; j < 2; ++j) {
        const int64_t along = 2 * hs + j;
        if (along >= shape[s]) continue;
        const int64_t flat = (outer * shape[s] + along) * inner + in;
        r.bits[flat] = y[j];
      }
    }
  }
  r.state = {state[0], counter + uint64_t(m)};
  if (bit_width < 32) {
    for (uint64_t& b : r.bits) b &= (uint64_t{1} << bit_width) - 1;
  }
  return r;
}

RngBitGeneratorResult Philox(std::array<uint64_t, 2> state,
                             const std::vector<int64_t>& shape,
                             int bit_width) {
  const std::array<uint32_t, 2> key = Words(state[0]);
  const int64_t n = NumElements(shape);
  const int64_t words = bit_width == 64 ? 2 * n : n;
  const int64_t blocks = (words + 3) / 4;
  RngBitGeneratorResult r;
  r.bits.resize(n);
  for (int64_t j = 0; j < blocks; ++j) {
    // The 128-bit counter (low = state[1], high = key) plus j.
    const uint64_t lo = state[1] + uint64_t(j);
    const uint64_t hi = state[0] + (lo < state[1] ? 1 : 0);
    const auto lw = Words(lo);
    const auto hw = Words(hi);
    const auto y = Philox4x32({lw[0], lw[1], hw[0], hw[1]}, key);
    if (bit_width == 64) {
      for (int k = 0; k < 2; ++k) {
        const int64_t i = 2 * j + k;
        if (i < n) {
          r.bits[i] = uint64_t{y[2 * k]} | (uint64_t{y[2 * k + 1]} << 32);
        }
      }
    } else {
      for (int k = 0; k < 4; ++k) {
        const int64_t i = 4 * j + k;
        if (i < n) r.bits[i] = y[k];
      }
    }
  }
  r.state = {state[0], state[1] + uint64_t(blocks)};
  if (bit_width < 32) {
    for (uint64_t& b : r.bits) b &= (uint64_t{1} << bit_width) - 1;
  }
  return r;
}

}  // namespace

absl::StatusOr<RngBitGeneratorResult> XlaRngBitGenerator(
    std::array<uint64_t, 2> state, const std::vector<int64_t>& shape,
    int bit_width, RngAlgorithm algorithm) {
  if (bit_width != 8 && bit_width != 16 && bit_width != 32 &&
      bit_width != 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rng_bit_generator: ", bit_width, "-bit values are not supported"));
  }
  const int64_t n = NumElements(shape);
  if (n > (int64_t{1} << 40)) {
    return absl::InvalidArgumentError(
        absl::StrCat("rng_bit_generator: ", n, " values are too many"));
  }
  if (CpuRngAlgorithm(algorithm) == RngAlgorithm::kThreeFry) {
    return ThreeFry(state, shape, bit_width);
  }
  return Philox(state, shape, bit_width);
}

}  // namespace jax2onnx::jaxpr
