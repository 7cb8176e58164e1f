#!/usr/bin/env bash
# Cross-builds edgegan for AArch64 (Jetson, Raspberry Pi and other 64-bit ARM
# boards) and runs the whole test suite under qemu-aarch64: the NEON kernels,
# the PyTorch goldens, the converter, the CLI (its output compared with the
# x86-64 reference PNG). Called by scripts/test.sh; works on its own too.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR_AARCH64:-build-aarch64}
scripts/install_deps_aarch64.sh "$build/deps"
export OMP_WAIT_POLICY=passive

# No benchmarks (nothing to time under an emulator) and no CUDA (the host toolkit
# has no AArch64 target libraries; the native build compiles the device code for
# Jetson Orin, sm_87). The FP16-arithmetic kernels are built: qemu's default CPU
# has the extension, so the default run uses neonfp16arith and ctest forces plain
# NEON (and scalar) in a second and third run.
cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release \
  -DEDGEGAN_BUILD_TESTS=ON -DEDGEGAN_BUILD_BENCHMARKS=OFF -DEDGEGAN_WITH_CUDA=OFF -DEDGEGAN_NEON_FP16_ARITH=ON \
  -DONNX_DIR="$(realpath "$build/deps/root/usr/lib/aarch64-linux-gnu/cmake/ONNX")"
cmake --build "$build" -j"$(nproc)"
header=$(aarch64-linux-gnu-readelf -h "$build/cli/edgegan")  # whole, not piped into grep -q (SIGPIPE under pipefail)
grep -q "Machine:.*AArch64" <<<"$header" || { echo "not an AArch64 binary: $build/cli/edgegan" >&2; exit 1; }
ctest --test-dir "$build" --output-on-failure --no-tests=error -j"$(nproc)" --timeout 1200
