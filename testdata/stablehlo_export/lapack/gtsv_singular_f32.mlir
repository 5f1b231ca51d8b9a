// lax.linalg.tridiagonal_solve on CPU (lapack_sgtsv_ffi) as jax.export prints
// it (the form of JAX's cpu_tridiagonal_solve_lapack_gtsv.py back-compat
// module), on a batch of two 2x2 systems; hand-derived expected values in
// gtsv_singular_f32.npz: batch 0 is diagonal, d = (2, 4), b = (2, 8), so
// x = (1, 2); batch 1 is [[1, 1], [1, 1]] (dl = (0, 1), d = (1, 1),
// du = (1, 0)) with b = (0, 1), singular: gtsv eliminates without a row
// interchange (|d(1)| >= |dl(2)|) to U(2, 2) = 0 and reports info = 2, and
// JAX's masking makes that batch NaN. (Thomas' x there is (-inf, inf), no
// NaN: only info makes it NaN.)
module @jit_tridiagonal_solve attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x2xf32> loc("dl"), %arg1: tensor<2x2xf32> loc("d"), %arg2: tensor<2x2xf32> loc("du"), %arg3: tensor<2x2x1xf32> loc("b")) -> (tensor<2x2x1xf32> {jax.result_info = ""}) {
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:5 = stablehlo.custom_call @lapack_sgtsv_ffi(%arg0, %arg1, %arg2, %arg3) {mhlo.backend_config = {}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 1, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [2], operand_index = 2, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [3], operand_index = 3, operand_tuple_indices = []>], result_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2x1xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2x1xf32>, tensor<2xi32>)
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %2 = stablehlo.compare  EQ, %0#4, %1,  SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<2xi1>) -> tensor<2x1x1xi1>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x2x1xf32>
    %5 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<2x1x1xi1>) -> tensor<2x2x1xi1>
    %6 = stablehlo.select %5, %0#3, %4 : tensor<2x2x1xi1>, tensor<2x2x1xf32>
    return %6 : tensor<2x2x1xf32>
  }
}
