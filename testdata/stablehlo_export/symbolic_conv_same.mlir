// jax.export of f(x, k) = lax.conv_general_dilated(x, k, (2, 2), 'SAME',
// dimension_numbers=('NHWC', 'HWIO', 'NHWC')) with x: f32[1, h, w, 3]
// (symbolic_shape("1, h, w, 3")) and k: f32[3, 3, 3, 4], written here in the
// form jax.export prints (not produced by JAX: no JAX on these machines).
// 'SAME' padding over a symbolic dim d is symbolic: lax.padtype_to_pads
// computes pad = (ceil(d/2) - 1) * 2 + 3 - d = -2*floordiv(-d, 2) - d + 1
// (JAX proves it >= 0, so no max), low = floordiv(pad, 2), high = pad - low,
// and _conv_general_dilated_lower emits stablehlo.dynamic_conv with that
// padding evaluated by mlir.eval_dynamic_shape: Python's divmod on the
// dimension values, i.e. calls of the jitted jnp.divmod, whose
// jnp.floor_divide and jnp.remainder are transcribed from
// jax/_src/numpy/ufuncs.py (jnp.where's jitted _where included). The
// result is f32[1, ceil(h/2), ceil(w/2), 4]. symbolic_conv_same.npz holds
// inputs at h = 7, w = 8 and the expected output of a numpy transcription
// of JAX's SAME convolution (scripts/conv_same_numpy.py), independent of
// the translation.
#loc = loc(unknown)
module @jit_f attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x?x?x3xf32> loc("x"), %arg1: tensor<3x3x3x4xf32> loc("k")) -> (tensor<1x?x?x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<1x?x?x3xf32>) -> tensor<i32> loc(#loc)
    %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64> loc(#loc)
    %2 = stablehlo.get_dimension_size %arg0, dim = 2 : (tensor<1x?x?x3xf32>) -> tensor<i32> loc(#loc)
    %3 = stablehlo.convert %2 : (tensor<i32>) -> tensor<i64> loc(#loc)
    %c = stablehlo.constant dense<1> : tensor<i64> loc(#loc)
    %4 = stablehlo.compare  GE, %1, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc)
    stablehlo.custom_call @shape_assertion(%4, %1) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'h'.", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> () loc(#loc)
    %5 = stablehlo.compare  GE, %3, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc)
    stablehlo.custom_call @shape_assertion(%5, %3) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'w'.", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> () loc(#loc)
    %6 = call @_wrapped_jax_export_main(%1, %3, %arg0, %arg1) : (tensor<i64>, tensor<i64>, tensor<1x?x?x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x?x?x4xf32> loc(#loc)
    return %6 : tensor<1x?x?x4xf32> loc(#loc)
  } loc(#loc)
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i64> {jax.global_constant = "h"} loc(unknown), %arg1: tensor<i64> {jax.global_constant = "w"} loc(unknown), %arg2: tensor<1x?x?x3xf32> loc("x"), %arg3: tensor<3x3x3x4xf32> loc("k")) -> (tensor<1x?x?x4xf32> {jax.result_info = "result"}) {
    %c_m1 = stablehlo.constant dense<-1> : tensor<i64> loc(#loc)
    %c_2 = stablehlo.constant dense<2> : tensor<i64> loc(#loc)
    %c_m2 = stablehlo.constant dense<-2> : tensor<i64> loc(#loc)
    %c_1 = stablehlo.constant dense<1> : tensor<i64> loc(#loc)
    %h_neg = stablehlo.multiply %arg0, %c_m1 : tensor<i64> loc(#loc)
    %h_q:2 = call @divmod(%h_neg, %c_2) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>) loc(#loc)
    %h_t1 = stablehlo.multiply %h_q#0, %c_m2 : tensor<i64> loc(#loc)
    %h_t2 = stablehlo.multiply %arg0, %c_m1 : tensor<i64> loc(#loc)
    %h_s = stablehlo.add %h_t1, %h_t2 : tensor<i64> loc(#loc)
    %h_e = stablehlo.add %h_s, %c_1 : tensor<i64> loc(#loc)
    %h_lo:2 = call @divmod(%h_e, %c_2) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>) loc(#loc)
    %h_hi = stablehlo.subtract %h_e, %h_lo#0 : tensor<i64> loc(#loc)
    %h_lo32 = stablehlo.convert %h_lo#0 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %h_lo1 = stablehlo.reshape %h_lo32 : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %h_hi32 = stablehlo.convert %h_hi : (tensor<i64>) -> tensor<i32> loc(#loc)
    %h_hi1 = stablehlo.reshape %h_hi32 : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %h_pair = stablehlo.concatenate %h_lo1, %h_hi1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32> loc(#loc)
    %h_row = stablehlo.reshape %h_pair : (tensor<2xi32>) -> tensor<1x2xi32> loc(#loc)
    %w_neg = stablehlo.multiply %arg1, %c_m1 : tensor<i64> loc(#loc)
    %w_q:2 = call @divmod(%w_neg, %c_2) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>) loc(#loc)
    %w_t1 = stablehlo.multiply %w_q#0, %c_m2 : tensor<i64> loc(#loc)
    %w_t2 = stablehlo.multiply %arg1, %c_m1 : tensor<i64> loc(#loc)
    %w_s = stablehlo.add %w_t1, %w_t2 : tensor<i64> loc(#loc)
    %w_e = stablehlo.add %w_s, %c_1 : tensor<i64> loc(#loc)
    %w_lo:2 = call @divmod(%w_e, %c_2) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>) loc(#loc)
    %w_hi = stablehlo.subtract %w_e, %w_lo#0 : tensor<i64> loc(#loc)
    %w_lo32 = stablehlo.convert %w_lo#0 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %w_lo1 = stablehlo.reshape %w_lo32 : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %w_hi32 = stablehlo.convert %w_hi : (tensor<i64>) -> tensor<i32> loc(#loc)
    %w_hi1 = stablehlo.reshape %w_hi32 : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %w_pair = stablehlo.concatenate %w_lo1, %w_hi1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32> loc(#loc)
    %w_row = stablehlo.reshape %w_pair : (tensor<2xi32>) -> tensor<1x2xi32> loc(#loc)
    %pad = stablehlo.concatenate %h_row, %w_row, dim = 0 : (tensor<1x2xi32>, tensor<1x2xi32>) -> tensor<2x2xi32> loc(#loc)
    %conv = "stablehlo.dynamic_conv"(%arg2, %arg3, %pad) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 2, 2>}> : (tensor<1x?x?x3xf32>, tensor<3x3x3x4xf32>, tensor<2x2xi32>) -> tensor<1x?x?x4xf32> loc(#loc)
    return %conv : tensor<1x?x?x4xf32> loc(#loc)
  } loc(#loc)
  func.func private @divmod(%arg0: tensor<i64> loc(unknown), %arg1: tensor<i64> loc(unknown)) -> (tensor<i64>, tensor<i64>) {
    %0 = call @floor_divide(%arg0, %arg1) : (tensor<i64>, tensor<i64>) -> tensor<i64> loc(#loc)
    %1 = call @remainder(%arg0, %arg1) : (tensor<i64>, tensor<i64>) -> tensor<i64> loc(#loc)
    return %0, %1 : tensor<i64>, tensor<i64> loc(#loc)
  } loc(#loc)
  func.func private @floor_divide(%arg0: tensor<i64> loc(unknown), %arg1: tensor<i64> loc(unknown)) -> tensor<i64> {
    %0 = stablehlo.divide %arg0, %arg1 : tensor<i64> loc(#loc)
    %1 = stablehlo.sign %arg0 : tensor<i64> loc(#loc)
    %2 = stablehlo.sign %arg1 : tensor<i64> loc(#loc)
    %3 = stablehlo.compare  NE, %1, %2,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc)
    %4 = stablehlo.remainder %arg0, %arg1 : tensor<i64> loc(#loc)
    %c = stablehlo.constant dense<0> : tensor<i64> loc(#loc)
    %5 = stablehlo.compare  NE, %4, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc)
    %6 = stablehlo.and %3, %5 : tensor<i1> loc(#loc)
    %c_0 = stablehlo.constant dense<1> : tensor<i64> loc(#loc)
    %7 = stablehlo.subtract %0, %c_0 : tensor<i64> loc(#loc)
    %8 = call @_where(%6, %7, %0) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64> loc(#loc)
    return %8 : tensor<i64> loc(#loc)
  } loc(#loc)
  func.func private @_where(%arg0: tensor<i1> loc(unknown), %arg1: tensor<i64> loc(unknown), %arg2: tensor<i64> loc(unknown)) -> tensor<i64> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i64> loc(#loc)
    return %0 : tensor<i64> loc(#loc)
  } loc(#loc)
  func.func private @remainder(%arg0: tensor<i64> loc(unknown), %arg1: tensor<i64> loc(unknown)) -> tensor<i64> {
    %c = stablehlo.constant dense<0> : tensor<i64> loc(#loc)
    %0 = stablehlo.compare  EQ, %arg1, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc)
    %c_0 = stablehlo.constant dense<1> : tensor<i64> loc(#loc)
    %1 = call @_where(%0, %c_0, %arg1) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64> loc(#loc)
    %2 = stablehlo.remainder %arg0, %1 : tensor<i64> loc(#loc)
    %3 = stablehlo.compare  NE, %2, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc)
    %4 = stablehlo.compare  LT, %2, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc)
    %5 = stablehlo.compare  LT, %1, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc)
    %6 = stablehlo.compare  NE, %4, %5,  UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1> loc(#loc)
    %7 = stablehlo.and %6, %3 : tensor<i1> loc(#loc)
    %8 = stablehlo.add %2, %1 : tensor<i64> loc(#loc)
    %9 = stablehlo.select %7, %8, %2 : tensor<i1>, tensor<i64> loc(#loc)
    return %9 : tensor<i64> loc(#loc)
  } loc(#loc)
} loc(#loc)
