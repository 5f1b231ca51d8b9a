#!/usr/bin/env python3
"""Writes the special-value bundles of issue 24 (NaN not first, signed zeros,
infinities) into testdata/primitives/: NAME.jaxpr plus NAME.npz holding only
input_i, so the corpus runners use the reference interpreter as the oracle.

Needs no numpy: .npy v1.0 is written by hand (header dict padded to 64
bytes, little-endian data). Rerun after editing; the output is deterministic.
`1.0 / x` outputs turn the sign of a zero result into +-inf, which the
comparison checks exactly (a zero compares equal to either sign).
"""
import os
import struct
import sys
import zipfile

NAN = float("nan")
INF = float("inf")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                    "testdata", "primitives")
HEADER = ("# source: hand-written in JAX 0.10 print style (issue 24: NaN not "
          "first, signed zeros, infinities)\n"
          "# note: inputs in the npz; 1.0 / x outputs reveal the sign of "
          "zero results\n"
          "# markers: legacy_xfail, ir_xfail: the NaN outputs pass on both "
          "pipelines; the signed-zero (1.0 / x) outputs still fail because "
          "ORT 1.30's Where does not keep every selected zero's sign "
          "(docs/testing.md, Adversarial inputs)\n")


def npy_i32(rows):
    flat = [v for r in rows for v in r]
    header = "{'descr': '<i4', 'fortran_order': False, 'shape': (%d, %d), }" % (
        len(rows), len(rows[0]))
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * (pad % 64) + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode("latin1") + b"".join(struct.pack("<i", v)
                                               for v in flat))


def npy_f32(rows):
    shape = (len(rows), len(rows[0])) if isinstance(rows[0], list) else (
        len(rows),)
    flat = [v for r in rows for v in r] if isinstance(rows[0], list) else rows
    shape_text = "(%s)" % (", ".join(str(d) for d in shape) +
                           ("," if len(shape) == 1 else ""))
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % (
        shape_text)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * (pad % 64) + "\n"
    data = b"".join(struct.pack("<f", v) for v in flat)
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode("latin1") + data)


def write(folder, name, program, inputs):
    d = os.path.join(ROOT, folder)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name + ".jaxpr"), "w") as f:
        f.write(HEADER + program.strip() + "\n")
    # A fixed timestamp keeps the zip byte-identical across runs.
    with zipfile.ZipFile(os.path.join(d, name + ".npz"), "w",
                         zipfile.ZIP_STORED) as z:
        for i, rows in enumerate(inputs):
            info = zipfile.ZipInfo("input_%d.npy" % i, (1980, 1, 1, 0, 0, 0))
            z.writestr(info, rows if isinstance(rows, bytes) else npy_f32(rows))


def main():
    write("reduce_max", "f32_nan_not_first", """
{ lambda ; a:f32[7,4]. let
    b:f32[7] = reduce_max[axes=(1,) out_sharding=None] a
    c:f32[7] = reduce_min[axes=(1,) out_sharding=None] a
    d:f32[7] = div 1.0:f32[] b
    e:f32[7] = div 1.0:f32[] c
  in (b, c, d, e) }
""", [[[1, NAN, -1, 3], [-1, -2, -3, NAN], [-0.0, 0.0, -0.0, -0.0],
       [0.0, -0.0, 0.0, 0.0], [-INF, -INF, -INF, -INF], [INF, NAN, -INF, 0.0],
       [-0.0, -0.0, -0.0, -0.0]]])
    write("max", "f32_signed_zeros_nan", """
{ lambda ; a:f32[6] b:f32[6]. let
    c:f32[6] = max a b
    d:f32[6] = min a b
    e:f32[6] = div 1.0:f32[] c
    f:f32[6] = div 1.0:f32[] d
    g:f32[6] = clamp a b 1.0:f32[]
    h:f32[6] = div 1.0:f32[] g
  in (c, d, e, f, h) }
""", [[-0.0, 0.0, NAN, 1, -0.0, 0.0], [0.0, -0.0, 1, NAN, -0.0, 0.0]])
    write("cummax", "f32_nan_not_first_signed_zeros", """
{ lambda ; a:f32[3,5]. let
    b:f32[3,5] = cummax[axis=1 reverse=False] a
    c:f32[3,5] = cummin[axis=1 reverse=True] a
    d:f32[3,5] = div 1.0:f32[] b
    e:f32[3,5] = div 1.0:f32[] c
  in (b, c, d, e) }
""", [[[1, NAN, 2, -1, 3], [-0.0, 0.0, -0.0, 0.0, -0.0],
       [0.0, -0.0, -INF, INF, -0.0]]])
    write("reduce_window_max", "f32_nan_not_first_signed_zeros", """
{ lambda ; a:f32[2,7]. let
    b:f32[2,3] = reduce_window_max[
      base_dilation=(1, 1)
      padding=((0, 0), (0, 0))
      window_dilation=(1, 1)
      window_dimensions=(1, 3)
      window_strides=(1, 2)
    ] a
    c:f32[2,3] = reduce_window_min[
      base_dilation=(1, 1)
      padding=((0, 0), (0, 0))
      window_dilation=(1, 1)
      window_dimensions=(1, 3)
      window_strides=(1, 2)
    ] a
    d:f32[2,3] = div 1.0:f32[] b
    e:f32[2,3] = div 1.0:f32[] c
  in (b, c, d, e) }
""", [[[1, NAN, -0.0, 0.0, -0.0, 2, -0.0],
       [-0.0, -0.0, 0.0, -INF, 0.0, NAN, 5]]])
    for prim, fn in (("scatter-max", "max"), ("scatter-min", "min")):
        write(prim, "elem_f32_nan_update_signed_zeros", """
{ lambda ; a:f32[6] b:i32[6,1] c:f32[6]. let
    d:f32[6] = %s[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_jaxpr={ lambda ; e:f32[] f:f32[]. let g:f32[] = %s e f in (g,) }
    ] a b c
    h:f32[6] = div 1.0:f32[] d
  in (d, h) }
""" % (prim, fn), [
            # operand: NaN stays NaN; 1 meets a NaN update; zeros meet zeros
            [NAN, 1, -0.0, 0.0, 2, -0.0],
            # index 1 gets NaN then 3; index 2 gets +0; index 3 gets -0;
            # index 5 gets -0 twice; index 7 is out of bounds (dropped)
            npy_i32([[1], [1], [2], [3], [5], [7]]),
            [NAN, 3, 0.0, -0.0, -0.0, NAN],
        ])
    return 0


if __name__ == "__main__":
    sys.exit(main())
