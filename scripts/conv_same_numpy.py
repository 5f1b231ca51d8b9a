#!/usr/bin/python3
"""Writes testdata/stablehlo_export/symbolic_conv_same.npz: inputs at
h = 7, w = 8 and the output of lax.conv_general_dilated(x, k, (2, 2),
'SAME', ('NHWC', 'HWIO', 'NHWC')) computed here with numpy, independently
of the translation: lax.padtype_to_pads' 'SAME' rule (out = ceil(d / s),
pad = max((out - 1) * s + window - d, 0), low = pad // 2, high = pad - low)
and the convolution as a sum over the padded window.

  /usr/bin/python3 scripts/conv_same_numpy.py   (from the repo root)
"""
import numpy as np


def conv_same(x, k, stride):
    _, h, w, _ = x.shape
    kh, kw, _, co = k.shape
    pads = []
    for d, win in ((h, kh), (w, kw)):
        out = -(-d // stride)
        pad = max((out - 1) * stride + win - d, 0)
        pads.append((pad // 2, pad - pad // 2))
    xp = np.pad(x.astype(np.float64), ((0, 0), pads[0], pads[1], (0, 0)))
    oh, ow = -(-h // stride), -(-w // stride)
    y = np.zeros((1, oh, ow, co))
    for i in range(oh):
        for j in range(ow):
            patch = xp[0, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            y[0, i, j, :] = np.tensordot(patch, k.astype(np.float64), axes=3)
    return y.astype(np.float32)


def main():
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (1, 7, 8, 3)).astype(np.float32)
    k = rng.uniform(-1, 1, (3, 3, 3, 4)).astype(np.float32)
    np.savez("testdata/stablehlo_export/symbolic_conv_same.npz", input_0=x,
             input_1=k, expected_0=conv_same(x, k, 2))


if __name__ == "__main__":
    main()
