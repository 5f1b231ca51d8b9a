"""numpy arrays -> the (name, dtype, shape, buffer) entries the core borrows.

JAX-free. The dtype is the jaxpr spelling (f32, bf16, i64, bool, c64, ...);
bf16 comes as ml_dtypes.bfloat16 or as its raw 16-bit patterns (numpy
descr '|V2', what the npz files hold). The one-byte narrow types (float8,
float4, int4, int2) come as ml_dtypes arrays or as np.load reads the npz
files np.save writes for them ('|V1' bytes): bytes that the core retypes to
the narrow dtype of the binder they feed, as it does for npz files
(jaxpr/io/bundle.cc). Arrays that are already C-contiguous are handed over
without a copy.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

_SHORT = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32",
    "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
    "uint64": "u64", "float16": "f16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128", "bfloat16": "bf16",
    # ml_dtypes' one-byte types (one element per byte, int4/int2 unpacked).
    "float8_e4m3fn": "f8_e4m3fn", "float8_e5m2": "f8_e5m2",
    "float8_e4m3fnuz": "f8_e4m3fnuz", "float8_e5m2fnuz": "f8_e5m2fnuz",
    "float8_e8m0fnu": "f8_e8m0fnu", "float4_e2m1fn": "f4_e2m1fn",
    "int4": "i4", "uint4": "u4", "int2": "i2", "uint2": "u2",
}
_ONE_BYTE = {"f8_e4m3fn", "f8_e5m2", "f8_e4m3fnuz", "f8_e5m2fnuz",
             "f8_e8m0fnu", "f4_e2m1fn", "i4", "u4", "i2", "u2"}


def jaxpr_dtype(array: np.ndarray, what: str) -> str:
  """The jaxpr spelling of a numpy array's dtype."""
  dtype = array.dtype
  if dtype.kind == "V" and dtype.itemsize == 2 and not dtype.fields:
    return "bf16"  # raw bf16 bits, as np.load returns them
  if dtype.kind == "V" and dtype.itemsize == 1 and not dtype.fields:
    # A narrow type's codes, as np.load returns them: the core's npz reader
    # reads '<V1' the same way (as f8_e4m3fn bytes, then retyped).
    return "f8_e4m3fn"
  short = _SHORT.get(dtype.name)
  if short is None:
    raise TypeError(
        f"{what}: dtype {dtype.name} has no jaxpr counterpart the converter "
        "reads (bool, int8-64, uint8-64, float16/32/64, bfloat16, "
        "complex64/128, ml_dtypes' float8/float4/int4/int2)")
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
    if dtype in _ONE_BYTE:
      buffer = array.view(np.uint8)  # the buffer protocol lacks these
    elif array.dtype.kind == "V" or array.dtype.name == "bfloat16":
      buffer = array.view(np.uint16)  # the buffer protocol lacks bf16/V2
    else:
      buffer = array
    entries.append((str(name), dtype, [int(d) for d in array.shape], buffer))
  return entries


_NUMPY_OF_SHORT = {v: k for k, v in _SHORT.items()
                   if k != "bfloat16" and v not in _ONE_BYTE}


def from_core(dtype: str, shape: list[int], data: bytes) -> np.ndarray:
  """An output of the project's runner as a numpy array (bf16 and the
  one-byte narrow types as ml_dtypes' types when importable, else their raw
  uint16/uint8 codes)."""
  if dtype == "bf16" or dtype in _ONE_BYTE:
    name = {v: k for k, v in _SHORT.items()}[dtype]
    try:
      import ml_dtypes
      return np.frombuffer(data, dtype=getattr(ml_dtypes, name)).reshape(shape)
    except ImportError:
      raw = np.uint16 if dtype == "bf16" else np.uint8
      return np.frombuffer(data, dtype=raw).reshape(shape)
  return np.frombuffer(data, dtype=_NUMPY_OF_SHORT[dtype]).reshape(shape)
