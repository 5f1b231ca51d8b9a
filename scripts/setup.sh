#!/usr/bin/env bash
# Installs what the build needs (Debian packages, and ONNX Runtime from npm
# when tools/ort exists), then configures and builds into build/.
# Idempotent and incremental: a second run only rebuilds what changed.
# `--packages-only` stops after the installs (what `pip install ./python`,
# which builds its own tree, needs); other arguments are ninja targets.
set -euo pipefail
cd "$(dirname "$0")/.."
packages_only=false
if [ "${1:-}" = "--packages-only" ]; then
  packages_only=true
  shift
fi

packages=(
  build-essential cmake ninja-build pkg-config git
  libprotobuf-dev protobuf-compiler libonnx-dev libabsl-dev
  libgflags-dev libgoogle-glog-dev libgtest-dev libgmock-dev
  libbenchmark-dev libzip-dev zlib1g-dev nlohmann-json3-dev libonnx-testdata
  libtcmalloc-minimal4
  python3-numpy
  pybind11-dev python3-pybind11 python3-dev python3-setuptools python3-wheel
  python3-pip python3-venv
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ONNX Runtime (npm onnxruntime-node, pinned by package-lock.json).
if [ -f tools/ort/package-lock.json ]; then
  stamp=tools/ort/node_modules/.lock-stamp
  if [ ! -f "$stamp" ] || ! cmp -s tools/ort/package-lock.json "$stamp"; then
    echo "setup: installing ONNX Runtime (npm ci)" >&2
    (cd tools/ort && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    cp tools/ort/package-lock.json "$stamp"
  fi
fi

if $packages_only; then
  exit 0
fi

if [ ! -f build/build.ninja ]; then
  # ccache, when the machine has it, makes rebuilds in fresh clones cheap.
  launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  # -g1 (line tables only): backtraces keep file:line while the build
  # stays near 2 GB instead of 7 GB with full -g (twenty test binaries
  # each link every library); CI once ran out of disk linking them.
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "${launcher[@]}" >/dev/null
fi
ninja -C build -j"$(nproc)" "$@"
