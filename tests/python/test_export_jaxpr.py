"""Tests of tools/export_jaxpr.py without JAX.

The JAX-independent parts (npz layout, elided-literal order over nested and
shared jaxprs, header text, dtype mapping, symbolic specs) run on plain
objects with the attribute names JAX uses (`eqns`, `params`, `invars`,
`outvars`, `constvars`, `val`, `aval`). Round trips write bundles with the
exporter's writer from numpy arrays and jaxpr text written by hand the way
JAX 0.10 prints it, then run `jax2onnx eval --compare` (the reference
interpreter) and, where ONNX Runtime is installed, `jax2onnx check` on them:
that proves the C++ side reads the layout and the literal order. Expected
values are computed here with numpy from the same formulas.
"""

import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zipfile
from unittest import mock

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))

import export_jaxpr as ej  # noqa: E402

JAX2ONNX = os.environ.get("JAX2ONNX_BIN", "")


class Aval:

  def __init__(self, text):
    self.text = text

  def str_short(self, short_dtypes=True):
    return self.text


class Literal:

  def __init__(self, val, aval_text):
    self.val = val
    self.aval = Aval(aval_text)


class Var:

  def __init__(self, name):
    self.name = name


class Eqn:

  def __init__(self, primitive, params, invars):
    self.primitive = primitive
    self.params = params
    self.invars = invars


class Jaxpr:

  def __init__(self, eqns, outvars, invars=(), constvars=()):
    self.eqns = eqns
    self.outvars = outvars
    self.invars = list(invars)
    self.constvars = list(constvars)


class ClosedJaxpr:
  """Before JAX 0.11 params hold ClosedJaxprs; the printer prints .jaxpr."""

  def __init__(self, jaxpr):
    self.jaxpr = jaxpr
    self.consts = []


def as_jaxpr(value):
  if isinstance(value, Jaxpr):
    return value
  if isinstance(value, ClosedJaxpr):
    return value.jaxpr
  return None


def is_literal(atom):
  return isinstance(atom, Literal)


def f32(*values):
  return np.array(values, dtype=np.float32)


def walk(top, hoist_large=True):
  return ej.elided_literals(top, as_jaxpr, is_literal, hoist_large)


def ordering_bundle():
  """The structure and text of a jaxpr whose literal order matters.

  Six f32[3] elided literals L0..L5, placed so that each printing rule
  decides a position: L0 sits in a shared jaxpr `f` (used twice, printed
  first), L2/L3 in cond branches (params print before the cond's own
  operand L4), L5 in the output tuple.
  """
  L = [Literal(f32(2, 3, 4), "f32[3]"),  # L0 in f
       Literal(f32(0.5, 1, 1.5), "f32[3]"),  # L1 add operand
       Literal(f32(10, 20, 30), "f32[3]"),  # L2 branch 0
       Literal(f32(-1, 2, -3), "f32[3]"),  # L3 branch 1
       Literal(f32(0.25, 0.5, 0.75), "f32[3]"),  # L4 cond operand
       Literal(f32(7, 8, 9), "f32[3]")]  # L5 output
  a, c, d, e, g, h, m, n = (Var(x) for x in "acdeghmn")
  f = Jaxpr([Eqn("mul", {}, [a, L[0]])], [Var("b")], invars=[a])
  branch0 = ClosedJaxpr(Jaxpr([Eqn("sub", {}, [Var("i"), Var("j")]),
                               Eqn("mul", {}, [Var("k"), L[2]])], [Var("l")]))
  branch1 = ClosedJaxpr(Jaxpr([Eqn("add", {}, [Var("i"), Var("j")]),
                               Eqn("mul", {}, [Var("k"), L[3]])], [Var("l")]))
  top = Jaxpr(
      [Eqn("add", {}, [d, L[1]]),
       Eqn("jit", {"name": "f", "jaxpr": ClosedJaxpr(f)}, [e]),
       Eqn("cond", {"branches": (branch0, branch1)},
           [Literal(1, "i32[]"), g, L[4]]),
       Eqn("jit", {"name": "f", "jaxpr": ClosedJaxpr(f)}, [h]),
       Eqn("add", {}, [m, c])],
      [n, L[5]], invars=[d], constvars=[c])
  text = """\
let f = { lambda ; a:f32[3]. let b:f32[3] = mul a [...]:f32[3] in (b,) } in
{ lambda c:f32[3]; d:f32[3]. let
    e:f32[3] = add d [...]:f32[3]
    g:f32[3] = jit[name=f jaxpr=f] e
    h:f32[3] = cond[
      branches=(
        { lambda ; i:f32[3] j:f32[3]. let
            k:f32[3] = sub i j
            l:f32[3] = mul k [...]:f32[3]
          in (l,) }
        { lambda ; m:f32[3] n:f32[3]. let
            o:f32[3] = add m n
            p:f32[3] = mul o [...]:f32[3]
          in (p,) }
      )
    ] 1:i32[] g [...]:f32[3]
    q:f32[3] = jit[name=f jaxpr=f] h
    r:f32[3] = add q c
  in (r, [...]:f32[3]) }
"""
  return top, text, L


