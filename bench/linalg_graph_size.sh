#!/usr/bin/env bash
# Node counts of the Loop lowerings of the matrix factorizations and solves
# (plugin/linalg_plan.h) for n = 4, 64, 512 on both pipelines: the count is
# the same for every n (one Loop whose body works on whole matrices), so the
# graph is constant, not cubic, in the matrix size. Counts every node,
# including those inside the Loop body (protoc decodes the model with
# libonnx-dev's onnx.proto).
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
    cholesky)
      echo "{ lambda ; a:f32[$n,$n]. let b:f32[$n,$n] = cholesky a in (b,) }" ;;
    triangular_solve)
      echo "{ lambda ; a:f32[$n,$n] b:f32[$n,4]. let c:f32[$n,4] = triangular_solve[conjugate_a=False left_side=True lower=True transpose_a=False unit_diagonal=False] a b in (c,) }" ;;
    lu)
      echo "{ lambda ; a:f32[$n,$n]. let b:f32[$n,$n] c:i32[$n] d:i32[$n] = lu a in (b, c, d) }" ;;
  esac
}

printf '%-17s %-7s %6s %6s %6s\n' primitive pipeline n=4 n=64 n=512
for prim in cholesky triangular_solve lu; do
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
    printf '%-17s %-7s %6s %6s %6s\n' "$prim" "$pipeline" "${counts[@]}"
  done
done
