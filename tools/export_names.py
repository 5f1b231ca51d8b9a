"""Names, pytree paths, symbolic positions by path and training-mode checks
for tools/export_jaxpr.py: plain functions without JAX (tested with
stand-ins in tests/python/test_export_names.py)."""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence


class ExportError(Exception):
  """The function or its arguments cannot be written as a bundle."""


# ---------------------------------------------------------------------------
# Names and pytree paths
# ---------------------------------------------------------------------------
#
# Every input leaf is named after its argument and its pytree path inside it
# (`x`, `batch/input_ids`, `params/layers/0/w`), every output leaf after its
# path in the result (`out` for a single array, `out_0`, `out_1` for a
# tuple, `logits` for a dict entry). The names go to the bundle as
# `# input_names:` / `# output_names:` header lines, which `jax2onnx convert`
# uses for the ONNX graph's inputs and outputs unless --input_names /
# --output_names override them.

_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_./:\-\[\]]")


def path_part(key: Any) -> str:
  """One jax.tree_util key entry as a name part: DictKey -> its key,
  GetAttrKey -> the attribute, SequenceKey -> the index, FlattenedIndexKey ->
  the index."""
  for attr in ("key", "name", "idx"):
    if hasattr(key, attr):
      return str(getattr(key, attr))
  return str(key)


def path_name(prefix: str, path: Sequence[Any]) -> str:
  """'batch' + (DictKey('input_ids'),) -> 'batch/input_ids'."""
  return "/".join([prefix] * bool(prefix) + [path_part(k) for k in path])


def output_name(path: Sequence[Any]) -> str:
  """A result leaf's name: 'out' (the result itself), 'out_1' (a top-level
  tuple/list item), else its path ('logits', 'aux/loss')."""
  if not path:
    return "out"
  if hasattr(path[0], "idx") and len(path) == 1:
    return f"out_{path[0].idx}"
  return path_name("", path) if not hasattr(path[0], "idx") else (
      f"out_{path[0].idx}/" + path_name("", path[1:]))


def unique_names(names: Sequence[str]) -> list[str]:
  """Header-safe (no commas, spaces or other characters outside
  [A-Za-z0-9_./:-[]], which become '_') and unique (a clash gets _1, _2)."""
  out: list[str] = []
  seen: set[str] = set()
  for name in names:
    base = _NAME_UNSAFE.sub("_", name) or "_"
    candidate, n = base, 0
    while candidate in seen:
      n += 1
      candidate = f"{base}_{n}"
    seen.add(candidate)
    out.append(candidate)
  return out


def argument_names(fn: Any, num_positional: int) -> list[str]:
  """The parameter names of fn's first num_positional positional arguments
  (arg0, arg1, ... where the signature does not say; *args items args_0...)."""
  names = [f"arg{i}" for i in range(num_positional)]
  try:
    import inspect
    params = list(inspect.signature(fn).parameters.values())
  except (TypeError, ValueError):
    return names
  i = 0
  for param in params:
    if i >= num_positional:
      break
    if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
      names[i] = param.name
      i += 1
    elif param.kind == param.VAR_POSITIONAL:
      for k in range(num_positional - i):
        names[i + k] = f"{param.name}_{k}"
      break
  return names


def names_header(input_names: Sequence[str],
                 output_names: Sequence[str]) -> str:
  """The `# input_names:` / `# output_names:` header lines."""
  lines = ""
  if input_names:
    lines += f"# input_names: {', '.join(input_names)}\n"
  if output_names:
    lines += f"# output_names: {', '.join(output_names)}\n"
  return lines


def resolve_symbolic(symbolic: Mapping[str, Any] | None,
                     leaf_names: Sequence[str],
                     arg_leaf: Mapping[int, int]) -> dict[str, list]:
  """`symbolic` with every position as (leaf_index, axis), for
  symbolic_specs over the input leaves.

  A position is "PATH:AXIS" with PATH a leaf name ("batch/input_ids:0",
  "x:-1"), or (arg_index, axis) for an argument that is an array itself.
  """
  by_name = {name: i for i, name in enumerate(leaf_names)}
  resolved: dict[str, list] = {}
  for symbol, positions in (symbolic or {}).items():
    if isinstance(positions, str) or (
        isinstance(positions, tuple) and len(positions) == 2 and
        all(isinstance(p, int) for p in positions)):
      positions = [positions]
    out = []
    for position in positions:
      if isinstance(position, str):
        path, sep, axis = position.rpartition(":")
        try:
          axis_index = int(axis)
        except ValueError:
          axis_index = None
        if not sep or axis_index is None:
          raise ExportError(f"symbol {symbol}: {position!r} is not PATH:AXIS "
                            "(e.g. 'batch/input_ids:0')")
        if path not in by_name:
          raise ExportError(
              f"symbol {symbol}: no input leaf named {path!r} (inputs: "
              f"{', '.join(leaf_names)})")
        out.append((by_name[path], axis_index))
      elif (isinstance(position, tuple) and len(position) == 2 and
            all(isinstance(p, int) for p in position)):
        arg, axis = position
        if arg not in arg_leaf:
          raise ExportError(
              f"symbol {symbol}: argument {arg} is not an array (name a "
              f"pytree leaf instead, e.g. {leaf_names[0] if leaf_names else 'x'}"
              ":0)")
        out.append((arg_leaf[arg], axis))
      else:
        raise ExportError(f"symbol {symbol}: position {position!r} is not "
                          "PATH:AXIS or (arg_index, axis)")
    resolved[symbol] = out
  return resolved


# ---------------------------------------------------------------------------
# Training mode
# ---------------------------------------------------------------------------

# Flax flags that make a layer behave as in training: (attribute, value in
# training, what it means).
_TRAINING_FLAGS = (
    ("deterministic", False, "dropout is active"),
    ("use_running_average", False, "batch statistics are used"),
    ("training", True, "training behaviour"),
)


def training_mode_layers(nodes: Iterable[tuple[str, Any]]) -> list[str]:
  """'PATH (TYPE): what' for each (path, layer) whose Flax flags say it runs
  in training mode (NNX Dropout with deterministic=False, BatchNorm with
  use_running_average=False)."""
  found = []
  for path, node in nodes:
    for attr, training_value, meaning in _TRAINING_FLAGS:
      if getattr(node, attr, None) is training_value:
        found.append(f"{path or '(root)'} ({type(node).__name__}): {meaning}")
  return found


def training_kwargs(kwargs: Mapping[str, Any]) -> list[str]:
  """Keyword arguments of a call that select training behaviour (Linen
  convention: train=True, training=True, deterministic=False)."""
  found = []
  for key, value in kwargs.items():
    if (key in ("train", "training") and value is True) or (
        key == "deterministic" and value is False):
      found.append(f"{key}={value}")
  return found


def warn_training_mode(found: Sequence[str]) -> None:
  if found:
    import warnings
    warnings.warn(
        "exporting in training mode: " + "; ".join(found) + ". The ONNX "
        "model computes what JAX computes, so it would do the same; for "
        "inference call model.eval() first (NNX), pass eval_mode=True, or "
        "call with train=False / deterministic=True (Linen).",
        stacklevel=3)