def run_cli(*args):
  return subprocess.run([JAX2ONNX, *args], capture_output=True, text=True,
                        timeout=300)


class LiteralOrderTest(unittest.TestCase):

  def test_shared_first_then_params_before_operands_then_outvars(self):
    top, text, L = ordering_bundle()
    found = walk(top)
    self.assertEqual([L.index(x) for x in found], [0, 1, 2, 3, 4, 5])
    ej.check_literal_order(text, [x.aval.str_short() for x in found])

  def test_scalars_are_printed_not_elided(self):
    top = Jaxpr([Eqn("mul", {}, [Var("a"), Literal(np.float32(2), "f32[]")])],
                [Literal(3, "i32[]")])
    self.assertEqual(walk(top), [])

  def test_a_jaxpr_used_once_is_printed_inline(self):
    inner_lit = Literal(f32(1, 2), "f32[2]")
    inner = Jaxpr([Eqn("neg", {}, [inner_lit])], [Var("b")])
    outer_lit = Literal(f32(3, 4), "f32[2]")
    top = Jaxpr([Eqn("add", {}, [Var("x"), outer_lit]),
                 Eqn("jit", {"name": "g", "jaxpr": inner}, [])],
                [Var("y")])
    self.assertEqual(ej.shared_jaxprs(top, as_jaxpr, True), [])
    self.assertEqual(walk(top), [outer_lit, inner_lit])

  def test_more_than_ten_equations_are_hoisted_since_0_10_2(self):
    big_lit = Literal(f32(1, 2), "f32[2]")
    big = Jaxpr([Eqn("neg", {}, [Var("a")]) for _ in range(10)] +
                [Eqn("add", {}, [Var("a"), big_lit])], [Var("b")])
    top_lit = Literal(f32(3, 4), "f32[2]")
    top = Jaxpr([Eqn("add", {}, [Var("x"), top_lit]),
                 Eqn("jit", {"name": "<lambda>", "jaxpr": ClosedJaxpr(big)},
                     [Var("x")])], [Var("y")])
    shared = ej.shared_jaxprs(top, as_jaxpr, hoist_large=True)
    self.assertEqual([name for name, _ in shared], ["lambda"])
    self.assertEqual(walk(top, hoist_large=True), [big_lit, top_lit])
    self.assertEqual(walk(top, hoist_large=False), [top_lit, big_lit])

  def test_shared_names_get_numeric_suffixes(self):
    f1 = Jaxpr([], [Var("a")])
    f2 = Jaxpr([], [Var("b")])
    top = Jaxpr([Eqn("jit", {"name": "f", "jaxpr": f1}, []),
                 Eqn("jit", {"name": "f", "jaxpr": f2}, []),
                 Eqn("jit", {"name": "f", "jaxpr": f1}, []),
                 Eqn("jit", {"name": "f", "jaxpr": f2}, []),
                 Eqn("scatter-add", {"update_jaxpr": f1}, [])], [])
    self.assertEqual([n for n, _ in ej.shared_jaxprs(top, as_jaxpr, True)],
                     ["f", "f1"])

  def test_params_print_sorted_by_key(self):
    body_lit = Literal(f32(1), "f32[1]")
    cond_lit = Literal(f32(2), "f32[1]")
    body = Jaxpr([Eqn("add", {}, [Var("a"), body_lit])], [Var("b")])
    cond = Jaxpr([Eqn("lt", {}, [Var("a"), cond_lit])], [Var("c")])
    # Dict order puts cond_jaxpr first; the printer sorts: body_jaxpr first.
    top = Jaxpr([Eqn("while", {"cond_jaxpr": ClosedJaxpr(cond),
                               "cond_nconsts": 0,
                               "body_jaxpr": ClosedJaxpr(body),
                               "body_nconsts": 0}, [Var("x")])], [Var("y")])
    self.assertEqual(walk(top), [body_lit, cond_lit])

  def test_a_mixed_tuple_param_is_refused(self):
    top = Jaxpr([Eqn("odd", {"p": (Jaxpr([], []), 3)}, [])], [])
    with self.assertRaisesRegex(ej.ExportError, "mixing jaxprs"):
      walk(top)

  def test_text_mismatch_is_an_error(self):
    _, text, _ = ordering_bundle()
    with self.assertRaisesRegex(ej.ExportError, "do not match the printed"):
      ej.check_literal_order(text, ["f32[3]"] * 5)
    with self.assertRaisesRegex(ej.ExportError, "do not match the printed"):
      ej.check_literal_order(text, ["f32[3]"] * 5 + ["f32[4]"])
    # A ref index `r[...]` is not a literal.
    ej.check_literal_order("x:f32[8] <- r[...]\n[...]:f32[2]", ["f32[2]"])


