#!/usr/bin/python3
"""Writes the npz of the testdata/random/rng_bit_generator_* bundles: a key
input and the outputs (new key, bits) of lax.rng_bit_generator as XLA's CPU
backend computes them, from a numpy transcription of XLA written
independently of the C++ interpreter (jaxpr/rng_bit_generator.cc):

  * JAX's lowering (jax/_src/lax/lax.py _rng_bit_generator_lowering): the
    u32[4] key is bitcast to u64[2] (little-endian pairs); u8/u16 results are
    u32 results truncated.
  * XLA's RngBitGeneratorExpander (xla/hlo/transforms/expanders/
    rng_bit_generator_expander.cc): state[0] is the key; THREE_FRY counts from
    state[1]; PHILOX counts a 128-bit counter (low = state[1], high =
    state[0]) and keeps only the low word; RNG_DEFAULT is PHILOX on CPU and
    GPU (xla/service/cpu/cpu_compiler.cc adds the expander with RNG_PHILOX).
  * xla/hlo/builder/lib/prng.cc: ThreeFryRngBit32 (SplitShapeIntoHalves,
    CombineShapePair), ThreeFryRngBit64, PhiloxRngBit32/64 (round-robin).

Both block functions are first checked against Random123's published
known-answer vectors (github.com/DEShawResearch/random123, tests/kat_vectors,
the "threefry2x32 20" and "philox4x32 10" lines; columns: counter words, key
words, expected words).

  /usr/bin/python3 scripts/rng_bit_generator_numpy.py   (from the repo root)
"""
import numpy as np

U32 = np.uint32
U64 = np.uint64
M32 = (1 << 32) - 1


def rotl(x, r):
    return (x << U32(r)) | (x >> U32(32 - r))


def threefry2x32(k0, k1, x0, x1):
    """Threefry-2x32, 20 rounds, on uint32 arrays (Salmon et al. SC'11)."""
    rot = [(13, 15, 26, 6), (17, 29, 16, 24)]
    ks = [k0, k1, U32(0x1BD11BDA) ^ k0 ^ k1]
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    for i in range(5):
        for r in rot[i % 2]:
            x0 = x0 + x1
            x1 = rotl(x1, r) ^ x0
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + U32(i + 1)
    return x0, x1


def philox4x32(c, k):
    """Philox-4x32, 10 rounds; c: 4 uint32 arrays, k: 2 uint32 arrays."""
    c = list(c)
    k = list(k)
    for _ in range(10):
        p0 = c[0].astype(U64) * U64(0xD2511F53)
        p1 = c[2].astype(U64) * U64(0xCD9E8D57)
        c = [(p1 >> U64(32)).astype(U32) ^ c[1] ^ k[0], p1.astype(U32),
             (p0 >> U64(32)).astype(U32) ^ c[3] ^ k[1], p0.astype(U32)]
        k = [k[0] + U32(0x9E3779B9), k[1] + U32(0xBB67AE85)]
    return c


def a32(*xs):
    return [np.array([x], dtype=U32) for x in xs]


def check_known_answers():
    # tests/kat_vectors: "threefry2x32 20 CTR0 CTR1 KEY0 KEY1 OUT0 OUT1".
    for ctr, key, want in [
        ((0, 0), (0, 0), (0x6b200159, 0x99ba4efe)),
        ((M32, M32), (M32, M32), (0x1cb996fc, 0xbb002be7)),
        ((0x243f6a88, 0x85a308d3), (0x13198a2e, 0x03707344),
         (0xc4923a9c, 0x483df7a0)),
    ]:
        k0, k1, c0, c1 = a32(*key, *ctr)
        got = threefry2x32(k0, k1, c0, c1)
        assert [int(g[0]) for g in got] == list(want), (ctr, key, got)
    # tests/kat_vectors: "philox4x32 10 CTR0..3 KEY0 KEY1 OUT0..3".
    for ctr, key, want in [
        ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c,
                                0x9b00dbd8)),
        ((M32,) * 4, (M32, M32), (0x408f276d, 0x41c83b0e, 0xa20bc7c6,
                                  0x6d5451fd)),
        ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
         (0xa4093822, 0x299f31d0), (0xd16cfe09, 0x94fdcceb, 0x5001e420,
                                    0x24126ea1)),
    ]:
        got = philox4x32(a32(*ctr), a32(*key))
        assert [int(g[0]) for g in got] == list(want), (ctr, key, got)


