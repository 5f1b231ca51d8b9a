#include "jaxpr/io/crc32.h"

#include <zlib.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace jax2onnx::jaxpr {
namespace {

#if defined(__x86_64__)
#define J2O_CLMUL __attribute__((target("pclmul,sse4.1")))

J2O_CLMUL inline __m128i Load(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// acc * x^128 (mod P) + next, with k = (k3, k4).
J2O_CLMUL inline __m128i Fold16(__m128i k, __m128i acc, __m128i next) {
  const __m128i lo = _mm_clmulepi64_si128(acc, k, 0x00);
  const __m128i hi = _mm_clmulepi64_si128(acc, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(hi, next), lo);
}

// Folds n bytes (n >= 64, a multiple of 16) into `crc`, which is the
// pre-inverted running CRC (~crc in zlib's terms); returns the same form.
// The constants are x^(k) mod P(x) for the bit-reflected CRC-32 polynomial
// in the paper's notation: k1 = x^(4*128+32), k2 = x^(4*128-32) fold 64-byte
// blocks; k3 = x^(128+32), k4 = x^(128-32) fold 16-byte blocks; k5 = x^64
// folds 128 to 64 bits; then Barrett reduction with P(x) and
// u = floor(x^64 / P(x)).
J2O_CLMUL uint32_t FoldClmul(uint32_t crc, const uint8_t* buf, size_t n) {
  alignas(16) static const uint64_t k1k2[] = {0x0154442bd4, 0x01c6e41596};
  alignas(16) static const uint64_t k3k4[] = {0x01751997d0, 0x00ccaa009e};
  alignas(16) static const uint64_t k5k0[] = {0x0163cd6124, 0x0000000000};
  alignas(16) static const uint64_t poly[] = {0x01db710641, 0x01f7011641};

  __m128i x1 = Load(buf + 0x00);
  __m128i x2 = Load(buf + 0x10);
  __m128i x3 = Load(buf + 0x20);
  __m128i x4 = Load(buf + 0x30);
  x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128(static_cast<int>(crc)));
  __m128i k = _mm_load_si128(reinterpret_cast<const __m128i*>(k1k2));
  buf += 64;
  n -= 64;

  // Four independent 128-bit lanes, each folded 512 bits forward.
  while (n >= 64) {
    const __m128i x5 = _mm_clmulepi64_si128(x1, k, 0x00);
    const __m128i x6 = _mm_clmulepi64_si128(x2, k, 0x00);
    const __m128i x7 = _mm_clmulepi64_si128(x3, k, 0x00);
    const __m128i x8 = _mm_clmulepi64_si128(x4, k, 0x00);
    x1 = _mm_clmulepi64_si128(x1, k, 0x11);
    x2 = _mm_clmulepi64_si128(x2, k, 0x11);
    x3 = _mm_clmulepi64_si128(x3, k, 0x11);
    x4 = _mm_clmulepi64_si128(x4, k, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), Load(buf + 0x00));
    x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), Load(buf + 0x10));
    x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), Load(buf + 0x20));
    x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), Load(buf + 0x30));
    buf += 64;
    n -= 64;
  }

  // The four lanes into one, then the remaining 16-byte blocks.
  k = _mm_load_si128(reinterpret_cast<const __m128i*>(k3k4));
  x1 = Fold16(k, x1, x2);
  x1 = Fold16(k, x1, x3);
  x1 = Fold16(k, x1, x4);
  while (n >= 16) {
    x1 = Fold16(k, x1, Load(buf));
    buf += 16;
    n -= 16;
  }

  // 128 bits to 64.
  x2 = _mm_clmulepi64_si128(x1, k, 0x10);
  x3 = _mm_setr_epi32(~0, 0, ~0, 0);
  x1 = _mm_srli_si128(x1, 8);
  x1 = _mm_xor_si128(x1, x2);
  k = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(k5k0));
  x2 = _mm_srli_si128(x1, 4);
  x1 = _mm_and_si128(x1, x3);
  x1 = _mm_clmulepi64_si128(x1, k, 0x00);
  x1 = _mm_xor_si128(x1, x2);

  // Barrett reduction to 32 bits.
  k = _mm_load_si128(reinterpret_cast<const __m128i*>(poly));
  x2 = _mm_and_si128(x1, x3);
  x2 = _mm_clmulepi64_si128(x2, k, 0x10);
  x2 = _mm_and_si128(x2, x3);
  x2 = _mm_clmulepi64_si128(x2, k, 0x00);
  x1 = _mm_xor_si128(x1, x2);
  return static_cast<uint32_t>(_mm_extract_epi32(x1, 1));
}

bool DetectClmul() {
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}
#endif

}  // namespace

bool Crc32UsesClmul() {
#if defined(__x86_64__)
  static const bool has = DetectClmul();
  return has;
#else
  return false;
#endif
}

uint32_t Crc32(uint32_t crc, const uint8_t* data, size_t n) {
#if defined(__x86_64__)
  if (n >= 64 && Crc32UsesClmul()) {
    const size_t folded = n & ~static_cast<size_t>(15);
    crc = ~FoldClmul(~crc, data, folded);
    data += folded;
    n -= folded;
  }
#endif
  // zlib's length type is z_size_t (size_t); no 4 GiB chunking needed.
  return static_cast<uint32_t>(crc32_z(crc, data, n));
}

}  // namespace jax2onnx::jaxpr
