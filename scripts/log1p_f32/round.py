#!/usr/bin/env python3
"""Rounds log1p(t) to f32 for the hex f32 bit patterns t on stdin (the
output of scan.cc), in 80-digit decimal arithmetic, and marks the t that are
-fl(x * x) for some f32 x. Prints the rows of jaxpr/log1p_f32_hard_cases.h.
Standard library only."""
import math
import struct
import sys
from decimal import Decimal, getcontext

getcontext().prec = 80


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def bits_of(value):
    return struct.unpack("<I", struct.pack("<f", value))[0]


def round_to_f32(exact):
    """The f32 nearest to a Decimal (ties to even; none occur here)."""
    guess = bits_of(struct.unpack("<f", struct.pack("<f", float(exact)))[0])
    candidates = [f32(guess + k) for k in range(-3, 4)]
    return min(candidates, key=lambda v: (abs(Decimal(v) - exact), bits_of(v) & 1))


def squared(t):
    """Whether fl(x * x) == -t for some f32 x."""
    x0 = bits_of(struct.unpack("<f", struct.pack("<f", math.sqrt(-t)))[0])
    for k in range(-4, 5):
        x = f32(x0 + k)
        if struct.unpack("<f", struct.pack("<f", x * x))[0] == -t:
            return True
    return False


for line in sys.stdin:
    t_bits = int(line.split()[0], 16)
    t = f32(t_bits)
    value = round_to_f32((Decimal(1) + Decimal(t)).ln())
    print("    {0x%08xu, 0x%08xu, %s},  // %s" %
          (t_bits, bits_of(value), "true" if squared(t) else "false", t.hex()))
