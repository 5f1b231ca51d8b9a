#!/usr/bin/env python3
"""Writes the npz of each bundle here: input_i and expected_i, the expected
values derived by hand below (plain Python, no numpy and no JAX: the
derivations follow jax/_src/state/discharge.py step by step).

Run from this directory: python3 make_npz.py
"""
import struct
import zipfile


def npy(dtype, shape, values):
    """NPY v1.0 bytes for a C-ordered little-endian array."""
    descr = {"f32": "<f4", "i32": "<i4"}[dtype]
    shape_txt = "(" + "".join(f"{d}, " for d in shape).rstrip(" ") + ")"
    if len(shape) > 1:
        shape_txt = "(" + ", ".join(str(d) for d in shape) + ")"
    header = ("{'descr': '%s', 'fortran_order': False, 'shape': %s, }"
              % (descr, shape_txt))
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    fmt = {"f32": "f", "i32": "i"}[dtype]
    body = struct.pack("<%d%s" % (len(values), fmt), *values)
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode("latin1") + body)


def write(name, inputs, expected):
    with zipfile.ZipFile(name + ".npz", "w", zipfile.ZIP_STORED) as z:
        for kind, arrays in (("input", inputs), ("expected", expected)):
            for i, (dtype, shape, values) in enumerate(arrays):
                # A fixed timestamp keeps the npz byte-identical across runs.
                info = zipfile.ZipInfo(f"{kind}_{i}.npy", (1980, 1, 1, 0, 0, 0))
                z.writestr(info, npy(dtype, shape, values))


# get_swap_addupdate: x = [1, 2, 3, 4], i = 2, v = [10, 20], w = -5.
#   f = x[2] = 3                        (get at i)
#   g = 6; ref = [1, 2, 6, 4]           (swap at i, result dropped)
#   ref[1:3] += [10, 20] -> [1, 2 + 10, 6 + 20, 4] = [1, 12, 26, 4]
#   h = ref[0] = 1; ref = [-5, 12, 26, 4]   (swap at 0)
#   i = j = [-5, 12, 26, 4]             (get [...], freeze)
write("get_swap_addupdate",
      [("f32", (4,), [1, 2, 3, 4]), ("i32", (), [2]),
       ("f32", (2,), [10, 20]), ("f32", (), [-5])],
      [("f32", (), [3]), ("f32", (), [1]),
       ("f32", (4,), [-5, 12, 26, 4]), ("f32", (4,), [-5, 12, 26, 4])])

# run_state_rows_cols: a = [[1, 2, 3], [4, 5, 6]].
#   d = row 0 = [1, 2, 3]; row 1 += d -> [5, 7, 9]
#   e = column 0 = [1, 5]; column 0 = -e -> [-1, -5]
#   b = [[-1, 2, 3], [-5, 7, 9]]
write("run_state_rows_cols",
      [("f32", (2, 3), [1, 2, 3, 4, 5, 6])],
      [("f32", (2, 3), [-1, 2, 3, -5, 7, 9])])

# jit_dynamic_slice_empty_ref: x = [0, 1, 2, 3, 4, 5], i = 1.
#   acc = zeros(2, 3); acc[0] = x[1:4] = [1, 2, 3]; acc[1] = x[2:5] = [2, 3, 4]
#   k = acc[1] * 10 = [20, 30, 40]; buf[1:4] = k -> [0, 20, 30, 40, 4, 5]
write("jit_dynamic_slice_empty_ref",
      [("f32", (6,), [0, 1, 2, 3, 4, 5]), ("i32", (), [1])],
      [("f32", (2, 3), [1, 2, 3, 2, 3, 4]),
       ("f32", (6,), [0, 20, 30, 40, 4, 5])])

# jit_dynamic_slice_clamped: same program, i = 5. dynamic_slice clamps the
# start to 6 - 3 = 3 (XLA semantics, which JAX's discharge lowers to):
#   acc[0] = x[3:6] = [3, 4, 5]; acc[1] = x[2:5] = [2, 3, 4]
#   k = [20, 30, 40]; dynamic_update_slice at clamped 3 -> [0, 1, 2, 20, 30, 40]
write("jit_dynamic_slice_clamped",
      [("f32", (6,), [0, 1, 2, 3, 4, 5]), ("i32", (), [5])],
      [("f32", (2, 3), [3, 4, 5, 2, 3, 4]),
       ("f32", (6,), [0, 1, 2, 20, 30, 40])])

# scan_carries_ref: x = [1, 2, 3], s0 = 0, xs rows [1]*3, [2]*3, [3]*3, [4]*3.
#   step 0: old = [1, 2, 3], r = [2, 3, 4],    s = 0 + 1 = 1, y = 1
#   step 1: old = [2, 3, 4], r = [4, 5, 6],    s = 1 + 2 = 3, y = 2
#   step 2: old = [4, 5, 6], r = [7, 8, 9],    s = 3 + 3 = 6, y = 4
#   step 3: old = [7, 8, 9], r = [11, 12, 13], s = 6 + 4 = 10, y = 7
write("scan_carries_ref",
      [("f32", (3,), [1, 2, 3]),
       ("f32", (4, 3), [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4])],
      [("f32", (), [10]), ("f32", (4,), [1, 2, 4, 7]),
       ("f32", (3,), [11, 12, 13])])

# while_carries_ref: x = [1, 2, 3].
#   r[0] = 1 < 500: r[0] = 10, i = 1; 10 < 500: 100, i = 2;
#   100 < 500: 1000, i = 3; 1000 < 500 is false: stop.
write("while_carries_ref",
      [("f32", (3,), [1, 2, 3])],
      [("i32", (), [3]), ("f32", (3,), [1000, 2, 3])])

# cond_writes_ref: p = 1 > 0 takes branch 1 (set_head): r[:2] = [7, 8].
write("cond_writes_ref",
      [("i32", (), [1]), ("f32", (3,), [1, 2, 3]), ("f32", (2,), [7, 8])],
      [("f32", (3,), [7, 8, 3])])
# cond_writes_ref_false: p = 0 takes branch 0 (neg_tail): r[1:3] = [-2, -3].
write("cond_writes_ref_false",
      [("i32", (), [0]), ("f32", (3,), [1, 2, 3]), ("f32", (2,), [7, 8])],
      [("f32", (3,), [1, -2, -3])])

# scan_carries_ref_ft_in: the same program printed by JAX 0.11.0, same values.
write("scan_carries_ref_ft_in",
      [("f32", (3,), [1, 2, 3]),
       ("f32", (4, 3), [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4])],
      [("f32", (), [10]), ("f32", (4,), [1, 2, 4, 7]),
       ("f32", (3,), [11, 12, 13])])

# jit_takes_ref: x = [1, 2, 3], v = [10, 20, 30].
#   g: r += v -> [11, 22, 33]; t = r[0] = 11; h: r[2] = 11 -> [11, 22, 11]
#   y = r[1] * 2 = 44; freeze -> [11, 22, 11]
write("jit_takes_ref",
      [("f32", (3,), [1, 2, 3]), ("f32", (3,), [10, 20, 30])],
      [("f32", (3,), [11, 22, 11]), ("f32", (), [44])])
