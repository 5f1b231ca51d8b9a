#!/usr/bin/env python3
"""Expected values for testdata/complex/max_min_lexicographic{,_c128},
testdata/complex/cummax_cummin and testdata/complex/clamp_lexicographic, in
plain Python, independently of the C++ interpreter, following JAX's lowering
of complex max/min (jax/_src/interpreters/mlir.py _minmax_hlo): x op y is
x where (Re x == Re y ? Im x cmp Im y : Re x cmp Re y), else y; and
reduce_max / reduce_min (jax/_src/lax/lax.py) reduce with that select from
the identity -inf / +inf + 0j (_get_max_identity / _get_min_identity).

  /usr/bin/python3 scripts/complex_minmax_reference.py   (rewrites the npz)
"""
import os

import numpy as np

HERE = os.path.join(os.path.dirname(__file__), "..", "testdata", "complex")
INF = float("inf")


def pick(x, y, is_max):
    if x.real == y.real:
        take_x = x.imag > y.imag if is_max else x.imag < y.imag
    else:
        take_x = x.real > y.real if is_max else x.real < y.real
    return x if take_x else y


def reduce(a, axes, is_max):
    identity = complex(-INF if is_max else INF, 0.0)
    kept = [d for d in range(a.ndim) if d not in axes]
    out = np.empty([a.shape[d] for d in kept], dtype=a.dtype)
    for index in np.ndindex(*out.shape):
        acc = identity
        for full in np.ndindex(*a.shape):
            if all(full[d] == index[i] for i, d in enumerate(kept)):
                acc = pick(acc, complex(a[full]), is_max)
        out[index] = acc
    return out


def cumulative(a, axis, reverse, is_max):
    out = a.copy()
    a_moved = np.moveaxis(a, axis, 0)
    o_moved = np.moveaxis(out, axis, 0)
    order = range(a.shape[axis] - 1, -1, -1) if reverse else range(a.shape[axis])
    for index in np.ndindex(*a_moved.shape[1:]):
        acc = None
        for i in order:
            x = complex(a_moved[(i,) + index])
            acc = x if acc is None else pick(acc, x, is_max)
            o_moved[(i,) + index] = acc
    return out


def main():
    a = np.array([
        [1 + 2j, 1 + 3j, 1 - 1j, 0 + 9j, 1 + 3j],           # ties in Re
        [complex(-INF, -1), complex(-INF, -5), complex(-INF, -2),
         complex(-INF, -7), complex(-INF, -3)],             # identity wins
        [-2 - 1j, -3 + 4j, -2 - 1j, -5 + 0j, -2 - 2j],      # all negative
        [complex(INF, 1), 2 + 2j, complex(INF, -1), 2 + 2j, -0.0 + 1j],
    ])
    b = np.array([
        [1 + 2j, 1 + 1j, 2 - 1j, 0 + 9j, 0.5 + 7j],
        [0 - 1j, complex(-INF, -1), 3 + 0j, -1 - 1j, complex(-INF, 0)],
        [-2 - 1j, -3 + 5j, -2 + 0j, -5 - 1j, 4 + 4j],
        [complex(INF, 2), 2 + 3j, 2 + 2j, 2 + 1j, 0.0 + 1j],
    ])
    for dtype, suffix in ((np.complex64, ""), (np.complex128, "_c128")):
        x, y = a.astype(dtype), b.astype(dtype)
        mx = np.array([[pick(complex(p), complex(q), True)
                        for p, q in zip(r, s)] for r, s in zip(x, y)], dtype)
        mn = np.array([[pick(complex(p), complex(q), False)
                        for p, q in zip(r, s)] for r, s in zip(x, y)], dtype)
        np.savez(os.path.join(HERE, f"max_min_lexicographic{suffix}.npz"),
                 input_0=x, input_1=y, expected_0=mx, expected_1=mn,
                 expected_2=reduce(x, (1,), True),
                 expected_3=reduce(x, (0,), False),
                 expected_4=reduce(y, (0, 1), True))


def cumulative_bundle():
    a = np.array([
        [1 + 2j, 1 + 3j, 0 + 9j, 1 - 1j, 2 - 5j],
        [-1 + 0j, -1 + 2j, -1 - 2j, -3 + 4j, -1 + 2j],
        [0.5 - 1j, 0.25 + 8j, 0.5 + 1j, 0.5 - 3j, 0.75 + 0j],
    ]).astype(np.complex64)
    np.savez(os.path.join(HERE, "cummax_cummin.npz"), input_0=a,
             expected_0=cumulative(a, 1, False, True),
             expected_1=cumulative(a, 1, True, False),
             expected_2=cumulative(a, 0, True, True))


def clamp_bundle():
    # clamp(lo, x, hi) = min(max(lo, x), hi) with the same select (StableHLO
    # clamp = minimum(maximum(operand, min), max)).
    lo = np.array([1 + 1j, 1 + 1j, 0j, -2 + 0j, 1 + 5j, 3 - 1j], np.complex64)
    x = np.array([1 + 0j, 1 + 3j, -1 + 9j, -2 + 1j, 2 + 0j, 3 + 0j], np.complex64)
    hi = np.array([1 + 2j, 1 + 2j, 5 + 0j, -2 + 3j, 2 - 1j, 3 + 1j], np.complex64)
    out = np.array([pick(complex(h), pick(complex(l), complex(v), True), False)
                    for l, v, h in zip(lo, x, hi)], np.complex64)
    np.savez(os.path.join(HERE, "clamp_lexicographic.npz"), input_0=lo,
             input_1=x, input_2=hi, expected_0=out)


if __name__ == "__main__":
    main()
    cumulative_bundle()
    clamp_bundle()
