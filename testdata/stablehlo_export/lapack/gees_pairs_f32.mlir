// lapack_sgees_ffi as jax.export prints it (the form of JAX's
// cpu_schur_lapack_gees.py back-compat module), returning every result of
// the custom_call, on a batch of two 3x3 matrices; hand-derived expected
// values in gees_pairs_f32.npz. Batch 0 is [[1, 0, 0], [0, 0, -2],
// [0, 2, 0]]: already upper Hessenberg, and dlahqr finds H(2, 1) = 0 at
// once, so the trailing 2x2 block [[0, -2], [2, 0]] splits off; dlanv2
// leaves it as it is (equal diagonal, b c = -4 < 0: a standard complex
// pair), so T = A, Z = I, wr = (1, 0, 0) and wi = (0, 2, -2) (dlanv2's
// rt1i = sqrt|b| sqrt|c| = 2, rt2i = -2). Batch 1 is diag(3, 1, 2):
// nothing to reduce, T = A, Z = I, wr = (3, 1, 2), wi = 0. sdim = 0 (no
// sorting) and info = 0 for both.
module @jit_func attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x3xf32> loc("input")) -> (tensor<2x3x3xf32> {jax.result_info = "[0]"}, tensor<2x3x3xf32> {jax.result_info = "[1]"}, tensor<2x3xf32> {jax.result_info = "[2]"}, tensor<2x3xf32> {jax.result_info = "[3]"}, tensor<2xi32> {jax.result_info = "[4]"}, tensor<2xi32> {jax.result_info = "[5]"}) {
    %0:6 = stablehlo.custom_call @lapack_sgees_ffi(%arg0) {mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xi32>, tensor<2xi32>)
    return %0#0, %0#1, %0#2, %0#3, %0#4, %0#5 : tensor<2x3x3xf32>, tensor<2x3x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xi32>, tensor<2xi32>
  }
}
