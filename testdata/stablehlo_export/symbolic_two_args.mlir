// jax.export of f(x, y) with x, y: f32[b, 4] (symbolic_shape("b, 4") for
// both), in the form jax.export prints: @main computes `b` from x, asserts
// b >= 1 and y.shape[0] == b, and passes b to @_wrapped_jax_export_main.
//   z = x + y
//   r = z.reshape(4 * b) + jnp.arange(4 * b, dtype=f32)  (dynamic_reshape,
//       dynamic_iota)
//   s = r[1:]                                       (real_dynamic_slice)
//   d = z.T @ x                                      (dot_general over b)
#loc = loc(unknown)
module @jit_f attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<?x4xf32> loc("x"), %arg1: tensor<?x4xf32> loc("y")) -> (tensor<?xf32> {jax.result_info = "result[0]"}, tensor<4x4xf32> {jax.result_info = "result[1]"}, tensor<4x?xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x4xf32>) -> tensor<i32> loc(#loc)
    %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64> loc(#loc)
    %2 = stablehlo.convert %1 : tensor<i64> loc(#loc)
    %c = stablehlo.constant dense<1> : tensor<i64> loc(#loc)
    %3 = stablehlo.compare  GE, %2, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc)
    stablehlo.custom_call @shape_assertion(%3, %2) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'.", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> () loc(#loc)
    %4 = stablehlo.get_dimension_size %arg1, dim = 0 : (tensor<?x4xf32>) -> tensor<i32> loc(#loc)
    %5 = stablehlo.convert %4 : (tensor<i32>) -> tensor<i64> loc(#loc)
    %6 = stablehlo.compare  EQ, %5, %2,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc)
    stablehlo.custom_call @shape_assertion(%6, %5, %2) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Found inconsistency between dimension size args[1].shape[0] (= {0}) and the specification 'b' (= {1}).", has_side_effect = true} : (tensor<i1>, tensor<i64>, tensor<i64>) -> () loc(#loc)
    %7:3 = call @_wrapped_jax_export_main(%2, %arg0, %arg1) : (tensor<i64>, tensor<?x4xf32>, tensor<?x4xf32>) -> (tensor<?xf32>, tensor<4x4xf32>, tensor<4x?xf32>) loc(#loc)
    return %7#0, %7#1, %7#2 : tensor<?xf32>, tensor<4x4xf32>, tensor<4x?xf32> loc(#loc)
  } loc(#loc)
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i64> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<?x4xf32> loc("x"), %arg2: tensor<?x4xf32> loc("y")) -> (tensor<?xf32> {jax.result_info = "result[0]"}, tensor<4x4xf32> {jax.result_info = "result[1]"}, tensor<4x?xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.add %arg1, %arg2 : tensor<?x4xf32> loc(#loc)
    %c = stablehlo.constant dense<4> : tensor<i64> loc(#loc)
    %1 = stablehlo.multiply %c, %arg0 : tensor<i64> loc(#loc)
    %2 = stablehlo.convert %1 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %3 = stablehlo.reshape %2 : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %4 = stablehlo.dynamic_reshape %0, %3 : (tensor<?x4xf32>, tensor<1xi32>) -> tensor<?xf32> loc(#loc)
    %5 = stablehlo.dynamic_iota %3, dim = 0 : (tensor<1xi32>) -> tensor<?xf32> loc(#loc)
    %6 = stablehlo.add %4, %5 : tensor<?xf32> loc(#loc)
    %c_0 = stablehlo.constant dense<1> : tensor<1xi32> loc(#loc)
    %c_1 = stablehlo.constant dense<1> : tensor<1xi32> loc(#loc)
    %7 = stablehlo.real_dynamic_slice %6, %c_0, %3, %c_1 : (tensor<?xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32> loc(#loc)
    %8 = stablehlo.dot_general %0, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<4x4xf32> loc(#loc)
    %9 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<?x4xf32>) -> tensor<4x?xf32> loc(#loc)
    return %7, %8, %9 : tensor<?xf32>, tensor<4x4xf32>, tensor<4x?xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
