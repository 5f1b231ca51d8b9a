#!/usr/bin/env python3
"""Writes testdata/stablehlo_export/symbolic_{sytrd_f32,hetrd_upper_c64}.mlir
and symbolic_{potrf,getrf,syevd,gesdd,geev,gees}_f32.mlir.

jax.export of jax.lax.linalg.tridiagonal over a symbolic batch `b`, in the
form JAX prints it on CPU (no JAX here to print it): the public @main that
computes and asserts `b`, and @_wrapped_jax_export_main with the LAPACK FFI
call whose result shapes are extra operands (mlir.custom_call's
result_shapes, `indices_of_shape_operands`, each built as
mlir.shape_tensor builds it), then linalg's info check
(_replace_not_ok_with_nan) with dynamic broadcasts.

Usage: scripts/symbolic_tridiagonal_mlir.py testdata/stablehlo_export
"""
def prologue(operand, results, calls, message):
    """The module header and jax.export's public @main up to the wrapped
    function's signature: `b` from x's leading dim, asserted >= 1, passed to
    @_wrapped_jax_export_main. operand: x's type after `?x`; results: the
    result types as printed (with attributes); calls: (count, types)."""
    count, call_types = calls
    rets = ", ".join(f"%4#{k}" for k in range(count))
    return f'''#loc = loc(unknown)
module @jit_f attributes {{jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}} {{
  func.func public @main(%arg0: tensor<?x{operand}> loc("x")) -> ({results}) {{
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x{operand}>) -> tensor<i32> loc(#loc)
    %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64> loc(#loc)
    %2 = stablehlo.convert %1 : tensor<i64> loc(#loc)
    %c = stablehlo.constant dense<1> : tensor<i64> loc(#loc)
    %3 = stablehlo.compare  GE, %2, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc)
    stablehlo.custom_call @shape_assertion(%3, %2) {{api_version = 2 : i32, error_message = "{message}", has_side_effect = true}} : (tensor<i1>, tensor<i64>) -> () loc(#loc)
    %4:{count} = call @_wrapped_jax_export_main(%2, %arg0) : (tensor<i64>, tensor<?x{operand}>) -> ({call_types}) loc(#loc)
    return {rets} : {call_types} loc(#loc)
  }} loc(#loc)
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i64> {{jax.global_constant = "b"}} loc(unknown), %arg1: tensor<?x{operand}> loc("x")) -> ({results}) {{'''

