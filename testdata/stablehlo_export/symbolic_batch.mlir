// jax.export.export(jax.jit(f))(jax.ShapeDtypeStruct(
//     jax.export.symbolic_shape("b, 4"), jnp.float32)).mlir_module()
// for f(x) = (x * 2, jnp.sum(x, axis=0) / x.shape[0]), written in the form
// jax.export prints (jax/_src/export/_export.py _wrap_main_func: @main
// computes the dimension variable `b` from the argument shape, asserts
// b >= 1 and calls @_wrapped_jax_export_main with it).
#loc = loc(unknown)
#loc1 = loc("x")
module @jit_f attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<?x4xf32> loc("x")) -> (tensor<?x4xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x4xf32>) -> tensor<i32> loc(#loc3)
    %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64> loc(#loc3)
    %2 = stablehlo.convert %1 : tensor<i64> loc(#loc4)
    %c = stablehlo.constant dense<1> : tensor<i64> loc(#loc)
    %3 = stablehlo.compare  GE, %2, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc5)
    stablehlo.custom_call @shape_assertion(%3, %2) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'. Using the following polymorphic shapes specifications: args[0].shape = (b, 4). Obtained dimension variables: 'b' = {0} from specification 'b' for dimension args[0].shape[0] (= {0}), . Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> () loc(#loc6)
    %4:2 = call @_wrapped_jax_export_main(%2, %arg0) : (tensor<i64>, tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>) loc(#loc)
    return %4#0, %4#1 : tensor<?x4xf32>, tensor<4xf32> loc(#loc)
  } loc(#loc)
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i64> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<?x4xf32> loc("x")) -> (tensor<?x4xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32> loc(#loc)
    %0 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc7)
    %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32> loc(#loc7)
    %c = stablehlo.constant dense<4> : tensor<1xi32> loc(#loc7)
    %2 = stablehlo.concatenate %1, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32> loc(#loc7)
    %3 = stablehlo.dynamic_broadcast_in_dim %cst, %2, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32> loc(#loc7)
    %4 = stablehlo.multiply %arg1, %3 : tensor<?x4xf32> loc(#loc7)
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc)
    %5 = stablehlo.reduce(%arg1 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<4xf32> loc(#loc8)
    %6 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<f32> loc(#loc9)
    %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<4xf32> loc(#loc9)
    %8 = stablehlo.divide %5, %7 : tensor<4xf32> loc(#loc9)
    return %4, %8 : tensor<?x4xf32>, tensor<4xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc2 = loc("/tmp/f.py":3:0)
#loc3 = loc("/dimension_size[dimension=0]"(#loc2))
#loc4 = loc("/convert_element_type[new_dtype=int64 weak_type=False]"(#loc2))
#loc5 = loc("/ge"(#loc2))
#loc6 = loc("/shape_assertion[error_message=...]"(#loc2))
#loc7 = loc("jit(f)/mul"(#loc2))
#loc8 = loc("jit(f)/reduce_sum"(#loc2))
#loc9 = loc("jit(f)/div"(#loc2))
