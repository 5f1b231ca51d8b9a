#!/usr/bin/env python3
"""Expected values for JAX's narrow float formats (ml_dtypes), computed from
each format's definition independently of the C++ codec
(jaxpr/narrow_dtype.cc), which rounds arithmetically (scale by the binade's
quantum, round half to even). This script instead lists every finite value
of the format, looks an input up between its two neighbours and picks the
nearer one, a tie going to the even code (the code whose last mantissa bit
is 0). Exact rationals (fractions.Fraction) throughout.

What the table lookup cannot derive is restated from ml_dtypes 0.6.0
(ml_dtypes/include/float8.h ConvertImpl, mxfloat.h), the non-saturating
conversion numpy casts use:
  * overflow: an input is past the largest finite value when it rounds to
    the value one quantum above it (the next code of an unbounded format);
    it becomes infinity() -- +-inf (IEEE formats), the NaN (fn/fnuz/e8m0),
    +-max (MX f4/f6, whose infinity() is the largest finite value);
  * NaN -> quiet_NaN() with the input's sign applied by the format's unary
    minus (MX formats: quiet_NaN() is the code 1000.. = -0, so +NaN -> -0
    and -NaN -> +0); +-inf -> +-infinity();
  * fnuz formats have no -0: unary minus leaves 0x00 and 0x80 alone;
  * f8_e8m0fnu (unsigned, no zero): 0, negatives, NaN -> 0xFF (NaN); a tie
    rounds up (the implicit leading bit is the rounding digit and it is
    always 1); below 2^-126 the packing treats code 0 as a subnormal
    quantum: x <= 2^-127 -> code 0 (2^-127), 2^-127 < x < 2^-126 -> code 1.

Inputs are float32 values (JAX's convert_element_type from f32): every
finite value of the format, every midpoint between neighbours, the float32
values next to each midpoint, the overflow boundary, tiny values, zeros,
infinities and NaNs, each with both signs.

  /usr/bin/python3 scripts/narrow_float_reference.py
      (rewrites testdata/dtypes/narrow_float_vectors.txt)
"""
import math
import os
import struct
from fractions import Fraction

import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "testdata", "dtypes",
                   "narrow_float_vectors.txt")

# name: (bits, exponent bits, mantissa bits, bias, specials)
FORMATS = {
    "f8_e4m3fn": (8, 4, 3, 7, "fn"),
    "f8_e5m2": (8, 5, 2, 15, "ieee"),
    "f8_e4m3fnuz": (8, 4, 3, 8, "fnuz"),
    "f8_e5m2fnuz": (8, 5, 2, 16, "fnuz"),
    "f8_e8m0fnu": (8, 8, 0, 127, "e8m0"),
    "f4_e2m1fn": (4, 2, 1, 1, "mx"),
    "f8_e4m3": (8, 4, 3, 7, "ieee"),
    "f8_e3m4": (8, 3, 4, 3, "ieee"),
    "f8_e4m3b11fnuz": (8, 4, 3, 11, "fnuz"),
    "f6_e2m3fn": (6, 2, 3, 1, "mx"),
    "f6_e3m2fn": (6, 3, 2, 3, "mx"),
}

NAN = "nan"
INF = "inf"


def decode(fmt, code):
    """Fraction, or NAN / (INF, sign)."""
    bits, eb, mb, bias, kind = FORMATS[fmt]
    if kind == "e8m0":
        return NAN if code == 0xFF else Fraction(2) ** (code - bias)
    sign = -1 if code >> (bits - 1) else 1
    mag = code & ((1 << (bits - 1)) - 1)
    ef, mf = mag >> mb, mag & ((1 << mb) - 1)
    if kind == "ieee" and ef == (1 << eb) - 1:
        return NAN if mf else (INF, sign)
    if kind == "fn" and mag == 0x7F:
        return NAN
    if kind == "fnuz" and code == 0x80:
        return NAN
    if ef == 0:
        v = Fraction(mf) * Fraction(2) ** (1 - bias - mb)
    else:
        v = Fraction((1 << mb) + mf) * Fraction(2) ** (ef - bias - mb)
    return sign * v


def negate(fmt, code):
    bits, _, _, _, kind = FORMATS[fmt]
    if kind == "e8m0":
        return 0xFF
    if kind == "fnuz" and code & 0x7F == 0:
        return code
    return code ^ (1 << (bits - 1))


def specials(fmt):
    """(quiet NaN code, infinity() code) of ml_dtypes."""
    bits, eb, mb, _, kind = FORMATS[fmt]
    sign = 1 << (bits - 1)
    if kind == "ieee":
        inf = ((1 << eb) - 1) << mb
        return inf | (1 << (mb - 1)), inf
    if kind == "fn":
        return 0x7F, 0x7F
    if kind == "fnuz":
        return 0x80, 0x80
    if kind == "e8m0":
        return 0xFF, 0xFF
    return sign, sign - 1  # mx


