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

The later bundles (base dilation, window dilation, symbolic image dims) use
the general rule (select_real / gather_window below): output position o
reads, at window offset k, base index q = o*stride + k*window_dilation -
pad_lo per axis, an element where q is a multiple of base_dilation with
q / base_dilation inside the operand; pads and holes are skipped (XLA's
emitters skip them). select_and_gather_add folds JAX's (key, tangent) pairs
from (-inf, 0) for ge/gt, (+inf, 0) for le/lt: the accumulator is replaced
where select(acc_key, key) is false. A symbolic bundle's npz binds its dims
through the shapes of its inputs.

  /usr/bin/python3 scripts/select_window_reference.py   (rewrites the npz)
"""
import itertools
import os

import numpy as np

from reduce_window_reference import window_reads

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


SELECT = {
    "ge": lambda a, b: a >= b,
    "gt": lambda a, b: a > b,
    "le": lambda a, b: a <= b,
    "lt": lambda a, b: a < b,
}


def scatter_add(source, operand, prim, window, strides, padding):
    """select_and_scatter_add: each window's source value is added at its
    selected element (the first real element, replaced where select fails)."""
    rank = operand.ndim
    out_shape, reads = window_reads(operand.shape, window, strides, padding,
                                    (1,) * rank, (1,) * rank)
    assert list(source.shape) == out_shape, (source.shape, out_shape)
    grad = np.zeros(operand.shape, source.dtype)
    for o, elements in reads.items():
        if not elements:
            continue
        best = elements[0]
        for index in elements[1:]:
            if not SELECT[prim](operand[best], operand[index]):
                best = index
        grad[best] += source[o]
    return grad


def gather_add(tangents, operand, prim, window, strides, padding,
               base_dilation, window_dilation):
    """select_and_gather_add: JAX's pair reduction from (-inf or +inf, 0)."""
    out_shape, reads = window_reads(operand.shape, window, strides, padding,
                                    base_dilation, window_dilation)
    init = -np.inf if prim in ("ge", "gt") else np.inf
    out = np.zeros(out_shape, tangents.dtype)
    for o, elements in reads.items():
        key, tangent = init, 0
        for index in elements:
            if not SELECT[prim](key, operand[index]):
                key, tangent = operand[index], tangents[index]
        out[o] = tangent
    return out


def write(primitive, name, expected, *inputs):
    arrays = {"input_%d" % i: x for i, x in enumerate(inputs)}
    np.savez(os.path.join(ROOT, primitive, name + ".npz"), expected_0=expected,
             **arrays)


def dilation_and_symbolic_bundles():
    rng = np.random.default_rng(20261127)
    # select_and_gather_add with base_dilation (2, 2) and padding: the JVP of
    # reduce_window_max over a base-dilated, padded f32[5,4]; small integer
    # keys make ties.
    t = rng.standard_normal((5, 4)).astype(np.float32)
    x = rng.integers(0, 4, size=(5, 4)).astype(np.float32)
    y = gather_add(t, x, "ge", (3, 3), (2, 1), ((1, 1), (2, 0)), (2, 2),
                   (1, 1))
    assert y.shape == (5, 7), y.shape
    write("select_and_gather_add", "base_dilation_padding", y, t, x)
    # le with base_dilation 3 on the minor dim and window_dilation 2 on the
    # major one: some windows read only holes and pads (tangent 0).
    t = rng.standard_normal((6, 3)).astype(np.float32)
    x = rng.integers(0, 3, size=(6, 3)).astype(np.float32)
    y = gather_add(t, x, "le", (2, 2), (1, 1), ((0, 1), (1, 1)), (1, 3),
                   (2, 1))
    assert y.shape == (5, 8), y.shape
    write("select_and_gather_add", "base_and_window_dilation_le", y, t, x)
    # select_and_gather_add over symbolic h, w (bound to 7, 6): 2x2/2 VALID
    # and 3x3/1 SAME max pooling JVPs.
    t = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)
    x = rng.integers(0, 5, size=(2, 7, 6, 3)).astype(np.float32)
    valid = gather_add(t, x, "ge", (1, 2, 2, 1), (1, 2, 2, 1),
                       ((0, 0),) * 4, (1,) * 4, (1,) * 4)
    same = gather_add(t, x, "ge", (1, 3, 3, 1), (1, 1, 1, 1),
                      ((0, 0), (1, 1), (1, 1), (0, 0)), (1,) * 4, (1,) * 4)
    np.savez(os.path.join(ROOT, "select_and_gather_add",
                          "maxpool_jvp_symbolic_hw.npz"),
             input_0=t, input_1=x, expected_0=valid, expected_1=same)
    # select_and_scatter_add over symbolic h, w (bound to 7, 6): the max
    # pooling VJPs of 2x2/2 VALID (the odd row is in no window), 2x2/1 VALID
    # (overlapping windows accumulate) and 3x3/1 SAME (padding).
    x = rng.integers(0, 5, size=(2, 7, 6, 3)).astype(np.float32)
    s2 = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    g2 = scatter_add(s2, x, "ge", (1, 2, 2, 1), (1, 2, 2, 1), ((0, 0),) * 4)
    write("select_and_scatter_add", "maxpool_grad_symbolic_hw", g2, x, s2)
    s1 = rng.standard_normal((2, 6, 5, 3)).astype(np.float32)
    g1 = scatter_add(s1, x, "ge", (1, 2, 2, 1), (1, 1, 1, 1), ((0, 0),) * 4)
    write("select_and_scatter_add", "overlapping_symbolic_hw", g1, s1, x)
    ss = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)
    gs = scatter_add(ss, x, "ge", (1, 3, 3, 1), (1, 1, 1, 1),
                     ((0, 0), (1, 1), (1, 1), (0, 0)))
    write("select_and_scatter_add", "same_padding_symbolic_hw", gs, ss, x)


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
    dilation_and_symbolic_bundles()
