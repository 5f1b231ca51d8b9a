#!/usr/bin/python3
"""Writes the npz of the svd(full_matrices=True) bundles
testdata/primitives/svd/full_numpy (f32) and testdata/complex/svd_full_numpy
(c64): random inputs and, computed by numpy.linalg.svd(full_matrices=True)
(LAPACK gesdd, JAX's CPU svd), the products the bundles return: s,
U[:, :k] diag(s) Vh[:k], U^H U and Vh Vh^H (the completing columns are not
unique, so U and Vh themselves are not compared)."""
import numpy as np


def products(x):
    u, s, vh = np.linalg.svd(x.astype(np.complex128 if np.iscomplexobj(x)
                                      else np.float64), full_matrices=True)
    k = min(x.shape)
    return [s, (u[:, :k] * s) @ vh[:k], u.conj().T @ u, vh @ vh.conj().T]


def write(path, a, m, dtype, real_dtype):
    out = {"input_0": a.astype(dtype), "input_1": m.astype(dtype)}
    for i, v in enumerate(products(a) + products(m)):
        out[f"expected_{i}"] = v.astype(real_dtype if i % 4 == 0 else dtype)
    np.savez(path, **out)


rng = np.random.default_rng(15)
write("testdata/primitives/svd/full_numpy.npz", rng.uniform(-2, 2, (5, 3)),
      rng.uniform(-2, 2, (2, 4)), np.float32, np.float32)
cplx = lambda shape: rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)
write("testdata/complex/svd_full_numpy.npz", cplx((4, 2)), cplx((2, 5)),
      np.complex64, np.float32)