def positive_table(fmt):
    """Sorted (value, code) of the finite non-negative values."""
    bits = FORMATS[fmt][0]
    limit = 256 if FORMATS[fmt][4] == "e8m0" else 1 << (bits - 1)
    out = []
    for code in range(limit):
        v = decode(fmt, code)
        if isinstance(v, Fraction):
            out.append((v, code))
    out.sort()
    return out


def encode(fmt, x):
    """ml_dtypes' conversion of the float x (a Python float)."""
    kind = FORMATS[fmt][4]
    qnan, inf = specials(fmt)
    neg = math.copysign(1.0, x) < 0
    sign = (lambda c: negate(fmt, c)) if neg else (lambda c: c)
    if math.isnan(x):
        return sign(qnan)
    if math.isinf(x):
        return sign(inf)
    a = Fraction(abs(x))
    table = positive_table(fmt)
    if kind == "e8m0":
        if a == 0 or neg:
            return 0xFF
        if a <= Fraction(2) ** -127:
            return 0
        if a < Fraction(2) ** -126:
            return 1
    elif a == 0:
        return sign(0)
    top_value, top_code = table[-1]
    # One quantum above the largest finite value: the next code of an
    # unbounded format (an odd/even code like any other).
    quantum = table[-1][0] - table[-2][0] if kind != "e8m0" else top_value
    table = table + [(top_value + quantum, top_code + 1, "overflow")]
    if a > table[-1][0]:
        return sign(inf)
    for (lo, lo_code, *_), (hi, hi_code, *over) in zip(table, table[1:]):
        if lo <= a <= hi:
            if a == lo:
                pick = (lo_code, [])
            elif a == hi:
                pick = (hi_code, over)
            elif a - lo < hi - a:
                pick = (lo_code, [])
            elif hi - a < a - lo:
                pick = (hi_code, over)
            elif kind == "e8m0" or hi_code % 2 == 0:
                pick = (hi_code, over)
            else:
                pick = (lo_code, [])
            code, over = pick
            return sign(inf) if over else sign(code)
    raise AssertionError((fmt, x))


def f32(v):
    return float(np.float32(v))


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def inputs(fmt):
    table = positive_table(fmt)
    values = [float(v) for v, _ in table]
    cands = set()
    for v in values:
        cands.add(f32(v))
    for lo, hi in zip(values, values[1:]):
        mid = f32((lo + hi) / 2)  # exact: both are short binary fractions
        cands.add(mid)
        cands.add(float(np.nextafter(np.float32(mid), np.float32(0))))
        cands.add(float(np.nextafter(np.float32(mid), np.float32(np.inf))))
    top = values[-1]
    step = values[-1] - values[-2] if FORMATS[fmt][4] != "e8m0" else top
    for v in (top + step / 2, top + step, 2 * top + step, 1e30, 3.0e38):
        v32 = np.float32(v)
        if np.isfinite(v32):
            cands.add(float(v32))
            cands.add(float(np.nextafter(v32, np.float32(0))))
            cands.add(float(np.nextafter(v32, np.float32(np.inf))))
    tiny = values[1] if values[0] == 0 else values[0]
    for v in (tiny / 2, tiny / 4, tiny / 3, 1e-30, 1e-45, 2.0**-127,
              1.25 * 2.0**-127, 1.5 * 2.0**-127, 0.75 * 2.0**-127, 0.0,
              math.inf, math.nan):
        cands.add(f32(v))
    out = []
    for v in sorted(c for c in cands if not math.isnan(c)):
        out += [v, -v]
    out += [math.nan, -math.nan]
    return out


def main():
    lines = ["# Generated by scripts/narrow_float_reference.py; see there.",
             "# decode FORMAT CODE VALUE  (VALUE: float.hex(), inf, -inf, nan)",
             "# encode FORMAT F32_BITS CODE"]
    for fmt in FORMATS:
        bits = FORMATS[fmt][0]
        for code in range(1 << bits):
            v = decode(fmt, code)
            if v == NAN:
                text = "nan"
            elif isinstance(v, tuple):
                text = "inf" if v[1] > 0 else "-inf"
            else:
                text = float(v).hex()
                if v == 0 and code >> (bits - 1):
                    text = "-0x0.0p+0"
            lines.append(f"decode {fmt} 0x{code:02x} {text}")
        for x in inputs(fmt):
            bits32 = f32_bits(x) if not math.isnan(x) else (
                0xFFC00000 if math.copysign(1, x) < 0 else 0x7FC00000)
            code = encode(fmt, x)
            lines.append(f"encode {fmt} 0x{bits32:08x} 0x{code:02x}")
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{OUT}: {len(lines) - 3} vectors")


if __name__ == "__main__":
    main()
