"""Tests of tools/export_jaxpr.py's names, pytree inputs, kwargs, symbolic
dims by pytree path, training-mode warnings and the missing-JAX error,
without JAX (the plain-object fakes and StubJax of test_export_jaxpr)."""

import contextlib
import io
import os
import shutil
import sys
import tempfile
import unittest
import warnings
from unittest import mock

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))

import export_jaxpr as ej  # noqa: E402
from test_export_jaxpr import (JAX2ONNX, ClosedJaxpr, DictKey, Eqn,  # noqa: E402
                               GetAttrKey, Jaxpr, SequenceKey, StubJax, Var,
                               f32, run_cli)


class NamesTest(unittest.TestCase):

  def test_input_leaf_names_join_the_argument_and_its_path(self):
    self.assertEqual(ej.path_name("x", ()), "x")
    self.assertEqual(
        ej.path_name("batch", (DictKey("input_ids"),)), "batch/input_ids")
    self.assertEqual(
        ej.path_name("params", (GetAttrKey("layers"), SequenceKey(0),
                                DictKey("w"))), "params/layers/0/w")
    self.assertEqual(ej.path_name("", (DictKey("scale"),)), "scale")

  def test_output_names_follow_the_result_structure(self):
    self.assertEqual(ej.output_name(()), "out")
    self.assertEqual(ej.output_name((SequenceKey(1),)), "out_1")
    self.assertEqual(ej.output_name((DictKey("logits"),)), "logits")
    self.assertEqual(ej.output_name((SequenceKey(0), DictKey("loss"))),
                     "out_0/loss")

  def test_unsafe_characters_and_clashes(self):
    self.assertEqual(ej.unique_names(["a b", "a,b", "x", "x", ""]),
                     ["a_b", "a_b_1", "x", "x_1", "_"])

  def test_argument_names_from_the_signature(self):
    def f(x, y, *rest, scale=1.0):
      return x

    self.assertEqual(ej.argument_names(f, 4), ["x", "y", "rest_0", "rest_1"])
    self.assertEqual(ej.argument_names(len, 1), ["obj"])

    class Module:
      def __call__(self, inputs):
        return inputs

    self.assertEqual(ej.argument_names(Module(), 1), ["inputs"])
    self.assertEqual(ej.argument_names(object(), 2), ["arg0", "arg1"])

  def test_names_header(self):
    self.assertEqual(ej.names_header(["x", "batch/ids"], ["out"]),
                     "# input_names: x, batch/ids\n# output_names: out\n")
    self.assertEqual(ej.names_header([], []), "")


class SymbolicByPathTest(unittest.TestCase):

  names = ["x", "batch/ids", "batch/mask"]
  shapes = [(4, 3), (4, 7), (4, 7)]

  def specs(self, symbolic, arg_leaf=None):
    resolved = ej.resolve_symbolic(symbolic, self.names, arg_leaf or {0: 0})
    return ej.symbolic_specs(resolved, self.shapes)

  def test_paths_and_argument_positions_mix(self):
    self.assertEqual(
        self.specs({"B": ["batch/ids:0", "batch/mask:0", (0, 0)],
                    "T": ["batch/ids:-1", "batch/mask:1"]}),
        ["B, 3", "B, T", "B, T"])
    self.assertEqual(self.specs({"N": "x:1"}), ["4, N", "4, 7", "4, 7"])

  def test_errors_name_the_inputs(self):
    with self.assertRaisesRegex(ej.ExportError,
                                "no input leaf named 'batch/idz'.*batch/ids"):
      self.specs({"B": "batch/idz:0"})
    with self.assertRaisesRegex(ej.ExportError, "not PATH:AXIS"):
      self.specs({"B": "batch/ids"})
    with self.assertRaisesRegex(ej.ExportError, "argument 1 is not an array"):
      self.specs({"B": (1, 0)})
    with self.assertRaisesRegex(ej.ExportError, "example sizes differ"):
      self.specs({"B": ["x:1", "batch/ids:1"]})

  def test_script_form(self):
    self.assertEqual(ej.parse_symbolic_arg("B=batch/ids:0,0:0"),
                     ("B", ["batch/ids:0", (0, 0)]))
    self.assertEqual(ej.parse_symbolic_arg("T=x:-1"), ("T", ["x:-1"]))
    with self.assertRaises(ej.ExportError):
      ej.parse_symbolic_arg("B=batch/ids")


