// lapack_zhetrd_ffi with uplo 'U' (lax.linalg.tridiagonal(a, lower=False)
// on CPU) in the form of JAX's cpu_tridiagonal_lapack_sytrd_hetrd.py
// back-compat module, returning every result of the custom_call, on a
// batch of two 4x4 c128 matrices. Expected values in hetrd_upper_c128.npz
// from scripts/hetrd_upper_numpy.py, a numpy transcription of LAPACK zhetd2
// 'U' (JAX's back-compat data has uplo 'L' only); info is 0.
module @jit_func attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xcomplex<f64>> loc("a")) -> (tensor<2x4x4xcomplex<f64>> {jax.result_info = "[0]"}, tensor<2x4xf64> {jax.result_info = "[1]"}, tensor<2x3xf64> {jax.result_info = "[2]"}, tensor<2x3xcomplex<f64>> {jax.result_info = "[3]"}, tensor<2xi32> {jax.result_info = "[4]"}) {
    %0:5 = stablehlo.custom_call @lapack_zhetrd_ffi(%arg0) {mhlo.backend_config = {uplo = 85 : ui8}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x4x4xcomplex<f64>>) -> (tensor<2x4x4xcomplex<f64>>, tensor<2x4xf64>, tensor<2x3xf64>, tensor<2x3xcomplex<f64>>, tensor<2xi32>)
    return %0#0, %0#1, %0#2, %0#3, %0#4 : tensor<2x4x4xcomplex<f64>>, tensor<2x4xf64>, tensor<2x3xf64>, tensor<2x3xcomplex<f64>>, tensor<2xi32>
  }
}
