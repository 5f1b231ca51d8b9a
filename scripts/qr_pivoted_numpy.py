#!/usr/bin/python3
"""numpy oracle for qr(pivoting=True): JAX's CPU lowering calls LAPACK geqp3
(jpvt all 0, so every column is free) and householder_product (orgqr /
ungqr) on its reflectors; p = jpvt - 1 (0-based, A[:, p] = Q R). numpy has
no geqp3, so this is a transcription of the unblocked dlaqp2 / zlaqp2 that
geqp3 runs on matrices smaller than its crossover (nx = 128 columns):

  for i < min(m, n):
    pvt = i + idamax(vn1[i:])  (first index of the largest partial norm)
    swap columns i and pvt of A (all rows), of jpvt; vn1[pvt] = vn1[i],
    vn2[pvt] = vn2[i]
    dlarfg / zlarfg on A[i:, i]: beta = -sign(Re alpha) |A[i:, i]|,
    tau = (beta - alpha) / beta, v = (1, A[i+1:, i] / (alpha - beta))
    (tau = 0 when A[i+1:, i] == 0 and alpha is real)
    A[i:, i+1:] -= conj(tau) v (vᴴ A[i:, i+1:])
    for j > i with vn1[j] != 0:
      temp = max(0, 1 - (|A[i, j]| / vn1[j])²)
      if temp (vn1[j] / vn2[j])² <= tol3z: vn1[j] = vn2[j] = |A[i+1:, j]|
      else: vn1[j] *= sqrt(temp)
  tol3z = sqrt(dlamch('E')): eps = 2^-24 (s, c) or 2^-53 (d, z)

The arithmetic is float64 / complex128 (LAPACK's s and c routines round to
f32 at each step; the difference is far inside the bundles' tolerances)
unless a pivot decision is close: the script reports, for each step, the
ratio of the largest to the second largest remaining partial norm and
refuses inputs where it is below 1.01 (rounding could then pick another
pivot), except exact ties the bundle sets up on purpose (integer entries,
equal sums of squares: idamax keeps the first).

Writes the npz of testdata/primitives/qr/pivoting_numpy (f32) and, with
--complex, testdata/complex/qr_pivoting_numpy (c64)."""
import sys

import numpy as np


def geqp3(a, single):
    a = np.array(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64)
    m, n = a.shape
    k = min(m, n)
    tol3z = np.sqrt(2.0 ** (-24 if single else -53))
    perm = np.arange(n)
    vn1 = np.linalg.norm(a, axis=0)
    vn2 = vn1.copy()
    taus = np.zeros(k, dtype=a.dtype)
    margins = []
    for i in range(k):
        rest = vn1[i:]
        pvt = i + int(np.argmax(rest))  # first maximum, as idamax
        if len(rest) > 1:
            top = np.sort(rest)[::-1]
            margins.append(top[0] / top[1] if top[1] > 0 else np.inf)
        if pvt != i:
            a[:, [i, pvt]] = a[:, [pvt, i]]
            perm[[i, pvt]] = perm[[pvt, i]]
            vn1[pvt] = vn1[i]
            vn2[pvt] = vn2[i]
        alpha = a[i, i]
        xnorm = np.linalg.norm(a[i + 1:, i])
        if xnorm == 0 and np.imag(alpha) == 0:
            tau = 0
        else:
            norm = np.sqrt(abs(alpha) ** 2 + xnorm ** 2)
            beta = norm if np.real(alpha) < 0 else -norm
            tau = (beta - alpha) / beta
            a[i + 1:, i] /= alpha - beta
            a[i, i] = beta
        taus[i] = tau
        v = np.concatenate([[1], a[i + 1:, i]])
        a[i:, i + 1:] -= np.conj(tau) * np.outer(v, v.conj() @ a[i:, i + 1:])
        for j in range(i + 1, n):
            if vn1[j] == 0:
                continue
            temp = max(0.0, 1 - (abs(a[i, j]) / vn1[j]) ** 2)
            if temp * (vn1[j] / vn2[j]) ** 2 <= tol3z:
                vn1[j] = vn2[j] = np.linalg.norm(a[i + 1:, j])
            else:
                vn1[j] *= np.sqrt(temp)
    q = np.eye(m, dtype=a.dtype)
    for i in range(k):
        v = np.zeros(m, dtype=a.dtype)
        v[i] = 1
        v[i + 1:] = a[i + 1:, i]
        q -= taus[i] * np.outer(q @ v, v.conj())
    return q, np.triu(a), perm, margins


def qr_pivoted(a, full, single, ties=0):
    q, r, p, margins = geqp3(a, single)
    exact_ties = sum(1 for x in margins if x == 1.0)
    close = [x for x in margins if 1.0 < x < 1.01 or (x == 1.0 and ties == 0)]
    if close or exact_ties != ties:
        sys.exit(f"pivot margins {margins}: rounding could pick another pivot")
    m, n = a.shape
    kq = m if full else min(m, n)
    assert np.allclose(q[:, :kq] @ r[:kq], a[:, p])
    print("pivots", p, "margins", np.round(margins, 3))
    return [q[:, :kq], r[:kq], p.astype(np.int32)]


def main():
    cplx = "--complex" in sys.argv
    rng = np.random.default_rng(16)

    def draw(shape):
        x = rng.uniform(-2, 2, shape)
        return x + 1j * rng.uniform(-2, 2, shape) if cplx else x

    dtype = np.complex64 if cplx else np.float32
    a = draw((5, 4)).astype(dtype)
    # An exact tie at step 0 (integer entries, squared norms 9 = 9 in
    # columns 1 and 2): idamax keeps the first, column 1.
    t = np.array([[1, 2, 0], [0, 2, 2], [1, 1, 2], [0, 0, 1]], dtype=dtype)
    w = draw((3, 5)).astype(dtype)
    outs = (qr_pivoted(a, False, True) + qr_pivoted(t, True, True, ties=1) +
            qr_pivoted(w, False, True))
    npz = {"input_0": a, "input_1": t, "input_2": w}
    for i, x in enumerate(outs):
        npz[f"expected_{i}"] = x if x.dtype == np.int32 else x.astype(dtype)
    path = ("testdata/complex/qr_pivoting_numpy.npz" if cplx else
            "testdata/primitives/qr/pivoting_numpy.npz")
    np.savez(path, **npz)


if __name__ == "__main__":
    main()
