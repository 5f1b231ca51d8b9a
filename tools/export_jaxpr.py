#!/usr/bin/env python3
"""Export a JAX function as a jaxpr bundle for the jax2onnx C++ converter.

A bundle is NAME.jaxpr (the text `print(jax.make_jaxpr(fn)(*args))` shows,
after `# key: value` header lines) plus NAME.npz (DESIGN.md §2):

  const_i     values of the constvars, in lambda-header order
  literal_i   values of the elided array literals `[...]:f32[3]`, in the order
              they appear in the printed text (shared `let` jaxprs first, then
              the main jaxpr; inside an equation, literals of nested jaxprs in
              its params come before its own operands)
  input_i     the example inputs (pytree leaves of the arguments)
  expected_i  JAX's outputs for them (computed on the CPU by default)
  input_i@K, expected_i@K
              further example sets K = 1, 2, ... (`more_examples=`); readers
              that do not know them skip them, `jax2onnx check` runs each

Use it as a module:

    from export_jaxpr import export
    export(fn, x, name="mlp", out_dir="bundles", symbolic={"B": (0, 0)})

or as a script: `python3 tools/export_jaxpr.py my_module:fn --name mlp
--input f32[4,3] --symbolic B=0:0 --out bundles`.

Arguments may be pytrees and keyword arguments (`kwargs={"mask": m}`);
symbolic dims are named by pytree path (`symbolic={"B": "batch/ids:0"}`).
The inputs are named after the argument and pytree path (`x`, `batch/ids`),
the outputs after their path in the result (`out`, `out_1`, `logits`), in
`# input_names:` / `# output_names:` header lines that `jax2onnx convert`
uses for the ONNX graph (export_names.py). `trace()` returns the bundle in
memory (the Python package's to_onnx uses it).

Requirements: Python >= 3.10, numpy, JAX >= 0.4.30. Written against JAX
0.4.30 through 0.11.1 (jax-ml/jax at cec06d116c05, 2026-08-08): the printing
rules mirrored here (`pp_toplevel_jaxpr`, `pp_kv_pair`, `_pp_eqn`,
`Literal.pretty_print` in jax/_src/core.py) are those of that range. Only
public APIs are used: jax.make_jaxpr, jax.extend.core.{Jaxpr, ClosedJaxpr,
Literal}, jax.export.{symbolic_shape, SymbolicScope}, jax.random.key_data,
jax.dtypes, jax.tree_util. The elided-literal order is also checked against
the printed text, so a JAX that prints differently fails loudly instead of
writing values in the wrong slots.

Dtypes: numpy has no bfloat16, so bf16 arrays are stored as their raw 16-bit
patterns with numpy descr '|V2' (what `np.save` writes for ml_dtypes'
bfloat16; jaxpr/io/npy.cc reads '<V2'/'|V2' as bf16). Typed PRNG keys
(`key<fry>[...]`) are stored as their key data, uint32[..., 2] for threefry
(jax.random.key_data), the form the converter uses for keys (DESIGN.md §6).
Other dtypes numpy lacks (float8, int4, float0) are refused with an error.

Everything that does not need JAX (npz layout, literal ordering over a nested
structure, header text, dtype mapping, symbolic specs) is in plain functions
below; tests/python/test_export_jaxpr.py tests them without JAX.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import io
import os
import re
import struct
import sys
import tempfile
import zipfile
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

# Names, pytree paths and training-mode checks (JAX-free, export_names.py;
# the Python package carries both files side by side).
try:
  from .export_names import (ExportError, argument_names, names_header,
                             output_name, path_name, path_part,
                             resolve_symbolic, training_kwargs,
                             training_mode_layers, unique_names,
                             warn_training_mode)
except ImportError:
  from export_names import (ExportError, argument_names, names_header,
                            output_name, path_name, path_part,
                            resolve_symbolic, training_kwargs,
                            training_mode_layers, unique_names,
                            warn_training_mode)

__all__ = ["export", "trace", "ExportError"]

WRITTEN_AGAINST = "JAX 0.4.30 to 0.11.1 (jax-ml/jax cec06d116c05)"

# JAX >= 0.10.2 also hoists every nested jaxpr with more than 10 equations to
# a shared `let` definition (jax/_src/core.py pp_toplevel_jaxpr).
HOIST_LARGE_JAXPRS_SINCE = (0, 10, 2)


# ---------------------------------------------------------------------------
# Header text
# ---------------------------------------------------------------------------


def header_lines(source: str, jax_version: str, rtol: float | None,
                 atol: float | None, notes: Sequence[str] = ()) -> str:
  """The `# key: value` lines that precede the jaxpr text.

  rtol/atol lines are written only when given (the C++ side then uses them for
  every float output; absent, it uses its per-dtype defaults).
  """
  def one_line(text: str) -> str:
    return " ".join(str(text).split())

  lines = [f"# source: {one_line(source)}",
           f"# jax_version: {one_line(jax_version)}"]
  for key, value in (("rtol", rtol), ("atol", atol)):
    if value is None:
      continue
    value = float(value)
    if not value >= 0:
      raise ExportError(f"{key} must be a non-negative number, not {value}")
    lines.append(f"# {key}: {value!r}")
  lines += [f"# note: {one_line(n)}" for n in notes]
  return "".join(line + "\n" for line in lines)


def version_tuple(version: str) -> tuple[int, ...]:
  """'0.10.2.dev20260101' -> (0, 10, 2)."""
  parts = []
  for piece in version.split(".")[:3]:
    digits = re.match(r"\d+", piece)
    parts.append(int(digits.group()) if digits else 0)
  return tuple(parts)


# ---------------------------------------------------------------------------
# Dtypes and the npz layout
# ---------------------------------------------------------------------------

# numpy dtype names the C++ npy reader accepts as they are.
_NUMPY_NATIVE = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "float16", "float32", "float64", "complex64", "complex128"
}


def short_dtype_name(name: str) -> str:
  """numpy dtype name -> the jaxpr spelling ('float32' -> 'f32').

  As jax._src.dtypes.short_dtype_name: 'bfloat16' -> 'bf16',
  'float8_e4m3fn' -> 'f8_e4m3fn'.
  """
  return (name.replace("float", "f").replace("uint", "u")
          .replace("int", "i").replace("complex", "c"))


def contiguous(array: np.ndarray) -> np.ndarray:
  """C-contiguous, same shape (np.ascontiguousarray makes a 0-d array 1-d
  before numpy 2); no copy when it already is."""
  return np.ascontiguousarray(array).reshape(array.shape)


def bf16_bits_to_npz(bits: np.ndarray) -> np.ndarray:
  """uint16 bf16 bit patterns -> the '|V2' array the C++ reader takes as bf16."""
  bits = contiguous(np.asarray(bits))
  if bits.dtype != np.uint16:
    raise ExportError(f"bf16 bits must be uint16, not {bits.dtype}")
  return bits.view(np.dtype("V2"))


def to_npz_array(value: Any, what: str) -> np.ndarray:
  """A numpy array in a dtype the C++ npz reader accepts (see module doc)."""
  array = np.asarray(value)
  name = array.dtype.name
  if name in _NUMPY_NATIVE:
    return contiguous(array)
  if name == "bfloat16":  # ml_dtypes.bfloat16, 2 bytes
    return bf16_bits_to_npz(array.view(np.uint16))
  if array.dtype.kind == "V" and array.dtype.itemsize == 2 and not array.dtype.fields:
    return contiguous(array)  # already bf16 bits
  raise ExportError(
      f"{what}: dtype {name} has no .npy form the converter reads "
      "(bool, int8-64, uint8-64, float16/32/64, bfloat16, complex64/128)")


def bundle_arrays(consts: Sequence[Any], literals: Sequence[Any],
                  inputs: Sequence[Any],
                  expected: Sequence[Any] | None) -> dict[str, np.ndarray]:
  """The npz entries, in archive order: const_i, literal_i, input_i, expected_i."""
  entries: dict[str, np.ndarray] = {}
  for prefix, values in (("const", consts), ("literal", literals),
                         ("input", inputs), ("expected", expected or ())):
    for i, value in enumerate(values):
      key = f"{prefix}_{i}"
      entries[key] = to_npz_array(value, key)
  return entries


def example_key(prefix: str, i: int, example: int) -> str:
  """The npz entry of value i of an example set: input_i / expected_i for
  the first (example 0), input_i@K / expected_i@K for example K >= 1."""
  return f"{prefix}_{i}" if example == 0 else f"{prefix}_{i}@{example}"


def normalize_examples(more_examples: Sequence[Any] | None, num_args: int,
                       has_kwargs: bool) -> list[tuple[tuple, dict]]:
  """more_examples as (positional args, kwargs) pairs.

  Each entry is a tuple (or list) of positional arguments, like the first
  example's; when the first example has keyword arguments, each entry is
  an (args, kwargs) pair instead."""
  out = []
  for k, entry in enumerate(more_examples or (), start=1):
    if has_kwargs:
      if (not isinstance(entry, (tuple, list)) or len(entry) != 2 or
          not isinstance(entry[0], (tuple, list)) or
          not isinstance(entry[1], Mapping)):
        raise ExportError(
            f"example {k}: with keyword arguments, each of more_examples is "
            "an (args, kwargs) pair")
      args, kwargs = tuple(entry[0]), dict(entry[1])
    else:
      if not isinstance(entry, (tuple, list)):
        raise ExportError(
            f"example {k}: each of more_examples is a tuple of the positional "
            f"arguments, got {type(entry).__name__} (write (x,) for one)")
      args, kwargs = tuple(entry), {}
    if len(args) != num_args:
      raise ExportError(f"example {k}: {len(args)} positional arguments, the "
                        f"first example has {num_args}")
    out.append((args, kwargs))
  return out


def check_example_leaves(example: int, names: Sequence[str],
                         specs: Sequence[str | None],
                         first: Sequence[tuple[str, tuple[int, ...] | None]],
                         leaves: Sequence[tuple[str, tuple[int, ...] | None]]
                         ) -> None:
  """Example `example`'s input leaves, (dtype name, shape) each, fit the
  traced program: the first example's leaf count, dtypes and ranks; its
  static dims; one size per symbol (the symbols of `specs`, the per-leaf
  symbolic_shape specs, may take other sizes than in the first example)."""
  if len(leaves) != len(first):
    raise ExportError(f"example {example}: {len(leaves)} input leaves, the "
                      f"first example has {len(first)}")
  bound: dict[str, tuple[int, str]] = {}
  for name, spec, (dtype0, shape0), (dtype, shape) in zip(
      names, specs, first, leaves):
    where = f"example {example}: input {name}"
    if dtype != dtype0:
      raise ExportError(f"{where} is {dtype}, in the first example {dtype0}")
    if shape0 is None or shape is None:
      continue
    if len(shape) != len(shape0):
      raise ExportError(f"{where} has shape {tuple(shape)}, in the first "
                        f"example {tuple(shape0)}")
    dims = spec.split(", ") if spec else [str(d) for d in shape0]
    for axis, (dim, size) in enumerate(zip(dims, shape)):
      if _SYMBOL.fullmatch(dim):
        seen = bound.setdefault(dim, (size, f"{name} axis {axis}"))
        if seen[0] != size:
          raise ExportError(
              f"{where} axis {axis}: symbol {dim} is {size} here and "
              f"{seen[0]} at {seen[1]}")
      elif int(dim) != size:
        raise ExportError(
            f"{where} axis {axis} has size {size}, in the first example "
            f"{dim}; a size that varies must be symbolic (symbolic=)")


def _atomic_write(path: str, write: Callable[[Any], None], mode: str) -> None:
  directory = os.path.dirname(os.path.abspath(path))
  fd, tmp = tempfile.mkstemp(dir=directory, prefix=".export_jaxpr.")
  try:
    with os.fdopen(fd, mode) as f:
      write(f)
    os.replace(tmp, path)
  except BaseException:
    if os.path.exists(tmp):
      os.unlink(tmp)
    raise


NPZ_ALIGNMENT = 64
_ZIPALIGN_EXTRA_ID = 0xD935  # Android zipalign's padding extra field


def _npy_header(array: np.ndarray) -> bytes:
  """The .npy header np.save writes for `array` (version 1.0, else 2.0)."""
  header = io.BytesIO()
  fields = np.lib.format.header_data_from_array_1_0(array)
  try:
    np.lib.format.write_array_header_1_0(header, fields)
  except ValueError:  # a header over 64 KiB (huge structured dtypes)
    header = io.BytesIO()
    np.lib.format.write_array_header_2_0(header, fields)
  return header.getvalue()


def write_aligned_npz(f: Any, arrays: Mapping[str, np.ndarray]) -> None:
  """np.savez's archive (stored NAME.npy entries, readable by np.load), with
  each array's data starting on a 64-byte boundary of the file, so jax2onnx
  memory-maps the weights instead of copying them. The local header of each
  entry gets a zipalign-style padding extra field; .npy headers are already
  padded to 64 bytes by numpy. Each array's bytes go from its own buffer to
  the file (no second in-memory copy of large weights)."""
  with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED,
                       allowZip64=True) as zf:
    for name, value in arrays.items():
      array = contiguous(np.asanyarray(value))
      header = _npy_header(array)
      info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
      info.compress_type = zipfile.ZIP_STORED
      info.file_size = len(header) + array.nbytes
      # zipfile appends a 20-byte zip64 extra to the local header when it
      # expects the entry to need one (the same test as ZipFile._open_to_write).
      zip64 = info.file_size * 1.05 > zipfile.ZIP64_LIMIT
      before = (zf.fp.tell() + 30 + len(info.filename.encode("utf-8")) + 6 +
                (20 if zip64 else 0))
      zeros = (-before) % NPZ_ALIGNMENT
      info.extra = struct.pack("<HHH", _ZIPALIGN_EXTRA_ID, 2 + zeros,
                               NPZ_ALIGNMENT) + bytes(zeros)
      with zf.open(info, mode="w", force_zip64=zip64) as entry:
        entry.write(header)
        if array.nbytes:
          entry.write(array.reshape(-1).view(np.uint8))


def write_bundle(out_dir: str, name: str, jaxpr_text: str,
                 arrays: Mapping[str, np.ndarray]) -> tuple[str, str | None]:
  """Writes NAME.jaxpr and (when there are arrays) NAME.npz, each atomically."""
  if not re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+", name) or name.startswith("."):
    raise ExportError(f"bundle name {name!r} is not a plain file name")
  os.makedirs(out_dir, exist_ok=True)
  jaxpr_path = os.path.join(out_dir, name + ".jaxpr")
  npz_path = os.path.join(out_dir, name + ".npz")
  if arrays:
    _atomic_write(npz_path, lambda f: write_aligned_npz(f, arrays), "wb")
  elif os.path.exists(npz_path):
    os.unlink(npz_path)  # a stale npz would be read with the new jaxpr
  text = jaxpr_text if jaxpr_text.endswith("\n") else jaxpr_text + "\n"
  _atomic_write(jaxpr_path, lambda f: f.write(text), "w")
  return jaxpr_path, (npz_path if arrays else None)


# ---------------------------------------------------------------------------
# Elided literals: the order JAX prints them in
# ---------------------------------------------------------------------------
#
# The walk takes two callbacks so it runs on JAX objects and on test fakes:
#   as_jaxpr(value) -> the open jaxpr a param value prints as, or None
#       (JAX: a Jaxpr itself; a ClosedJaxpr -> its .jaxpr, as pp_kv_pair does)
#   is_literal(atom) -> whether an operand/outvar is a Literal (has .val, .aval)
# Jaxprs have .constvars .invars .eqns .outvars; equations .params (dict)
# .invars.


def is_elided(literal: Any) -> bool:
  """Literal.pretty_print prints `[...]` for every value with a non-empty shape."""
  return np.shape(literal.val) != ()


def _jaxprs_in_params(params: Mapping[str, Any],
                      as_jaxpr: Callable[[Any], Any]) -> Iterator[Any]:
  """core.jaxprs_in_params: values and tuple items, dict order."""
  for value in params.values():
    for item in (value if isinstance(value, tuple) else (value,)):
      jaxpr = as_jaxpr(item)
      if jaxpr is not None:
        yield jaxpr


def shared_jaxprs(top: Any, as_jaxpr: Callable[[Any], Any],
                  hoist_large: bool) -> list[tuple[str, Any]]:
  """The (name, jaxpr) pairs printed first as `let NAME = ... in`.

  Mirrors pp_toplevel_jaxpr: a breadth-first count of every nested jaxpr
  (by identity); those seen more than once, or (hoist_large) with more than
  10 equations, are shared, in order of discovery, named after the `name`
  param of the equation holding them (`<lambda>` -> `lambda`), else `jaxpr`,
  with numeric suffixes against clashes.
  """
  counts: dict[int, list] = {}
  names: dict[int, str] = {}
  queue = collections.deque([top])
  while queue:
    jaxpr = queue.popleft()
    entry = counts.setdefault(id(jaxpr), [jaxpr, 0])
    entry[1] += 1
    if hoist_large and jaxpr is not top and len(jaxpr.eqns) > 10:
      entry[1] += 1
    for eqn in jaxpr.eqns:
      subs = list(_jaxprs_in_params(eqn.params, as_jaxpr))
      queue.extend(subs)
      name = eqn.params.get("name")
      if name is None:
        continue
      for sub in subs:
        names.setdefault(id(sub), str(name).strip("<>"))
  name_counts: collections.Counter = collections.Counter()
  shared = []
  for key, (jaxpr, count) in counts.items():
    if count == 1:
      continue
    name = names.get(key, "jaxpr")
    seen = name_counts[name]
    if seen > 0:
      name_counts[name] += 1
      name += str(seen)
    name_counts[name] += 1
    shared.append((name, jaxpr))
  return shared


def _printed_jaxprs(value: Any, as_jaxpr: Callable[[Any], Any]) -> list[Any]:
  """The jaxprs pp_kv_pair prints inline for one param value."""
  if type(value) is tuple:
    jaxprs = [as_jaxpr(item) for item in value]
    if all(j is not None for j in jaxprs):
      return jaxprs
    if any(j is not None for j in jaxprs):
      # str() of a mixed tuple prints its jaxprs with fresh contexts.
      raise ExportError(
          "a param holds a tuple mixing jaxprs and other values; its elided "
          "literals cannot be ordered")
    return []
  jaxpr = as_jaxpr(value)
  return [] if jaxpr is None else [jaxpr]


def elided_literals(top: Any, as_jaxpr: Callable[[Any], Any],
                    is_literal: Callable[[Any], bool],
                    hoist_large: bool) -> list[Any]:
  """Every elided literal, in the order the printed text shows `[...]`."""
  shared = shared_jaxprs(top, as_jaxpr, hoist_large)
  shared_ids = {id(j) for _, j in shared}
  found: list[Any] = []

  def visit_atoms(atoms: Iterable[Any]) -> None:
    for atom in atoms:
      if is_literal(atom) and is_elided(atom):
        found.append(atom)

  def walk(jaxpr: Any) -> None:
    for eqn in jaxpr.eqns:
      # Params print sorted by key (the custom rules only move `name`, which
      # holds no jaxpr, to the front), and before the operands.
      for key in sorted(eqn.params):
        for sub in _printed_jaxprs(eqn.params[key], as_jaxpr):
          if id(sub) not in shared_ids:
            walk(sub)
      visit_atoms(eqn.invars)
    visit_atoms(jaxpr.outvars)

  for _, jaxpr in shared:
    walk(jaxpr)
  walk(top)
  return found


_ELIDED_IN_TEXT = re.compile(r"\[\.\.\.\]:(\S+?\[[^\]]*\](?:\{[^}]*\})*)")


def check_literal_order(text: str, literal_avals: Sequence[str]) -> None:
  """The walk must find the `[...]:TYPE` literals of the text, type by type."""
  printed = _ELIDED_IN_TEXT.findall(text)
  if list(printed) != list(literal_avals):
    raise ExportError(
        "the elided literals found in the jaxpr do not match the printed "
        f"text (walk: {list(literal_avals)}, text: {printed}); this JAX prints "
        f"differently from what export_jaxpr.py was written against "
        f"({WRITTEN_AGAINST}). Trace with "
        "jax.config.update('jax_use_simplified_jaxpr_constants', False) so "
        "array constants become constvars instead")


# ---------------------------------------------------------------------------
# Symbolic dimensions
# ---------------------------------------------------------------------------

_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def symbolic_specs(symbolic: Mapping[str, Any] | None,
                   arg_shapes: Sequence[tuple[int, ...] | None]) -> list[str | None]:
  """Per positional argument, its jax.export.symbolic_shape spec or None.

  `symbolic` maps a symbol to the (arg_index, axis) positions it stands for:
  {"B": (0, 0)} or {"B": [(0, 0), (1, 0)]}. `arg_shapes[i]` is the example
  shape of argument i (None when it is not an array). Every position of a
  symbol must have the same example size: the exported inputs bind it.
  """
  specs: list[list[str] | None] = [
      None if shape is None else [str(d) for d in shape] for shape in arg_shapes
  ]
  claimed: dict[tuple[int, int], str] = {}
  for symbol, positions in (symbolic or {}).items():
    if not isinstance(symbol, str) or not _SYMBOL.fullmatch(symbol):
      raise ExportError(f"symbolic dimension name {symbol!r} is not an identifier")
    if (isinstance(positions, tuple) and len(positions) == 2 and
        all(isinstance(p, int) for p in positions)):
      positions = [positions]
    positions = list(positions)
    if not positions:
      raise ExportError(f"symbol {symbol} names no (arg_index, axis) position")
    size = None
    for position in positions:
      if (not isinstance(position, tuple) or len(position) != 2 or
          not all(isinstance(p, int) for p in position)):
        raise ExportError(
            f"symbol {symbol}: position {position!r} is not (arg_index, axis)")
      arg, axis = position
      if not 0 <= arg < len(arg_shapes):
        raise ExportError(f"symbol {symbol}: argument {arg} does not exist "
                          f"({len(arg_shapes)} arguments)")
      shape = arg_shapes[arg]
      if shape is None:
        raise ExportError(f"symbol {symbol}: argument {arg} is not an array")
      rank = len(shape)
      if not -rank <= axis < rank:
        raise ExportError(f"symbol {symbol}: axis {axis} is out of range for "
                          f"argument {arg} of shape {tuple(shape)}")
      axis %= rank
      if (arg, axis) in claimed:
        raise ExportError(f"argument {arg} axis {axis} is claimed by both "
                          f"{claimed[(arg, axis)]} and {symbol}")
      claimed[(arg, axis)] = symbol
      if size is not None and shape[axis] != size:
        raise ExportError(
            f"symbol {symbol}: the example sizes differ ({size} and "
            f"{shape[axis]} at argument {arg} axis {axis})")
      size = shape[axis]
      specs[arg][axis] = symbol
  return [None if s is None else ", ".join(s) for s in specs]


# ---------------------------------------------------------------------------
# The JAX side
# ---------------------------------------------------------------------------


def _import_jax() -> Any:
  try:
    import jax
    from jax.extend import core  # noqa: F401
  except ImportError as e:
    raise ExportError(
        f"JAX is not installed for {sys.executable} ({e}); pip install jax "
        "(export_jaxpr needs JAX >= 0.4.30 to trace)") from None
  return jax


def _as_function(fn: Any, variables: Any, eval_mode: bool = False) -> Callable:
  """Modules as functions whose weights are closed over (-> constvars)."""
  flax = sys.modules.get("flax")
  if flax is not None:
    nnx = getattr(flax, "nnx", None)
    if nnx is not None and isinstance(fn, nnx.Module):
      graphdef, state = nnx.split(fn)  # pure call: no mutation of `fn`
      if eval_mode:
        def call(*args, **kwargs):
          module = nnx.merge(graphdef, state)
          module.eval()
          return module(*args, **kwargs)
        return call
      nodes = ((path_name("", path), node)
               for path, node in nnx.iter_graph(fn))
      warn_training_mode(training_mode_layers(nodes))
      return lambda *args, **kwargs: nnx.merge(graphdef, state)(*args,
                                                                **kwargs)
    linen = getattr(flax, "linen", None)
    if linen is not None and isinstance(fn, linen.Module):
      if variables is None:
        raise ExportError("a Flax Linen module needs variables=: "
                          "export(model, x, variables=params, ...)")
      return lambda *args, **kwargs: fn.apply(variables, *args, **kwargs)
  if variables is not None:
    raise ExportError("variables= is only for Flax Linen modules")
  if not callable(fn):
    raise ExportError(f"{fn!r} is not callable")
  return fn  # functions, Equinox modules (callable pytrees), partials


def _same_static(a: Any, b: Any) -> bool:
  if a is b:
    return True
  try:
    return bool(a == b)
  except Exception:  # e.g. arrays: ambiguous truth value
    return False


def _source_of(fn: Any) -> str:
  target = getattr(fn, "__wrapped__", fn)
  module = getattr(target, "__module__", None) or type(target).__module__
  qualname = (getattr(target, "__qualname__", None) or
              type(target).__qualname__)
  where = f"{module}.{qualname}"
  try:
    import inspect
    file = inspect.getsourcefile(target) or inspect.getsourcefile(type(target))
    line = inspect.getsourcelines(target)[1]
    where += f" ({os.path.basename(file)}:{line})"
  except (TypeError, OSError):
    pass
  return f"tools/export_jaxpr.py from {where}"


class Traced:
  """A traced function: the bundle's text (header included) and arrays."""

  def __init__(self, name: str, text: str, arrays: dict[str, np.ndarray],
               input_names: list[str], output_names: list[str]):
    self.name = name
    self.text = text
    self.arrays = arrays
    self.input_names = input_names
    self.output_names = output_names


