"""jax2onnx_cpp without JAX: jaxpr text + numpy arrays -> model.

The oracle of the conversion tests is the CLI: `jax2onnx convert
--external_data=never` on the same bundle must write exactly the bytes
convert_text returns (same converter, same deterministic serialization).
The numeric test runs the model in ONNX Runtime (the project's runner) and
compares with the bundle's expected_i (computed by JAX when the bundle was
exported). scripts/python_sweep.py runs the byte comparison over every
testdata bundle.
"""

import glob
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import jax2onnx_cpp as j2o
from jax2onnx_cpp import _api, _core

SOURCE = os.environ.get(
    "JAX2ONNX_SOURCE_DIR",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CLI = os.environ.get("JAX2ONNX_BIN", "")


def load_bundle(jaxpr_path):
  with open(jaxpr_path) as f:
    text = f.read()
  npz = jaxpr_path[:-len(".jaxpr")] + ".npz"
  arrays = {}
  if os.path.exists(npz):
    with np.load(npz) as z:
      arrays = {k: z[k] for k in z.files}
  return text, arrays


def cli_convert(jaxpr_path, out, *flags, cwd=None):
  result = subprocess.run(
      [CLI, "convert", jaxpr_path, "-o", out, "--external_data=never", "-q",
       *flags], capture_output=True, text=True, timeout=300, cwd=cwd)
  if result.returncode != 0:
    raise AssertionError(result.stderr)
  with open(out, "rb") as f:
    return f.read()


def representative_bundles():
  """testdata/examples, testdata/bf16 and testdata/dtypes/narrow: the models
  the README shows, bf16/f16 arrays (|V2 entries) and the one-byte narrow
  types (|V1 entries np.save writes for float8/int4/int2)."""
  paths = sorted(glob.glob(os.path.join(SOURCE, "testdata", "examples", "**",
                                        "*.jaxpr"), recursive=True))
  paths += sorted(glob.glob(os.path.join(SOURCE, "testdata", "bf16",
                                         "*.jaxpr")))
  paths += sorted(glob.glob(os.path.join(SOURCE, "testdata", "dtypes",
                                         "narrow", "*.jaxpr")))
  return paths


@unittest.skipUnless(CLI and os.path.exists(CLI),
                     "JAX2ONNX_BIN does not name the built jax2onnx CLI")
class SameBytesAsTheCliTest(unittest.TestCase):

  def test_representative_bundles(self):
    bundles = representative_bundles()
    self.assertGreater(len(bundles), 20)
    with tempfile.TemporaryDirectory() as tmp:
      out = os.path.join(tmp, "cli.onnx")
      for path in bundles:
        with self.subTest(bundle=os.path.relpath(path, SOURCE)):
          text, arrays = load_bundle(path)
          name = os.path.basename(path)[:-len(".jaxpr")]
          try:
            want = cli_convert(path, out)
          except AssertionError:  # refused (a narrow type below its opset)
            with self.assertRaises(Exception):
              j2o.convert_text(text, arrays, name=name, as_bytes=True)
            continue
          got = j2o.convert_text(text, arrays, name=name, as_bytes=True)
          self.assertEqual(got, want)

  def test_stablehlo_files_as_the_cli_converts_them(self):
    # Every file of testdata/stablehlo/interpret and every 8th of the
    # StableHLO test suite's files: same bytes, or the same error. The CLI
    # runs in the file's directory: a model from StableHLO records the path
    # it was given as `source` metadata, here NAME.mlir.
    paths = sorted(glob.glob(os.path.join(SOURCE, "testdata", "stablehlo",
                                          "interpret", "*.mlir")))
    paths += sorted(glob.glob(os.path.join(SOURCE, "testdata", "stablehlo",
                                           "testdata", "*.mlir")))[::8]
    self.assertGreater(len(paths), 150)
    converted = 0
    with tempfile.TemporaryDirectory() as tmp:
      out = os.path.join(tmp, "cli.onnx")
      for path in paths:
        with self.subTest(file=os.path.relpath(path, SOURCE)):
          with open(path) as f:
            text = f.read()
          name = os.path.basename(path)[:-len(".mlir")]
          try:
            want = cli_convert(os.path.basename(path), out,
                               cwd=os.path.dirname(path))
          except AssertionError as cli_error:
            with self.assertRaises(j2o.ConversionError) as caught:
              j2o.convert_stablehlo(text, name=name, as_bytes=True)
            first = str(caught.exception).splitlines()[0]
            self.assertIn(first.split(": error: ")[-1], str(cli_error))
            continue
          self.assertEqual(
              j2o.convert_stablehlo(text, name=name, as_bytes=True), want)
          converted += 1
    self.assertGreater(converted, 100)

  def test_stablehlo_options_as_the_cli_flags(self):
    text = CoreTest.MLIR
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, "scale.mlir")
      with open(path, "w") as f:
        f.write(text)
      out = os.path.join(tmp, "cli.onnx")
      for kwargs, flags in (
          ({}, []),
          ({"use_onnx_ir": False}, ["--use_onnx_ir=false"]),
          ({"opset": 17, "optimize": 0, "input_names": "x"},
           ["--opset=17", "--optimize=0", "--input_names=x"])):
        with self.subTest(flags=flags):
          got = j2o.convert_stablehlo(text, name="scale", as_bytes=True,
                                      **kwargs)
          self.assertEqual(got, cli_convert("scale.mlir", out, *flags,
                                            cwd=tmp))

  def test_options_reach_the_converter_as_the_cli_flags_do(self):
    path = os.path.join(SOURCE, "testdata", "examples", "const_constvar_0430",
                        "const_constvar_0430.jaxpr")
    text, arrays = load_bundle(path)
    with tempfile.TemporaryDirectory() as tmp:
      out = os.path.join(tmp, "cli.onnx")
      for kwargs, flags in (
          ({"use_onnx_ir": False}, ["--use_onnx_ir=false"]),
          ({"opset": 17, "optimize": 0}, ["--opset=17", "--optimize=0"]),
          ({"input_names": ["x"], "output_names": "y,z,w"},
           ["--input_names=x", "--output_names=y,z,w"])):
        with self.subTest(flags=flags):
          got = j2o.convert_text(text, arrays, name="const_constvar_0430",
                                 as_bytes=True, **kwargs)
          self.assertEqual(got, cli_convert(path, out, *flags))

  def test_the_cli_names_the_graph_from_the_recorded_header_too(self):
    text = ("# input_names: x\n# output_names: y\n"
            "{ lambda ; a:f32[3]. let b:f32[3] = neg a in (b,) }\n")
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, "named.jaxpr")
      with open(path, "w") as f:
        f.write(text)
      out = os.path.join(tmp, "named.onnx")
      cli = cli_convert(path, out)
      self.assertEqual(_core.model_io_names(cli), (["x"], ["y"]))
      self.assertEqual(cli, j2o.convert_text(text, name="named",
                                             as_bytes=True))
      overridden = cli_convert(path, out, "--output_names=z")
      self.assertEqual(_core.model_io_names(overridden), (["x"], ["z"]))

  def test_save_writes_the_cli_file_and_sidecar(self):
    path = os.path.join(SOURCE, "testdata", "examples", "conv_stack_nhwc",
                        "conv_stack_nhwc.jaxpr")
    text, arrays = load_bundle(path)
    model = j2o.convert_text(text, arrays, name="conv_stack_nhwc",
                             as_bytes=True)
    with tempfile.TemporaryDirectory() as tmp:
      ours = os.path.join(tmp, "ours.onnx")
      j2o.save(model, ours, external_data="always")
      theirs = os.path.join(tmp, "theirs.onnx")
      subprocess.run([CLI, "convert", path, "-o", theirs, "-q",
                      "--external_data=always",
                      "--external_data_name=ours.onnx.data"], check=True)
      self.assertTrue(os.path.exists(ours + ".data"))
      for a, b in ((ours, theirs), (ours + ".data", ours + ".data")):
        with open(a, "rb") as fa, open(b, "rb") as fb:
          self.assertEqual(fa.read(), fb.read())
      # convert_text_to_file: the same file without the bytes in between.
      direct = os.path.join(tmp, "direct.onnx")
      j2o.convert_text_to_file(text, arrays, direct, name="conv_stack_nhwc",
                               external_data="never")
      with open(direct, "rb") as f:
        self.assertEqual(f.read(), model)


