#!/usr/bin/env python3
"""Expected values for the integer padding bundles of reduce_window_min and
reduce_window_max, and the i64 cummax/cummin bundles, in
testdata/primitives/, computed with numpy independently
of the C++ interpreter. XLA skips pads (JAX's reduce_window_min/max start
from the dtype's top/lowest value, the identity), so each output element is
the min/max of the operand elements its window reads (window_reads), or the
identity where it reads none. The shapes follow JAX's cummin/cummax
lowering: window (n, 1) with padding ((n-1, 0), (0, 0)); the operands hold
values next to the dtype's limits, so a pad value computed through a signed
or floating path shows, and (64-bit) pairs whose high 32-bit words agree
while their low words differ in bit 31.

  /usr/bin/python3 scripts/reduce_window_minmax_reference.py   (rewrites the npz)
"""
import os

import numpy as np

from reduce_window_reference import window_reads

HERE = os.path.join(os.path.dirname(__file__), "..", "testdata", "primitives")


def reduce_window(x, is_min, window, padding):
    info = np.iinfo(x.dtype)
    out_shape, reads = window_reads(x.shape, window, (1,) * x.ndim, padding,
                                    (1,) * x.ndim, (1,) * x.ndim)
    out = np.empty(out_shape, dtype=x.dtype)
    for o, elements in reads.items():
        acc = x.dtype.type(info.max if is_min else info.min)
        for index in elements:
            acc = min(acc, x[index]) if is_min else max(acc, x[index])
        out[o] = acc
    return out


def main():
    rng = np.random.default_rng(20261127)
    for dtype, tag in ((np.uint32, "u32"), (np.uint64, "u64"),
                       (np.int32, "i32"), (np.int64, "i64")):
        info = np.iinfo(dtype)
        # Values at and near both limits, and around the signed midpoint.
        pool = np.array([info.min, info.min + 1, info.max, info.max - 1,
                         info.max // 2, info.max // 2 + 1, 0, 1, 7],
                        dtype=dtype)
        x = pool[rng.integers(0, len(pool), size=(5, 3))]
        if info.bits == 64:
            # High 32-bit words equal, low words on both sides of bit 31:
            # ONNX Runtime 1.30's i64 Max/Min misorder these (window_plan.h).
            x[:, 2] = np.array([7, 2**32 - 1, 2**31, 1, 2**32 + 5], dtype=dtype)
        for is_min, prim in ((True, "reduce_window_min"),
                             (False, "reduce_window_max")):
            # Lower padding 4 only: output row 0 reads row 0 alone, a later
            # row the running min/max (cummin/cummax).
            y = reduce_window(x, is_min, (5, 1), ((4, 0), (0, 0)))
            # Windows fully in the padding give the identity itself.
            z = reduce_window(x, is_min, (2, 1), ((3, 0), (0, 0)))
            np.savez(os.path.join(HERE, prim, f"{tag}_low_padding.npz"),
                     input_0=x, expected_0=y, expected_1=z)

    # cummax/cummin on i64 (scanned axis 0, forward): numpy's accumulate.
    # Column 0's high words agree with low words on both sides of bit 31.
    x = np.array([[7, -3, 2**40], [2**32 - 1, 5, 2**40 + 2**31],
                  [2**31, -2**31, 2**40 + 1], [1, 2**32, -1],
                  [2**32 + 5, 4, 2**40 + 2**32 - 1]], dtype=np.int64)
    for prim, ufunc in (("cummax", np.maximum), ("cummin", np.minimum)):
        np.savez(os.path.join(HERE, prim, "i64_high_words.npz"), input_0=x,
                 expected_0=ufunc.accumulate(x, axis=0))


if __name__ == "__main__":
    main()