def main(dt, ty, target, nan, rty, rnan, uplo):
    L = []
    a = L.append
    results = (f"tensor<?x4x4x{ty}>, tensor<?x4x{rty}>, tensor<?x3x{rty}>, "
               f"tensor<?x3x{ty}>")
    results_attr = ", ".join(
        f'{t} {{jax.result_info = "[{k}]"}}'
        for k, t in enumerate(results.split(", ")))
    message = ("Input shapes do not match the polymorphic shapes specification. "
               "Expected value >= 1 for dimension variable 'b'. Using the "
               "following polymorphic shapes specifications: args[0].shape = "
               "(b, 4, 4). Obtained dimension variables: 'b' = {0} from "
               "specification 'b' for dimension args[0].shape[0] (= {0}), . "
               "Please see https://docs.jax.dev/en/latest/export/"
               "shape_poly.html#shape-assertion-errors for more details.")
    a(f'''// jax.export of f(x) = jax.lax.linalg.tridiagonal(x, lower={'True' if uplo == 76 else 'False'}) with x: {dt}[b, 4, 4]
// (symbolic_shape("b, 4, 4")) on CPU, in the form jax.export prints: the
// LAPACK FFI call gets its result shapes as extra operands
// (indices_of_shape_operands), built from `b` as mlir.shape_tensor builds
// them, and the info check broadcasts dynamically (dynamic_broadcast_in_dim).
{prologue('4x4x' + ty, results_attr, (4, results), message)}
    %0 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %c = stablehlo.constant dense<4> : tensor<1xi32> loc(#loc)
    %c_0 = stablehlo.constant dense<4> : tensor<1xi32> loc(#loc)
    %2 = stablehlo.concatenate %1, %c, %c_0, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32> loc(#loc)
    %3 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %4 = stablehlo.reshape %3 : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %c_1 = stablehlo.constant dense<4> : tensor<1xi32> loc(#loc)
    %5 = stablehlo.concatenate %4, %c_1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32> loc(#loc)
    %6 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %7 = stablehlo.reshape %6 : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %c_2 = stablehlo.constant dense<3> : tensor<1xi32> loc(#loc)
    %8 = stablehlo.concatenate %7, %c_2, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32> loc(#loc)
    %9 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %10 = stablehlo.reshape %9 : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %c_3 = stablehlo.constant dense<3> : tensor<1xi32> loc(#loc)
    %11 = stablehlo.concatenate %10, %c_3, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32> loc(#loc)
    %12 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %13 = stablehlo.reshape %12 : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %14:5 = stablehlo.custom_call @{target}(%arg1, %2, %5, %8, %11, %13) {{indices_of_shape_operands = dense<[1, 2, 3, 4, 5]> : tensor<5xi64>, mhlo.backend_config = {{uplo = {uplo} : ui8}}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>]}} : (tensor<?x4x4x{ty}>, tensor<3xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<1xi32>) -> (tensor<?x4x4x{ty}>, tensor<?x4x{rty}>, tensor<?x3x{rty}>, tensor<?x3x{ty}>, tensor<?xi32>) loc(#loc)
    %c_4 = stablehlo.constant dense<0> : tensor<i32> loc(#loc)
    %15 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %16 = stablehlo.reshape %15 : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %17 = stablehlo.dynamic_broadcast_in_dim %c_4, %16, dims = [] : (tensor<i32>, tensor<1xi32>) -> tensor<?xi32> loc(#loc)
    %18 = stablehlo.compare  EQ, %14#4, %17,  SIGNED : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi1> loc(#loc)''')
    n = 19
    outs = []
    for k, tail in enumerate(["4x4", "4", "3", "3"]):
        oty, onan = (rty, rnan) if k in (1, 2) else (ty, nan)
        dims = tail.split("x")
        ones = len(dims)
        conv, resh, ones_shape, bshape, full_shape, nanb, sel = [f"%{n+i}" for i in range(7)]
        n += 7
        a(f'''    {conv} = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc)
    {resh} = stablehlo.reshape {conv} : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %c_one_{k} = stablehlo.constant dense<1> : tensor<1xi32> loc(#loc)''')
        a(f'''    {ones_shape} = stablehlo.concatenate {resh}, {", ".join([f"%c_one_{k}"] * ones)}, dim = 0 : ({", ".join(["tensor<1xi32>"] * (ones + 1))}) -> tensor<{ones + 1}xi32> loc(#loc)
    {bshape} = stablehlo.dynamic_broadcast_in_dim %18, {ones_shape}, dims = [0] : (tensor<?xi1>, tensor<{ones + 1}xi32>) -> tensor<?x{"x".join(["1"] * ones)}xi1> loc(#loc)''')
        dim_consts = []
        for j, d in enumerate(dims):
            a(f'''    %c_d{k}_{j} = stablehlo.constant dense<{d}> : tensor<1xi32> loc(#loc)''')
            dim_consts.append(f"%c_d{k}_{j}")
        a(f'''    {full_shape} = stablehlo.concatenate {resh}, {", ".join(dim_consts)}, dim = 0 : ({", ".join(["tensor<1xi32>"] * (ones + 1))}) -> tensor<{ones + 1}xi32> loc(#loc)
    %sel_pred_{k} = stablehlo.dynamic_broadcast_in_dim {bshape}, {full_shape}, dims = [{", ".join(str(i) for i in range(ones + 1))}] : (tensor<?x{"x".join(["1"] * ones)}xi1>, tensor<{ones + 1}xi32>) -> tensor<?x{tail}xi1> loc(#loc)
    %cst_{k} = stablehlo.constant dense<{onan}> : tensor<{oty}> loc(#loc)
    {nanb} = stablehlo.dynamic_broadcast_in_dim %cst_{k}, {full_shape}, dims = [] : (tensor<{oty}>, tensor<{ones + 1}xi32>) -> tensor<?x{tail}x{oty}> loc(#loc)
    {sel} = stablehlo.select %sel_pred_{k}, %14#{k}, {nanb} : tensor<?x{tail}xi1>, tensor<?x{tail}x{oty}> loc(#loc)''')
        outs.append((sel, f"tensor<?x{tail}x{oty}>"))
    a(f'''    return {", ".join(o for o, _ in outs)} : {", ".join(t for _, t in outs)} loc(#loc)
  }} loc(#loc)
}} loc(#loc)''')
    return "\n".join(L) + "\n"

import sys
open(sys.argv[1] + "/symbolic_sytrd_f32.mlir", "w").write(
    main("f32", "f32", "lapack_ssytrd_ffi", "0x7FC00000", "f32", "0x7FC00000", 76))
open(sys.argv[1] + "/symbolic_hetrd_upper_c64.mlir", "w").write(
    main("complex64", "complex<f32>", "lapack_chetrd_ffi",
         "(0x7FC00000,0x7FC00000)", "f32", "0x7FC00000", 85))


