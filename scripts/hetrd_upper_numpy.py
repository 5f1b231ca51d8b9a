#!/usr/bin/python3
"""Writes the npz of testdata/primitives/tridiagonal/upper_{c64,c128} and
testdata/stablehlo_export/lapack/hetrd_upper_c128:
random Hermitian-by-triangle inputs and the outputs of a numpy
transcription of LAPACK zhetd2 with UPLO = 'U' (what JAX's CPU
lax.linalg.tridiagonal(a, lower=False) runs through zhetrd, whose blocked
form equals it up to rounding), written from LAPACK's reference source
independently of the C++ code (which reduces the reversed matrix's lower
triangle instead). The script also checks what the result must satisfy
whatever the conventions: Q T Qᴴ = A with Q = H(n-1) ... H(1), T the real
symmetric tridiagonal matrix of d and e.

  /usr/bin/python3 scripts/hetrd_upper_numpy.py   (from the repo root)
"""
import numpy as np


def zlarfg(alpha, x):
    """LAPACK zlarfg: (beta, tau, v_essential) with Hᴴ (alpha; x) = (beta; 0),
    H = I - tau (v; 1)(v; 1)ᴴ, beta real."""
    xnorm = np.linalg.norm(x)
    if xnorm == 0.0 and alpha.imag == 0.0:
        return alpha, 0j, x.copy()
    beta = -np.copysign(np.sqrt(alpha.real ** 2 + alpha.imag ** 2 + xnorm ** 2),
                        alpha.real)
    tau = complex((beta - alpha.real) / beta, -alpha.imag / beta)
    return complex(beta), tau, x * (1.0 / (alpha - beta))


def hermitian_from_upper(a):
    """The Hermitian matrix of a's upper triangle; the diagonal's imaginary
    parts are not read (zhemv/zher2 assume them zero)."""
    u = np.triu(a, 1)
    return u + np.conj(u).T + np.diag(np.diag(a).real)


def zhetd2_upper(a):
    a = a.astype(np.complex128).copy()
    n = a.shape[0]
    d = np.zeros(n)
    e = np.zeros(n - 1)
    taus = np.zeros(n - 1, np.complex128)
    a[n - 1, n - 1] = a[n - 1, n - 1].real
    for i in range(n - 2, -1, -1):  # LAPACK's I = i + 1, column I + 1
        beta, tau, ess = zlarfg(a[i, i + 1], a[:i, i + 1])
        e[i] = beta.real
        if tau != 0:
            v = np.zeros(i + 1, np.complex128)
            v[:i] = ess
            v[i] = 1.0
            a11 = hermitian_from_upper(a[:i + 1, :i + 1])
            x = tau * (a11 @ v)                        # zhemv
            w = x + (-0.5 * tau * np.vdot(x, v)) * v    # zdotc, zaxpy
            a11 = a11 - np.outer(v, np.conj(w)) - np.outer(w, np.conj(v))
            for p in range(i + 1):                      # zher2 on 'U'
                for q in range(p, i + 1):
                    a[p, q] = a11[p, q].real if p == q else a11[p, q]
        else:
            a[i, i] = a[i, i].real
        a[:i, i + 1] = ess
        a[i, i + 1] = e[i]
        d[i + 1] = a[i + 1, i + 1].real
        taus[i] = tau
    d[0] = a[0, 0].real
    return a, d, e, taus


def check(a, out, d, e, taus):
    n = a.shape[0]
    q = np.eye(n, dtype=np.complex128)
    for i in range(n - 1):  # Q = H(n-1) ... H(1): H(1) applied first
        v = np.zeros(n, np.complex128)
        v[:i] = out[:i, i + 1]
        v[i] = 1.0
        h = np.eye(n) - taus[i] * np.outer(v, np.conj(v))
        q = h @ q
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    herm = hermitian_from_upper(a)
    assert np.allclose(q @ t @ np.conj(q).T, herm, atol=1e-12), "Q T Qᴴ != A"


def main():
    rng = np.random.default_rng(20261129)
    for name, dtype, shape in (("upper_c128", np.complex128, (2, 4, 4)),
                               ("upper_c64", np.complex64, (3, 3))):
        a = (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dtype)
        flat = a.reshape((-1,) + shape[-2:])
        outs = []
        for m in flat:
            out, d, e, taus = zhetd2_upper(m.astype(np.complex128))
            check(m.astype(np.complex128), out, d, e, taus)
            outs.append((out, d, e, taus))
        real = np.float64 if dtype == np.complex128 else np.float32
        stack = lambda k, t: np.stack([o[k] for o in outs]).astype(t).reshape(
            shape[:-2] + outs[0][k].shape)
        results = dict(input_0=a, expected_0=stack(0, dtype),
                       expected_1=stack(1, real), expected_2=stack(2, real),
                       expected_3=stack(3, dtype))
        np.savez(f"testdata/primitives/tridiagonal/{name}.npz", **results)
        if name == "upper_c128":  # lapack_zhetrd_ffi with uplo 'U', + info
            np.savez("testdata/stablehlo_export/lapack/hetrd_upper_c128.npz",
                     expected_4=np.zeros(shape[:-2], np.int32), **results)


if __name__ == "__main__":
    main()
