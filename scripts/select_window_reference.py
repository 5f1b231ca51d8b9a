#!/usr/bin/env python3
"""Expected values for the negative-padding bundles of select_and_scatter_add
and select_and_gather_add in testdata/primitives/, computed with numpy
independently of the C++ interpreter, following XLA's SelectAndScatter:
window position o reads, at offset k, operand index o*stride + k - pad_lo
per axis (an element when inside the operand, else padding, never
selected); among the real elements, in row-major window order, the first
one the select (ge: first maximum) keeps is chosen. select_and_scatter_add
adds each window's source value at its chosen element; select_and_gather_add
returns the tangent there.

  /usr/bin/python3 scripts/select_window_reference.py   (rewrites the npz)
"""
import itertools
import os

import numpy as np

ROOT = os.path.join(os.path.dirname(__file__), "..", "testdata", "primitives")


def choices(operand, window, strides, padding):
    rank = operand.ndim
    out_shape = [
        (operand.shape[a] + padding[a][0] + padding[a][1] - window[a])
        // strides[a] + 1 for a in range(rank)
    ]
    chosen = {}
    for o in itertools.product(*[range(n) for n in out_shape]):
        best = None
        for k in itertools.product(*[range(w) for w in window]):
            index = tuple(o[a] * strides[a] + k[a] - padding[a][0]
                          for a in range(rank))
            if any(i < 0 or i >= operand.shape[a] for a, i in enumerate(index)):
                continue
            if best is None or not operand[best] >= operand[index]:
                best = index
        chosen[o] = best
    return out_shape, chosen


def main():
    rng = np.random.default_rng(20261126)
    # select_and_scatter_add: operand b f32[2,5,5,1], source a f32[2,3,3,1].
    b = rng.integers(0, 4, size=(2, 5, 5, 1)).astype(np.float32)  # ties
    a = rng.standard_normal((2, 3, 3, 1)).astype(np.float32)
    pads = ((0, 0), (-1, 0), (0, -1), (0, 0))
    out_shape, chosen = choices(b, (1, 2, 2, 1), (1, 1, 1, 1), pads)
    assert out_shape == [2, 3, 3, 1], out_shape
    grad = np.zeros_like(b)
    for o, index in chosen.items():
        grad[index] += a[o]
    np.savez(os.path.join(ROOT, "select_and_scatter_add", "negative_padding.npz"),
             input_0=a, input_1=b, expected_0=grad)
    # select_and_gather_add: tangents a f32[7,6], operand b f32[7,6].
    t = rng.standard_normal((7, 6)).astype(np.float32)
    x = rng.integers(0, 3, size=(7, 6)).astype(np.float32)
    out_shape, chosen = choices(x, (2, 2), (2, 2), ((-1, 0), (-1, 1)))
    assert out_shape == [3, 3], out_shape
    gathered = np.zeros(out_shape, np.float32)
    for o, index in chosen.items():
        gathered[o] = t[index]
    np.savez(os.path.join(ROOT, "select_and_gather_add", "negative_padding.npz"),
             input_0=t, input_1=x, expected_0=gathered)


if __name__ == "__main__":
    main()
