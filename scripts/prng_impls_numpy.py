#!/usr/bin/python3
"""Writes the bundles of JAX's other PRNG implementations (threefry4x32,
philox2x32, philox4x32; keys key<fry4>, key<phx2>, key<phx4>) under
testdata/random: the .jaxpr, written in JAX 0.11's print style, and the npz
(inputs and expected outputs) from a numpy transcription of
jax/_src/random/{threefry4x32,philox2x32,philox4x32}.py (jax-ml/jax, 2026)
written independently of the C++ interpreter (jaxpr/prng.cc):

  * the block functions (`_*_lowering`): Threefry-4x32 with 20 rounds,
    Philox-2x32 and Philox-4x32 with 10 (Random123's algorithms), first
    checked against Random123's known-answer vectors (github.com/
    DEShawResearch/random123 tests/kat_vectors, as quoted by jax-ml/jax
    tests/random_impl_test.py), which are also the expected values of the
    *_kat bundles;
  * the PRNGImpl functions: seed hashes (seed >> 32, seed & 0xFFFFFFFF);
    split and random_bits hash the (hi, lo) words of iota_2x32_shape (split
    in counter words 2-3, bits in 0-1; philox2x32 has only 0-1); fold_in
    puts the data in the last counter word; random_bits folds the result
    words by xor (64 bits: threefry4x32 (y0^y2, y1^y3), Philox (y0, y1)).

  /usr/bin/python3 scripts/prng_impls_numpy.py   (from the repo root)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rng_bit_generator_numpy import philox4x32 as philox4x32_ck  # noqa: E402
from rng_bit_generator_numpy import rotl  # noqa: E402

U32 = np.uint32
U64 = np.uint64
M32 = (1 << 32) - 1


def a32(x):
    return np.asarray(x, dtype=U32)


def threefry4x32(k, x):
    """Threefry-4x32, 20 rounds; k, x: 4 uint32 arrays each."""
    rot = [(10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 11),
           (25, 10), (18, 20)]
    k = [a32(w) for w in k]
    ks = k + [k[0] ^ k[1] ^ k[2] ^ k[3] ^ U32(0x1BD11BDA)]
    x = [a32(x[i]) + ks[i] for i in range(4)]
    for r in range(20):
        r0, r1 = rot[r % 8]
        if r % 2 == 0:
            x[0] = x[0] + x[1]
            x[1] = rotl(x[1], r0) ^ x[0]
            x[2] = x[2] + x[3]
            x[3] = rotl(x[3], r1) ^ x[2]
        else:
            x[0] = x[0] + x[3]
            x[3] = rotl(x[3], r0) ^ x[0]
            x[2] = x[2] + x[1]
            x[1] = rotl(x[1], r1) ^ x[2]
        if r % 4 == 3:
            j = r // 4
            x = [x[i] + ks[(i + 1 + j) % 5] for i in range(4)]
            x[3] = x[3] + U32(j + 1)
    return x


def philox2x32(k, c0, c1):
    """Philox-2x32, 10 rounds, the key bumped before every round but the
    first."""
    k, c0, c1 = a32(k), a32(c0), a32(c1)
    for r in range(10):
        if r:
            k = k + U32(0x9E3779B9)
        p = c0.astype(U64) * U64(0xD256D193)
        c0, c1 = (p >> U64(32)).astype(U32) ^ c1 ^ k, p.astype(U32)
    return [c0, c1]


def philox4x32(k0, k1, c0, c1, c2, c3):
    """Philox-4x32, 10 rounds, in the primitive's operand order."""
    shape = np.broadcast_shapes(*(np.shape(v) for v in
                                  (k0, k1, c0, c1, c2, c3)))
    b = [np.broadcast_to(a32(v), shape).copy() for v in (c0, c1, c2, c3)]
    k = [np.broadcast_to(a32(v), shape).copy() for v in (k0, k1)]
    return philox4x32_ck(b, k)


def check_known_answers():
    # tests/kat_vectors: "threefry4x32 20 CTR0..3 KEY0..3 OUT0..3".
    for key, ctr, want in THREEFRY4X32_KAT:
        got = threefry4x32([a32(w) for w in key], [a32(w) for w in ctr])
        assert [int(g) for g in got] == list(want), (key, ctr, got)
    # "philox2x32 10 CTR0 CTR1 KEY OUT0 OUT1".
    for key, ctr, want in PHILOX2X32_KAT:
        got = philox2x32(key[0], ctr[0], ctr[1])
        assert [int(g) for g in got] == list(want), (key, ctr, got)
    # "philox4x32 10 CTR0..3 KEY0 KEY1 OUT0..3".
    for key, ctr, want in PHILOX4X32_KAT:
        got = philox4x32(*key, *ctr)
        assert [int(g) for g in got] == list(want), (key, ctr, got)


