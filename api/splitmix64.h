// splitmix64: a tiny PRNG whose sequence is the same on every platform, so a
// seed reproduces the same random inputs (check) and npz files (randomize)
// anywhere.
#ifndef JAX2ONNX_API_SPLITMIX64_H_
#define JAX2ONNX_API_SPLITMIX64_H_

#include <cstdint>

namespace jax2onnx::api {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi) from the top 53 bits.
  double Uniform(double lo, double hi) {
    return lo + (hi - lo) * (static_cast<double>(Next() >> 11) * 0x1.0p-53);
  }
  // Uniform in [0, span], inclusive; span 2^64 - 1 (the whole uint64 range,
  // where span + 1 wraps to 0) draws Next() whole instead of dividing by 0.
  uint64_t UpTo(uint64_t span) {
    return span == UINT64_MAX ? Next() : Next() % (span + 1);
  }
  // Uniform in [lo, hi], inclusive (the span taken in uint64, so the full
  // int64 range works too).
  int64_t Int(int64_t lo, int64_t hi) {
    return static_cast<int64_t>(
        static_cast<uint64_t>(lo) +
        UpTo(static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo)));
  }

 private:
  uint64_t state_;
};

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_SPLITMIX64_H_
