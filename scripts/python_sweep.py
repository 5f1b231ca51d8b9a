#!/usr/bin/env python3
"""convert_text / convert_stablehlo vs the CLI on every testdata bundle and
StableHLO file (the full sweep; ctest runs a representative set in
python/tests/test_core.py).

For each NAME.jaxpr (NAME.mlir, NAME.stablehlo) under testdata/
(recursively): `jax2onnx convert --external_data=never` and
jax2onnx_cpp.convert_text on the file's text and its npz arrays
(convert_stablehlo on the text and the npz's input_i/expected_i; name=NAME)
must either both succeed with byte-identical models or both fail. Prints the mismatches and a summary; exit 1 on any.

  PYTHONPATH=build/python JAX2ONNX_BIN=build/bin/jax2onnx \
      /usr/bin/python3 scripts/python_sweep.py [DIR...] [--use_onnx_ir=false]
"""
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np

import jax2onnx_cpp as j2o


def main(argv):
  flags = [a for a in argv if a.startswith("--")]
  dirs = [a for a in argv if not a.startswith("--")] or [
      os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                   "testdata")]
  use_onnx_ir = None
  if "--use_onnx_ir=false" in flags:
    use_onnx_ir = False
  cli = os.path.abspath(os.environ.get("JAX2ONNX_BIN", "build/bin/jax2onnx"))
  paths = sorted(p for d in dirs for ext in ("jaxpr", "mlir", "stablehlo")
                 for p in glob.glob(os.path.join(d, "**", f"*.{ext}"),
                                    recursive=True))
  same = both_failed = 0
  mismatches = []
  with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "m.onnx")
    for i, path in enumerate(paths):
      stem, ext = os.path.splitext(path)
      name = os.path.basename(stem)
      if os.path.exists(out):
        os.unlink(out)
      # StableHLO models record the path the CLI got as `source` metadata:
      # run it where the file lies, on NAME.mlir, as convert_stablehlo names it.
      where = os.path.dirname(os.path.abspath(path)) if ext != ".jaxpr" else None
      given = os.path.basename(path) if where else path
      result = subprocess.run([cli, "convert", given, "-o", out, "-q",
                               "--external_data=never", *flags],
                              capture_output=True, text=True, cwd=where)
      cli_bytes = None
      if result.returncode == 0:
        with open(out, "rb") as f:
          cli_bytes = f.read()
      try:
        with open(path) as f:
          text = f.read()
        arrays = {}
        npz = stem + ".npz"
        if os.path.exists(npz):
          with np.load(npz) as z:
            arrays = {k: z[k] for k in z.files}
        if ext == ".jaxpr":
          ours = j2o.convert_text(text, arrays, name=name, as_bytes=True,
                                  use_onnx_ir=use_onnx_ir)
        else:
          examples = {k: v for k, v in arrays.items()
                      if k.startswith(("input_", "expected_")) and "@" not in k}
          ours = j2o.convert_stablehlo(text, examples, name=name,
                                       as_bytes=True, use_onnx_ir=use_onnx_ir)
      except Exception as e:  # noqa: BLE001 - every failure is compared
        ours = e
      if cli_bytes is None and isinstance(ours, Exception):
        both_failed += 1
      elif isinstance(ours, bytes) and ours == cli_bytes:
        same += 1
      else:
        why = (f"CLI failed: {result.stderr.strip()[:200]}"
               if cli_bytes is None else
               f"in-process conversion failed: {str(ours)[:200]}"
               if isinstance(ours, Exception) else
               f"bytes differ ({len(ours)} vs {len(cli_bytes)})")
        mismatches.append((path, why))
        print(f"MISMATCH {path}: {why}", flush=True)
      if (i + 1) % 200 == 0:
        print(f"... {i + 1}/{len(paths)}", file=sys.stderr, flush=True)
  print(f"{len(paths)} files: {same} byte-identical, {both_failed} refused "
        f"by both, {len(mismatches)} mismatches")
  return 1 if mismatches else 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
