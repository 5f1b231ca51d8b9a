#!/usr/bin/env python3
"""Expected values for the complex generic reduce / reduce_window bundles in
testdata/complex/, computed with numpy independently of the C++
interpreter. reduce_window follows XLA's ReduceWindow emitters (the rule
and the implementation are scripts/reduce_window_reference.py's: pads and
base-dilation holes are skipped, the init joins each window once, offsets
in row-major order); reduce folds each row from the init in index order.

  /usr/bin/python3 scripts/complex_reduce_reference.py   (rewrites the npz)
"""
import os

import numpy as np

from reduce_window_reference import reduce_window

HERE = os.path.join(os.path.dirname(__file__), "..", "testdata", "complex")


def random_complex(rng, shape, dtype, low, high):
    re = rng.uniform(low, high, size=shape)
    im = rng.uniform(low, high, size=shape)
    return (re + 1j * im).astype(dtype)


def pick_larger_modulus(acc, el):
    # gt |element| |acc|: take the element (select_n's second case).
    take = np.abs(el[0]) > np.abs(acc[0])
    return [el[0] if take else acc[0], el[1] if take else acc[1]]


def argmax_modulus(z, axis_len):
    """Rows of z folded from (0j, 0): take the element when its modulus is
    larger, or equal with a lower index (the combiner of the bundle)."""
    values = np.empty(z.shape[0], dtype=z.dtype)
    index = np.empty(z.shape[0], dtype=np.int32)
    for r in range(z.shape[0]):
        acc_v, acc_i = z.dtype.type(0), np.int32(0)
        for i in range(axis_len):
            a, b = np.abs(acc_v), np.abs(z[r, i])
            if b > a or (b == a and i < acc_i):
                acc_v, acc_i = z[r, i], np.int32(i)
        values[r], index[r] = acc_v, acc_i
    return values, index


def main():
    rng = np.random.default_rng(20261127)
    for suffix, dtype in (("", np.complex64), ("_c128", np.complex128)):
        # reduce_window_mul: lax.reduce_window(x, 1+0.5j, lax.mul, (2, 2),
        # (1, 2), ((1, 0), (0, 1)), base_dilation=(1, 2)); moduli near 1.
        x = random_complex(rng, (4, 5), dtype, 0.4, 0.9)
        (y,) = reduce_window([x], [dtype(1 + 0.5j)],
                             lambda acc, el: [acc[0] * el[0]],
                             (2, 2), (1, 2), ((1, 0), (0, 1)), (1, 2), (1, 1))
        np.savez(os.path.join(HERE, f"reduce_window_mul{suffix}.npz"),
                 input_0=x, expected_0=y)

        # reduce_window_max_modulus_pool: (value, column) pairs, window
        # (2, 3), strides (1, 2), padding ((0, 1), (1, 1)), init (0j, -1).
        z = random_complex(rng, (4, 6), dtype, -1.0, 1.0)
        col = np.tile(np.arange(6, dtype=np.int32), (4, 1))
        v, i = reduce_window([z, col], [dtype(0), np.int32(-1)],
                             pick_larger_modulus, (2, 3), (1, 2),
                             ((0, 1), (1, 1)), (1, 1), (1, 1))
        np.savez(
            os.path.join(HERE, f"reduce_window_max_modulus_pool{suffix}.npz"),
            input_0=z, expected_0=v, expected_1=i)

        # reduce_argmax_modulus: lax.reduce over (z, iota) along axis 1.
        w = random_complex(rng, (3, 6), dtype, -1.0, 1.0)
        w[1, 4] = w[1, 1] * 1j  # equal modulus: the lower index wins
        v, i = argmax_modulus(w, 6)
        np.savez(os.path.join(HERE, f"reduce_argmax_modulus{suffix}.npz"),
                 input_0=w, expected_0=v, expected_1=i)


if __name__ == "__main__":
    main()
