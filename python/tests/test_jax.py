"""to_onnx / verify with JAX; skipped, naming JAX, where it is missing.

Run where JAX exists: PYTHONPATH=build/python python3 python/tests/test_jax.py
(or after pip install). The oracle is JAX itself (fn(*args) on the CPU)
through verify, which runs the model in ONNX Runtime.
"""

import os
import tempfile
import unittest

import numpy as np

import jax2onnx_cpp as j2o

try:
  import jax
  import jax.numpy as jnp
  HAVE_JAX = True
except ImportError:
  HAVE_JAX = False


class WithoutJaxTest(unittest.TestCase):

  @unittest.skipIf(HAVE_JAX, "JAX is installed")
  def test_to_onnx_says_it_needs_jax(self):
    with self.assertRaisesRegex(ImportError, "needs JAX"):
      j2o.to_onnx(lambda x: x, np.zeros(3, np.float32))


@unittest.skipUnless(HAVE_JAX, "JAX is not installed (pip install jax): the "
                     "to_onnx/verify tests need it")
class ToOnnxTest(unittest.TestCase):

  def test_mlp_with_dict_input_and_symbolic_batch(self):
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)

    def predict(batch, *, scale):
      return {"y": jnp.tanh(batch["x"] @ w) * scale}

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    scale = np.float32(0.5)
    model = j2o.to_onnx(predict, {"x": x}, kwargs={"scale": scale},
                        symbolic={"B": "batch/x:0"}, as_bytes=True)
    from jax2onnx_cpp import _core
    self.assertEqual(_core.model_io_names(model), (["batch/x", "scale"],
                                                   ["y"]))
    result = j2o.verify(model, predict, {"x": x}, kwargs={"scale": scale})
    self.assertTrue(result, str(result))
    with tempfile.TemporaryDirectory() as tmp:
      j2o.save(model, os.path.join(tmp, "m.onnx"))
      self.assertTrue(os.path.getsize(os.path.join(tmp, "m.onnx")) > 0)


  def test_the_readme_first_screen_runs(self):
    # The README's first Python block, as a user pastes it: it must convert,
    # save and verify (verify's result is printed; assert it here).
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                          "..", "README.md")
    with open(readme) as f:
      text = f.read()
    start = text.index("```python\n") + len("```python\n")
    block = text[start:text.index("```", start)]
    self.assertIn("j2o.verify(", block)
    block = block.replace("print(j2o.verify(", "RESULT = (j2o.verify(")
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
      os.chdir(tmp)
      try:
        scope = {}
        exec(compile(block, "README.md", "exec"), scope)
        self.assertTrue(os.path.getsize("mlp.onnx") > 0)
      finally:
        os.chdir(cwd)
    self.assertTrue(scope["RESULT"], str(scope["RESULT"]))


if __name__ == "__main__":
  unittest.main()
