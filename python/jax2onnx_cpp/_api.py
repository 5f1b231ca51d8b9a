"""The package's functions; JAX is imported only by to_onnx and verify."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import _arrays, _core

ConversionError = _core.ConversionError

_OPTION_NAMES = ("opset", "optimize", "use_onnx_ir", "read_environment",
                 "input_names", "output_names", "mesh", "functions",
                 "fuse_attention", "inputs_as_nchw", "outputs_as_nchw",
                 "threefry_partitionable")


def _options(opset: int, optimize: int, use_onnx_ir: bool | None,
             extra: Mapping[str, Any]) -> Any:
  options = _core.Options()
  options.opset = int(opset)
  options.optimize = int(optimize)
  options.use_onnx_ir = use_onnx_ir
  for key, value in extra.items():
    if key not in _OPTION_NAMES:
      raise TypeError(f"unknown option {key!r} (options: "
                      f"{', '.join(_OPTION_NAMES)})")
    if key in ("input_names", "output_names", "functions") and isinstance(
        value, str):
      value = [v for v in value.split(",") if v]
    if key == "mesh" and isinstance(value, Mapping):
      value = ",".join(f"{k}={v}" for k, v in value.items())
    setattr(options, key, list(value) if isinstance(value, tuple) else value)
  return options


def _as_model(data: bytes, as_bytes: bool) -> Any:
  if as_bytes:
    return data
  try:
    import onnx
  except ImportError:
    return data
  if not hasattr(onnx, "ModelProto"):  # e.g. a directory named onnx
    return data
  model = onnx.ModelProto()
  model.ParseFromString(data)
  return model


def convert_text(jaxpr_text: str, arrays: Mapping[str, Any] | None = None, *,
                 name: str = "bundle", opset: int = 23, optimize: int = 2,
                 use_onnx_ir: bool | None = None, as_bytes: bool = False,
                 **options: Any) -> Any:
  """Converts a printed jaxpr (a bundle's .jaxpr text, `# key: value` header
  lines allowed) with its arrays to ONNX.

  arrays: numpy arrays named like the bundle's npz entries (const_0,
    literal_0, ...; input_i/expected_i are validated but not needed),
    borrowed without a copy where C-contiguous.
  name: the bundle name: the graph's name and the file name in errors
    (`name.jaxpr:LINE:COL: error: ...`).
  use_onnx_ir: the pipeline (None: the default, IR; False: legacy);
    JAX2ONNX_USE_ONNX_IR overrides it unless read_environment=False.
  options: input_names, output_names, mesh ("data=4" or a dict), functions,
    fuse_attention, inputs_as_nchw, outputs_as_nchw, threefry_partitionable,
    read_environment — as the CLI's flags of the same names.
  Returns an onnx.ModelProto when the onnx package is importable (and not
  as_bytes), else the serialized model: the same bytes `jax2onnx convert
  --external_data=never` writes. Raises ConversionError (a ValueError) with
  the CLI's message.
  """
  entries = _arrays.core_entries(arrays or {})
  data = _core.convert_text(jaxpr_text, entries, name,
                            _options(opset, optimize, use_onnx_ir, options))
  return _as_model(data, as_bytes)


def convert_stablehlo(mlir_text: str,
                      arrays: Mapping[str, Any] | None = None, *,
                      name: str = "module", opset: int = 23,
                      optimize: int = 2, use_onnx_ir: bool | None = None,
                      as_bytes: bool = False, **options: Any) -> Any:
  """Converts StableHLO text (what `jax.export.export(jax.jit(f))(x)
  .mlir_module()` or `jax.jit(f).lower(x).as_text()` prints) to ONNX.

  arrays: only input_i / expected_i (as an NAME.npz beside NAME.mlir holds;
    validated against the program's arguments and results, not needed to
    convert); the text carries its constants.
  name: the graph's name and the file name in errors
    (`name.mlir:LINE:COL: error: ...`).
  Options and result as convert_text: the same bytes `jax2onnx convert
  NAME.mlir --external_data=never` writes, run in the file's directory (the
  model's `source` metadata records the path the CLI was given;
  docs/stablehlo.md).
  """
  entries = _arrays.core_entries(arrays or {})
  data = _core.convert_stablehlo(
      mlir_text, entries, name,
      _options(opset, optimize, use_onnx_ir, options))
  return _as_model(data, as_bytes)


def convert_text_to_file(jaxpr_text: str, arrays: Mapping[str, Any] | None,
                         path: str | os.PathLike, *, name: str = "bundle",
                         opset: int = 23, optimize: int = 2,
                         use_onnx_ir: bool | None = None,
                         external_data: str = "auto",
                         external_data_threshold: int = 1 << 20,
                         external_data_name: str = "",
                         **options: Any) -> None:
  """convert_text + save without a second copy of the weights in memory (the
  IR pipeline writes them from the numpy buffers to the file or its
  external-data sidecar); what `jax2onnx convert` does."""
  entries = _arrays.core_entries(arrays or {})
  _core.convert_text_to_file(jaxpr_text, entries, os.fspath(path), name,
                             _options(opset, optimize, use_onnx_ir, options),
                             external_data, int(external_data_threshold),
                             external_data_name)


def _model_bytes(model: Any) -> bytes:
  if isinstance(model, (bytes, bytearray, memoryview)):
    return bytes(model)
  serialize = getattr(model, "SerializeToString", None)
  if serialize is None:
    raise TypeError(f"expected an onnx.ModelProto or bytes, not {type(model)}")
  return serialize()


def save(model: Any, path: str | os.PathLike, *,
         external_data: str = "auto",
         external_data_threshold: int = 1 << 20,
         external_data_name: str = "") -> None:
  """Writes the model atomically as the CLI does: deterministic bytes,
  tensors over the threshold (and more when the model would exceed 2 GiB) in
  one sidecar PATH.data (external_data 'auto'; 'always'; 'never')."""
  _core.write_model(_model_bytes(model), os.fspath(path), external_data,
                    int(external_data_threshold), external_data_name)


def _require_jax(what: str) -> Any:
  try:
    import jax
  except ImportError:
    raise ImportError(
        f"jax2onnx_cpp.{what} needs JAX (pip install jax); convert_text "
        "works without it") from None
  return jax


def _exporter() -> Any:
  from . import export_jaxpr
  return export_jaxpr


def to_onnx(fn: Callable, *args: Any, input_names: Sequence[str] | None = None,
            output_names: Sequence[str] | None = None,
            symbolic: Mapping[str, Any] | None = None, opset: int = 23,
            optimize: int = 2, use_onnx_ir: bool | None = None,
            kwargs: Mapping[str, Any] | None = None, variables: Any = None,
            static_argnums: Sequence[int] = (), as_bytes: bool = False,
            eval_mode: bool = False, **options: Any) -> Any:
  """Traces fn(*args, **kwargs) with jax.make_jaxpr and converts it.

  fn: a function, an Equinox module, a Flax NNX module (or a Linen module
    with variables=); weights it closes over become initializers, handed to
    the converter without a copy where numpy allows.
  input_names/output_names: ONNX names; default: the argument names and
    pytree paths (x, batch/input_ids, out/logits), see export_jaxpr.
  symbolic: {"B": "x:0"} or {"B": ["batch/input_ids:0", "batch/mask:0"]}
    (pytree path:axis) or {"B": (arg_index, axis)}: dynamic dims.
  eval_mode: call .eval() on a Flax NNX module first (dropout off, running
    batch statistics); a module in training mode is traced as it is, with
    a warning.
  Other options as convert_text.
  """
  _require_jax("to_onnx")
  traced = _exporter().trace(fn, *args, kwargs=kwargs, symbolic=symbolic,
                             variables=variables,
                             static_argnums=static_argnums,
                             include_inputs=False, include_expected=False,
                             eval_mode=eval_mode)
  if input_names is not None:
    options["input_names"] = input_names
  if output_names is not None:
    options["output_names"] = output_names
  return convert_text(traced.text, traced.arrays, name=traced.name,
                      opset=opset, optimize=optimize,
                      use_onnx_ir=use_onnx_ir, as_bytes=as_bytes, **options)


# ---------------------------------------------------------------------------
# verify
# ---------------------------------------------------------------------------

# The CLI's per-dtype defaults (docs/testing.md); ints and bools exact.
_DEFAULT_TOLERANCE = {"float16": 1e-2, "bfloat16": 1e-2, "float32": 1e-5,
                      "float64": 1e-7, "complex64": 1e-5, "complex128": 1e-7}


@dataclass
class OutputReport:
  name: str
  ok: bool
  max_abs_error: float
  max_rel_error: float
  detail: str = ""


@dataclass
class VerifyResult:
  ok: bool
  runtime: str  # "onnxruntime" (Python) or "jax2onnx runner" (Node)
  outputs: list[OutputReport] = field(default_factory=list)

  def __bool__(self) -> bool:
    return self.ok

  def __str__(self) -> str:
    lines = [f"{'PASS' if self.ok else 'FAIL'} ({self.runtime})"]
    for o in self.outputs:
      lines.append(f"  {o.name}: {'ok' if o.ok else 'MISMATCH'} max abs "
                   f"{o.max_abs_error:.3g} max rel {o.max_rel_error:.3g}"
                   f"{' ' + o.detail if o.detail else ''}")
    return "\n".join(lines)


def compare_outputs(names: Sequence[str], got: Sequence[np.ndarray],
                    want: Sequence[np.ndarray], rtol: float | None,
                    atol: float | None) -> list[OutputReport]:
  """Per output: |got - want| <= atol + rtol |want| elementwise (NaN equals
  NaN), with the CLI's per-dtype defaults; JAX-free."""
  reports = []
  for name, g, w in zip(names, got, want):
    g = np.asarray(g)
    w = np.asarray(w)
    if g.dtype.kind == "V" or w.dtype.kind == "V" or "bfloat16" in (
        g.dtype.name, w.dtype.name):
      kind = "bfloat16"
    else:
      kind = w.dtype.name
    if g.shape != w.shape:
      reports.append(OutputReport(name, False, float("inf"), float("inf"),
                                  f"shape {g.shape} != {w.shape}"))
      continue
    if kind == "bfloat16":
      g = _bf16_as_f32(g)
      w = _bf16_as_f32(w)
    exact = w.dtype.kind in "biu"
    default = 0.0 if exact else _DEFAULT_TOLERANCE.get(kind, 1e-5)
    r = default if rtol is None else rtol
    a = default if atol is None else atol
    gd = g.astype(np.complex128 if w.dtype.kind == "c" else np.float64)
    wd = w.astype(gd.dtype)
    both_nan = np.isnan(gd) & np.isnan(wd) if not exact else np.zeros(
        gd.shape, bool)
    diff = np.where(both_nan, 0.0, np.abs(gd - wd))
    diff = np.where(np.isnan(diff), np.inf, diff)
    same_inf = (gd == wd)
    diff = np.where(same_inf, 0.0, diff)
    scale = np.abs(wd)
    scale = np.where(np.isnan(scale) | np.isinf(scale), 0.0, scale)
    rel = np.where(scale > 0, diff / np.where(scale > 0, scale, 1), diff)
    ok = bool(np.all(diff <= a + r * scale))
    reports.append(OutputReport(
        name, ok, float(diff.max()) if diff.size else 0.0,
        float(rel.max()) if rel.size else 0.0))
  return reports


