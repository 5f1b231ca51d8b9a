// jax.export of f(x) = y + y for y = jnp.pad(x, ((1, 0), (0, 2 * x.shape[1] + 1)))
// with x: f32[4, b] (symbolic_shape("4, b")), in the form jax.export prints:
// @main computes `b` from x, asserts b >= 1 and passes it to
// @_wrapped_jax_export_main. The high padding of axis 1 is the expression
// 2*b + 1, which JAX evaluates term by term (shape_poly._DimExpr._evaluate:
// b * 2, then + 1) before stablehlo.dynamic_pad; the result is f32[5, 3*b + 1].
#loc = loc(unknown)
module @jit_f attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x?xf32> loc("x")) -> (tensor<5x?xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<4x?xf32>) -> tensor<i32> loc(#loc)
    %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64> loc(#loc)
    %2 = stablehlo.convert %1 : tensor<i64> loc(#loc)
    %c = stablehlo.constant dense<1> : tensor<i64> loc(#loc)
    %3 = stablehlo.compare  GE, %2, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc)
    stablehlo.custom_call @shape_assertion(%3, %2) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'.", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> () loc(#loc)
    %4 = call @_wrapped_jax_export_main(%2, %arg0) : (tensor<i64>, tensor<4x?xf32>) -> tensor<5x?xf32> loc(#loc)
    return %4 : tensor<5x?xf32> loc(#loc)
  } loc(#loc)
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i64> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<4x?xf32> loc("x")) -> (tensor<5x?xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc)
    %c = stablehlo.constant dense<[1, 0]> : tensor<2xi32> loc(#loc)
    %c_0 = stablehlo.constant dense<2> : tensor<i64> loc(#loc)
    %0 = stablehlo.multiply %arg0, %c_0 : tensor<i64> loc(#loc)
    %c_1 = stablehlo.constant dense<1> : tensor<i64> loc(#loc)
    %1 = stablehlo.add %0, %c_1 : tensor<i64> loc(#loc)
    %2 = stablehlo.convert %1 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %3 = stablehlo.reshape %2 : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %c_2 = stablehlo.constant dense<0> : tensor<1xi32> loc(#loc)
    %4 = stablehlo.concatenate %c_2, %3, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32> loc(#loc)
    %c_3 = stablehlo.constant dense<0> : tensor<2xi32> loc(#loc)
    %5 = stablehlo.dynamic_pad %arg1, %cst, %c, %4, %c_3 : (tensor<4x?xf32>, tensor<f32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<5x?xf32> loc(#loc)
    %6 = stablehlo.add %5, %5 : tensor<5x?xf32> loc(#loc)
    return %6 : tensor<5x?xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
