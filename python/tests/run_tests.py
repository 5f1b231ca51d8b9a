"""ctest entry point of the jax2onnx_cpp tests (python/tests/test_*.py).

Exits 77 (ctest SKIP_RETURN_CODE) with the reason when numpy or the built
package (PYTHONPATH=build/python) cannot be imported. The JAX-dependent
tests skip themselves, naming JAX, where JAX is not installed.
"""
import os
import sys
import unittest

SKIP = 77


def main() -> int:
  try:
    import numpy  # noqa: F401
  except ImportError:
    print(f"SKIP: numpy is not installed for {sys.executable} "
          "(apt-get install python3-numpy)")
    return SKIP
  try:
    import jax2onnx_cpp  # noqa: F401
  except ImportError as e:
    print(f"SKIP: jax2onnx_cpp cannot be imported ({e}); build the target "
          "jax2onnx_python (needs pybind11-dev) or pip install ./python")
    return SKIP
  here = os.path.dirname(os.path.abspath(__file__))
  suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py")
  result = unittest.TextTestRunner(verbosity=2).run(suite)
  return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
  sys.exit(main())
