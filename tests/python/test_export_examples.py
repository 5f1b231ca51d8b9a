"""Tests of tools/export_jaxpr.py's several example sets per bundle
(`more_examples=`, npz entries input_i@K / expected_i@K), without JAX: the
JAX-free helpers directly, and export() over StubJax (test_export_jaxpr),
whose bundle `jax2onnx check` then runs example by example. Expected values
are the numpy function's own outputs (x + y), computed by the exporter the
way it calls JAX."""

import os
import shutil
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))

import export_jaxpr as ej  # noqa: E402
from test_export_jaxpr import (JAX2ONNX, ClosedJaxpr, Eqn, Jaxpr,  # noqa: E402
                               StubJax, Var, f32, run_cli)


class ExampleHelpersTest(unittest.TestCase):

  def test_entry_names(self):
    self.assertEqual(ej.example_key("input", 3, 0), "input_3")
    self.assertEqual(ej.example_key("expected", 0, 2), "expected_0@2")

  def test_examples_are_argument_tuples_or_args_kwargs_pairs(self):
    x = f32(1)
    self.assertEqual(ej.normalize_examples(None, 1, False), [])
    self.assertEqual(ej.normalize_examples([(x,), [x]], 1, False),
                     [((x,), {}), ((x,), {})])
    self.assertEqual(ej.normalize_examples([((x,), {"m": x})], 1, True),
                     [((x,), {"m": x})])
    with self.assertRaisesRegex(ej.ExportError, r"example 1: .*\(x,\)"):
      ej.normalize_examples([x], 1, False)
    with self.assertRaisesRegex(ej.ExportError,
                                "example 2: 2 positional arguments, the first "
                                "example has 1"):
      ej.normalize_examples([(x,), (x, x)], 1, False)
    with self.assertRaisesRegex(ej.ExportError, r"\(args, kwargs\) pair"):
      ej.normalize_examples([(x,)], 1, True)

  def test_leaves_fit_symbolic_dims_vary_static_dims_do_not(self):
    names = ["x", "y"]
    specs = ["B, 3", "B"]
    first = [("float32", (2, 3)), ("float32", (2,))]
    ej.check_example_leaves(1, names, specs, first,
                            [("float32", (5, 3)), ("float32", (5,))])
    cases = (
        ([("float32", (5, 4)), ("float32", (5,))],
         "example 1: input x axis 1 has size 4, in the first example 3"),
        ([("float32", (5, 3)), ("float32", (6,))],
         "input y axis 0: symbol B is 6 here and 5 at x axis 0"),
        ([("int32", (5, 3)), ("float32", (5,))],
         "input x is int32, in the first example float32"),
        ([("float32", (5, 3, 1)), ("float32", (5,))],
         r"input x has shape \(5, 3, 1\)"),
        ([("float32", (5, 3))], "1 input leaves, the first example has 2"),
    )
    for leaves, message in cases:
      with self.subTest(message=message):
        with self.assertRaisesRegex(ej.ExportError, message):
          ej.check_example_leaves(1, names, specs, first, leaves)
    # Without a spec every dim is static.
    with self.assertRaisesRegex(ej.ExportError, "must be symbolic"):
      ej.check_example_leaves(2, ["x"], [None], [("float32", (2,))],
                              [("float32", (3,))])


@unittest.skipUnless(JAX2ONNX and os.path.exists(JAX2ONNX),
                     "JAX2ONNX_BIN does not name the built jax2onnx CLI")
class ExportSeveralExamplesTest(unittest.TestCase):
  """fn(x, y) = x + y over f32[N]: three example sets, N = 3, 2, 5."""

  TEXT = """\
{ lambda ; a:f32[N] b:f32[N]. let c:f32[N] = add a b in (c,) }
"""

  def closed(self):
    a, b, c = Var("a"), Var("b"), Var("c")
    return ClosedJaxpr(Jaxpr([Eqn("add", {}, [a, b])], [c], invars=[a, b]))

  @staticmethod
  def fn(x, y):
    return x + y

  def test_every_example_is_stored_and_checked(self):
    x, y = f32(1, 2, 3), f32(0.5, 0.25, 4)
    more = [(f32(-1, 8), f32(2, 2)), (f32(1, 2, 3, 4, 5), f32(5, 4, 3, 2, 1))]
    out = tempfile.mkdtemp()
    try:
      with StubJax(self.closed(), self.TEXT):
        jaxpr_path, npz_path = ej.export(
            self.fn, x, y, name="sum", out_dir=out,
            symbolic={"N": [(0, 0), (1, 0)]}, source="stub",
            more_examples=more)
      with np.load(npz_path) as z:
        self.assertEqual(list(z.keys()), [
            "input_0", "input_1", "expected_0",
            "input_0@1", "input_1@1", "expected_0@1",
            "input_0@2", "input_1@2", "expected_0@2"])
        np.testing.assert_array_equal(z["input_1@1"], f32(2, 2))
        np.testing.assert_array_equal(z["expected_0@1"], f32(1, 10))
        np.testing.assert_array_equal(z["expected_0@2"], f32(6, 6, 6, 6, 6))
      # A reader that knows only example 0 still reads the bundle.
      result = run_cli("eval", "--compare", jaxpr_path)
      self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
      check = run_cli("check", jaxpr_path)
      if check.returncode != 0 and "passed" not in check.stdout:
        self.skipTest("ONNX Runtime unavailable: " + check.stderr.strip())
      self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
      for k in range(3):
        self.assertIn(f"PASS {jaxpr_path} (example {k})", check.stdout)
      self.assertIn("3 passed, 0 failed", check.stdout)
    finally:
      shutil.rmtree(out)

  def test_an_example_that_does_not_fit_writes_nothing(self):
    out = tempfile.mkdtemp()
    try:
      with StubJax(self.closed(), self.TEXT):
        with self.assertRaisesRegex(ej.ExportError,
                                    "example 1: input y axis 0 has size 2"):
          ej.export(self.fn, f32(1, 2, 3), f32(1, 2, 3), name="sum",
                    out_dir=out, symbolic={"N": (0, 0)}, source="stub",
                    more_examples=[(f32(1, 2), f32(1, 2))])
      self.assertEqual(os.listdir(out), [])
    finally:
      shutil.rmtree(out)


if __name__ == "__main__":
  unittest.main()
