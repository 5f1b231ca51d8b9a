#!/usr/bin/env python3
"""Writes testdata/dtypes/narrow/*.{jaxpr,npz}: programs on JAX's narrow
dtypes as JAX prints them, with expected values computed here, independently
of the converter: the float formats through scripts/narrow_float_reference.py
(an exact table-lookup model of ml_dtypes' conversion), the integer formats
by Python integer arithmetic.

Semantics modelled (what XLA's CPU backend computes, docs/dtypes.md):
  * convert_element_type f32 -> narrow float: ml_dtypes' non-saturating
    round-to-nearest-even conversion (encode);
  * narrow float -> f32: exact (decode);
  * add / mul on a narrow float: the exact result of the two decoded values
    (exact in f32 for these operands) rounded once (encode), as XLA's
    FloatNormalization runs the op in f32 and converts back;
  * dot_general with preferred_element_type the narrow type: products summed
    in f32 (exact here: the chosen values keep every partial sum within 24
    significant bits) and rounded once;
  * int4/uint4: i32 -> int4 wraps modulo 16; add/mul wrap; float -> int4
    truncates toward zero and saturates to [-8, 7] (XLA's float-to-int
    convert).

npz arrays of narrow types are stored as np.save stores ml_dtypes arrays:
one byte per element, descr `|V1` (the reader takes the dtype from the aval).

  /usr/bin/python3 scripts/narrow_dtype_bundles.py
"""
import math
import os
import struct
import sys
from fractions import Fraction

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import narrow_float_reference as ref  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "testdata", "dtypes",
                   "narrow")
HEADER = "# source: hand-written in JAX 0.10 print style; expected values from " \
         "scripts/narrow_dtype_bundles.py\n"
NUMPY_NAME = {
    "f8_e4m3fn": "float8_e4m3fn", "f8_e5m2": "float8_e5m2",
    "f8_e4m3fnuz": "float8_e4m3fnuz", "f8_e5m2fnuz": "float8_e5m2fnuz",
    "f4_e2m1fn": "float4_e2m1fn", "f8_e8m0fnu": "float8_e8m0fnu",
    "i4": "int4", "u4": "uint4",
    "i2": "int2", "u2": "uint2",
}
FLOATS = ["f8_e4m3fn", "f8_e5m2", "f8_e4m3fnuz", "f8_e5m2fnuz", "f4_e2m1fn",
          "f8_e8m0fnu"]
MIN_OPSET = {"f8_e4m3fn": 19, "f8_e5m2": 19, "f8_e4m3fnuz": 19,
             "f8_e5m2fnuz": 19, "f4_e2m1fn": 17, "f8_e8m0fnu": 24,
             "i4": 21, "u4": 21,
             "i2": 25, "u2": 25}
BITS = {"i4": 4, "u4": 4, "i2": 2, "u2": 2}


def codes_array(codes):
    return np.frombuffer(bytes(codes), dtype="V1").copy()


def value(fmt, code):
    """decode() as a Python float (NaN for NaN codes, +-inf)."""
    v = ref.decode(fmt, code)
    if v == ref.NAN:
        return math.nan
    if isinstance(v, tuple):
        return math.inf * v[1]
    return float(v)


def f32s(values):
    return np.array(values, dtype=np.float32)


def write(name, text, arrays, notes=""):
    with open(os.path.join(OUT, name + ".jaxpr"), "w") as f:
        f.write(HEADER + notes + text)
    np.savez(os.path.join(OUT, name + ".npz"), **arrays)


def float_inputs(fmt):
    """f32 values: exact values, midpoints (ties), values near them,
    the overflow boundary, zeros; NaN and inf where the format has them."""
    table = ref.positive_table(fmt)
    out = []
    for (lo, _), (hi, _) in zip(table[:6] + table[-3:], table[1:7] + table[-2:]):
        mid = (lo + hi) / 2
        out += [float(lo), float(mid), ref.f32(float(mid) * (1 + 2**-20)),
                -float(hi)]
    top = table[-1][0]
    quantum = table[-1][0] - table[-2][0]
    out += [float(top + quantum / 2), float(top + quantum), 1e30, -0.0, 0.0]
    if ref.FORMATS[fmt][4] != "mx":
        out += [math.nan, math.inf, -math.inf]
    elif fmt == "f4_e2m1fn":
        # +-inf saturate to +-6; +NaN becomes -0 (ml_dtypes' quiet_NaN()).
        # -NaN (+0 in ml_dtypes) is left out: ONNX cannot see a NaN's sign
        # and the f4 lowering gives -0 for every NaN (docs/dtypes.md).
        out += [math.nan, math.inf, -math.inf]
    return [ref.f32(x) for x in out]