class CoreTest(unittest.TestCase):

  TEXT = "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = mul b a in (c,) }\n"
  W = np.array([1.5, -2.0, 0.25], np.float32)

  # StableHLO as jax.export prints it: x * [1.5, -2, 0.25].
  MLIR = """module @jit_scale {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32>) {
    %cst = stablehlo.constant dense<[1.500000e+00, -2.000000e+00, 2.500000e-01]> : tensor<3xf32>
    %0 = stablehlo.multiply %arg0, %cst : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
"""

  def test_stablehlo_takes_examples_but_no_constants(self):
    plain = j2o.convert_stablehlo(self.MLIR, as_bytes=True)
    x = np.array([1, 2, 3], np.float32)
    with_examples = j2o.convert_stablehlo(
        self.MLIR, {"input_0": x, "expected_0": x * self.W}, as_bytes=True)
    self.assertEqual(plain, with_examples)
    with self.assertRaisesRegex(j2o.ConversionError,
                                "'const_0'.*carries its own constants"):
      j2o.convert_stablehlo(self.MLIR, {"const_0": self.W})
    with self.assertRaisesRegex(j2o.ConversionError, "input_0"):
      j2o.convert_stablehlo(self.MLIR, {"input_0": np.zeros(4, np.float32)})
    with self.assertRaises(j2o.ConversionError) as caught:
      j2o.convert_stablehlo(self.MLIR.replace("stablehlo.multiply",
                                              "stablehlo.multiplyy"),
                            name="scale")
    self.assertRegex(str(caught.exception), r"^scale\.mlir:\d+:\d+: error: ")

  def test_environment_selects_the_pipeline_unless_told_not_to(self):
    legacy = j2o.convert_text(self.TEXT, {"const_0": self.W},
                              use_onnx_ir=False, as_bytes=True)
    ir = j2o.convert_text(self.TEXT, {"const_0": self.W}, as_bytes=True)
    self.assertNotEqual(legacy, ir)
    os.environ["JAX2ONNX_USE_ONNX_IR"] = "0"
    try:
      self.assertEqual(j2o.convert_text(self.TEXT, {"const_0": self.W},
                                        as_bytes=True), legacy)
      self.assertEqual(j2o.convert_text(self.TEXT, {"const_0": self.W},
                                        as_bytes=True,
                                        read_environment=False), ir)
    finally:
      del os.environ["JAX2ONNX_USE_ONNX_IR"]

  def test_strided_and_contiguous_arrays_give_the_same_model(self):
    w = np.array([[1.5, 9], [-2.0, 9], [0.25, 9]], np.float32)[:, 0]
    self.assertFalse(w.flags.c_contiguous)
    refs = sys.getrefcount(self.W)
    self.assertEqual(
        j2o.convert_text(self.TEXT, {"const_0": w}, as_bytes=True),
        j2o.convert_text(self.TEXT, {"const_0": self.W}, as_bytes=True))
    self.assertEqual(sys.getrefcount(self.W), refs)  # borrowed, released

  def test_misaligned_arrays_give_the_same_model(self):
    # f32 data one byte past an aligned address, as a weight inside a
    # np.savez file can be: borrowed all the same, on both pipelines.
    raw = np.zeros(self.W.nbytes + 1, np.uint8)
    w = raw[1:].view(np.float32)
    w[:] = self.W
    self.assertNotEqual(w.ctypes.data % 4, 0)
    for ir in (False, True):
      self.assertEqual(
          j2o.convert_text(self.TEXT, {"const_0": w}, use_onnx_ir=ir,
                           as_bytes=True),
          j2o.convert_text(self.TEXT, {"const_0": self.W}, use_onnx_ir=ir,
                           as_bytes=True))

  def test_recorded_names_name_the_graph_unless_overridden(self):
    text = "# input_names: x\n# output_names: y\n" + self.TEXT
    model = j2o.convert_text(text, {"const_0": self.W}, as_bytes=True)
    self.assertEqual(_core.model_io_names(model), (["x"], ["y"]))
    model = j2o.convert_text(text, {"const_0": self.W}, as_bytes=True,
                             input_names=["z"], use_onnx_ir=False)
    self.assertEqual(_core.model_io_names(model), (["z"], ["y"]))
    # No names recorded: the IR pipeline takes the jaxpr's binders.
    model = j2o.convert_text(self.TEXT, {"const_0": self.W}, as_bytes=True)
    self.assertEqual(_core.model_io_names(model), (["b"], ["c"]))

  def test_errors_read_like_the_cli(self):
    bad = "{ lambda ; a:f32[3]. let\n    b:f32[4] = neg a\n  in (b,) }\n"
    with self.assertRaises(j2o.ConversionError) as caught:
      j2o.convert_text(bad, name="neg")
    self.assertRegex(str(caught.exception), r"^neg\.jaxpr:2:\d+: error: ")
    self.assertIsInstance(caught.exception, ValueError)
    with self.assertRaisesRegex(j2o.ConversionError, "const_0"):
      j2o.convert_text(self.TEXT, {})
    with self.assertRaisesRegex(TypeError, "unknown option 'opsett'"):
      j2o.convert_text(self.TEXT, {"const_0": self.W}, opsett=17)
    with self.assertRaisesRegex(TypeError, "float8|has no jaxpr"):
      j2o.convert_text(self.TEXT, {"const_0": np.array(["a"])})

  def test_bf16_bits_and_ml_dtypes_spelling_are_one_dtype(self):
    text = "{ lambda a:bf16[2]; b:bf16[2]. let c:bf16[2] = add b a in (c,) }"
    bits = np.array([0x3F80, 0x4000], np.uint16)  # 1.0, 2.0
    via_void = j2o.convert_text(text, {"const_0": bits.view("V2")},
                                as_bytes=True)
    try:
      import ml_dtypes
    except ImportError:
      self.assertTrue(via_void)
      return
    via_ml = j2o.convert_text(
        text, {"const_0": bits.view(ml_dtypes.bfloat16)}, as_bytes=True)
    self.assertEqual(via_void, via_ml)

  def test_version(self):
    self.assertRegex(j2o.__version__, r"^\d+\.\d+\.\d+")