def trace(fn: Callable, *example_args: Any, name: str = "model",
          kwargs: Mapping[str, Any] | None = None,
          symbolic: Mapping[str, Any] | None = None,
          include_inputs: bool = True, include_expected: bool = True,
          rtol: float | None = None, atol: float | None = None,
          variables: Any = None, static_argnums: Sequence[int] = (),
          source: str | None = None, expected_on_cpu: bool = True,
          record_names: bool = True, eval_mode: bool = False,
          more_examples: Sequence[Any] | None = None) -> Traced:
  """Traces fn(*example_args, **kwargs); the bundle export() writes, in
  memory. The arrays are numpy views of the constants where JAX allows (no
  copy of the weights). more_examples: see export()."""
  jax = _import_jax()
  from jax.extend import core as jex_core

  function = _as_function(fn, variables, eval_mode)
  kwargs = dict(kwargs or {})
  warn_training_mode(training_kwargs(kwargs))
  static = set(static_argnums)
  tree = jax.tree_util
  leaves_of = tree.tree_leaves

  def to_host(value: Any, aval: Any, what: str) -> np.ndarray:
    """numpy data of `value` in the dtype its jaxpr var prints."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
      return to_npz_array(np.asarray(jax.random.key_data(value)), what)
    array = np.asarray(value)
    want = getattr(aval, "dtype", None)
    if (want is not None and array.dtype != want and
        not jax.dtypes.issubdtype(want, jax.dtypes.prng_key)):
      # Python scalars and numpy constants are canonicalized by JAX (weak
      # f32/i32 unless x64): store them in the var's dtype.
      array = array.astype(want)
    return to_npz_array(array, what)

  # Keyword arguments travel as one trailing dict argument, so the invars
  # are the leaves of the positional arguments, then of the kwargs (sorted
  # by key, as pytrees flatten dicts).
  num_args = len(example_args)
  examples = normalize_examples(more_examples, num_args, bool(kwargs))
  all_args = list(example_args) + ([kwargs] if kwargs else [])
  call = function
  if kwargs:
    def call(*args):
      return function(*args[:num_args], **args[num_args])

  # Input leaves: names and example shapes.
  arg_names = argument_names(fn, num_args) + ["kwargs"] * bool(kwargs)
  flatten_with_path = getattr(tree, "tree_flatten_with_path", None)
  leaf_names: list[str] = []
  leaf_shapes: list[tuple[int, ...] | None] = []
  arg_leaf: dict[int, int] = {}
  for i, arg in enumerate(all_args):
    if i in static:
      continue
    prefix = "" if (kwargs and i == num_args) else arg_names[i]
    pairs = (flatten_with_path(arg)[0] if flatten_with_path is not None
             else [((), leaf) for leaf in leaves_of(arg)])
    if len(pairs) == 1 and not pairs[0][0]:
      arg_leaf[i] = len(leaf_names)
    for path, leaf in pairs:
      leaf_names.append(path_name(prefix, path) or prefix)
      shape = getattr(leaf, "shape", None)
      leaf_shapes.append(None if shape is None or not hasattr(leaf, "dtype")
                         else tuple(shape))
  leaf_names = unique_names(leaf_names)

  # Trace with symbols where asked.
  specs = symbolic_specs(resolve_symbolic(symbolic, leaf_names, arg_leaf),
                         leaf_shapes)
  trace_args = list(all_args)
  if symbolic:
    scope = jax.export.SymbolicScope()
    replace: dict[int, Any] = {}
    for k, spec in enumerate(specs):
      if spec is None or not any(_SYMBOL.fullmatch(d)
                                 for d in spec.split(", ")):
        continue
      replace[k] = jax.export.symbolic_shape(spec, scope=scope)
    leaf_index = 0
    for i, arg in enumerate(all_args):
      if i in static:
        continue
      if i in arg_leaf:  # the argument is an array itself
        if arg_leaf[i] in replace:
          trace_args[i] = jax.ShapeDtypeStruct(replace[arg_leaf[i]], arg.dtype)
        leaf_index += 1
        continue
      flat, treedef = tree.tree_flatten(arg)
      new_leaves = []
      for leaf in flat:
        if leaf_index in replace:
          leaf = jax.ShapeDtypeStruct(replace[leaf_index], leaf.dtype)
        new_leaves.append(leaf)
        leaf_index += 1
      trace_args[i] = tree.tree_unflatten(treedef, new_leaves)
  traced = jax.make_jaxpr(call, static_argnums=tuple(static),
                          return_shape=True)(*trace_args)
  closed, out_shape = traced

  try:
    text = closed.pretty_print(use_color=False)
  except TypeError:
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(closed))

  def as_jaxpr(value: Any) -> Any:
    if isinstance(value, jex_core.Jaxpr):  # also ClosedJaxpr after 0.11
      return value
    if isinstance(value, jex_core.ClosedJaxpr):
      return value.jaxpr
    return None

  top = as_jaxpr(closed)
  hoist = version_tuple(jax.__version__) >= HOIST_LARGE_JAXPRS_SINCE
  literals = elided_literals(top, as_jaxpr,
                             lambda a: isinstance(a, jex_core.Literal), hoist)
  check_literal_order(
      text, [lit.aval.str_short(short_dtypes=True) for lit in literals])

  consts = list(closed.consts)
  if len(consts) != len(top.constvars):
    raise ExportError(f"{len(top.constvars)} constvars but {len(consts)} consts")
  dynamic_args = [a for i, a in enumerate(all_args) if i not in static]
  inputs = leaves_of(dynamic_args)
  if len(inputs) != len(top.invars):
    raise ExportError(f"{len(inputs)} input leaves but the jaxpr has "
                      f"{len(top.invars)} invars")
  if flatten_with_path is not None:
    output_names = unique_names(
        [output_name(path) for path, _ in flatten_with_path(out_shape)[0]])
  else:
    output_names = []
  if len(output_names) != len(top.outvars):
    output_names = []  # e.g. outputs JAX folds away; keep out_i
  def outputs_of(args: Sequence[Any]) -> list[Any]:
    if expected_on_cpu:
      cpu = jax.devices("cpu")[0]
      cpu_args = [a if i in static else jax.device_put(a, cpu)
                  for i, a in enumerate(args)]
      with jax.default_device(cpu):
        outputs = call(*cpu_args)
    else:
      outputs = call(*args)
    leaves = leaves_of(outputs)
    if len(leaves) != len(top.outvars):
      raise ExportError(f"{len(leaves)} output leaves but the jaxpr has "
                        f"{len(top.outvars)} outvars")
    return leaves

  expected = outputs_of(all_args) if include_expected else None

  def aval_of(atom: Any) -> Any:
    return getattr(atom, "aval", None)

  arrays = {}
  for prefix, values, atoms in (
      ("const", consts, top.constvars),
      ("literal", [lit.val for lit in literals], literals),
      ("input", inputs if include_inputs else [], top.invars),
      ("expected", expected or [], top.outvars)):
    for i, value in enumerate(values):
      arrays[f"{prefix}_{i}"] = to_host(value, aval_of(atoms[i]),
                                        f"{prefix}_{i}")

  # Further example sets: input_i@K / expected_i@K.
  def leaf_specs(leaves: Sequence[Any]) -> list[tuple[str, Any]]:
    return [(str(getattr(leaf, "dtype", type(leaf).__name__)),
             tuple(leaf.shape) if hasattr(leaf, "shape") else None)
            for leaf in leaves]

  for k, (args_k, kwargs_k) in enumerate(examples if include_inputs else (),
                                         start=1):
    all_k = list(args_k) + ([kwargs_k] if kwargs else [])
    for i in static:
      if not _same_static(all_k[i], all_args[i]):
        raise ExportError(f"example {k}: static argument {i} differs from "
                          "the first example's (it is part of the program)")
    inputs_k = leaves_of([a for i, a in enumerate(all_k) if i not in static])
    check_example_leaves(k, leaf_names, specs, leaf_specs(inputs),
                         leaf_specs(inputs_k))
    values = [("input", inputs_k, top.invars)]
    if include_expected:
      values.append(("expected", outputs_of(all_k), top.outvars))
    for prefix, vals, atoms in values:
      for i, value in enumerate(vals):
        key = example_key(prefix, i, k)
        arrays[key] = to_host(value, aval_of(atoms[i]), key)
  header = header_lines(source or _source_of(fn), jax.__version__, rtol, atol)
  if record_names:
    header += names_header(leaf_names, output_names)
  return Traced(name, header + text, arrays, leaf_names, output_names)


def export(fn: Callable, *example_args: Any, name: str, out_dir: str = ".",
           kwargs: Mapping[str, Any] | None = None,
           symbolic: Mapping[str, Any] | None = None,
           include_expected: bool = True, rtol: float | None = None,
           atol: float | None = None, variables: Any = None,
           static_argnums: Sequence[int] = (), source: str | None = None,
           expected_on_cpu: bool = True, record_names: bool = True,
           eval_mode: bool = False,
           more_examples: Sequence[Any] | None = None
           ) -> tuple[str, str | None]:
  """Traces `fn(*example_args, **kwargs)` and writes OUT_DIR/NAME.jaxpr and
  NAME.npz.

  fn: a function, an Equinox module, a Flax NNX module, or a Flax Linen
    module with `variables=`; weights it closes over become constvars.
    Arguments may be pytrees (dicts, lists, dataclasses, modules).
  kwargs: keyword arguments, traced too (their leaves follow the positional
    ones, sorted by key).
  symbolic: dynamic dims, each symbol at one or more positions: a pytree
    path and axis, {"B": "batch/input_ids:0"} or {"B": ["x:0", "y:0"]}, or
    an array argument's index and axis, {"B": (0, 0)}. Traced as
    jax.export.symbolic_shape symbols; the example sizes are stored.
  record_names: write `# input_names:` (argument name + pytree path:
    x, batch/input_ids) and `# output_names:` (out, out_0, logits) header
    lines; `jax2onnx convert` names the ONNX inputs/outputs with them.
  eval_mode: call .eval() on a Flax NNX module before tracing (dropout off,
    running batch statistics); a module in training mode is exported as it
    is, with a warning.
  include_expected: store JAX's outputs as expected_i (computed on the CPU
    with expected_on_cpu, the converter's reference backend: GPU matmuls may
    use TF32).
  rtol/atol: tolerance header lines for `jax2onnx check` (default: the C++
    per-dtype defaults).
  more_examples: further example sets, each a tuple of positional arguments
    like example_args (an (args, kwargs) pair when kwargs are given), stored
    as input_i@K / expected_i@K (K = 1, 2, ...); `jax2onnx check` runs every
    set. Symbolic dims may take other sizes; static dims, dtypes and static
    arguments must match the first example.
  Returns the paths written (npz None when there is nothing to store).
  """
  traced = trace(fn, *example_args, name=name, kwargs=kwargs,
                 symbolic=symbolic, include_expected=include_expected,
                 rtol=rtol, atol=atol, variables=variables,
                 static_argnums=static_argnums, source=source,
                 expected_on_cpu=expected_on_cpu, record_names=record_names,
                 eval_mode=eval_mode, more_examples=more_examples)
  return write_bundle(out_dir, name, traced.text, traced.arrays)


# ---------------------------------------------------------------------------
# Script
# ---------------------------------------------------------------------------

_INPUT_SPEC = re.compile(r"(bool|[a-z]+[0-9]+)\[([0-9, ]*)\]")
_SHORT_TO_NUMPY = {short_dtype_name(n): n for n in _NUMPY_NATIVE}


def parse_input_spec(spec: str) -> tuple[str, tuple[int, ...]]:
  """'f32[4,3]' -> ('float32', (4, 3)); bf16 -> 'bfloat16'."""
  match = _INPUT_SPEC.fullmatch(spec.strip())
  if not match:
    raise ExportError(f"input spec {spec!r} is not like f32[4,3]")
  short, dims = match.groups()
  dtype = "bfloat16" if short == "bf16" else _SHORT_TO_NUMPY.get(short)
  if dtype is None:
    raise ExportError(f"input spec {spec!r}: unknown dtype {short}")
  shape = tuple(int(d) for d in dims.replace(" ", "").split(",") if d)
  return dtype, shape


def parse_symbolic_arg(text: str) -> tuple[str, list]:
  """'B=0:0,1:0' -> ('B', [(0, 0), (1, 0)]) (argument index:axis);
  'B=batch/input_ids:0' -> ('B', ['batch/input_ids:0']) (pytree path:axis)."""
  symbol, _, positions = text.partition("=")
  pairs: list = []
  for part in positions.split(",") if positions else []:
    where, sep, axis = part.strip().rpartition(":")
    if not sep or not where or not re.fullmatch(r"-?\d+", axis):
      pairs = []
      break
    pairs.append((int(where), int(axis)) if re.fullmatch(r"\d+", where)
                 else f"{where}:{axis}")
  if not pairs:
    raise ExportError(f"--symbolic {text!r} is not like B=0:0,1:0 or "
                      "B=batch/input_ids:0")
  return symbol.strip(), pairs


def main(argv: Sequence[str] | None = None) -> int:
  parser = argparse.ArgumentParser(
      description="Write a jaxpr bundle (NAME.jaxpr + NAME.npz) for jax2onnx.",
      epilog=f"Written against {WRITTEN_AGAINST}.")
  parser.add_argument("target", help="MODULE:ATTR, a function or module object "
                      "(MODULE importable from the current directory)")
  parser.add_argument("--name", required=True, help="bundle file stem")
  parser.add_argument("--out", default=".", help="output directory")
  parser.add_argument("--input", action="append", default=[],
                      help="example input, one per positional argument: "
                      "f32[4,3], i32[8], bf16[2,2] (seeded random values)")
  parser.add_argument("--symbolic", action="append", default=[],
                      help="B=ARG:AXIS[,...] or B=PATH:AXIS (PATH a pytree "
                      "path such as batch/ids) traces those dims as B")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--examples", type=int, default=1,
                      help="number of example input sets (seeds SEED, "
                      "SEED+1, ...), stored as input_i, input_i@1, ...")
  parser.add_argument("--rtol", type=float)
  parser.add_argument("--atol", type=float)
  parser.add_argument("--no_expected", action="store_true",
                      help="store no expected_i (the converter's reference "
                      "interpreter becomes the oracle)")
  args = parser.parse_args(argv)
  try:
    module_name, _, attr = args.target.partition(":")
    if not attr:
      raise ExportError(f"target {args.target!r} is not MODULE:ATTR")
    sys.path.insert(0, os.getcwd())
    _import_jax()
    try:
      target = importlib.import_module(module_name)
    except ImportError as e:
      raise ExportError(f"cannot import {module_name!r}: {e}") from None
    for part in attr.split("."):
      target = getattr(target, part)
    if args.examples < 1:
      raise ExportError(f"--examples {args.examples}: at least 1")
    specs = [parse_input_spec(spec) for spec in args.input]

    def random_inputs(seed: int) -> tuple:
      rng = np.random.default_rng(seed)
      inputs = []
      for dtype, shape in specs:
        if dtype == "bool":
          inputs.append(rng.integers(0, 2, shape).astype(bool))
        elif dtype.startswith(("int", "uint")):
          inputs.append(rng.integers(0, 10, shape).astype(dtype))
        else:
          import jax.numpy as jnp
          inputs.append(jnp.asarray(rng.standard_normal(shape), dtype=dtype))
      return tuple(inputs)

    symbolic = dict(parse_symbolic_arg(s) for s in args.symbolic)
    more = [random_inputs(args.seed + k) for k in range(1, args.examples)]
    paths = export(target, *random_inputs(args.seed), name=args.name,
                   out_dir=args.out, symbolic=symbolic,
                   include_expected=not args.no_expected, rtol=args.rtol,
                   atol=args.atol, more_examples=more)
  except ExportError as e:
    print(f"export_jaxpr: error: {e}", file=sys.stderr)
    return 1
  print("wrote " + " ".join(p for p in paths if p))
  return 0


if __name__ == "__main__":
  sys.exit(main())
