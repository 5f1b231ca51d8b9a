// JAX's threefry2x32 PRNG, bit for bit, and the typed-key data model.
//
// A typed key `key<fry>[S]` is, physically, uint32[S, 2] (JAX's
// core.physical_aval; jax.random.key_data): in npz bundles and in ONNX.
// The functions below follow jax/_src/random/threefry2x32.py and
// jax/_src/random/prng.py (jax-ml/jax); they are shared by the reference
// interpreter and by the tests that pin it to published values.
//
// JAX derives counters in two ways (`jax_threefry_partitionable`, default
// on since JAX 0.5.0). A printed jaxpr does not say which one traced it, so
// the mode is an option of each run (jaxpr::EvalOptions, the converters'
// options), resolved per bundle by ThreefryModeOf.
#ifndef JAX2ONNX_JAXPR_PRNG_H_
#define JAX2ONNX_JAXPR_PRNG_H_

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

// True for any PRNG key dtype (`key<fry>`, `key<rbg>`, ...).
bool IsPrngKey(const Aval& aval);
// True for `key<fry>` (threefry2x32), the only implementation converted.
bool IsThreefryKey(const Aval& aval);
// u32[S, 2] for key<fry>[S]; every other aval unchanged. Errors for keys of
// other implementations (their key data has another shape).
absl::StatusOr<Aval> PhysicalAval(const Aval& aval);

// The PRNG primitives, which take and make key data themselves.
bool IsPrngPrimitive(absl::string_view primitive);

// True for an equation of a first-order primitive (no nested jaxpr) other
// than the PRNG ones that takes or makes threefry keys: slice, squeeze,
// concatenate, select_n, gather, ... on key arrays. Such a primitive moves
// whole keys, so the interpreter and both pipelines run it once per key word
// on u32 arrays of the keys' logical shape and interleave the words of the
// results. Calls and control flow pass key data to their bodies unchanged.
bool MovesKeys(const Eqn& eqn);

// Error unless every result of a key-moving equation is a key (or
// dropped): a result that is not a key (`eq` of two key arrays, say) would
// depend on both words, which per-word evaluation cannot combine.
absl::Status CheckMovesWholeKeys(const Eqn& eqn);

// The mode a bundle was traced in: its `# threefry_partitionable: true|false`
// header when present (a fact about the bundle), else `fallback` (the
// option). Error for another header value.
absl::StatusOr<bool> ThreefryModeOf(const JaxprFile& file, bool fallback);

using ThreefryKey = std::array<uint32_t, 2>;

// The Threefry-2x32 block cipher with 20 rounds (Random123; JAX's
// threefry2x32 primitive on one element).
std::array<uint32_t, 2> Threefry2x32(ThreefryKey key,
                                     std::array<uint32_t, 2> count);

// JAX's threefry_2x32(keypair, count) on a flat count vector: the counts
// (padded with one 0 when odd) are split in halves that form the pairs, and
// the two output halves are concatenated (and the padding dropped).
std::vector<uint32_t> Threefry2x32Flat(ThreefryKey key,
                                       const std::vector<uint32_t>& counts);

// threefry_seed: a 64-bit seed gives (seed >> 32, low 32 bits); narrower
// seeds give (0, the seed's two's-complement low 32 bits).
ThreefryKey ThreefrySeed(uint64_t seed_bits, int seed_bit_width);

// `num` new keys from `key` (threefry_split) in the given mode.
std::vector<ThreefryKey> ThreefrySplit(ThreefryKey key, int64_t num,
                                       bool partitionable);

// threefry_fold_in: threefry_2x32(key, threefry_seed(uint32 data)).
ThreefryKey ThreefryFoldIn(ThreefryKey key, uint32_t data);

// threefry_random_bits: `size` values of `bit_width` bits (8, 16, 32, 64),
// each in the low bits of a uint64. Errors for unsupported widths and for
// sizes JAX's original mode would split into several blocks (>= 2^32 - 1
// counters).
absl::StatusOr<std::vector<uint64_t>> ThreefryRandomBits(ThreefryKey key,
                                                         int bit_width,
                                                         int64_t size,
                                                         bool partitionable);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_PRNG_H_
