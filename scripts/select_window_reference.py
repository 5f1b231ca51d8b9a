#!/usr/bin/env python3
"""Expected values for the negative-padding, base-dilation and symbolic-image
bundles of select_and_scatter_add and select_and_gather_add in
testdata/primitives/, computed with numpy
independently of the C++ interpreter, following XLA's SelectAndScatter:
window position o reads, at offset k, base index o*stride +
k*window_dilation - pad_lo per axis (an element where it is a multiple of
base_dilation whose quotient lies inside the operand, else a pad or a hole,
never selected); among the real elements, in row-major window order, the first
one the select (ge: first maximum) keeps is chosen. select_and_scatter_add
adds each window's source value at its chosen element; select_and_gather_add
returns the tangent there.

  /usr/bin/python3 scripts/select_window_reference.py   (rewrites the npz)
"""
import itertools
import os

import numpy as np

ROOT = os.path.join(os.path.dirname(__file__), "..", "testdata", "primitives")


def choices(operand, window, strides, padding, base_dilation=None,
            window_dilation=None):
    rank = operand.ndim
    base = base_dilation or (1,) * rank
    wdil = window_dilation or (1,) * rank
    out_shape = []
    for a in range(rank):
        dilated = (operand.shape[a] - 1) * base[a] + 1
        span = (window[a] - 1) * wdil[a] + 1
        out_shape.append(
            (dilated + padding[a][0] + padding[a][1] - span) // strides[a] + 1)
    chosen = {}
    for o in itertools.product(*[range(n) for n in out_shape]):
        best = None
        for k in itertools.product(*[range(w) for w in window]):
            index = []
            for a in range(rank):
                q = o[a] * strides[a] + k[a] * wdil[a] - padding[a][0]
                if q < 0 or q % base[a] or q // base[a] >= operand.shape[a]:
                    index = None  # a pad or a base-dilation hole
                    break
                index.append(q // base[a])
            if index is None:
                continue
            index = tuple(index)
            if best is None or not operand[best] >= operand[index]:
                best = index
        chosen[o] = best
    return out_shape, chosen


def scatter_add(source, operand, window, strides, padding):
    out_shape, chosen = choices(operand, window, strides, padding)
    assert list(source.shape) == out_shape, (source.shape, out_shape)
    grad = np.zeros_like(operand)
    for o, index in chosen.items():
        if index is not None:
            grad[index] += source[o]
    return grad


def gather_add(tangents, operand, window, strides, padding,
               base_dilation=None):
    out_shape, chosen = choices(operand, window, strides, padding,
                                base_dilation)
    gathered = np.zeros(out_shape, tangents.dtype)
    for o, index in chosen.items():
        if index is not None:
            gathered[o] = tangents[index]
    return gathered


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

    # select_and_gather_add with base_dilation (2, 2): operand f32[5,4].
    t = rng.standard_normal((5, 4)).astype(np.float32)
    x = rng.integers(0, 4, size=(5, 4)).astype(np.float32)
    g = gather_add(t, x, (3, 3), (2, 1), ((1, 1), (0, 2)), (2, 2))
    assert g.shape == (5, 7), g.shape
    np.savez(os.path.join(ROOT, "select_and_gather_add",
                          "base_dilation_padding.npz"),
             input_0=t, input_1=x, expected_0=g)

    # Symbolic H, W bound by the inputs: H = 6, W = 5.
    # select_and_scatter_add, VALID 2x2 stride 2 (source floordiv(H, 2)).
    b = rng.integers(0, 4, size=(2, 6, 5, 3)).astype(np.float32)
    a = rng.standard_normal((2, 3, 2, 3)).astype(np.float32)
    np.savez(os.path.join(ROOT, "select_and_scatter_add",
                          "maxpool_grad_symbolic_hw.npz"),
             input_0=a, input_1=b,
             expected_0=scatter_add(a, b, (1, 2, 2, 1), (1, 2, 2, 1),
                                    ((0, 0),) * 4))
    # select_and_scatter_add, 3x3 stride 1 SAME (padding 1): H = 5, W = 4.
    b = rng.integers(0, 4, size=(2, 5, 4, 2)).astype(np.float32)
    a = rng.standard_normal((2, 5, 4, 2)).astype(np.float32)
    np.savez(os.path.join(ROOT, "select_and_scatter_add",
                          "same_padding_symbolic_hw.npz"),
             input_0=a, input_1=b,
             expected_0=scatter_add(a, b, (1, 3, 3, 1), (1, 1, 1, 1),
                                    ((0, 0), (1, 1), (1, 1), (0, 0))))
    # select_and_gather_add, 3x3 stride 1 SAME over H = 6, W = 5.
    t = rng.standard_normal((6, 5)).astype(np.float32)
    x = rng.integers(0, 4, size=(6, 5)).astype(np.float32)
    np.savez(os.path.join(ROOT, "select_and_gather_add",
                          "same_padding_symbolic_hw.npz"),
             input_0=t, input_1=x,
             expected_0=gather_add(t, x, (3, 3), (1, 1), ((1, 1), (1, 1))))


if __name__ == "__main__":
    main()
