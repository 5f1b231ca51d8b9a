#!/usr/bin/python3
"""Writes the npz of testdata/primitives/symmetric_product/ and
testdata/primitives/cholesky_update/: random inputs and, computed in f64 by
numpy independently of the C++ interpreter,
  symmetric_product: alpha a aᵀ + beta c (JAX's CPU lowering computes the
    whole matrix, _symmetric_product_jax_fn);
  cholesky_update: the upper Cholesky factor of rᵀ r + w wᵀ from
    numpy.linalg.cholesky (positive diagonal, unique), not from the Givens
    rotations JAX (and the lowering) use.

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
