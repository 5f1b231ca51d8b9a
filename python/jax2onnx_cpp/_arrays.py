"""numpy arrays -> the (name, dtype, shape, buffer) entries the core borrows.

JAX-free. The dtype is the jaxpr spelling (f32, bf16, i64, bool, c64, ...);
bf16 comes as ml_dtypes.bfloat16 or as its raw 16-bit patterns (numpy
descr '|V2', what the npz files hold). Arrays that are already C-contiguous
are handed over without a copy.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

_SHORT = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32",
    "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
    "uint64": "u64", "float16": "f16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128", "bfloat16": "bf16",
}


def jaxpr_dtype(array: np.ndarray, what: str) -> str:
  """The jaxpr spelling of a numpy array's dtype."""
  dtype = array.dtype
  if dtype.kind == "V" and dtype.itemsize == 2 and not dtype.fields:
    return "bf16"  # raw bf16 bits, as np.load returns them
  short = _SHORT.get(dtype.name)
  if short is None:
    raise TypeError(
        f"{what}: dtype {dtype.name} has no jaxpr counterpart the converter "
        "reads (bool, int8-64, uint8-64, float16/32/64, bfloat16, "
        "complex64/128)")
  if dtype.byteorder == ">":
    raise TypeError(f"{what}: big-endian arrays are not supported")
  return short


def core_entries(arrays: Mapping[str, Any]) -> list[tuple]:
  """[(name, dtype, shape, contiguous array)] for _core, in dict order."""
  entries = []
  for name, value in arrays.items():
    array = np.asarray(value)
    dtype = jaxpr_dtype(array, str(name))
    # No copy when already contiguous (reshape: ascontiguousarray makes a
    # 0-d array 1-d before numpy 2).
    array = np.ascontiguousarray(array).reshape(array.shape)
    if array.dtype.kind == "V" or array.dtype.name == "bfloat16":
      buffer = array.view(np.uint16)  # the buffer protocol lacks bf16/V2
    else:
      buffer = array
    entries.append((str(name), dtype, [int(d) for d in array.shape], buffer))
  return entries


_NUMPY_OF_SHORT = {v: k for k, v in _SHORT.items() if k != "bfloat16"}


def from_core(dtype: str, shape: list[int], data: bytes) -> np.ndarray:
  """An output of the project's runner as a numpy array (bf16 as ml_dtypes'
  bfloat16 when importable, else its raw uint16 bits)."""
  if dtype == "bf16":
    try:
      import ml_dtypes
      return np.frombuffer(data, dtype=ml_dtypes.bfloat16).reshape(shape)
    except ImportError:
      return np.frombuffer(data, dtype=np.uint16).reshape(shape)
  return np.frombuffer(data, dtype=_NUMPY_OF_SHORT[dtype]).reshape(shape)