def split_halves(shape):
    """XLA SplitShapeIntoHalves: (split_dim, half dims without the new 1)."""
    if not shape:
        return None, [1]
    split = next((i for i, d in enumerate(shape) if d % 2 == 0), None)
    if split is None:
        split = 0
        for i, d in enumerate(shape):
            if d > shape[split]:
                split = i
    half = list(shape)
    half[split] = (shape[split] + 1) // 2
    return split, half


def threefry_bits(key64, state, shape, width):
    """(value, new state) of XLA's ThreeFryBitGenerator."""
    k0, k1 = U32(key64 & M32), U32(key64 >> 32)
    if width == 64:
        n = int(np.prod(shape, dtype=np.int64))
        ctr = [(state + i) & ((1 << 64) - 1) for i in range(n)]
        x0 = np.array([c & M32 for c in ctr], dtype=U32)
        x1 = np.array([c >> 32 for c in ctr], dtype=U32)
        y0, y1 = threefry2x32(k0, k1, x0, x1)
        value = (y0.astype(U64) | (y1.astype(U64) << U64(32))).reshape(shape)
        return value, state + n
    split, half = split_halves(list(shape))
    m = int(np.prod(half, dtype=np.int64))
    ctr = [(state + i) & ((1 << 64) - 1) for i in range(m)]
    x0 = np.array([c & M32 for c in ctr], dtype=U32)
    x1 = np.array([c >> 32 for c in ctr], dtype=U32)
    y0, y1 = threefry2x32(k0, k1, x0, x1)
    if split is None:
        value = y0.reshape(())
    else:
        # Element 2h + j along the split dim is output j of half index h.
        both = np.stack([y0.reshape(half), y1.reshape(half)], axis=split + 1)
        full = list(shape)
        full[split] = 2 * half[split]
        value = both.reshape(full)
        value = value[tuple(slice(0, d) for d in shape)]
    return value, state + m


def philox_bits(key64, state, shape, width):
    """(value, new state) of XLA's PhiloxBitGenerator with the expander's
    128-bit counter (low word = state, high word = key)."""
    k = [U32(key64 & M32), U32(key64 >> 32)]
    n = int(np.prod(shape, dtype=np.int64))
    words = 2 * n if width == 64 else n
    n4 = (words + 3) // 4
    base = (key64 << 64) | state
    ctrs = [(base + j) & ((1 << 128) - 1) for j in range(n4)]
    c = [np.array([(x >> (32 * w)) & M32 for x in ctrs], dtype=U32)
         for w in range(4)]
    out = philox4x32(c, [np.full(n4, k[0], U32), np.full(n4, k[1], U32)])
    if width == 64:
        lo = out[0].astype(U64) | (out[1].astype(U64) << U64(32))
        hi = out[2].astype(U64) | (out[3].astype(U64) << U64(32))
        flat = np.stack([lo, hi], axis=1).reshape(-1)[:n]
    else:
        flat = np.stack(out, axis=1).reshape(-1)[:n]
    return flat.reshape(shape), (state + n4) & ((1 << 64) - 1)