class HeaderTest(unittest.TestCase):

  def test_header_lines(self):
    self.assertEqual(
        ej.header_lines("tools/export_jaxpr.py from m.f (m.py:3)", "0.7.2",
                        1e-4, None, notes=["two\nlines"]),
        "# source: tools/export_jaxpr.py from m.f (m.py:3)\n"
        "# jax_version: 0.7.2\n"
        "# rtol: 0.0001\n"
        "# note: two lines\n")
    with self.assertRaises(ej.ExportError):
      ej.header_lines("s", "0.7.2", -1, None)

  def test_version_tuple(self):
    self.assertEqual(ej.version_tuple("0.10.2.dev20260101"), (0, 10, 2))
    self.assertGreaterEqual(ej.version_tuple("0.11.1"),
                            ej.HOIST_LARGE_JAXPRS_SINCE)
    self.assertLess(ej.version_tuple("0.10.1"), ej.HOIST_LARGE_JAXPRS_SINCE)


class DtypeAndLayoutTest(unittest.TestCase):

  def test_short_names(self):
    self.assertEqual(ej.short_dtype_name("float32"), "f32")
    self.assertEqual(ej.short_dtype_name("uint8"), "u8")
    self.assertEqual(ej.short_dtype_name("complex64"), "c64")
    self.assertEqual(ej.short_dtype_name("bool"), "bool")
    self.assertEqual(ej.short_dtype_name("bfloat16"), "bf16")

  def test_native_dtypes_pass_and_others_are_refused(self):
    for dtype in ("bool", "int8", "uint64", "float16", "float64", "complex128"):
      self.assertEqual(ej.to_npz_array(np.zeros(2, dtype), "x").dtype, dtype)
    with self.assertRaisesRegex(ej.ExportError, "input_0: dtype object"):
      ej.to_npz_array(np.array([None]), "input_0")
    with self.assertRaisesRegex(ej.ExportError, "dtype"):
      ej.to_npz_array(np.zeros(2, np.dtype("V4")), "x")

  def test_bf16_bits_are_stored_as_two_byte_voids(self):
    bits = np.array([0x3FC0, 0xC000], np.uint16)
    stored = ej.bf16_bits_to_npz(bits)
    self.assertEqual(stored.dtype, np.dtype("V2"))
    self.assertEqual(stored.tobytes(), bits.tobytes())
    self.assertIs(ej.to_npz_array(stored, "x").dtype, stored.dtype)

  def test_npz_layout_order_and_names(self):
    arrays = ej.bundle_arrays([f32(1)], [f32(2), f32(3)], [np.int32(4)],
                              [f32(5)])
    self.assertEqual(list(arrays), ["const_0", "literal_0", "literal_1",
                                    "input_0", "expected_0"])
    self.assertEqual(list(ej.bundle_arrays([], [], [f32(1)], None)),
                     ["input_0"])

  def test_npz_data_is_64_byte_aligned_and_np_load_reads_it(self):
    arrays = {"const_0": np.arange(33 * 17, dtype=np.float32).reshape(33, 17),
              "a_much_longer_entry_name": np.arange(5, dtype=np.float64),
              "input_0": np.array([True, False]),
              "input_1": np.int8(-3)}
    out = tempfile.mkdtemp()
    try:
      path = os.path.join(out, "a.npz")
      with open(path, "wb") as f:
        ej.write_aligned_npz(f, arrays)
      with np.load(path) as z:
        self.assertEqual(list(z.keys()), list(arrays))
        for name, value in arrays.items():
          np.testing.assert_array_equal(z[name], value)
          self.assertEqual(z[name].dtype, np.asarray(value).dtype)
      with open(path, "rb") as f:
        raw = f.read()
      with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
          # Local header (APPNOTE 4.3.7): name and extra lengths at 26/28.
          local = info.header_offset
          name_len, extra_len = struct.unpack_from("<HH", raw, local + 26)
          entry = local + 30 + name_len + extra_len
          self.assertEqual(raw[entry:entry + 6], b"\x93NUMPY")
          header_len = struct.unpack_from("<H", raw, entry + 8)[0]
          self.assertEqual((entry + 10 + header_len) % 64, 0, info.filename)
    finally:
      shutil.rmtree(out)

  def test_write_bundle_is_atomic_and_drops_a_stale_npz(self):
    out = tempfile.mkdtemp()
    try:
      jaxpr, npz = ej.write_bundle(out, "b", "{ lambda ; . let  in () }",
                                   {"input_0": f32(1, 2)})
      with np.load(npz) as z:
        self.assertEqual(list(z.keys()), ["input_0"])
      with open(jaxpr) as f:
        self.assertTrue(f.read().endswith("}\n"))
      _, npz = ej.write_bundle(out, "b", "{ lambda ; . let  in () }", {})
      self.assertIsNone(npz)
      self.assertEqual(sorted(os.listdir(out)), ["b.jaxpr"])
      with self.assertRaises(ej.ExportError):
        ej.write_bundle(out, "../x", "", {})
    finally:
      shutil.rmtree(out)


