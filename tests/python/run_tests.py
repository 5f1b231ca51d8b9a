"""ctest entry point of a folder of Python unittest files (test_*.py).

Usage: run_tests.py [DIR] [--require MODULE=HINT]...
DIR defaults to this file's folder (tests/python: the exporter's tests);
python/CMakeLists.txt runs it on python/tests with
`--require jax2onnx_cpp=...`. Exits 77 (ctest SKIP_RETURN_CODE) with the
reason when the interpreter is older than tools/export_jaxpr.py needs, numpy
is missing (Debian: python3-numpy, installed by scripts/setup.sh) or a
required module cannot be imported. JAX is not needed: the JAX-dependent
tests skip themselves, naming JAX.
"""
import argparse
import importlib
import os
import sys
import unittest

SKIP = 77


def main() -> int:
  parser = argparse.ArgumentParser()
  parser.add_argument("dir", nargs="?",
                      default=os.path.dirname(os.path.abspath(__file__)))
  parser.add_argument("--require", action="append", default=[],
                      metavar="MODULE=HINT",
                      help="skip unless MODULE imports; HINT says how to get it")
  args = parser.parse_args()
  if sys.version_info < (3, 10):
    print(f"SKIP: Python {sys.version.split()[0]} is older than 3.10")
    return SKIP
  requirements = [("numpy", "apt-get install python3-numpy")]
  requirements += [tuple(r.split("=", 1)) if "=" in r else (r, "")
                   for r in args.require]
  for module, hint in requirements:
    try:
      importlib.import_module(module)
    except ImportError as e:
      print(f"SKIP: {module} cannot be imported for {sys.executable} ({e})"
            + (f"; {hint}" if hint else ""))
      return SKIP
  suite = unittest.defaultTestLoader.discover(args.dir, pattern="test_*.py")
  result = unittest.TextTestRunner(verbosity=2).run(suite)
  return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
  sys.exit(main())