def rng_bit_generator(key, shape, dtype, algorithm):
    """jax.lax.rng_bit_generator(key: u32[4] or u64[2], shape, dtype,
    algorithm) on CPU."""
    wide = key.dtype == U64
    key = [int(x) for x in key]
    if wide:
        key64, state = key
    else:
        key64 = key[0] | (key[1] << 32)
        state = key[2] | (key[3] << 32)
    width = np.dtype(dtype).itemsize * 8
    gen_width = 64 if width == 64 else 32
    if algorithm in ("RNG_DEFAULT", "RNG_PHILOX"):
        value, new = philox_bits(key64, state, shape, gen_width)
    else:
        value, new = threefry_bits(key64, state, shape, gen_width)
    new &= (1 << 64) - 1
    if wide:
        new_key = np.array([key64, new], dtype=U64)
    else:
        new_key = np.array([key[0], key[1], new & M32, new >> 32], dtype=U32)
    return new_key, np.asarray(value).astype(dtype)


CASES = [
    # name, key u32[4], shape, dtype, algorithm
    ("rng_bit_generator_default_u32", [0, 42, 7, 0], (2, 3), np.uint32,
     "RNG_DEFAULT"),
    ("rng_bit_generator_philox_carry", [0x12345678, 0x9abcdef0, 0xFFFFFFFE,
                                        0xFFFFFFFF], (3, 3), np.uint32,
     "RNG_PHILOX"),
    ("rng_bit_generator_philox_u64", [1, 2, 3, 4], (5,), np.uint64,
     "RNG_PHILOX"),
    ("rng_bit_generator_philox_u8", [11, 22, 33, 44], (7,), np.uint8,
     "RNG_PHILOX"),
    ("rng_bit_generator_threefry_u32", [5, 6, 0xFFFFFFFD, 0], (3, 5),
     np.uint32, "RNG_THREE_FRY"),
    ("rng_bit_generator_threefry_u16", [9, 8, 7, 6], (4, 3), np.uint16,
     "RNG_THREE_FRY"),
    ("rng_bit_generator_threefry_u64", [0xdeadbeef, 0x01234567, 0xFFFFFFFF,
                                        0xFFFFFFFF], (3,), np.uint64,
     "RNG_THREE_FRY"),
    ("rng_bit_generator_threefry_scalar", [1, 0, 0, 0], (), np.uint32,
     "RNG_THREE_FRY"),
    ("rng_bit_generator_u64_key", np.array([0x0123456789abcdef,
                                            0xfffffffffffffffe], dtype=U64),
     (6,), np.uint32, "RNG_PHILOX"),
    ("rng_bit_generator_without_out_sharding", [3, 1, 4, 1], (7,), np.uint16,
     "RNG_PHILOX"),
]


def check_jax_published_values():
    """jax-ml/jax tests/random_test.py _RANDOM_VALUES_CASES, the "uniform"
    "rbg" row: random.uniform(key, (5,), float32) with the rbg key of seed
    zlib.adler32(b"uniformrbg") (rbg.py _rbg_seed: the threefry seed [0, s]
    twice), i.e. rng_bit_generator(key, (5,), uint32) with RNG_DEFAULT on CPU
    and JAX's mantissa trick (random.py _uniform)."""
    s = 395641916  # zlib.adler32(b"uniformrbg")
    _, bits = rng_bit_generator(np.array([0, s, 0, s], dtype=U32), (5,),
                                np.uint32, "RNG_DEFAULT")
    floats = ((bits >> U32(9)) | U32(0x3F800000)).view(np.float32) - 1
    want = [0.477161, 0.706508, 0.656261, 0.432547, 0.057772]
    assert np.allclose(floats, want, atol=1e-6), floats


# Bundles kept beside the releases whose print form they show.
DIRS = {"rng_bit_generator_without_out_sharding":
        "testdata/jax_versions/0.4.30"}


def main():
    check_known_answers()
    check_jax_published_values()
    for name, key, shape, dtype, alg in CASES:
        key = np.asarray(key, dtype=getattr(key, "dtype", U32))
        new_key, bits = rng_bit_generator(key, shape, dtype, alg)
        np.savez(f"{DIRS.get(name, 'testdata/random')}/{name}.npz", input_0=key,
                 expected_0=new_key, expected_1=bits)
        print(name, new_key, bits.reshape(-1)[:4])


if __name__ == "__main__":
    with np.errstate(over="ignore"):
        main()
