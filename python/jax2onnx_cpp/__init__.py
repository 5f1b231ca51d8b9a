"""jax2onnx_cpp: JAX functions and printed jaxprs to ONNX, in-process.

    import jax2onnx_cpp as j2o
    model = j2o.to_onnx(fn, x)                 # needs JAX
    j2o.save(model, "fn.onnx")
    print(j2o.verify(model, fn, x))            # ONNX Runtime vs fn(x)

    model = j2o.convert_text(text, {"const_0": w})   # JAX-free core
    model = j2o.convert_stablehlo(open("f.mlir").read())  # StableHLO text

The converter is the C++ jax2onnx (the same code and bytes as the
`jax2onnx convert` CLI); this module is named jax2onnx_cpp so that it does
not clash with the Python package jax2onnx. See python/README.md.
"""

from ._api import (ConversionError, VerifyResult, convert_stablehlo,
                   convert_text, convert_text_to_file, save, to_onnx, verify)
from ._core import version as _version

__version__ = _version()
__all__ = ["ConversionError", "VerifyResult", "convert_stablehlo",
           "convert_text", "convert_text_to_file", "save", "to_onnx",
           "verify"]
