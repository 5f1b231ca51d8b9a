#!/usr/bin/env python3
"""Writes the tridiagonal_solve bundles whose systems need gtsv's row
interchanges (JAX's CPU lowering runs LAPACK gtsv, which pivots; elimination
without pivoting divides by zero or loses all accuracy on them):

  testdata/primitives/tridiagonal_solve/pivoting_{f32,f64}.{jaxpr,npz}
  testdata/complex/tridiagonal_solve_pivoting{,_c128}.{jaxpr,npz}

Each has two batch members: member 0 has d[0] = 0 and subdiagonal entries
larger than the diagonal (every step interchanges or nearly so); member 1
is singular (d[0] = 0 and dl[1] = 0: the first column is zero), for which
gtsv returns info = 1 and JAX substitutes NaN for the whole member.
expected_0 of member 0 is numpy.linalg.solve on the dense matrix
T = diag(d) + diag(dl[1:], -1) + diag(du[:-1], 1) in float64/complex128
(an oracle independent of the converter), rounded to the bundle's dtype;
member 1 is NaN (NaN + NaN i) by JAX's rule (linalg.py,
_tridiagonal_solve_cpu_lowering: _replace_not_ok_with_nan).

  /usr/bin/python3 scripts/gtsv_pivoting_numpy.py
"""
import os

import numpy as np

ROOT = os.path.join(os.path.dirname(__file__), "..", "testdata")
M, N = 6, 2


def systems(complex_valued):
    rng = np.random.default_rng(2026_11_28)

    def draw(*shape):
        x = rng.uniform(-1, 1, shape)
        if complex_valued:
            x = x + 1j * rng.uniform(-1, 1, shape)
        return x

    dl = draw(2, M) * 4  # subdiagonal larger than the diagonal
    d = draw(2, M)
    du = draw(2, M)
    b = draw(2, M, N)
    d[:, 0] = 0  # row 0 must be interchanged with row 1
    d[0, 3] = 0  # and a zero pivot further down
    dl[:, 0] = 7.5  # ignored by the primitive (no row above row 0)
    du[:, -1] = -3.25  # ignored (no column right of the last)
    dl[1, 1] = 0  # member 1: the first column is zero, singular
    return dl, d, du, b


def solve(dl, d, du, b):
    t = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    return np.linalg.solve(t, b)


def write(path, dtype, short, complex_valued):
    dl, d, du, b = systems(complex_valued)
    x0 = solve(dl[0], d[0], du[0], b[0])
    nan = np.nan * (1 + 1j) if complex_valued else np.nan
    expected = np.stack([x0, np.full((M, N), nan)])
    with open(path + ".jaxpr", "w") as f:
        f.write(
            "# source: hand-written in JAX 0.10 print style "
            "(scripts/gtsv_pivoting_numpy.py)\n"
            "# note: member 0 has d[0] = 0 and |dl| > |d| (gtsv interchanges "
            "rows; elimination without pivoting divides by zero); member 1 is "
            "singular (first column zero: gtsv info = 1, JAX returns NaN); "
            "expected_0 by numpy.linalg.solve on the dense matrix\n"
            "# rtol: 1e-4\n"
            "# atol: 1e-5\n"
            "# markers: no_bf16: JAX's tridiagonal_solve has no f16/bf16 "
            "kernel (LAPACK gtsv takes f32/f64/c64/c128); the lowering "
            "refuses them\n"
            f"{{ lambda ; a:{short}[2,{M}] b:{short}[2,{M}] c:{short}[2,{M}] "
            f"d:{short}[2,{M},{N}]. let\n"
            f"    e:{short}[2,{M},{N}] = tridiagonal_solve"
            "[perturb_singular=False] a b c d\n"
            "  in (e,) }\n")
    np.savez(path + ".npz", input_0=dl.astype(dtype), input_1=d.astype(dtype),
             input_2=du.astype(dtype), input_3=b.astype(dtype),
             expected_0=expected.astype(dtype))


def main():
    prim = os.path.join(ROOT, "primitives", "tridiagonal_solve")
    write(os.path.join(prim, "pivoting_f32"), np.float32, "f32", False)
    write(os.path.join(prim, "pivoting_f64"), np.float64, "f64", False)
    cplx = os.path.join(ROOT, "complex")
    write(os.path.join(cplx, "tridiagonal_solve_pivoting"), np.complex64,
          "c64", True)
    write(os.path.join(cplx, "tridiagonal_solve_pivoting_c128"),
          np.complex128, "c128", True)


if __name__ == "__main__":
    main()
