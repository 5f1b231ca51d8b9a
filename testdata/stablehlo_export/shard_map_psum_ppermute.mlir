// jax.jit(shard_map(f, mesh=Mesh(('a',), 4), in_specs=P('a', None),
//     out_specs=(P(), P('a', None))))(x: f32[8, 3]) under Shardy, with
//   f(x) = (lax.psum(x.sum(0, keepdims=True), 'a'),
//           lax.ppermute(x, 'a', perm=[(0, 1), (1, 2), (2, 3), (3, 0)]))
// in the form JAX prints (sdy.manual_computation whose body holds the
// collectives with device-numbered replica groups / pairs, as in
// jax/_src/internal_test_util/export_back_compat_test_data/
// shardy_sharding_ops_with_different_meshes.py).
#loc = loc(unknown)
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["a"=4]> loc(#loc)
  func.func public @main(%arg0: tensor<8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>} loc("x")) -> (tensor<1x3xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, tensor<8x3xf32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) {
    %0:2 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{}, {}]>, <@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<2x3xf32> loc("shard_map:"(#loc))) {
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc)
      %1 = stablehlo.reduce(%arg1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32> loc(#loc)
      %2 = stablehlo.broadcast_in_dim %1, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32> loc(#loc)
      %3 = "stablehlo.all_reduce"(%2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32> loc(unknown), %arg3: tensor<f32> loc(unknown)):
        %5 = stablehlo.add %arg2, %arg3 : tensor<f32> loc(#loc)
        stablehlo.return %5 : tensor<f32> loc(#loc)
      }) : (tensor<1x3xf32>) -> tensor<1x3xf32> loc(#loc)
      %4 = "stablehlo.collective_permute"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>}> : (tensor<2x3xf32>) -> tensor<2x3xf32> loc(#loc)
      sdy.return %3, %4 : tensor<1x3xf32>, tensor<2x3xf32> loc(#loc)
    } : (tensor<8x3xf32>) -> (tensor<1x3xf32>, tensor<8x3xf32>) loc(#loc)
    return %0#0, %0#1 : tensor<1x3xf32>, tensor<8x3xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
