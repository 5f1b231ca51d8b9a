// Reads ORT's erf_inv outputs for the f32 bit patterns [lo, hi) from stdin
// (stream.js) and compares each with the interpreter's ErfInvF32 bit for bit
// (NaN equals NaN). Prints the first differences and a count.
//   g++ -O2 -ffp-contract=off -I. -o /tmp/compare \
//       scripts/erf_inv_exhaustive/compare.cc jaxpr/eval/erf_inv.cc
//   printf '{ lambda ; a:f32[4194304]. let b:f32[4194304] = erf_inv a in (b,)
//   }' \
//       > /tmp/e.jaxpr && build/bin/jax2onnx convert /tmp/e.jaxpr -o
//       /tmp/e.onnx
//   node scripts/erf_inv_exhaustive/stream.js /tmp/e.onnx 0 0x3f800002 |
//       /tmp/compare 0 0x3f800002
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "jaxpr/eval/erf_inv.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: compare LO HI < ort_outputs\n");
    return 2;
  }
  const uint64_t lo = std::strtoull(argv[1], nullptr, 0);
  const uint64_t hi = std::strtoull(argv[2], nullptr, 0);
  const size_t n = 4194304;
  std::vector<float> got(n);
  uint64_t differ = 0, total = 0;
  for (uint64_t start = lo; start < hi; start += n) {
    if (std::fread(got.data(), sizeof(float), n, stdin) != n) {
      std::printf("short read at %llx\n",
                  static_cast<unsigned long long>(start));
      return 1;
    }
    for (size_t i = 0; i < n && start + i < hi; ++i, ++total) {
      const uint32_t bits = static_cast<uint32_t>(start + i);
      float x;
      std::memcpy(&x, &bits, sizeof x);
      const float want = jax2onnx::jaxpr::eval::ErfInvF32(x);
      if (std::memcmp(&want, &got[i], sizeof want) == 0) continue;
      if (want != want && got[i] != got[i]) continue;
      if (differ++ < 20)
        std::printf("x=%a interp=%a ort=%a\n", x, want, got[i]);
    }
  }
  std::printf("[%llx, %llx): %llu values, %llu differ\n",
              static_cast<unsigned long long>(lo),
              static_cast<unsigned long long>(hi),
              static_cast<unsigned long long>(total),
              static_cast<unsigned long long>(differ));
  return differ == 0 ? 0 : 1;
}
