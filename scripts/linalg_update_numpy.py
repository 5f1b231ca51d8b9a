#!/usr/bin/python3
"""Writes the npz of testdata/primitives/symmetric_product/,
testdata/primitives/cholesky_update/ and testdata/primitives/ormqr/: random
inputs and, computed in f64 by numpy independently of the C++ interpreter,
  symmetric_product: alpha a aᵀ + beta c (JAX's CPU lowering computes the
    whole matrix, _symmetric_product_jax_fn);
  cholesky_update: the upper Cholesky factor of rᵀ r + w wᵀ from
    numpy.linalg.cholesky (positive diagonal, unique), not from the Givens
    rotations JAX (and the lowering) use;
  ormqr: the products with the complete Q of numpy's QR (LAPACK orgqr), not
    the reflector-by-reflector application JAX (and the lowering) use.

  /usr/bin/python3 scripts/linalg_update_numpy.py   (from the repo root)
"""
import numpy as np

rng = np.random.default_rng(20261126)

a = rng.uniform(-1, 1, (2, 4, 3))
c = rng.uniform(-1, 1, (2, 4, 4))
c = c + np.swapaxes(c, -1, -2)  # symmetric, as the primitive documents
out = 0.5 * a @ np.swapaxes(a, -1, -2) - 2.0 * c
np.savez("testdata/primitives/symmetric_product/batched_alpha_beta.npz",
         input_0=a.astype(np.float32), input_1=c.astype(np.float32),
         expected_0=out.astype(np.float32))

for suffix, dtype in (("", np.float64), ("_f32", np.float32)):
    n = 5
    m = rng.uniform(-1, 1, (n, n))
    spd = m @ m.T + n * np.eye(n)
    r = np.linalg.cholesky(spd).T.astype(dtype)  # upper, A = rᵀ r
    w = rng.uniform(-1, 1, n)
    w[0] = 0.0  # drotg's w[k] == 0 case (at k = 0; later entries change)
    w = w.astype(dtype)
    r64, w64 = r.astype(np.float64), w.astype(np.float64)
    updated = np.linalg.cholesky(r64.T @ r64 + np.outer(w64, w64)).T
    np.savez(f"testdata/primitives/cholesky_update/rank1{suffix}.npz",
             input_0=r, input_1=w, expected_0=updated.astype(dtype))

# ormqr: geqrf's reflectors and taus of a [2, 5, 3] batch from numpy's
# raw QR (LAPACK geqrf, JAX's convention; numpy returns the reflectors
# transposed), and the products with the complete Q of the same
# factorization (numpy.linalg.qr mode="complete", LAPACK orgqr).
house, taus, q_full = [], [], []
for _ in range(2):
    x = rng.uniform(-1, 1, (5, 3)).astype(np.float32).astype(np.float64)
    h, tau = np.linalg.qr(x, mode="raw")
    house.append(h.T)
    taus.append(tau)
    q_full.append(np.linalg.qr(x, mode="complete")[0])
house, taus, q_full = np.stack(house), np.stack(taus), np.stack(q_full)
house32, taus32 = house.astype(np.float32), taus.astype(np.float32)
cl = rng.uniform(-1, 1, (2, 5, 2)).astype(np.float32)
cr = rng.uniform(-1, 1, (2, 2, 5)).astype(np.float32)
qt = np.swapaxes(q_full, -1, -2)
np.savez("testdata/primitives/ormqr/four_products_numpy.npz",
         input_0=house32, input_1=taus32, input_2=cl, input_3=cr,
         expected_0=(q_full @ cl).astype(np.float32),
         expected_1=(qt @ cl).astype(np.float32),
         expected_2=(cr @ q_full).astype(np.float32),
         expected_3=(cr @ qt).astype(np.float32))