class CompareOutputsTest(unittest.TestCase):
  """verify's comparison, JAX-free (the CLI's per-dtype defaults)."""

  def test_tolerances_nan_and_exact_ints(self):
    f = np.float32
    r = _api.compare_outputs(
        ["a", "b", "c", "d"],
        [np.array([1.0, np.nan], f), np.array([1.0 + 1e-3], f),
         np.array([3], np.int32), np.array([np.inf], f)],
        [np.array([1.0 + 1e-6, np.nan], f), np.array([1.0], f),
         np.array([3], np.int32), np.array([np.inf], f)], None, None)
    self.assertEqual([x.ok for x in r], [True, False, True, True])
    self.assertAlmostEqual(r[1].max_abs_error, 1e-3, places=6)
    loose = _api.compare_outputs(["b"], [np.array([1.001], f)],
                                 [np.array([1.0], f)], 1e-2, 0.0)
    self.assertTrue(loose[0].ok)
    shape = _api.compare_outputs(["s"], [np.zeros(2)], [np.zeros(3)], None,
                                 None)
    self.assertFalse(shape[0].ok)


def runner_unavailable():
  """Why models cannot be run here (None when they can)."""
  try:
    model = j2o.convert_text(CoreTest.TEXT, {"const_0": CoreTest.W},
                             as_bytes=True)
    _api.run_model(model, [np.zeros(3, np.float32)])
  except RuntimeError as e:
    return f"ONNX Runtime cannot run models here: {e}"
  return None


