#!/usr/bin/env bash
# The test command (README, .ci/run): installs what it needs, builds, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
# Short OpenMP regions on a shared 2-core box: threads must sleep, not spin.
export OMP_WAIT_POLICY=passive
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