# (key, counter, expected) from jax-ml/jax tests/random_impl_test.py, which
# quotes random123/tests/kat_vectors.
THREEFRY4X32_KAT = [
    ((0, 0, 0, 0), (0, 0, 0, 0),
     (0x9C6CA96A, 0xE17EAE66, 0xFC10ECD4, 0x5256A7D8)),
    ((M32,) * 4, (M32,) * 4,
     (0x2A881696, 0x57012287, 0xF6C7446E, 0xA16A6732)),
    ((0xA4093822, 0x299F31D0, 0x082EFA98, 0xEC4E6C89),
     (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
     (0x59CD1DBB, 0xB8879579, 0x86B5D00C, 0xAC8B6D84)),
]
PHILOX2X32_KAT = [
    ((0,), (0, 0), (0xFF1DAE59, 0x6CD10DF2)),
    ((M32,), (M32, M32), (0x2C3F628B, 0xAB4FD7AD)),
    ((0x13198A2E,), (0x243F6A88, 0x85A308D3), (0xDD7CE038, 0xF62A4C12)),
]
PHILOX4X32_KAT = [
    ((0, 0), (0, 0, 0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((M32, M32), (M32,) * 4,
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0xA4093822, 0x299F31D0), (0x243F6A88, 0x85A308D3, 0x13198A2E,
                                0x03707344),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]

WORDS = {"fry4": 4, "phx2": 1, "phx4": 2}
NAMES = {"fry4": "threefry4x32", "phx2": "philox2x32", "phx4": "philox4x32"}


def block(tag, key, ctr):
    """The implementation's block function on key words and a 4-word
    counter (philox2x32 reads words 0-1); the result words."""
    if tag == "fry4":
        return threefry4x32(key, ctr)
    if tag == "phx4":
        return philox4x32(key[0], key[1], *ctr)
    return philox2x32(key[0], ctr[0], ctr[1])


def seed(tag, s, bits):
    """`jax.random.key(s, impl)` for an integer seed of `bits` bits."""
    hi = (s >> 32) & M32 if bits == 64 else 0
    lo = s & M32
    z = a32(0)
    if tag == "fry4":
        y = threefry4x32([a32(hi), a32(lo), z, z], [z, z, z, z])
    elif tag == "phx4":
        y = philox4x32(z, z, a32(hi), a32(lo), z, z)
    else:
        y = philox2x32(z, a32(hi), a32(lo))
    return np.array([int(w) for w in y[:WORDS[tag]]], dtype=U32)


def iota_2x32(shape):
    idx = np.arange(int(np.prod(shape)), dtype=U64).reshape(shape)
    return (idx >> U64(32)).astype(U32), idx.astype(U32)


def split(tag, key, shape):
    hi, lo = iota_2x32(shape)
    z = np.zeros(shape, U32)
    ctr = [hi, lo, z, z] if tag == "phx2" else [z, z, hi, lo]
    y = block(tag, [a32(w) for w in key], ctr)
    return np.stack(y[:WORDS[tag]], axis=-1)


def fold_in(tag, key, data):
    z = a32(0)
    ctr = [z, a32(data), z, z] if tag == "phx2" else [z, z, z, a32(data)]
    y = block(tag, [a32(w) for w in key], ctr)
    return np.array([int(w) for w in y[:WORDS[tag]]], dtype=U32)


def bits(tag, key, width, shape):
    hi, lo = iota_2x32(shape)
    z = np.zeros(shape, U32)
    y = block(tag, [a32(w) for w in key], [hi, lo, z, z])
    if width == 64:
        if tag == "fry4":
            h, l_ = y[0] ^ y[2], y[1] ^ y[3]
        else:
            h, l_ = y[0], y[1]
        return (h.astype(U64) << U64(32)) | l_.astype(U64)
    x = y[0] ^ y[1]
    if tag != "phx2":
        x = x ^ y[2] ^ y[3]
    return x.astype({8: np.uint8, 16: np.uint16, 32: U32}[width])


def per_key(f, keys, *args):
    """f over a batch of key data [..., W]."""
    flat = keys.reshape(-1, keys.shape[-1])
    out = [f(k, *args) for k in flat]
    return np.stack(out).reshape(keys.shape[:-1] + out[0].shape)


CHAIN_SOURCE = (
    "# source: k = jax.random.key(a, impl='{name}'); k1, k2 = "
    "jax.random.split(k); k3 = jax.random.fold_in(k1, b); ks = "
    "jax.random.split(k3, (2, 3)); q = jax.random.wrap_key_data(c, "
    "impl='{name}'); vs = jax.vmap(lambda s: jax.random.key(s, "
    "impl='{name}'))(d) (jax_enable_x64); returning key_data(ks), "
    "key_data(k2), bits of k2/ks/k3/q in 16, 8, 64 and 32 bits, "
    "key_data(fold_in(q, 7)) and key_data(vs); written by hand in JAX "
    "0.11's print style (jax/_src/random/prng.py: random_seed[impl] and "
    "random_wrap[impl] print the key type's tag); expected values from "
    "scripts/prng_impls_numpy.py (jax/_src/random/{name}.py transcribed in "
    "numpy, checked against Random123's known answers)\n")

CHAIN = """{{ lambda ; a:i32[] b:u32[] c:u32[2,{w}] d:i64[3]. let
    e:key<{t}>[] = random_seed[impl={t}] a
    f:key<{t}>[2] = random_split[shape=(2,)] e
    g:key<{t}>[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] f
    h:key<{t}>[] = squeeze[dimensions=(0,)] g
    i:key<{t}>[1] = slice[limit_indices=(2,) start_indices=(1,) strides=None] f
    j:key<{t}>[] = squeeze[dimensions=(0,)] i
    k:key<{t}>[] = random_fold_in h b
    l:key<{t}>[2,3] = random_split[shape=(2, 3)] k
    m:u32[2,3,{w}] = random_unwrap l
    n:u32[{w}] = random_unwrap j
    o:u16[4] = random_bits[bit_width=16 shape=(4,)] j
    p:u8[2,3,5] = random_bits[bit_width=8 shape=(5,)] l
    q:u64[3] = random_bits[bit_width=64 shape=(3,)] k
    r:key<{t}>[2] = random_wrap[impl={t}] c
    s:u32[2,6] = random_bits[bit_width=32 shape=(6,)] r
    t:key<{t}>[2] = random_fold_in r 7:u32[]
    u:u32[2,{w}] = random_unwrap t
    v:key<{t}>[3] = random_seed[impl={t}] d
    w:u32[3,{w}] = random_unwrap v
  in (m, n, o, p, q, s, u, w) }}
"""

KAT_SOURCE = (
    "# source: {name}_p.bind on the three Random123 known-answer vectors "
    "of jax-ml/jax tests/random_impl_test.py (one per element), written by "
    "hand in JAX 0.11's print style (jax/_src/random/{name}.py: no params, "
    "{n_out} u32 results); expected values: Random123 tests/kat_vectors, "
    "checked by scripts/prng_impls_numpy.py\n")


def write_chain(tag):
    rng = np.random.default_rng({"fry4": 4, "phx2": 2, "phx4": 44}[tag])
    w = WORDS[tag]
    a = np.array(-123457, dtype=np.int32)
    b = np.array(0xDEADBEEF, dtype=U32)
    c = rng.integers(0, 1 << 32, size=(2, w), dtype=np.uint64).astype(U32)
    d = np.array([0, -1, (1 << 40) + 5], dtype=np.int64)
    e = seed(tag, int(a), 32)
    f = split(tag, e, (2,))
    h, j = f[0], f[1]
    k = fold_in(tag, h, int(b))
    l_ = split(tag, k, (2, 3))
    outs = [
        l_,
        j,
        bits(tag, j, 16, (4,)),
        per_key(lambda key: bits(tag, key, 8, (5,)), l_),
        bits(tag, k, 64, (3,)),
        per_key(lambda key: bits(tag, key, 32, (6,)), c),
        per_key(lambda key: fold_in(tag, key, 7), c),
        np.stack([seed(tag, int(s), 64) for s in d]),
    ]
    name = f"{tag}_key_chain"
    with open(f"testdata/random/{name}.jaxpr", "w") as fh:
        fh.write(CHAIN_SOURCE.format(name=NAMES[tag]))
        fh.write(CHAIN.format(t=tag, w=w))
    np.savez(f"testdata/random/{name}.npz", input_0=a, input_1=b, input_2=c,
             input_3=d, **{f"expected_{i}": o for i, o in enumerate(outs)})
    print(name, [o.reshape(-1)[:2] for o in outs])


def write_kat(name, kat, n_key, n_ctr, n_out):
    keys = [a32([v[0][i] for v in kat]) for i in range(n_key)]
    ctrs = [a32([v[1][i] for v in kat]) for i in range(n_ctr)]
    want = [a32([v[2][i] for v in kat]) for i in range(n_out)]
    letters = "abcdefghijklmnop"
    ins = letters[:n_key + n_ctr]
    res = letters[n_key + n_ctr:n_key + n_ctr + n_out]
    with open(f"testdata/random/{name}_kat.jaxpr", "w") as fh:
        fh.write(KAT_SOURCE.format(name=name, n_out=n_out))
        fh.write("{ lambda ; " + " ".join(f"{x}:u32[3]" for x in ins) +
                 ". let\n    " + " ".join(f"{x}:u32[3]" for x in res) +
                 f" = {name} " + " ".join(ins) + "\n  in (" +
                 ", ".join(res) + ") }\n")
    np.savez(f"testdata/random/{name}_kat.npz",
             **{f"input_{i}": x for i, x in enumerate(keys + ctrs)},
             **{f"expected_{i}": x for i, x in enumerate(want)})


def main():
    check_known_answers()
    write_kat("threefry4x32", THREEFRY4X32_KAT, 4, 4, 4)
    write_kat("philox2x32", PHILOX2X32_KAT, 1, 2, 2)
    write_kat("philox4x32", PHILOX4X32_KAT, 2, 4, 4)
    for tag in WORDS:
        write_chain(tag)


if __name__ == "__main__":
    with np.errstate(over="ignore"):
        main()
