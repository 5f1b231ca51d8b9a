// jax.export of a function calling lapack_sgesdd_ffi on x: f32[b, 4, 4]
// (symbolic_shape("b, ...")) on CPU, in the form jax.export prints: the
// prologue computing and asserting `b`, and the FFI call with its result
// shapes as extra operands (indices_of_shape_operands). It returns the
// call's results numbered [1, 4] as they are (the others are unique only up to sign).
#loc = loc(unknown)
module @jit_f attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<?x4x4xf32> loc("x")) -> (tensor<?x4xf32>, tensor<?xi32>) {
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x4x4xf32>) -> tensor<i32> loc(#loc)
    %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64> loc(#loc)
    %2 = stablehlo.convert %1 : tensor<i64> loc(#loc)
    %c = stablehlo.constant dense<1> : tensor<i64> loc(#loc)
    %3 = stablehlo.compare  GE, %2, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc)
    stablehlo.custom_call @shape_assertion(%3, %2) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'.", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> () loc(#loc)
    %4:2 = call @_wrapped_jax_export_main(%2, %arg0) : (tensor<i64>, tensor<?x4x4xf32>) -> (tensor<?x4xf32>, tensor<?xi32>) loc(#loc)
    return %4#0, %4#1 : tensor<?x4xf32>, tensor<?xi32> loc(#loc)
  } loc(#loc)
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i64> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<?x4x4xf32> loc("x")) -> (tensor<?x4xf32>, tensor<?xi32>) {
    %s0_b = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %s0_r = stablehlo.reshape %s0_b : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %c0_0 = stablehlo.constant dense<4> : tensor<1xi32> loc(#loc)
    %c0_1 = stablehlo.constant dense<4> : tensor<1xi32> loc(#loc)
    %s0 = stablehlo.concatenate %s0_r, %c0_0, %c0_1, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32> loc(#loc)
    %s1_b = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %s1_r = stablehlo.reshape %s1_b : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %c1_0 = stablehlo.constant dense<4> : tensor<1xi32> loc(#loc)
    %s1 = stablehlo.concatenate %s1_r, %c1_0, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32> loc(#loc)
    %s2_b = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %s2_r = stablehlo.reshape %s2_b : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %c2_0 = stablehlo.constant dense<4> : tensor<1xi32> loc(#loc)
    %c2_1 = stablehlo.constant dense<4> : tensor<1xi32> loc(#loc)
    %s2 = stablehlo.concatenate %s2_r, %c2_0, %c2_1, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32> loc(#loc)
    %s3_b = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %s3_r = stablehlo.reshape %s3_b : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %c3_0 = stablehlo.constant dense<4> : tensor<1xi32> loc(#loc)
    %c3_1 = stablehlo.constant dense<4> : tensor<1xi32> loc(#loc)
    %s3 = stablehlo.concatenate %s3_r, %c3_0, %c3_1, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32> loc(#loc)
    %s4_b = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc)
    %s4_r = stablehlo.reshape %s4_b : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %r:5 = stablehlo.custom_call @lapack_sgesdd_ffi(%arg1, %s0, %s1, %s2, %s3, %s4_r) {indices_of_shape_operands = dense<[1, 2, 3, 4, 5]> : tensor<5xi64>, mhlo.backend_config = {mode = 65 : ui8}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : (tensor<?x4x4xf32>, tensor<3xi32>, tensor<2xi32>, tensor<3xi32>, tensor<3xi32>, tensor<1xi32>) -> (tensor<?x4x4xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>, tensor<?x4x4xf32>, tensor<?xi32>) loc(#loc)
    return %r#1, %r#4 : tensor<?x4xf32>, tensor<?xi32> loc(#loc)
  } loc(#loc)
} loc(#loc)
