#!/usr/bin/env bash
# The main job on a bundled example: builds (installing what is missing),
# then parses the example bundle and prints it back in canonical form.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh jax2onnx
example=testdata/examples/mlp/mlp.jaxpr
build/bin/jax2onnx parse "$example"
build/bin/jax2onnx print "$example"