class SymbolicTest(unittest.TestCase):

  def test_one_symbol_over_two_arguments(self):
    self.assertEqual(
        ej.symbolic_specs({"B": [(0, 0), (1, -1)]}, [(4, 3), (2, 4), None]),
        ["B, 3", "2, B", None])

  def test_single_position_and_no_symbols(self):
    self.assertEqual(ej.symbolic_specs({"N": (0, 1)}, [(2, 5)]), ["2, N"])
    self.assertEqual(ej.symbolic_specs(None, [(2,)]), ["2"])

  def test_errors(self):
    cases = [({"2B": (0, 0)}, "not an identifier"),
             ({"B": (1, 0)}, "does not exist"),
             ({"B": (0, 2)}, "out of range"),
             ({"B": (0, 0), "C": (0, 0)}, "claimed by both"),
             ({"B": [(0, 0), (0, 1)]}, "example sizes differ"),
             ({"B": [0, 0]}, "not \\(arg_index, axis\\)"),
             ({"B": []}, "no \\(arg_index, axis\\)")]
    for symbolic, message in cases:
      with self.assertRaisesRegex(ej.ExportError, message, msg=symbolic):
        ej.symbolic_specs(symbolic, [(4, 3)])
    with self.assertRaisesRegex(ej.ExportError, "not an array"):
      ej.symbolic_specs({"B": (0, 0)}, [None])


