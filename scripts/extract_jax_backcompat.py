#!/usr/bin/env python3
"""Extracts JAX's export back-compatibility test data into StableHLO bundles.

JAX keeps, per custom_call target, the module `jax.export` printed on CPU
together with its inputs and the outputs XLA computed
(jax/_src/internal_test_util/export_back_compat_test_data/*.py, Apache 2.0).
This writes NAME.mlir (the module text) and NAME.npz (input_i, expected_i)
without numpy, for `jax2onnx check` / corpus (docs/stablehlo.md).

usage: extract_jax_backcompat.py SRC.py DATA_VAR KEY OUT_BASENAME
"""
import datetime
import struct
import sys
import types
import zipfile

DTYPES = {
    'float32': ('<f4', 'f', 1), 'float64': ('<f8', 'd', 1),
    'complex64': ('<c8', 'f', 2), 'complex128': ('<c16', 'd', 2),
    'int32': ('<i4', 'i', 1), 'int64': ('<i8', 'q', 1),
    'uint8': ('|u1', 'B', 1), 'bool_': ('|b1', '?', 1), 'bool': ('|b1', '?', 1),
}


class Arr:
  def __init__(self, data, dtype):
    self.data, self.dtype = data, dtype

  def shape(self):
    s, d = [], self.data
    while isinstance(d, (list, tuple)):
      s.append(len(d))
      d = d[0] if d else None
    return tuple(s)

  def flat(self):
    out = []
    def walk(d):
      if isinstance(d, (list, tuple)):
        for x in d:
          walk(x)
      else:
        out.append(d)
    walk(self.data)
    return out


class DType:
  def __init__(self, name):
    self.name = name

  def __call__(self, v):
    return Arr(v, self.name)


def fake_numpy():
  np = types.ModuleType('numpy')
  np.array = lambda data, dtype=None: Arr(data, dtype.name if isinstance(dtype, DType) else dtype)
  for n in DTYPES:
    setattr(np, n, DType(n))
  np.nan, np.inf = float('nan'), float('inf')
  return np


def npy(a):
  dtype = a.dtype
  if dtype is None:  # numpy's default: float64, or int64 for all-int data
    flat = a.flat()
    dtype = ('complex128' if any(isinstance(x, complex) for x in flat) else
             'float64' if any(isinstance(x, float) for x in flat) else 'int64')
  descr, code, parts = DTYPES[dtype]
  shape = a.shape()
  header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
      descr, str(tuple(shape)))
  pad = 64 - (10 + len(header) + 1) % 64
  header = header + ' ' * pad + '\n'
  body = bytearray()
  for x in a.flat():
    if parts == 2:
      body += struct.pack('<' + code * 2, complex(x).real, complex(x).imag)
    else:
      body += struct.pack('<' + code, x)
  return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode() + bytes(body)


def main():
  src, var, key, out = sys.argv[1:5]
  sys.modules['numpy'] = fake_numpy()
  g = {'__name__': 'backcompat', 'datetime': datetime}
  exec(open(src).read(), g)
  d = g[var][key]
  with open(out + '.mlir', 'w') as f:
    f.write('// From JAX (Apache 2.0): %s, %s["%s"]; inputs and XLA-computed\n'
            '// expected outputs in %s.npz.\n' % (src.split('/repo/')[-1], var, key, out.split('/')[-1]))
    f.write(d['mlir_module_text'].lstrip('\n'))
  with zipfile.ZipFile(out + '.npz', 'w') as z:
    for i, a in enumerate(d['inputs']):
      z.writestr('input_%d.npy' % i, npy(a))
    for i, a in enumerate(d['expected_outputs']):
      z.writestr('expected_%d.npy' % i, npy(a))


if __name__ == '__main__':
  main()
