#!/usr/bin/env python3
"""Expected values for the generic reduce_window bundles in
testdata/primitives/reduce_window/, computed with numpy independently of the
C++ interpreter, following XLA's ReduceWindow emitters: output position o
reads, at window offset k, base index o*stride + k*window_dilation - pad_lo
(per axis); it is an element where that index is a multiple of base_dilation
whose quotient lies inside the operand, otherwise a pad or hole, which is
skipped (the init value joins each window once, as the accumulator's start).
Window offsets are visited in row-major order.

  /usr/bin/python3 scripts/reduce_window_reference.py   (rewrites the npz)
"""
import itertools
import os

import numpy as np

HERE = os.path.join(os.path.dirname(__file__), "..", "testdata", "primitives",
                    "reduce_window")


def window_reads(shape, window, strides, padding, base_dilation,
                 window_dilation):
    """Output shape, and for each output position (row-major) the operand
    indices its window reads, in row-major window order (pads and holes left
    out). scripts/select_window_reference.py uses it too."""
    rank = len(shape)
    out_shape = []
    for a in range(rank):
        dilated = (shape[a] - 1) * base_dilation[a] + 1 if shape[a] else 0
        padded = dilated + padding[a][0] + padding[a][1]
        extent = (window[a] - 1) * window_dilation[a] + 1
        out_shape.append((padded - extent) // strides[a] + 1)
    reads = {}
    for o in itertools.product(*[range(n) for n in out_shape]):
        elements = []
        for k in itertools.product(*[range(w) for w in window]):
            index = []
            for a in range(rank):
                q = o[a] * strides[a] + k[a] * window_dilation[a] - padding[a][0]
                if q < 0 or q % base_dilation[a] or q // base_dilation[a] >= shape[a]:
                    index = None
                    break
                index.append(q // base_dilation[a])
            if index is not None:
                elements.append(tuple(index))
        reads[o] = elements
    return out_shape, reads


def reduce_window(operands, inits, combine, window, strides, padding,
                  base_dilation, window_dilation):
    out_shape, reads = window_reads(operands[0].shape, window, strides,
                                    padding, base_dilation, window_dilation)
    outs = [np.empty(out_shape, dtype=x.dtype) for x in operands]
    for o, elements in reads.items():
        acc = list(inits)
        for index in elements:
            acc = combine(acc, [x[index] for x in operands])
        for x, v in zip(outs, acc):
            x[o] = v
    return outs


def main():
    rng = np.random.default_rng(20261126)

    # mul_init_padding_dilation: values near 1 keep the products tame.
    x = rng.uniform(0.5, 1.5, size=(4, 5)).astype(np.float32)
    (y,) = reduce_window([x], [np.float32(2.0)],
                         lambda acc, el: [np.float32(acc[0] * el[0])],
                         (2, 2), (1, 2), ((1, 0), (0, 1)), (1, 2), (1, 1))
    np.savez(os.path.join(HERE, "mul_init_padding_dilation.npz"),
             input_0=x, expected_0=y)

    # argmax_pool_variadic: small integers in f32 to force ties.
    v = rng.integers(0, 4, size=(4, 5)).astype(np.float32)
    idx = np.arange(20, dtype=np.int32).reshape(4, 5)

    def pick(acc, el):
        take = el[0] > acc[0]
        return [el[0] if take else acc[0], el[1] if take else acc[1]]

    m, i = reduce_window([v, idx], [np.float32(-np.inf), np.int32(-1)], pick,
                         (2, 3), (2, 1), ((0, 0), (1, 1)), (1, 1), (1, 1))
    np.savez(os.path.join(HERE, "argmax_pool_variadic.npz"),
             input_0=v, input_1=idx, expected_0=m, expected_1=i)

    # and_bool_window_dilation
    b = rng.integers(0, 4, size=(3, 6)) > 0
    (r,) = reduce_window([b], [np.bool_(True)],
                         lambda acc, el: [np.bool_(acc[0] and el[0])],
                         (1, 2), (1, 1), ((0, 0), (2, 0)), (1, 1), (1, 2))
    np.savez(os.path.join(HERE, "and_bool_window_dilation.npz"),
             input_0=b, expected_0=r)

    # mul_symbolic_padding: i32[3,W] bound to W=6 (even, so the last window
    # reaches the trailing pad too); small values keep the products exact.
    w = rng.integers(-3, 4, size=(3, 6)).astype(np.int32)
    (p,) = reduce_window([w], [np.int32(2)],
                         lambda acc, el: [np.int32(acc[0] * el[0])],
                         (1, 3), (1, 2), ((0, 0), (2, 1)), (1, 1), (1, 1))
    assert p.shape == (3, 4), p.shape
    np.savez(os.path.join(HERE, "mul_symbolic_padding.npz"),
             input_0=w, expected_0=p)


if __name__ == "__main__":
    main()