class TrainingModeTest(unittest.TestCase):

  def test_layers_in_training_mode_are_named(self):
    class Dropout:
      deterministic = False

    class BatchNorm:
      use_running_average = False

    class Linear:
      pass

    class EvalDropout:
      deterministic = True

    found = ej.training_mode_layers(
        [("", Linear()), ("drop", Dropout()), ("bn", BatchNorm()),
         ("d2", EvalDropout())])
    self.assertEqual(found, ["drop (Dropout): dropout is active",
                             "bn (BatchNorm): batch statistics are used"])

  def test_training_kwargs_and_the_warning(self):
    self.assertEqual(
        ej.training_kwargs({"train": True, "deterministic": False,
                            "training": False, "x": 1}),
        ["train=True", "deterministic=False"])
    with warnings.catch_warnings(record=True) as caught:
      warnings.simplefilter("always")
      ej.warn_training_mode(["drop (Dropout): dropout is active"])
      ej.warn_training_mode([])
    self.assertEqual(len(caught), 1)
    self.assertIn("eval_mode=True", str(caught[0].message))


class ScalarsAndStreamingTest(unittest.TestCase):

  def test_zero_d_arrays_keep_their_shape(self):
    # np.ascontiguousarray alone makes them 1-d (numpy < 2): a scalar const
    # would no longer match its f32[] constvar.
    self.assertEqual(ej.to_npz_array(np.float32(2.5), "c").shape, ())
    self.assertEqual(ej.to_npz_array(np.array(7, np.uint16).view("V2"),
                                     "b").shape, ())
    buffer = io.BytesIO()
    ej.write_aligned_npz(buffer, {"const_0": np.array(3.5),
                                  "const_1": np.arange(6.).reshape(2, 3).T})
    with np.load(io.BytesIO(buffer.getvalue())) as z:
      self.assertEqual(z["const_0"].shape, ())
      self.assertEqual(z["const_0"], 3.5)
      np.testing.assert_array_equal(z["const_1"],
                                    np.arange(6.).reshape(2, 3).T)


class MissingJaxTest(unittest.TestCase):

  def test_one_line_error(self):
    # A None entry makes `import jax` raise ImportError.
    with mock.patch.dict(sys.modules, {"jax": None, "jax.extend": None}):
      with self.assertRaisesRegex(ej.ExportError, "JAX is not installed"):
        ej.export(lambda x: x, f32(1), name="m", out_dir=tempfile.gettempdir())
      err = io.StringIO()
      with contextlib.redirect_stderr(err):
        rc = ej.main(["m:f", "--name", "m"])
      self.assertEqual(rc, 1)
      self.assertEqual(err.getvalue().count("\n"), 1, err.getvalue())
      self.assertTrue(err.getvalue().startswith(
          "export_jaxpr: error: JAX is not installed"))


@unittest.skipUnless(JAX2ONNX and os.path.exists(JAX2ONNX),
                     "JAX2ONNX_BIN does not name the built jax2onnx CLI")
class PytreeExportTest(unittest.TestCase):
  """fn(batch, *, scale) with batch = {"x", "y"}: the leaves x, y, scale."""

  TEXT = """\
{ lambda ; a:f32[N] b:f32[N] c:f32[N]. let
    d:f32[N] = add a b
    e:f32[N] = mul d c
  in (e,) }
"""

  def test_dict_input_kwargs_names_and_a_symbolic_path(self):
    a, b, c, d, e = (Var(v) for v in "abcde")
    top = Jaxpr([Eqn("add", {}, [a, b]), Eqn("mul", {}, [d, c])], [e],
                invars=[a, b, c])
    closed = ClosedJaxpr(top)

    def fn(batch, *, scale):
      return {"total": (batch["x"] + batch["y"]) * scale}

    batch = {"y": f32(1, 2, 3), "x": f32(4, 5, 6)}
    scale = f32(2, 3, 4)
    out = tempfile.mkdtemp()
    try:
      with StubJax(closed, self.TEXT) as stub:
        stub.out_shape = {"total": f32(0, 0, 0)}
        jaxpr_path, npz_path = ej.export(
            fn, batch, kwargs={"scale": scale}, name="tree", out_dir=out,
            symbolic={"N": ["batch/x:0", "batch/y:0", "scale:0"]},
            source="stub")
      # The kwargs travel as a trailing dict; every leaf became symbolic.
      sds = ("sds", ("N",), "float32")
      self.assertEqual(stub.traced_with, ({"x": sds, "y": sds},
                                          {"scale": sds}))
      with open(jaxpr_path) as f:
        written = f.read()
      self.assertIn("# input_names: batch/x, batch/y, scale\n"
                    "# output_names: total\n", written)
      with np.load(npz_path) as z:
        np.testing.assert_array_equal(z["input_0"], batch["x"])
        np.testing.assert_array_equal(z["input_2"], scale)
        np.testing.assert_array_equal(z["expected_0"], (f32(5, 7, 9)) *
                                      scale)
      result = run_cli("eval", "--compare", jaxpr_path)
      self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
    finally:
      shutil.rmtree(out)


if __name__ == "__main__":
  unittest.main()
