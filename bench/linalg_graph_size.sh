#!/usr/bin/env bash
# Node counts of the Loop lowerings of the matrix factorizations and solves
# (plugin/linalg_plan.h, eig_plan.h, qr_plan.h) for n = 4, 64, 512 on both
# pipelines: the count is the same for every n (one Loop whose body works on
# whole matrices), so the graph is constant, not cubic, in the matrix size.
# The *_c64 rows are the complex lowerings (linalg_complex_plan.h,
# qr_complex_plan.h, eig_complex_plan.h) of the same programs on c64.
# Counts every node, including those inside Loop bodies (protoc decodes the
# model with libonnx-dev's onnx.proto).
#
#   bench/linalg_graph_size.sh [BUILD_DIR]
set -euo pipefail

build=${1:-build}
bin=$(cd "$build" && pwd)/bin/jax2onnx
proto_dir=/usr/include/onnx
work=$(mktemp -d "${TMPDIR:-/tmp}/j2o-linalg-XXXXXX")
trap 'rm -rf "$work"' EXIT

bundle() {  # name n
  local n=$2
  case $1 in
    qr_pivoting_c64)
      echo "{ lambda ; a:c64[$n,$n]. let b:c64[$n,$n] c:c64[$n,$n] d:i32[$n] = qr[full_matrices=False pivoting=True use_magma=None] a in (b, c, d) }" ;;
    svd_full_c64)
      local m=$((n + 3))
      echo "{ lambda ; a:c64[$m,$n]. let b:f32[$n] c:c64[$m,$m] d:c64[$n,$n] = svd[algorithm=None compute_uv=True full_matrices=True subset_by_index=None] a in (b, c, d) }" ;;
    *_c64)  # the f32 program on c64 (eigenvalues, singular values stay f32)
      bundle "${1%_c64}" "$n" | sed -e 's/:f32/:c64/g' \
        -e "s/c:c64\[$n\] = eigh/c:f32[$n] = eigh/" \
        -e "s/b:c64\[$n\] c:c64\[$n,$n\] d:c64\[$n,$n\] = svd/b:f32[$n] c:c64[$n,$n] d:c64[$n,$n] = svd/" ;;
    cholesky)
      echo "{ lambda ; a:f32[$n,$n]. let b:f32[$n,$n] = cholesky a in (b,) }" ;;
    triangular_solve)
      echo "{ lambda ; a:f32[$n,$n] b:f32[$n,4]. let c:f32[$n,4] = triangular_solve[conjugate_a=False left_side=True lower=True transpose_a=False unit_diagonal=False] a b in (c,) }" ;;
    lu)
      echo "{ lambda ; a:f32[$n,$n]. let b:f32[$n,$n] c:i32[$n] d:i32[$n] = lu a in (b, c, d) }" ;;
    qr)
      echo "{ lambda ; a:f32[$n,$n]. let b:f32[$n,$n] c:f32[$n,$n] = qr[full_matrices=False pivoting=False use_magma=None] a in (b, c) }" ;;
    qr_pivoting)
      echo "{ lambda ; a:f32[$n,$n]. let b:f32[$n,$n] c:f32[$n,$n] d:i32[$n] = qr[full_matrices=False pivoting=True use_magma=None] a in (b, c, d) }" ;;
    eigh)
      echo "{ lambda ; a:f32[$n,$n]. let b:f32[$n,$n] c:f32[$n] = eigh[algorithm=None lower=True sort_eigenvalues=True subset_by_index=None] a in (b, c) }" ;;
    svd)
      echo "{ lambda ; a:f32[$n,$n]. let b:f32[$n] c:f32[$n,$n] d:f32[$n,$n] = svd[algorithm=None compute_uv=True full_matrices=False subset_by_index=None] a in (b, c, d) }" ;;
    svd_full)  # tall (n+3) x n: U completed to (n+3) x (n+3)
      local m=$((n + 3))
      echo "{ lambda ; a:f32[$m,$n]. let b:f32[$n] c:f32[$m,$m] d:f32[$n,$n] = svd[algorithm=None compute_uv=True full_matrices=True subset_by_index=None] a in (b, c, d) }" ;;
    tridiagonal_solve)
      echo "{ lambda ; a:f32[$n] b:f32[$n] c:f32[$n] d:f32[$n,4]. let e:f32[$n,4] = tridiagonal_solve[perturb_singular=False] a b c d in (e,) }" ;;
  esac
}

printf '%-22s %-7s %6s %6s %6s\n' primitive pipeline n=4 n=64 n=512
for prim in cholesky triangular_solve lu qr qr_pivoting eigh svd svd_full \
    tridiagonal_solve cholesky_c64 triangular_solve_c64 lu_c64 qr_c64 qr_pivoting_c64 \
    eigh_c64 svd_c64 svd_full_c64 tridiagonal_solve_c64; do
  for pipeline in legacy ir; do
    flag=--use_onnx_ir=true
    [ "$pipeline" = legacy ] && flag=--use_onnx_ir=false
    counts=()
    for n in 4 64 512; do
      bundle "$prim" "$n" > "$work/$prim$n.jaxpr"
      "$bin" convert "$work/$prim$n.jaxpr" -o "$work/$prim$n.onnx" "$flag" -q
      counts+=("$(protoc --proto_path="$proto_dir" --decode=onnx.ModelProto \
        "$proto_dir/onnx.proto" < "$work/$prim$n.onnx" | grep -c 'op_type:')")
    done
    printf '%-22s %-7s %6s %6s %6s\n' "$prim" "$pipeline" "${counts[@]}"
  done
done
