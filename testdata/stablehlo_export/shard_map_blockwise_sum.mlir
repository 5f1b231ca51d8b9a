// jax.jit(shard_map(lambda x: jnp.sum(x, axis=0, keepdims=True) * 2,
//     mesh=Mesh(('a',), 2), in_specs=P('a', None), out_specs=P('a', None)))
// .lower(f32[4, 3]).as_text() under Shardy, in the form JAX prints
// (sdy.mesh, sdy.sharding_constraint, sdy.manual_computation; compare
// jax/_src/internal_test_util/export_back_compat_test_data/
// shardy_sharding_ops_with_different_meshes.py): each of the 2 devices sums
// its 2 rows, so the result holds the sums of rows 0-1 and 2-3.
#loc = loc(unknown)
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["a"=2]> loc(#loc)
  func.func public @main(%arg0: tensor<4x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>} loc("x")) -> (tensor<2x3xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"a"}, {}]> : tensor<4x3xf32> loc(#loc)
    %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<2x3xf32> loc("shard_map:"(#loc))) {
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc)
      %2 = stablehlo.reduce(%arg1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32> loc(#loc)
      %3 = stablehlo.broadcast_in_dim %2, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32> loc(#loc)
      %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32> loc(#loc)
      %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x3xf32> loc(#loc)
      %5 = stablehlo.multiply %3, %4 : tensor<1x3xf32> loc(#loc)
      sdy.return %5 : tensor<1x3xf32> loc(#loc)
    } : (tensor<4x3xf32>) -> tensor<2x3xf32> loc(#loc)
    return %1 : tensor<2x3xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
