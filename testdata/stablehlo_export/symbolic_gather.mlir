// jax.export of f(x, idx) = x[idx] ** 2 with x: f32[4, b]
// (symbolic_shape("4, b")) and idx: i32[3], in the form jax.export prints:
// @main computes `b` from x, asserts b >= 1 and passes it to
// @_wrapped_jax_export_main. jnp's take-style indexing normalizes negative
// indices and gathers rows of size (1, b): the slice sizes depend on `b`,
// so JAX emits stablehlo.dynamic_gather with slice_sizes concatenated from
// the constant 1 and b.
#loc = loc(unknown)
module @jit_f attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x?xf32> loc("x"), %arg1: tensor<3xi32> loc("idx")) -> (tensor<3x?xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<4x?xf32>) -> tensor<i32> loc(#loc)
    %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64> loc(#loc)
    %2 = stablehlo.convert %1 : tensor<i64> loc(#loc)
    %c = stablehlo.constant dense<1> : tensor<i64> loc(#loc)
    %3 = stablehlo.compare  GE, %2, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc)
    stablehlo.custom_call @shape_assertion(%3, %2) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'.", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> () loc(#loc)
    %4 = call @_wrapped_jax_export_main(%2, %arg0, %arg1) : (tensor<i64>, tensor<4x?xf32>, tensor<3xi32>) -> tensor<3x?xf32> loc(#loc)
    return %4 : tensor<3x?xf32> loc(#loc)
  } loc(#loc)
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i64> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<4x?xf32> loc("x"), %arg2: tensor<3xi32> loc("idx")) -> (tensor<3x?xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32> loc(#loc)
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<3xi32> loc(#loc)
    %1 = stablehlo.compare  LT, %arg2, %0,  SIGNED : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1> loc(#loc)
    %c_0 = stablehlo.constant dense<4> : tensor<i32> loc(#loc)
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<3xi32> loc(#loc)
    %3 = stablehlo.add %arg2, %2 : tensor<3xi32> loc(#loc)
    %4 = stablehlo.select %1, %3, %arg2 : tensor<3xi1>, tensor<3xi32> loc(#loc)
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<3xi32>) -> tensor<3x1xi32> loc(#loc)
    %6 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %7 = stablehlo.reshape %6 : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %c_1 = stablehlo.constant dense<1> : tensor<1xi32> loc(#loc)
    %8 = stablehlo.concatenate %c_1, %7, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32> loc(#loc)
    %9 = "stablehlo.dynamic_gather"(%arg1, %5, %8) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false}> : (tensor<4x?xf32>, tensor<3x1xi32>, tensor<2xi32>) -> tensor<3x?xf32> loc(#loc)
    %10 = stablehlo.multiply %9, %9 : tensor<3x?xf32> loc(#loc)
    return %10 : tensor<3x?xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
