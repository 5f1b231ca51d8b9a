#!/usr/bin/python3
"""Writes the npz of testdata/primitives/eigh/large_n_numpy and
testdata/primitives/svd/large_n_numpy (f32, n = 96), and of
testdata/complex/eigh_large_n_numpy and svd_large_n_numpy (c64, n = 64):
random inputs and,
computed in f64 by numpy.linalg.eigh / svd (LAPACK syevd / gesdd, JAX's CPU
kernels), the products the bundles return. Eigen- and singular vectors are
unique only up to sign, so the bundles return eigenvalues, V diag(w) Vᵀ
(the symmetric matrix of the lower triangle) and Vᵀ V (the identity);
singular values, U diag(s) Vᵀ (the input) and Uᵀ U, V Vᵀ.

  /usr/bin/python3 scripts/jacobi_large_numpy.py   (from the repo root)
"""
import numpy as np

rng = np.random.default_rng(20261126)
n = 96

a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
sym = np.tril(a.astype(np.float64)) + np.tril(a.astype(np.float64), -1).T
w, v = np.linalg.eigh(sym)
np.savez("testdata/primitives/eigh/large_n_numpy.npz", input_0=a,
         expected_0=w.astype(np.float32),
         expected_1=((v * w) @ v.T).astype(np.float32),
         expected_2=(v.T @ v).astype(np.float32))

x = rng.uniform(-1, 1, (n, n)).astype(np.float32)
u, s, vh = np.linalg.svd(x.astype(np.float64))
np.savez("testdata/primitives/svd/large_n_numpy.npz", input_0=x,
         expected_0=s.astype(np.float32),
         expected_1=((u * s) @ vh).astype(np.float32),
         expected_2=(u.T @ u).astype(np.float32),
         expected_3=(vh @ vh.T).astype(np.float32))

# Complex (c64, n = 64): the Hermitian matrix of the strict lower triangle
# and the diagonal's real part (what eigh reads); V diag(w) Vᴴ and Vᴴ V.
n = 64
z = (rng.uniform(-1, 1, (n, n)) + 1j * rng.uniform(-1, 1, (n, n))).astype(
    np.complex64)
zl = np.tril(z.astype(np.complex128), -1)
herm = zl + zl.conj().T + np.diag(z.real.astype(np.float64).diagonal())
w, v = np.linalg.eigh(herm)
np.savez("testdata/complex/eigh_large_n_numpy.npz", input_0=z,
         expected_0=w.astype(np.float32),
         expected_1=((v * w) @ v.conj().T).astype(np.complex64),
         expected_2=(v.conj().T @ v).astype(np.complex64))

x = (rng.uniform(-1, 1, (n, n)) + 1j * rng.uniform(-1, 1, (n, n))).astype(
    np.complex64)
u, s, vh = np.linalg.svd(x.astype(np.complex128))
np.savez("testdata/complex/svd_large_n_numpy.npz", input_0=x,
         expected_0=s.astype(np.float32),
         expected_1=((u * s) @ vh).astype(np.complex64),
         expected_2=(u.conj().T @ u).astype(np.complex64),
         expected_3=(vh @ vh.conj().T).astype(np.complex64))