def bundles_float(fmt):
    np_name = NUMPY_NAME[fmt]
    opset = MIN_OPSET[fmt]
    notes = (f"# note: ONNX has this type from opset {opset}: below it the "
             "conversion is refused, naming the dtype\n"
             "# markers: no_f64, no_bf16: the f32 operands are the point\n")
    if opset > 23:
        notes += f"# opset: {opset}\n"
    if fmt == "f4_e2m1fn":
        notes = F4_NOTE + ("# markers: no_f64, no_bf16: the f32 operands "
                           "are the point\n")
    # f32 -> narrow.
    xs = float_inputs(fmt)
    n = len(xs)
    write(f"{fmt}_from_f32",
          f"{{ lambda ; a:f32[{n}]. let\n"
          f"    b:{fmt}[{n}] = convert_element_type[new_dtype={np_name} "
          f"weak_type=False] a\n  in (b,) }}\n",
          {"input_0": f32s(xs),
           "expected_0": codes_array([ref.encode(fmt, x) for x in xs])},
          notes)
    # narrow -> f32: every code.
    bits = ref.FORMATS[fmt][0]
    codes = list(range(1 << bits))
    write(f"{fmt}_to_f32",
          f"{{ lambda ; a:{fmt}[{len(codes)}]. let\n"
          f"    b:f32[{len(codes)}] = convert_element_type[new_dtype=float32 "
          f"weak_type=False] a\n  in (b,) }}\n",
          {"input_0": codes_array(codes),
           "expected_0": f32s([value(fmt, c) for c in codes])},
          notes)
    # add, mul in the narrow type, on finite codes.
    finite = [c for c in codes if isinstance(ref.decode(fmt, c), Fraction)]
    a = finite[::3][:16]
    b = list(reversed(finite))[1::5][:16]
    m = min(len(a), len(b))
    a, b = a[:m], b[:m]
    add = [ref.encode(fmt, float(ref.decode(fmt, x) + ref.decode(fmt, y)))
           for x, y in zip(a, b)]
    mul = [ref.encode(fmt, float(ref.decode(fmt, s) * ref.decode(fmt, y)))
           if isinstance(ref.decode(fmt, s), Fraction)
           else ref.encode(fmt, value(fmt, s) * value(fmt, y))
           for s, y in zip(add, b)]
    write(f"{fmt}_add_mul",
          f"{{ lambda ; a:{fmt}[{m}] b:{fmt}[{m}]. let\n"
          f"    c:{fmt}[{m}] = add a b\n"
          f"    d:{fmt}[{m}] = mul c b\n  in (c, d) }}\n",
          {"input_0": codes_array(a), "input_1": codes_array(b),
           "expected_0": codes_array(add), "expected_1": codes_array(mul)},
          notes)


def bundle_dot(fmt):
    np_name = NUMPY_NAME[fmt]
    # Small dyadic values: every product and partial sum is exact in f32.
    av = [1.0, -0.5, 2.0, 0.75, 3.0, -1.5]
    bv = [0.5, 1.0, -2.0, 0.25, 1.5, -0.75]
    a = [ref.encode(fmt, x) for x in av]
    b = [ref.encode(fmt, x) for x in bv]
    A = [[ref.decode(fmt, a[i * 3 + k]) for k in range(3)] for i in range(2)]
    B = [[ref.decode(fmt, b[k * 2 + j]) for j in range(2)] for k in range(3)]
    out = [ref.encode(fmt, float(sum(A[i][k] * B[k][j] for k in range(3))))
           for i in range(2) for j in range(2)]
    write(f"{fmt}_dot",
          f"{{ lambda ; a:{fmt}[2,3] b:{fmt}[3,2]. let\n"
          f"    c:{fmt}[2,2] = dot_general[\n"
          f"      dimension_numbers=(([1], [0]), ([], []))\n"
          f"      preferred_element_type={np_name}\n"
          f"    ] a b\n  in (c,) }}\n",
          {"input_0": codes_array(a).reshape(2, 3),
           "input_1": codes_array(b).reshape(3, 2),
           "expected_0": codes_array(out).reshape(2, 2)},
          F4_NOTE if fmt == "f4_e2m1fn" else
          "# note: ONNX has this type from opset 19\n")


F4_NOTE = ("# note: ONNX Runtime 1.30 cannot Cast FLOAT4E2M1, so the "
           "converter carries f4 values in f32, rounds to f4 arithmetically "
           "and passes f4 graph inputs/outputs as uint8 codes: every opset "
           "(docs/dtypes.md)\n")


def wrap(fmt, v):
    n = 1 << BITS[fmt]
    v &= n - 1
    return v - n if fmt.startswith("i") and v >= n // 2 else v


def code(v, bits=4):
    return v & ((1 << bits) - 1)  # ml_dtypes stores the low bits


