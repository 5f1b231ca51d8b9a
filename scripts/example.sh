#!/usr/bin/env bash
# The main job on a bundled example: builds (installing what is missing),
# converts the example bundle (a 2-layer MLP with a symbolic batch) to ONNX
# with the default pipeline, then checks the model in ONNX Runtime against
# the reference interpreter on seeded random inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh jax2onnx
example=testdata/examples/mlp/mlp.jaxpr
build/bin/jax2onnx parse "$example"
build/bin/jax2onnx convert "$example" -o build/mlp.onnx
build/bin/jax2onnx check "$example"
