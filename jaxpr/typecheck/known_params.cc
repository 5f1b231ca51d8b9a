// The known-params table (known_params.h says where its names come from).
#include "jaxpr/typecheck/known_params.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace jax2onnx::jaxpr::typecheck {
namespace {

struct Entry {
  const char* name;
  const char* keys;  // space-separated
};

// primitive -> every param name JAX binds or prints for it (0.4.30 ...
// main), plus `idx` which the parser gives the ref forms (`x <- r[i]`).
constexpr Entry kPrimitiveParams[] = {
    {"abs", ""},
    {"acos", ""},
    {"acosh", ""},
    {"add", ""},
    {"add_any", ""},
    {"addupdate", "idx tree"},
    {"all_gather", "all_gather_dimension axis_index_groups axis_name axis_size tiled"},
    {"all_gather_invariant", "all_gather_dimension axis_name axis_size tiled"},
    {"all_gather_reduced", "all_gather_dimension axis_name axis_size tiled"},
    {"all_to_all", "axis_index_groups axis_name concat_axis split_axis tiled"},
    {"and", ""},
    {"approx_top_k", "aggregate_to_topk is_max_k k recall_target reduction_dimension reduction_input_size_override"},
    {"argmax", "axes index_dtype"},
    {"argmin", "axes index_dtype"},
    {"array_ref", ""},
    {"asin", ""},
    {"asinh", ""},
    {"atan", ""},
    {"atan2", ""},
    {"atanh", ""},
    {"axis_index", "axis_name"},
    {"bessel_i0e", ""},
    {"bessel_i1e", ""},
    {"bitcast_convert_type", "new_dtype"},
    {"box_get", "avals"},
    {"box_set", "treedef"},
    {"broadcast_in_dim", "broadcast_dimensions shape sharding"},
    {"broadcast_to", "shape"},
    {"buffer_callback", "callback command_buffer_compatible has_side_effect in_tree input_output_aliases out_tree result_avals vmap_method"},
    {"call_exported", "exported"},
    {"call_hi_primitive", "_prim prim"},
    {"call_hi_primitive_linearized", "_prim has_sres nz_in_flat nz_out_flat prim residuals_tree"},
    {"cbrt", "accuracy"},
    {"ceil", ""},
    {"check", "debug err_tree"},
    {"checkpoint", "differentiated jaxpr policy prevent_cse"},
    {"cholesky", ""},
    {"cholesky_update", ""},
    {"clamp", ""},
    {"closed_call", "call_jaxpr subfuns"},
    {"clz", ""},
    {"complex", ""},
    {"composite", "attributes jaxpr name version"},
    {"compute_on", "compiler_options_json compute_type jaxpr out_memory_spaces"},
    {"concatenate", "dimension"},
    {"cond", "branches branches_platforms linear"},
    {"conj", "input_dtype"},
    {"conv_general_dilated", "batch_group_count dimension_numbers feature_group_count lhs_dilation out_sharding padding precision preferred_element_type rhs_dilation window_strides"},
    {"convert_element_type", "new_dtype sharding weak_type"},
    {"copy", ""},
    {"copy_p", ""},
    {"core_call", "call_jaxpr"},
    {"cos", "accuracy"},
    {"cosh", ""},
    {"create_linear", "memory_space ty"},
    {"cudnn_fusion", "jaxpr name"},
    {"cumlogsumexp", "axis reverse"},
    {"cummax", "axis reverse"},
    {"cummin", "axis reverse"},
    {"cumprod", "axis reverse"},
    {"cumsum", "axis reverse"},
    {"custom_dce_call", "dce_jaxpr_thunk fun_jaxpr num_consts"},
    {"custom_jvp_call", "call_jaxpr jvp jvp_jaxpr_fun jvp_jaxpr_thunk name num_consts subfuns symbolic_zeros"},
    {"custom_jvp_call_jaxpr", "fun_jaxpr jvp_jaxpr_thunk num_consts symbolic_zeros"},
    {"custom_lin", "bwd in_zeros num_res out_avals symbolic_zeros"},
    {"custom_linear_solve", "const_lengths jaxprs"},
    {"custom_partitioning", "call decode_shardings in_tree infer_sharding_from_operands out_tree partition propagate_user_sharding sharding_rule static_args"},
    {"custom_transpose_call", "lin_tree out_tree out_types res_tree transpose"},
    {"custom_vjp_call", "bwd call_jaxpr fwd fwd_jaxpr_thunk name num_consts out_trees subfuns symbolic_zeros"},
    {"custom_vjp_call_jaxpr", "bwd fun_jaxpr fwd_jaxpr_thunk num_consts out_trees symbolic_zeros"},
    {"custom_vmap", "call in_tree out_tree rule"},
    {"custom_vmap_call", "call in_tree out_tree rule"},
    {"dce_sink", "prevent_mlir_dce"},
    {"debug_callback", "callback effect partitioned"},
    {"debug_print", "fmt has_placeholders in_tree logging_record np_printoptions ordered partitioned static_args"},
    {"device_put", "copy_semantics device devices src srcs"},
    {"digamma", ""},
    {"dim_as_value", "dim"},
    {"dimension_size", "dimension"},
    {"div", ""},
    {"dll_constraint", "layout"},
    {"dot_general", "dimension_numbers out_sharding precision preferred_element_type"},
    {"dot_product_attention_bwd", "dropout_rate layout mask_type scale seed sliding_window_length variadic_args"},
    {"dot_product_attention_bwd_wrapper", "dropout_rate layout mask_type scale seed sliding_window_length variadic_args"},
    {"dot_product_attention_fp8_bwd", "layout scale use_causal_mask"},
    {"dot_product_attention_fp8_bwd_wrapper", "layout scale use_causal_mask"},
    {"dot_product_attention_fp8_fwd", "is_training layout scale use_causal_mask"},
    {"dot_product_attention_fp8_fwd_wrapper", "is_training layout scale use_causal_mask"},
    {"dot_product_attention_fwd", "dropout_rate is_training layout mask_type scale seed sliding_window_length variadic_args"},
    {"dot_product_attention_fwd_wrapper", "dropout_rate is_training layout mask_type scale seed sliding_window_length variadic_args"},
    {"dynamic_slice", "slice_sizes"},
    {"dynamic_update_slice", ""},
    {"eig", "compute_left_eigenvectors compute_right_eigenvectors enable_eigvec_derivs implementation use_magma"},
    {"eigh", "algorithm lower sort_eigenvalues subset_by_index"},
    {"eigh_jacobi", "lower sort_eigenvalues"},
    {"empty", "dtype out_sharding shape"},
    {"empty2", "dtype memory_space"},
    {"empty_ref", "memory_space pin ty"},
    {"eq", ""},
    {"erf", ""},
    {"erf_inv", ""},
    {"erfc", ""},
    {"eval_jaxpr", "call_jaxpr jaxpr"},
    {"exp", "accuracy"},
    {"exp2", "accuracy"},
    {"expand_dims", "dimensions"},
    {"expm1", "accuracy"},
    {"ffi_call", "attributes custom_call_api_version has_side_effect input_layouts input_output_aliases legacy_backend_config output_layouts result_avals target_name vectorized vmap_method"},
    {"fft", "fft_lengths fft_type"},
    {"fft_wrapper", "adjoint fft_type local_transpose"},
    {"floor", ""},
    {"for", "jaxpr nsteps reverse unroll which_linear"},
    {"free_ref", ""},
    {"freeze", ""},
    {"from_edtype", "dtype"},
    {"full_to_shard", "axes manual_axes mesh"},
    {"gather", "dimension_numbers fill_value indices_are_sorted mode slice_sizes unique_indices"},
    {"ge", ""},
    {"geqp3", "use_magma"},
    {"geqrf", ""},
    {"get", "idx tree"},
    {"gt", ""},
    {"hessenberg", ""},
    {"householder_product", ""},
    {"igamma", ""},
    {"igamma_grad_a", ""},
    {"igammac", ""},
    {"imag", ""},
    {"infeed", "partitions shapes"},
    {"inspect_sharding", "callback"},
    {"integer_pow", "y"},
    {"iota", "dimension dtype shape sharding"},
    {"iota_2x32_shape", "shape"},
    {"is_finite", ""},
    {"jit", "compiler_options_kvs ctx_mesh donated_invars in_layouts in_shardings inline jaxpr keep_unused name out_layouts out_shardings resource_env"},
    {"layout_constraint", "layout"},
    {"le", ""},
    {"lgamma", ""},
    {"linear_call", "callee num_callee_consts num_res num_transpose_consts transpose transpose_thunk"},
    {"log", "accuracy"},
    {"log1p", "accuracy"},
    {"log_extend", "treedef"},
    {"logistic", "accuracy"},
    {"lt", ""},
    {"lu", ""},
    {"lu_pivots_to_permutation", "permutation_size"},
    {"max", ""},
    {"mesh_cast", "dst_sharding"},
    {"min", ""},
    {"mul", "out_dtype"},
    {"mulhi", ""},
    {"mutable_array", "memory_space"},
    {"name", "name"},
    {"ne", ""},
    {"neg", ""},
    {"new_box", "treedef"},
    {"new_ref", "kind memory_space pin"},
    {"nextafter", ""},
    {"not", ""},
    {"optimization_barrier", ""},
    {"or", ""},
    {"ormqr", "left transpose"},
    {"outfeed", "partitions"},
    {"pad", "padding_config"},
    {"pbroadcast", "axes axis_index_groups axis_name source"},
    {"pdot", "axis_name pos_batch pos_contract precision"},
    {"pgather", "axes"},
    {"philox2x32", ""},
    {"philox4x32", ""},
    {"pin", "to"},
    {"pjit", "compiler_options_kvs ctx_mesh donated_invars in_layouts in_shardings inline jaxpr keep_unused name out_layouts out_shardings resource_env"},
    {"platform_index", "has_default platforms"},
    {"pmax", "axes axis_index_groups"},
    {"pmin", "axes axis_index_groups"},
    {"poc_concat", "axis"},
    {"polygamma", ""},
    {"population_count", ""},
    {"pow", ""},
    {"ppermute", "axis_name perm"},
    {"precv", "axis_name out_shape perm"},
    {"preduced", "axes"},
    {"psend", "axis_name perm"},
    {"psum", "axes axis_index_groups"},
    {"psum2", "axes axis_index_groups"},
    {"psum_invariant", "axes axis_index_groups"},
    {"pvary", "axes axis_index_groups"},
    {"qr", "full_matrices pivoting use_magma"},
    {"ragged_all_to_all", "axis_index_groups axis_name"},
    {"ragged_dot", "group_offset precision preferred_element_type"},
    {"ragged_dot_general", "group_offset out_sharding precision preferred_element_type ragged_dot_dimension_numbers"},
    {"random_bits", "bit_width shape"},
    {"random_clone", ""},
    {"random_fold_in", ""},
    {"random_gamma", "log_space"},
    {"random_gamma_grad", ""},
    {"random_seed", "impl"},
    {"random_split", "count shape"},
    {"random_unwrap", ""},
    {"random_wrap", "impl"},
    {"real", ""},
    {"reduce", "computation consts dimensions jaxpr"},
    {"reduce_and", "axes"},
    {"reduce_max", "axes out_sharding"},
    {"reduce_min", "axes out_sharding"},
    {"reduce_or", "axes"},
    {"reduce_precision", "exponent_bits mantissa_bits"},
    {"reduce_prod", "axes out_sharding"},
    {"reduce_scatter", "axis_index_groups axis_name axis_size scatter_dimension tiled"},
    {"reduce_sum", "axes out_sharding"},
    {"reduce_window", "base_dilation consts jaxpr padding window_dilation window_dimensions window_strides"},
    {"reduce_window_max", "base_dilation padding window_dilation window_dimensions window_strides"},
    {"reduce_window_min", "base_dilation padding window_dilation window_dimensions window_strides"},
    {"reduce_window_sum", "base_dilation padding window_dilation window_dimensions window_strides"},
    {"reduce_xor", "axes"},
    {"reduced_vary_cast_p", "axes"},
    {"ref", "kind memory_space pin"},
    {"regularized_incomplete_beta", ""},
    {"rem", ""},
    {"remat", "differentiated jaxpr policy prevent_cse"},
    {"remat2", "differentiated jaxpr policy prevent_cse"},
    {"remat_opt", "fun_jaxpr_thunk fwd_jaxpr num_consts num_res"},
    {"reshape", "dimensions new_sizes sharding"},
    {"reshard", "concrete_mesh dst_sharding"},
    {"rev", "dimensions"},
    {"rng_bit_generator", "algorithm dtype out_sharding shape"},
    {"rng_uniform", "shape"},
    {"round", "rounding_method"},
    {"rsqrt", "accuracy"},
    {"run_state", "is_initialized jaxpr which_linear"},
    {"scaled_dot", "dimension_numbers preferred_element_type"},
    {"scaled_matmul", "preferred_element_type"},
    {"scaled_matmul_wrapper", "preferred_element_type"},
    {"scan", "_split_transpose ft_in ft_out jaxpr length linear num_carry num_consts reverse unroll"},
    {"scatter", "dimension_numbers indices_are_sorted mode unique_indices update_consts update_jaxpr"},
    {"scatter-add", "dimension_numbers indices_are_sorted mode out_sharding unique_indices update_consts update_jaxpr"},
    {"scatter-max", "dimension_numbers indices_are_sorted mode unique_indices update_consts update_jaxpr"},
    {"scatter-min", "dimension_numbers indices_are_sorted mode unique_indices update_consts update_jaxpr"},
    {"scatter-mul", "dimension_numbers indices_are_sorted mode unique_indices update_consts update_jaxpr"},
    {"scatter-sub", "dimension_numbers indices_are_sorted mode unique_indices update_consts update_jaxpr"},
    // The underscore spellings the type checker and lowerings also accept.
    {"scatter_add", "dimension_numbers indices_are_sorted mode out_sharding unique_indices update_consts update_jaxpr"},
    {"scatter_max", "dimension_numbers indices_are_sorted mode out_sharding unique_indices update_consts update_jaxpr"},
    {"scatter_min", "dimension_numbers indices_are_sorted mode out_sharding unique_indices update_consts update_jaxpr"},
    {"scatter_mul", "dimension_numbers indices_are_sorted mode out_sharding unique_indices update_consts update_jaxpr"},
    {"scatter_sub", "dimension_numbers indices_are_sorted mode out_sharding unique_indices update_consts update_jaxpr"},
    {"schur", "compute_schur_vectors select_callable sort_eig_vals"},
    {"select_and_gather_add", "base_dilation padding select_prim window_dilation window_dimensions window_strides"},
    {"select_and_scatter", "padding scatter_consts scatter_jaxpr select_consts select_jaxpr window_dimensions window_strides"},
    {"select_and_scatter_add", "padding select_prim window_dimensions window_strides"},
    {"select_n", ""},
    {"shape_assertion", "error_message"},
    {"shard_alike", ""},
    {"shard_map", "auto check_rep check_vma debug_info in_names in_specs jaxpr manual_axes mesh newly_manual_axes out_names out_specs out_specs_thunk rewrite subfuns"},
    {"shard_to_full", "axes manual_axes mesh"},
    {"sharding_cast", "dst_sharding src_sharding"},
    {"sharding_constraint", "context_mesh layout resource_env sharding unconstrained_dims"},
    {"shift_left", ""},
    {"shift_right_arithmetic", ""},
    {"shift_right_logical", ""},
    {"sign", ""},
    {"sin", "accuracy"},
    {"sinh", ""},
    {"slice", "limit_indices start_indices strides"},
    {"sort", "dimension is_stable num_keys"},
    {"split", "axis sizes"},
    {"sqrt", "accuracy"},
    {"square", ""},
    {"squeeze", "dimensions"},
    {"stack", "axis"},
    {"stop_gradient", ""},
    {"sub", ""},
    {"svd", "algorithm compute_uv full_matrices subset_by_index"},
    {"swap", "idx tree"},
    {"symmetric_product", "alpha beta"},
    {"symmetric_update", "alpha beta"},
    {"tan", "accuracy"},
    {"tanh", "accuracy"},
    {"threefry2x32", ""},
    {"threefry4x32", ""},
    {"tie", ""},
    {"tile", "reps"},
    {"to_edtype", "edtype"},
    {"top_k", "axis is_stable k"},
    {"tpu_custom_call", "config has_side_effects input_output_aliases kernel_name metadata out_avals"},
    {"transpose", "permutation"},
    {"triangular_solve", "conjugate_a left_side lower transpose_a unit_diagonal"},
    {"tridiagonal", "lower"},
    {"tridiagonal_solve", "ldb m n perturb_singular t"},
    {"unreachable", "exc_type message out_avals"},
    {"unreduced_pmax", "axes"},
    {"unreduced_pmin", "axes"},
    {"unreduced_psum", "axes"},
    {"unreduced_reduce_scatter", "axis_name axis_size scatter_dimension tiled"},
    {"unstack", "axis"},
    {"vary_unreduced_cast_p", "axes"},
    {"vmap", "axis_data in_axes out_axes_thunk"},
    {"while", "body_jaxpr body_nconsts cond_jaxpr cond_nconsts"},
    {"xla_metadata_call", "ad_metadata jaxpr xla_metadata"},
    {"xla_metadata_value", "xla_metadata_kvs"},
    {"xor", ""},
    {"zeros_like", ""},
    {"zeta", ""},
};

// Structured values whose fields decide what the primitive computes. Fields
// from the NamedTuple / class definitions in jax/_src/lax at every release
// tag (the batching dims since 0.4.31).
constexpr Entry kStructuredFields[] = {
    {"GatherDimensionNumbers",
     "collapsed_slice_dims offset_dims operand_batching_dims start_index_map "
     "start_indices_batching_dims"},
    {"ScatterDimensionNumbers",
     "inserted_window_dims operand_batching_dims scatter_dims_to_operand_dims "
     "scatter_indices_batching_dims update_window_dims"},
    {"ConvDimensionNumbers", "lhs_spec out_spec rhs_spec"},
    {"RaggedDotDimensionNumbers",
     "dot_dimension_numbers lhs_ragged_dimensions rhs_group_dimensions"},
};

// Params that only place or lay out data; accepted on every primitive.
constexpr const char* kIrrelevantParams[] = {
    "sharding",     "out_sharding", "in_shardings", "out_shardings",
    "in_layouts",   "out_layouts",  "layout",       "ctx_mesh",
    "context_mesh", "resource_env", "memory_space", "compiler_options_kvs",
};

// Opaque calls into code the converter cannot see (kernels, host callbacks,
// the pre-shard_map pmap/xmap): their params are the callee's business and
// the converter refuses the primitive anyway.
constexpr const char* kUnchecked[] = {"callback",      "io_callback",
                                      "pallas_call",   "pure_callback",
                                      "xla_pmap",      "xmap"};

using Table = absl::flat_hash_map<std::string, std::vector<std::string>>;

Table Build(const Entry* begin, const Entry* end) {
  Table table;
  for (const Entry* e = begin; e != end; ++e) {
    std::vector<std::string> keys =
        absl::StrSplit(e->keys, ' ', absl::SkipEmpty());
    std::sort(keys.begin(), keys.end());
    table[e->name] = std::move(keys);
  }
  return table;
}

const Table& PrimitiveTable() {
  static const Table* table = new Table(
      Build(std::begin(kPrimitiveParams), std::end(kPrimitiveParams)));
  return *table;
}

const Table& FieldTable() {
  static const Table* table = new Table(
      Build(std::begin(kStructuredFields), std::end(kStructuredFields)));
  return *table;
}

bool Contains(const std::vector<std::string>& sorted, absl::string_view key) {
  return std::binary_search(sorted.begin(), sorted.end(), key);
}

std::string KnownList(const std::vector<std::string>& names) {
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

// The first structured field in `value` (searched depth first, not into
// jaxprs) that its callee does not know.
absl::Status CheckFields(const ParamValue& value, absl::string_view param) {
  switch (value.kind()) {
    case ParamValue::Kind::kCall: {
      const std::vector<std::string>* fields = KnownFields(value.text());
      for (const auto& [field, inner] : value.call_args()) {
        if (fields != nullptr && !field.empty() && !Contains(*fields, field)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "unknown field '", field, "' in ", value.text(), "(...) of param '",
              param, "' (known fields: ", KnownList(*fields), ")"));
        }
        if (absl::Status s = CheckFields(inner, param); !s.ok()) return s;
      }
      return absl::OkStatus();
    }
    case ParamValue::Kind::kTuple:
    case ParamValue::Kind::kList:
      for (const ParamValue& item : value.items()) {
        if (absl::Status s = CheckFields(item, param); !s.ok()) return s;
      }
      return absl::OkStatus();
    case ParamValue::Kind::kDict:
      for (const auto& [k, v] : value.dict_items()) {
        if (absl::Status s = CheckFields(v, param); !s.ok()) return s;
      }
      return absl::OkStatus();
    default:
      return absl::OkStatus();
  }
}

}  // namespace

const std::vector<std::string>* KnownParams(absl::string_view primitive) {
  auto it = PrimitiveTable().find(primitive);
  return it == PrimitiveTable().end() ? nullptr : &it->second;
}

const std::vector<std::string>* KnownFields(absl::string_view callee) {
  auto it = FieldTable().find(callee);
  return it == FieldTable().end() ? nullptr : &it->second;
}

bool IsIrrelevantParam(absl::string_view name) {
  for (const char* p : kIrrelevantParams) {
    if (name == p) return true;
  }
  return false;
}

absl::Status CheckKnownParams(const Eqn& eqn) {
  const std::vector<std::string>* known = KnownParams(eqn.primitive);
  for (const auto& [key, value] : eqn.params.entries()) {
    if (known != nullptr && !Contains(*known, key) && !IsIrrelevantParam(key)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown param '", key, "' (known params: ",
                       KnownList(*known), ")"));
    }
    if (absl::Status s = CheckFields(value, key); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::vector<std::string> UncheckedParamPrimitives() {
  return {std::begin(kUnchecked), std::end(kUnchecked)};
}

}  // namespace jax2onnx::jaxpr::typecheck
