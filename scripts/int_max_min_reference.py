#!/usr/bin/env python3
"""Expected values for the 64-bit and u32 max/min bundles in
testdata/primitives/ (elementwise max/min/clamp, scatter-max/scatter-min),
computed with numpy independently of the C++ interpreter.

ONNX Runtime 1.30's CPU Max/Min on int64 misorder two values whose high
32-bit words agree while their low words differ in bit 31 (Max(6,
4294967295) = 6); the operands pair such values, next to the dtype's limits,
so a lowering that relies on Max/Min for them (or orders u32/u64 through a
signed path) shows. Scatter bundles write rows with duplicate indices, which
XLA combines with max/min (numpy's ufunc.at applies them in order).

  /usr/bin/python3 scripts/int_max_min_reference.py   (rewrites the npz)
"""
import os

import numpy as np

HERE = os.path.join(os.path.dirname(__file__), "..", "testdata", "primitives")

# Pairs (a[i], b[i]): high words equal, low words on both sides of bit 31.
I64_A = np.array([6, 2**31, -1, 2**40 + 7, -(2**40) + 2**31, 0,
                  -(2**63), 2**63 - 1], dtype=np.int64)
I64_B = np.array([2**32 - 1, 11, -(2**31) - 1, 2**40 + 2**32 - 1,
                  -(2**40) + 5, -(2**31), -(2**63) + 2**31, 2**63 - 2**31],
                 dtype=np.int64)


def save(prim, name, **arrays):
    np.savez(os.path.join(HERE, prim, name + ".npz"), **arrays)


def elementwise():
    a, b = I64_A, I64_B
    lit = np.int64(4294967295)  # the literal of the bundles' max/min
    save("max", "i64_high_words", input_0=a, input_1=b,
         expected_0=np.maximum(a, b), expected_1=np.maximum(a, lit))
    save("min", "i64_high_words", input_0=a, input_1=b,
         expected_0=np.minimum(a, b), expected_1=np.minimum(a, lit))
    # clamp(lo, x, hi) = min(max(lo, x), hi) with lo = a, x = b and hi the
    # literal 4294967295 (XLA clamp; lax.clamp's argument order).
    save("clamp", "i64_high_words", input_0=a, input_1=b,
         expected_0=np.minimum(np.maximum(a, b), lit))


def scatter_rows(operand, rows, updates, ufunc):
    out = operand.copy()
    ufunc.at(out, rows, updates)
    return out


def scatter():
    rng = np.random.default_rng(20261128)
    # Row indices with duplicates (row 2 four times, row 0 twice).
    rows = np.array([2, 0, 2, 4, 2, 0, 2], dtype=np.int32)
    for dtype, tag in ((np.int64, "i64"), (np.uint64, "u64"),
                       (np.uint32, "u32")):
        info = np.iinfo(dtype)
        bits = info.bits
        if bits == 64:
            pool = np.array([6, 2**32 - 1, 2**31, 11, 2**40 + 7,
                             2**40 + 2**32 - 1, info.max, info.max - 2**31,
                             info.min, 0], dtype=dtype)
            if dtype == np.int64:
                pool = np.concatenate(
                    [pool, np.array([-1, -(2**31) - 1, -(2**40) + 5],
                                    dtype=dtype)])
            else:
                # Values past 2^63 (negative through a signed path).
                pool = np.concatenate(
                    [pool, np.array([2**63, 2**63 + 2**31, 2**64 - 2],
                                    dtype=dtype)])
        else:
            pool = np.array([0, 1, 6, 2**31 - 1, 2**31, 2**31 + 1, 2**32 - 1,
                             2**32 - 2], dtype=dtype)
        operand = pool[rng.integers(0, len(pool), size=(5, 3))]
        updates = pool[rng.integers(0, len(pool), size=(len(rows), 3))]
        for prim, ufunc in (("scatter-max", np.maximum),
                            ("scatter-min", np.minimum)):
            expected = scatter_rows(operand, rows, updates, ufunc)
            arrays = dict(input_0=operand, input_1=rows.reshape(-1, 1),
                          input_2=updates, expected_0=expected)
            save(prim, f"row_{tag}_high_words", **arrays)
            if bits == 64:
                save(prim, f"opset17_row_{tag}_high_words", **arrays)


if __name__ == "__main__":
    elementwise()
    scatter()