# The other LAPACK FFI targets over a symbolic batch, same prologue; the
# module returns the custom_call's results as they are (JAX's info checks
# and masks after the call are ordinary ops, covered by the modules above).
def raw(target, config, results, keep=None, operand="4x4xf32"):
    """results: (tail, elem) per result, the batch `?` prepended; keep: the
    results returned (all by default)."""
    keep = list(range(len(results))) if keep is None else keep
    ctypes = [f"tensor<?{'x' + t if t else ''}x{e}>" for t, e in results]
    rtypes = ", ".join(ctypes[k] for k in keep)
    shapes, ops, types = [], [], []
    n = 0
    for k, (tail, _) in enumerate(results):
        dims = [d for d in tail.split("x") if d]
        shapes.append(f"    %s{k}_b = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc)")
        shapes.append(f"    %s{k}_r = stablehlo.reshape %s{k}_b : (tensor<i32>) -> tensor<1xi32> loc(#loc)")
        parts = [f"%s{k}_r"]
        for j, d in enumerate(dims):
            shapes.append(f"    %c{k}_{j} = stablehlo.constant dense<{d}> : tensor<1xi32> loc(#loc)")
            parts.append(f"%c{k}_{j}")
        if dims:
            shapes.append(f"    %s{k} = stablehlo.concatenate {', '.join(parts)}, dim = 0 : ({', '.join(['tensor<1xi32>'] * len(parts))}) -> tensor<{len(parts)}xi32> loc(#loc)")
            ops.append(f"%s{k}")
        else:
            ops.append(f"%s{k}_r")
        types.append(f"tensor<{len(parts)}xi32>")
    nres = len(results)
    idx = ", ".join(str(i + 1) for i in range(nres))
    layouts = ", ".join(["dense<[1, 2, 0]> : tensor<3xindex>"] + ["dense<0> : tensor<1xindex>"] * nres)
    rets = ", ".join(f"%r#{k}" for k in keep)
    return f'''// jax.export of a function calling {target} on x: f32[b, {operand.split('x')[0]}, {operand.split('x')[1]}]
// (symbolic_shape("b, ...")) on CPU, in the form jax.export prints: the
// prologue computing and asserting `b`, and the FFI call with its result
// shapes as extra operands (indices_of_shape_operands). It returns the
// call's results {'as they are' if len(keep) == len(results) else 'numbered ' + str(keep) + ' as they are (the others are unique only up to sign)'}.
{prologue(operand, rtypes, (len(keep), rtypes), "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'.")}
{chr(10).join(shapes)}
    %r:{nres} = stablehlo.custom_call @{target}(%arg1, {', '.join(ops)}) {{indices_of_shape_operands = dense<[{idx}]> : tensor<{nres}xi64>, mhlo.backend_config = {{{config}}}, operand_layouts = [{layouts}]}} : (tensor<?x{operand}>, {', '.join(types)}) -> ({', '.join(ctypes)}) loc(#loc)
    return {rets} : {rtypes} loc(#loc)
  }} loc(#loc)
}} loc(#loc)
'''


RAW = {
    "potrf_f32": ("lapack_spotrf_ffi", "uplo = 76 : ui8", [("4x4", "f32"), ("", "i32")]),
    "getrf_f32": ("lapack_sgetrf_ffi", "", [("4x4", "f32"), ("4", "i32"), ("", "i32")]),
    "syevd_f32": ("lapack_ssyevd_ffi", "mode = 86 : ui8, uplo = 76 : ui8",
                  [("4x4", "f32"), ("4", "f32"), ("", "i32")], [1, 2]),
    "gesdd_f32": ("lapack_sgesdd_ffi", "mode = 65 : ui8",
                  [("4x4", "f32"), ("4", "f32"), ("4x4", "f32"), ("4x4", "f32"), ("", "i32")],
                  [1, 4]),
    "geev_f32": ("lapack_sgeev_ffi", "compute_left = 78 : ui8, compute_right = 86 : ui8",
                 [("4", "f32"), ("4", "f32"), ("4x4", "complex<f32>"), ("4x4", "complex<f32>"), ("", "i32")]),
    "gees_f32": ("lapack_sgees_ffi", "mode = 86 : ui8, sort = 78 : ui8",
                 [("4x4", "f32"), ("4x4", "f32"), ("4", "f32"), ("4", "f32"), ("", "i32"), ("", "i32")]),
}
for name, spec in RAW.items():
    open(f"{sys.argv[1]}/symbolic_{name}.mlir", "w").write(raw(*spec))
