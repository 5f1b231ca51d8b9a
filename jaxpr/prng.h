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
// True for `key<fry>` (threefry2x32, JAX's default implementation).
bool IsThreefryKey(const Aval& aval);

// The PRNG implementations converted (jax/_src/random/*.py), by the tag
// their key type prints (`key<TAG>`) and their key data words (u32[S, W]).
enum class KeyImpl {
  kThreefry2x32,  // key<fry>,  W = 2 (threefry2x32.py)
  kThreefry4x32,  // key<fry4>, W = 4 (threefry4x32.py)
  kPhilox2x32,    // key<phx2>, W = 1 (philox2x32.py)
  kPhilox4x32,    // key<phx4>, W = 2 (philox4x32.py)
};
// The implementation of a key aval (`key<fry>` ...); nullopt for other
// avals and for keys of implementations not converted (rbg, unsafe_rbg).
std::optional<KeyImpl> KeyImplOf(const Aval& aval);
// The implementation an `impl=` param names: the tag (`fry4`) or the name
// (`threefry4x32`, also inside a longer repr); nullopt when none does.
std::optional<KeyImpl> KeyImplOfParam(absl::string_view text);
int KeyWords(KeyImpl impl);
absl::string_view KeyTag(KeyImpl impl);   // "fry", "fry4", "phx2", "phx4"
absl::string_view KeyName(KeyImpl impl);  // "threefry2x32", ...
// The implementation a PRNG equation works on: its `impl` param
// (random_seed, random_wrap) or the type of its key operand 0; an error
// naming what it found otherwise.
absl::StatusOr<KeyImpl> KeyImplOfEqn(const Eqn& eqn);
// True for a key of a converted implementation (KeyImplOf has a value).
bool IsSupportedKey(const Aval& aval);
// u32[S, W] for a key<TAG>[S] of a converted implementation; every other
// aval unchanged. Errors for keys of other implementations.
absl::StatusOr<Aval> PhysicalAval(const Aval& aval);

// The PRNG primitives, which take and make key data themselves.
bool IsPrngPrimitive(absl::string_view primitive);

// True for an equation of a first-order primitive (no nested jaxpr) other
// than the PRNG ones that takes or makes keys (of a converted
// implementation): slice, squeeze,
// concatenate, select_n, gather, ... on key arrays. Such a primitive moves
// whole keys, so the interpreter and both pipelines run it once per key word
// on u32 arrays of the keys' logical shape and interleave the words of the
// results. Calls and control flow pass key data to their bodies unchanged.
bool MovesKeys(const Eqn& eqn);

// Error unless every result of a key-moving equation is a key (or
// dropped): a result that is not a key (`eq` of two key arrays, say) would
// depend on both words, which per-word evaluation cannot combine. Also an
// error when the keys are of different implementations.
absl::Status CheckMovesWholeKeys(const Eqn& eqn);
// The number of words of the keys a key-moving equation moves (its first
// key operand or result).
int MovedKeyWords(const Eqn& eqn);

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

// The block functions of the other implementations, one element each,
// transcribed from their `_*_lowering` (Random123's algorithms: 20 rounds
// of Threefry, 10 of Philox; pinned to Random123's known-answer vectors by
// tests/eval/random_impls_test.cc). Philox-4x32 is jaxpr::Philox4x32
// (jaxpr/xla_rng.h), shared with XLA's RngBitGenerator.
std::array<uint32_t, 4> Threefry4x32(std::array<uint32_t, 4> key,
                                     std::array<uint32_t, 4> count);
std::array<uint32_t, 2> Philox2x32(uint32_t key, std::array<uint32_t, 2> count);

// Key data of any converted implementation: the first KeyWords(impl) words.
using KeyData = std::array<uint32_t, 4>;

// The counter words of the implementation's block function (2 for the 2x32
// ones, 4 for the 4x32 ones); its block primitive takes the KeyWords(impl)
// key words then these, and makes as many words.
int CounterWords(KeyImpl impl);
// The block function on key `k` and counter `c` (the first CounterWords(impl)
// words read and made; the rest 0).
std::array<uint32_t, 4> ImplBlock(KeyImpl impl, const KeyData& k,
                                  std::array<uint32_t, 4> c);

// The PRNGImpl functions of each implementation (seed, split, fold_in,
// random_bits), as JAX's random_seed / random_split / random_fold_in /
// random_bits primitives run them on one key. `partitionable` only matters
// for threefry2x32 (the others have one counter layout).
KeyData ImplSeed(KeyImpl impl, uint64_t seed_bits, int seed_bit_width);
std::vector<KeyData> ImplSplit(KeyImpl impl, const KeyData& key, int64_t num,
                               bool partitionable);
KeyData ImplFoldIn(KeyImpl impl, const KeyData& key, uint32_t data);
absl::StatusOr<std::vector<uint64_t>> ImplRandomBits(KeyImpl impl,
                                                     const KeyData& key,
                                                     int bit_width,
                                                     int64_t size,
                                                     bool partitionable);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_PRNG_H_