class ScriptArgsTest(unittest.TestCase):

  def test_input_and_symbolic_specs(self):
    self.assertEqual(ej.parse_input_spec("f32[4,3]"), ("float32", (4, 3)))
    self.assertEqual(ej.parse_input_spec("bf16[]"), ("bfloat16", ()))
    self.assertEqual(ej.parse_input_spec("bool[2]"), ("bool", (2,)))
    with self.assertRaises(ej.ExportError):
      ej.parse_input_spec("f33[2]")
    self.assertEqual(ej.parse_symbolic_arg("B=0:0,1:0"),
                     ("B", [(0, 0), (1, 0)]))
    with self.assertRaises(ej.ExportError):
      ej.parse_symbolic_arg("B=0")


@unittest.skipUnless(JAX2ONNX and os.path.exists(JAX2ONNX),
                     "JAX2ONNX_BIN does not name the built jax2onnx CLI")
class RoundTripTest(unittest.TestCase):
  """Bundles written by the exporter's writer, read by the C++ side."""

  def setUp(self):
    self.out = tempfile.mkdtemp()

  def tearDown(self):
    shutil.rmtree(self.out)

  def write(self, name, text, consts, literals, inputs, expected):
    arrays = ej.bundle_arrays(consts, literals, inputs, expected)
    header = ej.header_lines("tests/python/test_export_jaxpr.py", "0.10.2",
                             None, None)
    path, _ = ej.write_bundle(self.out, name, header + text, arrays)
    return path

  def eval_and_check(self, path, run_ort=True):
    """The reference interpreter, then ONNX Runtime, against expected_i."""
    result = run_cli("eval", "--compare", path)
    self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
    self.assertIn("1 passed, 0 failed", result.stdout)
    if not run_ort:
      return
    check = run_cli("check", path)
    if check.returncode != 0 and "passed" not in check.stdout:
      # `check` prints "check: REASON" and nothing else when ONNX Runtime
      # (tools/ort/node_modules) is not installed.
      self.skipTest("ONNX Runtime unavailable: " + check.stderr.strip())
    self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
    self.assertIn("1 passed, 0 failed", check.stdout)

  def test_literal_order_reaches_the_right_slots(self):
    top, text, L = ordering_bundle()
    literals = [x.val for x in walk(top)]
    ej.check_literal_order(text, ["f32[3]"] * len(literals))
    c, d = f32(100, 200, 300), f32(1, -2, 3)
    v = [x.val for x in L]
    # The jaxpr by hand: e = d + L1; g = f(e) = e * L0; cond index 1 takes
    # branch 1: h = (g + L4) * L3; m = f(h) = h * L0; n = m + c.
    e = d + v[1]
    g = e * v[0]
    h = (g + v[4]) * v[3]
    n = h * v[0] + c
    path = self.write("order", text, [c], literals, [d], [n, v[5]])
    self.eval_and_check(path)
    # The same values in the wrong order are caught by the oracle.
    swapped = list(literals)
    swapped[2], swapped[3] = swapped[3], swapped[2]
    bad = self.write("order_bad", text, [c], swapped, [d], [n, v[5]])
    self.assertNotEqual(run_cli("eval", "--compare", bad).returncode, 0)

  def test_bf16_inputs_are_read_as_bf16(self):
    text = ("{ lambda ; a:bf16[4]. let\n"
            "    b:f32[4] = convert_element_type[new_dtype=float32 "
            "weak_type=False] a\n"
            "  in (b,) }\n")
    bits = np.array([0x3FC0, 0xC000, 0x4049, 0x0000], np.uint16)
    # bf16 is the top half of an f32: 1.5, -2.0, 3.140625, 0.0.
    expected = (bits.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(expected, f32(1.5, -2.0, 3.140625, 0.0))
    path = self.write("bf16", text, [], [], [ej.bf16_bits_to_npz(bits)],
                      [expected])
    # The reader only: onnxruntime-node cannot feed a bf16 graph input
    # ("Unsupported data type: 16"), so `check` is not run here.
    self.eval_and_check(path, run_ort=False)

  def test_symbolic_batch_binds_from_the_stored_input(self):
    text = ("{ lambda ; a:f32[B,3]. let b:f32[B,3] = mul a 2.0:f32[] "
            "in (b,) }\n")
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    path = self.write("batch", text, [], [], [x], [x * 2])
    self.eval_and_check(path)

  def test_a_missing_literal_is_a_clear_error(self):
    _, text, L = ordering_bundle()
    path = self.write("missing", text, [f32(1, 2, 3)],
                      [x.val for x in L[:5]], [f32(1, 2, 3)], None)
    result = run_cli("eval", path)
    self.assertNotEqual(result.returncode, 0)
    self.assertIn("missing literal_5", result.stdout + result.stderr)


if __name__ == "__main__":
  unittest.main()


class DictKey:

  def __init__(self, key):
    self.key = key


class SequenceKey:

  def __init__(self, idx):
    self.idx = idx


class GetAttrKey:

  def __init__(self, name):
    self.name = name


class StubJax:
  """The few public JAX names export() uses, over the plain fakes above.

  Not JAX: it runs export()'s glue (tracing arguments, symbolic specs, consts,
  literal walk and text check, inputs/expected, dtype casts, writing) so a
  bundle comes out that the C++ side then reads; the real JAX calls are
  exercised only where JAX is installed.
  """

  def __init__(self, closed, text, version="0.10.2"):
    import contextlib
    import types
    self.traced_with = None
    jax = types.ModuleType("jax")
    jax.__version__ = version

    def make_jaxpr(fn, static_argnums=(), return_shape=False):
      def trace(*args):
        self.traced_with = args
        self.traced_fn = fn
        return (closed, self.out_shape) if return_shape else closed
      return trace

    self.out_shape = None

    jax.make_jaxpr = make_jaxpr
    extend = types.ModuleType("jax.extend")
    core = types.ModuleType("jax.extend.core")
    core.Jaxpr, core.ClosedJaxpr, core.Literal = Jaxpr, ClosedJaxpr, Literal
    extend.core = core
    jax.extend = extend
    export = types.ModuleType("jax.export")
    export.SymbolicScope = object
    export.symbolic_shape = lambda spec, scope=None: tuple(
        int(d) if d.isdigit() else d for d in spec.split(", "))
    jax.export = export
    jax.ShapeDtypeStruct = lambda shape, dtype: ("sds", shape, str(dtype))

    def leaves(tree):
      if isinstance(tree, (list, tuple)):
        return [x for t in tree for x in leaves(t)]
      return [] if tree is None else [tree]

    def with_path(tree, path=()):
      if isinstance(tree, (list, tuple)):
        return [p for i, t in enumerate(tree)
                for p in with_path(t, path + (SequenceKey(i),))]
      if isinstance(tree, dict):
        return [p for k in sorted(tree)
                for p in with_path(tree[k], path + (DictKey(k),))]
      return [] if tree is None else [(path, tree)]

    def flatten(tree):
      return [leaf for _, leaf in with_path(tree)], tree

    def unflatten(treedef, new_leaves):
      it = iter(new_leaves)

      def rebuild(t):
        if isinstance(t, (list, tuple)):
          return type(t)(rebuild(x) for x in t)
        if isinstance(t, dict):
          return {k: rebuild(t[k]) for k in sorted(t)}
        return next(it)
      return rebuild(treedef)

    jax.tree_util = types.SimpleNamespace(
        tree_leaves=lambda t: [leaf for _, leaf in with_path(t)],
        tree_flatten_with_path=lambda t: (with_path(t), None),
        tree_flatten=flatten, tree_unflatten=unflatten)
    jax.dtypes = types.SimpleNamespace(prng_key="key",
                                       issubdtype=lambda d, k: d == k)
    jax.devices = lambda kind: ["cpu0"]
    jax.default_device = lambda d: contextlib.nullcontext()
    jax.device_put = lambda a, d: a
    jax.random = types.SimpleNamespace(key_data=lambda k: k.data)
    closed.pretty_print = lambda use_color=None: text
    self.modules = {"jax": jax, "jax.extend": extend,
                    "jax.extend.core": core, "jax.export": export}

  def __enter__(self):
    self.patch = mock.patch.dict(sys.modules, self.modules)
    self.patch.__enter__()
    return self

  def __exit__(self, *exc):
    return self.patch.__exit__(*exc)


@unittest.skipUnless(JAX2ONNX and os.path.exists(JAX2ONNX),
                     "JAX2ONNX_BIN does not name the built jax2onnx CLI")
class ExportGlueTest(unittest.TestCase):

  def test_export_writes_a_bundle_the_converter_checks(self):
    top, text, L = ordering_bundle()
    top.constvars[0].aval = Aval("f32[3]")
    closed = ClosedJaxpr(top)
    c = f32(100, 200, 300)
    closed.consts = [c]
    v = [x.val for x in L]

    def fn(x):  # the jaxpr's computation, in numpy (see the round trip)
      h = ((x + v[1]) * v[0] + v[4]) * v[3]
      return (h * v[0] + c, v[5])

    x = f32(1, -2, 3)
    out = tempfile.mkdtemp()
    try:
      with StubJax(closed, text) as stub:
        jaxpr_path, npz_path = ej.export(fn, x, name="glue", out_dir=out,
                                         symbolic={"N": (0, 0)}, rtol=1e-6,
                                         source="stub")
      self.assertEqual(stub.traced_with, (("sds", ("N",), "float32"),))
      with open(jaxpr_path) as f:
        written = f.read()
      self.assertTrue(written.startswith(
          "# source: stub\n# jax_version: 0.10.2\n# rtol: 1e-06\n"))
      self.assertTrue(written.endswith(text))
      with np.load(npz_path) as z:
        self.assertEqual(list(z.keys()), ["const_0"] +
                         [f"literal_{i}" for i in range(6)] +
                         ["input_0", "expected_0", "expected_1"])
        np.testing.assert_array_equal(z["literal_2"], v[2])
      result = run_cli("eval", "--compare", jaxpr_path)
      self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
    finally:
      shutil.rmtree(out)

  def test_export_refuses_a_text_that_disagrees_with_the_walk(self):
    top, text, _ = ordering_bundle()
    closed = ClosedJaxpr(top)
    closed.consts = [f32(1, 2, 3)]
    out = tempfile.mkdtemp()
    try:
      with StubJax(closed, text.replace("in (r, [...]:f32[3])", "in (r,)")):
        with self.assertRaisesRegex(ej.ExportError, "do not match"):
          ej.export(lambda x: x, f32(1, 2, 3), name="bad", out_dir=out)
      self.assertEqual(os.listdir(out), [])  # nothing written on failure
    finally:
      shutil.rmtree(out)