RUNNER_UNAVAILABLE = runner_unavailable()


@unittest.skipIf(RUNNER_UNAVAILABLE, str(RUNNER_UNAVAILABLE))
class OnnxRuntimeTest(unittest.TestCase):

  def test_a_stablehlo_model_computes_the_program(self):
    model = j2o.convert_stablehlo(CoreTest.MLIR, as_bytes=True)
    x = np.array([2.0, 3.0, -4.0], np.float32)
    _, got, _ = _api.run_model(model, [x])
    # Expected by hand: [2 * 1.5, 3 * -2, -4 * 0.25], exact in f32.
    np.testing.assert_array_equal(got[0], np.array([3.0, -6.0, -1.0],
                                                   np.float32))

  def test_models_reproduce_the_bundles_expected_outputs(self):
    # Expected values computed by numpy when the bundles were written.
    for rel in ("primitives/hessenberg/batched_f32.jaxpr",
                "primitives/reduce_window/argmax_pool_variadic.jaxpr",
                "primitives/reduce_window/and_bool_window_dilation.jaxpr"):
      with self.subTest(bundle=rel):
        path = os.path.join(SOURCE, "testdata", rel)
        text, arrays = load_bundle(path)
        tolerance = {}
        for line in text.splitlines():
          for key in ("rtol", "atol"):
            if line.startswith(f"# {key}:"):
              tolerance[key] = float(line.split(":", 1)[1])
        inputs = [arrays[f"input_{i}"] for i in range(
            sum(k.startswith("input_") for k in arrays))]
        expected = [arrays[f"expected_{i}"] for i in range(
            sum(k.startswith("expected_") for k in arrays))]
        self.assertTrue(expected, "the bundle stores expected_i")
        model = j2o.convert_text(text, arrays, as_bytes=True)
        names, got, runtime = _api.run_model(model, inputs)
        reports = _api.compare_outputs(names, got, expected,
                                       tolerance.get("rtol"),
                                       tolerance.get("atol"))
        self.assertTrue(all(r.ok for r in reports),
                        f"{runtime}: " + "; ".join(
                            f"{r.name} {r.max_abs_error}" for r in reports))


if __name__ == "__main__":
  unittest.main()
