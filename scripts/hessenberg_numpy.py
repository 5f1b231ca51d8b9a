#!/usr/bin/python3
"""Writes the npz of testdata/primitives/hessenberg/: random inputs and the
outputs of a numpy transcription of LAPACK dgehd2 (ilo = 1, ihi = n; JAX's
CPU hessenberg calls gehrd, whose blocked form equals it up to rounding),
written from LAPACK's reference source independently of the C++ code. The
script also checks what the result must satisfy whatever the reflector
conventions: Q H Qᵀ = A with Q = H_0 ... H_{n-2} and H upper Hessenberg.

  /usr/bin/python3 scripts/hessenberg_numpy.py   (from the repo root)
"""
import numpy as np


def dlarfg(alpha, x):
    """LAPACK dlarfg: (beta, tau, v_essential) with H (alpha; x) = (beta; 0)."""
    xnorm = np.linalg.norm(x)
    if xnorm == 0.0:
        return alpha, 0.0, x.copy()
    beta = -np.copysign(np.hypot(alpha, xnorm), alpha)
    return beta, (beta - alpha) / beta, x / (alpha - beta)


def dgehd2(a):
    a = a.astype(np.float64).copy()
    n = a.shape[0]
    taus = np.zeros(max(n - 1, 0))
    for i in range(n - 1):
        beta, tau, ess = dlarfg(a[i + 1, i], a[i + 2:, i])
        v = np.zeros(n)
        v[i + 1] = 1.0
        v[i + 2:] = ess
        # Right: A(1:n, i+1:n) = A H; left: A(i+1:n, i+1:n) = H A.
        a[:, i + 1:] -= tau * np.outer(a[:, i + 1:] @ v[i + 1:], v[i + 1:])
        a[i + 1:, i + 1:] -= tau * np.outer(v[i + 1:], v[i + 1:] @ a[i + 1:, i + 1:])
        a[i + 1, i] = beta
        a[i + 2:, i] = ess
        taus[i] = tau
    return a, taus


def check(a, h, taus):
    n = a.shape[0]
    q = np.eye(n)
    for i in range(n - 1):
        v = np.zeros(n)
        v[i + 1] = 1.0
        v[i + 2:] = h[i + 2:, i]
        q = q @ (np.eye(n) - taus[i] * np.outer(v, v))
    hess = np.triu(h, -1)
    assert np.allclose(q @ hess @ q.T, a, atol=1e-10), "Q H Qᵀ != A"
    assert np.allclose(q.T @ q, np.eye(n), atol=1e-12)


rng = np.random.default_rng(20261126)
for name, shape, dtype in (("batched_f32", (2, 5, 5), np.float32),
                           ("square_f64", (6, 6), np.float64)):
    a = rng.uniform(-1, 1, shape).astype(dtype)
    flat = a.reshape(-1, shape[-2], shape[-1])
    outs = [dgehd2(m) for m in flat]
    for m, (h, taus) in zip(flat, outs):
        check(m.astype(np.float64), h, taus)
    h = np.stack([o[0] for o in outs]).reshape(shape)
    taus = np.stack([o[1] for o in outs]).reshape(shape[:-2] + (shape[-1] - 1,))
    np.savez(f"testdata/primitives/hessenberg/{name}.npz", input_0=a,
             expected_0=h.astype(dtype), expected_1=taus.astype(dtype))
