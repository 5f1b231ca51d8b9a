// XLA's RngBitGenerator as its CPU backend computes it (the reference of the
// `rng_bit_generator` primitive, lax.rng_bit_generator): the Philox-4x32 and
// Threefry-2x32 block ciphers and the counter layouts of
// xla/hlo/builder/lib/prng.cc, driven by the state handling of
// xla/hlo/transforms/expanders/rng_bit_generator_expander.cc. Shared by the
// reference interpreter and the tests that pin it to Random123's
// known-answer vectors and to JAX's published rbg values
// (tests/eval/rng_bit_generator_test.cc).
//
// State: u64[2] = {key, counter} (JAX bitcasts its u32[4] key in
// little-endian pairs). THREE_FRY counts from the counter; PHILOX counts a
// 128-bit number whose low word is the counter and high word the key, and
// keeps only the low word; RNG_DEFAULT is PHILOX on CPU and GPU (XLA adds
// the expander with RNG_PHILOX there).
#ifndef JAX2ONNX_JAXPR_XLA_RNG_H_
#define JAX2ONNX_JAXPR_XLA_RNG_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jax2onnx::jaxpr {

enum class RngAlgorithm { kDefault, kThreeFry, kPhilox };

// RNG_DEFAULT / RNG_THREE_FRY / RNG_PHILOX (the names JAX prints; also the
// integers 0/1/2 and StableHLO's DEFAULT/THREE_FRY/PHILOX).
absl::StatusOr<RngAlgorithm> ParseRngAlgorithm(absl::string_view text);
// The algorithm XLA's CPU backend runs for `a` (DEFAULT -> PHILOX).
RngAlgorithm CpuRngAlgorithm(RngAlgorithm a);

// Philox-4x32 with 10 rounds (Random123 philox4x32_10).
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key);

struct RngBitGeneratorResult {
  std::array<uint64_t, 2> state;  // {key, new counter}
  std::vector<uint64_t> bits;     // row-major, each in the low bit_width bits
};

// rng_bit_generator(state, shape) -> (new state, bits) for bit_width 8, 16,
// 32 or 64. Errors for other widths and for more than 2^40 values.
absl::StatusOr<RngBitGeneratorResult> XlaRngBitGenerator(
    std::array<uint64_t, 2> state, const std::vector<int64_t>& shape,
    int bit_width, RngAlgorithm algorithm);

// XLA's SplitShapeIntoHalves for the 32-bit Threefry path: the dimension the
// pairs of outputs interleave along (-1 for a scalar), and the halved shape.
struct ThreefrySplit32 {
  int split_dim;
  std::vector<int64_t> half_shape;
};
ThreefrySplit32 SplitShapeIntoHalves(const std::vector<int64_t>& shape);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_XLA_RNG_H_
