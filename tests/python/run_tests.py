"""ctest entry point of the Python tests (tests/python/test_*.py).

Exits 77 (ctest SKIP_RETURN_CODE) with the reason when the interpreter is
older than tools/export_jaxpr.py needs or numpy is missing (Debian:
python3-numpy, installed by scripts/setup.sh). JAX is not needed.
"""
import os
import sys
import unittest

SKIP = 77


def main() -> int:
  if sys.version_info < (3, 10):
    print(f"SKIP: Python {sys.version.split()[0]} is older than 3.10")
    return SKIP
  try:
    import numpy  # noqa: F401
  except ImportError:
    print(f"SKIP: numpy is not installed for {sys.executable} "
          "(apt-get install python3-numpy)")
    return SKIP
  here = os.path.dirname(os.path.abspath(__file__))
  suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py")
  result = unittest.TextTestRunner(verbosity=2).run(suite)
  return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
  sys.exit(main())