def bundles_int(fmt):
    np_name = NUMPY_NAME[fmt]
    opset = MIN_OPSET[fmt]
    n_codes = 1 << BITS[fmt]

    def code(v):
        return globals()["code"](v, BITS[fmt])
    carried = (f"# note: ONNX has this type from opset {opset}: below it the "
               "values are carried in INT8/UINT8, one per byte "
               "(docs/dtypes.md)\n")
    notes = carried
    if opset > 23:
        notes += (f"# opset: {opset}\n")
    xs = [-20, -17, -9, -8, -1, 0, 1, 7, 8, 15, 16, 23, 2**31 - 1, -2**31]
    n = len(xs)
    write(f"{fmt}_from_i32",
          f"{{ lambda ; a:i32[{n}]. let\n"
          f"    b:{fmt}[{n}] = convert_element_type[new_dtype={np_name} "
          f"weak_type=False] a\n  in (b,) }}\n",
          {"input_0": np.array(xs, dtype=np.int32),
           "expected_0": codes_array([code(wrap(fmt, x)) for x in xs])},
          notes)
    lo, hi = ((-n_codes // 2, n_codes // 2 - 1) if fmt.startswith("i")
              else (0, n_codes - 1))
    fs = [-100.0, -8.5, -7.9, -0.5, 0.0, 2.9, 6.99, 7.5, 15.5, 100.0,
          math.nan, math.inf, -math.inf]
    def sat(x):
        if math.isnan(x):
            return 0
        return int(math.trunc(min(max(x, lo), hi)))
    write(f"{fmt}_from_f32",
          f"{{ lambda ; a:f32[{len(fs)}]. let\n"
          f"    b:{fmt}[{len(fs)}] = convert_element_type[new_dtype={np_name} "
          f"weak_type=False] a\n  in (b,) }}\n",
          {"input_0": f32s(fs),
           "expected_0": codes_array([code(sat(x)) for x in fs])},
          notes + "# markers: no_f64, no_bf16: the f32 operands are the point\n")
    codes = [c % n_codes for c in range(16)]
    write(f"{fmt}_to_i32",
          f"{{ lambda ; a:{fmt}[16]. let\n"
          f"    b:i32[16] = convert_element_type[new_dtype=int32 "
          f"weak_type=False] a\n  in (b,) }}\n",
          {"input_0": codes_array(codes),
           "expected_0": np.array([wrap(fmt, c) for c in codes],
                                  dtype=np.int32)},
          notes)
    a = [i % n_codes for i in range(16)]
    b = [(7 * i + 3) % 16 % n_codes for i in range(16)]
    av = [wrap(fmt, x) for x in a]
    bv = [wrap(fmt, x) for x in b]
    add = [wrap(fmt, x + y) for x, y in zip(av, bv)]
    mul = [wrap(fmt, x * y) for x, y in zip(add, bv)]
    # The same program at the default opset and at opset 17, where ONNX has
    # no INT4/INT2 (nor bitwise ops): the INT8/UINT8 carrier
    # (plugin/narrow_int_carrier.h).
    for suffix, header in (("", notes), ("_opset17", carried + "# opset: 17\n")):
        write(f"{fmt}_add_mul{suffix}",
              f"{{ lambda ; a:{fmt}[16] b:{fmt}[16]. let\n"
              f"    c:{fmt}[16] = add a b\n"
              f"    d:{fmt}[16] = mul c b\n  in (c, d) }}\n",
              {"input_0": codes_array(a), "input_1": codes_array(b),
               "expected_0": codes_array([code(x) for x in add]),
               "expected_1": codes_array([code(x) for x in mul])},
              header)
    # dot_general in int4 with int4 accumulation (wraps), preferred int4.
    A = [[wrap(fmt, (3 * i + k) % 16) for k in range(3)] for i in range(2)]
    B = [[wrap(fmt, (5 * k + j + 1) % 16) for j in range(2)] for k in range(3)]
    # (wrap keeps the low BITS bits, so these are in range for int2 too)
    out = [wrap(fmt, sum(A[i][k] * B[k][j] for k in range(3)))
           for i in range(2) for j in range(2)]
    write(f"{fmt}_dot",
          f"{{ lambda ; a:{fmt}[2,3] b:{fmt}[3,2]. let\n"
          f"    c:{fmt}[2,2] = dot_general[\n"
          f"      dimension_numbers=(([1], [0]), ([], []))\n"
          f"      preferred_element_type={np_name}\n"
          f"    ] a b\n  in (c,) }}\n",
          {"input_0": codes_array([code(x) for r in A for x in r]).reshape(2, 3),
           "input_1": codes_array([code(x) for r in B for x in r]).reshape(3, 2),
           "expected_0": codes_array([code(x) for x in out]).reshape(2, 2)},
          notes)


def main():
    os.makedirs(OUT, exist_ok=True)
    for fmt in FLOATS:
        bundles_float(fmt)
    for fmt in ["f8_e4m3fn", "f8_e5m2", "f4_e2m1fn"]:
        bundle_dot(fmt)
    for fmt in ["i4", "u4", "i2", "u2"]:
        bundles_int(fmt)


if __name__ == "__main__":
    main()