def _bf16_as_f32(array: np.ndarray) -> np.ndarray:
  bits = np.ascontiguousarray(array).view(np.uint16).astype(np.uint32)
  return (bits << 16).view(np.float32)


def _package_runner_dir() -> str:
  return os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort")


def _runner_dir() -> str:
  """$JAX2ONNX_ORT_DIR; else the package's ort/ once `npm ci` ran there;
  else "" (the C++ default: an install's share/jax2onnx/ort next to the
  executable, or the source tree's tools/ort this module was built from)."""
  env = os.environ.get("JAX2ONNX_ORT_DIR")
  if env:
    return env
  here = _package_runner_dir()
  if os.path.isdir(os.path.join(here, "node_modules", "onnxruntime-node")):
    return here
  return ""


def run_model(model: Any, inputs: Sequence[Any]) -> tuple[list[str],
                                                          list[np.ndarray],
                                                          str]:
  """Runs the model on positional inputs: (output names, outputs, runtime).

  onnxruntime's Python package when importable, else the project's runner
  (Node + onnxruntime-node: runner.js shipped in the package's ort/
  directory, or $JAX2ONNX_ORT_DIR; `npm ci --ignore-scripts` there installs
  ONNX Runtime once)."""
  data = _model_bytes(model)
  input_names, output_names = _core.model_io_names(data)
  if len(inputs) != len(input_names):
    raise ValueError(f"the model has {len(input_names)} inputs "
                     f"({', '.join(input_names)}), got {len(inputs)}")
  arrays = [np.asarray(x) for x in inputs]
  try:
    import onnxruntime
  except ImportError:
    onnxruntime = None
  if onnxruntime is not None:
    session = onnxruntime.InferenceSession(
        data, providers=["CPUExecutionProvider"])
    outputs = session.run(None, dict(zip(input_names, arrays)))
    return output_names, [np.asarray(o) for o in outputs], "onnxruntime"
  with tempfile.TemporaryDirectory(prefix="jax2onnx_cpp.") as tmp:
    path = os.path.join(tmp, "model.onnx")
    with open(path, "wb") as f:
      f.write(data)
    entries = _arrays.core_entries(dict(zip(input_names, arrays)))
    try:
      results = _core.run_model(path, entries, _runner_dir())
    except RuntimeError as e:
      if "not installed" not in str(e):
        raise
      raise RuntimeError(
          f"{e}; or install ONNX Runtime for this package: `cd "
          f"{_package_runner_dir()} && npm ci --ignore-scripts`, or "
          "pip install onnxruntime") from None
  outputs = [_arrays.from_core(dtype, shape, raw)
             for _, dtype, shape, raw in results]
  return [n for n, _, _, _ in results], outputs, "jax2onnx runner"


