// CRC-32 as zip and zlib define it (reflected polynomial 0xEDB88320), the
// checksum of every npz entry. zlib's table-driven crc32_z ran at about
// 1.7 GB/s here and was over half of a ViT-B/16 conversion's CPU time (the
// CRC of each borrowed weight is checked once, see npy.cc); on x86-64 CPUs
// with PCLMULQDQ this folds 64 bytes per step with carry-less multiplies
// (Intel, "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ
// Instruction", 2009) and falls back to zlib elsewhere. Same results as
// crc32_z for every input (tests/io/crc32_test.cc compares them).
#ifndef JAX2ONNX_JAXPR_IO_CRC32_H_
#define JAX2ONNX_JAXPR_IO_CRC32_H_

#include <cstddef>
#include <cstdint>

namespace jax2onnx::jaxpr {

// The CRC-32 of `n` bytes at `data`, continuing from `crc` (0 to start), like
// zlib's crc32_z(crc, data, n).
uint32_t Crc32(uint32_t crc, const uint8_t* data, size_t n);

// Whether Crc32 uses the carry-less-multiply path on this CPU.
bool Crc32UsesClmul();

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_IO_CRC32_H_
