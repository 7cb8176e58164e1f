#!/usr/bin/env bash
# Configures and builds edgegan into ${BUILD_DIR:-build} (Release). CUDA kernels
# are compiled when nvcc is found (on PATH or in /usr/local/cuda).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cuda_args=()
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda_args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
fi
# Options are stated every time: a cache left by another script (demo.sh builds
# without tests) must not decide what this build contains. Callers' -D flags come
# last and win.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DEDGEGAN_BUILD_TESTS=ON -DEDGEGAN_BUILD_BENCHMARKS=ON "${cuda_args[@]}" "$@"
cmake --build "$build" -j"$(nproc)"