def verify(model: Any, fn: Callable, *args: Any, rtol: float | None = None,
           atol: float | None = None, kwargs: Mapping[str, Any] | None = None,
           variables: Any = None, eval_mode: bool = False) -> VerifyResult:
  """Runs the model on the leaves of (args, kwargs) and compares with
  fn(*args, **kwargs) (JAX on the CPU), per output: max abs/rel error and
  whether |got - want| <= atol + rtol |want| (defaults: f32 1e-5, f64 1e-7,
  f16/bf16 1e-2; ints and bools exact). The result is truthy when all
  outputs match; print it for the per-output report. eval_mode as for
  to_onnx (use the same value)."""
  jax = _require_jax("verify")
  export = _exporter()
  function = export._as_function(fn, variables, eval_mode)
  kwargs = dict(kwargs or {})
  cpu = jax.devices("cpu")[0]
  with jax.default_device(cpu):
    expected = jax.tree_util.tree_leaves(function(*args, **kwargs))
  leaves = jax.tree_util.tree_leaves((args, kwargs))
  names, got, runtime = run_model(model, [np.asarray(x) for x in leaves])
  want = [np.asarray(e) for e in expected]
  if len(got) != len(want):
    return VerifyResult(False, runtime, [OutputReport(
        "*", False, float("inf"), float("inf"),
        f"{len(got)} model outputs, {len(want)} from fn")])
  reports = compare_outputs(names, got, want, rtol, atol)
  return VerifyResult(all(r.ok for r in reports), runtime, reports)
